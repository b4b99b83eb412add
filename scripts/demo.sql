\echo '-- CREATE EXTENSION, then a table keyed by time-ordered xid12 ids'
CREATE EXTENSION IF NOT EXISTS pg_idgen;
DROP TABLE IF EXISTS orders;
CREATE TABLE orders (
    id xid12 PRIMARY KEY DEFAULT gen_xid12(),
    created_at timestamptz NOT NULL DEFAULT now(),
    amount numeric NOT NULL
);
INSERT INTO orders (amount) SELECT g FROM generate_series(1, 5) g;
-- a backfill: ids made for past timestamps sort in creation order
INSERT INTO orders (id, created_at, amount)
SELECT gen_xid12(ts), ts, 0 FROM generate_series(timestamptz '2026-07-01', '2026-07-03', '1 day') ts;
SELECT id, xid12_time(id), xid12_machine(id), xid12_pid(id), xid12_counter(id) FROM orders ORDER BY id;

\echo '-- cursor pagination: WHERE id > $cursor ORDER BY id LIMIT n'
SELECT id FROM orders WHERE id > (SELECT min(id) FROM orders) ORDER BY id LIMIT 3;

\echo '-- a time range scanned on the id index'
SELECT count(*) FROM orders WHERE id >= xid12_min('2026-07-01') AND id < xid12_min('2026-07-02');

\echo '-- bad input is a PostgreSQL error, not a crash'
\set ON_ERROR_STOP 0
SELECT 'not-an-id'::xid12;
\set ON_ERROR_STOP 1
