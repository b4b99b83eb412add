-- rapkey: the domain, check characters, builders, accessors, prefix ranges, sequences.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;

-- The specification's vectors are valid keys.
SELECT k, rapkey_is_valid(k), k::rapkey AS as_domain
FROM unnest(ARRAY['ord.cn.sh.202407.8842-2', 'usr.cn.10001-x', 'pay.us.ca.acme.202406.3311-h',
                  'ord.cn.sh.202407.58-~']) k;
SELECT rapkey_check_char('ord.cn.sh.202407.8842'), rapkey_check_char('ord.cn.sh.202407.58');

-- rapkey_is_valid never errors, and is NULL for NULL.
SELECT k, rapkey_is_valid(k)
FROM unnest(ARRAY['', 'ord', 'ord-2', 'ORD.CN.SH.202407.8842-2', 'ord.cn.sh.202407.8842-3',
                  '.ord.cn-2', 'ord.cn.-2', 'ord..cn-2', 'ord.cn.sh.202407.8842',
                  'ord.cn.sh.202407.8842-22', 'ord.cn.shé-2', 'o.cn-2', 'ordersabc.cn-2',
                  'ord.a.b.c.d.e.f-2', 'or1.cn-2', repeat('a', 129)]) k;
SELECT rapkey_is_valid(NULL) IS NULL AS strict;

-- The domain rejects invalid keys and says why.
SELECT 'ord.cn.sh.202407.8842-3'::rapkey;
-- The constraint the error names is the domain's own.
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE contypid = 'rapkey'::regtype;
-- The name comes from the catalog (sql/rapkey.sql writes it once): a renamed constraint, and
-- another CHECK beside it, change what the error says and which constraint it names.
ALTER DOMAIN rapkey RENAME CONSTRAINT rapkey_check TO rapkey_renamed;
ALTER DOMAIN rapkey ADD CONSTRAINT a_short_one CHECK (length(VALUE) < 100);
SELECT 'ord.cn.sh.202407.8842-3'::rapkey;
ALTER DOMAIN rapkey DROP CONSTRAINT a_short_one;
ALTER DOMAIN rapkey RENAME CONSTRAINT rapkey_renamed TO rapkey_check;
SELECT 'ord.cn.sh.202407.8842'::rapkey;
SELECT 'ORD.cn.sh.202407.8842-2'::rapkey;
SELECT 'ord..sh-2'::rapkey;
SELECT 'ord.cn.sh.202407.8842-2-2'::rapkey;
SELECT 'ord.a.b.c.d.e.f-2'::rapkey;
-- A long value is cut in the DETAIL, which gives its length instead.
SELECT repeat('a', 100000)::rapkey;
SELECT ''::rapkey;
SELECT ('ord.' || repeat('a', 130) || '-2')::rapkey;
SELECT test_helpers.error_of($$SELECT 'ord.cn.sh.202407.8842-3'::rapkey$$);
-- It carries the names a PostgreSQL domain error carries (drivers read them to tell which
-- constraint failed), like a built-in CHECK's.
CREATE DOMAIN test_helpers.positive AS int CONSTRAINT positive_check CHECK (VALUE > 0);
CREATE FUNCTION test_helpers.error_names(statement text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    state text;
    schema_name text;
    datatype_name text;
    constraint_name text;
    table_name text;
BEGIN
    EXECUTE statement;
    RETURN 'ok';
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, schema_name = SCHEMA_NAME,
        datatype_name = PG_DATATYPE_NAME, constraint_name = CONSTRAINT_NAME, table_name = TABLE_NAME;
    RETURN format('%s schema=%s datatype=%s constraint=%s table=%s', state, schema_name,
                  datatype_name, constraint_name, nullif(table_name, ''));
END $$;
SELECT test_helpers.error_names(s)
FROM unnest(ARRAY[$$SELECT 0::test_helpers.positive$$,
                  $$SELECT 'ord.cn.sh.202407.8842-3'::rapkey$$,
                  $$SELECT 'ord'::rapkey$$,
                  $$SELECT rapkey_type('ord.cn.sh.202407.8842-3')$$]) s;
DROP FUNCTION test_helpers.error_names(text);
DROP DOMAIN test_helpers.positive;
SELECT NULL::rapkey IS NULL AS nulls_allowed;
CREATE TEMP TABLE orders (order_key rapkey PRIMARY KEY, n int);
INSERT INTO orders VALUES ('ord.cn.sh.202407.8842-2', 1);
INSERT INTO orders VALUES ('ord.cn.sh.202407.8843-2', 2);
UPDATE orders SET order_key = 'ord.cn.sh.202407.8842-x';

-- Builders and to_rapkey.
SELECT rapkey_build('ord', 'cn', 'sh', '202407', '8842');
SELECT rapkey_build(' ORD ', 'CN', ' Sh', '202407', '8842');
SELECT rapkey_build('usr', VARIADIC ARRAY['cn', '10001']);
SELECT rapkey_build('ord', 'cn', 'sh!');
SELECT rapkey_build('ord', 'cn', '');
SELECT rapkey_build('ord', VARIADIC ARRAY[]::text[]);
SELECT rapkey_build('o', 'cn');
SELECT rapkey_build('ord', 'a', 'b', 'c', 'd', 'e', 'f');
SELECT rapkey_build('ord', repeat('a', 33));
-- A long part is cut in the DETAIL, which gives its length instead.
SELECT rapkey_build('ord', repeat('a', 100000));
SELECT rapkey_build('ord', 'cn', NULL);
SELECT rapkey_build(NULL, 'cn') IS NULL AS strict;
SELECT to_rapkey('  ORD.CN.SH.202407.8842-2 ');
SELECT to_rapkey('ord.cn.sh.202407.8842-3');
SELECT to_rapkey('ord.cn.sh.202407.8842');
SELECT test_helpers.error_of($$SELECT to_rapkey('ord.cn.sh.202407.8842-3')$$);
SELECT rapkey_check_char('ord.cn.Sh');
SELECT rapkey_check_char('ord');

-- Accessors.
SELECT rapkey_type(k), rapkey_segments(k), rapkey_segment(k, 1) AS first, rapkey_segment(k, 4) AS fourth,
       rapkey_segment(k, 5) AS past_end, rapkey_segment(k, 0) AS zero
FROM (SELECT 'ord.cn.sh.202407.8842-2'::rapkey AS k) s;
SELECT rapkey_type('ord.cn.sh.202407.8842-3');

-- Prefix ranges select exactly the keys under a prefix, on the index.
SELECT rapkey_prefix_lo('ord.cn.sh.202407'), rapkey_prefix_hi('ord.cn.sh.202407');
SELECT rapkey_prefix_lo(' ORD.CN ');
SELECT rapkey_prefix_lo('ord.cn.');
SELECT rapkey_prefix_lo('ord.cn.sh.202407.8842-2');
CREATE TABLE keys (k rapkey PRIMARY KEY);
INSERT INTO keys
SELECT rapkey_build('ord', c, r, m, n::text)
FROM unnest(ARRAY['cn', 'us']) c, unnest(ARRAY['sh', 'bj', 'sh0']) r,
     unnest(ARRAY['202406', '202407', '2024071', '202408']) m, generate_series(1, 300) n;
INSERT INTO keys VALUES (rapkey_build('ord', 'cn', 'sh', '202407'));
VACUUM ANALYZE keys;
SELECT count(*) AS under_prefix FROM keys
WHERE k >= rapkey_prefix_lo('ord.cn.sh.202407') AND k < rapkey_prefix_hi('ord.cn.sh.202407');
SELECT count(*) AS by_parts FROM keys
WHERE (rapkey_segments(k))[1:3] = ARRAY['cn', 'sh', '202407'];
SELECT count(*) AS has_prefix FROM keys WHERE rapkey_has_prefix(k, 'ord.cn.sh.202407');
SELECT rapkey_has_prefix(NULL, 'ord') IS NULL AS null_in_null_out;
SELECT count(*) AS like_prefix FROM keys WHERE k LIKE 'ord.cn.sh.202407.%';
EXPLAIN (COSTS OFF)
SELECT k FROM keys WHERE k >= rapkey_prefix_lo('ord.cn.sh.202407') AND k < rapkey_prefix_hi('ord.cn.sh.202407');
EXPLAIN (COSTS OFF) SELECT k FROM keys WHERE rapkey_has_prefix(k, 'ord.cn.sh');
EXPLAIN (COSTS OFF) SELECT k FROM keys WHERE k LIKE 'ord.cn.sh.202407%';
-- A plain text range on the month (the specification's example) also takes 2024071.
SELECT count(*) AS naive_range FROM keys WHERE k >= 'ord.cn.sh.202407' AND k < 'ord.cn.sh.202408';

-- Per-prefix sequence numbers.
SELECT rapkey_next('ord.cn.sh.202407'), rapkey_next('ord.cn.sh.202407'), rapkey_next('ORD.cn.bj');
SELECT rapkey_next('usr');
SELECT prefix, last_value FROM rapkey_counter ORDER BY prefix;
-- Without the CONTEXT line: PostgreSQL 14 numbers PL/pgSQL lines of it differently.
\set SHOW_CONTEXT never
SELECT rapkey_next('ord.a.b.c.d.e');
SELECT rapkey_next('ord.cn.');
\set SHOW_CONTEXT errors
BEGIN;
SELECT rapkey_next('ord.cn.sh.202407');
ROLLBACK;
SELECT rapkey_next('ord.cn.sh.202407') AS after_rollback_no_gap;
SELECT array_agg(c::regclass ORDER BY c::regclass::text) AS extconfig FROM pg_extension, unnest(extconfig) c WHERE extname = 'pg_idgen';

-- Labels.
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idgen'
WHERE p.proname LIKE '%rapkey%'
ORDER BY p.proname, p.oid::regprocedure::text;

DELETE FROM rapkey_counter;
DROP TABLE keys;
