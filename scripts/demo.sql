SET client_min_messages = warning;
\echo '== xid12: a table keyed by time-ordered ids'
CREATE EXTENSION IF NOT EXISTS pg_idgen;
DROP TABLE IF EXISTS orders;
CREATE TABLE orders (
    id xid12 PRIMARY KEY DEFAULT gen_xid12(),
    order_key rapkey UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO orders (order_key) SELECT rapkey_next('ord.cn.sh.' || to_char(now(), 'YYYYMM')) FROM generate_series(1, 3);
\echo '-- a backfill: ids made for past timestamps sort in creation order'
INSERT INTO orders (id, created_at)
SELECT gen_xid12(ts), ts FROM generate_series(timestamptz '2026-07-01', '2026-07-03', '1 day') ts;
SELECT id, xid12_time(id), xid12_machine(id), xid12_pid(id), xid12_counter(id), order_key FROM orders ORDER BY id;

\echo '-- cursor pagination: WHERE id > $cursor ORDER BY id LIMIT n'
SELECT id FROM orders WHERE id > (SELECT min(id) FROM orders) ORDER BY id LIMIT 3;
\echo '-- a time range, scanned on the id index'
SELECT count(*) FROM orders WHERE id >= xid12_min('2026-07-01') AND id < xid12_min('2026-07-02');

\echo '== rapkey: checked semantic keys'
SELECT rapkey_build('pay', 'us', 'ca', 'acme', '202406', '3311') AS built,
       rapkey_is_valid('ord.cn.sh.202407.8842-2') AS valid,
       rapkey_prefix_lo('ord.cn.sh.202407') AS lo, rapkey_prefix_hi('ord.cn.sh.202407') AS hi;

\echo '== snowflake: 64-bit ids unique within the cluster'

SELECT id, snowflake_time(id), snowflake_worker(id), snowflake_sequence(id)
FROM (SELECT gen_snowflake() AS id FROM generate_series(1, 3)) s;

\echo '== bad input is a PostgreSQL error with a reason, never a crash'
\set ON_ERROR_STOP 0
SELECT 'not-an-id'::xid12;
SELECT 'ord.cn.sh.202407.8842-3'::rapkey;
\set ON_ERROR_STOP 1
