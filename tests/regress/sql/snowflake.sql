-- Snowflake ids: generation, decoders, bounds, settings and errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
SET timezone = 'UTC';

-- The worker id and the epoch are cluster-wide settings (postgresql.conf or ALTER SYSTEM):
-- every backend shares one generator state. :reload reloads the configuration and waits until
-- this session has applied it, which a backend does between statements once the postmaster
-- has signalled it: 22 statements of their own (\gexec, output off), each sleeping while a
-- pg_idgen setting of context sighup differs from what the files give, 10 ms, 20 ms, 40 ms ...
-- up to 5 s (about 70 s in all: the margin for a loaded machine; nothing once applied).
\set applied 'NOT EXISTS (SELECT FROM pg_settings s LEFT JOIN pg_file_settings f ON f.name = s.name AND f.applied WHERE left(s.name, 9) = ''pg_idgen.'' AND s.context = ''sighup'' AND CASE WHEN f.name IS NULL THEN s.source <> ''default'' ELSE s.setting <> f.setting END)'
\set reload '\\set ECHO none \\o /dev/null \\\\ SELECT pg_reload_conf(); SELECT format(''SELECT CASE WHEN %s THEN NULL ELSE pg_sleep(%s) END'', :''applied'', least(0.01 * 2 ^ i, 5)) FROM generate_series(0, 21) i \\gexec \\o \\set ECHO all'

-- Without a worker id there is no id: a silent default would collide across nodes.
SHOW pg_idgen.worker_id;
SELECT gen_snowflake();
SELECT test_helpers.error_of('SELECT gen_snowflake()');

ALTER SYSTEM SET pg_idgen.worker_id = 7;
:reload
SHOW pg_idgen.worker_id;
SELECT snowflake_worker(id) AS worker,
       snowflake_worker(id) = ((id >> 12) & 1023)::int AND snowflake_sequence(id) = (id & 4095)::int AS fields_decoded,
       abs(extract(epoch FROM snowflake_time(id) - clock_timestamp())) < 5 AS time_is_now,
       id > 0 AS positive
FROM (SELECT gen_snowflake() AS id) s;

-- Strictly increasing, unique; within each millisecond the sequence numbers are consecutive
-- (one shared state hands them out; a new millisecond starts again at 0).
CREATE TEMP TABLE flakes AS SELECT g, gen_snowflake() AS id FROM generate_series(1, 100000) g;
SELECT count(*) FILTER (WHERE id <= prev) AS not_increasing, count(DISTINCT id) AS distinct_ids
FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM flakes) s;
SELECT count(*) FILTER (WHERE last_seq - first_seq <> n - 1) AS ms_with_gaps,
       count(*) FILTER (WHERE first_seq <> 0) <= 1 AS new_ms_starts_at_0
FROM (SELECT count(*) AS n, min(id & 4095) AS first_seq, max(id & 4095) AS last_seq
      FROM flakes GROUP BY id >> 22) s;
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
-- Before the epoch the bounds lie below every id, so open-ended ranges work.
SELECT snowflake_min('2010-11-04 01:42:54.656+00') AS min_before_epoch,
       snowflake_max('2010-11-04 01:42:54.656+00') AS max_before_epoch;
SELECT count(*) = 100000 AS open_ended_from_2000 FROM flakes WHERE id >= snowflake_min('2000-01-01');
SELECT count(*) AS up_to_2000 FROM flakes WHERE id <= snowflake_max('2000-01-01');
SELECT snowflake_max('2080-07-10 17:30:30.208+00') = 9223372036854775807 AS last_ms;
SELECT snowflake_max('2080-07-10 17:30:30.209+00');
SELECT snowflake_min('infinity');
SELECT snowflake_min('-infinity') AS min_minus_infinity, snowflake_max('-infinity') AS max_minus_infinity;
SELECT test_helpers.error_of($$SELECT snowflake_min('2090-01-01')$$);
SELECT count(*) = 100000 AS all_in_range FROM flakes
WHERE id BETWEEN snowflake_min(now() - interval '1 hour') AND snowflake_max(clock_timestamp() + interval '1 hour');

-- Settings: validated when set, cluster-wide only, superuser only.
SHOW pg_idgen.snowflake_epoch;
ALTER SYSTEM SET pg_idgen.snowflake_epoch = 'soon';
ALTER SYSTEM SET pg_idgen.snowflake_epoch = -1;
ALTER SYSTEM SET pg_idgen.snowflake_epoch = '99999999999999999999';
ALTER SYSTEM SET pg_idgen.worker_id = 1024;
ALTER SYSTEM SET pg_idgen.worker_id = -2;
SET pg_idgen.snowflake_epoch = 0;
SET pg_idgen.worker_id = 3;
SHOW pg_idgen.snowflake_max_backward_ms;
SET pg_idgen.snowflake_max_backward_ms = 60001;
CREATE ROLE idgen_snowflake_user;
SET ROLE idgen_snowflake_user;
SET pg_idgen.snowflake_max_backward_ms = 5;
SELECT snowflake_worker(gen_snowflake()) AS plain_user_generates_as_worker;
RESET ROLE;
DROP ROLE idgen_snowflake_user;

-- The epoch moves the time scale of the decoders.
ALTER SYSTEM SET pg_idgen.snowflake_epoch = 0;
:reload
SELECT snowflake_time(1000::bigint << 22);
-- An epoch in the future means the clock is before the epoch: an error, not a negative id.
ALTER SYSTEM SET pg_idgen.snowflake_epoch = '4000000000000';
:reload
SELECT test_helpers.error_of('SELECT gen_snowflake()')
       LIKE '22008: time % ms since 1970-01-01 is before the snowflake epoch 4000000000000 ms (pg_idgen.snowflake_epoch)' AS before_epoch;

-- Moving the epoch later makes new ids fall behind the last one issued, exactly as a clock
-- stepping back would: within pg_idgen.snowflake_max_backward_ms the call waits, beyond it fails.
ALTER SYSTEM RESET pg_idgen.snowflake_epoch;
:reload
SELECT gen_snowflake() AS last_id \gset
ALTER SYSTEM SET pg_idgen.snowflake_epoch = '1288834976657';
:reload
SET pg_idgen.snowflake_max_backward_ms = 5000;
-- The call returns an id above the last one, of a time the clock has reached: it waited
-- (about 2 s, less the time since :last_id was issued) rather than issuing ahead of the clock.
SELECT id > :last_id AS increased_after_waiting,
       clock_timestamp() >= snowflake_time(id) AS waited
FROM (SELECT gen_snowflake() AS id OFFSET 0) s;
RESET pg_idgen.snowflake_max_backward_ms;
ALTER SYSTEM SET pg_idgen.snowflake_epoch = '1288834984657';
:reload
SELECT test_helpers.error_of('SELECT gen_snowflake()')
       LIKE '55000: pg_idgen.snowflake_epoch changed from 1288834976657 to 1288834984657 ms, which puts new ids % ms behind the last issued id, more than pg_idgen.snowflake_max_backward_ms (1000 ms)' AS beyond_bound;

-- A different worker never goes below an earlier id either.
ALTER SYSTEM RESET pg_idgen.snowflake_epoch;
ALTER SYSTEM SET pg_idgen.worker_id = 0;
:reload
SELECT gen_snowflake() > :last_id AS still_increasing, snowflake_worker(gen_snowflake()) AS worker;
ALTER SYSTEM RESET pg_idgen.worker_id;
:reload
SHOW pg_idgen.worker_id;

-- Labels.
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idgen'
WHERE p.proname LIKE '%snowflake%'
ORDER BY p.proname, p.oid::regprocedure::text;
