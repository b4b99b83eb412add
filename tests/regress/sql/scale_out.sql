-- Scaling out without Citus: the Citus helpers say that Citus is missing; time partitions
-- keyed by the id: PARTITION BY RANGE (id) by month, with xid12_min (and snowflake_min)
-- bounds and a default partition. Time ranges prune at plan time, a generic plan of id > $1
-- prunes at run time, and cursor pagination walks across the partitions.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
SET timezone = 'UTC';
SET max_parallel_workers_per_gather = 0;

-- Without Citus, the Citus helpers say so (tests/citus runs them on a Citus cluster).
SELECT rapkey_counter_distribute();
SELECT * FROM idgen_check_cluster_identities();
SELECT test_helpers.error_of('SELECT rapkey_counter_distribute()') AS counter_distribute,
       test_helpers.error_of('SELECT * FROM idgen_check_cluster_identities()') AS check_identities;

CREATE TABLE ev (id xid12 NOT NULL DEFAULT gen_xid12(), at timestamptz NOT NULL, n integer NOT NULL)
    PARTITION BY RANGE (id);
-- A bound is evaluated once, when the partition is made: the first xid12 of each month.
CREATE TABLE ev_2026_01 PARTITION OF ev FOR VALUES FROM (xid12_min('2026-01-01')) TO (xid12_min('2026-02-01'));
CREATE TABLE ev_2026_02 PARTITION OF ev FOR VALUES FROM (xid12_min('2026-02-01')) TO (xid12_min('2026-03-01'));
CREATE TABLE ev_2026_03 PARTITION OF ev FOR VALUES FROM (xid12_min('2026-03-01')) TO (xid12_min('2026-04-01'));
CREATE TABLE ev_default PARTITION OF ev DEFAULT;
ALTER TABLE ev ADD PRIMARY KEY (id);
-- One row an hour from mid-December to mid-April: the default partition gets both ends.
INSERT INTO ev (id, at, n)
SELECT gen_xid12(t), t, g
FROM generate_series(0, 2879) g, LATERAL (SELECT timestamptz '2025-12-15' + g * interval '1 hour') s(t);
CREATE TABLE ev_plain AS SELECT * FROM ev;
VACUUM ANALYZE ev, ev_plain;
-- The partitions a plan reads, and how many it leaves out when it starts (scan types vary
-- with the version and the statistics; the partitions do not).
CREATE FUNCTION pg_temp.partitions_read(statement text) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT coalesce(substring(line FROM ' on (\w+)'), line)
    FROM test_helpers.plan_lines(statement) line WHERE line ~ ' on \w+|Subplans Removed'
$$;

-- Every row is in the partition of its id's month.
SELECT tableoid::regclass AS partition, count(*), min(at), max(at),
       bool_and(xid12_time(id) = at) AS time_in_id
FROM ev GROUP BY 1 ORDER BY 1;

-- Plan time: a range of constants reaches only the partitions of its months.
SELECT pg_temp.partitions_read($$
SELECT count(*) FROM ev WHERE id >= xid12_min(timestamptz '2026-02-01') AND id < xid12_min(timestamptz '2026-03-01')$$);
SELECT count(*) FROM ev WHERE id >= xid12_min(timestamptz '2026-02-01') AND id < xid12_min(timestamptz '2026-03-01');
SELECT pg_temp.partitions_read($$
SELECT count(*) FROM ev WHERE id BETWEEN xid12_min(timestamptz '2026-01-20') AND xid12_max(timestamptz '2026-02-10')$$);
SELECT (SELECT count(*) FROM ev WHERE id BETWEEN xid12_min(timestamptz '2026-01-20') AND xid12_max(timestamptz '2026-02-10'))
     = (SELECT count(*) FROM ev_plain WHERE at >= '2026-01-20' AND at < timestamptz '2026-02-10' + interval '1 second') AS same_rows;

-- Run time: a generic plan of id > $1 does not know $1 when it is planned; it leaves out the
-- partitions before $1's month when it starts.
PREPARE after_cursor(xid12) AS SELECT count(*) FROM ev WHERE id > $1;
SET plan_cache_mode = force_generic_plan;
SELECT pg_temp.partitions_read($$EXECUTE after_cursor(xid12_min('2026-03-05'))$$);
EXECUTE after_cursor(xid12_min('2026-03-05'));
RESET plan_cache_mode;

-- Cursor pagination across the partitions gives exactly the pages of a plain table.
DO $$
DECLARE
    cursor_id xid12 := '00000000000000000000';
    got xid12[];
    want xid12[];
    pages integer := 0;
    total integer := 0;
BEGIN
    LOOP
        SELECT array_agg(id ORDER BY id) INTO got FROM (SELECT id FROM ev WHERE id > cursor_id ORDER BY id LIMIT 250) s;
        SELECT array_agg(id ORDER BY id) INTO want FROM (SELECT id FROM ev_plain WHERE id > cursor_id ORDER BY id LIMIT 250) s;
        IF got IS DISTINCT FROM want THEN
            RAISE EXCEPTION 'page % differs', pages + 1;
        END IF;
        EXIT WHEN got IS NULL;
        pages := pages + 1;
        total := total + cardinality(got);
        cursor_id := got[cardinality(got)];
    END LOOP;
    RAISE NOTICE '% pages, % rows, each as in the plain table', pages, total;
END $$;
-- A page is read in order from the partitions' indexes: an Append in bound order, or a Merge
-- Append (the default partition has no bounds), and no Sort.
SELECT line FROM test_helpers.plan_lines($$SELECT id FROM ev WHERE id > '00000000000000000000' ORDER BY id LIMIT 250$$) line
WHERE line ~ '(Append|Sort)$';

-- Snowflake ids the same way, with snowflake_min bounds. snowflake_min is STABLE (it reads
-- pg_idgen.snowflake_epoch), so a range of snowflake_min() calls prunes when the query
-- starts ("Subplans Removed"), not at plan time; bounds computed by the client prune at plan time.
CREATE TABLE fl (id bigint NOT NULL, at timestamptz NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE fl_2026_01 PARTITION OF fl FOR VALUES FROM (snowflake_min('2026-01-01')) TO (snowflake_min('2026-02-01'));
CREATE TABLE fl_2026_02 PARTITION OF fl FOR VALUES FROM (snowflake_min('2026-02-01')) TO (snowflake_min('2026-03-01'));
CREATE TABLE fl_2026_03 PARTITION OF fl FOR VALUES FROM (snowflake_min('2026-03-01')) TO (snowflake_min('2026-04-01'));
CREATE TABLE fl_default PARTITION OF fl DEFAULT;
ALTER TABLE fl ADD PRIMARY KEY (id);
-- Ids in the Snowflake layout for past instants (worker 5), since gen_snowflake() makes ids of now.
INSERT INTO fl
SELECT (((extract(epoch FROM t) * 1000)::bigint - 1288834974657) << 22) | (5 << 12) | (g % 4096), t
FROM generate_series(0, 2879) g, LATERAL (SELECT timestamptz '2025-12-15' + g * interval '1 hour') s(t);
VACUUM ANALYZE fl;
SELECT tableoid::regclass AS partition, count(*), bool_and(snowflake_time(id) = at) AS time_in_id
FROM fl GROUP BY 1 ORDER BY 1;
SELECT pg_temp.partitions_read($$
SELECT count(*) FROM fl WHERE id >= snowflake_min('2026-02-01') AND id < snowflake_min('2026-03-01')$$);
SELECT count(*) FROM fl WHERE id >= snowflake_min('2026-02-01') AND id < snowflake_min('2026-03-01');
SELECT snowflake_min('2026-02-01') AS feb, snowflake_min('2026-03-01') AS mar \gset
SELECT pg_temp.partitions_read(format('SELECT count(*) FROM fl WHERE id >= %s AND id < %s', :feb, :mar));
PREPARE fl_after(bigint) AS SELECT count(*) FROM fl WHERE id > $1;
SET plan_cache_mode = force_generic_plan;
SELECT pg_temp.partitions_read($$EXECUTE fl_after(snowflake_min('2026-03-05'))$$);
EXECUTE fl_after(snowflake_min('2026-03-05'));
RESET plan_cache_mode;

DROP TABLE ev, ev_plain, fl;
