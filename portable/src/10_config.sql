-- Configuration: one row, read once per session, changed by the table's owner (the role that
-- installed the script). On a managed service a non-superuser cannot set custom settings in
-- postgresql.conf, so what native reads from pg_idgen.* settings lives here.
CREATE TABLE @extschema@.idgen_config (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    -- xid12 bytes 4-6. NULL: derived per session from the cluster's system identifier, the
    -- server's start time and the database (docs in portable/README.md).
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

-- Every session caches the configuration in placeholder settings (idgen_portable.*), which any
-- role may set for itself. A cache only: RESET ALL or DISCARD ALL empties it and the next call
-- reads the table again. Uniqueness never depends on it (the sequences give it).
--   idgen_portable.machine    the xid12 machine id             (idgen_config_load)
--   idgen_portable.sf_epoch   the Snowflake epoch               (idgen_config_load)
--   idgen_portable.xid12_mp   machine << 16 | pid, for gen_xid12 (idgen_xid12_ready)
--   idgen_portable.sf_worker  worker << 12, for gen_snowflake   (idgen_snowflake_ready)
--   idgen_portable.xid12_key, xid12_head  gen_xid12's first 17 characters and their key
-- The xid12 machine id of this database's generators: idgen_config's, or when that is NULL
-- derived from the cluster's system identifier, the server's start time and the database's oid
-- (portable/README.md "Configuration"). Read from the table, not the session cache (which a
-- session may set): the writer registry reserves it as the server's own.
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
        seed := concat_ws(':', seed, pg_postmaster_start_time(),
                          (SELECT oid FROM pg_database WHERE datname = current_database()));
        machine := ('x' || left(md5(seed), 6))::bit(24)::bigint;
    END IF;
    RETURN machine;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_config_machine() IS 'the xid12 machine id of this database''s generators, from idgen_config (not the session cache)';

CREATE FUNCTION @extschema@.idgen_config_load() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg record;
BEGIN
    SELECT * INTO STRICT cfg FROM @extschema@.idgen_config;
    PERFORM set_config('idgen_portable.machine', @extschema@.idgen_config_machine()::text, false);
    PERFORM set_config('idgen_portable.sf_epoch', cfg.snowflake_epoch::text, false);
    PERFORM set_config('idgen_portable.xid12_mp', '', false);
    PERFORM set_config('idgen_portable.xid12_key', '', false);
    PERFORM set_config('idgen_portable.sf_worker', '', false);
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_config_load() IS 'reads idgen_config into this session''s cache (done by the first call that needs it)';

-- The cached value of one setting, reading the table first when the cache is empty.
CREATE FUNCTION @extschema@.idgen_config_get(name text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    value text := nullif(current_setting('idgen_portable.' || name, true), '');
BEGIN
    IF value IS NULL THEN
        PERFORM @extschema@.idgen_config_load();
        value := current_setting('idgen_portable.' || name);
    END IF;
    RETURN value::bigint;
END
$$;

-- A new configuration reaches sessions that start after it; this makes the calling session
-- read it again. Changing snowflake_epoch after ids were issued can repeat ids: don't.
CREATE FUNCTION @extschema@.idgen_config_reload() RETURNS void
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
BEGIN ATOMIC
    SELECT @extschema@.idgen_config_load();
END;

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
