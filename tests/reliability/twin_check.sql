-- Run on the central node after two edges configured with the SAME pg_idgen.machine_id (1) and
-- pg_idgen.worker_id (1) generated ids during the same second (twin_fill in edge.sql) and the
-- central node received both edges' rows (scripts/reliability.sh). It asserts what is true
-- then, and prints the numbers.
DO $$
DECLARE
    bad bigint;
    shared_ms bigint;
    expected bigint;
    collisions bigint;
    same_prefix bigint;
    xid_collisions bigint;
BEGIN
    -- Nothing in the ids tells the twins apart: one worker, one machine.
    SELECT count(*) INTO bad FROM twin WHERE snowflake_worker(s) <> 1 OR xid12_machine(x) <> '\x000001';
    IF bad > 0 THEN
        RAISE EXCEPTION '% twin rows do not carry worker 1 and machine 000001', bad;
    END IF;
    -- Within one node, each millisecond's sequence counts 0, 1, 2, ... without gaps.
    SELECT count(*) INTO bad FROM (
        SELECT edge, s >> 22 FROM twin GROUP BY 1, 2
        HAVING min(snowflake_sequence(s)) <> 0 OR max(snowflake_sequence(s)) <> count(*) - 1) g;
    IF bad > 0 THEN
        RAISE EXCEPTION 'the sequence of % (edge, millisecond) groups is not 0 .. count - 1', bad;
    END IF;
    -- So in every millisecond both twins used, their first min(n1, n2) snowflakes are the same
    -- ids: the collisions are exactly those.
    SELECT count(*), coalesce(sum(least(a.n, b.n)), 0) INTO shared_ms, expected
      FROM (SELECT s >> 22 AS ms, count(*) AS n FROM twin WHERE edge = 1 GROUP BY 1) a
      JOIN (SELECT s >> 22 AS ms, count(*) AS n FROM twin WHERE edge = 2 GROUP BY 1) b USING (ms);
    SELECT count(*) INTO collisions
      FROM twin a JOIN twin b ON a.s = b.s AND a.edge = 1 AND b.edge = 2;
    IF collisions <> expected THEN
        RAISE EXCEPTION 'twin snowflake collisions: % (expected % from % shared milliseconds)',
            collisions, expected, shared_ms;
    END IF;
    IF collisions = 0 THEN
        RAISE EXCEPTION 'the twins generated in no common millisecond: the test did not test';
    END IF;
    -- xid12 of the twins: in a common second, time and machine (bytes 0-6) are equal; only the
    -- pid (bytes 7-8) and the counter (bytes 9-11) can tell them apart.
    SELECT count(*) INTO same_prefix
      FROM (SELECT DISTINCT substr(x::bytea, 1, 7) AS p FROM twin WHERE edge = 1) a
      JOIN (SELECT DISTINCT substr(x::bytea, 1, 7) AS p FROM twin WHERE edge = 2) b USING (p);
    IF same_prefix = 0 THEN
        RAISE EXCEPTION 'the twins generated xid12 in no common second';
    END IF;
    -- A merged table cannot hold both twins' rows under a unique index on the Snowflake ids
    -- (a subscription into such a table stops at the first duplicate). Built without parallel
    -- workers: a worker that finds the duplicate logs the error itself, and the server log must
    -- stay clean (a fast machine fills the table past the size where the build goes parallel).
    PERFORM pg_catalog.set_config('max_parallel_maintenance_workers', '0', true);
    BEGIN
        CREATE UNIQUE INDEX twin_s ON twin (s);
        RAISE EXCEPTION 'a unique index on the twins'' snowflakes was built';
    EXCEPTION WHEN unique_violation THEN
        NULL;
    END;
    SELECT count(*) INTO xid_collisions
      FROM twin a JOIN twin b ON a.x = b.x AND a.edge = 1 AND b.edge = 2;
    RAISE NOTICE 'twins: % + % rows; snowflake: % shared milliseconds, % identical ids; xid12: % shared (second, machine) prefixes, % identical ids',
        (SELECT count(*) FROM twin WHERE edge = 1), (SELECT count(*) FROM twin WHERE edge = 2),
        shared_ms, collisions, same_prefix, xid_collisions;
END
$$;
