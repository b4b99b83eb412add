-- Snowflake ids: bigint = 0 | 41-bit ms since the epoch | 10-bit worker | 12-bit sequence
-- (docs/formats.md §5). The epoch and worker id come from idgen_config.

-- The sequence's value is (unix millisecond << 12 | sequence within it), in unix time so that
-- it does not depend on the epoch: docs/portable.md "Uniqueness: the sequence design".
CREATE SEQUENCE @extschema@.idgen_snowflake_seq AS bigint MINVALUE 0 START 0 NO CYCLE CACHE 1;

-- This session's worker id << 12 and Snowflake epoch, read from idgen_config. IMMUTABLE though
-- they read a table: computed when gen_snowflake() is planned, as its owner, and kept in the
-- plan the session caches (10_config.sql), never in a setting. EXECUTE: the owner only.
CREATE FUNCTION @extschema@.idgen_snowflake_worker() RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    worker integer;
BEGIN
    SELECT worker_id INTO worker FROM @extschema@.idgen_config;
    IF worker IS NULL THEN
        RAISE EXCEPTION 'idgen_config.worker_id is not set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Give this database a worker id (0 .. 1023) unique among the databases whose snowflake ids meet, e.g. UPDATE '
                         || '@extschema@.idgen_config SET worker_id = 1; (sessions read it when they start).';
    END IF;
    RETURN worker::bigint << 12;
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_snowflake_worker() FROM PUBLIC;

CREATE FUNCTION @extschema@.idgen_snowflake_epoch() RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT c.snowflake_epoch FROM @extschema@.idgen_config c);
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_snowflake_epoch() FROM PUBLIC;

-- gen_snowflake's errors for a time (unix ms) outside the 41 bits after the epoch e.
CREATE FUNCTION @extschema@.idgen_snowflake_range(unix_ms bigint, e bigint) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF unix_ms < e THEN
        RAISE EXCEPTION 'time % ms since 1970-01-01 is before the snowflake epoch % ms (idgen_config.snowflake_epoch)', unix_ms, e
            USING ERRCODE = 'datetime_field_overflow';
    END IF;
    RAISE EXCEPTION 'time % ms after the snowflake epoch is beyond the 41-bit snowflake range (at most 2199023255551 ms, about 69 years)', unix_ms - e
        USING ERRCODE = 'datetime_field_overflow';
END
$$;

-- Hot path: few PL/pgSQL statements, simple expressions.
-- The gate to the sequence (15_sequence.sql): SECURITY DEFINER, EXECUTE granted by the owner.
CREATE FUNCTION @extschema@.gen_snowflake() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- The jump count, nextval(), the count again (15_sequence.sql): the value stands when no
    -- jump was open between the two reads. The worker (its check first: 55000 when unset).
    w bigint := @extschema@.idgen_snowflake_worker();
    j bigint := pg_catalog.pg_sequence_last_value('@extschema@.idgen_snowflake_jumps'::pg_catalog.regclass);
    v bigint := pg_catalog.nextval('@extschema@.idgen_snowflake_seq'::pg_catalog.regclass);
    ms bigint;
BEGIN
    IF j IS DISTINCT FROM pg_catalog.pg_sequence_last_value('@extschema@.idgen_snowflake_jumps'::pg_catalog.regclass)
       OR (j & 1) = 1 THEN
        v := @extschema@.idgen_sequence_jump('@extschema@.idgen_snowflake_seq'::pg_catalog.regclass,
                 '@extschema@.idgen_snowflake_jumps'::pg_catalog.regclass, '@extschema@.idgen_snowflake_jumper'::pg_catalog.regclass, 0::pg_catalog.int8, true);
    END IF;
    -- Behind the clock: jump; when the lock is busy, go on with v unless it is more than
    -- 100 ms behind, then wait for the lock (docs/portable.md "How far behind the clock").
    IF (v >> 12) < pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000) THEN
        ms := pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::bigint;
        v := coalesce(@extschema@.idgen_sequence_jump('@extschema@.idgen_snowflake_seq'::pg_catalog.regclass,
                          '@extschema@.idgen_snowflake_jumps'::pg_catalog.regclass, '@extschema@.idgen_snowflake_jumper'::pg_catalog.regclass,
                          ms << 12, false),
                      CASE WHEN (v >> 12) >= ms - 100 THEN v END,
                      @extschema@.idgen_sequence_jump('@extschema@.idgen_snowflake_seq'::pg_catalog.regclass,
                          '@extschema@.idgen_snowflake_jumps'::pg_catalog.regclass, '@extschema@.idgen_snowflake_jumper'::pg_catalog.regclass,
                          ms << 12, true));
    END IF;
    -- The time since the epoch, in 41 bits (or idgen_snowflake_range's error).
    ms := (v >> 12) - @extschema@.idgen_snowflake_epoch();
    RETURN CASE WHEN ms >= 0 AND ms <= 2199023255551 THEN (ms << 22) | w | (v & 4095)
                ELSE @extschema@.idgen_snowflake_range(v >> 12, @extschema@.idgen_snowflake_epoch()) END;
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.gen_snowflake() FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.gen_snowflake() IS 'a new snowflake id, unique and increasing within the database';

-- Decoders ------------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.idgen_snowflake_valid(id bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN id >= 0 THEN id
            ELSE @extschema@.idgen_raise('22023', 'invalid snowflake id ' || id || ': snowflake ids are never negative') END;

-- STABLE: the answer depends on the configured epoch.
CREATE FUNCTION @extschema@.snowflake_time(id bigint) RETURNS timestamptz
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN '1970-01-01 00:00:00+00'::timestamptz
    + ((@extschema@.idgen_snowflake_valid(id) >> 22) + @extschema@.idgen_config_get('sf_epoch'::pg_catalog.text)) * interval '1 millisecond';

CREATE FUNCTION @extschema@.snowflake_worker(id bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ((@extschema@.idgen_snowflake_valid(id) >> 12) & 1023)::integer;

CREATE FUNCTION @extschema@.snowflake_sequence(id bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (@extschema@.idgen_snowflake_valid(id) & 4095)::integer;

-- The smallest / largest id of a millisecond: 0 / -1 before the epoch (below every id), an
-- error past the 41-bit range and for infinity.
CREATE FUNCTION @extschema@.idgen_snowflake_ms(ts timestamptz) RETURNS bigint
    LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ms bigint;
BEGIN
    IF ts = '-infinity' THEN
        RETURN -1;
    END IF;
    PERFORM @extschema@.idgen_unix_seconds(ts);  -- infinity: native's error
    ms := floor(extract(epoch FROM ts) * 1000)::bigint - @extschema@.idgen_config_get('sf_epoch'::pg_catalog.text);
    IF ms > 2199023255551 THEN
        RAISE EXCEPTION 'time % ms after the snowflake epoch is beyond the 41-bit snowflake range (at most 2199023255551 ms, about 69 years)', ms
            USING ERRCODE = 'datetime_field_overflow';
    END IF;
    RETURN greatest(ms, -1);
END
$$;

CREATE FUNCTION @extschema@.snowflake_min(ts timestamptz) RETURNS bigint
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN CASE WHEN @extschema@.idgen_snowflake_ms(ts) < 0 THEN 0 ELSE @extschema@.idgen_snowflake_ms(ts) << 22 END;
COMMENT ON FUNCTION @extschema@.snowflake_min(timestamptz) IS 'the smallest snowflake id of that millisecond';

CREATE FUNCTION @extschema@.snowflake_max(ts timestamptz) RETURNS bigint
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN CASE WHEN @extschema@.idgen_snowflake_ms(ts) < 0 THEN -1 ELSE (@extschema@.idgen_snowflake_ms(ts) << 22) | 4194303 END;
COMMENT ON FUNCTION @extschema@.snowflake_max(timestamptz) IS 'the largest snowflake id of that millisecond';
