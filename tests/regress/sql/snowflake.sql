-- Snowflake ids: generation, decoders, bounds, settings and errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
SET timezone = 'UTC';

-- Without a worker id there is no id: a silent default would collide across nodes.
SHOW pg_idgen.worker_id;
SELECT gen_snowflake();
SELECT test_helpers.error_of('SELECT gen_snowflake()');

SET pg_idgen.worker_id = 7;
SELECT snowflake_worker(id) AS worker, snowflake_sequence(id) BETWEEN 0 AND 4095 AS sequence_ok,
       abs(extract(epoch FROM snowflake_time(id) - clock_timestamp())) < 5 AS time_is_now,
       id > 0 AS positive
FROM (SELECT gen_snowflake() AS id) s;

-- Strictly increasing, unique, never more than 4096 in one millisecond.
CREATE TEMP TABLE flakes AS SELECT g, gen_snowflake() AS id FROM generate_series(1, 100000) g;
SELECT count(*) FILTER (WHERE id <= prev) AS not_increasing, count(DISTINCT id) AS distinct_ids
FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM flakes) s;
SELECT max(n) <= 4096 AS per_ms_ok
FROM (SELECT count(*) AS n FROM flakes GROUP BY id >> 22) s;
SELECT bool_and(snowflake_worker(id) = 7) AS all_worker_7 FROM flakes;

-- Decoders on hand-made ids: (ms since epoch << 22) | (worker << 12) | sequence.
SELECT snowflake_time(0), snowflake_worker(0), snowflake_sequence(0);
SELECT snowflake_time((1000::bigint << 22) | (5 << 12) | 7) AS t,
       snowflake_worker((1000::bigint << 22) | (5 << 12) | 7) AS worker,
       snowflake_sequence((1000::bigint << 22) | (5 << 12) | 7) AS seq;
SELECT snowflake_time(9223372036854775807), snowflake_worker(9223372036854775807), snowflake_sequence(9223372036854775807);
SELECT snowflake_worker(-1);
SELECT snowflake_time(-4611686018427387904);
SELECT test_helpers.error_of('SELECT snowflake_sequence(-5)');

-- Bounds for time-range scans: the smallest and largest ids of a millisecond.
SELECT snowflake_min('2024-07-01 00:00:00.123+00'), snowflake_max('2024-07-01 00:00:00.123+00');
SELECT snowflake_time(snowflake_min('2024-07-01 00:00:00.123+00')),
       snowflake_max('2024-07-01 00:00:00.123+00') + 1 = snowflake_min('2024-07-01 00:00:00.124+00') AS adjacent;
SELECT snowflake_min('2010-11-04 01:42:54.657+00') AS at_epoch;
SELECT snowflake_min('2010-11-04 01:42:54.656+00');
SELECT snowflake_max('2080-07-10 17:30:30.208+00') = 9223372036854775807 AS last_ms;
SELECT snowflake_max('2080-07-10 17:30:30.209+00');
SELECT snowflake_min('infinity');
SELECT test_helpers.error_of($$SELECT snowflake_min('2090-01-01')$$);
SELECT count(*) = 100000 AS all_in_range FROM flakes
WHERE id BETWEEN snowflake_min(now() - interval '1 hour') AND snowflake_max(clock_timestamp() + interval '1 hour');

-- The epoch moves the time scale; it is validated when set.
SHOW pg_idgen.snowflake_epoch;
SET pg_idgen.snowflake_epoch = 0;
SELECT snowflake_time(1000::bigint << 22);
SET pg_idgen.snowflake_epoch = 'soon';
SET pg_idgen.snowflake_epoch = -1;
SET pg_idgen.snowflake_epoch = '99999999999999999999';
RESET pg_idgen.snowflake_epoch;
SHOW pg_idgen.snowflake_epoch;
-- An epoch in the future means the clock is before the epoch: an error, not a negative id.
SET pg_idgen.snowflake_epoch = '4000000000000';
SELECT test_helpers.error_of('SELECT gen_snowflake()')
       LIKE '22008: time % ms since 1970-01-01 is before the snowflake epoch 4000000000000 ms (pg_idgen.snowflake_epoch)' AS before_epoch;
RESET pg_idgen.snowflake_epoch;

-- Other settings' ranges, and who may set them.
SET pg_idgen.worker_id = 1024;
SET pg_idgen.worker_id = -2;
SHOW pg_idgen.snowflake_max_backward_ms;
SET pg_idgen.snowflake_max_backward_ms = 60001;
CREATE ROLE idgen_snowflake_user;
GRANT pg_read_all_settings TO idgen_snowflake_user;
SET ROLE idgen_snowflake_user;
SET pg_idgen.worker_id = 3;
SET pg_idgen.snowflake_epoch = 0;
SELECT snowflake_worker(gen_snowflake()) AS plain_user_generates_as_worker;
RESET ROLE;
DROP ROLE idgen_snowflake_user;

-- A different worker in the same session still never goes below an earlier id.
SET pg_idgen.worker_id = 0;
SELECT gen_snowflake() > (SELECT max(id) FROM flakes) AS still_increasing;
RESET pg_idgen.worker_id;

-- Moving the epoch later makes new ids fall behind the last one issued, exactly as a clock
-- stepping back would: within pg_idgen.snowflake_max_backward_ms the call waits, beyond it fails.
SET pg_idgen.worker_id = 7;
SELECT gen_snowflake() AS last_id \gset
SET pg_idgen.snowflake_epoch = '1288834975257';
SELECT clock_timestamp() AS started \gset
SELECT gen_snowflake() > :last_id AS increased_after_waiting,
       clock_timestamp() - :'started' >= interval '500 ms' AS waited;
SET pg_idgen.snowflake_epoch = '1288834977657';
SELECT test_helpers.error_of('SELECT gen_snowflake()')
       LIKE '55000: pg_idgen.snowflake_epoch changed from % to 1288834977657 ms, which puts new ids % ms behind the last issued id, more than pg_idgen.snowflake_max_backward_ms (1000 ms)' AS beyond_bound;
SET pg_idgen.snowflake_max_backward_ms = 60000;
SELECT clock_timestamp() AS started \gset
SELECT gen_snowflake() > :last_id AS waited_longer, clock_timestamp() - :'started' >= interval '2 s' AS waited;
RESET pg_idgen.snowflake_max_backward_ms;
RESET pg_idgen.snowflake_epoch;
SELECT gen_snowflake() > :last_id AS back_on_the_default_epoch;
RESET pg_idgen.worker_id;

-- Labels.
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idgen'
WHERE p.proname LIKE '%snowflake%'
ORDER BY p.proname, p.oid::regprocedure::text;
