-- xid12: the rs/xid format as a native fixed-length 12-byte type.

CREATE TYPE xid12;

CREATE FUNCTION xid12_in(cstring) RETURNS xid12
    AS 'MODULE_PATHNAME', 'xid12_in_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_out(xid12) RETURNS cstring
    AS 'MODULE_PATHNAME', 'xid12_out_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_recv(internal) RETURNS xid12
    AS 'MODULE_PATHNAME', 'xid12_recv_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_send(xid12) RETURNS bytea
    AS 'MODULE_PATHNAME', 'xid12_send_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE xid12 (
    INPUT = xid12_in,
    OUTPUT = xid12_out,
    RECEIVE = xid12_recv,
    SEND = xid12_send,
    INTERNALLENGTH = 12,
    ALIGNMENT = char,
    STORAGE = plain
);

COMMENT ON TYPE xid12 IS 'time-ordered 12-byte id in the rs/xid format (20-character base32hex text)';
-- USAGE is what creating a function or operator on the type needs: with it from PUBLIC, any role
-- owning a schema on a caller's search_path could plant an exact =(xid12, xid12) there that the
-- caller's queries would run as the caller. Values in queries, casts and columns of existing
-- tables need no USAGE; a role that creates tables or functions with xid12 is granted it
-- (README, "Permissions").
REVOKE USAGE ON TYPE xid12 FROM PUBLIC;

-- Comparison ----------------------------------------------------------------

CREATE FUNCTION xid12_eq(xid12, xid12) RETURNS boolean
    AS 'MODULE_PATHNAME', 'xid12_eq_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_ne(xid12, xid12) RETURNS boolean
    AS 'MODULE_PATHNAME', 'xid12_ne_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_lt(xid12, xid12) RETURNS boolean
    AS 'MODULE_PATHNAME', 'xid12_lt_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_le(xid12, xid12) RETURNS boolean
    AS 'MODULE_PATHNAME', 'xid12_le_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_gt(xid12, xid12) RETURNS boolean
    AS 'MODULE_PATHNAME', 'xid12_gt_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_ge(xid12, xid12) RETURNS boolean
    AS 'MODULE_PATHNAME', 'xid12_ge_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_cmp(xid12, xid12) RETURNS integer
    AS 'MODULE_PATHNAME', 'xid12_cmp_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_sortsupport(internal) RETURNS void
    AS 'MODULE_PATHNAME', 'xid12_sortsupport_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_hash(xid12) RETURNS integer
    AS 'MODULE_PATHNAME', 'xid12_hash_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_hash_extended(xid12, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME', 'xid12_hash_extended_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION xid12_smaller(xid12, xid12) RETURNS xid12
    AS 'MODULE_PATHNAME', 'xid12_smaller_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_larger(xid12, xid12) RETURNS xid12
    AS 'MODULE_PATHNAME', 'xid12_larger_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR = (
    LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = xid12_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, MERGES, HASHES
);
CREATE OPERATOR <> (
    LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = xid12_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
    LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = xid12_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
    LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = xid12_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
    LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = xid12_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
    LEFTARG = xid12, RIGHTARG = xid12, FUNCTION = xid12_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

CREATE OPERATOR CLASS xid12_ops DEFAULT FOR TYPE xid12 USING btree AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 xid12_cmp(xid12, xid12),
    FUNCTION 2 xid12_sortsupport(internal),
    FUNCTION 4 btequalimage(oid);

CREATE OPERATOR CLASS xid12_hash_ops DEFAULT FOR TYPE xid12 USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 xid12_hash(xid12),
    FUNCTION 2 xid12_hash_extended(xid12, bigint);

CREATE OPERATOR CLASS xid12_minmax_ops DEFAULT FOR TYPE xid12 USING brin AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 brin_minmax_opcinfo(internal),
    FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
    FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
    FUNCTION 4 brin_minmax_union(internal, internal, internal);

CREATE AGGREGATE min(xid12) (
    SFUNC = xid12_smaller, STYPE = xid12, COMBINEFUNC = xid12_smaller,
    SORTOP = <, PARALLEL = SAFE
);
CREATE AGGREGATE max(xid12) (
    SFUNC = xid12_larger, STYPE = xid12, COMBINEFUNC = xid12_larger,
    SORTOP = >, PARALLEL = SAFE
);

-- Casts ---------------------------------------------------------------------
-- xid12 -> text and varchar are PostgreSQL's automatic I/O conversion casts (assignment), as
-- for uuid. text and varchar -> xid12 are assignment casts through xid12's input function
-- (0.5.0): a text or varchar value stores into an xid12 column (INSERT ... VALUES
-- ($1::varchar), pgjdbc's setString, UPDATE, ALTER COLUMN ... TYPE xid12), and an explicit
-- cast means what it meant. None is implicit: operator and function resolution only use
-- implicit casts, so no expression changes meaning or becomes ambiguous, and xid12 = varchar
-- stays an error, as uuid = varchar is (tests/regress/sql/xid12_casts.sql).
CREATE CAST (pg_catalog.text AS xid12) WITH INOUT AS ASSIGNMENT;
CREATE CAST (pg_catalog.varchar AS xid12) WITH INOUT AS ASSIGNMENT;

CREATE FUNCTION xid12_to_bytea(xid12) RETURNS bytea
    AS 'MODULE_PATHNAME', 'xid12_send_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12(bytea) RETURNS xid12
    AS 'MODULE_PATHNAME', 'bytea_to_xid12_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (xid12 AS bytea) WITH FUNCTION xid12_to_bytea(xid12);
CREATE CAST (bytea AS xid12) WITH FUNCTION xid12(bytea);

-- Generators ----------------------------------------------------------------
-- PARALLEL RESTRICTED: ids of one session come from the leader's generator, so each is
-- greater than the one before.

CREATE FUNCTION gen_xid12() RETURNS xid12
    AS 'MODULE_PATHNAME', 'gen_xid12_wrapper' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION gen_xid12() IS 'a new xid12, greater than every earlier one of this session';

CREATE FUNCTION gen_xid12(timestamptz) RETURNS xid12
    AS 'MODULE_PATHNAME', 'gen_xid12_at_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION gen_xid12(timestamptz) IS 'a new xid12 whose time part is the given second (for backfills)';

CREATE FUNCTION xid12_current_machine() RETURNS bytea
    AS 'MODULE_PATHNAME', 'xid12_current_machine_wrapper' LANGUAGE C STABLE PARALLEL SAFE;

-- Accessors and bounds ------------------------------------------------------

CREATE FUNCTION xid12_time(xid12) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'xid12_time_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_machine(xid12) RETURNS bytea
    AS 'MODULE_PATHNAME', 'xid12_machine_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_pid(xid12) RETURNS integer
    AS 'MODULE_PATHNAME', 'xid12_pid_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_counter(xid12) RETURNS integer
    AS 'MODULE_PATHNAME', 'xid12_counter_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_min(timestamptz) RETURNS xid12
    AS 'MODULE_PATHNAME', 'xid12_min_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_max(timestamptz) RETURNS xid12
    AS 'MODULE_PATHNAME', 'xid12_max_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION xid12_from_parts(timestamptz, bytea, integer, integer) RETURNS xid12
    AS 'MODULE_PATHNAME', 'xid12_from_parts_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
