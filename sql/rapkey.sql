-- rapkey: readable semantic keys (ord.cn.sh.202407.8842-2) with a Damm check character.

CREATE FUNCTION rapkey_is_valid(text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'rapkey_is_valid_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION rapkey_is_valid(text) IS 'whether the text is a valid rapkey (grammar and check character); never errors';

-- Used by the domain: true, or PostgreSQL's domain CHECK error (23514, with the constraint,
-- type and schema names) whose DETAIL says what is wrong.
CREATE FUNCTION rapkey_domain_check(text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'rapkey_domain_check_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- COLLATE "C": byte order, so prefix ranges and LIKE 'prefix%' scan the index in any database.
CREATE DOMAIN rapkey AS text COLLATE "C"
    CONSTRAINT rapkey_check CHECK (rapkey_domain_check(VALUE));
COMMENT ON DOMAIN rapkey IS 'semantic key type.seg[.seg…]-c checked by a Damm check character';
-- As xid12 (sql/xid12.sql): an exact =(rapkey, rapkey) found anywhere on a caller's search_path
-- wins over pg_catalog's text = text, so only the roles the owner grants USAGE may create one.
REVOKE USAGE ON DOMAIN rapkey FROM PUBLIC;

CREATE FUNCTION rapkey_check_char(body text) RETURNS text
    AS 'MODULE_PATHNAME', 'rapkey_check_char_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION rapkey_build(type text, VARIADIC segments text[]) RETURNS rapkey
    AS 'MODULE_PATHNAME', 'rapkey_build_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION to_rapkey(text) RETURNS rapkey
    AS 'MODULE_PATHNAME', 'to_rapkey_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rapkey_type(rapkey) RETURNS text
    AS 'MODULE_PATHNAME', 'rapkey_type_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION rapkey_segments(rapkey) RETURNS text[]
    AS 'MODULE_PATHNAME', 'rapkey_segments_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION rapkey_segment(rapkey, integer) RETURNS text
    AS 'MODULE_PATHNAME', 'rapkey_segment_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Prefix ranges: key >= rapkey_prefix_lo(p) AND key < rapkey_prefix_hi(p) holds exactly for
-- the keys under the prefix p (a type, or type.seg1[.seg2…] of whole parts).
CREATE FUNCTION rapkey_prefix_lo(prefix text) RETURNS text
    AS 'MODULE_PATHNAME', 'rapkey_prefix_lo_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION rapkey_prefix_hi(prefix text) RETURNS text
    AS 'MODULE_PATHNAME', 'rapkey_prefix_hi_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- Inlined by the planner into the range above, so it can use an index on key (inlining
-- needs it not to be STRICT; a NULL argument still gives NULL). A RETURN body is parsed when
-- it is created, so the caller's search_path cannot swap in other operators or functions.
CREATE FUNCTION rapkey_has_prefix(key rapkey, prefix text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN key OPERATOR(pg_catalog.>=) @extschema@.rapkey_prefix_lo(prefix)
       AND key OPERATOR(pg_catalog.<) @extschema@.rapkey_prefix_hi(prefix);

-- Per-prefix sequence numbers ---------------------------------------------------------------
-- The last number handed out under each prefix. A transaction that takes a number holds the
-- prefix's row lock until it ends, so committed numbers are unique and contiguous.

CREATE FUNCTION rapkey_normalize_prefix(prefix text) RETURNS text
    AS 'MODULE_PATHNAME', 'rapkey_normalize_prefix_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TABLE rapkey_counter (
    prefix text COLLATE "C" PRIMARY KEY,
    last_value bigint NOT NULL CHECK (last_value > 0)
);
SELECT pg_catalog.pg_extension_config_dump('rapkey_counter', '');

-- PL/pgSQL resolves names when it runs: it runs with a fixed search_path.
CREATE FUNCTION rapkey_next(prefix text) RETURNS rapkey
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p text := @extschema@.rapkey_normalize_prefix(prefix);
    n bigint;
BEGIN
    -- On a Citus cluster every node has its own counter until rapkey_counter_distribute() makes
    -- it one reference table: the nodes would hand out the same numbers, so that is refused.
    -- (Nested: Citus's catalogs are named only where Citus is installed.)
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        IF (SELECT count(*) FROM pg_dist_node WHERE noderole = 'primary') > 1
           AND NOT EXISTS (SELECT FROM pg_dist_partition
                           WHERE logicalrelid = '@extschema@.rapkey_counter'::regclass) THEN
            RAISE EXCEPTION 'rapkey_counter is not shared by this Citus cluster yet'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'Each node would count on its own and hand out the same keys.',
                      HINT = 'Run SELECT rapkey_counter_distribute() once on the coordinator.';
        END IF;
    END IF;
    INSERT INTO @extschema@.rapkey_counter AS c (prefix, last_value) VALUES (p, 1)
    ON CONFLICT ON CONSTRAINT rapkey_counter_pkey DO UPDATE SET last_value = c.last_value + 1
    RETURNING c.last_value INTO n;
    RETURN @extschema@.rapkey_build(split_part(p, '.', 1),
        VARIADIC (string_to_array(p, '.'))[2:] || n::text);
END
$$;
COMMENT ON FUNCTION rapkey_next(text) IS 'the next key under a prefix: prefix.N-c, N counting from 1 per prefix';

-- Citus: one counter for the whole cluster ---------------------------------------------------
-- On a Citus cluster every node has its own rapkey_counter, so every node would hand out the
-- same numbers. Called once on the coordinator, this makes rapkey_counter a Citus reference
-- table: rapkey_next, unchanged, then increments the one row of its prefix on every node, from
-- whichever node it is called, holding that row's lock until the transaction ends (so the
-- numbers stay unique and gapless across the cluster, at the cost of a distributed write and
-- two-phase commit per call). Numbers the nodes' own counters already handed out are kept:
-- each prefix starts after the highest of them. Run it before the workers hand out keys, or
-- while they do not. Without Citus it is an error (there is nothing to share).
CREATE FUNCTION rapkey_counter_distribute() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    counter regclass := '@extschema@.rapkey_counter'::regclass;
    node record;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Without Citus, rapkey_counter is already the one counter of this database.';
    END IF;
    IF EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = counter) THEN
        RAISE NOTICE 'rapkey_counter is already shared by the cluster';
        RETURN;
    END IF;
    IF NOT citus_is_coordinator() THEN
        RAISE EXCEPTION 'rapkey_counter_distribute() runs on the coordinator'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    LOCK TABLE @extschema@.rapkey_counter IN EXCLUSIVE MODE;
    FOR node IN
        SELECT * FROM run_command_on_workers(format(
            'SELECT coalesce(json_agg(json_build_array(prefix, last_value)), ''[]'') FROM %s', counter))
    LOOP
        IF NOT node.success THEN
            RAISE EXCEPTION 'cannot read rapkey_counter on node %:%', node.nodename, node.nodeport
                USING ERRCODE = 'connection_failure', DETAIL = node.result;
        END IF;
        INSERT INTO @extschema@.rapkey_counter AS c (prefix, last_value)
            SELECT e->>0, (e->>1)::bigint FROM json_array_elements(node.result::json) e
        ON CONFLICT ON CONSTRAINT rapkey_counter_pkey
            DO UPDATE SET last_value = greatest(c.last_value, excluded.last_value);
    END LOOP;
    PERFORM create_reference_table(counter);
END
$$;
COMMENT ON FUNCTION rapkey_counter_distribute() IS 'Citus: makes rapkey_counter one counter shared by every node (a reference table), so that rapkey_next is unique across the cluster';
