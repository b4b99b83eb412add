-- rapkey: readable keys type.seg[.seg…]-c with a Damm check character (docs/formats.md §3-§4).
-- The checks run in the order native's run, so that the first fault named is native's, in
-- native's words.

-- What is wrong with one part (the type, or segment n), or NULL. lower is the part as checked,
-- orig as the message shows it (build and prefix trim and lowercase first).
CREATE FUNCTION @extschema@.idgen_rapkey_part_error(n integer, lower text, orig text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ok integer;
    len integer := char_length(lower);
BEGIN
    IF n = 0 THEN
        ok := char_length(substring(lower FROM '^[a-z]*'));
        IF ok < len THEN
            RETURN format('Type %s has a character outside [a-z]: %s at position %s.',
                          @extschema@.idgen_quoted(orig),
                          @extschema@.idgen_shown_char(substr(orig, ok + 1, 1)), ok + 1);
        ELSIF len = 0 THEN
            RETURN 'Type is empty.';
        ELSIF len NOT BETWEEN 2 AND 8 THEN
            RETURN format('Type %s is too %s: %s letter%s (a type has 2 to 8 letters).',
                          @extschema@.idgen_quoted(orig),
                          CASE WHEN len < 2 THEN 'short' ELSE 'long' END, len,
                          CASE WHEN len = 1 THEN '' ELSE 's' END);
        END IF;
        RETURN NULL;
    END IF;
    IF len = 0 THEN
        RETURN format('Segment %s is empty.', n);
    END IF;
    ok := char_length(substring(lower FROM '^[a-z0-9]*'));
    IF ok < len THEN
        RETURN format('Segment %s %s has a character outside [a-z0-9]: %s at position %s.',
                      n, @extschema@.idgen_quoted(orig),
                      @extschema@.idgen_shown_char(substr(orig, ok + 1, 1)), ok + 1);
    ELSIF len > 32 THEN
        RETURN format('Segment %s %s is too long: %s characters (at most 32).',
                      n, @extschema@.idgen_quoted(orig), len);
    END IF;
    RETURN NULL;
END
$$;

-- What is wrong with a body (type and segments, no check character), or NULL.
CREATE FUNCTION @extschema@.idgen_rapkey_body_error(body text, need_segment boolean) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[] := regexp_split_to_array(body, '\.');
    n integer := cardinality(parts) - 1;
    problem text;
BEGIN
    problem := @extschema@.idgen_rapkey_part_error(0, parts[1], parts[1]);
    IF problem IS NOT NULL THEN
        RETURN problem;
    END IF;
    FOR i IN 1 .. n LOOP
        IF i > 5 THEN
            RETURN format('Too many segments: %s (at most 5).', n);
        END IF;
        problem := @extschema@.idgen_rapkey_part_error(i, parts[i + 1], parts[i + 1]);
        IF problem IS NOT NULL THEN
            RETURN problem;
        END IF;
    END LOOP;
    IF n = 0 AND need_segment THEN
        RETURN format('Type %s must be followed by at least one segment.', @extschema@.idgen_quoted(parts[1]));
    END IF;
    RETURN NULL;
END
$$;

-- Damm's interim value over a valid body: x ∘ y = 2·(x − y) mod 37, digits 0-9, letters
-- 10-35, '.' 36.
CREATE FUNCTION @extschema@.idgen_rapkey_damm(body text) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i integer := 0;
    c integer;
BEGIN
    FOR k IN 1 .. char_length(body) LOOP
        c := ascii(substr(body, k, 1));
        c := CASE WHEN c = 46 THEN 36 WHEN c <= 57 THEN c - 48 ELSE c - 87 END;
        i := (2 * (i - c + 37)) % 37;
    END LOOP;
    RETURN i;
END
$$;

-- What is wrong with a key, or NULL (strict: no trimming or lowercasing).
CREATE FUNCTION @extschema@.idgen_rapkey_key_error(key text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cut integer;
    body text;
    check_part text;
    problem text;
    value integer;
    interim integer;
BEGIN
    IF key = '' THEN
        RETURN 'Key is empty.';
    ELSIF char_length(key) > 128 THEN
        RETURN format('Key is too long: %s characters (at most 128).', char_length(key));
    END IF;
    cut := char_length(key) - strpos(reverse(key), '-') + 1;
    IF strpos(key, '-') = 0 THEN
        RETURN 'Missing ''-'' before the check character.';
    END IF;
    body := left(key, cut - 1);
    check_part := substr(key, cut + 1);
    problem := @extschema@.idgen_rapkey_body_error(body, true);
    IF problem IS NOT NULL THEN
        RETURN problem;
    ELSIF check_part = '' THEN
        RETURN 'Missing check character after ''-''.';
    ELSIF char_length(check_part) > 1 THEN
        RETURN format('Expected one check character after ''-'', found %s.', @extschema@.idgen_quoted(check_part));
    END IF;
    value := strpos('0123456789abcdefghijklmnopqrstuvwxyz~', check_part) - 1;
    IF value < 0 THEN
        RETURN format('Check character %s is not one of [0-9a-z~].', @extschema@.idgen_shown_char(check_part));
    END IF;
    interim := @extschema@.idgen_rapkey_damm(body);
    IF interim <> value THEN
        RETURN format('Wrong check character: expected ''%s'', found %s.',
                      substr('0123456789abcdefghijklmnopqrstuvwxyz~', interim + 1, 1),
                      @extschema@.idgen_shown_char(check_part));
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION @extschema@.rapkey_is_valid(key text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@.idgen_rapkey_key_error(key) IS NULL;
COMMENT ON FUNCTION @extschema@.rapkey_is_valid(text) IS 'whether the text is a valid rapkey (grammar and check character); never errors';

-- The domain's check: true, or native's 23514 whose DETAIL says what is wrong, with native's
-- HINT on the grammar unless only the check character is wrong (docs/formats.md §3-§4). The
-- message names the domain's CHECK constraint that calls this function, as the catalog has it
-- (renamed or not), and carries the names PostgreSQL's own domain errors carry.
CREATE FUNCTION @extschema@.rapkey_domain_check(key text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    problem text := @extschema@.idgen_rapkey_key_error(key);
    detail text;
    hint text;
    schema_name text;
    constraint_name text;
BEGIN
    IF problem IS NULL THEN
        RETURN true;
    END IF;
    detail := @extschema@.idgen_quoted(key) || ': ' || problem;
    IF NOT starts_with(problem, 'Wrong check character: ') THEN
        hint := 'A rapkey is type.segment[.segment...]-c: a type of 2 to 8 letters, 1 to 5 segments of [a-z0-9], and a check character.';
    END IF;
    SELECT n.nspname INTO schema_name
      FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE t.oid = '@extschema@.rapkey'::regtype;
    SELECT c.conname INTO constraint_name
      FROM pg_constraint c
     WHERE c.contypid = '@extschema@.rapkey'::regtype AND c.contype = 'c'
       AND EXISTS (SELECT FROM pg_depend d
                    WHERE d.classid = 'pg_constraint'::regclass AND d.objid = c.oid
                      AND d.refclassid = 'pg_proc'::regclass
                      AND d.refobjid = '@extschema@.rapkey_domain_check(text)'::regprocedure)
     ORDER BY c.conname
     LIMIT 1;
    -- RAISE takes no NULL option (and an empty HINT would still be shown): four forms.
    IF constraint_name IS NULL AND hint IS NULL THEN
        RAISE EXCEPTION 'value for domain rapkey violates check constraint'
            USING ERRCODE = 'check_violation', DETAIL = detail, SCHEMA = schema_name, DATATYPE = 'rapkey';
    ELSIF constraint_name IS NULL THEN
        RAISE EXCEPTION 'value for domain rapkey violates check constraint'
            USING ERRCODE = 'check_violation', DETAIL = detail, HINT = hint, SCHEMA = schema_name,
                  DATATYPE = 'rapkey';
    ELSIF hint IS NULL THEN
        RAISE EXCEPTION 'value for domain rapkey violates check constraint "%"', constraint_name
            USING ERRCODE = 'check_violation', DETAIL = detail, SCHEMA = schema_name,
                  DATATYPE = 'rapkey', CONSTRAINT = constraint_name;
    END IF;
    RAISE EXCEPTION 'value for domain rapkey violates check constraint "%"', constraint_name
        USING ERRCODE = 'check_violation', DETAIL = detail, HINT = hint, SCHEMA = schema_name,
              DATATYPE = 'rapkey', CONSTRAINT = constraint_name;
END
$$;

CREATE DOMAIN @extschema@.rapkey AS text COLLATE "C"
    CONSTRAINT rapkey_check CHECK (@extschema@.rapkey_domain_check(VALUE));
COMMENT ON DOMAIN @extschema@.rapkey IS 'semantic key type.seg[.seg…]-c checked by a Damm check character';
-- As for xid12 (20_xid12.sql): no role the owner did not name may create an operator or a
-- function on the type. It has no operators of its own, as native's domain has none: `key =
-- '…'` is text's comparison (0 rows for an invalid key, as native), and no other exact match
-- can exist.
REVOKE USAGE ON DOMAIN @extschema@.rapkey FROM PUBLIC;

CREATE FUNCTION @extschema@.rapkey_check_char(body text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    problem text;
BEGIN
    IF char_length(body) > 126 THEN
        problem := format('Body is too long: %s characters (at most 126, leaving room for ''-'' and the check character).', char_length(body));
    ELSE
        problem := @extschema@.idgen_rapkey_body_error(body, true);
    END IF;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid rapkey body' USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
    END IF;
    RETURN substr('0123456789abcdefghijklmnopqrstuvwxyz~', @extschema@.idgen_rapkey_damm(body) + 1, 1);
END
$$;

CREATE FUNCTION @extschema@.rapkey_build(type text, VARIADIC segments text[]) RETURNS @extschema@.rapkey
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    orig text := @extschema@.idgen_trim(type);
    body text := @extschema@.idgen_ascii_lower(orig);
    n integer := coalesce(cardinality(segments), 0);
    problem text;
BEGIN
    -- Segments are counted from 1 in the order given, whatever the array's bounds (as native).
    IF array_lower(segments, 1) <> 1 OR array_ndims(segments) > 1 THEN
        segments := ARRAY(SELECT unnest(segments));
    END IF;
    -- A NULL segment is native's first check, before the type's.
    IF array_position(segments, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'rapkey segment % is NULL', array_position(segments, NULL)
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    problem := @extschema@.idgen_rapkey_part_error(0, body, orig);
    IF problem IS NULL AND n > 5 THEN
        problem := format('Too many segments: %s (at most 5).', n);
    ELSIF problem IS NULL AND n = 0 THEN
        problem := format('Type %s must be followed by at least one segment.', @extschema@.idgen_quoted(body));
    END IF;
    FOR i IN 1 .. n LOOP
        EXIT WHEN problem IS NOT NULL;
        orig := @extschema@.idgen_trim(segments[i]);
        problem := @extschema@.idgen_rapkey_part_error(i, @extschema@.idgen_ascii_lower(orig), orig);
        body := body || '.' || @extschema@.idgen_ascii_lower(orig);
    END LOOP;
    IF problem IS NULL AND char_length(body) > 126 THEN
        problem := format('Body is too long: %s characters (at most 126, leaving room for ''-'' and the check character).', char_length(body));
    END IF;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid rapkey part' USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
    END IF;
    RETURN body || '-' || substr('0123456789abcdefghijklmnopqrstuvwxyz~', @extschema@.idgen_rapkey_damm(body) + 1, 1);
END
$$;

CREATE FUNCTION @extschema@.to_rapkey(input text) RETURNS @extschema@.rapkey
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    key text := @extschema@.idgen_ascii_lower(@extschema@.idgen_trim(input));
    problem text := @extschema@.idgen_rapkey_key_error(key);
BEGIN
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid input syntax for type rapkey: %', @extschema@.idgen_quoted(input)
            USING ERRCODE = 'invalid_text_representation', DETAIL = problem;
    END IF;
    RETURN key;
END
$$;

CREATE FUNCTION @extschema@.rapkey_type(key @extschema@.rapkey) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN split_part(key, '.', 1);

CREATE FUNCTION @extschema@.rapkey_segments(key @extschema@.rapkey) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (string_to_array(left(key, -2), '.'))[2:];

-- Segment n (from 1), NULL for 0, a negative n or past the last one (as native).
CREATE FUNCTION @extschema@.rapkey_segment(key @extschema@.rapkey, n integer) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN n BETWEEN 1 AND 5 THEN (string_to_array(left(key, -2), '.'))[n + 1] END;

-- A prefix, trimmed and lowercased, or native's 22023 "invalid rapkey prefix".
CREATE FUNCTION @extschema@.idgen_rapkey_prefix(prefix text, numbered boolean) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p text := @extschema@.idgen_ascii_lower(@extschema@.idgen_trim(prefix));
    problem text := @extschema@.idgen_rapkey_body_error(p, false);
BEGIN
    IF problem IS NULL AND char_length(p) > 126 THEN
        problem := format('Body is too long: %s characters (at most 126, leaving room for ''-'' and the check character).', char_length(p));
    END IF;
    IF problem IS NULL AND numbered AND char_length(p) - char_length(replace(p, '.', '')) >= 5 THEN
        problem := 'The prefix already has 5 segments, the most a key has, so a number cannot be added to it.';
    END IF;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid rapkey prefix' USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
    END IF;
    RETURN p;
END
$$;

CREATE FUNCTION @extschema@.rapkey_prefix_lo(prefix text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@.idgen_rapkey_prefix(prefix, false) || '-';

CREATE FUNCTION @extschema@.rapkey_prefix_hi(prefix text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@.idgen_rapkey_prefix(prefix, false) || '/';

CREATE FUNCTION @extschema@.rapkey_normalize_prefix(prefix text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@.idgen_rapkey_prefix(prefix, true);

-- Inlined by the planner into a range an index on key serves (not STRICT, so that it inlines).
CREATE FUNCTION @extschema@.rapkey_has_prefix(key @extschema@.rapkey, prefix text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN key >= @extschema@.rapkey_prefix_lo(prefix) AND key < @extschema@.rapkey_prefix_hi(prefix);

-- Per-prefix numbers: the last number handed out under each prefix. A transaction that takes
-- a number holds the prefix's row lock until it ends: committed numbers are unique and
-- contiguous (as native).
CREATE TABLE @extschema@.rapkey_counter (
    prefix text COLLATE "C" PRIMARY KEY,
    last_value bigint NOT NULL CHECK (last_value > 0)
);

-- The gate to rapkey_counter (SECURITY DEFINER, EXECUTE granted by the owner): only the owner
-- has rights on the table, so no caller can move a counter back.
CREATE FUNCTION @extschema@.rapkey_next(prefix text) RETURNS @extschema@.rapkey
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p text := @extschema@.rapkey_normalize_prefix(prefix);
    n bigint;
BEGIN
    INSERT INTO @extschema@.rapkey_counter AS c (prefix, last_value) VALUES (p, 1)
    ON CONFLICT ON CONSTRAINT rapkey_counter_pkey DO UPDATE SET last_value = c.last_value + 1
    RETURNING c.last_value INTO n;
    RETURN @extschema@.rapkey_build(pg_catalog.split_part(p, '.', 1),
        VARIADIC (pg_catalog.string_to_array(p, '.'))[2:] || n::text);
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.rapkey_next(text) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.rapkey_next(text) IS 'the next key under a prefix: prefix.N-c, N counting from 1 per prefix';
