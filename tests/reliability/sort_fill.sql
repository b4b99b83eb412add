-- Sorts beyond memory (scripts/reliability.sh): 2,000,000 distinct xid12 of 4 seconds (the
-- first and the last one xid12 can hold among them) x 5 machines x 10 pids x 10,000 counters
-- spread over the 24 bits, inserted in a scrambled order (k -> (k * 7919 + 12345) mod N is a
-- permutation of 0 .. N - 1).
CREATE EXTENSION pg_idgen;
CREATE EXTENSION amcheck;
CREATE TABLE ids (id xid12 NOT NULL);
INSERT INTO ids
SELECT xid12_from_parts(
           to_timestamp((ARRAY[0, 1700000000, 1700000001, 4294967295])[k / 500000 + 1]),
           (ARRAY['\x000000', '\x000001', '\x7fffff', '\x800000', '\xffffff']::bytea[])[k / 100000 % 5 + 1],
           (ARRAY[0, 1, 255, 256, 4242, 12345, 32767, 32768, 65534, 65535])[k / 10000 % 10 + 1],
           k % 10000 * 1677 + k % 7)
  FROM (SELECT ((g * 7919 + 12345) % 2000000)::int AS k FROM generate_series(0::bigint, 1999999) g) s;

-- An external sort by the operator class (sort support, abbreviated keys) must give the
-- order of the 12 bytes: each id's bytes greater than the previous id's.
SET max_parallel_workers_per_gather = 0;
SET work_mem = '1MB';
DO $$
DECLARE
    line text;
    external boolean := false;
    r record;
BEGIN
    FOR line IN EXECUTE $q$
        EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
        CREATE TEMP TABLE sort_check AS
        SELECT count(*) AS n,
               count(*) FILTER (WHERE xid12_send(prev) >= xid12_send(id)) AS bad
          FROM (SELECT id, lag(id) OVER (ORDER BY id) AS prev FROM ids) s$q$
    LOOP
        external := external OR line ~ 'Sort Method: external merge';
    END LOOP;
    IF NOT external THEN
        RAISE EXCEPTION 'the sort did not spill to disk (no "Sort Method: external merge")';
    END IF;
    SELECT * INTO r FROM sort_check;
    IF r.n <> 2000000 OR r.bad <> 0 THEN
        RAISE EXCEPTION 'external sort: % rows, % out of byte order', r.n, r.bad;
    END IF;
END
$$;
RESET work_mem;
RESET max_parallel_workers_per_gather;
ALTER TABLE ids SET (parallel_workers = 2);
VACUUM ANALYZE ids;
