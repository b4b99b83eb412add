-- pg_idgen 0.6.0 -> 0.7.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.7.0'" to load this file. \quit

-- Each object below is the same as in a fresh 0.7.0 install (sql/*.sql). Sections in the order
-- the changes were made; every one names the file that defines its objects.

-- The registry changes only through its functions (issue 33): sql/registry.sql ------------------
-- Provenance: the database role that made each grant (NULL for grants made before 0.7.0).
ALTER TABLE idgen_registry_grant ADD COLUMN db_role name;
CREATE INDEX idgen_registry_grant_live ON idgen_registry_grant (pool, db_role, (coalesce(renewed_at, granted_at)))
    WHERE released_at IS NULL;

-- The pools' ACL and the caps' row locks.
CREATE TABLE idgen_registry_pool_role (
    pool text NOT NULL CHECK (pool <> 'reserved'),
    member regrole NOT NULL,
    max_live integer NOT NULL CHECK (max_live > 0),
    PRIMARY KEY (pool, member)
);
COMMENT ON TABLE idgen_registry_pool_role IS 'which roles may take grants in which pool, and how many live grants each role may hold there';
SELECT pg_catalog.pg_extension_config_dump('idgen_registry_pool_role', '');
CREATE TABLE idgen_registry_quota (
    pool text NOT NULL,
    db_role name NOT NULL,
    PRIMARY KEY (pool, db_role)
);
COMMENT ON TABLE idgen_registry_quota IS 'internal: a row lock per pool and role, taken while a capped acquire counts the role''s live grants';

-- The registry through failovers (issue 34): sql/registry.sql -----------------------------------
-- A pool's longest Snowflake lease (NULL: max_lease); the xid12 stripe of each origin (NULL: any,
-- an origin recorded before 0.7.0: the call at the end of this script gives the current one its
-- stripe); the grant's window and the server's time as integer id-time.
ALTER TABLE idgen_registry_pool ADD COLUMN snowflake_max_lease interval
    CHECK (snowflake_max_lease >= interval '1 second' AND snowflake_max_lease <= max_lease);
ALTER TABLE idgen_registry_origin ADD COLUMN xid12_stripe integer CHECK (xid12_stripe >= 0 AND xid12_stripe < 64);
ALTER TYPE idgen_grant ADD ATTRIBUTE lo_t bigint, ADD ATTRIBUTE hi_t bigint, ADD ATTRIBUTE server_t bigint;
-- >>> sql/registry.sql idgen_registry_builtin_pool
CREATE OR REPLACE FUNCTION idgen_registry_builtin_pool(pool text) RETURNS idgen_registry_pool
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE WHEN pool = 'edge'
        THEN ROW('edge', int4range(768, 1024), int4range(12582912, 16777216), interval '366 days', NULL)::@extschema@.idgen_registry_pool
        ELSE ROW(pool, int4range(0, 768), int4range(0, 12582912), interval '1 hour', interval '3 minutes')::@extschema@.idgen_registry_pool END;
COMMENT ON FUNCTION idgen_registry_builtin_pool(text) IS 'internal: the built-in edge pool, or the app pool under another name';
-- <<< sql/registry.sql idgen_registry_builtin_pool
-- >>> sql/registry.sql idgen_registry_pool_of
CREATE OR REPLACE FUNCTION idgen_registry_pool_of(pool text) RETURNS idgen_registry_pool
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce(
        (SELECT p FROM @extschema@.idgen_registry_pool p WHERE p.pool = $1),
        CASE WHEN pool = 'edge' THEN @extschema@.idgen_registry_builtin_pool('edge')
             ELSE (SELECT ROW($1, a.snowflake_slots, a.xid12_slots, a.max_lease, a.snowflake_max_lease)::@extschema@.idgen_registry_pool
                   FROM @extschema@.idgen_registry_pool a WHERE a.pool = 'app') END,
        @extschema@.idgen_registry_builtin_pool(pool));
COMMENT ON FUNCTION idgen_registry_pool_of(text) IS 'internal: a pool''s slots and longest lease';
-- <<< sql/registry.sql idgen_registry_pool_of
-- >>> sql/registry.sql idgen_registry_max_lease
CREATE OR REPLACE FUNCTION idgen_registry_max_lease(p idgen_registry_pool, kind text) RETURNS interval
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN CASE kind WHEN 'snowflake' THEN coalesce(p.snowflake_max_lease, p.max_lease) ELSE p.max_lease END;
COMMENT ON FUNCTION idgen_registry_max_lease(idgen_registry_pool, text) IS 'internal: the longest lease of a pool''s grants of a kind';
-- <<< sql/registry.sql idgen_registry_max_lease
-- >>> sql/registry.sql idgen_registry_default_lease
CREATE OR REPLACE FUNCTION idgen_registry_default_lease(p idgen_registry_pool, kind text) RETURNS interval
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN least(interval '10 minutes', @extschema@.idgen_registry_max_lease(p, kind));
COMMENT ON FUNCTION idgen_registry_default_lease(idgen_registry_pool, text) IS 'internal: the lease of a writer that asks for none (10 minutes, at most the pool''s longest)';
-- <<< sql/registry.sql idgen_registry_default_lease
-- >>> sql/registry.sql idgen_registry_fence_lease
CREATE OR REPLACE FUNCTION idgen_registry_fence_lease(kind text, slots int4range) RETURNS interval
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT max(CASE $1 WHEN 'snowflake' THEN coalesce(p.snowflake_max_lease, p.max_lease) ELSE p.max_lease END) FROM (
                SELECT * FROM @extschema@.idgen_registry_pool
                UNION ALL
                SELECT (@extschema@.idgen_registry_builtin_pool(b)).* FROM unnest(ARRAY['edge', 'app']) b
                WHERE NOT EXISTS (SELECT FROM @extschema@.idgen_registry_pool r WHERE r.pool = b)) p
            WHERE CASE $1 WHEN 'snowflake' THEN p.snowflake_slots ELSE p.xid12_slots END && $2);
COMMENT ON FUNCTION idgen_registry_fence_lease(text, int4range) IS 'internal: the longest lease of every pool that shares these slots';
-- <<< sql/registry.sql idgen_registry_fence_lease
-- >>> sql/registry.sql idgen_registry_stripes
CREATE OR REPLACE FUNCTION idgen_registry_stripes() RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN 64;
COMMENT ON FUNCTION idgen_registry_stripes() IS 'internal: the number of xid12 stripes (a machine id''s stripe is the machine id mod this)';
-- <<< sql/registry.sql idgen_registry_stripes
-- >>> sql/registry.sql idgen_registry_striped
CREATE OR REPLACE FUNCTION idgen_registry_striped(slots int4range) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN upper(slots) - lower(slots) >= 64 * @extschema@.idgen_registry_stripes();
COMMENT ON FUNCTION idgen_registry_striped(int4range) IS 'internal: whether a pool''s xid12 machine ids are granted by stripe (at least 64 per stripe)';
-- <<< sql/registry.sql idgen_registry_striped
-- >>> sql/registry.sql idgen_registry_unstriped_slot
CREATE OR REPLACE FUNCTION idgen_registry_unstriped_slot(slot integer) RETURNS boolean
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN EXISTS (SELECT FROM @extschema@.idgen_registry_pool p
                   WHERE p.xid12_slots @> slot AND NOT @extschema@.idgen_registry_striped(p.xid12_slots));
COMMENT ON FUNCTION idgen_registry_unstriped_slot(integer) IS 'internal: whether an xid12 machine id belongs to a pool too small to be striped';
-- <<< sql/registry.sql idgen_registry_unstriped_slot
REVOKE EXECUTE ON FUNCTION idgen_registry_unstriped_slot(integer) FROM PUBLIC;
-- >>> sql/registry.sql idgen_registry_current_stripe
CREATE OR REPLACE FUNCTION idgen_registry_current_stripe() RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT o.xid12_stripe FROM @extschema@.idgen_registry_origin o ORDER BY o.seen_at DESC, o.reason IS NULL LIMIT 1);
COMMENT ON FUNCTION idgen_registry_current_stripe() IS 'internal: the xid12 stripe the registry grants machine ids from (NULL: any)';
-- <<< sql/registry.sql idgen_registry_current_stripe
-- >>> sql/registry.sql idgen_registry_lost_eras
CREATE OR REPLACE FUNCTION idgen_registry_lost_eras() RETURNS TABLE (stripe integer, ended timestamptz)
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
-- <<< sql/registry.sql idgen_registry_lost_eras
-- >>> sql/registry.sql idgen_registry_row
CREATE OR REPLACE FUNCTION idgen_registry_row(g idgen_registry_grant, token bigint, server_time timestamptz)
    RETURNS idgen_grant
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN ROW(g.grant_id, token, g.kind, g.slot,
               @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.lo),
               @extschema@.idgen_registry_moment(g.kind, g.epoch_ms, g.hi),
               g.epoch_ms, server_time, g.lo, g.hi,
               @extschema@.idgen_registry_id_time(g.kind, g.epoch_ms, server_time))::@extschema@.idgen_grant;
COMMENT ON FUNCTION idgen_registry_row(idgen_registry_grant, bigint, timestamptz) IS 'internal: a grant as acquire, renew and release return it';
-- <<< sql/registry.sql idgen_registry_row
REVOKE EXECUTE ON FUNCTION idgen_registry_current_stripe(), idgen_registry_lost_eras() FROM PUBLIC;

-- The edition blocks (sql/registry.sql "Edition blocks": the places the portable edition
-- redefines, read through these functions since 0.7.0), and the functions that call them that
-- 0.6.0 had as they were.
-- >>> sql/registry.sql idgen_registry_owner
CREATE OR REPLACE FUNCTION idgen_registry_owner() RETURNS oid
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT e.extowner FROM pg_extension e WHERE e.extname = 'pg_idgen');
COMMENT ON FUNCTION idgen_registry_owner() IS 'internal: the extension''s owner, trusted as superusers are';
-- <<< sql/registry.sql idgen_registry_owner
-- >>> sql/registry.sql idgen_registry_epoch
CREATE OR REPLACE FUNCTION idgen_registry_epoch() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce(nullif(current_setting('pg_idgen.snowflake_epoch', true), ''), '1288834974657')::bigint;
COMMENT ON FUNCTION idgen_registry_epoch() IS 'internal: the Snowflake epoch of the registry''s grants (pg_idgen.snowflake_epoch)';
-- <<< sql/registry.sql idgen_registry_epoch
-- >>> sql/registry.sql idgen_registry_worker_id
CREATE OR REPLACE FUNCTION idgen_registry_worker_id() RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN nullif(coalesce(current_setting('pg_idgen.worker_id', true), '-1')::int, -1);
COMMENT ON FUNCTION idgen_registry_worker_id() IS 'internal: this server''s Snowflake worker id (pg_idgen.worker_id; NULL: unset)';
-- <<< sql/registry.sql idgen_registry_worker_id
-- >>> sql/registry.sql idgen_registry_machine
CREATE OR REPLACE FUNCTION idgen_registry_machine() RETURNS bytea
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN @extschema@.xid12_current_machine();
COMMENT ON FUNCTION idgen_registry_machine() IS 'internal: this server''s effective xid12 machine id, as 3 bytes';
-- <<< sql/registry.sql idgen_registry_machine
-- >>> sql/registry.sql idgen_registry_setting
CREATE OR REPLACE FUNCTION idgen_registry_setting(setting_name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN 'pg_idgen.' || setting_name;
COMMENT ON FUNCTION idgen_registry_setting(text) IS 'internal: where a setting of the registry is set, for its messages';
-- <<< sql/registry.sql idgen_registry_setting
-- >>> sql/registry.sql idgen_registry_system_identifier
CREATE OR REPLACE FUNCTION idgen_registry_system_identifier() RETURNS bigint
    LANGUAGE sql VOLATILE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT s.system_identifier FROM pg_control_system() s);
COMMENT ON FUNCTION idgen_registry_system_identifier() IS 'internal: the cluster''s system identifier';
-- <<< sql/registry.sql idgen_registry_system_identifier
-- >>> sql/registry.sql idgen_registry_timeline
CREATE OR REPLACE FUNCTION idgen_registry_timeline() RETURNS bigint
    LANGUAGE sql VOLATILE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint;
COMMENT ON FUNCTION idgen_registry_timeline() IS 'internal: the current WAL timeline';
-- <<< sql/registry.sql idgen_registry_timeline
-- >>> sql/registry.sql idgen_registry_site_change
CREATE OR REPLACE FUNCTION idgen_registry_site_change(empty boolean) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN NULL::text;
COMMENT ON FUNCTION idgen_registry_site_change(boolean) IS 'internal: a change of origin the system identifier and the timeline do not show (none here)';
-- <<< sql/registry.sql idgen_registry_site_change
-- >>> sql/registry.sql idgen_registry_mark_site
CREATE OR REPLACE FUNCTION idgen_registry_mark_site() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
END
$$;
COMMENT ON FUNCTION idgen_registry_mark_site() IS 'internal: records where the registry is (nothing here)';
-- <<< sql/registry.sql idgen_registry_mark_site
-- >>> sql/registry.sql idgen_registry_own_slot
CREATE OR REPLACE FUNCTION idgen_registry_own_slot(kind text) RETURNS integer
    LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT CASE kind
                WHEN 'snowflake' THEN @extschema@.idgen_registry_worker_id()
                ELSE (get_byte(m, 0) << 16) | (get_byte(m, 1) << 8) | get_byte(m, 2) END
            FROM (SELECT @extschema@.idgen_registry_machine() AS m) s);
COMMENT ON FUNCTION idgen_registry_own_slot(text) IS 'internal: the server''s own worker id or machine id';
-- <<< sql/registry.sql idgen_registry_own_slot
-- >>> sql/registry.sql idgen_registry_point(id xid12)
CREATE OR REPLACE FUNCTION idgen_registry_point(id xid12) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT @extschema@.idgen_registry_pack('xid12',
                (get_byte(b, 4) << 16) | (get_byte(b, 5) << 8) | get_byte(b, 6),
                (get_byte(b, 0)::int8 << 24) | (get_byte(b, 1) << 16) | (get_byte(b, 2) << 8) | get_byte(b, 3))
            FROM (SELECT @extschema@.xid12_to_bytea(id) AS b) s);
COMMENT ON FUNCTION idgen_registry_point(bigint) IS 'internal: a Snowflake id''s worker and id-time, packed';
-- <<< sql/registry.sql idgen_registry_point(id xid12)
REVOKE EXECUTE ON FUNCTION idgen_registry_owner(), idgen_registry_epoch(), idgen_registry_worker_id(),
    idgen_registry_machine(), idgen_registry_system_identifier(), idgen_registry_timeline(),
    idgen_registry_site_change(boolean), idgen_registry_mark_site() FROM PUBLIC;
-- >>> sql/registry.sql idgen_registry_caller
CREATE OR REPLACE FUNCTION idgen_registry_caller() RETURNS name
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce(nullif(current_setting('role'), 'none'), session_user);
COMMENT ON FUNCTION idgen_registry_caller() IS 'internal: the role a registry call is made for (SET ROLE''s, else the session user)';
-- <<< sql/registry.sql idgen_registry_caller
-- >>> sql/registry.sql idgen_registry_trusted
CREATE OR REPLACE FUNCTION idgen_registry_trusted(role_name name) RETURNS boolean
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN coalesce((SELECT r.rolsuper OR r.oid = @extschema@.idgen_registry_owner()
                     FROM pg_roles r WHERE r.rolname = role_name), false);
COMMENT ON FUNCTION idgen_registry_trusted(name) IS 'internal: whether a role is a superuser or the extension''s owner';
-- <<< sql/registry.sql idgen_registry_trusted
-- >>> sql/registry.sql idgen_registry_cap
CREATE OR REPLACE FUNCTION idgen_registry_cap(pool text, role_name name) RETURNS integer
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
-- <<< sql/registry.sql idgen_registry_cap
-- >>> sql/registry.sql idgen_registry_seconds
CREATE OR REPLACE FUNCTION idgen_registry_seconds(span interval) RETURNS interval
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN make_interval(secs => extract(epoch FROM span));
COMMENT ON FUNCTION idgen_registry_seconds(interval) IS 'internal: an interval as elapsed seconds, with no day or month part';
-- <<< sql/registry.sql idgen_registry_seconds
-- >>> sql/registry.sql idgen_registry_lease
CREATE OR REPLACE FUNCTION idgen_registry_lease(lease interval) RETURNS interval
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
-- <<< sql/registry.sql idgen_registry_lease

-- Leases too long are IG004; the fence's end, per kind and xid12 stripe (issue 34).
-- >>> sql/registry.sql idgen_registry_check_lease
CREATE OR REPLACE FUNCTION idgen_registry_check_lease(lease interval, settings idgen_registry_pool, kind text) RETURNS void
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
-- <<< sql/registry.sql idgen_registry_check_lease
-- >>> sql/registry.sql idgen_registry_fence_until
CREATE OR REPLACE FUNCTION idgen_registry_fence_until(kind text, slots int4range) RETURNS timestamptz
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN (SELECT max(e.ended) + @extschema@.idgen_registry_seconds(@extschema@.idgen_registry_fence_lease($1, $2))
                   + @extschema@.idgen_registry_fence_margin()
            FROM @extschema@.idgen_registry_lost_eras() e
            WHERE $1 = 'snowflake' OR NOT @extschema@.idgen_registry_striped($2) OR e.stripe IS NULL
               OR e.stripe IS NOT DISTINCT FROM (SELECT @extschema@.idgen_registry_current_stripe())
               OR (SELECT @extschema@.idgen_registry_current_stripe()) IS NULL);
COMMENT ON FUNCTION idgen_registry_fence_until(text, int4range) IS 'internal: until when a failover''s fence closes these slots of a kind (NULL: open)';
-- <<< sql/registry.sql idgen_registry_fence_until
-- >>> sql/registry.sql idgen_registry_pick_stripe
CREATE OR REPLACE FUNCTION idgen_registry_pick_stripe(sysid bigint, tli bigint) RETURNS integer
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
-- <<< sql/registry.sql idgen_registry_pick_stripe
REVOKE EXECUTE ON FUNCTION idgen_registry_fence_until(text, int4range), idgen_registry_pick_stripe(bigint, bigint) FROM PUBLIC;

-- The registry's origin is recorded at install and update, not at its first call, and every
-- change of it fences, whatever grants are to be seen (issue 34).
-- >>> sql/registry.sql idgen_registry_check_origin
CREATE OR REPLACE FUNCTION idgen_registry_check_origin() RETURNS timestamptz
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
-- <<< sql/registry.sql idgen_registry_check_origin

-- The view gains db_role and span (the read interface of idgen_writer_of and idgen_verify).
CREATE OR REPLACE VIEW idgen_grants AS
SELECT g.grant_id, g.writer, g.kind, g.pool, g.slot,
       idgen_registry_moment(g.kind, g.epoch_ms, g.lo) AS lo,
       CASE WHEN g.reserved THEN 'infinity'::timestamptz
            ELSE idgen_registry_moment(g.kind, g.epoch_ms, g.hi) END AS hi,
       g.granted_at, g.renewed_at, g.released_at, g.reserved, g.epoch_ms, g.lease,
       g.db_role, g.span
FROM idgen_registry_grant g;
COMMENT ON VIEW idgen_grants IS 'every writer grant and reservation, live or ended, with the database role that made it';

-- idgen_writer_of returns db_role too: a new result type.
DROP FUNCTION idgen_writer_of(bigint);
DROP FUNCTION idgen_writer_of(xid12);
-- >>> sql/registry.sql idgen_writer_of(id bigint)
CREATE OR REPLACE FUNCTION idgen_writer_of(id bigint)
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
-- <<< sql/registry.sql idgen_writer_of(id bigint)
-- >>> sql/registry.sql idgen_writer_of(id xid12)
CREATE OR REPLACE FUNCTION idgen_writer_of(id xid12)
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
-- <<< sql/registry.sql idgen_writer_of(id xid12)
-- >>> sql/registry.sql idgen_verify
CREATE OR REPLACE FUNCTION idgen_verify(relation regclass, id_column name)
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
-- <<< sql/registry.sql idgen_verify

-- The writer functions run as the owner, check the pool's ACL, the cap and the grant's role, and
-- take leases as elapsed seconds.
-- >>> sql/registry.sql idgen_registry_holder
CREATE OR REPLACE FUNCTION idgen_registry_holder(grant_id bigint, token bigint) RETURNS idgen_registry_grant
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
-- <<< sql/registry.sql idgen_registry_holder
-- >>> sql/registry.sql idgen_registry_reserve
CREATE OR REPLACE FUNCTION idgen_registry_reserve(kind text, slot integer, writer text, takeover boolean)
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
-- <<< sql/registry.sql idgen_registry_reserve
-- >>> sql/registry.sql idgen_acquire
CREATE OR REPLACE FUNCTION idgen_acquire(kind text, writer text, lease interval DEFAULT NULL, pool text DEFAULT 'app')
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
-- <<< sql/registry.sql idgen_acquire
-- >>> sql/registry.sql idgen_renew
CREATE OR REPLACE FUNCTION idgen_renew(grant_id bigint, token bigint, lease interval DEFAULT NULL)
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
-- <<< sql/registry.sql idgen_renew
-- >>> sql/registry.sql idgen_release
CREATE OR REPLACE FUNCTION idgen_release(grant_id bigint, token bigint, last_id_time timestamptz DEFAULT NULL)
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
-- <<< sql/registry.sql idgen_release
-- >>> sql/registry.sql idgen_report
CREATE OR REPLACE FUNCTION idgen_report(grant_id bigint, token bigint, device text, syncs bigint,
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
-- <<< sql/registry.sql idgen_report
-- >>> sql/registry.sql idgen_pool_allow
CREATE OR REPLACE FUNCTION idgen_pool_allow(pool text, member regrole, max_live integer DEFAULT 16) RETURNS void
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
-- <<< sql/registry.sql idgen_pool_allow
-- >>> sql/registry.sql idgen_pool_disallow
CREATE OR REPLACE FUNCTION idgen_pool_disallow(pool text, member regrole) RETURNS void
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
-- <<< sql/registry.sql idgen_pool_disallow

-- As in a fresh install (the end of sql/registry.sql).
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
    idgen_registry_caller(),
    idgen_registry_trusted(name),
    idgen_registry_cap(text, name),
    idgen_pool_allow(text, regrole, integer),
    idgen_pool_disallow(text, regrole)
FROM PUBLIC;

-- 0.6.0's README had DBAs give writer roles INSERT and UPDATE on the registry's tables and
-- sequences: with them, any writer could rewrite any grant. Every right on them is taken from
-- every role but the owner (PUBLIC keeps SELECT on idgen_registry_pool, as in a fresh install),
-- and a WARNING names the roles and what to grant instead (ALTER EXTENSION shows no NOTICE). SELECT on the view idgen_grants stays.
DO $$
DECLARE
    owner oid := (SELECT e.extowner FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen');
    rel record;
    who text;
    roles text[] := '{}';
BEGIN
    FOR rel IN
        SELECT c.oid::pg_catalog.regclass AS name, c.relacl FROM pg_catalog.pg_class c
        WHERE c.relnamespace OPERATOR(pg_catalog.=) (SELECT e.extnamespace FROM pg_catalog.pg_extension e
                                                     WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen')
          AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY['idgen_registry_grant', 'idgen_registry_slot',
              'idgen_registry_origin', 'idgen_registry_report', 'idgen_registry_pool', 'idgen_registry_pool_role',
              'idgen_registry_quota', 'idgen_registry_grant_id_seq', 'idgen_registry_noticed_ms']::pg_catalog.name[])
    LOOP
        FOR who IN
            SELECT DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                 ELSE pg_catalog.quote_ident(r.rolname) END
            FROM pg_catalog.aclexplode(rel.relacl) a LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
            WHERE a.grantee OPERATOR(pg_catalog.<>) owner
              AND NOT (a.grantee OPERATOR(pg_catalog.=) 0 AND a.privilege_type OPERATOR(pg_catalog.=) 'SELECT'
                       AND rel.name OPERATOR(pg_catalog.=) 'idgen_registry_pool'::pg_catalog.regclass)
        LOOP
            EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM %s CASCADE', rel.name, who);
            IF rel.name OPERATOR(pg_catalog.=) 'idgen_registry_pool'::pg_catalog.regclass AND who OPERATOR(pg_catalog.=) 'PUBLIC' THEN
                EXECUTE pg_catalog.format('GRANT SELECT ON %s TO PUBLIC', rel.name);
            END IF;
            IF NOT who OPERATOR(pg_catalog.=) ANY (roles) THEN
                roles := roles OPERATOR(pg_catalog.||) who;
            END IF;
        END LOOP;
    END LOOP;
    IF pg_catalog.cardinality(roles) OPERATOR(pg_catalog.>) 0 THEN
        RAISE WARNING 'pg_idgen 0.7.0: the rights on the writer registry''s tables and sequences were revoked from %', pg_catalog.array_to_string(roles, ', ')
            USING DETAIL = 'Only the registry''s functions change its tables now; with those rights any writer could rewrite any grant.',
                  HINT = 'For each writer role: SELECT idgen_pool_allow(''app'', ''the_role'', 16); (the pool, the role, its cap of live grants); and GRANT SELECT ON idgen_grants TO the roles that read the registry. README, "Upgrading".';
    END IF;
END
$$;

-- idgen_backfill runs nothing it didn't make (issue 33): sql/backfill.sql --------------------------
-- The work table and the table filled are checked (and locked) in every transaction that touches
-- them; the helpers that touch the work table take its signature to check it.
DROP FUNCTION idgen_backfill_next_chunk(name, name);
DROP FUNCTION idgen_backfill_forget(text, bigint[]);
DROP FUNCTION idgen_backfill_drop_work(name, name);
DROP FUNCTION idgen_backfill_fill_range(text, text, text, bigint[]);
-- >>> sql/backfill.sql idgen_backfill_target_check
CREATE OR REPLACE FUNCTION idgen_backfill_target_check(relation regclass, qualified text) RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    now_named text;
    -- Citus (a shard filled through run_command_on_shards, as its hint says) refuses LOCK on a
    -- shard unless manual changes to shards are on: on for this one statement, then as it was.
    shards text := current_setting('citus.enable_manual_changes_to_shards', true);
BEGIN
    IF qualified IS NULL THEN
        SELECT format('%I.%I', n.nspname, c.relname) INTO qualified
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
    END IF;
    BEGIN
        IF shards IS NOT NULL THEN
            PERFORM set_config('citus.enable_manual_changes_to_shards', 'on', true);
        END IF;
        EXECUTE format('LOCK TABLE ONLY %s IN ROW EXCLUSIVE MODE', qualified);
        IF shards IS NOT NULL THEN
            PERFORM set_config('citus.enable_manual_changes_to_shards', shards, true);
        END IF;
    EXCEPTION WHEN insufficient_privilege OR undefined_table OR wrong_object_type THEN
        NULL; -- per-column rights; or the name means no table now: said below
    END;
    IF to_regclass(qualified) IS DISTINCT FROM relation THEN
        -- After the lock, in a new snapshot: the table's name now, if it is still there.
        SELECT format('%I.%I', n.nspname, c.relname) INTO now_named
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
        IF now_named IS NULL THEN
            RAISE EXCEPTION 'relation "%" was dropped while idgen_backfill filled it', qualified
                USING ERRCODE = 'undefined_table',
                      DETAIL = CASE WHEN to_regclass(qualified) IS NOT NULL
                          THEN 'Another relation of that name was made since; it was not read or written.' END;
        END IF;
        RAISE EXCEPTION 'relation "%" was renamed to "%" while idgen_backfill filled it', qualified, now_named
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call idgen_backfill again: it continues where it stopped.';
    END IF;
    RETURN qualified;
END
$$;
COMMENT ON FUNCTION idgen_backfill_target_check(regclass, text) IS 'internal: locks the table the run fills by its name and checks the name still means it';
-- <<< sql/backfill.sql idgen_backfill_target_check
-- >>> sql/backfill.sql idgen_backfill_work_check
CREATE OR REPLACE FUNCTION idgen_backfill_work_check(work_schema name, work_name name, signature text,
        missing_ok boolean, other_walk_ok boolean) RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    work text := format('%I.%I', work_schema, work_name);
    space oid := CASE WHEN work_schema = 'pg_temp' THEN pg_my_temp_schema()
                      ELSE (SELECT n.oid FROM pg_namespace n WHERE n.nspname = work_schema) END;
    -- The signature up to the column's name: "idgen_backfill work table of relation OID".
    this_table text := split_part(signature, ' column ', 1);
    found record;
    why text;
BEGIN
    SELECT c.oid, c.relkind, c.relowner, pg_get_userbyid(c.relowner) AS owner_name,
           obj_description(c.oid, 'pg_class') AS comment
    INTO found FROM pg_class c WHERE c.relname = work_name AND c.relnamespace = space;
    IF found.oid IS NULL THEN
        IF missing_ok THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'idgen_backfill''s work table "%" is gone', work
            USING ERRCODE = 'undefined_table',
                  DETAIL = format('Another session dropped it during the run (the owner of schema %I can).', work_schema),
                  HINT = 'Call idgen_backfill again: it sorts the rows still to fill again.';
    END IF;
    why := CASE
        WHEN found.relkind <> 'r' THEN
            format('It is %s, not a table.', CASE found.relkind WHEN 'v' THEN 'a view'
                WHEN 'm' THEN 'a materialized view' WHEN 'p' THEN 'a partitioned table'
                WHEN 'f' THEN 'a foreign table' WHEN 'S' THEN 'a sequence' WHEN 'i' THEN 'an index'
                ELSE format('a relation of kind %L', found.relkind) END)
        WHEN found.relowner <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = CURRENT_USER) THEN
            format('It is owned by role %I, not by %I.', found.owner_name, CURRENT_USER)
        WHEN found.comment = signature THEN NULL
        WHEN other_walk_ok AND left(found.comment, length(this_table) + 1) = this_table || ' ' THEN NULL
        WHEN found.comment LIKE 'idgen_backfill work table of %' THEN
            'It is the work table of a run that walked the table in another order.'
        ELSE 'It does not carry the comment idgen_backfill leaves on its work tables.' END;
    IF why IS NULL THEN
        BEGIN
            EXECUTE format('LOCK TABLE %s IN ACCESS SHARE MODE', work);
        EXCEPTION WHEN insufficient_privilege OR undefined_table OR wrong_object_type THEN
            NULL; -- the name means another relation now, or none: said below
        END;
        -- The catalogs' latest (to_regclass looks the name up as LOCK TABLE did, not in this
        -- statement's snapshot).
        IF to_regclass(work) IS DISTINCT FROM found.oid THEN
            why := 'It was dropped, or dropped and made again, while it was being checked.';
        END IF;
    END IF;
    IF why IS NOT NULL THEN
        RAISE EXCEPTION 'relation "%" exists and is not idgen_backfill''s work table of this run', work
            USING ERRCODE = 'duplicate_table',
                  DETAIL = why || ' It was not read or written.',
                  HINT = 'Drop or rename it, or run idgen_backfill as its owner.';
    END IF;
    RETURN found.comment = signature;
END
$$;
COMMENT ON FUNCTION idgen_backfill_work_check(name, name, text, boolean, boolean) IS 'internal: 42P07 unless the work table is the run''s own (a table of the caller''s with its signature), then locks it';
-- <<< sql/backfill.sql idgen_backfill_work_check
-- >>> sql/backfill.sql idgen_backfill_sort
CREATE OR REPLACE FUNCTION idgen_backfill_sort(work_schema name, work_name name, signature text, probe_sql text,
        create_sql text, sort_sql text, reuse boolean, OUT keys bigint, OUT reused boolean)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    work text := format('%I.%I', work_schema, work_name);
    same_walk boolean := @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, true, true);
    any_left boolean;
BEGIN
    reused := false;
    IF same_walk AND reuse THEN
        EXECUTE format('SELECT pg_catalog.sum(pg_catalog.cardinality(idgen_k1)) FROM %s', work) INTO keys;
        IF keys > 0 THEN
            reused := true;
            RETURN;
        END IF;
    END IF;
    IF same_walk IS NOT NULL THEN
        EXECUTE 'DROP TABLE ' || work;
    END IF;
    keys := 0;
    EXECUTE probe_sql INTO any_left;
    IF NOT any_left THEN
        RETURN;
    END IF;
    -- An error (42P07) if a relation of that name was made since the check. Made here, it stays
    -- locked (ACCESS EXCLUSIVE) until the transaction ends.
    EXECUTE create_sql;
    EXECUTE sort_sql;
    EXECUTE format('SELECT pg_catalog.sum(pg_catalog.cardinality(idgen_k1)) FROM %s', work) INTO keys;
    EXECUTE format('COMMENT ON TABLE %s IS %L', work, signature);
END
$$;
COMMENT ON FUNCTION idgen_backfill_sort(name, name, text, text, text, text, boolean) IS 'internal: the sorted walk''s work table, kept from an earlier run or sorted anew';
-- <<< sql/backfill.sql idgen_backfill_sort
-- >>> sql/backfill.sql idgen_backfill_next_chunk
CREATE OR REPLACE FUNCTION idgen_backfill_next_chunk(work_schema name, work_name name, signature text, expected boolean,
        OUT chunk bigint, OUT keys integer)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, NOT expected, true) THEN
        EXECUTE format('SELECT idgen_chunk, pg_catalog.cardinality(idgen_k1) FROM %I.%I ORDER BY idgen_chunk LIMIT 1',
            work_schema, work_name) INTO chunk, keys;
    END IF;
END
$$;
COMMENT ON FUNCTION idgen_backfill_next_chunk(name, name, text, boolean) IS 'internal: the work table''s first chunk and how many keys it holds';
-- <<< sql/backfill.sql idgen_backfill_next_chunk
-- >>> sql/backfill.sql idgen_backfill_forget
CREATE OR REPLACE FUNCTION idgen_backfill_forget(work_schema name, work_name name, signature text,
        forget_sql text, bounds bigint[]) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, false, false);
    EXECUTE forget_sql USING bounds;
END
$$;
COMMENT ON FUNCTION idgen_backfill_forget(name, name, text, text, bigint[]) IS 'internal: removes a batch''s keys from the work table';
-- <<< sql/backfill.sql idgen_backfill_forget
-- >>> sql/backfill.sql idgen_backfill_drop_work
CREATE OR REPLACE FUNCTION idgen_backfill_drop_work(work_schema name, work_name name, signature text) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, true, true) IS NOT NULL THEN
        EXECUTE format('DROP TABLE %I.%I', work_schema, work_name);
    END IF;
END
$$;
COMMENT ON FUNCTION idgen_backfill_drop_work(name, name, text) IS 'internal: drops the run''s work table once it is done';
-- <<< sql/backfill.sql idgen_backfill_drop_work
-- >>> sql/backfill.sql idgen_backfill_fill_range
CREATE OR REPLACE FUNCTION idgen_backfill_fill_range(work_schema name, work_name name, signature text,
        fill_sql text, lock_sql text, ordered_sql text, bounds bigint[],
        OUT filled bigint, OUT nulls bigint, OUT last_key text[])
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET enable_hashjoin = off
    SET enable_mergejoin = off
    SET enable_seqscan = off
    SET enable_bitmapscan = off
    SET enable_sort = off
    SET enable_material = off
AS $$
DECLARE
    behind bigint;
BEGIN
    PERFORM @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, false, false);
    BEGIN
        EXECUTE fill_sql INTO filled, nulls, behind USING bounds;
        IF behind OPERATOR(pg_catalog.>) 0 THEN
            RAISE EXCEPTION 'idgen_backfill: % rows of the batch were filled out of the walk''s order', behind
                USING ERRCODE = 'IDG01';
        END IF;
    EXCEPTION WHEN SQLSTATE 'IDG01' THEN
        RAISE DEBUG 'idgen_backfill: batch % filled again in two statements (the plan updated % rows out of order)',
            bounds, behind;
        EXECUTE lock_sql USING bounds;
        EXECUTE ordered_sql INTO filled, nulls, behind USING bounds;
    END;
END
$$;
COMMENT ON FUNCTION idgen_backfill_fill_range(name, name, text, text, text, text, bigint[]) IS 'internal: fills one batch of the sorted walk, in the walk''s order';
-- <<< sql/backfill.sql idgen_backfill_fill_range
-- >>> sql/backfill.sql idgen_backfill
CREATE OR REPLACE PROCEDURE idgen_backfill(relation regclass, target_column name, value_expression text,
        batch_size integer DEFAULT 5000, order_by text DEFAULT NULL,
        pause interval DEFAULT '0', lock_timeout interval DEFAULT '500ms',
        statement_timeout interval DEFAULT '1min', report_every interval DEFAULT '10s')
    LANGUAGE plpgsql
AS $$
DECLARE
    plan record;
    work record;
    sorted record;
    value_type pg_catalog.regtype;
    cursor_key pg_catalog.text[];
    locked pg_catalog.tid[];
    last_key pg_catalog.text[];
    filled bigint;
    nulls bigint;
    total bigint;
    estimated boolean;
    lock_failures integer := 0;
    action pg_catalog.text;
    walk pg_catalog.text;
    chunk bigint; -- the sorted walk's next chunk of keys, and how many it holds
    chunk_keys integer;
    just_sorted boolean := false;
    sorted_keys boolean := false; -- the last sort left keys in the work table: it must be there
    target pg_catalog.text; -- the table's qualified name, as the statements name it
    lock_ms pg_catalog.text := pg_catalog.format('%s ms', pg_catalog.floor(pg_catalog.date_part('epoch', lock_timeout) OPERATOR(pg_catalog.*) 1000));
    batch_ms integer := pg_catalog.floor(pg_catalog.date_part('epoch', statement_timeout) OPERATOR(pg_catalog.*) 1000);
BEGIN
    -- From here on statement_timeout is the procedure's: for the checks below, then for each
    -- batch (the session's own would cancel the whole CALL). The statements that read the whole
    -- table (the opening count or sort, and the sorts of the closing sweep) take no row lock
    -- and run without it.
    PERFORM @extschema@.idgen_statement_timeout(batch_ms);
    SELECT * INTO plan FROM @extschema@.idgen_backfill_plan(relation, target_column, value_expression,
        batch_size, order_by, pause, lock_timeout, statement_timeout, report_every);
    SELECT * INTO work FROM @extschema@.idgen_backfill_work_plan(relation, target_column, value_expression,
        order_by, batch_size);
    walk := work.walk;
    target := @extschema@.idgen_backfill_target_check(relation, NULL);
    -- The caller's expression, under the caller's search_path: its type, then the batch
    -- statements planned (unknown columns, generated columns, privileges) before any row changes.
    EXECUTE plan.type_sql INTO value_type;
    PERFORM @extschema@.idgen_backfill_check_type(relation, target_column, value_type);
    IF walk OPERATOR(pg_catalog.<>) 'sorted' THEN
        EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) plan.lock_sql USING cursor_key;
        EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) plan.fill_sql USING locked;
    END IF;
    PERFORM pg_catalog.set_config('lock_timeout', lock_ms, true);
    PERFORM @extschema@.idgen_statement_timeout(0);
    IF walk OPERATOR(pg_catalog.<>) 'sorted' AND work.work_name IS NOT NULL THEN
        -- The closing sweep's work table: a relation of its name that is not the caller's work
        -- table is an error now, before the first batch, rather than at the sweep.
        PERFORM @extschema@.idgen_backfill_work_check(work.work_schema, work.work_name, work.signature, true, true);
    END IF;
    IF walk OPERATOR(pg_catalog.=) 'sorted' THEN
        -- A work table an earlier run of the same walk left (cancelled, failed) is walked on.
        SELECT * INTO sorted FROM @extschema@.idgen_backfill_sort(work.work_schema, work.work_name, work.signature,
            work.probe_sql, work.create_sql, work.sort_sql, true);
        just_sorted := NOT sorted.reused;
        sorted_keys := sorted.keys OPERATOR(pg_catalog.>) 0;
        IF sorted.reused THEN
            work.reason := work.reason OPERATOR(pg_catalog.||) ', resuming the work table of an earlier run';
        END IF;
        total := sorted.keys;
        estimated := false;
        IF total OPERATOR(pg_catalog.>) 0 THEN
            PERFORM @extschema@.idgen_statement_timeout(batch_ms);
            EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) work.fill_sql USING ARRAY[0, 0]::pg_catalog.int8[];
            EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) work.ordered_sql USING ARRAY[0, 0]::pg_catalog.int8[];
            PERFORM @extschema@.idgen_statement_timeout(0);
        END IF;
    ELSE
        SELECT * INTO total, estimated FROM @extschema@.idgen_backfill_count(relation, target_column, plan.remaining_sql);
    END IF;
    PERFORM @extschema@.idgen_backfill_start(relation, target_column, total, estimated, walk, work.reason);
    COMMIT;
    LOOP
        IF walk OPERATOR(pg_catalog.=) 'sorted' THEN
            SELECT * INTO chunk, chunk_keys FROM @extschema@.idgen_backfill_next_chunk(work.work_schema, work.work_name,
                work.signature, sorted_keys);
        END IF;
        IF walk OPERATOR(pg_catalog.=) 'sorted' AND chunk IS NULL THEN
            -- The work table is walked. Rows that came in since its sort with no value (or whose
            -- key changed) are sorted into a new one; when there are none, the run is done.
            IF NOT just_sorted THEN
                PERFORM pg_catalog.set_config('lock_timeout', lock_ms, true);
                PERFORM @extschema@.idgen_backfill_target_check(relation, target);
                SELECT * INTO sorted FROM @extschema@.idgen_backfill_sort(work.work_schema, work.work_name,
                    work.signature, work.probe_sql, work.create_sql, work.sort_sql, false);
                sorted_keys := sorted.keys OPERATOR(pg_catalog.>) 0;
                SELECT * INTO chunk, chunk_keys FROM @extschema@.idgen_backfill_next_chunk(work.work_schema, work.work_name,
                    work.signature, sorted_keys);
                just_sorted := true;
            END IF;
            IF chunk IS NULL THEN
                action := @extschema@.idgen_backfill_step(relation, target_column, 0, 0, true, 0, report_every);
                COMMIT;
                EXIT;
            END IF;
            COMMIT;
        END IF;
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', lock_ms, true);
            PERFORM @extschema@.idgen_statement_timeout(batch_ms);
            filled := 0;
            nulls := 0;
            PERFORM @extschema@.idgen_backfill_target_check(relation, target);
            IF walk OPERATOR(pg_catalog.=) 'sorted' THEN
                SELECT * INTO filled, nulls, last_key FROM @extschema@.idgen_backfill_fill_range(work.work_schema,
                    work.work_name, work.signature, work.fill_sql, work.lock_sql, work.ordered_sql,
                    ARRAY[chunk, LEAST(chunk_keys, batch_size)]);
                PERFORM @extschema@.idgen_backfill_forget(work.work_schema, work.work_name, work.signature,
                    work.forget_sql, ARRAY[chunk, LEAST(chunk_keys, batch_size)]);
            ELSE
                locked := @extschema@.idgen_backfill_lock(plan.lock_sql, cursor_key);
                IF locked IS NOT NULL THEN
                    SELECT * INTO filled, nulls, last_key FROM @extschema@.idgen_backfill_fill(plan.fill_sql, locked);
                END IF;
            END IF;
            PERFORM @extschema@.idgen_statement_timeout(0);
            lock_failures := 0;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM @extschema@.idgen_statement_timeout(0);
            lock_failures := lock_failures OPERATOR(pg_catalog.+) 1;
        END;
        action := @extschema@.idgen_backfill_step(relation, target_column,
            filled, nulls, walk OPERATOR(pg_catalog.<>) 'sorted' AND cursor_key IS NULL, lock_failures, report_every);
        COMMIT;
        IF action OPERATOR(pg_catalog.=) 'retry' THEN
            PERFORM pg_catalog.pg_sleep(0.1);
        ELSIF walk OPERATOR(pg_catalog.=) 'sorted' THEN
            just_sorted := false;
            IF filled OPERATOR(pg_catalog.>) 0 THEN
                PERFORM pg_catalog.pg_sleep_for(pause);
            END IF;
        ELSIF action OPERATOR(pg_catalog.=) 'next' THEN
            cursor_key := last_key;
            PERFORM pg_catalog.pg_sleep_for(pause);
        ELSIF action OPERATOR(pg_catalog.=) 'sweep' THEN
            IF work.work_name IS NOT NULL THEN
                -- The closing sweep of an index walk sorts what is left, rather than walking the
                -- index from the start under one batch's statement_timeout.
                walk := 'sorted';
                just_sorted := false;
            ELSE
                cursor_key := NULL;
            END IF;
        ELSE -- 'done'
            EXIT;
        END IF;
    END LOOP;
    IF work.work_name IS NOT NULL THEN
        PERFORM @extschema@.idgen_backfill_drop_work(work.work_schema, work.work_name, work.signature);
        COMMIT;
    END IF;
END
$$;
COMMENT ON PROCEDURE idgen_backfill(regclass, name, text, integer, text, interval, interval, interval, interval) IS
    'fills target_column with value_expression where it is NULL, in batches walked by order_by or the primary key (an index, else one sort into a work table), one commit per batch; resumable';
-- <<< sql/backfill.sql idgen_backfill

-- A schema whose name needs quoting was quoted twice in the SQL these build (the pool grants of
-- idgen_pool_allow/disallow and idgen_verify, copied above; the Citus check): sql/snowflake.sql
-- >>> sql/snowflake.sql idgen_check_cluster_identities
CREATE OR REPLACE FUNCTION idgen_check_cluster_identities()
    RETURNS TABLE (node text, machine_id integer, worker_id integer)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nodes text[];
    machines integer[];
    workers integer[];
    clash record;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'This checks the nodes of a Citus cluster; on one server, SELECT xid12_current_machine() and SHOW pg_idgen.worker_id.';
    END IF;
    FOR clash IN
        SELECT n.nodename, n.nodeport, r.success, r.result
        FROM run_command_on_all_nodes(format(
            $q$SELECT format('%%s %%s', (get_byte(m, 0) << 16) | (get_byte(m, 1) << 8) | get_byte(m, 2),
                             coalesce(current_setting('pg_idgen.worker_id', true), '-1'))
               FROM (SELECT %s.xid12_current_machine() AS m) s$q$, '@extschema@')) r
        JOIN pg_dist_node n USING (nodeid)
        ORDER BY n.nodename, n.nodeport
    LOOP
        IF NOT clash.success THEN
            RAISE EXCEPTION 'cannot ask node %:% for its ids', clash.nodename, clash.nodeport
                USING ERRCODE = 'connection_failure', DETAIL = clash.result;
        END IF;
        nodes := nodes || format('%s:%s', clash.nodename, clash.nodeport);
        machines := machines || split_part(clash.result, ' ', 1)::integer;
        workers := workers || split_part(clash.result, ' ', 2)::integer;
    END LOOP;
    FOR clash IN
        WITH i(node, machine_id, worker_id) AS (SELECT * FROM unnest(nodes, machines, workers))
        SELECT 'pg_idgen.machine_id' AS setting, 'machine id' AS what, i.machine_id AS id,
               string_agg(i.node, ' and ' ORDER BY i.node) AS sharing
        FROM i GROUP BY i.machine_id HAVING count(*) > 1
        UNION ALL
        SELECT 'pg_idgen.worker_id', 'worker id', i.worker_id, string_agg(i.node, ' and ' ORDER BY i.node)
        FROM i WHERE i.worker_id >= 0 GROUP BY i.worker_id HAVING count(*) > 1
    LOOP
        RAISE EXCEPTION 'nodes % share the % %', clash.sharing, clash.what, clash.id
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Two nodes with the same %s can make equal ids.', clash.what),
                  HINT = format('Set %s to a different value on each node (postgresql.conf or ALTER SYSTEM, then reload).', clash.setting);
    END LOOP;
    -- On the coordinator, each node's ids are reserved in the writer registry (sql/registry.sql),
    -- so that idgen_acquire never grants them to an application; ids already reserved stay so.
    IF citus_is_coordinator() THEN
        FOR i IN 1 .. coalesce(array_length(nodes, 1), 0) LOOP
            PERFORM @extschema@.idgen_registry_reserve('xid12', machines[i], format('Citus node %s', nodes[i]), true);
            IF workers[i] >= 0 THEN
                PERFORM @extschema@.idgen_registry_reserve('snowflake', workers[i], format('Citus node %s', nodes[i]), true);
            END IF;
        END LOOP;
    END IF;
    RETURN QUERY SELECT * FROM unnest(nodes, machines, workers);
END
$$;
COMMENT ON FUNCTION idgen_check_cluster_identities() IS 'Citus: every node''s effective xid12 machine id and Snowflake worker id; an error when two nodes share one; on the coordinator, reserves them in the writer registry';
-- <<< sql/snowflake.sql idgen_check_cluster_identities

-- No role stops another's backfill (issue 44): sql/backfill.sql ---------------------------------
-- UPDATE of the progress columns only, no DELETE: LOCK TABLE on it in SHARE mode or stronger is
-- refused to all but its owner.
REVOKE UPDATE, DELETE ON idgen_backfill_progress FROM PUBLIC;
GRANT UPDATE (pid, started_at, updated_at, reported_at, finished_at, batches, rows_done, rows_total,
              rows_per_second, eta, walk, rows_total_estimated) ON idgen_backfill_progress TO PUBLIC;

-- A backfill's work table needs no USAGE on a domain key's type (issue 44): sql/backfill.sql ------
-- >>> sql/backfill.sql idgen_backfill_work_plan
CREATE OR REPLACE FUNCTION idgen_backfill_work_plan(relation regclass, target_column name, value_expression text,
        order_by text, batch_size integer,
        OUT walk text, OUT reason text, OUT work_schema name, OUT work_name name, OUT signature text,
        OUT probe_sql text, OUT create_sql text, OUT sort_sql text, OUT fill_sql text,
        OUT lock_sql text, OUT ordered_sql text, OUT forget_sql text)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind "char";
    persistence "char";
    schema_name name;
    rel_name name;
    qualified text;
    work text;
    target text := quote_ident(target_column);
    pk name[];
    keys name[];
    index_name name;
    key_list text;
    columns text;
    sorted_list text;
    chunk_list text;
    rows_from text;
    join_cond text;
    update_cond text;
    key_aliases text;
    trim_list text;
    denied_type text;
BEGIN
    SELECT c.relkind, c.relpersistence, n.nspname, c.relname, format('%I.%I', n.nspname, c.relname)
    INTO kind, persistence, schema_name, rel_name, qualified
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
    SELECT array_agg(a.attname ORDER BY k.n) INTO pk
    FROM pg_index x
    CROSS JOIN LATERAL unnest(x.indkey::smallint[]) WITH ORDINALITY AS k(attnum, n)
    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
    WHERE x.indrelid = relation AND x.indisprimary;
    IF order_by IS NULL THEN
        keys := pk;
    ELSE
        keys := ARRAY[order_by::name] || array(SELECT c FROM unnest(pk) c WHERE c <> order_by);
    END IF;
    SELECT i.relname INTO index_name
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_am am ON am.oid = i.relam AND am.amname = 'btree'
    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
    WHERE x.indrelid = relation AND a.attname = keys[1] AND x.indisvalid AND x.indpred IS NULL
    ORDER BY i.relname LIMIT 1;

    IF kind = 'r' AND index_name IS NOT NULL THEN
        walk := 'index';
        reason := format('index %I leads with %I', index_name, keys[1]);
    ELSIF pk IS NULL THEN
        IF kind = 'p' THEN
            RAISE EXCEPTION 'partitioned table "%" has no primary key to walk its partitions by', relation::text
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Add a primary key, or call idgen_backfill for each partition.';
        END IF;
        walk := 'scan';
        reason := format('no index leads with %I and there is no primary key to sort by: each batch reads the whole table', keys[1]);
        RAISE WARNING 'no index on "%" leads with column "%": each batch of idgen_backfill will read the whole table', relation::text, keys[1]
            USING HINT = format('Create one first: CREATE INDEX CONCURRENTLY ON %s (%I);', relation::text, keys[1]);
    ELSE
        walk := 'sorted';
        reason := CASE WHEN kind = 'p' THEN 'partitioned table: one sort over every partition'
                       ELSE format('no index leads with %I', keys[1]) END;
    END IF;
    IF pk IS NULL THEN
        RETURN; -- no work table: the sweep walks again from the start
    END IF;

    work_name := format('idgen_backfill_%s_%s', relation::oid, @extschema@.idgen_backfill_column(relation, target_column));
    IF persistence = 't' OR NOT has_schema_privilege(schema_name, 'CREATE') THEN
        work_schema := 'pg_temp';
        work := format('pg_temp.%I', work_name);
        create_sql := 'CREATE TEMPORARY TABLE ' || work;
        IF walk = 'sorted' THEN
            reason := reason || CASE WHEN persistence = 't' THEN ', work table temporary as the table is'
                ELSE format(', work table temporary: no CREATE on schema %I, so a run resumed in another session sorts again', schema_name) END;
        END IF;
    ELSE
        work_schema := schema_name;
        work := format('%I.%I', schema_name, work_name);
        create_sql := 'CREATE UNLOGGED TABLE ' || work;
    END IF;
    -- The work table is the caller's, so it needs USAGE on its columns' types: a domain's keys
    -- are kept as its base type (rapkey's as text COLLATE "C"); any other type the caller may not
    -- use is an error now, before the first batch, not when a sort or the closing sweep makes it.
    SELECT format_type(b.base, NULL) INTO denied_type
    FROM unnest(pk) AS k(col)
    JOIN pg_attribute a ON a.attrelid = relation AND a.attname = k.col
    CROSS JOIN LATERAL (SELECT @extschema@.idgen_backfill_base_type(a.atttypid) AS base) b
    WHERE NOT has_type_privilege(b.base, 'USAGE') LIMIT 1;
    IF denied_type IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied for type %', denied_type
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'idgen_backfill keeps the primary keys it has still to walk in a work table of the caller''s, with a column of that type.',
                  HINT = format('The type''s owner can grant it: GRANT USAGE ON TYPE %s TO %I;', denied_type, current_user);
    END IF;
    signature := format('idgen_backfill work table of relation %s column %s, walk (%s), chunks of primary keys',
        relation::oid, target_column, array_to_string(keys, ', '));

    SELECT string_agg(quote_ident(k), ', ' ORDER BY n) INTO key_list FROM unnest(keys) WITH ORDINALITY AS u(k, n);
    SELECT string_agg(format('idgen_k%s %s[]%s NOT NULL', k.n,
                             format_type(t.oid, CASE WHEN t.oid = a.atttypid THEN a.atttypmod ELSE -1 END),
                             CASE WHEN a.attcollation <> t.typcollation
                                  THEN (SELECT format(' COLLATE %I.%I', cn.nspname, co.collname)
                                        FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                                        WHERE co.oid = a.attcollation) ELSE '' END), ', ' ORDER BY k.n),
           string_agg(format('%I AS idgen_k%s', k.col, k.n), ', ' ORDER BY k.n),
           string_agg(format('pg_catalog.array_agg(idgen_k%s ORDER BY idgen_n)', k.n), ', ' ORDER BY k.n),
           string_agg(format('pg_catalog.unnest((SELECT idgen_chunk.idgen_k%s[1:($1)[2]::pg_catalog.int4] FROM %s AS idgen_chunk WHERE idgen_chunk.idgen_chunk OPERATOR(pg_catalog.=) ($1)[1]))',
                             k.n, work), ', ' ORDER BY k.n),
           string_agg(format('%s.%I %s idgen_work.idgen_k%s', qualified, k.col,
                             @extschema@.idgen_backfill_operator(a.atttypid, 3), k.n), ' AND ' ORDER BY k.n),
           string_agg(format('%s.%I %s idgen_valued.idgen_k%s', qualified, k.col,
                             @extschema@.idgen_backfill_operator(a.atttypid, 3), k.n), ' AND ' ORDER BY k.n),
           string_agg(format('%s.%I AS idgen_k%s', qualified, k.col, k.n), ', ' ORDER BY k.n),
           string_agg(format('idgen_k%1$s = idgen_k%1$s[($1)[2]::pg_catalog.int4 OPERATOR(pg_catalog.+) 1:]', k.n), ', ' ORDER BY k.n)
    INTO columns, sorted_list, chunk_list, rows_from, join_cond, update_cond, key_aliases, trim_list
    FROM unnest(pk) WITH ORDINALITY AS k(col, n)
    JOIN pg_attribute a ON a.attrelid = relation AND a.attname = k.col
    JOIN pg_type t ON t.oid = @extschema@.idgen_backfill_base_type(a.atttypid);
    rows_from := format('ROWS FROM (%s) WITH ORDINALITY AS idgen_work(%s, idgen_n)', rows_from,
        (SELECT string_agg(format('idgen_k%s', n), ', ' ORDER BY n) FROM generate_subscripts(pk, 1) n));

    probe_sql := format('SELECT EXISTS (SELECT FROM %s WHERE %s IS NULL)', qualified, target);
    create_sql := format('%s (idgen_chunk pg_catalog.int8 PRIMARY KEY, %s)', create_sql, columns);
    sort_sql := format($sql$
INSERT INTO %1$s
SELECT (idgen_n OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog./) %2$s, %3$s
FROM (SELECT pg_catalog.row_number() OVER (ORDER BY %4$s) AS idgen_n, %5$s FROM %6$s WHERE %7$s IS NULL) idgen_sorted
GROUP BY 1$sql$,
        work, batch_size, chunk_list, key_list, sorted_list, qualified, target);
    fill_sql := format($sql$
WITH idgen_updated AS (
    UPDATE %1$s SET %2$s = (%3$s) FROM %4$s
    WHERE %5$s AND %1$s.%2$s IS NULL
    RETURNING idgen_work.idgen_n, %1$s.%2$s IS NULL AS idgen_null
), idgen_checked AS (
    SELECT idgen_null, idgen_n OPERATOR(pg_catalog.<) pg_catalog.lag(idgen_n) OVER () AS idgen_back FROM idgen_updated
)
SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE idgen_null), pg_catalog.count(*) FILTER (WHERE idgen_back)
FROM idgen_checked$sql$,
        qualified, target, value_expression, rows_from, join_cond);
    lock_sql := format($sql$
SELECT pg_catalog.count(*) FROM (
    SELECT FROM %1$s JOIN %2$s ON %3$s
    WHERE %2$s.%4$s IS NULL
    ORDER BY idgen_work.idgen_n
    FOR NO KEY UPDATE OF %5$I) idgen_locked$sql$,
        rows_from, qualified, join_cond, target, rel_name);
    ordered_sql := format($sql$
WITH idgen_valued AS MATERIALIZED (
    SELECT idgen_work.idgen_n, (%3$s) AS idgen_value, %4$s
    FROM %5$s JOIN %1$s ON %6$s
    WHERE %1$s.%2$s IS NULL
    ORDER BY idgen_work.idgen_n
), idgen_updated AS (
    UPDATE %1$s SET %2$s = idgen_valued.idgen_value FROM idgen_valued WHERE %7$s
    RETURNING 1
)
SELECT (SELECT pg_catalog.count(*) FROM idgen_updated),
       (SELECT pg_catalog.count(*) FROM idgen_valued WHERE idgen_value IS NULL),
       0::pg_catalog.int8$sql$,
        qualified, target, value_expression, key_aliases, rows_from, join_cond, update_cond);
    forget_sql := format($sql$
WITH idgen_walked AS (
    DELETE FROM %1$s WHERE idgen_chunk OPERATOR(pg_catalog.=) ($1)[1]
        AND pg_catalog.cardinality(idgen_k1) OPERATOR(pg_catalog.<=) ($1)[2]
)
UPDATE %1$s SET %2$s
WHERE idgen_chunk OPERATOR(pg_catalog.=) ($1)[1] AND pg_catalog.cardinality(idgen_k1) OPERATOR(pg_catalog.>) ($1)[2]$sql$,
        work, trim_list);
END
$$;
COMMENT ON FUNCTION idgen_backfill_work_plan(regclass, name, text, text, integer) IS 'internal: how a backfill walks the table, and the sorted walk''s statements on its work table (42501 when the caller may not use a key''s type)';
-- <<< sql/backfill.sql idgen_backfill_work_plan

-- Nobody plants operators on the types (issue 44): sql/xid12.sql, sql/rapkey.sql ----------------
-- USAGE on xid12 and rapkey leaves PUBLIC. The roles that own a table, view or function using
-- them need it for their next ALTER TABLE ... ADD COLUMN or CREATE FUNCTION with the types: the
-- update names them in a WARNING with the GRANT to run. It does not grant it itself: a GRANT
-- made by an extension script is recorded as the extension's initial privilege, which pg_dump
-- leaves out, so a restore would lose it.
REVOKE USAGE ON TYPE xid12 FROM PUBLIC;
REVOKE USAGE ON DOMAIN rapkey FROM PUBLIC;
DO $$
DECLARE
    grants text;
BEGIN
    SELECT pg_catalog.string_agg(pg_catalog.format('GRANT USAGE ON TYPE %s TO %s;', t, r), ' ' ORDER BY t::text, r::text)
    INTO grants
    FROM (
        SELECT DISTINCT ty.oid::pg_catalog.regtype AS t, o.owner::pg_catalog.regrole AS r
        FROM pg_catalog.pg_type ty
        CROSS JOIN LATERAL (
            SELECT c.relowner FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
            WHERE a.atttypid IN (ty.oid, ty.typarray) AND NOT a.attisdropped
            UNION
            SELECT p.proowner FROM pg_catalog.pg_proc p
            WHERE p.prorettype IN (ty.oid, ty.typarray) OR ty.oid = ANY (p.proargtypes::oid[])
                  OR ty.typarray = ANY (p.proargtypes::oid[])
        ) AS o(owner)
        WHERE ty.oid IN ('@extschema@.xid12'::pg_catalog.regtype, '@extschema@.rapkey'::pg_catalog.regtype)
          AND NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE oid = o.owner)
          AND o.owner <> (SELECT extowner FROM pg_catalog.pg_extension WHERE extname = 'pg_idgen')
    ) AS users;
    IF grants IS NOT NULL THEN
        RAISE WARNING 'pg_idgen 0.7.0: PUBLIC no longer has USAGE on the types xid12 and rapkey; roles that own objects using them need it to create more'
            USING DETAIL = 'Without USAGE on a type, a role cannot create a column, function or operator of it; values, casts and existing columns need none.',
                  HINT = 'Run, as the types'' owner: ' || grants;
    END IF;
END
$$;

-- As at the end of a fresh install (sql/registry.sql): the registry's origin, recorded now (a
-- registry that 0.6.0 never used has none yet; one on a new timeline or cluster is fenced now).
SELECT @extschema@.idgen_registry_check_origin();
