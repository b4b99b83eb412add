-- Configuration: one row, read once per session, changed by the table's owner (the role that
-- installed the script). On a managed service a non-superuser cannot set custom settings in
-- postgresql.conf, so what native reads from pg_idgen.* settings lives here.
CREATE TABLE @extschema@.idgen_config (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    -- xid12 bytes 4-6. NULL: derived per session from the cluster's system identifier, the
    -- server's start time and the database (docs/portable.md "Uniqueness: the sequence design").
    machine_id integer CHECK (machine_id BETWEEN 0 AND 16777215),
    -- Snowflake worker id. NULL: gen_snowflake() refuses to run (as native with worker_id -1).
    worker_id integer CHECK (worker_id BETWEEN 0 AND 1023),
    snowflake_epoch bigint NOT NULL DEFAULT 1288834974657
        CHECK (snowflake_epoch BETWEEN 0 AND 9223372036854775807 - 2199023255551)
);
-- A second row is folded into the one row: pg_dump dumps the row of the extension packaging
-- (a configuration table) and its restore COPYs it into the row CREATE EXTENSION made.
CREATE FUNCTION @extschema@.idgen_config_one_row() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE @extschema@.idgen_config
       SET machine_id = NEW.machine_id, worker_id = NEW.worker_id, snowflake_epoch = NEW.snowflake_epoch
     WHERE only_row;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER idgen_config_one_row BEFORE INSERT ON @extschema@.idgen_config
    FOR EACH ROW EXECUTE FUNCTION @extschema@.idgen_config_one_row();
INSERT INTO @extschema@.idgen_config DEFAULT VALUES;
COMMENT ON TABLE @extschema@.idgen_config IS 'pg_idgen portable: machine id, worker id, epoch (read once per session)';

-- No session setting decides an id (portable/README.md "Security"): placeholder settings
-- (idgen_portable.*) are any role's to SET in its own session, so the generators keep nothing
-- there. What a generator needs of the configuration is read from the table by IMMUTABLE
-- functions without arguments (idgen_xid12_session, idgen_snowflake_worker,
-- idgen_snowflake_epoch): PostgreSQL's planner computes such a call once, when it plans the
-- gate's expression, as the gate's owner, and keeps the value in the plan the session caches
-- for the gate. A session can neither set nor read that value; it can only make the gate plan
-- again (DISCARD PLANS, idgen_config_reload), which reads the table again.
-- The xid12 machine id of this database's generators: idgen_config's, or when that is NULL
-- derived from the cluster's system identifier, the server's start time and the database's oid
-- (portable/README.md "Configuration"). Every value as a number, so no session setting
-- (TimeZone, DateStyle) changes the text that is hashed. The writer registry reserves it as the
-- server's own.
CREATE FUNCTION @extschema@.idgen_config_machine() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    machine bigint := (SELECT c.machine_id FROM @extschema@.idgen_config c);
    seed text;
BEGIN
    IF machine IS NULL THEN
        BEGIN
            seed := (SELECT system_identifier::text FROM pg_control_system());
        EXCEPTION WHEN insufficient_privilege OR undefined_function THEN
            seed := 'no system identifier';
        END;
        seed := concat_ws(':', seed, extract(epoch FROM pg_postmaster_start_time())::numeric::text,
                          (SELECT oid FROM pg_database WHERE datname = current_database())::text);
        machine := ('x' || left(md5(seed), 6))::bit(24)::bigint;
    END IF;
    RETURN machine;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_config_machine() IS 'the xid12 machine id of this database''s generators, from idgen_config';

-- One value of the configuration, read from the table: 'machine' or 'sf_epoch' (the decoders'
-- epoch; the name is the one earlier versions cached it under).
CREATE FUNCTION @extschema@.idgen_config_get(name text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF name = 'machine' THEN
        RETURN @extschema@.idgen_config_machine();
    ELSIF name = 'sf_epoch' THEN
        RETURN (SELECT c.snowflake_epoch FROM @extschema@.idgen_config c);
    END IF;
    RAISE EXCEPTION 'unknown pg_idgen portable configuration value %', name USING ERRCODE = 'invalid_parameter_value';
END
$$;

-- A new configuration reaches sessions that start after it; this makes the calling session
-- read it again (its cached plans are dropped, and the gates plan again, reading the table).
-- Changing snowflake_epoch after ids were issued can repeat ids: don't.
CREATE FUNCTION @extschema@.idgen_config_reload() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DISCARD PLANS;
END
$$;

-- Raises an error with PostgreSQL's fields. IMMUTABLE so that an immutable SQL function that
-- raises in one CASE branch can still be inlined; it never returns.
CREATE FUNCTION @extschema@.idgen_raise(sqlstate text, message text, detail text DEFAULT NULL,
                                        hint text DEFAULT NULL) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF detail IS NULL AND hint IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
    ELSIF hint IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail;
    ELSIF detail IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, HINT = hint;
    END IF;
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail, HINT = hint;
END
$$;
