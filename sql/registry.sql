-- Writers: identities handed out by the database (docs/formats.md §8–§11; docs/registry.md).
-- THIS FILE IS CONSUMED BY portable/build.py for the portable SQL edition: see "Edition blocks".
--
-- A grant gives one writer a slot (a Snowflake worker id 0-1023, or an xid12 machine id
-- 0-16777215) for a window [lo, hi) of id-time: the time its ids carry (Snowflake: milliseconds
-- since the epoch; xid12: unix seconds). Windows of one slot never overlap: the exclusion
-- constraint of idgen_registry_grant guarantees it whatever the code or a race does. A writer
-- makes ids only inside its window, so no two writers can make the same id, whatever their
-- clocks do. A reservation takes a slot for good (hi is the end of the slot's id-time), for a
-- writer that assigns its own ids, and for the server's own pg_idgen.worker_id and machine id.
--
-- The registry keeps id-time as bigint; (kind, slot, id-time) packs into one bigint, so that a
-- window is an int8range and range GiST (in core, no btree_gist) enforces disjointness:
--   snowflake: 1 << 60 + slot << 41 + ms      xid12: slot << 32 + s
-- (a sum, not a bitwise or: the end of a reservation, 2^41 or 2^32, is the next slot's start).
--
-- Who may change what (README "Who may do what"; docs/registry-security.md). Only the registry's
-- functions change its tables: no role but the extension's owner holds rights on them. The four
-- a writer calls (idgen_acquire, idgen_renew, idgen_release, idgen_report) are SECURITY DEFINER:
-- they run as the owner, with search_path = pg_catalog, pg_temp and every name qualified, and
-- EXECUTE on them goes only to the roles a DBA names for a pool (idgen_pool_allow), each with a
-- cap of live grants there. Everything else that changes registry state (reservations, the
-- fence, the pools) runs as its caller and is executable by the owner and superusers only. A
-- grant records the database role that made it, and only that role (or a trusted one) holding
-- its token may renew, release or report on it. Tokens are kept as their SHA-256, so reading
-- the tables does not reveal them.

CREATE FUNCTION idgen_registry_pack(kind text, slot integer, t bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE kind WHEN 'snowflake' THEN (1::int8 << 60) + (slot::int8 << 41) + t
                     ELSE (slot::int8 << 32) + t END;
COMMENT ON FUNCTION idgen_registry_pack(text, integer, bigint) IS 'internal: a slot and an id-time packed into one bigint (the registry''s exclusion constraint)';

-- The end of a kind's id-time: one past the largest value its ids can carry.
CREATE FUNCTION idgen_registry_time_end(kind text) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE kind WHEN 'snowflake' THEN 1::int8 << 41 ELSE 1::int8 << 32 END;
COMMENT ON FUNCTION idgen_registry_time_end(text) IS 'internal: one past the largest id-time of a kind (41-bit ms, 32-bit s)';

CREATE SEQUENCE idgen_registry_grant_id_seq;
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_grant_id_seq', '');

CREATE TABLE idgen_registry_grant (
    grant_id bigint PRIMARY KEY DEFAULT nextval('idgen_registry_grant_id_seq'),
    kind text NOT NULL CHECK (kind IN ('snowflake', 'xid12')),
    slot integer NOT NULL CHECK (slot >= 0 AND slot < CASE kind WHEN 'snowflake' THEN 1024 ELSE 16777216 END),
    pool text NOT NULL,
    writer text NOT NULL,
    reserved boolean NOT NULL,
    token_sha256 bytea CHECK ((token_sha256 IS NULL) = reserved),
    lo bigint NOT NULL CHECK (lo >= 0),
    hi bigint NOT NULL,
    lease interval,
    epoch_ms bigint,
    granted_at timestamptz NOT NULL,
    renewed_at timestamptz,
    released_at timestamptz,
    span int8range NOT NULL GENERATED ALWAYS AS
        (int8range(idgen_registry_pack(kind, slot, lo), idgen_registry_pack(kind, slot, hi))) STORED,
    CHECK (lo <= hi AND hi <= idgen_registry_time_end(kind)),
    CONSTRAINT idgen_registry_windows_disjoint EXCLUDE USING gist (span WITH &&)
);
ALTER SEQUENCE idgen_registry_grant_id_seq OWNED BY idgen_registry_grant.grant_id;
CREATE INDEX ON idgen_registry_grant (writer);
COMMENT ON TABLE idgen_registry_grant IS 'every grant and reservation of a slot for a window of id-time; windows of one slot never overlap';
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_grant', '');
-- 0.7.0: the database role that made the grant or reservation (NULL: made before 0.7.0). Its
-- live grants in a pool are counted against its cap there: a live grant was granted or renewed
-- within the pool's longest lease, so the index finds them among a role's grants that crashed
-- writers never released.
ALTER TABLE idgen_registry_grant ADD COLUMN db_role name;
CREATE INDEX idgen_registry_grant_live ON idgen_registry_grant (pool, db_role, (coalesce(renewed_at, granted_at)))
    WHERE released_at IS NULL;

-- One row per slot that was ever granted or reserved: where its next window may start. The
-- row lock serializes the acquires, renewals and releases of one slot.
CREATE TABLE idgen_registry_slot (
    kind text NOT NULL CHECK (kind IN ('snowflake', 'xid12')),
    slot integer NOT NULL,
    next_free bigint NOT NULL,
    PRIMARY KEY (kind, slot)
);
COMMENT ON TABLE idgen_registry_slot IS 'per slot: the id-time where its next window may start (the end of its last window)';
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_slot', '');

-- Pools: which slots a pool's grants take, and the longest lease it allows. Built in: 'edge'
-- (devices that go offline for days) takes Snowflake worker ids 768-1023 and the top quarter of
-- the xid12 machine ids, leases up to 366 days; every other pool ('app' by default) takes the
-- rest, leases up to 1 hour. So offline devices cannot starve online writers, and a failover
-- fences each pool only as long as its own leases can reach. A row here overrides a pool.
CREATE TABLE idgen_registry_pool (
    pool text PRIMARY KEY CHECK (pool <> 'reserved'),
    snowflake_slots int4range NOT NULL CHECK (snowflake_slots <@ int4range(0, 1024) AND NOT isempty(snowflake_slots)),
    xid12_slots int4range NOT NULL CHECK (xid12_slots <@ int4range(0, 16777216) AND NOT isempty(xid12_slots)),
    max_lease interval NOT NULL CHECK (max_lease >= interval '1 second' AND max_lease <= interval '366 days')
);
COMMENT ON TABLE idgen_registry_pool IS 'writer pools: their slots and longest lease (built in: app and edge)';
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_pool', '');
GRANT SELECT ON idgen_registry_pool TO PUBLIC;
-- 0.7.0: the longest lease of a pool's Snowflake grants (NULL: max_lease). A Snowflake slot cannot
-- be told apart by origin the way an xid12 machine id can (see idgen_registry_origin), so after a
-- failover a new Snowflake writer waits until every lost grant of its pool must have ended: the
-- built-in app pool keeps that short (3 minutes; writers renew at half of it), and its xid12
-- grants keep 1 hour (docs/formats.md, "Writer registry: the fence").
ALTER TABLE idgen_registry_pool ADD COLUMN snowflake_max_lease interval
    CHECK (snowflake_max_lease >= interval '1 second' AND snowflake_max_lease <= max_lease);

-- A pool's ACL (0.7.0): the roles that may take grants in it, each with a cap of live grants per
-- role, so that one writer cannot hold a pool's every slot. A role may use a pool when it has the
-- privileges of a member (itself, or a group role it inherits); its cap is the largest of those
-- members'. The superuser and the extension's owner need no row and have no cap. Rows are made
-- by idgen_pool_allow and removed by idgen_pool_disallow; dumped with the registry.
CREATE TABLE idgen_registry_pool_role (
    pool text NOT NULL CHECK (pool <> 'reserved'),
    member regrole NOT NULL,
    max_live integer NOT NULL CHECK (max_live > 0),
    PRIMARY KEY (pool, member)
);
COMMENT ON TABLE idgen_registry_pool_role IS 'which roles may take grants in which pool, and how many live grants each role may hold there';
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_pool_role', '');

-- One row per (pool, role) that took a grant under a cap: its row lock serializes that role's
-- acquires in the pool, so that concurrent ones cannot pass the cap together. Not dumped.
CREATE TABLE idgen_registry_quota (
    pool text NOT NULL,
    db_role name NOT NULL,
    PRIMARY KEY (pool, db_role)
);
COMMENT ON TABLE idgen_registry_quota IS 'internal: a row lock per pool and role, taken while a capped acquire counts the role''s live grants';

-- The built-in pools, as they are without a row: 'edge', and 'app' (named pool here).
CREATE FUNCTION idgen_registry_builtin_pool(pool text) RETURNS idgen_registry_pool
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE WHEN pool = 'edge'
        THEN ROW('edge', int4range(768, 1024), int4range(12582912, 16777216), interval '366 days', NULL)::@extschema@.idgen_registry_pool
        ELSE ROW(pool, int4range(0, 768), int4range(0, 12582912), interval '1 hour', interval '3 minutes')::@extschema@.idgen_registry_pool END;
COMMENT ON FUNCTION idgen_registry_builtin_pool(text) IS 'internal: the built-in edge pool, or the app pool under another name';

-- A pool's slots and longest lease: its row; else 'edge' built in; any other pool is 'app' (its
-- row, or built in).
CREATE FUNCTION idgen_registry_pool_of(pool text) RETURNS idgen_registry_pool
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce(
        (SELECT p FROM @extschema@.idgen_registry_pool p WHERE p.pool = $1),
        CASE WHEN pool = 'edge' THEN @extschema@.idgen_registry_builtin_pool('edge')
             ELSE (SELECT ROW($1, a.snowflake_slots, a.xid12_slots, a.max_lease, a.snowflake_max_lease)::@extschema@.idgen_registry_pool
                   FROM @extschema@.idgen_registry_pool a WHERE a.pool = 'app') END,
        @extschema@.idgen_registry_builtin_pool(pool));
COMMENT ON FUNCTION idgen_registry_pool_of(text) IS 'internal: a pool''s slots and longest lease';

-- The longest lease of a pool's grants of a kind.
CREATE FUNCTION idgen_registry_max_lease(p idgen_registry_pool, kind text) RETURNS interval
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE kind WHEN 'snowflake' THEN coalesce(p.snowflake_max_lease, p.max_lease) ELSE p.max_lease END;
COMMENT ON FUNCTION idgen_registry_max_lease(idgen_registry_pool, text) IS 'internal: the longest lease of a pool''s grants of a kind';

-- The lease a writer gets when it asks for none: 10 minutes, at most the pool's longest.
CREATE FUNCTION idgen_registry_default_lease(p idgen_registry_pool, kind text) RETURNS interval
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN least(interval '10 minutes', @extschema@.idgen_registry_max_lease(p, kind));
COMMENT ON FUNCTION idgen_registry_default_lease(idgen_registry_pool, text) IS 'internal: the lease of a writer that asks for none (10 minutes, at most the pool''s longest)';

-- How long a fence keeps a pool's slots of a kind closed: a grant lost with the old history may
-- be of any pool that shares one of these slots, so the longest lease of all of them.
CREATE FUNCTION idgen_registry_fence_lease(kind text, slots int4range) RETURNS interval
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT max(CASE $1 WHEN 'snowflake' THEN coalesce(p.snowflake_max_lease, p.max_lease) ELSE p.max_lease END) FROM (
                SELECT * FROM @extschema@.idgen_registry_pool
                UNION ALL
                SELECT (@extschema@.idgen_registry_builtin_pool(b)).* FROM unnest(ARRAY['edge', 'app']) b
                WHERE NOT EXISTS (SELECT FROM @extschema@.idgen_registry_pool r WHERE r.pool = b)) p
            WHERE CASE $1 WHEN 'snowflake' THEN p.snowflake_slots ELSE p.xid12_slots END && $2);
COMMENT ON FUNCTION idgen_registry_fence_lease(text, int4range) IS 'internal: the longest lease of every pool that shares these slots';

-- Where the registry has lived: the cluster's system identifier and the WAL timeline, one row
-- each time they change. A new timeline (a standby promoted, a point-in-time recovery) or
-- another system identifier (restored into another cluster) means grants made at the end of
-- the old history may be lost, so the registry is fenced: no pool grants a new window, and no
-- grant that had ended is renewed, until every lost grant of that pool must have ended.
CREATE TABLE idgen_registry_origin (
    system_identifier bigint NOT NULL,
    timeline bigint NOT NULL,
    seen_at timestamptz NOT NULL,
    fenced boolean NOT NULL,
    reason text
);
COMMENT ON TABLE idgen_registry_origin IS 'the clusters and timelines the writer registry has lived on; a change fences it';
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_origin', '');
-- 0.7.0: xid12 stripes (docs/formats.md, "Writer registry: the fence"). The 2^24 machine ids
-- are 64 stripes (machine id mod 64), and the registry grants xid12 machine ids only from the
-- stripe of the origin it is on. A change of origin picks a stripe that no earlier origin's
-- grants can still hold, so a new xid12 writer gets an identity at once: its machine id cannot
-- meet one granted by a lost grant. NULL: any stripe (an origin recorded before 0.7.0).
ALTER TABLE idgen_registry_origin ADD COLUMN xid12_stripe integer CHECK (xid12_stripe >= 0 AND xid12_stripe < 64);

-- The number of xid12 stripes: a machine id's stripe is the machine id mod this.
CREATE FUNCTION idgen_registry_stripes() RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN 64;
COMMENT ON FUNCTION idgen_registry_stripes() IS 'internal: the number of xid12 stripes (a machine id''s stripe is the machine id mod this)';

-- Whether a pool's xid12 machine ids are granted by stripe: when each stripe has at least 64 of
-- them (the built-in pools have millions). A smaller pool grants from all its machine ids, and
-- a failover fences it as it fences Snowflake slots.
CREATE FUNCTION idgen_registry_striped(slots int4range) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN upper(slots) - lower(slots) >= 64 * @extschema@.idgen_registry_stripes();
COMMENT ON FUNCTION idgen_registry_striped(int4range) IS 'internal: whether a pool''s xid12 machine ids are granted by stripe (at least 64 per stripe)';

-- Whether an xid12 machine id belongs to a pool too small to be striped: such a pool's grants
-- may hold any stripe, so a striped pool that shares its machine ids never grants those.
CREATE FUNCTION idgen_registry_unstriped_slot(slot integer) RETURNS boolean
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN EXISTS (SELECT FROM @extschema@.idgen_registry_pool p
                   WHERE p.xid12_slots @> slot AND NOT @extschema@.idgen_registry_striped(p.xid12_slots));
COMMENT ON FUNCTION idgen_registry_unstriped_slot(integer) IS 'internal: whether an xid12 machine id belongs to a pool too small to be striped';

-- The xid12 stripe of the origin the registry is on (NULL: any; an origin from before 0.7.0).
CREATE FUNCTION idgen_registry_current_stripe() RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT o.xid12_stripe FROM @extschema@.idgen_registry_origin o ORDER BY o.seen_at DESC, o.reason IS NULL LIMIT 1);
COMMENT ON FUNCTION idgen_registry_current_stripe() IS 'internal: the xid12 stripe the registry grants machine ids from (NULL: any)';

-- The eras of the registry's history whose grants may be lost: each origin row followed by a
-- change of origin that is fenced (a later row with a reason, not lifted). Rows of one moment
-- are one era (check_origin gives every row that records one change the same moment, and
-- every change a moment after all earlier rows), so no such row ends another. Its grants may run
-- until that change plus a lease: `ended` is when it was noticed; `stripe` the origin's xid12
-- stripe (NULL: any). An origin whose change was lifted, and the current origin, are not here.
CREATE FUNCTION idgen_registry_lost_eras() RETURNS TABLE (stripe integer, ended timestamptz)
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
        SELECT p.xid12_stripe, c.seen_at
        FROM @extschema@.idgen_registry_origin p
        CROSS JOIN LATERAL (SELECT n.seen_at, n.fenced FROM @extschema@.idgen_registry_origin n
                            WHERE n.reason IS NOT NULL AND n.seen_at > p.seen_at
                            ORDER BY n.seen_at LIMIT 1) c
        WHERE c.fenced;
    END;
COMMENT ON FUNCTION idgen_registry_lost_eras() IS 'internal: the earlier origins whose grants may be lost, their xid12 stripe and when their era ended';

-- How long a fence lasts beyond a pool's longest lease: the new primary's clock may be behind
-- the old one's by up to this much.
CREATE FUNCTION idgen_registry_fence_margin() RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN interval '1 minute';
COMMENT ON FUNCTION idgen_registry_fence_margin() IS 'internal: how far the servers'' clocks may differ across a failover';

-- Names of writers, pools and devices are bounded (they are index keys): a longer one is 22001.
CREATE FUNCTION idgen_registry_check_length(what text, name text, max_chars integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF length(name) > max_chars THEN
        RAISE EXCEPTION '% name too long', what USING ERRCODE = 'string_data_right_truncation',
            DETAIL = format('A %s name is at most %s characters; this one has %s.', what, max_chars, length(name));
    END IF;
END
$$;
COMMENT ON FUNCTION idgen_registry_check_length(text, text, integer) IS 'internal: 22001 when a writer, pool or device name is longer than its bound';

-- Edition blocks ---------------------------------------------------------------------------------
-- The places where the portable SQL edition (portable/) differs from this one. THIS FILE IS
-- CONSUMED BY portable/build.py: the edition is this file as it is, but for each block between
-- "-- edition block NAME begin" and "-- edition block NAME end", which the build swaps for the
-- block of that name in portable/src/50_registry_portable.sql (docs/portable.md "One seam").
-- Each block is one small function with its COMMENT; its CREATE line (name, parameters,
-- RETURNS) is the portable one's. What differs: the settings of the native library and the
-- server's WAL and control file, which a managed service may refuse, read here.

-- edition block idgen_registry_owner begin
-- The role the registry trusts besides superusers: the extension's owner.
CREATE FUNCTION idgen_registry_owner() RETURNS oid
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT e.extowner FROM pg_extension e WHERE e.extname = 'pg_idgen');
COMMENT ON FUNCTION idgen_registry_owner() IS 'internal: the extension''s owner, trusted as superusers are';
-- edition block idgen_registry_owner end

-- edition block idgen_registry_epoch begin
-- The Snowflake epoch of the registry's grants: pg_idgen.snowflake_epoch.
CREATE FUNCTION idgen_registry_epoch() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce(nullif(current_setting('pg_idgen.snowflake_epoch', true), ''), '1288834974657')::bigint;
COMMENT ON FUNCTION idgen_registry_epoch() IS 'internal: the Snowflake epoch of the registry''s grants (pg_idgen.snowflake_epoch)';
-- edition block idgen_registry_epoch end

-- edition block idgen_registry_worker_id begin
-- The server's own Snowflake worker id: pg_idgen.worker_id, NULL when unset (-1).
CREATE FUNCTION idgen_registry_worker_id() RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN nullif(coalesce(current_setting('pg_idgen.worker_id', true), '-1')::int, -1);
COMMENT ON FUNCTION idgen_registry_worker_id() IS 'internal: this server''s Snowflake worker id (pg_idgen.worker_id; NULL: unset)';
-- edition block idgen_registry_worker_id end

-- edition block idgen_registry_machine begin
-- The 3 bytes of the server's own xid12 machine id. Calling it first loads the library, which
-- defines the settings.
CREATE FUNCTION idgen_registry_machine() RETURNS bytea
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN @extschema@.xid12_current_machine();
COMMENT ON FUNCTION idgen_registry_machine() IS 'internal: this server''s effective xid12 machine id, as 3 bytes';
-- edition block idgen_registry_machine end

-- edition block idgen_registry_setting begin
-- Where users set a setting of the registry's, for messages: pg_idgen.NAME.
CREATE FUNCTION idgen_registry_setting(setting_name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN 'pg_idgen.' || setting_name;
COMMENT ON FUNCTION idgen_registry_setting(text) IS 'internal: where a setting of the registry is set, for its messages';
-- edition block idgen_registry_setting end

-- edition block idgen_registry_system_identifier begin
-- The cluster's system identifier (docs/formats.md §9).
CREATE FUNCTION idgen_registry_system_identifier() RETURNS bigint
    LANGUAGE sql VOLATILE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT s.system_identifier FROM pg_control_system() s);
COMMENT ON FUNCTION idgen_registry_system_identifier() IS 'internal: the cluster''s system identifier';
-- edition block idgen_registry_system_identifier end

-- edition block idgen_registry_timeline begin
-- The WAL timeline the server writes (docs/formats.md §9).
CREATE FUNCTION idgen_registry_timeline() RETURNS bigint
    LANGUAGE sql VOLATILE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint;
COMMENT ON FUNCTION idgen_registry_timeline() IS 'internal: the current WAL timeline';
-- edition block idgen_registry_timeline end

-- edition block idgen_registry_site_change begin
-- A change of origin the checks of idgen_registry_check_origin do not see (EMPTY: no origin
-- recorded yet): none here, where the system identifier and the timeline are always readable.
CREATE FUNCTION idgen_registry_site_change(empty boolean) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN NULL::text;
COMMENT ON FUNCTION idgen_registry_site_change(boolean) IS 'internal: a change of origin the system identifier and the timeline do not show (none here)';
-- edition block idgen_registry_site_change end

-- edition block idgen_registry_mark_site begin
-- Records where the registry is now, once idgen_registry_check_origin has decided: nothing here.
CREATE FUNCTION idgen_registry_mark_site() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
END
$$;
COMMENT ON FUNCTION idgen_registry_mark_site() IS 'internal: records where the registry is (nothing here)';
-- edition block idgen_registry_mark_site end

-- Roles -----------------------------------------------------------------------------------------
-- The role a registry call is made for: the session's role outside every SECURITY DEFINER
-- function, that is SET ROLE's (the setting role), else the session user. Inside the definer
-- functions current_user is the owner; SET ROLE accepts only a role the session user may
-- become, so no caller can be taken here for a role it could not act as anyway.
CREATE FUNCTION idgen_registry_caller() RETURNS name
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce(nullif(current_setting('role'), 'none'), session_user);
COMMENT ON FUNCTION idgen_registry_caller() IS 'internal: the role a registry call is made for (SET ROLE''s, else the session user)';

-- Trusted roles: superusers and the extension's owner. They need no pool ACL and have no cap.
CREATE FUNCTION idgen_registry_trusted(role_name name) RETURNS boolean
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce((SELECT r.rolsuper OR r.oid = @extschema@.idgen_registry_owner()
                     FROM pg_roles r WHERE r.rolname = role_name), false);
COMMENT ON FUNCTION idgen_registry_trusted(name) IS 'internal: whether a role is a superuser or the extension''s owner';

-- The cap of live grants a role has in a pool: NULL for a trusted role (none); 42501 when the
-- pool's ACL names neither the role nor a role whose privileges it has.
CREATE FUNCTION idgen_registry_cap(pool text, role_name name) RETURNS integer
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cap integer;
BEGIN
    IF @extschema@.idgen_registry_trusted(role_name) THEN
        RETURN NULL;
    END IF;
    SELECT max(a.max_live) INTO cap FROM @extschema@.idgen_registry_pool_role a
        JOIN pg_roles r ON r.oid = a.member
        WHERE a.pool = $1 AND pg_has_role(role_name, r.oid, 'USAGE');
    IF cap IS NULL THEN
        RAISE EXCEPTION 'role % may not take grants in pool %', quote_ident(role_name), quote_literal(pool)
            USING ERRCODE = 'IG002',
                  HINT = 'The superuser or the extension''s owner allows a role a pool with idgen_pool_allow(pool, role, max_live).';
    END IF;
    RETURN cap;
END
$$;
COMMENT ON FUNCTION idgen_registry_cap(text, name) IS 'internal: a role''s cap of live grants in a pool (NULL: trusted); 42501 when it may not use the pool';

-- An interval as elapsed seconds (a day is 86,400 s, a month 30 days, as interval comparison
-- counts them), so that adding it to a moment does not depend on the session's TimeZone.
CREATE FUNCTION idgen_registry_seconds(span interval) RETURNS interval
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN make_interval(secs => extract(epoch FROM span));
COMMENT ON FUNCTION idgen_registry_seconds(interval) IS 'internal: an interval as elapsed seconds, with no day or month part';

-- A writer's lease as elapsed seconds. A lease with a month or year part is refused: a month has
-- no fixed length, and the cap must compare exactly the window granted.
CREATE FUNCTION idgen_registry_lease(lease interval) RETURNS interval
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF date_part('year', lease) <> 0 OR date_part('month', lease) <> 0 THEN
        RAISE EXCEPTION 'invalid lease: %', lease
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A lease is elapsed time; months and years have no fixed length.',
                  HINT = 'Give the lease in days, hours, minutes or seconds.';
    END IF;
    RETURN @extschema@.idgen_registry_seconds(lease);
END
$$;
COMMENT ON FUNCTION idgen_registry_lease(interval) IS 'internal: a lease as elapsed seconds; 22023 for a month or year part';

-- A lease (elapsed seconds) for a pool's grants of a kind: 22023 under 1 second, IG004 (lease
-- too long) over the pool's longest for the kind.
CREATE FUNCTION idgen_registry_check_lease(lease interval, settings idgen_registry_pool, kind text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF lease IS NULL OR lease < interval '1 second' THEN
        RAISE EXCEPTION 'invalid lease: %', coalesce(lease::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'A lease is at least 1 second.';
    END IF;
    IF lease > @extschema@.idgen_registry_seconds(@extschema@.idgen_registry_max_lease(settings, kind)) THEN
        RAISE EXCEPTION 'lease % is longer than pool % allows for % grants', lease, quote_literal(settings.pool), kind
            USING ERRCODE = 'IG004',
                  DETAIL = format('The longest %s lease of pool %s is %s.', kind, quote_literal(settings.pool),
                                  @extschema@.idgen_registry_max_lease(settings, kind)),
                  HINT = 'Ask for a shorter lease, or for none (the pool''s default).';
    END IF;
END
$$;
COMMENT ON FUNCTION idgen_registry_check_lease(interval, idgen_registry_pool, text) IS 'internal: 22023 for a lease under 1 second, IG004 for one longer than the pool allows for the kind';

-- For the DBA (a superuser or the extension's owner): lets MEMBER (a role, or a group role whose
-- members inherit its privileges) take grants in POOL, each role at most MAX_LIVE live grants
-- there, and grants MEMBER EXECUTE on the four functions a writer calls. Called again, it sets
-- the cap anew.
CREATE FUNCTION idgen_pool_allow(pool text, member regrole, max_live integer DEFAULT 16) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pool IS NULL OR pool = '' OR pool = 'reserved' THEN
        RAISE EXCEPTION 'invalid pool: %', coalesce(quote_literal(pool), 'NULL') USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM @extschema@.idgen_registry_check_length('pool', pool, 63);
    IF member IS NULL THEN
        RAISE EXCEPTION 'a pool''s member needs a role' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF max_live IS NULL OR max_live < 1 THEN
        RAISE EXCEPTION 'invalid cap of live grants: %', coalesce(max_live::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'A role may hold at least 1 live grant in a pool it may use.';
    END IF;
    INSERT INTO @extschema@.idgen_registry_pool_role AS a (pool, member, max_live) VALUES ($1, $2, $3)
        ON CONFLICT ON CONSTRAINT idgen_registry_pool_role_pkey DO UPDATE SET max_live = excluded.max_live;
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$s.idgen_acquire(text, text, interval, text), '
                   '%1$s.idgen_renew(bigint, bigint, interval), %1$s.idgen_release(bigint, bigint, timestamptz), '
                   '%1$s.idgen_report(bigint, bigint, text, bigint, timestamptz, bigint) TO %2$s', '@extschema@', member);
END
$$;
COMMENT ON FUNCTION idgen_pool_allow(text, regrole, integer) IS 'lets a role take grants in a pool, at most max_live live grants per role there, and grants it EXECUTE on the writer functions';

-- For the DBA: POOL no longer admits MEMBER. A role left in no pool loses EXECUTE on the writer
-- functions. Its live grants run to their end: it can no longer renew them in that pool.
CREATE FUNCTION idgen_pool_disallow(pool text, member regrole) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM @extschema@.idgen_registry_pool_role a WHERE a.pool = $1 AND a.member = $2;
    IF NOT EXISTS (SELECT FROM @extschema@.idgen_registry_pool_role a WHERE a.member = $2) THEN
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %1$s.idgen_acquire(text, text, interval, text), '
                       '%1$s.idgen_renew(bigint, bigint, interval), %1$s.idgen_release(bigint, bigint, timestamptz), '
                       '%1$s.idgen_report(bigint, bigint, text, bigint, timestamptz, bigint) FROM %2$s', '@extschema@', member);
    END IF;
END
$$;
COMMENT ON FUNCTION idgen_pool_disallow(text, regrole) IS 'a role may no longer take grants in a pool; in no pool, it loses EXECUTE on the writer functions';

-- Until when the fence closes a pool's slots of a kind (NULL: not fenced). Snowflake: the latest
-- fenced change of origin plus the longest lease of the pools that share the slots, plus the
-- margin. xid12: the same, counted only over the earlier origins of the current stripe (or of
-- any stripe, NULL); the current origin picked its stripe among those none of them can hold.
CREATE FUNCTION idgen_registry_fence_until(kind text, slots int4range) RETURNS timestamptz
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT max(e.ended) + @extschema@.idgen_registry_seconds(@extschema@.idgen_registry_fence_lease($1, $2))
                   + @extschema@.idgen_registry_fence_margin()
            FROM @extschema@.idgen_registry_lost_eras() e
            WHERE $1 = 'snowflake' OR NOT @extschema@.idgen_registry_striped($2) OR e.stripe IS NULL
               OR e.stripe IS NOT DISTINCT FROM (SELECT @extschema@.idgen_registry_current_stripe())
               OR (SELECT @extschema@.idgen_registry_current_stripe()) IS NULL);
COMMENT ON FUNCTION idgen_registry_fence_until(text, int4range) IS 'internal: until when a failover''s fence closes these slots of a kind (NULL: open)';

-- The xid12 stripe of an origin that begins now: one that no earlier origin's grants can still
-- hold (they may run until that origin's era ended plus the longest xid12 lease of all pools plus
-- the margin), at random among those: two histories that split from one (two standbys of one
-- primary promoted one after the other with no shared archive, so with one timeline) pick the
-- same stripe only by chance. When every stripe may still be held: the one freed first (the
-- fence then holds its xid12 grants until that moment).
CREATE FUNCTION idgen_registry_pick_stripe(sysid bigint, tli bigint) RETURNS integer
    LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (WITH held AS (
                SELECT e.stripe, max(e.ended) + @extschema@.idgen_registry_seconds(@extschema@.idgen_registry_fence_lease('xid12', int4range(0, 16777216)))
                                 + @extschema@.idgen_registry_fence_margin() AS until
                FROM @extschema@.idgen_registry_lost_eras() e GROUP BY e.stripe),
            stripes AS (
                SELECT st, greatest((SELECT h.until FROM held h WHERE h.stripe = st),
                                    (SELECT h.until FROM held h WHERE h.stripe IS NULL)) AS until
                FROM generate_series(0, @extschema@.idgen_registry_stripes() - 1) st),
            free AS (
                SELECT x.st FROM stripes x WHERE x.until IS NULL OR x.until <= clock_timestamp())
            SELECT coalesce(
                (SELECT f.st FROM free f ORDER BY random() LIMIT 1),
                (SELECT x.st FROM stripes x ORDER BY x.until, x.st LIMIT 1)));
COMMENT ON FUNCTION idgen_registry_pick_stripe(bigint, bigint) IS 'internal: the xid12 stripe of an origin that begins now (one no earlier origin''s grants can hold, if any)';

-- When the registry first noticed a new cluster or timeline, in unix milliseconds. A sequence,
-- so that it survives the rollback of the statement that noticed (an acquire refused by the
-- fence it just found): otherwise every refused call would start the fence again. Not dumped: a
-- cluster restored from a dump notices afresh.
CREATE SEQUENCE idgen_registry_noticed_ms MINVALUE 0 START 0;

-- Records this cluster and timeline when they are new, fencing the registry when it had a
-- history elsewhere. Returns the moment the latest fence began, if any. The install script (and
-- the update to 0.7.0) calls it, so the origin is known before the first grant: grants lost
-- with the old history are invisible, so every change of origin fences, whatever grants are to
-- be seen. A row without a reason is where the registry began, with nothing before it: any
-- other row beside it came later from elsewhere (a dump restored into a fresh CREATE EXTENSION,
-- its rows copied in after the install's), and fences too: the dumped registry may have made
-- grants after the dump. Only the owner writes this table, so no writer moves the fence.
CREATE FUNCTION idgen_registry_check_origin() RETURNS timestamptz
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sysid bigint := @extschema@.idgen_registry_system_identifier();
    tli bigint := @extschema@.idgen_registry_timeline();
    last record;
    prior record;
    why text;
    noticed bigint;
    added tid;
    locked boolean := false;
    empty boolean;
BEGIN
    LOOP
        why := NULL;
        -- The latest row (of two at one moment, the one that records a change).
        SELECT o.ctid, o.system_identifier, o.timeline, o.seen_at, o.reason, o.xid12_stripe INTO last
            FROM @extschema@.idgen_registry_origin o
            ORDER BY o.seen_at DESC, o.reason IS NULL LIMIT 1;
        empty := NOT FOUND;
        IF empty THEN
            why := 'the registry begins here';
        ELSIF last.system_identifier <> sysid THEN
            why := format('restored into another cluster (system identifier %s, was %s)', sysid, last.system_identifier);
        ELSIF last.timeline <> tli THEN
            why := format('a new timeline %s (was %s): a promoted standby or a point-in-time recovery', tli, last.timeline);
        ELSIF last.reason IS NULL THEN
            -- Where the registry began here: any other row is a history restored after it.
            SELECT o.system_identifier, o.timeline INTO prior FROM @extschema@.idgen_registry_origin o
                WHERE o.ctid <> last.ctid
                ORDER BY o.system_identifier = sysid, o.seen_at DESC LIMIT 1;
            IF FOUND THEN
                why := CASE WHEN prior.system_identifier <> sysid THEN
                                format('restored into another cluster (system identifier %s, was %s)', sysid, prior.system_identifier)
                            ELSE format('restored from a dump into a new install in this cluster (system identifier %s, timeline %s; the dump''s last %s)',
                                        sysid, tli, prior.timeline) END;
            END IF;
        END IF;
        why := coalesce(why, @extschema@.idgen_registry_site_change(empty));
        EXIT WHEN why IS NULL OR locked;
        -- A change to record: one call at a time records it (the first calls after a promotion
        -- come together), and looks again once it may (another may have recorded it meanwhile).
        -- Only the owner can lock this table: no writer can hold it.
        LOCK TABLE @extschema@.idgen_registry_origin IN SHARE ROW EXCLUSIVE MODE;
        locked := true;
    END LOOP;
    PERFORM @extschema@.idgen_registry_mark_site();
    IF empty THEN
        -- No history: the registry begins here, unfenced.
        INSERT INTO @extschema@.idgen_registry_origin (system_identifier, timeline, seen_at, fenced, reason, xid12_stripe)
            VALUES (sysid, tli, clock_timestamp(), false, NULL, @extschema@.idgen_registry_pick_stripe(sysid, tli));
        RETURN NULL;
    ELSIF why IS NOT NULL THEN
        -- The first notice of this change, unless an earlier statement noticed it already (its
        -- row rolled back with it, or not yet visible to this transaction's snapshot: then both
        -- rows have one moment, one era). The moment is after every earlier row's, whatever the
        -- clocks of the servers that wrote them.
        noticed := (SELECT n.last_value FROM @extschema@.idgen_registry_noticed_ms n);
        IF noticed <= floor(extract(epoch FROM last.seen_at) * 1000) THEN
            noticed := setval('@extschema@.idgen_registry_noticed_ms',
                              greatest(floor(extract(epoch FROM clock_timestamp()) * 1000),
                                       floor(extract(epoch FROM last.seen_at) * 1000) + 1)::bigint);
        END IF;
        INSERT INTO @extschema@.idgen_registry_origin (system_identifier, timeline, seen_at, fenced, reason)
            VALUES (sysid, tli, 'epoch'::timestamptz + noticed * interval '1 millisecond', true, why)
            RETURNING ctid INTO added;
        -- Its stripe, once the row is there: the earlier origins' eras end with it.
        UPDATE @extschema@.idgen_registry_origin o SET xid12_stripe = @extschema@.idgen_registry_pick_stripe(sysid, tli)
            WHERE o.ctid = added;
    ELSIF last.xid12_stripe IS NULL THEN
        -- An origin recorded before 0.7.0: its grants so far are visible here, so from now on it
        -- grants from one stripe (a lost grant can only be made after this is written; grants
        -- of other stripes are not renewed from now on: idgen_renew).
        UPDATE @extschema@.idgen_registry_origin o SET xid12_stripe = @extschema@.idgen_registry_pick_stripe(sysid, tli)
            WHERE o.ctid = last.ctid;
    END IF;
    RETURN (SELECT o.seen_at FROM @extschema@.idgen_registry_origin o WHERE o.fenced ORDER BY o.seen_at DESC LIMIT 1);
END
$$;
COMMENT ON FUNCTION idgen_registry_check_origin() IS 'internal: notes a new cluster or timeline, or a history restored into a new install, and fences the registry then';

-- Lifts the latest fence, for an operator who knows that no grant was lost (the promoted
-- standby was synchronous for every grant).
CREATE FUNCTION idgen_registry_lift_fence() RETURNS void
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
        SELECT @extschema@.idgen_registry_check_origin();
        UPDATE @extschema@.idgen_registry_origin SET fenced = false, reason = reason || ' (fence lifted at ' || clock_timestamp() || ')'
        WHERE fenced;
    END;
COMMENT ON FUNCTION idgen_registry_lift_fence() IS 'ends the fence that a failover or restore put on the writer registry, when no grant can have been lost';

-- Id-time of a moment (rounded down) and the moment of an id-time, for a kind.
CREATE FUNCTION idgen_registry_id_time(kind text, epoch_ms bigint, at timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE kind WHEN 'snowflake' THEN floor(extract(epoch FROM at) * 1000)::int8 - epoch_ms
                     ELSE floor(extract(epoch FROM at))::int8 END;
CREATE FUNCTION idgen_registry_moment(kind text, epoch_ms bigint, t bigint) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE kind WHEN 'snowflake' THEN 'epoch'::timestamptz + (t + epoch_ms) * interval '1 millisecond'
                     ELSE 'epoch'::timestamptz + t * interval '1 second' END;
COMMENT ON FUNCTION idgen_registry_id_time(text, bigint, timestamptz) IS 'internal: the id-time of a moment';
COMMENT ON FUNCTION idgen_registry_moment(text, bigint, bigint) IS 'internal: the moment of an id-time';

-- Every grant and reservation, live or ended, in timestamps. A reservation's hi is infinity.
-- db_role: the database role that made it (NULL before 0.7.0). span: the packed window, which
-- idgen_writer_of and idgen_verify look ids up in (an index scan). The view is the registry's
-- read interface: it runs with its owner's rights, shows no token, and is readable by the roles
-- a DBA grants SELECT on it.
CREATE VIEW idgen_grants AS
SELECT g.grant_id, g.writer, g.kind, g.pool, g.slot,
       idgen_registry_moment(g.kind, g.epoch_ms, g.lo) AS lo,
       CASE WHEN g.reserved THEN 'infinity'::timestamptz
            ELSE idgen_registry_moment(g.kind, g.epoch_ms, g.hi) END AS hi,
       g.granted_at, g.renewed_at, g.released_at, g.reserved, g.epoch_ms, g.lease,
       g.db_role, g.span
FROM idgen_registry_grant g;
COMMENT ON VIEW idgen_grants IS 'every writer grant and reservation, live or ended, with the database role that made it';

-- What acquire, renew and release return: the grant as a writer needs it. lo_t, hi_t and
-- server_t (0.7.0) are the window and the server's time as id-time, in the kind's own unit
-- (Snowflake: milliseconds since epoch_ms; xid12: unix seconds), so that no client converts a
-- timestamp (docs/formats.md, "Writer registry: the grant").
CREATE TYPE idgen_grant AS (
    grant_id bigint, token bigint, kind text, slot integer,
    lo timestamptz, hi timestamptz, epoch_ms bigint, server_time timestamptz
);
ALTER TYPE idgen_grant ADD ATTRIBUTE lo_t bigint, ADD ATTRIBUTE hi_t bigint, ADD ATTRIBUTE server_t bigint;

CREATE FUNCTION idgen_registry_row(g idgen_registry_grant, token bigint, server_time timestamptz)
    RETURNS idgen_grant
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN ROW(g.grant_id, token, g.kind, g.slot,
               @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.lo),
               @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.hi),
               g.epoch_ms, server_time, g.lo, g.hi,
               @extschema@.idgen_registry_id_time(g.kind, g.epoch_ms, server_time))::@extschema@.idgen_grant;
COMMENT ON FUNCTION idgen_registry_row(idgen_registry_grant, bigint, timestamptz) IS 'internal: a grant as acquire, renew and release return it';

-- The server's own ids for a kind: its worker id (NULL, unset: none) or its effective xid12
-- machine id (read first: natively, that loads the library, which defines the settings).
CREATE FUNCTION idgen_registry_own_slot(kind text) RETURNS integer
    LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT CASE kind
                WHEN 'snowflake' THEN @extschema@.idgen_registry_worker_id()
                ELSE (get_byte(m, 0) << 16) | (get_byte(m, 1) << 8) | get_byte(m, 2) END
            FROM (SELECT @extschema@.idgen_registry_machine() AS m) s);
COMMENT ON FUNCTION idgen_registry_own_slot(text) IS 'internal: the server''s own worker id or machine id';

-- Reserves SLOT of KIND for WRITER from the end of its last window on (from 0 when it never had
-- one) to the end of its id-time. With takeover (the server's own slot, and Citus nodes' slots,
-- which they already use), a slot held by a live grant is reserved after that grant's window
-- with a WARNING, and a slot reserved already stays as it is; without, both are errors (a
-- reservation by the same writer is returned).
CREATE FUNCTION idgen_registry_reserve(kind text, slot integer, writer text, takeover boolean)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    now_t bigint;
    next_free bigint;
    holder record;
    id bigint;
    epoch bigint;
BEGIN
    IF kind IS NULL OR kind NOT IN ('snowflake', 'xid12') THEN
        RAISE EXCEPTION 'invalid writer kind: %', coalesce(quote_literal(kind), 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The kinds are ''snowflake'' and ''xid12''.';
    END IF;
    IF slot IS NULL OR slot < 0 OR slot >= (CASE kind WHEN 'snowflake' THEN 1024 ELSE 16777216 END) THEN
        RAISE EXCEPTION '% slot % is out of range', kind, coalesce(slot::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = CASE kind WHEN 'snowflake' THEN 'Snowflake worker ids are 0 .. 1023.'
                                     ELSE 'xid12 machine ids are 0 .. 16777215.' END;
    END IF;
    IF writer IS NULL OR writer = '' THEN
        RAISE EXCEPTION 'a writer needs a name' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM @extschema@.idgen_registry_check_length('writer', writer, 256);
    epoch := CASE kind WHEN 'snowflake' THEN
        @extschema@.idgen_registry_epoch() END;
    now_t := @extschema@.idgen_registry_id_time(kind, epoch, clock_timestamp());

    INSERT INTO @extschema@.idgen_registry_slot AS s (kind, slot, next_free) VALUES ($1, $2, 0)
        ON CONFLICT DO NOTHING;
    SELECT s.next_free INTO next_free FROM @extschema@.idgen_registry_slot s
        WHERE s.kind = $1 AND s.slot = $2 FOR UPDATE;
    -- The grant or reservation whose window ends where the slot's next one may start.
    SELECT g.grant_id, g.writer INTO holder FROM @extschema@.idgen_registry_grant g
        WHERE g.kind = $1 AND g.slot = $2 AND g.hi = next_free ORDER BY g.grant_id DESC LIMIT 1;
    IF next_free = @extschema@.idgen_registry_time_end(kind) THEN
        IF holder.writer = $3 OR takeover THEN
            RETURN holder.grant_id;
        END IF;
        RAISE EXCEPTION '% slot % is already reserved by writer %', kind, slot, quote_literal(holder.writer)
            USING ERRCODE = 'duplicate_object', DETAIL = format('Reservation %s.', holder.grant_id);
    END IF;
    IF next_free > now_t THEN
        IF NOT takeover THEN
            RAISE EXCEPTION '% slot % is granted to writer % until %', kind, slot, quote_literal(holder.writer),
                    @extschema@.idgen_registry_moment(kind, epoch, next_free)
                USING ERRCODE = 'object_in_use',
                      HINT = 'Reserve another slot, or this one once that grant has ended.';
        END IF;
        RAISE WARNING '% slot % is granted to writer % until %; it is reserved for % from then on',
                kind, slot, quote_literal(holder.writer), @extschema@.idgen_registry_moment(kind, epoch, next_free),
                quote_literal(writer)
            USING DETAIL = 'Ids that both make before then may be equal.';
    END IF;
    INSERT INTO @extschema@.idgen_registry_grant AS g
            (kind, slot, pool, writer, reserved, lo, hi, epoch_ms, granted_at, db_role)
        VALUES ($1, $2, 'reserved', $3, true, next_free, @extschema@.idgen_registry_time_end(kind), epoch,
                clock_timestamp(), current_user)
        RETURNING g.grant_id INTO id;
    UPDATE @extschema@.idgen_registry_slot s SET next_free = @extschema@.idgen_registry_time_end($1)
        WHERE s.kind = $1 AND s.slot = $2;
    RETURN id;
END
$$;
COMMENT ON FUNCTION idgen_registry_reserve(text, integer, text, boolean) IS 'internal: reserves a slot (idgen_reserve, and the server''s own slots)';

CREATE FUNCTION idgen_reserve(kind text, slot integer, writer text) RETURNS bigint
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    RETURN @extschema@.idgen_registry_reserve(kind, slot, writer, false);
COMMENT ON FUNCTION idgen_reserve(text, integer, text) IS 'takes a Snowflake worker id or xid12 machine id for good, for a writer that assigns its own ids; returns the reservation''s grant_id';

-- Grants a free slot of KIND to WRITER for LEASE.
-- A grant the writer was told of must survive a crash: whatever the caller's
-- synchronous_commit, the transaction commits durably (and waits for synchronous standbys when
-- there are).
CREATE FUNCTION idgen_registry_durable() RETURNS void
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
        SELECT set_config('synchronous_commit', 'on', true)
        WHERE current_setting('synchronous_commit') IN ('off', 'local', 'remote_write');
    END;
COMMENT ON FUNCTION idgen_registry_durable() IS 'internal: makes the current transaction commit durably';

CREATE FUNCTION idgen_acquire(kind text, writer text, lease interval DEFAULT NULL, pool text DEFAULT 'app')
    RETURNS SETOF idgen_grant
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 1 SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    server_time CONSTANT timestamptz := clock_timestamp();
    -- A writer whose clock is up to 5 s behind the server's can start at once: its window
    -- starts up to 5 s back, never before the end of the slot's last window.
    backdate CONSTANT interval := '5 seconds';
    settings @extschema@.idgen_registry_pool;
    slots int4range;
    fence_until timestamptz;
    stripe integer;
    own integer;
    epoch bigint;
    now_t bigint;
    end_t bigint;
    candidate integer;
    next_free bigint;
    lo bigint;
    token bigint;
    g @extschema@.idgen_registry_grant;
    tries integer := 0;
    held record;
    caller CONSTANT name := @extschema@.idgen_registry_caller();
    cap integer;
    live bigint;
    top record;
BEGIN
    IF kind IS NULL OR kind NOT IN ('snowflake', 'xid12') THEN
        RAISE EXCEPTION 'invalid writer kind: %', coalesce(quote_literal(kind), 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The kinds are ''snowflake'' and ''xid12''.';
    END IF;
    IF pool IS NULL OR pool = '' OR pool = 'reserved' THEN
        RAISE EXCEPTION 'invalid pool: %', coalesce(quote_literal(pool), 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM @extschema@.idgen_registry_check_length('pool', pool, 63);
    -- The pool's ACL: 42501 unless the caller may take grants here.
    cap := @extschema@.idgen_registry_cap(pool, caller);
    settings := @extschema@.idgen_registry_pool_of(pool);
    slots := CASE kind WHEN 'snowflake' THEN settings.snowflake_slots ELSE settings.xid12_slots END;
    -- No lease asked for: the pool's default for the kind.
    lease := @extschema@.idgen_registry_lease(coalesce(lease, @extschema@.idgen_registry_default_lease(settings, kind)));
    PERFORM @extschema@.idgen_registry_check_lease(lease, settings, kind);
    IF writer IS NULL OR writer = '' THEN
        RAISE EXCEPTION 'a writer needs a name' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM @extschema@.idgen_registry_check_length('writer', writer, 256);
    -- After a failover or a restore, grants made at the end of the old history may be lost:
    -- nothing new is granted in slots they may hold until they must have ended. xid12 machine
    -- ids come from the current origin's stripe, which no lost grant holds (unless every stripe
    -- may be held); Snowflake worker ids are too few to stripe.
    PERFORM @extschema@.idgen_registry_check_origin();
    fence_until := @extschema@.idgen_registry_fence_until(kind, slots);
    IF fence_until > server_time THEN
        RAISE EXCEPTION 'the writer registry grants no % slot in pool % until %', kind, quote_literal(pool),
                to_char(fence_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            USING ERRCODE = 'IG001',
                  DETAIL = format('The registry found itself on %s; grants made on the old history just before may be lost, and they end by then (the longest %s lease of the pools that share this pool''s slots, %s, and %s for the servers'' clocks).',
                      (SELECT o.reason FROM @extschema@.idgen_registry_origin o WHERE o.fenced ORDER BY o.seen_at DESC LIMIT 1),
                      kind, @extschema@.idgen_registry_fence_lease(kind, slots), @extschema@.idgen_registry_fence_margin()),
                  HINT = 'Writers with live grants renew them meanwhile. If no grant can have been lost (the promoted standby was synchronous), SELECT idgen_registry_lift_fence().';
    END IF;
    stripe := CASE WHEN kind = 'xid12' AND @extschema@.idgen_registry_striped(slots) THEN @extschema@.idgen_registry_current_stripe() END;
    PERFORM @extschema@.idgen_registry_durable();
    -- The server's own slot is reserved before anything is granted.
    own := @extschema@.idgen_registry_own_slot(kind);
    IF own IS NOT NULL AND NOT EXISTS (SELECT FROM @extschema@.idgen_registry_slot s
            WHERE s.kind = $1 AND s.slot = own AND s.next_free = @extschema@.idgen_registry_time_end($1)) THEN
        PERFORM @extschema@.idgen_registry_reserve(kind, own,
            CASE kind WHEN 'snowflake' THEN 'this server (' || @extschema@.idgen_registry_setting('worker_id') || ')'
                      ELSE 'this server (its xid12 machine id)' END, true);
    END IF;
    epoch := CASE kind WHEN 'snowflake' THEN
        @extschema@.idgen_registry_epoch() END;
    -- Snowflake windows are kept in milliseconds since the epoch: one epoch for the registry.
    IF kind = 'snowflake' AND epoch <> (SELECT r.epoch_ms FROM @extschema@.idgen_registry_grant r
                                        WHERE r.kind = 'snowflake' ORDER BY r.grant_id DESC LIMIT 1) THEN
        RAISE EXCEPTION 'the registry''s Snowflake grants use the epoch %, and % is now %',
                (SELECT r.epoch_ms FROM @extschema@.idgen_registry_grant r WHERE r.kind = 'snowflake' ORDER BY r.grant_id DESC LIMIT 1),
                @extschema@.idgen_registry_setting('snowflake_epoch'), epoch
            USING ERRCODE = 'IG005',
                  HINT = format('Set %s back: ids of two epochs cannot be told apart.', @extschema@.idgen_registry_setting('snowflake_epoch'));
    END IF;
    now_t := @extschema@.idgen_registry_id_time(kind, epoch, server_time);
    end_t := @extschema@.idgen_registry_id_time(kind, epoch, server_time + lease);
    IF end_t >= @extschema@.idgen_registry_time_end(kind) THEN
        RAISE EXCEPTION 'a % window ending at % is beyond the last id-time of its ids', kind, server_time + lease
            USING ERRCODE = 'datetime_field_overflow';
    END IF;

    -- A role's live grants in a pool are capped: one writer cannot hold a pool's every slot. The
    -- quota row's lock makes the role's concurrent acquires in the pool count one after another.
    IF cap IS NOT NULL THEN
        INSERT INTO @extschema@.idgen_registry_quota AS q (pool, db_role) VALUES ($4, caller) ON CONFLICT DO NOTHING;
        PERFORM FROM @extschema@.idgen_registry_quota q WHERE q.pool = $4 AND q.db_role = caller FOR UPDATE;
        SELECT count(*) INTO live FROM @extschema@.idgen_registry_grant r
            WHERE r.pool = $4 AND r.db_role = caller AND r.released_at IS NULL
              AND coalesce(r.renewed_at, r.granted_at) > server_time - @extschema@.idgen_registry_seconds(settings.max_lease)
              AND @extschema@.idgen_registry_moment(r.kind, r.epoch_ms, r.hi) > server_time;
        IF live >= cap THEN
            RAISE EXCEPTION 'role % holds % live grants in pool %, its cap', quote_ident(caller), live, quote_literal(pool)
                USING ERRCODE = 'IG003',
                      HINT = 'Release grants that are not in use, or wait for one to end; the DBA sets the cap with idgen_pool_allow.';
        END IF;
    END IF;

    -- Candidates, among the pool's slots: free slots whose last window ended at least 5 s ago
    -- first, then the others that are free now, in random order (concurrent acquires rarely
    -- want the same slot). xid12: slots the registry used before, then new random ones
    -- (README: the registry reuses its own machine ids, so it touches as few as it can of the
    -- 2^24 that an unregistered writer's md5(host name) might give).
    LOOP
        tries := tries + 1;
        candidate := NULL;
        IF kind = 'snowflake' THEN
            SELECT c.slot INTO candidate
            FROM generate_series(lower(slots), upper(slots) - 1) c(slot)
            LEFT JOIN @extschema@.idgen_registry_slot s ON s.kind = 'snowflake' AND s.slot = c.slot
            WHERE coalesce(s.next_free, 0) <= now_t
            ORDER BY coalesce(s.next_free, 0) <= now_t - 5000 DESC, random()
            LIMIT 1;
        ELSIF tries <= 20 THEN
            SELECT s.slot INTO candidate FROM @extschema@.idgen_registry_slot s
            WHERE s.kind = 'xid12' AND s.slot <@ slots AND s.next_free <= now_t
              AND (stripe IS NULL OR s.slot % @extschema@.idgen_registry_stripes() = stripe)
            ORDER BY s.next_free <= now_t - 5 DESC, random() LIMIT 1;
        END IF;
        IF tries > 2000 THEN
            RAISE EXCEPTION 'no free % slot found after % tries', kind, tries - 1
                USING ERRCODE = 'lock_not_available', HINT = 'Try again.';
        END IF;
        IF candidate IS NULL AND kind = 'xid12' AND tries <= 200 THEN
            candidate := lower(slots) + floor(random() * (upper(slots) - lower(slots)))::integer;
            IF stripe IS NOT NULL THEN
                -- The machine id of the stripe just below (or, below the pool's first, above).
                candidate := candidate - (candidate - stripe) % @extschema@.idgen_registry_stripes();
                IF candidate < lower(slots) THEN
                    candidate := candidate + @extschema@.idgen_registry_stripes();
                END IF;
                CONTINUE WHEN NOT candidate <@ slots;
            END IF;
        END IF;
        IF candidate IS NULL THEN
            SELECT count(*) AS n, count(*) FILTER (WHERE s.next_free = @extschema@.idgen_registry_time_end($1)) AS reserved,
                   min(s.next_free) FILTER (WHERE s.next_free < @extschema@.idgen_registry_time_end($1)) AS first_free
              INTO held
              FROM @extschema@.idgen_registry_slot s WHERE s.kind = $1 AND s.slot <@ slots AND s.next_free > now_t;
            -- Who holds the most of them.
            SELECT coalesce(quote_ident(r.db_role), 'a role before 0.7.0') AS db_role, count(*) AS n INTO top
              FROM @extschema@.idgen_registry_grant r
             WHERE r.kind = $1 AND r.slot <@ slots AND NOT r.reserved AND r.hi > now_t
             GROUP BY r.db_role ORDER BY count(*) DESC, r.db_role LIMIT 1;
            RAISE EXCEPTION 'every % slot of pool % is held', kind, quote_literal(pool)
                USING ERRCODE = 'configuration_limit_exceeded',
                      DETAIL = format('%s of the pool''s %s slots (%s) are held: %s by grants, %s reserved.%s%s', held.n,
                          upper(slots) - lower(slots), slots, held.n - held.reserved, held.reserved,
                          CASE WHEN held.first_free IS NOT NULL THEN format(' The first grant ends at %s.',
                              @extschema@.idgen_registry_moment(kind, epoch, held.first_free)) ELSE '' END,
                          CASE WHEN top.n IS NOT NULL THEN format(' Role %s holds the most: %s.', top.db_role, top.n) ELSE '' END),
                      HINT = 'Release grants that are not in use, wait for one to end, give the pool more slots (idgen_registry_pool), or use xid12 ids.';
        END IF;
        IF candidate = own THEN
            CONTINUE;
        END IF;
        -- A striped pool leaves alone the machine ids it shares with a pool too small to be.
        CONTINUE WHEN stripe IS NOT NULL AND @extschema@.idgen_registry_unstriped_slot(candidate);

        -- Take the slot's row lock. A slot nobody had has no row yet: insert it. A concurrent
        -- acquire that locked or inserted it first makes this one wait; if it took the slot,
        -- next_free is then in the future and this one tries another.
        next_free := NULL;
        SELECT s.next_free INTO next_free FROM @extschema@.idgen_registry_slot s
            WHERE s.kind = $1 AND s.slot = candidate FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO @extschema@.idgen_registry_slot AS s (kind, slot, next_free) VALUES ($1, candidate, 0)
                ON CONFLICT DO NOTHING RETURNING s.next_free INTO next_free;
        END IF;
        CONTINUE WHEN next_free IS NULL OR next_free > now_t;

        lo := greatest(@extschema@.idgen_registry_id_time(kind, epoch, server_time - backdate), next_free, 0);
        token := ('x' || encode(substr(uuid_send(gen_random_uuid()), 1, 4) || substr(uuid_send(gen_random_uuid()), 1, 4), 'hex'))::bit(64)::bigint;
        INSERT INTO @extschema@.idgen_registry_grant AS r
                (kind, slot, pool, writer, reserved, token_sha256, lo, hi, lease, epoch_ms, granted_at, db_role)
            VALUES ($1, candidate, $4, $2, false, sha256(int8send(token)), lo, end_t, lease, epoch, server_time, caller)
            RETURNING r.* INTO g;
        UPDATE @extschema@.idgen_registry_slot s SET next_free = end_t WHERE s.kind = $1 AND s.slot = candidate;
        RETURN NEXT @extschema@.idgen_registry_row(g, token, server_time);
        RETURN;
    END LOOP;
END
$$;
COMMENT ON FUNCTION idgen_acquire(text, text, interval, text) IS 'grants a free Snowflake worker id or xid12 machine id to a writer for a window of id-time';

-- The grant GRANT_ID, locked, after its token is checked.
CREATE FUNCTION idgen_registry_holder(grant_id bigint, token bigint) RETURNS idgen_registry_grant
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g @extschema@.idgen_registry_grant;
    caller CONSTANT name := @extschema@.idgen_registry_caller();
BEGIN
    SELECT * INTO g FROM @extschema@.idgen_registry_grant r WHERE r.grant_id = $1 FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'grant % does not exist', coalesce($1::text, 'NULL') USING ERRCODE = 'undefined_object';
    END IF;
    IF g.reserved THEN
        RAISE EXCEPTION 'grant % is a reservation, which has no token', $1
            USING ERRCODE = 'insufficient_privilege', HINT = 'A reservation is for good: it is not renewed or released.';
    END IF;
    IF token IS NULL OR g.token_sha256 <> sha256(int8send(token)) THEN
        RAISE EXCEPTION 'wrong token for grant %', $1 USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- A grant is its role's: another role holding its token (stolen, or copied with a device's
    -- file) cannot use it, unless it is trusted.
    IF g.db_role IS NOT NULL AND g.db_role <> caller AND NOT @extschema@.idgen_registry_trusted(caller) THEN
        RAISE EXCEPTION 'grant % belongs to role %', $1, quote_ident(g.db_role)
            USING ERRCODE = 'insufficient_privilege', HINT = 'Each role acquires its own grants.';
    END IF;
    RETURN g;
END
$$;
COMMENT ON FUNCTION idgen_registry_holder(bigint, bigint) IS 'internal: a grant, locked, once its token is checked';

CREATE FUNCTION idgen_renew(grant_id bigint, token bigint, lease interval DEFAULT NULL)
    RETURNS SETOF idgen_grant
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 1 SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    server_time CONSTANT timestamptz := clock_timestamp();
    g @extschema@.idgen_registry_grant := @extschema@.idgen_registry_holder(grant_id, token);
    next_free bigint;
    new_hi bigint;
    settings @extschema@.idgen_registry_pool := @extschema@.idgen_registry_pool_of(g.pool);
    fence_since timestamptz := @extschema@.idgen_registry_check_origin();
    stripe integer;
BEGIN
    -- Still admitted to the grant's pool (42501 once the DBA took the role out of it).
    PERFORM @extschema@.idgen_registry_cap(g.pool, @extschema@.idgen_registry_caller());
    -- No lease asked for: the grant's own, at most what the pool allows now (a DBA may have
    -- shortened it since).
    lease := coalesce(@extschema@.idgen_registry_lease(lease),
                      least(g.lease, @extschema@.idgen_registry_seconds(@extschema@.idgen_registry_max_lease(settings, g.kind))));
    PERFORM @extschema@.idgen_registry_check_lease(lease, settings, g.kind);
    IF g.released_at IS NOT NULL THEN
        RAISE EXCEPTION 'grant lost: grant % was released at %', g.grant_id, g.released_at
            USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Acquire a new grant.';
    END IF;
    -- A grant that had ended when the registry found itself on a new timeline or cluster may
    -- have been followed there by a grant that is lost now: it is not continued.
    IF g.granted_at < fence_since AND @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.hi) <= fence_since THEN
        RAISE EXCEPTION 'grant lost: grant % had ended when the registry was fenced at %', g.grant_id, fence_since
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = (SELECT o.reason FROM @extschema@.idgen_registry_origin o WHERE o.fenced ORDER BY o.seen_at DESC LIMIT 1),
                  HINT = 'Acquire a new grant; make no id after the old window.';
    END IF;
    -- An xid12 grant renews only in the stripe the registry grants from now: after a change of
    -- origin, the old stripe is held only as long as grants made before the change can last,
    -- so none may run on past that (its writer acquires anew, at once).
    stripe := @extschema@.idgen_registry_current_stripe();
    IF g.kind = 'xid12' AND stripe IS NOT NULL AND g.slot % @extschema@.idgen_registry_stripes() <> stripe
       AND @extschema@.idgen_registry_striped(settings.xid12_slots) THEN
        RAISE EXCEPTION 'grant lost: xid12 machine id % is not of the stripe the registry grants from now', g.slot
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Grant %s ends at %s; the registry now grants machine ids of stripe %s (machine id mod %s).',
                      g.grant_id, @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.hi), stripe, @extschema@.idgen_registry_stripes()),
                  HINT = 'Acquire a new grant (at once); make no id after the old window.';
    END IF;
    PERFORM @extschema@.idgen_registry_durable();
    SELECT s.next_free INTO next_free FROM @extschema@.idgen_registry_slot s
        WHERE s.kind = g.kind AND s.slot = g.slot FOR UPDATE;
    IF next_free <> g.hi THEN
        RAISE EXCEPTION 'grant lost: % slot %''s id-time from % went to another writer', g.kind, g.slot,
                @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.hi)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Grant %s ended at %s.', g.grant_id, @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.hi)),
                  HINT = 'Acquire a new grant; make no id after the old window.';
    END IF;
    new_hi := greatest(g.hi, @extschema@.idgen_registry_id_time(g.kind, g.epoch_ms, server_time + lease));
    IF new_hi >= @extschema@.idgen_registry_time_end(g.kind) THEN
        RAISE EXCEPTION 'a % window ending at % is beyond the last id-time of its ids', g.kind, server_time + lease
            USING ERRCODE = 'datetime_field_overflow';
    END IF;
    UPDATE @extschema@.idgen_registry_grant r SET hi = new_hi, renewed_at = server_time
        WHERE r.grant_id = g.grant_id RETURNING r.* INTO g;
    UPDATE @extschema@.idgen_registry_slot s SET next_free = new_hi WHERE s.kind = g.kind AND s.slot = g.slot;
    RETURN NEXT @extschema@.idgen_registry_row(g, token, server_time);
END
$$;
COMMENT ON FUNCTION idgen_renew(bigint, bigint, interval) IS 'moves a grant''s window end on; grant lost (55000) when its slot went on to another writer';

CREATE FUNCTION idgen_release(grant_id bigint, token bigint, last_id_time timestamptz DEFAULT NULL)
    RETURNS SETOF idgen_grant
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 1 SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    server_time CONSTANT timestamptz := clock_timestamp();
    g @extschema@.idgen_registry_grant := @extschema@.idgen_registry_holder(grant_id, token);
    new_hi bigint := g.hi;
BEGIN
    IF g.released_at IS NULL THEN
        -- The window shrinks to just after the last id made: the rest of it is free at once.
        -- NULL (not known) keeps it; -infinity (no id made) empties it.
        IF last_id_time = '-infinity' THEN
            new_hi := g.lo;
        ELSIF last_id_time IS NOT NULL AND last_id_time < 'infinity' THEN
            new_hi := least(g.hi, greatest(g.lo,
                @extschema@.idgen_registry_id_time(g.kind, g.epoch_ms, last_id_time) + 1));
        END IF;
        PERFORM FROM @extschema@.idgen_registry_slot s WHERE s.kind = g.kind AND s.slot = g.slot FOR UPDATE;
        UPDATE @extschema@.idgen_registry_slot s SET next_free = new_hi
            WHERE s.kind = g.kind AND s.slot = g.slot AND s.next_free = g.hi;
        UPDATE @extschema@.idgen_registry_grant r SET hi = new_hi, released_at = server_time
            WHERE r.grant_id = g.grant_id RETURNING r.* INTO g;
    END IF;
    RETURN NEXT @extschema@.idgen_registry_row(g, token, server_time);
END
$$;
COMMENT ON FUNCTION idgen_release(bigint, bigint, timestamptz) IS 'ends a grant; its window shrinks to just after last_id_time (NULL: unknown, kept; -infinity: no id made)';

-- Edge devices -----------------------------------------------------------------------------------
-- A device offline for days keeps its grant in a file of its own. A copy of that file (a cloned
-- disk image, a restored backup) on a second device would make the same ids. Each report of a
-- device counts: the device keeps the count it was given, and a report whose count is not the
-- registry's comes from a copy of a state that another device has already continued.
CREATE TABLE idgen_registry_report (
    grant_id bigint PRIMARY KEY,
    syncs bigint NOT NULL CHECK (syncs > 0),
    device text NOT NULL,
    last_id_time timestamptz,
    reported_at timestamptz NOT NULL,
    attempt bigint               -- the number the device gave its last report (NULL: none)
);
COMMENT ON TABLE idgen_registry_report IS 'the last report of each grant''s device: how many there were, from which device, its last id''s time, its attempt number';
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_report', '');

-- attempt: a number the device chose for this report and kept in its own storage before sending
-- it. When the reply is lost (the server committed, the device never heard), the device sends the
-- same report again, with the count it had and the same attempt: that is not a second device, and
-- it gets the count it missed. A copy of the device's state made another report of its own (another
-- attempt number, or another device name), so it is still told apart.
CREATE FUNCTION idgen_report(grant_id bigint, token bigint, device text, syncs bigint,
                             last_id_time timestamptz DEFAULT NULL, attempt bigint DEFAULT NULL)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    server_time CONSTANT timestamptz := clock_timestamp();
    -- The grant's row lock orders the reports of one grant.
    g @extschema@.idgen_registry_grant := @extschema@.idgen_registry_holder(grant_id, token);
    prev @extschema@.idgen_registry_report;
    t bigint;
BEGIN
    IF device IS NULL OR device = '' THEN
        RAISE EXCEPTION 'a device needs a name' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM @extschema@.idgen_registry_check_length('device', device, 256);
    IF syncs IS NULL OR syncs < 0 THEN
        RAISE EXCEPTION 'invalid report count: %', coalesce(syncs::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'A device''s first report has count 0; then the count the last report returned.';
    END IF;
    IF last_id_time IS NOT NULL THEN
        t := CASE WHEN isfinite(last_id_time) THEN @extschema@.idgen_registry_id_time(g.kind, g.epoch_ms, last_id_time) END;
        IF t IS NULL OR t < g.lo OR t >= g.hi THEN
            RAISE EXCEPTION 'device % reports an id outside the window of grant %', quote_literal(device), g.grant_id
                USING ERRCODE = 'IG006',
                      DETAIL = format('Its last id is of %s; the window is [%s, %s).', last_id_time,
                          @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.lo),
                          @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.hi));
        END IF;
    END IF;
    SELECT * INTO prev FROM @extschema@.idgen_registry_report r WHERE r.grant_id = g.grant_id;
    IF attempt IS NOT NULL AND prev.attempt = attempt AND syncs = prev.syncs - 1 AND prev.device = device THEN
        -- The same report again, after its reply was lost: answered as before, nothing counted.
        UPDATE @extschema@.idgen_registry_report r SET last_id_time = greatest(r.last_id_time, idgen_report.last_id_time)
            WHERE r.grant_id = g.grant_id;
        RETURN prev.syncs;
    END IF;
    IF syncs <> coalesce(prev.syncs, 0) THEN
        RAISE EXCEPTION 'grant % is used by two devices', g.grant_id
            USING ERRCODE = 'unique_violation',
                  DETAIL = CASE WHEN prev.syncs IS NULL
                      THEN format('Device %s presents report count %s, but no device has reported on this grant.', quote_literal(device), syncs)
                      ELSE format('Device %s presents report count %s; report %s came from device %s at %s, its last id of %s.',
                          quote_literal(device), syncs, prev.syncs, quote_literal(prev.device), prev.reported_at,
                          coalesce(prev.last_id_time::text, 'no time given')) END,
                  HINT = 'One holds a copy of the other''s state (a cloned image or a restored backup): their ids may repeat. Keep the rows of both apart, check them with idgen_verify and for duplicates before they are merged, and give each device a grant of its own.';
    END IF;
    PERFORM @extschema@.idgen_registry_durable();
    INSERT INTO @extschema@.idgen_registry_report AS r (grant_id, syncs, device, last_id_time, reported_at, attempt)
        VALUES (g.grant_id, 1, device, last_id_time, server_time, attempt)
        ON CONFLICT ON CONSTRAINT idgen_registry_report_pkey DO UPDATE
        SET syncs = r.syncs + 1, device = excluded.device,
            last_id_time = greatest(r.last_id_time, excluded.last_id_time), reported_at = excluded.reported_at,
            attempt = excluded.attempt;
    RETURN coalesce(prev.syncs, 0) + 1;
END
$$;
COMMENT ON FUNCTION idgen_report(bigint, bigint, text, bigint, timestamptz, bigint) IS 'an edge device''s report on its grant: returns the count it presents next time; 23505 when the count shows a copy of another device''s state; the same attempt again is answered as before';

-- Provenance -----------------------------------------------------------------------------------
-- An id's point in the registry's packed space: its slot and id-time. NULL for a negative bigint.
CREATE FUNCTION idgen_registry_point(id bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE WHEN id >= 0 THEN @extschema@.idgen_registry_pack('snowflake', ((id >> 12) & 1023)::int, id >> 22) END;
CREATE FUNCTION idgen_registry_point(id xid12) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT @extschema@.idgen_registry_pack('xid12',
                (get_byte(b, 4) << 16) | (get_byte(b, 5) << 8) | get_byte(b, 6),
                (get_byte(b, 0)::int8 << 24) | (get_byte(b, 1) << 16) | (get_byte(b, 2) << 8) | get_byte(b, 3))
            FROM (SELECT @extschema@.xid12_to_bytea(id) AS b) s);
COMMENT ON FUNCTION idgen_registry_point(bigint) IS 'internal: a Snowflake id''s worker and id-time, packed';
COMMENT ON FUNCTION idgen_registry_point(xid12) IS 'internal: an xid12''s machine id and id-time, packed';

CREATE FUNCTION idgen_writer_of(id bigint)
    RETURNS TABLE (writer text, grant_id bigint, kind text, pool text, slot integer, lo timestamptz, hi timestamptz,
                   db_role name)
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
        SELECT g.writer, g.grant_id, g.kind, g.pool, g.slot, g.lo, g.hi, g.db_role
        FROM @extschema@.idgen_grants g
        WHERE g.span @> @extschema@.idgen_registry_point(id);
    END;
COMMENT ON FUNCTION idgen_writer_of(bigint) IS 'the writer (and the database role that made its grant) whose grant or reservation covers this Snowflake id; no row when none does';
CREATE FUNCTION idgen_writer_of(id xid12)
    RETURNS TABLE (writer text, grant_id bigint, kind text, pool text, slot integer, lo timestamptz, hi timestamptz,
                   db_role name)
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
        SELECT g.writer, g.grant_id, g.kind, g.pool, g.slot, g.lo, g.hi, g.db_role
        FROM @extschema@.idgen_grants g
        WHERE g.span @> @extschema@.idgen_registry_point(id);
    END;
COMMENT ON FUNCTION idgen_writer_of(xid12) IS 'the writer (and the database role that made its grant) whose grant or reservation covers this xid12; no row when none does';

-- The ids of a bigint (Snowflake) or xid12 column that no grant or reservation covers, with why:
-- before ids from elsewhere meet a unique index, this finds those nobody was given.
CREATE FUNCTION idgen_verify(relation regclass, id_column name)
    RETURNS TABLE (id text, reason text)
    LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    typ regtype;
    kind text;
BEGIN
    SELECT a.atttypid::regtype INTO typ FROM pg_attribute a
        WHERE a.attrelid = relation AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column % of relation % does not exist', quote_ident(id_column), relation
            USING ERRCODE = 'undefined_column';
    END IF;
    -- (The xid12 type itself, or a domain's base type: the portable edition's xid12 is a domain.)
    kind := CASE (SELECT CASE WHEN t.oid = '@extschema@.xid12'::regtype THEN t.oid ELSE coalesce(nullif(t.typbasetype, 0), t.oid) END
                  FROM pg_type t WHERE t.oid = typ)
                WHEN 'bigint'::regtype THEN 'snowflake'
                WHEN '@extschema@.xid12'::regtype THEN 'xid12' END;
    IF kind IS NULL THEN
        RAISE EXCEPTION 'column % of % is of type %, not bigint (Snowflake ids) or xid12', quote_ident(id_column), relation, typ
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    RETURN QUERY EXECUTE format($q$
        SELECT t.%1$I::text,
               CASE WHEN t.%1$I IS NULL THEN 'the id is NULL'
                    WHEN p.point IS NULL THEN 'a negative bigint is not a Snowflake id'
                    ELSE format('%2$s %%s at %%s: no grant or reservation covers it; %%s', p.slot, p.at,
                                CASE WHEN EXISTS (SELECT FROM %4$s.idgen_grants g
                                                  WHERE g.kind = %3$L AND g.slot = p.slot)
                                     THEN 'it is outside every window of that slot'
                                     ELSE 'that slot was never granted or reserved' END) END
        FROM %5$s t
        CROSS JOIN LATERAL (SELECT %4$s.idgen_registry_point(t.%1$I) AS point,
                                   %6$s AS slot, %7$s AS at) p
        WHERE p.point IS NULL
           OR NOT EXISTS (SELECT FROM %4$s.idgen_grants g WHERE g.span @> p.point)$q$,
        id_column, CASE kind WHEN 'snowflake' THEN 'worker' ELSE 'machine' END, kind, '@extschema@', relation,
        CASE kind WHEN 'snowflake' THEN format('((t.%I >> 12) & 1023)::int', id_column)
             ELSE format('(SELECT (get_byte(m, 0) << 16) | (get_byte(m, 1) << 8) | get_byte(m, 2) FROM %s.xid12_machine(t.%I) m)', '@extschema@', id_column) END,
        CASE kind WHEN 'snowflake' THEN format('%s.snowflake_time(t.%I)', '@extschema@', id_column)
             ELSE format('%s.xid12_time(t.%I)', '@extschema@', id_column) END);
END
$$;
COMMENT ON FUNCTION idgen_verify(regclass, name) IS 'the ids of a column that no writer grant or reservation covers, with the reason';

-- Privileges -----------------------------------------------------------------------------------
-- Functions are executable by PUBLIC unless revoked. The registry's writer functions go to the
-- roles a DBA names (idgen_pool_allow); the DBA's own (reservations, the fence, the pools' ACL)
-- and the internals stay the owner's and the superusers'. idgen_writer_of and idgen_verify stay
-- executable by all: they read the registry through idgen_grants, which only the roles a DBA
-- grants SELECT on may read. The pure helpers (pack, time_end, moment, id_time, point, stripes,
-- striped, max_lease, default_lease, check_lease,
-- builtin_pool, fence_margin, seconds, lease, check_length) read no table and change nothing.
REVOKE EXECUTE ON FUNCTION
    idgen_acquire(text, text, interval, text),
    idgen_renew(bigint, bigint, interval),
    idgen_release(bigint, bigint, timestamptz),
    idgen_report(bigint, bigint, text, bigint, timestamptz, bigint),
    idgen_reserve(text, integer, text),
    idgen_registry_reserve(text, integer, text, boolean),
    idgen_registry_lift_fence(),
    idgen_registry_check_origin(),
    idgen_registry_holder(bigint, bigint),
    idgen_registry_durable(),
    idgen_registry_row(idgen_registry_grant, bigint, timestamptz),
    idgen_registry_own_slot(text),
    idgen_registry_pool_of(text),
    idgen_registry_fence_lease(text, int4range),
    idgen_registry_current_stripe(),
    idgen_registry_lost_eras(),
    idgen_registry_fence_until(text, int4range),
    idgen_registry_pick_stripe(bigint, bigint),
    idgen_registry_unstriped_slot(integer),
    idgen_registry_caller(),
    idgen_registry_trusted(name),
    idgen_registry_cap(text, name),
    idgen_registry_owner(),
    idgen_registry_epoch(),
    idgen_registry_worker_id(),
    idgen_registry_machine(),
    idgen_registry_system_identifier(),
    idgen_registry_timeline(),
    idgen_registry_site_change(boolean),
    idgen_registry_mark_site(),
    idgen_pool_allow(text, regrole, integer),
    idgen_pool_disallow(text, regrole)
FROM PUBLIC;

-- The registry's origin, recorded at install: a later change of cluster or timeline fences it
-- even when the grants it made there are lost with the old history.
SELECT @extschema@.idgen_registry_check_origin();
