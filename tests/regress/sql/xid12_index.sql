-- xid12 operators, operator classes, index use and sorting.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
SET timezone = 'UTC';

-- Operators on a pair that differs only in the last byte, and on equal values.
WITH v(a, b) AS (VALUES ('9m4e2mr0ui3e8a215n4g'::xid12, '9m4e2mr0ui3e8a215n50'::xid12))
SELECT a < b AS lt, a <= b AS le, a = b AS eq, a <> b AS ne, a >= b AS ge, a > b AS gt,
       xid12_cmp(a, b), xid12_cmp(b, a), xid12_cmp(a, a), a = a AS self_eq
FROM v;

-- Operator metadata: commutators, negators, merge/hash support.
SELECT o.oprname, c.oprname AS commutator, n.oprname AS negator, o.oprcanmerge, o.oprcanhash,
       o.oprrest, o.oprjoin
FROM pg_operator o
LEFT JOIN pg_operator c ON c.oid = o.oprcom
LEFT JOIN pg_operator n ON n.oid = o.oprnegate
WHERE o.oprleft = 'xid12'::regtype AND o.oprright = 'xid12'::regtype
ORDER BY o.oprname;

-- Default operator classes for btree, hash and BRIN, and their support functions.
SELECT am.amname, opc.opcname, opc.opcdefault
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opc.opcintype = 'xid12'::regtype ORDER BY am.amname;
SELECT am.amname, p.amprocnum, p.amproc::regproc
FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am am ON am.oid = f.opfmethod
WHERE p.amproclefttype = 'xid12'::regtype ORDER BY am.amname, p.amprocnum;

-- Standard and extended hash agree in their low 32 bits for seed 0.
SELECT bool_and(xid12_hash(x) = (xid12_hash_extended(x, 0) & 4294967295)::bit(32)::int) AS low_bits_agree,
       count(DISTINCT xid12_hash_extended(x, 1)) = count(*) AS seeded_distinct
FROM (SELECT xid12(substring(decode(md5(g::text), 'hex') FROM 1 FOR 12)) AS x FROM generate_series(1, 1000) g) s;

-- A table of ids spread over 40 days, one every ~6 minutes, made by the backfill generator.
CREATE TABLE events (id xid12 PRIMARY KEY, created_at timestamptz NOT NULL, n int NOT NULL);
INSERT INTO events
SELECT gen_xid12(ts), ts, g
FROM generate_series(1, 10000) g,
     LATERAL (SELECT timestamptz '2026-07-01 00:00:00+00' + g * interval '347 seconds') t(ts);
ANALYZE events;

-- Ids sort in creation order.
SELECT count(*) FILTER (WHERE prev_n > n) AS out_of_order
FROM (SELECT n, lag(n) OVER (ORDER BY id) AS prev_n FROM events) s;

-- Cursor pagination is an index range scan.
EXPLAIN (COSTS OFF)
SELECT id FROM events WHERE id > 'd989gs00000000000000'::xid12 ORDER BY id LIMIT 100;
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE id > '9m4e2mr0ui3e8a215n4g' ORDER BY id LIMIT 100;

-- Walking the whole table by cursor visits every row once, in order.
WITH RECURSIVE page(cursor, seen, pages) AS (
    SELECT '00000000000000000000'::xid12, 0::bigint, 0
  UNION ALL
    SELECT (SELECT max(id) FROM (SELECT id FROM events WHERE id > p.cursor ORDER BY id LIMIT 1000) a),
           p.seen + (SELECT count(*) FROM (SELECT id FROM events WHERE id > p.cursor ORDER BY id LIMIT 1000) b),
           p.pages + 1
    FROM page p WHERE p.cursor IS NOT NULL
)
SELECT max(seen) AS rows_seen, max(pages) - 1 AS pages FROM page;

-- A time range on the id index, with xid12_min/xid12_max.
EXPLAIN (COSTS OFF)
SELECT id FROM events WHERE id >= xid12_min('2026-07-10') AND id < xid12_min('2026-07-11');
SELECT count(*) = (SELECT count(*) FROM events WHERE created_at >= '2026-07-10' AND created_at < '2026-07-11') AS same_rows
FROM events WHERE id >= xid12_min('2026-07-10') AND id < xid12_min('2026-07-11');
SELECT count(*) = (SELECT count(*) FROM events WHERE created_at >= '2026-07-10' AND created_at < '2026-07-10 00:10:00') AS same_rows
FROM events WHERE id BETWEEN xid12_min('2026-07-10') AND xid12_max('2026-07-10 00:09:59');

-- BRIN on a time-ordered table.
CREATE TABLE events_brin AS SELECT * FROM events ORDER BY id;
CREATE INDEX events_brin_id ON events_brin USING brin (id) WITH (pages_per_range = 4);
ANALYZE events_brin;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM events_brin WHERE id >= xid12_min('2026-07-10') AND id < xid12_min('2026-07-11');
SELECT count(*) AS brin_rows FROM events_brin WHERE id >= xid12_min('2026-07-10') AND id < xid12_min('2026-07-11');
RESET enable_seqscan;
SELECT count(*) AS seq_rows FROM events_brin WHERE id >= xid12_min('2026-07-10') AND id < xid12_min('2026-07-11');

-- Hash join, hash aggregate, merge join.
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM events a JOIN events_brin b ON a.id = b.id;
SELECT count(*) AS hash_joined FROM events a JOIN events_brin b ON a.id = b.id;
RESET enable_mergejoin;
SET enable_hashjoin = off;
SELECT count(*) AS merge_joined FROM events a JOIN events_brin b ON a.id = b.id;
RESET enable_hashjoin;
RESET enable_nestloop;
SET enable_sort = off;
SELECT count(*) AS groups FROM (SELECT id FROM events_brin GROUP BY id) g;
RESET enable_sort;

-- Hash index.
CREATE INDEX events_hash ON events_brin USING hash (id);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM events_brin WHERE id = xid12_min('2026-07-10');
RESET enable_seqscan;
RESET enable_bitmapscan;

-- PARTITION BY HASH.
CREATE TABLE parted (id xid12 PRIMARY KEY, n int) PARTITION BY HASH (id);
CREATE TABLE parted_0 PARTITION OF parted FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO parted SELECT id, n FROM events;
SELECT count(*) AS total, count(DISTINCT tableoid) AS partitions_used,
       min(c) > 3000 AS balanced FROM (SELECT tableoid, count(*) OVER (PARTITION BY tableoid) c FROM parted) s;
EXPLAIN (COSTS OFF) SELECT n FROM parted WHERE id = '9m4e2mr0ui3e8a215n4g';

-- min/max aggregates, also through the index.
SELECT min(id) = (SELECT id FROM events ORDER BY id LIMIT 1) AS min_ok,
       max(id) = (SELECT id FROM events ORDER BY id DESC LIMIT 1) AS max_ok FROM events;
-- Only the plan's scan lines: PostgreSQL 17 reworded the InitPlan line and 18 drops the
-- IS NOT NULL condition on a NOT NULL column, neither of which is ours.
SELECT line FROM test_helpers.plan_lines('SELECT max(id) FROM events') line
WHERE line ~ '(Limit|Scan)';

-- Sorting ids spread over time, ids of one burst, and ids of many machines in one second
-- (abbreviated keys that tie or are abandoned).
SET work_mem = '64MB';
CREATE TEMP TABLE spread AS
SELECT gen_xid12(timestamptz '2020-01-01' + (g * 7919 % 200000) * interval '1 second') AS x
FROM generate_series(1, 200000) g;
CREATE TEMP TABLE burst AS
SELECT xid12_from_parts('2026-07-01', '\x010203', 7, (g * 7919) % 16777216) AS x
FROM generate_series(1, 200000) g;
SELECT count(*) FILTER (WHERE x < prev) AS out_of_order, count(*) FILTER (WHERE x::bytea < prev::bytea) AS bytea_disagrees
FROM (SELECT x, lag(x) OVER (ORDER BY x) AS prev FROM spread) s;
SELECT count(*) FILTER (WHERE x < prev) AS out_of_order, count(*) FILTER (WHERE x::bytea < prev::bytea) AS bytea_disagrees
FROM (SELECT x, lag(x) OVER (ORDER BY x) AS prev FROM burst) s;
CREATE TEMP TABLE machines AS
SELECT xid12_from_parts('2026-07-01', substring(decode(md5(g::text), 'hex') FROM 1 FOR 3), g % 7, (g * 7919) % 16777216) AS x
FROM generate_series(1, 200000) g;
SELECT count(*) FILTER (WHERE x < prev) AS out_of_order, count(*) FILTER (WHERE x::bytea < prev::bytea) AS bytea_disagrees
FROM (SELECT x, lag(x) OVER (ORDER BY x) AS prev FROM machines) s;
CREATE INDEX machines_x ON machines (x);
SET enable_seqscan = off;
SELECT count(*) FILTER (WHERE x < prev) AS index_out_of_order
FROM (SELECT x, lag(x) OVER () AS prev FROM (SELECT x FROM machines ORDER BY x) o) s;
RESET enable_seqscan;
SELECT count(*) AS desc_out_of_order
FROM (SELECT x, lag(x) OVER (ORDER BY x DESC) AS prev FROM spread) s WHERE x > prev;
-- Btree deduplication is allowed (btequalimage).
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE INDEX burst_x ON burst (x);
SELECT allequalimage FROM bt_metap('burst_x');
-- amcheck verifies the order of indexes built by the sort.
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT bt_index_check('burst_x', true), bt_index_check('machines_x', true);
CREATE INDEX spread_x ON spread (x);
SELECT bt_index_check('spread_x', true);
RESET work_mem;

DROP TABLE events, events_brin, parted;
