-- xid12 as text: a domain over text COLLATE "C" holding the canonical 20 lowercase base32hex
-- characters (docs/formats.md §1-§2). Byte order of the text is the order of the 12 bytes.
--
-- Encoding works on 64-bit integers holding 8 characters, one per byte ("lanes"): a 40-bit
-- chunk of the id is spread into eight 5-bit lanes, and each lane turned into its ASCII code
-- ('0' + v, plus 39 more for v >= 10, which lands on 'a'); decoding reverses it.

-- A text that is not an xid12: native's 22P02 error and DETAIL (the last check is this
-- edition's own: uppercase is valid native input but not a stored value here). True otherwise.
CREATE FUNCTION @extschema@.xid12_check(value text, lowercase_only boolean DEFAULT true) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad integer;
    detail text;
BEGIN
    IF octet_length(value) <> 20 OR value !~ '^[0-9a-vA-V]*$' THEN
        IF @extschema@.idgen_trim(value) <> value THEN
            detail := 'Leading and trailing spaces are not allowed.';
        ELSIF char_length(value) <> 20 THEN
            detail := format('An xid12 is 20 base32hex characters; the text has %s characters.',
                             char_length(value));
        ELSE
            bad := char_length(substring(value FROM '^[0-9a-vA-V]*')) + 1;
            detail := format('Character %s is outside the base32hex alphabet 0-9, a-v.', bad);
        END IF;
    ELSIF right(value, 1) NOT IN ('0', 'g', 'G') THEN
        detail := 'The last character must be 0 or g: its low 4 bits are unused and must be zero.';
    ELSIF lowercase_only AND value ~ '[A-V]' THEN
        detail := 'This xid12 is text and stores lowercase only: pass the text through to_xid12() or lower().';
    ELSE
        RETURN true;
    END IF;
    RAISE EXCEPTION 'invalid input syntax for type xid12: %', @extschema@.idgen_quoted(value)
        USING ERRCODE = 'invalid_text_representation', DETAIL = detail;
END
$$;

-- The first test accepts every canonical text without a function call (this form of it costs a
-- third of '^[0-9a-v]{19}[0g]$'); anything else goes to xid12_check, which raises native's
-- error. COLLATE "C": byte order, as native sorts.
CREATE DOMAIN @extschema@.xid12 AS text COLLATE "C"
    CONSTRAINT xid12_check CHECK ((octet_length(VALUE) = 20 AND VALUE !~ '[^0-9a-v]|[^0g]$')
                                  OR @extschema@.xid12_check(VALUE));
COMMENT ON DOMAIN @extschema@.xid12 IS 'time-ordered id in the rs/xid format, as its 20-character base32hex text (pg_idgen portable)';
-- USAGE on the type lets a role create what takes or holds one: an operator or function on
-- (xid12, xid12), a table or view column. The owner grants it to the roles it names
-- (portable/README.md "Security"); reading and writing columns of the type, casts and the
-- edition's functions need none.
REVOKE USAGE ON DOMAIN @extschema@.xid12 FROM PUBLIC;

-- Comparison --------------------------------------------------------------------------------
-- The edition's own operators on (xid12, xid12), native's names and order (bytes, which under
-- COLLATE "C" is the text's). For `id = '…'` or `id > $1` PostgreSQL takes an exact
-- (xid12, xid12) operator found on the caller's search_path before text's (the domain's base
-- type), so without these one planted anywhere on the path would run as the caller; with them,
-- and USAGE on the type refused to PUBLIC (nobody else can create an operator on it), the one
-- exact match is this schema's. The untyped side is coerced to the domain, whose CHECK raises
-- native's 22P02 for an invalid, uppercase or short id.
-- Each body is one text comparison, which the planner inlines: the plan holds pg_catalog's
-- text operator, so the column's index (text's default btree class, "C") serves it, and
-- merge and hash joins, as for a text column. (An operator class needs a superuser.)
CREATE FUNCTION @extschema@.xid12_eq(a @extschema@.xid12, b @extschema@.xid12) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN a::text COLLATE "C" OPERATOR(pg_catalog.=) b::text;
CREATE FUNCTION @extschema@.xid12_ne(a @extschema@.xid12, b @extschema@.xid12) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN a::text COLLATE "C" OPERATOR(pg_catalog.<>) b::text;
CREATE FUNCTION @extschema@.xid12_lt(a @extschema@.xid12, b @extschema@.xid12) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN a::text COLLATE "C" OPERATOR(pg_catalog.<) b::text;
CREATE FUNCTION @extschema@.xid12_le(a @extschema@.xid12, b @extschema@.xid12) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN a::text COLLATE "C" OPERATOR(pg_catalog.<=) b::text;
CREATE FUNCTION @extschema@.xid12_gt(a @extschema@.xid12, b @extschema@.xid12) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN a::text COLLATE "C" OPERATOR(pg_catalog.>) b::text;
CREATE FUNCTION @extschema@.xid12_ge(a @extschema@.xid12, b @extschema@.xid12) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN a::text COLLATE "C" OPERATOR(pg_catalog.>=) b::text;
-- Native's btree support function, for callers: -1, 0 or 1.
CREATE FUNCTION @extschema@.xid12_cmp(a @extschema@.xid12, b @extschema@.xid12) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.sign(pg_catalog.bttextcmp(a::text COLLATE "C", b::text COLLATE "C")::double precision)::integer;

CREATE OPERATOR @extschema@.= (
    LEFTARG = @extschema@.xid12, RIGHTARG = @extschema@.xid12, FUNCTION = @extschema@.xid12_eq,
    COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
    RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel
);
CREATE OPERATOR @extschema@.<> (
    LEFTARG = @extschema@.xid12, RIGHTARG = @extschema@.xid12, FUNCTION = @extschema@.xid12_ne,
    COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
    RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
CREATE OPERATOR @extschema@.< (
    LEFTARG = @extschema@.xid12, RIGHTARG = @extschema@.xid12, FUNCTION = @extschema@.xid12_lt,
    COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
    RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR @extschema@.<= (
    LEFTARG = @extschema@.xid12, RIGHTARG = @extschema@.xid12, FUNCTION = @extschema@.xid12_le,
    COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
    RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR @extschema@.> (
    LEFTARG = @extschema@.xid12, RIGHTARG = @extschema@.xid12, FUNCTION = @extschema@.xid12_gt,
    COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
    RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR @extschema@.>= (
    LEFTARG = @extschema@.xid12, RIGHTARG = @extschema@.xid12, FUNCTION = @extschema@.xid12_ge,
    COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
    RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);

-- Native text input accepts either case; this is that input, giving the stored (lowercase) form.
CREATE FUNCTION @extschema@.to_xid12(value text) RETURNS @extschema@.xid12
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM @extschema@.xid12_check(value, false);
    RETURN lower(value);
END
$$;

-- Eight characters from a 40-bit number.
CREATE FUNCTION @extschema@.idgen_b32_lanes(x bigint) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    x := (x & 1048575) | ((x & 1099510579200) << 12);              -- 20-bit halves, 32-bit lanes
    x := (x & 4393751544831) | ((x & 4499201581906944) << 6);      -- 10 bits in 16-bit lanes
    x := (x & 8725857424048159) | ((x & 279227437569541088) << 3); -- 5 bits in 8-bit lanes
    RETURN x + 3472328296227680304 + (((x + 1591483802437686806) >> 5) & 72340172838076673) * 39;
END
$$;

-- A 40-bit number from eight characters (validated base32hex, lowercase).
CREATE FUNCTION @extschema@.idgen_b32_value(chars text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x bigint := ('x' || encode(decode(chars, 'escape'), 'hex'))::bit(64)::bigint;
BEGIN
    x := x - 3472328296227680304 - ((x >> 6) & 72340172838076673) * 39;
    x := (x & 8725857424048159) | ((x & 2233819500556328704) >> 3);
    x := (x & 4393751544831) | ((x & 287948901242044416) >> 6);
    RETURN (x & 1048575) | ((x & 4503595332403200) >> 12);
END
$$;

-- The text of the id whose 12 bytes are hi (56 bits: time, machine) then lo (40 bits: pid,
-- counter).
CREATE FUNCTION @extschema@.xid12_encode(hi bigint, lo bigint) RETURNS @extschema@.xid12
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN encode(int8send(@extschema@.idgen_b32_lanes(hi >> 16))
              || int8send(@extschema@.idgen_b32_lanes(((hi & 65535) << 24) | (lo >> 16)))
              || substr(int8send(@extschema@.idgen_b32_lanes((lo & 65535) << 24)), 1, 4), 'escape');

-- Native's cast xid12::bytea: the 12 bytes. (On this domain the cast id::bytea is text's,
-- giving the 20 ASCII bytes of the text: use this function.)
CREATE FUNCTION @extschema@.xid12_to_bytea(id @extschema@.xid12) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN substr(int8send(@extschema@.idgen_b32_value(substr(id, 1, 8))), 4, 5)
    || substr(int8send(@extschema@.idgen_b32_value(substr(id, 9, 8))), 4, 5)
    || substr(int8send(@extschema@.idgen_b32_value(substr(id, 17, 4) || '0000') >> 24), 7, 2);

-- Native's cast bytea::xid12 (native's function name xid12(bytea), and xid12_from_bytea).
CREATE FUNCTION @extschema@.xid12_from_bytea(bytes bytea) RETURNS @extschema@.xid12
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF octet_length(bytes) <> 12 THEN
        RAISE EXCEPTION 'invalid binary xid12 value'
            USING ERRCODE = 'invalid_binary_representation',
                  DETAIL = format('An xid12 is exactly 12 bytes; got %s.', octet_length(bytes));
    END IF;
    RETURN @extschema@.xid12_encode(('x' || encode(substr(bytes, 1, 7), 'hex'))::bit(56)::bigint,
                                    ('x' || encode(substr(bytes, 8, 5), 'hex'))::bit(40)::bigint);
END
$$;
CREATE FUNCTION @extschema@.xid12(bytes bytea) RETURNS @extschema@.xid12
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@.xid12_from_bytea(bytes);

-- Accessors ---------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.xid12_time(id @extschema@.xid12) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN to_timestamp(@extschema@.idgen_b32_value(substr(id, 1, 8)) >> 8);

CREATE FUNCTION @extschema@.xid12_machine(id @extschema@.xid12) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN substr(@extschema@.xid12_to_bytea(id), 5, 3);

CREATE FUNCTION @extschema@.xid12_pid(id @extschema@.xid12) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ((@extschema@.idgen_b32_value(substr(id, 9, 8)) >> 8) & 65535)::integer;

CREATE FUNCTION @extschema@.xid12_counter(id @extschema@.xid12) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (((@extschema@.idgen_b32_value(substr(id, 9, 8)) & 255) << 16)
        | (@extschema@.idgen_b32_value(substr(id, 17, 4) || '0000') >> 24))::integer;

-- The unix second of a timestamp as an xid12 time field, or native's 22008.
CREATE FUNCTION @extschema@.xid12_seconds(ts timestamptz) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s bigint := @extschema@.idgen_unix_seconds(ts);
BEGIN
    IF s NOT BETWEEN 0 AND 4294967295 THEN
        RAISE EXCEPTION 'timestamp out of range for xid12: unix second % is outside 1970-01-01 00:00:00 .. 2106-02-07 06:28:15 UTC', s
            USING ERRCODE = 'datetime_field_overflow';
    END IF;
    RETURN s;
END
$$;

CREATE FUNCTION @extschema@.xid12_min(ts timestamptz) RETURNS @extschema@.xid12
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@.xid12_encode(@extschema@.xid12_seconds(ts) << 24, 0);

CREATE FUNCTION @extschema@.xid12_max(ts timestamptz) RETURNS @extschema@.xid12
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@.xid12_encode((@extschema@.xid12_seconds(ts) << 24) | 16777215, 1099511627775);

CREATE FUNCTION @extschema@.xid12_from_parts(ts timestamptz, machine bytea, pid integer, counter integer)
    RETURNS @extschema@.xid12
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s bigint := @extschema@.xid12_seconds(ts);
BEGIN
    IF octet_length(machine) <> 3 THEN
        RAISE EXCEPTION 'xid12 machine id must be 3 bytes, got %', octet_length(machine)
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF pid NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'xid12 pid % is outside the range 0 .. 65535', pid
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF counter NOT BETWEEN 0 AND 16777215 THEN
        RAISE EXCEPTION 'xid12 counter % is outside the range 0 .. 16777215', counter
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN @extschema@.xid12_encode((s << 24) | ('x' || encode(machine, 'hex'))::bit(24)::bigint,
                                    (pid::bigint << 24) | counter);
END
$$;

-- Generators ----------------------------------------------------------------------------------
-- The sequence's value is (unix second << 24 | counter): docs/portable.md "Uniqueness: the sequence design".

CREATE SEQUENCE @extschema@.idgen_xid12_seq AS bigint MINVALUE 0 START 0 NO CYCLE CACHE 1;

-- This database's machine id (idgen_config, 10_config.sql).
CREATE FUNCTION @extschema@.xid12_current_machine() RETURNS bytea
    LANGUAGE sql STABLE PARALLEL SAFE
RETURN substr(int8send(@extschema@.idgen_config_get('machine'::pg_catalog.text)), 6, 3);

-- gen_xid12() writes the id's 20 characters (docs/formats.md §2: character i holds bits 5i to
-- 5i + 4 of the 96, then 4 zero bits) from pieces looked up by bits of the sequence's value v:
--   0-5    the second's top 30 bits           3 x idgen_b32_pairs   (v >> 46, >> 36, >> 26)
--   6-14   the second's low 2 bits, machine,  idgen_xid12_session   ((v >> 21) & 31)
--          pid, the counter's top 3 bits
--   15-16  the counter's bits 20-11           idgen_b32_pairs       ((v >> 11) & 1023)
--   17-19  the counter's low 11 bits          idgen_xid12_tails     (v & 2047)
-- Each table is an IMMUTABLE function without arguments, which the planner computes once into
-- the gate's cached plan (10_config.sql): nothing of it is in a setting a session could SET.

-- Two characters for each 10-bit number, 2 bytes each (2048 bytes).
CREATE FUNCTION @extschema@.idgen_b32_pairs() RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT pg_catalog.convert_to(pg_catalog.string_agg(
            pg_catalog.substr('0123456789abcdefghijklmnopqrstuv', (c >> 5) + 1, 1)
            || pg_catalog.substr('0123456789abcdefghijklmnopqrstuv', (c & 31) + 1, 1), '' ORDER BY c), 'UTF8')
          FROM pg_catalog.generate_series(0, 1023) AS c);

-- The last 3 characters for each of the counter's low 11 bits, 3 bytes each (6144 bytes).
CREATE FUNCTION @extschema@.idgen_xid12_tails() RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT pg_catalog.convert_to(pg_catalog.string_agg(
            pg_catalog.substr('0123456789abcdefghijklmnopqrstuv', ((c >> 6) & 31) + 1, 1)
            || pg_catalog.substr('0123456789abcdefghijklmnopqrstuv', ((c >> 1) & 31) + 1, 1)
            || CASE WHEN (c & 1) = 0 THEN '0' ELSE 'g' END, '' ORDER BY c), 'UTF8')
          FROM pg_catalog.generate_series(0, 2047) AS c);

-- This session's characters 6-14 for each value of (the second's low 2 bits, the counter's top
-- 3), 9 bytes each (288 bytes): the machine id read from idgen_config (or derived) and the low
-- 16 bits of the backend's pid. IMMUTABLE though it reads a table and the pid: it is computed
-- when the gates are planned, as their owner, and is the same for the session's life (until
-- idgen_config_reload() or DISCARD PLANS makes them plan again). EXECUTE: the owner only.
CREATE FUNCTION @extschema@.idgen_xid12_session() RETURNS bytea
    LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    machine bigint := @extschema@.idgen_config_machine();
    pid bigint := pg_backend_pid() & 65535;
BEGIN
    RETURN (SELECT convert_to(string_agg(substr(@extschema@.xid12_encode(((k >> 3)::bigint << 24) | machine,
                                                                         (pid << 24) | ((k & 7)::bigint << 21)), 7, 9),
                                         '' ORDER BY k), 'UTF8')
              FROM generate_series(0, 31) AS k);
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_xid12_session() FROM PUBLIC;

-- Hot path: few PL/pgSQL statements, simple expressions. Its parts and their cost:
-- docs/portable.md "Measured here".
-- The gate to the sequence (15_sequence.sql): SECURITY DEFINER, EXECUTE granted by the owner.
CREATE FUNCTION @extschema@.gen_xid12() RETURNS @extschema@.xid12
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- The jump count, nextval(), the count again (15_sequence.sql): the value stands when no
    -- jump was open between the two reads.
    j bigint := pg_catalog.pg_sequence_last_value('@extschema@.idgen_xid12_jumps'::pg_catalog.regclass);
    v bigint := pg_catalog.nextval('@extschema@.idgen_xid12_seq'::pg_catalog.regclass);
BEGIN
    IF j IS DISTINCT FROM pg_catalog.pg_sequence_last_value('@extschema@.idgen_xid12_jumps'::pg_catalog.regclass)
       OR (j & 1) = 1 THEN
        v := @extschema@.idgen_sequence_jump('@extschema@.idgen_xid12_seq'::pg_catalog.regclass,
                 '@extschema@.idgen_xid12_jumps'::pg_catalog.regclass, '@extschema@.idgen_xid12_jumper'::pg_catalog.regclass, 0::pg_catalog.int8, true);
    END IF;
    -- Behind the clock: jump, waiting for the lock when it is busy, so that an id never carries
    -- a second before the clock's (docs/portable.md "How far behind the clock").
    IF (v >> 24) < pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())) THEN
        v := @extschema@.idgen_sequence_jump('@extschema@.idgen_xid12_seq'::pg_catalog.regclass,
                 '@extschema@.idgen_xid12_jumps'::pg_catalog.regclass, '@extschema@.idgen_xid12_jumper'::pg_catalog.regclass,
                 pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()))::bigint << 24, true);
    END IF;
    IF v > 72057594037927935 THEN
        RAISE EXCEPTION 'timestamp out of range for xid12: unix second % is outside 1970-01-01 00:00:00 .. 2106-02-07 06:28:15 UTC', v >> 24
            USING ERRCODE = 'datetime_field_overflow';
    END IF;
    RETURN pg_catalog.encode(pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((v >> 46) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((v >> 36) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((v >> 26) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_xid12_session(), (((v >> 21) & 31) * 9)::integer + 1, 9)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((v >> 11) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_xid12_tails(), ((v & 2047) * 3)::integer + 1, 3), 'escape');
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.gen_xid12() FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.gen_xid12() IS 'a new xid12, greater than every earlier one of this database''s sequence (so of this session)';

-- The counter of gen_xid12(timestamptz): a running counter of its own, never jumped, so no
-- lock, and never wrapped: its 40 bits fill the id's pid and counter fields (the pid field is
-- the counter's top 16 bits), so ids of one given second differ, and follow the calls' order,
-- until 2^40 backfill ids were taken in the database; then it fails (2200H) rather than repeat.
-- Only the owner has rights on it; gen_xid12(timestamptz) is its gate.
CREATE SEQUENCE @extschema@.idgen_xid12_backfill_seq AS bigint MINVALUE 0 MAXVALUE 1099511627775 START 0 NO CYCLE CACHE 1;

-- gen_xid12(timestamptz)'s characters 6-11 for each value of (the second's low 2 bits, the
-- counter's top 4 bits): the machine id as idgen_xid12_session has it, 6 bytes each (384 bytes).
-- Its characters 0-5 and 12-19 come from idgen_b32_pairs and idgen_xid12_tails as gen_xid12()'s.
CREATE FUNCTION @extschema@.idgen_xid12_backfill_session() RETURNS bytea
    LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    machine bigint := @extschema@.idgen_config_machine();
BEGIN
    RETURN (SELECT convert_to(string_agg(substr(@extschema@.xid12_encode(((k >> 4)::bigint << 24) | machine,
                                                                         (k & 15)::bigint << 36), 7, 6),
                                         '' ORDER BY k), 'UTF8')
              FROM generate_series(0, 63) AS k);
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_xid12_backfill_session() FROM PUBLIC;

-- An id of the given second (backfills), its pid and counter fields from
-- idgen_xid12_backfill_seq (c: pid = c >> 24, counter = c & 16777215). Not ordered with
-- gen_xid12()'s ids, and may equal one of them of the same second: docs/portable.md
-- "Uniqueness: the sequence design".
CREATE FUNCTION @extschema@.gen_xid12(ts timestamptz) RETURNS @extschema@.xid12
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s bigint := @extschema@.xid12_seconds(ts);
    c bigint := pg_catalog.nextval('@extschema@.idgen_xid12_backfill_seq'::pg_catalog.regclass);
BEGIN
    RETURN pg_catalog.encode(pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((s >> 22) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((s >> 12) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((s >> 2) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_xid12_backfill_session(), ((((s & 3) << 4) | ((c >> 36) & 15)) * 6)::integer + 1, 6)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((c >> 26) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((c >> 21) & 31) * 2)::integer + 2, 1)
        || pg_catalog.substr(@extschema@.idgen_b32_pairs(), (((c >> 11) & 1023) * 2)::integer + 1, 2)
        || pg_catalog.substr(@extschema@.idgen_xid12_tails(), ((c & 2047) * 3)::integer + 1, 3), 'escape');
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.gen_xid12(timestamptz) FROM PUBLIC;
