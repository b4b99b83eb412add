-- The writer registry of the portable edition is the native one, sql/registry.sql, included by
-- portable/build.py as it is (docs/formats.md §8-§11 hold its rules), but for its edition
-- blocks: the few functions that read the native library's settings or the server's WAL and
-- control file, which build.py swaps for the blocks of the same names below. The rest of this
-- file (the edition's own tables and helpers) goes just before the first block, after the
-- registry's tables. docs/portable.md "The writer registry: the seam" says how, portable/README.md why.
--
-- Where the native registry reads a setting of its library (pg_idgen.worker_id,
-- pg_idgen.snowflake_epoch), this edition reads idgen_config: a setting named so is only a
-- placeholder here, which any role can SET for its own session, and the writer-facing functions
-- run as the owner in the caller's session.

-- edition block idgen_registry_epoch begin
-- The Snowflake epoch of the registry's grants (native: pg_idgen.snowflake_epoch).
CREATE FUNCTION @extschema@.idgen_registry_epoch() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT c.snowflake_epoch FROM @extschema@.idgen_config c);
COMMENT ON FUNCTION @extschema@.idgen_registry_epoch() IS 'internal: the Snowflake epoch of the registry''s grants (idgen_config)';
-- edition block idgen_registry_epoch end

-- edition block idgen_registry_worker_id begin
-- The server's own Snowflake worker id, NULL when unset (native: pg_idgen.worker_id, -1 unset).
CREATE FUNCTION @extschema@.idgen_registry_worker_id() RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT c.worker_id FROM @extschema@.idgen_config c);
COMMENT ON FUNCTION @extschema@.idgen_registry_worker_id() IS 'internal: this database''s Snowflake worker id (idgen_config; NULL: unset)';
-- edition block idgen_registry_worker_id end

-- edition block idgen_registry_setting begin
-- Where the registry's settings are set, for its messages (native: pg_idgen.NAME, placeholders
-- any role can SET here): columns of idgen_config.
CREATE FUNCTION @extschema@.idgen_registry_setting(setting_name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN 'idgen_config.' || setting_name;
COMMENT ON FUNCTION @extschema@.idgen_registry_setting(text) IS 'internal: where a setting of the registry is set, for its messages (idgen_config)';
-- edition block idgen_registry_setting end

-- edition block idgen_registry_machine begin
-- The 3 bytes of the server's own xid12 machine id (native: xid12_current_machine(), which here
-- reads the session cache).
CREATE FUNCTION @extschema@.idgen_registry_machine() RETURNS bytea
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    RETURN substr(int8send(@extschema@.idgen_config_machine()), 6, 3);
COMMENT ON FUNCTION @extschema@.idgen_registry_machine() IS 'internal: this database''s xid12 machine id (idgen_config, or derived), as 3 bytes';
-- edition block idgen_registry_machine end

-- edition block idgen_registry_owner begin
-- The role the registry trusts besides superusers (native: the extension's owner). The plain
-- script makes no extension: the owner of the registry's tables, who installed the edition and
-- owns its SECURITY DEFINER functions. (As a TLE the extension's owner is that role too.)
CREATE FUNCTION @extschema@.idgen_registry_owner() RETURNS oid
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT c.relowner FROM pg_class c WHERE c.oid = '@extschema@.idgen_registry_grant'::regclass);
COMMENT ON FUNCTION @extschema@.idgen_registry_owner() IS 'internal: the owner of the registry''s tables, trusted as native trusts the extension''s owner';
-- edition block idgen_registry_owner end

-- The origin (docs/formats.md §9) --------------------------------------------------------------
-- Native records the cluster's system identifier (pg_control_system()) and the WAL timeline
-- (pg_walfile_name(pg_current_wal_lsn())). Stock PostgreSQL lets every role run both; a service
-- may refuse them (Aurora refuses pg_current_wal_lsn() unless wal_level is logical; others revoke
-- pg_control_*). Where they work, this edition checks what native checks. Two more signals
-- cover what they cannot, and what a plain script's dump does differently:
--
-- idgen_registry_site: the database's oid and the registry table's oid where the registry was
--   last checked. A dump restored (the plain script's tables are ordinary ones, dumped with
--   their rows), or a database copied with CREATE DATABASE ... TEMPLATE, has other oids: a
--   change of origin, "restored from a dump or copied into another database". (As a TLE,
--   native's own rule sees a dump: the install's row beside the dumped ones.)
-- idgen_registry_marker: an UNLOGGED table holding one row. PostgreSQL empties an unlogged
--   table in crash recovery; a standby, so a promoted one, and a restored base backup (a
--   point-in-time recovery) have it empty. Where the WAL timeline cannot be read, an empty
--   marker is a change of origin: a crash cannot be told from a promotion there, so both fence
--   (portable/README.md says what that costs and when a DBA lifts it).
CREATE TABLE @extschema@.idgen_registry_site (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    database_oid oid NOT NULL,
    registry_oid oid NOT NULL,
    seen_at timestamptz NOT NULL
);
COMMENT ON TABLE @extschema@.idgen_registry_site IS 'the database and registry table oids the writer registry was last checked on; other oids are a restore or a copy';
CREATE UNLOGGED TABLE @extschema@.idgen_registry_marker (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    written_at timestamptz NOT NULL
);
COMMENT ON TABLE @extschema@.idgen_registry_marker IS 'unlogged: emptied by crash recovery, empty on a promoted standby or a restored backup';

-- The latest origin row (of two at one moment, the one that records a change), as native's
-- idgen_registry_check_origin orders them.
CREATE FUNCTION @extschema@.idgen_registry_last_origin() RETURNS @extschema@.idgen_registry_origin
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT o FROM @extschema@.idgen_registry_origin o ORDER BY o.seen_at DESC, o.reason IS NULL LIMIT 1);
COMMENT ON FUNCTION @extschema@.idgen_registry_last_origin() IS 'internal: the latest row of idgen_registry_origin';

-- edition block idgen_registry_system_identifier begin
-- The cluster's system identifier; where pg_control_system() is refused, the one recorded last
-- (the change is then seen by the site or the marker, or not at all: portable/README.md), 0
-- when none is.
CREATE FUNCTION @extschema@.idgen_registry_system_identifier() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT s.system_identifier FROM pg_control_system() s);
EXCEPTION WHEN OTHERS THEN
    -- Refused (42501 where EXECUTE was revoked), or any error a service raises instead.
    RETURN coalesce((@extschema@.idgen_registry_last_origin()).system_identifier, 0);
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_registry_system_identifier() IS 'internal: the cluster''s system identifier, or the recorded one where pg_control_system() is refused';
-- edition block idgen_registry_system_identifier end

-- The WAL timeline the server writes, as native reads it; NULL where the WAL functions are
-- refused.
CREATE FUNCTION @extschema@.idgen_registry_wal_timeline() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint;
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_registry_wal_timeline() IS 'internal: the current WAL timeline (NULL where the WAL functions are refused)';

-- edition block idgen_registry_timeline begin
-- The timeline the registry compares (native: always the WAL's). Where the WAL functions are
-- refused: with the marker there, the recorded one (the marker shows that no recovery, so no new
-- timeline, came since it was written); without it, the timeline of the last checkpoint
-- (pg_control_checkpoint(): after a promotion it is the old one until the first checkpoint ends,
-- so it names a new timeline only sometimes; the empty marker fences either way); 0 when
-- nothing is readable.
CREATE FUNCTION @extschema@.idgen_registry_timeline() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tli bigint := @extschema@.idgen_registry_wal_timeline();
    recorded bigint := (@extschema@.idgen_registry_last_origin()).timeline;
BEGIN
    IF tli IS NOT NULL THEN
        RETURN tli;
    END IF;
    IF recorded IS NOT NULL AND EXISTS (SELECT FROM @extschema@.idgen_registry_marker) THEN
        RETURN recorded;
    END IF;
    BEGIN
        RETURN (SELECT c.timeline_id FROM pg_control_checkpoint() c);
    EXCEPTION WHEN OTHERS THEN
        RETURN coalesce(recorded, 0);
    END;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_registry_timeline() IS 'internal: the WAL timeline, or what stands for it where the WAL functions are refused';
-- edition block idgen_registry_timeline end

-- edition block idgen_registry_site_change begin
-- A change of origin that native's checks do not see, or NULL (EMPTY: no origin recorded yet).
-- Called in idgen_registry_check_origin's loop, before and after its lock, so it only reads.
CREATE FUNCTION @extschema@.idgen_registry_site_change(empty boolean) RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    site @extschema@.idgen_registry_site;
    db oid := (SELECT d.oid FROM pg_database d WHERE d.datname = current_database());
    reg oid := '@extschema@.idgen_registry_grant'::regclass;
BEGIN
    IF empty THEN
        RETURN NULL;
    END IF;
    SELECT * INTO site FROM @extschema@.idgen_registry_site s;
    IF FOUND AND (site.database_oid <> db OR site.registry_oid <> reg) THEN
        RETURN format('restored from a dump or copied into another database (database oid %s, registry table oid %s; were %s, %s)',
                      db, reg, site.database_oid, site.registry_oid);
    END IF;
    IF NOT EXISTS (SELECT FROM @extschema@.idgen_registry_marker)
       AND @extschema@.idgen_registry_wal_timeline() IS NULL THEN
        RETURN 'a crash recovery, a promoted standby or a restored backup, which this server cannot tell apart: '
               'the registry''s unlogged marker is empty and the WAL timeline is not readable here';
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_registry_site_change(boolean) IS 'internal: a restore, a copied database, or (WAL not readable) a recovery: the changes of origin native''s checks do not see';
-- edition block idgen_registry_site_change end

-- edition block idgen_registry_mark_site begin
-- Records where the registry is now: the marker row, and the site's oids. Called by
-- idgen_registry_check_origin once it has decided (and recorded a change, in the same
-- transaction).
CREATE FUNCTION @extschema@.idgen_registry_mark_site() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    db oid := (SELECT d.oid FROM pg_database d WHERE d.datname = current_database());
    reg oid := '@extschema@.idgen_registry_grant'::regclass;
BEGIN
    IF NOT EXISTS (SELECT FROM @extschema@.idgen_registry_marker) THEN
        INSERT INTO @extschema@.idgen_registry_marker (written_at) VALUES (clock_timestamp())
            ON CONFLICT ON CONSTRAINT idgen_registry_marker_pkey DO NOTHING;
    END IF;
    IF NOT EXISTS (SELECT FROM @extschema@.idgen_registry_site s WHERE s.database_oid = db AND s.registry_oid = reg) THEN
        INSERT INTO @extschema@.idgen_registry_site AS s (database_oid, registry_oid, seen_at) VALUES (db, reg, clock_timestamp())
            ON CONFLICT ON CONSTRAINT idgen_registry_site_pkey DO UPDATE
            SET database_oid = excluded.database_oid, registry_oid = excluded.registry_oid, seen_at = excluded.seen_at;
    END IF;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_registry_mark_site() IS 'internal: writes the marker and the site''s oids';
-- edition block idgen_registry_mark_site end

-- The edition's own helpers are the owner's and the superusers' only, as native's internals; the
-- blocks' EXECUTE is revoked by sql/registry.sql "Privileges", after them.
REVOKE EXECUTE ON FUNCTION
    @extschema@.idgen_registry_last_origin(),
    @extschema@.idgen_registry_wal_timeline()
FROM PUBLIC;
