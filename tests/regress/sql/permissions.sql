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
RESET ROLE;
DROP SCHEMA regress_app CASCADE;
DELETE FROM rapkey_counter WHERE prefix = 'ord.app';
REVOKE ALL ON rapkey_counter FROM regress_idgen_app;
REVOKE USAGE ON SCHEMA test_helpers FROM regress_idgen_app;
DROP ROLE regress_idgen_app;
