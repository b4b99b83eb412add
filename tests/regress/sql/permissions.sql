-- Roles. The extension is not trusted: a database owner who is not a superuser cannot create it.
CREATE ROLE regress_idgen_owner LOGIN;
CREATE DATABASE regress_idgen_owned OWNER regress_idgen_owner;
SELECT current_database() AS regress_db \gset
\c regress_idgen_owned regress_idgen_owner
CREATE EXTENSION pg_idgen;
\c :regress_db postgres
DROP DATABASE regress_idgen_owned;
DROP ROLE regress_idgen_owner;

-- An application role uses the extension with the grants the README lists: the functions,
-- types and operators are usable by everyone, and rapkey_next needs the counter table.
CREATE ROLE regress_idgen_app;
CREATE SCHEMA regress_app AUTHORIZATION regress_idgen_app;
GRANT USAGE ON SCHEMA test_helpers TO regress_idgen_app;
SET ROLE regress_idgen_app;
CREATE TABLE regress_app.orders (
    id xid12 PRIMARY KEY DEFAULT gen_xid12(),
    order_key rapkey UNIQUE,
    n int
);
INSERT INTO regress_app.orders (order_key, n) VALUES (rapkey_build('ord', 'cn', '1'), 1);
SELECT test_helpers.error_of($$INSERT INTO regress_app.orders (order_key, n) VALUES (rapkey_next('ord.app'), 2)$$);
-- Settings that move ids of the whole cluster are for superusers.
SELECT test_helpers.error_of($$SET pg_idgen.machine_id = 5$$);
SELECT test_helpers.error_of($$SET pg_idgen.snowflake_max_backward_ms = 10$$);
RESET ROLE;
GRANT SELECT, INSERT, UPDATE ON rapkey_counter TO regress_idgen_app;
SET ROLE regress_idgen_app;
INSERT INTO regress_app.orders (order_key, n) SELECT rapkey_next('ord.app'), g FROM generate_series(2, 4) g;
SELECT order_key, n FROM regress_app.orders WHERE n > 1 ORDER BY id;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids FROM regress_app.orders;
-- The writer registry needs what the README has a DBA grant; without it, permission denied.
SELECT test_helpers.error_of($$SELECT idgen_acquire('xid12', 'app-writer', '1 minute')$$);
RESET ROLE;
-- What the README tells a DBA to run: the pool (and its cap), then the view to read.
SELECT idgen_pool_allow('app', 'regress_idgen_app', 4);
GRANT SELECT ON idgen_grants TO regress_idgen_app;
SET ROLE regress_idgen_app;
SELECT a.kind, r.hi >= a.hi AS renewed, p = 1 AS reported, l.hi = l.lo AS released
FROM idgen_acquire('snowflake', 'app-writer', '1 minute') a,
     LATERAL idgen_renew(a.grant_id, a.token) r, LATERAL idgen_report(a.grant_id, a.token, 'app-device', 0) p,
     LATERAL idgen_release(a.grant_id, a.token, '-infinity') l;
SELECT count(*) AS own_grants FROM idgen_grants WHERE writer = 'app-writer';
-- idgen_backfill runs with the caller's rights: the table's owner fills it, and the progress
-- row is the owner's own.
ALTER TABLE regress_app.orders ADD COLUMN later_id xid12;
SET client_min_messages = warning;
CALL idgen_backfill('regress_app.orders', 'later_id', 'gen_xid12()');
RESET client_min_messages;
SELECT count(later_id) AS filled FROM regress_app.orders;
SELECT run_by, rows_done FROM idgen_backfill_progress WHERE relation = 'regress_app.orders'::regclass;
RESET ROLE;
-- Another role reads the progress but cannot change it, nor fill a table it cannot reach.
CREATE ROLE regress_idgen_other;
GRANT USAGE ON SCHEMA test_helpers TO regress_idgen_other;
SET ROLE regress_idgen_other;
SELECT count(*) AS runs_seen FROM idgen_backfill_progress WHERE run_by = 'regress_idgen_app';
WITH changed AS (UPDATE idgen_backfill_progress SET rows_done = 0 WHERE run_by = 'regress_idgen_app' RETURNING 1)
SELECT count(*) AS changed FROM changed;
-- Nor lock it so as to stop a run (SHARE mode and stronger need UPDATE or DELETE on the table,
-- which nobody but its owner has), nor delete a row, nor lock another role's row.
SELECT test_helpers.error_of($$LOCK TABLE idgen_backfill_progress IN SHARE MODE$$) AS share_lock,
       test_helpers.error_of($$LOCK TABLE idgen_backfill_progress$$) AS exclusive_lock,
       test_helpers.error_of($$DELETE FROM idgen_backfill_progress WHERE run_by = 'regress_idgen_app'$$) AS deleted;
SELECT count(*) AS locked FROM (SELECT FROM idgen_backfill_progress WHERE run_by = 'regress_idgen_app' FOR UPDATE) l;
SELECT test_helpers.error_of($$CALL idgen_backfill('regress_app.orders', 'later_id', 'gen_xid12()')$$);
RESET ROLE;
REVOKE USAGE ON SCHEMA test_helpers FROM regress_idgen_other;
DROP ROLE regress_idgen_other;
DELETE FROM idgen_backfill_progress WHERE run_by = 'regress_idgen_app';
DROP SCHEMA regress_app CASCADE;
DELETE FROM rapkey_counter WHERE prefix = 'ord.app';
REVOKE ALL ON rapkey_counter FROM regress_idgen_app;
SELECT idgen_pool_disallow('app', 'regress_idgen_app');
REVOKE ALL ON idgen_grants FROM regress_idgen_app;
REVOKE USAGE ON SCHEMA test_helpers FROM regress_idgen_app;
DROP ROLE regress_idgen_app;
