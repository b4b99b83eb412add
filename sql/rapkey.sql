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
    INSERT INTO @extschema@.rapkey_counter AS c (prefix, last_value) VALUES (p, 1)
    ON CONFLICT ON CONSTRAINT rapkey_counter_pkey DO UPDATE SET last_value = c.last_value + 1
    RETURNING c.last_value INTO n;
    RETURN @extschema@.rapkey_build(split_part(p, '.', 1),
        VARIADIC (string_to_array(p, '.'))[2:] || n::text);
END
$$;
COMMENT ON FUNCTION rapkey_next(text) IS 'the next key under a prefix: prefix.N-c, N counting from 1 per prefix';
