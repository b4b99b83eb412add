-- Without shared_preload_libraries: xid12 works with a per-backend counter.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
SHOW shared_preload_libraries;
CREATE TEMP TABLE burst AS SELECT g, gen_xid12() AS x FROM generate_series(1, 50000) g;
SELECT count(*) FILTER (WHERE x <= prev) AS not_increasing, count(DISTINCT x) AS distinct_ids
FROM (SELECT x, lag(x) OVER (ORDER BY g) AS prev FROM burst) s;
SELECT xid12_pid(gen_xid12()) = pg_backend_pid() % 65536 AS this_backend;

-- Snowflake ids need the shared state: a clear error, never a possibly duplicate id.
SELECT gen_snowflake();
-- Decoders and bounds need no state.
SELECT snowflake_worker((1::bigint << 22) | (9 << 12)) AS worker;
