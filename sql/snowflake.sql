-- Snowflake ids: bigint = 0 | 41-bit ms since pg_idgen.snowflake_epoch | 10-bit worker | 12-bit sequence.

-- VOLATILE and PARALLEL UNSAFE like nextval(): every call changes the cluster-wide state.
CREATE FUNCTION gen_snowflake() RETURNS bigint
    AS 'MODULE_PATHNAME', 'gen_snowflake_wrapper' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION gen_snowflake() IS 'a new snowflake id, unique and increasing within the cluster';

-- STABLE: the answer depends on pg_idgen.snowflake_epoch.
CREATE FUNCTION snowflake_time(bigint) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_time_wrapper' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_min(timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_min_wrapper' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_max(timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_max_wrapper' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_min(timestamptz) IS 'the smallest snowflake id of that millisecond';
COMMENT ON FUNCTION snowflake_max(timestamptz) IS 'the largest snowflake id of that millisecond';

CREATE FUNCTION snowflake_worker(bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_worker_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_sequence(bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_sequence_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
