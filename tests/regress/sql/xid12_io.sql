-- xid12 text and binary I/O, casts, and rejection of bad input.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
SET timezone = 'UTC';

-- The rs/xid documentation's example id and its parts.
SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS id;
SELECT xid12_time(x), xid12_machine(x), xid12_pid(x), xid12_counter(x)
FROM (SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS x) s;
SELECT '9m4e2mr0ui3e8a215n4g'::xid12::bytea;

-- Input is case-insensitive, output is lowercase.
SELECT '9M4E2MR0UI3E8A215N4G'::xid12 = '9m4e2mr0ui3e8a215n4g'::xid12 AS same;
SELECT '9M4E2MR0UI3E8A215N4G'::xid12::text;

-- Extremes.
SELECT '00000000000000000000'::xid12, 'vvvvvvvvvvvvvvvvvvvg'::xid12;

-- Bad text: wrong length, bad characters, non-canonical last character.
SELECT ''::xid12;
SELECT '9m4e2mr0ui3e8a215n4'::xid12;
SELECT '9m4e2mr0ui3e8a215n4g0'::xid12;
SELECT '9m4e2mr0ui3e8a215n4w'::xid12;
SELECT '9m4e2mr0ui3e8a215n41'::xid12;
SELECT '9m4e2mr0ui3e8a215n4v'::xid12;
SELECT '9m4e2mr0ui3e 8a215n4g'::xid12;
SELECT ' 9m4e2mr0ui3e8a215n4g'::xid12;
SELECT '9m4e2mr0ui3e8a215n4é'::xid12;
SELECT '9m4e2mr0ui3e8a-15n4g'::xid12;
-- A long input is cut in the message, which gives its length instead.
SELECT repeat('x', 100000)::xid12;
SELECT test_helpers.error_of($$SELECT 'zzzzzzzzzzzzzzzzzzzz'::xid12$$);
SELECT test_helpers.error_of($$SELECT ''::xid12$$);
SELECT test_helpers.error_of($$SELECT '0000000000000000000v'::xid12$$);
-- A NUL cannot reach the input function: PostgreSQL's own text rules reject it first.
SELECT test_helpers.error_of($$SELECT E'9m4e2mr0ui3e8a215n4\x00'::xid12$$);
SELECT test_helpers.error_of($$SELECT convert_from('\x396d34650000'::bytea, 'UTF8')::xid12$$);

-- Every accepted lowercase text round-trips, and text order is byte order.
SELECT count(*) AS mismatches
FROM (SELECT decode(md5(g::text), 'hex') AS b FROM generate_series(1, 2000) g) s,
     LATERAL (SELECT xid12(substring(b FROM 1 FOR 12)) AS x) t
WHERE x::text::xid12 <> x OR x::text <> x::text::xid12::text OR x::bytea <> substring(b FROM 1 FOR 12);
SELECT count(*) AS order_mismatches
FROM (SELECT xid12(substring(decode(md5(g::text), 'hex') FROM 1 FOR 12)) AS x FROM generate_series(1, 2000) g) a,
     (SELECT xid12(substring(decode(md5(g::text), 'hex') FROM 3 FOR 12)) AS y FROM generate_series(1, 50) g) b
WHERE (x < y) <> (x::text COLLATE "C" < y::text COLLATE "C")
   OR (x < y) <> (x::bytea < y::bytea);

-- bytea casts need exactly 12 bytes.
SELECT '\x4d88e15b60f486e428412dc9'::bytea::xid12;
SELECT '\x4d88e15b60f486e428412d'::bytea::xid12;
SELECT '\x4d88e15b60f486e428412dc900'::bytea::xid12;
SELECT test_helpers.error_of($$SELECT ''::bytea::xid12$$);

-- text casts: explicit from text, assignment to text.
CREATE TEMP TABLE t_text (s text);
INSERT INTO t_text VALUES ('9m4e2mr0ui3e8a215n4g'::xid12);
SELECT s, s::xid12 FROM t_text;

-- Binary I/O: send gives the 12 bytes (receive is tested by the client-side tests).
SELECT xid12_send('9m4e2mr0ui3e8a215n4g');
-- rs/xid's example id and its bytes, written down independently of this extension's code.
SELECT xid12_send('9m4e2mr0ui3e8a215n4g') = '\x4d88e15b60f486e428412dc9'::bytea AS rs_xid_bytes;

-- Arrays.
SELECT ARRAY['9m4e2mr0ui3e8a215n4g', '00000000000000000000']::xid12[];
SELECT '9m4e2mr0ui3e8a215n4g'::xid12 = ANY (ARRAY['00000000000000000000', '9m4e2mr0ui3e8a215n4g']::xid12[]) AS found;

-- The type is what the catalog says it is.
SELECT typname, typlen, typbyval, typalign, typstorage FROM pg_type WHERE typname = 'xid12';
