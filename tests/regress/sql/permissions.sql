-- Roles. The extension is not trusted: a database owner who is not a superuser cannot create it.
CREATE ROLE regress_idgen_owner LOGIN;
CREATE DATABASE regress_idgen_owned OWNER regress_idgen_owner;
SELECT current_database() AS regress_db \gset
\c regress_idgen_owned regress_idgen_owner
CREATE EXTENSION pg_idgen;
\c :regress_db postgres
DROP DATABASE regress_idgen_owned;
DROP ROLE regress_idgen_owner;

-- An application role uses the extension with the grants the README lists: the functions and
-- operators are usable by everyone, creating tables with the types needs USAGE on them, and
-- rapkey_next needs the counter table.
CREATE ROLE regress_idgen_app;
CREATE SCHEMA regress_app AUTHORIZATION regress_idgen_app;
GRANT USAGE ON SCHEMA test_helpers TO regress_idgen_app;
GRANT USAGE ON TYPE xid12 TO regress_idgen_app;
GRANT USAGE ON DOMAIN rapkey TO regress_idgen_app;
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
REVOKE USAGE ON TYPE xid12 FROM regress_idgen_app;
REVOKE USAGE ON DOMAIN rapkey FROM regress_idgen_app;
DROP ROLE regress_idgen_app;

-- Nobody plants code on the types (issue 44). USAGE on xid12 and rapkey is not PUBLIC's: a role
-- owning a schema on another role's search_path could otherwise create an exact =(xid12, xid12)
-- or =(rapkey, rapkey) there (for the rapkey domain, one that wins over text = text), and that
-- role's ordinary WHERE k = '...' would run it with that role's rights.
SELECT t AS type, has_type_privilege('public', t, 'USAGE') AS public_usage
FROM (VALUES ('xid12'::regtype), ('xid12[]'::regtype), ('rapkey'::regtype), ('rapkey[]'::regtype)) v(t);
CREATE ROLE regress_idgen_planter;
CREATE SCHEMA regress_planted AUTHORIZATION regress_idgen_planter;
GRANT USAGE ON SCHEMA test_helpers TO regress_idgen_planter;
SET ROLE regress_idgen_planter;
CREATE TABLE regress_planted.own (n int);
SELECT s AS statement, test_helpers.error_of(s) AS error FROM (VALUES
    ('CREATE FUNCTION regress_planted.eq(a xid12, b xid12) RETURNS boolean LANGUAGE sql RETURN true'),
    ('CREATE FUNCTION regress_planted.eq(a rapkey, b rapkey) RETURNS boolean LANGUAGE sql RETURN true'),
    ('CREATE FUNCTION regress_planted.eq(a rapkey, b text) RETURNS boolean LANGUAGE sql RETURN true'),
    ('CREATE FUNCTION regress_planted.eq(a xid12[], b xid12[]) RETURNS boolean LANGUAGE sql RETURN true'),
    ('CREATE FUNCTION regress_planted.make(a text) RETURNS xid12 LANGUAGE sql RETURN a::xid12'),
    ('CREATE OPERATOR regress_planted.= (LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = regress_planted.eq)'),
    ('CREATE OPERATOR regress_planted.= (LEFTARG = rapkey, RIGHTARG = rapkey, FUNCTION = regress_planted.eq)'),
    ('CREATE DOMAIN regress_planted.k AS rapkey'),
    ('CREATE TABLE regress_planted.t (id xid12)'),
    ('CREATE TABLE regress_planted.t2 (k rapkey)'),
    ('CREATE TEMP TABLE t (id xid12)'),
    ('ALTER TABLE regress_planted.own ADD COLUMN id xid12'),
    ('CREATE VIEW regress_planted.v AS SELECT gen_xid12() AS id')
) v(s);
SELECT count(*) AS planted_operators FROM pg_operator WHERE oprnamespace = 'regress_planted'::regnamespace;
RESET ROLE;
-- A role the owner grants USAGE creates tables with the types (and functions: it is trusted
-- with that); the planter, without it, reads and writes such a table when granted, compares
-- values and casts text to the types.
CREATE ROLE regress_idgen_typed;
CREATE SCHEMA regress_typed AUTHORIZATION regress_idgen_typed;
GRANT USAGE ON TYPE xid12 TO regress_idgen_typed;
GRANT USAGE ON DOMAIN rapkey TO regress_idgen_typed;
SET ROLE regress_idgen_typed;
CREATE TABLE regress_typed.keyed (id xid12 PRIMARY KEY, k rapkey UNIQUE, n int);
ALTER TABLE regress_typed.keyed ADD COLUMN later xid12;
GRANT USAGE ON SCHEMA regress_typed TO regress_idgen_planter;
GRANT SELECT, INSERT, UPDATE ON regress_typed.keyed TO regress_idgen_planter;
RESET ROLE;
SET ROLE regress_idgen_planter;
INSERT INTO regress_typed.keyed (id, k, n) VALUES
    ('9m4e2mr0ui3e8a215n4g', 'ord.cn.sh.202407.8842-2', 1),
    (gen_xid12(), rapkey_build('ord', 'cn', '1'), 2),
    (xid12_from_parts('2024-01-01 00:00:00+00', '\x0a0b0c', 7, 9), to_rapkey('usr.cn.10001-x'), 3);
UPDATE regress_typed.keyed SET later = id WHERE k = 'usr.cn.10001-x';
SELECT n, k, id = '9m4e2mr0ui3e8a215n4g' AS eq, id > '9m4e2mr0ui3e8a215n4g'::xid12 AS gt, k <> 'ord.cn.sh.202407.8842-2' AS ne,
       later = id AS later_eq
FROM regress_typed.keyed WHERE n <> 2 ORDER BY k;
SELECT n FROM regress_typed.keyed WHERE k = 'ord.cn.sh.202407.8842-2' AND id = '9m4e2mr0ui3e8a215n4g';
SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS xid12, CAST('ord.cn.sh.202407.8842-2' AS rapkey) AS rapkey,
       ARRAY['9m4e2mr0ui3e8a215n4g']::xid12[] AS xid12s, 'ord.cn.sh.202407.8842-2'::text::rapkey = 'ord.cn.sh.202407.8842-2' AS same;
SELECT test_helpers.error_of($$SELECT 'ord.cn.sh.202407.8842-3'::rapkey$$) AS bad_check_char;
RESET ROLE;
-- A backfill by a role without USAGE on its table's key type: a rapkey key (a domain) is kept
-- as text in the run's work table, so the sorted walk runs; an xid12 key is refused before the
-- first batch, with the GRANT that lets it run.
SET ROLE regress_idgen_typed;
CREATE TABLE regress_typed.by_key (k rapkey PRIMARY KEY, n int, new_id xid12);
INSERT INTO regress_typed.by_key (k, n) SELECT rapkey_build('ord', 'bk', g::text), g FROM generate_series(1, 30) g;
ALTER TABLE regress_typed.keyed ADD COLUMN new_id xid12;
GRANT SELECT, UPDATE ON regress_typed.by_key TO regress_idgen_planter;
RESET ROLE;
SET ROLE regress_idgen_planter;
SET client_min_messages = warning;
CALL idgen_backfill('regress_typed.by_key', 'new_id', 'gen_xid12()', batch_size => 10, order_by => 'n');
RESET client_min_messages;
SELECT count(new_id) AS filled, bool_and(new_id IS NOT NULL) AS all_filled FROM regress_typed.by_key;
SELECT test_helpers.error_of($$CALL idgen_backfill('regress_typed.keyed', 'new_id', 'gen_xid12()', order_by => 'n')$$) AS xid12_key;
\set SHOW_CONTEXT never
CALL idgen_backfill('regress_typed.keyed', 'new_id', 'gen_xid12()', order_by => 'n');
\set SHOW_CONTEXT errors
RESET ROLE;
-- With USAGE the same statements create what the planter could not: the refusals above are for
-- want of USAGE alone. A role granted it is trusted as much as the owner: an exact
-- =(rapkey, rapkey) of its own, anywhere on the owner's search_path, is what the owner's
-- k = '...' runs (so the refusals above are what stops the planter).
SET ROLE regress_idgen_typed;
CREATE FUNCTION regress_typed.eq(a xid12, b xid12) RETURNS boolean LANGUAGE sql RETURN xid12_eq(a, b);
CREATE OPERATOR regress_typed.= (LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = regress_typed.eq);
CREATE FUNCTION regress_typed.eq(a rapkey, b rapkey) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'the planted =(rapkey, rapkey) ran as %', current_user;
    RETURN a::text OPERATOR(pg_catalog.=) b::text;
END $$;
CREATE OPERATOR regress_typed.= (LEFTARG = rapkey, RIGHTARG = rapkey, FUNCTION = regress_typed.eq);
RESET ROLE;
SET search_path = public, regress_typed;
SELECT n FROM regress_typed.keyed WHERE k = 'usr.cn.10001-x';
RESET search_path;
DROP SCHEMA regress_typed CASCADE;
DROP SCHEMA regress_planted CASCADE;
REVOKE USAGE ON TYPE xid12 FROM regress_idgen_typed;
REVOKE USAGE ON DOMAIN rapkey FROM regress_idgen_typed;
REVOKE USAGE ON SCHEMA test_helpers FROM regress_idgen_planter;
DROP ROLE regress_idgen_typed;
DROP ROLE regress_idgen_planter;
