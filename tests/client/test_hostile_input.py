"""Hostile input: random strings, byte strings, integers and timestamps fed to every function,
cast and input routine of the extension that takes user data. At the default scale, a UTF-8
database gets about 21,000 values (19,500 distinct) through about 107,000 calls (117,000 on 16
and later, which add pg_input_is_valid); a SQL_ASCII database gets 2,000 strings, more than
half of them not UTF-8, through about 34,000 calls (38,000 on 16 and later); 1,500 byte
strings go in as binary xid12 parameters and binary COPY.

Each call either succeeds with a consistent result or fails with a clean error whose SQLSTATE
is in the set expected for that function; the backend survives (same pid, same postmaster),
the server log shows no crash, and the backend's private memory does not grow with the number
of calls. The calls run server-side, each in its own subtransaction (pg_temp.hostile below).

The inputs come from a fixed seed printed in the output; PG_IDGEN_HOSTILE_SEED replays another
one, PG_IDGEN_HOSTILE_SCALE multiplies the number of values (e.g. 10 for a longer run; scripts/test.sh
gives 0.25 on the versions before 18, see conftest.py).
"""
import base64
import hashlib
import os
import random
import struct
import time

import psycopg
import pytest
from psycopg.adapt import Dumper

from servers import connect

SEED = int(os.environ.get("PG_IDGEN_HOSTILE_SEED", "20261201"))
SCALE = float(os.environ.get("PG_IDGEN_HOSTILE_SCALE", "1"))
MB = 1 << 20

# Private (anonymous) memory the backend may gain over the main pass (about 107k calls, after
# a warm-up pass): 32 MB, so a leak of more than about 300 bytes a call fails. Seen: 1 to 9 MB
# (caches, and the C library's heap keeping freed memory), and no growth at all over further
# passes. Shared memory is not counted: VmRSS also grows as the backend touches shared buffers,
# which is no leak (VmRSS is printed too).
MAX_GROWTH_KB = 32 * 1024

# =============================================================================================
# Generators

TRICKY = list("0129agvwzAGVWZ/:@[`{.-~_ \t\n\r\x0b\x0c\x7f") + [
    "\x80", "\x85", "\xa0", "é", "ı", "İ", "\u212a", "\u2028", "\u3000", "\ufeff", "\ufffd",
    "\U0001f600", "\U0010ffff",
]
BODY_SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyz."
CHECK_SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyz~"
SEPARATOR = "\x01"  # between the parts given to rapkey_build; never generated otherwise


def damm(body: str) -> str:
    """The check character of docs/formats.md §4: x ∘ y = 2(x - y) mod 37 over the body's symbols."""
    interim = 0
    for c in body:
        interim = 2 * (interim - BODY_SYMBOLS.index(c)) % 37
    return CHECK_SYMBOLS[interim]


class Values:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def char(self) -> str:
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(TRICKY)
        if r < 0.8:
            return chr(self.rng.randrange(0x20, 0x7F))
        while True:
            cp = self.rng.randrange(1, 0x110000)
            if not 0xD800 <= cp < 0xE000:
                return chr(cp)

    def mutate(self, s: str, edits: int) -> str:
        chars = list(s)
        for _ in range(edits):
            op, n = self.rng.randrange(4), len(chars)
            if op == 0 and n:
                chars[self.rng.randrange(n)] = self.char()
            elif op == 1:
                chars.insert(self.rng.randrange(n + 1), self.char())
            elif op == 2 and n:
                del chars[self.rng.randrange(n)]
            elif op == 3 and n > 1:
                i = self.rng.randrange(n - 1)
                chars[i], chars[i + 1] = chars[i + 1], chars[i]
        return "".join(chars)

    def case(self, s: str) -> str:
        return "".join(c.upper() if self.rng.random() < 0.3 else c for c in s)

    def pad(self, s: str) -> str:
        ws = self.rng.choice(["", "", "", " ", "\t", "\n ", "\xa0", "\u3000"])
        return ws + s + ws

    def xid_text(self) -> str:
        return base64.b32hexencode(self.rng.randbytes(12)).decode()[:20].lower()

    def word(self, alphabet: str, lo: int, hi: int) -> str:
        n = min(self.rng.randint(lo, hi), self.rng.randint(lo, hi))  # short ones more often
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def parts(self):
        kind = self.word("abcdefghijklmnopqrstuvwxyz", 2, 8)
        segs = [self.word("abcdefghijklmnopqrstuvwxyz0123456789", 1, 32)
                for _ in range(self.rng.randint(1, 5))]
        while len(".".join([kind] + segs)) > 126:
            segs.pop()
        return kind, segs or ["a"]

    def body(self) -> str:
        kind, segs = self.parts()
        return ".".join([kind] + segs)

    def key(self) -> str:
        body = self.body()
        return f"{body}-{damm(body)}"

    def unicode(self, hi: int) -> str:
        return "".join(self.char() for _ in range(self.rng.randint(0, hi)))

    def text(self) -> str:
        """One string: near-valid xid12 text, keys, bodies and prefixes, or anything."""
        r, edits = self.rng.random(), self.rng.choice([0, 0, 1, 1, 2, 3])
        if r < 0.2:
            s = self.mutate(self.case(self.xid_text()), edits)
        elif r < 0.45:
            s = self.pad(self.mutate(self.case(self.key()) if edits else self.key(), edits))
        elif r < 0.6:
            s = self.pad(self.mutate(self.body(), edits))
        elif r < 0.75:
            s = self.unicode(60)
        elif r < 0.85:
            s = "".join(chr(self.rng.randrange(0x20, 0x7F)) for _ in range(self.rng.randint(0, 140)))
        elif r < 0.9:
            s = self.mutate(self.rng.choice([self.key(), self.xid_text(), "ab.", "0"]) * self.rng.randint(2, 400), edits)
        else:
            s = self.rng.choice(["", " ", "-", ".", "~", "a-", "-x", "ab.c-", ".-", "ab.c-~", "ord.a-",
                                 "0" * 20, "v" * 20, "V" * 19 + "G", "g" * 21])
        return s.replace("\0", "?").replace(SEPARATOR, "?")  # text holds no NUL

    def build_args(self) -> str:
        """A type and 0 to 7 segments for rapkey_build, joined by SEPARATOR."""
        kind, segs = self.parts()
        parts = [kind] + segs
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            i = self.rng.randrange(len(parts) + 1)
            choice = self.rng.random()
            if choice < 0.4 and i < len(parts):
                parts[i] = self.pad(self.mutate(self.case(parts[i]), 1))
            elif choice < 0.7:
                parts.insert(i, self.unicode(12) if self.rng.random() < 0.5 else self.word("abc123", 0, 40))
            elif i < len(parts) and len(parts) > 1:
                del parts[i]
        if self.rng.random() < 0.1:
            parts = parts[:1]
        return SEPARATOR.join(p.replace("\0", "?").replace(SEPARATOR, "?") for p in parts)

    def prefix(self) -> str:
        kind, segs = self.parts()
        prefix = ".".join([kind] + segs[: self.rng.randint(0, len(segs))])
        return self.pad(self.mutate(prefix, self.rng.choice([0, 0, 1]))).replace("\0", "?")

    def bytes_(self) -> bytes:
        r = self.rng.random()
        if r < 0.4:
            n = 12
        elif r < 0.8:
            n = self.rng.randint(0, 24)
        else:
            n = self.rng.randint(0, 200)
        b = bytearray(self.rng.randbytes(n))
        if n and self.rng.random() < 0.3:  # NULs, and the high bytes of UTF-8 and Latin-1
            for _ in range(self.rng.randint(1, n)):
                b[self.rng.randrange(n)] = self.rng.choice([0, 0, 0x80, 0xC3, 0xE9, 0xFF])
        return bytes(b)

    def int8(self) -> int:
        r = self.rng.random()
        if r < 0.5:
            return self.rng.randint(-(1 << 63), (1 << 63) - 1)
        if r < 0.8:
            return self.rng.randint(0, (1 << 63) - 1) >> self.rng.randint(0, 62)
        edge = self.rng.choice([0, 1, -1, 1 << 22, (1 << 63) - 1, -(1 << 63), (1 << 41) << 22, ((1 << 41) << 22) - 1])
        return max(-(1 << 63), min((1 << 63) - 1, edge + self.rng.randint(-2, 2)))

    def seconds(self) -> float:
        r = self.rng.random()
        if r < 0.4:
            return float(self.rng.randint(-(10**11), 10**12))
        if r < 0.8:
            return self.rng.uniform(-1e10, 1e10)
        edge = self.rng.choice([0, 2**32 - 1, 2**32, 1288834974.657, 1288834974.657 + 2**41 / 1000, -210866803200, 9224318015999])
        return edge + self.rng.choice([-1, -0.001, 0, 0.001, 1])

    def parts_args(self) -> str:
        sec = self.seconds() if self.rng.random() < 0.5 else float(self.rng.randint(0, 2**32 - 1))
        def int4():
            r = self.rng.random()
            if r < 0.3:
                return self.rng.randint(-(2**31), 2**31 - 1)
            if r < 0.5:
                return self.rng.choice([-1, 0, 65535, 65536, 2**24 - 1, 2**24, 2**31 - 1, -(2**31)])
            return self.rng.randint(0, 2**24)
        return f"{sec!r},{int4()},{int4()}"


def huge_texts():
    key = "ord.cn.sh.202407.8842-2"
    return ["0" * MB, "é" * (MB // 2), f"ord.{'1' * MB}-x", " " * (MB // 2) + key + " " * (MB // 2),
            (key + ".") * (MB // 24)]


def huge_bytes():
    return [b"\0" * MB, bytes(range(256)) * (MB // 256)]


# =============================================================================================
# Calls: (name, corpus table, query of $1 returning a boolean that must not be false, SQLSTATEs
# its errors may have). "22P02": invalid text representation; "22P03": invalid binary
# representation; "22023": invalid parameter value; "23514": check violation (the rapkey
# domain); "22008": datetime field overflow.

RAPKEY_GRAMMAR = r"'^[a-z]{2,8}(\.[a-z0-9]{1,32}){1,5}-[0-9a-z~]$'"

TEXT_CALLS = [
    ("text::xid12", "SELECT CASE WHEN $1 ~ '^[0-9a-vA-V]{19}[0gG]$' THEN $1::xid12::text = lower($1) "
                    "ELSE $1::xid12 IS NULL END", {"22P02"}),
    ("xid12_in(cstring)", "SELECT CASE WHEN $1 ~ '^[0-9a-vA-V]{19}[0gG]$' "
                          "THEN xid12_in($1::cstring)::text = lower($1) ELSE xid12_in($1::cstring) IS NULL END",
     {"22P02"}),
    ("text::rapkey", "SELECT CASE WHEN rapkey_is_valid($1) THEN $1 ~ " + RAPKEY_GRAMMAR +
                     " AND length($1) <= 128 AND $1::rapkey = $1 ELSE $1::rapkey IS NULL END", {"23514"}),
    # Against the grammar and the check character computed here (pg_temp.hostile_damm below).
    ("rapkey_is_valid", "SELECT rapkey_is_valid($1) = CASE WHEN $1 ~ " + RAPKEY_GRAMMAR + " AND length($1) <= 128 "
                        "THEN right($1, 1) = pg_temp.hostile_damm(left($1, -2)) ELSE false END", set()),
    ("rapkey_domain_check", "SELECT rapkey_domain_check($1) AND rapkey_is_valid($1)", {"23514"}),
    ("to_rapkey", "SELECT rapkey_is_valid(to_rapkey($1)) AND to_rapkey(to_rapkey($1)) = to_rapkey($1)", {"22P02"}),
    ("rapkey_check_char", "SELECT rapkey_is_valid($1 || '-' || rapkey_check_char($1))", {"22023"}),
    ("rapkey_prefix_lo", "SELECT rapkey_prefix_lo($1) = left(rapkey_prefix_hi($1), -1) || '-'", {"22023"}),
    ("rapkey_prefix_hi", "SELECT right(rapkey_prefix_hi($1), 1) = '/'", {"22023"}),
    ("rapkey_normalize_prefix", "SELECT rapkey_normalize_prefix(rapkey_normalize_prefix($1)) = rapkey_normalize_prefix($1)",
     {"22023"}),
    # True exactly for the whole-part prefixes of the key, whatever case and spaces $1 has.
    ("rapkey_has_prefix", "SELECT rapkey_has_prefix('ord.cn.sh.202407.8842-2', $1) = (left(rapkey_prefix_lo($1), -1) "
                          "IN ('ord', 'ord.cn', 'ord.cn.sh', 'ord.cn.sh.202407', 'ord.cn.sh.202407.8842'))", {"22023"}),
    ("rapkey_type", "SELECT rapkey_type($1) = split_part($1, '.', 1)", {"23514"}),
    ("rapkey_segments", "SELECT rapkey_segment($1, 1) = (rapkey_segments($1))[1]", {"23514"}),
    # Any position, as array subscripts: NULL outside 1..5.
    ("rapkey_segment", "SELECT rapkey_segment($1, length($1) - 22) IS NOT DISTINCT FROM "
                       "(rapkey_segments($1))[length($1) - 22]", {"23514"}),
]
BUILD_CALLS = [
    ("rapkey_build", "SELECT rapkey_is_valid(rapkey_build(split_part($1, E'\\x01', 1), "
                     "VARIADIC (string_to_array($1, E'\\x01'))[2:]))", {"22023"}),
    # Empty parts as NULLs: "22004", null value not allowed.
    ("rapkey_build(NULLs)", "SELECT rapkey_is_valid(rapkey_build(split_part($1, E'\\x01', 1), "
                            "VARIADIC (string_to_array($1, E'\\x01', ''))[2:]))", {"22023", "22004"}),
]
PREFIX_CALLS = [
    ("rapkey_next", "SELECT rapkey_is_valid(rapkey_next($1))", {"22023"}),
]
# Text that is not UTF-8 as one part of the arguments.
RAW_PART_CALLS = [
    ("rapkey_build(type)", "SELECT rapkey_is_valid(rapkey_build(split_part($1, '.', 1), 'cn', '1'))", {"22023"}),
    ("rapkey_build(segment)", "SELECT rapkey_is_valid(rapkey_build('ord', 'cn', $1))", {"22023"}),
    ("rapkey_next", "SELECT rapkey_is_valid(rapkey_next($1))", {"22023"}),
]
BYTEA_CALLS = [
    ("xid12(bytea)", "SELECT xid12($1)::bytea = $1", {"22P03"}),
    ("bytea::xid12", "SELECT $1::xid12::bytea = $1", {"22P03"}),
    ("xid12_from_parts(machine)", "SELECT xid12_machine(xid12_from_parts('2024-07-01 00:00:00+00', $1, 1, 1)) = $1",
     {"22023"}),
]
INT8_CALLS = [
    ("snowflake_time", "SELECT snowflake_min(snowflake_time($1)) <= $1 AND $1 <= snowflake_max(snowflake_time($1))",
     {"22023", "22008"}),
    # The fields from the id's bits: 41 of time, 10 of worker, 12 of sequence.
    ("snowflake_worker", "SELECT snowflake_worker($1) = (($1 >> 12) & 1023)::int", {"22023"}),
    ("snowflake_sequence", "SELECT snowflake_sequence($1) = ($1 & 4095)::int", {"22023"}),
    # At most one grant or reservation covers an id.
    ("idgen_writer_of(bigint)", "SELECT count(*) <= 1 FROM idgen_writer_of($1)", set()),
]
# A writer's name (at most 256 characters) and a pool's name (at most 63) are the caller's text:
# any other text is a name. Each grant is released at once ('-infinity': it made no id), so the
# slots stay free. These calls run in chunks of REGISTRY_CHUNK values, each chunk a transaction
# of its own: every acquire and release updates the slot's row, and the versions one transaction
# made of a row cannot be pruned before it ends, so in one transaction each call walks the
# versions of all the calls before it (5,000 calls took 75 s, the time growing with the square
# of their number; in chunks of 250, about 10 s).
REGISTRY_TEXT_CALLS = [
    ("idgen_acquire(writer)", "SELECT length($1) <= 256 AND r.hi = r.lo FROM idgen_acquire('xid12', $1, '1 second') a, "
                              "idgen_release(a.grant_id, a.token, '-infinity') r", {"22023", "22001"}),
    ("idgen_acquire(pool)", "SELECT length($1) <= 63 AND r.hi = r.lo FROM idgen_acquire('xid12', 'fuzz', '1 second', $1) a, "
                            "idgen_release(a.grant_id, a.token, '-infinity') r", {"22023", "22001"}),
]
REGISTRY_CHUNK = 250
TS_CALLS = [
    ("xid12_min/max", "SELECT xid12_min($1) <= xid12_max($1) AND xid12_time(xid12_min($1)) = date_trunc('second', $1)",
     {"22008"}),
    ("gen_xid12(timestamptz)", "SELECT xid12_time(gen_xid12($1)) = date_trunc('second', $1)", {"22008"}),
    ("snowflake_min/max", "SELECT snowflake_min($1) <= snowflake_max($1) "
                          "OR (snowflake_min($1), snowflake_max($1)) = (0, -1)", {"22008"}),
]
PARTS_CALLS = [
    ("xid12_from_parts", "SELECT xid12_pid(x) = split_part($1, ',', 2)::int AND xid12_counter(x) = split_part($1, ',', 3)::int "
                         "FROM xid12_from_parts(to_timestamp(split_part($1, ',', 1)::float8), '\\x010203', "
                         "split_part($1, ',', 2)::int, split_part($1, ',', 3)::int) x", {"22023", "22008"}),
]

# The check character of a body of symbols, written from docs/formats.md §4 as damm() above, for the
# rapkey_is_valid call. Only called on text that matches the grammar.
DAMM_SQL = r"""
CREATE FUNCTION pg_temp.hostile_damm(body text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    interim int := 0;
    symbol int;
BEGIN
    FOR i IN 1 .. length(body) LOOP
        symbol := strpos('0123456789abcdefghijklmnopqrstuvwxyz.', substr(body, i, 1)) - 1;
        interim := mod(mod(2 * (interim - symbol), 37) + 37, 37);
    END LOOP;
    RETURN substr('0123456789abcdefghijklmnopqrstuvwxyz~', interim + 1, 1);
END
$$;
"""

CORPUS_TYPES = {"c_text": "text", "c_build": "text", "c_prefix": "text", "c_parts": "text", "c_text_raw": "text",
                "c_bytea": "bytea", "c_int8": "bigint", "c_ts": "timestamptz"}

# Runs the query for each value of the corpus, each in a subtransaction, and counts the
# outcomes: 'ok', 'WRONG' (the query returned false or NULL), or the error's SQLSTATE; an error
# whose message looks like a Rust panic counts as 'PANIC', one whose message and DETAIL exceed
# 1000 characters as 'LONG MESSAGE'. Keeps one example of each. One function per query, with
# the query as a static statement, so that PL/pgSQL plans it once.
HARNESS = r"""
CREATE FUNCTION pg_temp.{name}(corpus text, skip int, max_values int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    counts jsonb := '{{}}';
    examples jsonb := '{{}}';
    input_value {type};
    ok boolean;
    state text;
    message text;
    detail text;
    shown text;
BEGIN
    FOR input_value IN EXECUTE format('SELECT v FROM pg_temp.%I ORDER BY n OFFSET %s LIMIT %s', corpus, skip, max_values) LOOP
        BEGIN
            ok := ({query});
            state := CASE WHEN ok THEN 'ok' ELSE 'WRONG' END;
            message := '';
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                detail = PG_EXCEPTION_DETAIL;
            IF message || detail ~* 'panick|unwrap|\.rs:[0-9]' THEN
                state := 'PANIC';
            ELSIF length(message) + length(detail) > 1000 THEN
                state := 'LONG MESSAGE';  -- a message must not echo a huge input
            END IF;
        END;
        counts := jsonb_set(counts, ARRAY[state], to_jsonb(coalesce((counts ->> state)::int, 0) + 1));
        IF NOT examples ? state THEN
            shown := left(input_value::text, 80);
            examples := examples || jsonb_build_object(state, regexp_replace(
                left(message, 200) || ' <- ' || shown, '[^\x20-\x7e]', '?', 'g'));
        END IF;
    END LOOP;
    RETURN jsonb_build_object('counts', counts, 'examples', examples);
END
$$;
"""


def make_corpus(conn: psycopg.Connection, seed: int, sql_ascii: bool = False) -> dict:
    """Fills temporary corpus tables; returns their sizes."""
    v = Values(seed)
    n = int(5000 * SCALE)
    texts = [v.text() for _ in range(n)]
    byteas = [v.bytes_() for _ in range(int(3000 * SCALE))]
    # The 1 MB values come first, numbered below 0.
    corpora = {
        "c_text": ("text", huge_texts() + texts),
        "c_build": ("text", [v.build_args() for _ in range(n)]),
        "c_prefix": ("text", [v.prefix() for _ in range(int(1000 * SCALE))]),
        "c_bytea": ("bytea", huge_bytes() + byteas),
        "c_int8": ("bigint", [v.int8() for _ in range(int(3000 * SCALE))]),
        "c_seconds": ("float8", [v.seconds() for _ in range(int(2000 * SCALE))]),
        "c_parts": ("text", [v.parts_args() for _ in range(int(2000 * SCALE))]),
    }
    if sql_ascii:
        # Text that is not UTF-8: each byte string becomes text as is (NULs aside).
        # Fewer values there: most of them fail early, at the first byte that is not ASCII.
        raw = [b.replace(b"\0", b"?") for b in byteas[:1000]] + [t.encode("latin-1", "replace") for t in texts[:1000]]
        v.rng.shuffle(raw)
        corpora["c_raw"] = ("bytea", [b.replace(b"\0", b"?") for b in huge_bytes()] + raw)
    for table, (type_, values) in corpora.items():
        conn.execute(f"CREATE TEMP TABLE {table} (n int, v {type_})")
        with conn.cursor().copy(f"COPY {table} (n, v) FROM STDIN") as copy:
            first = -sum(1 for value in values[:10] if len(value) >= MB) if type_ in ("text", "bytea") else 0
            for i, value in enumerate(values, start=first):
                copy.write_row((i, value))
    conn.execute("CREATE TEMP TABLE c_ts AS SELECT n, to_timestamp(v) AS v FROM c_seconds "
                 "WHERE v BETWEEN -210866803199 AND 9224318015998")  # timestamptz's range
    conn.execute("INSERT INTO c_ts VALUES (-2, 'infinity'), (-1, '-infinity'), (-3, 'epoch'), "
                 "(-4, '2106-02-07 06:28:15.999999+00'), (-5, '2106-02-07 06:28:16+00'), "
                 "(-6, '1969-12-31 23:59:59.999999+00')")
    if sql_ascii:
        conn.execute("CREATE TEMP TABLE c_text_raw AS SELECT n, convert_from(v, 'SQL_ASCII') AS v FROM c_raw")
    return {t: len(vals) for t, (_, vals) in corpora.items()}


def memory_kb(pid: int) -> dict:
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {k: int(fields[k].split()[0]) for k in ("VmRSS", "RssAnon")}


def server_log(conn: psycopg.Connection):
    host = conn.info.host
    path = os.path.join(os.path.dirname(host), "server.log")
    return path if os.path.exists(path) else None


def harness(conn, query: str, type_: str) -> str:
    """The name of the harness function for this query and value type, created on first use."""
    name = "hostile_" + hashlib.md5(f"{query}/{type_}".encode()).hexdigest()[:16]
    if not conn.execute("SELECT to_regproc(%s) IS NOT NULL", [f"pg_temp.{name}"]).fetchone()[0]:
        conn.execute(HARNESS.format(name=name, type=type_, query=query.replace("$1", "input_value")))
    return name


def run_calls(conn, calls, corpus, max_values=1 << 30, chunk=None):
    """Runs each call over the first max_values values of the corpus (chunk values a statement,
    each in a transaction of its own, when chunk is given); returns the failures as
    readable lines, and the number of calls."""
    problems, total = [], 0
    for name, query, expected in calls:
        started = time.monotonic()
        function = harness(conn, query, CORPUS_TYPES[corpus])
        step = min(chunk or max_values, max_values)
        counts, examples = {}, {}
        for skip in range(0, max_values, step):
            result = conn.execute(f"SELECT pg_temp.{function}(%s, %s, %s)",
                                  [corpus, skip, min(step, max_values - skip)]).fetchone()[0]
            for state, n in result["counts"].items():
                counts[state] = counts.get(state, 0) + n
            for state, example in result["examples"].items():
                examples.setdefault(state, example)
            if sum(result["counts"].values()) < step:  # the corpus ends here
                break
        total += sum(counts.values())
        print(f"  {name:28} {corpus:10} {time.monotonic() - started:5.2f} s {counts}")
        for state in counts:
            if state != "ok" and state not in expected:
                problems.append(f"{name}: {counts[state]} x {state}, e.g. {examples[state]}")
        if max_values > 1000 and "ok" not in counts:
            problems.append(f"{name}: no call succeeded, the corpus misses the valid inputs ({counts})")
    return problems, total


def fuzz_database(conn: psycopg.Connection, seed: int, sql_ascii: bool = False):
    sizes = make_corpus(conn, seed, sql_ascii)
    print(f"corpus sizes: {sizes}")
    conn.execute(DAMM_SQL)
    text_corpus = "c_text_raw" if sql_ascii else "c_text"
    plan = [(TEXT_CALLS, text_corpus, None)]
    if sql_ascii:
        plan.append((RAW_PART_CALLS, text_corpus, None))
    else:
        plan += [(BUILD_CALLS, "c_build", None), (PREFIX_CALLS, "c_prefix", None),
                 (REGISTRY_TEXT_CALLS, "c_text", REGISTRY_CHUNK)]
        plan += [(BYTEA_CALLS, "c_bytea", None), (INT8_CALLS, "c_int8", None), (TS_CALLS, "c_ts", None),
                 (PARTS_CALLS, "c_parts", None)]
    if conn.info.server_version >= 160000:
        # Soft errors: xid12's input never fails; the rapkey domain's CHECK raises its error.
        plan.append(([("pg_input_is_valid(xid12)",
                       "SELECT pg_input_is_valid($1, 'xid12') = ($1 ~ '^[0-9a-vA-V]{19}[0gG]$')", set()),
                      ("pg_input_is_valid(rapkey)", "SELECT pg_input_is_valid($1, 'rapkey') = rapkey_is_valid($1)",
                       {"23514"})],
                     text_corpus, None))
    return plan


def check_no_crash(conn, pid, started, log_path, log_offset):
    assert conn.execute("SELECT pg_backend_pid()").fetchone()[0] == pid, "the backend was replaced"
    assert conn.execute("SELECT pg_postmaster_start_time()").fetchone()[0] == started, "the server restarted"
    if log_path:
        with open(log_path, "rb") as f:
            f.seek(log_offset)
            log = f.read().decode("utf-8", "replace")
        for bad in ("PANIC", "terminated by signal", "server process", "panicked at"):
            assert bad not in log, f"server log: {bad!r} in {log[-2000:]}"


def hostile_run(dbname: str, sql_ascii: bool):
    print(f"\nhostile input: seed {SEED} (PG_IDGEN_HOSTILE_SEED), scale {SCALE} (PG_IDGEN_HOSTILE_SCALE), "
          f"database {dbname}")
    with connect() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {dbname}")
        encoding = " ENCODING 'SQL_ASCII' TEMPLATE template0 LOCALE 'C'" if sql_ascii else ""
        admin.execute(f"CREATE DATABASE {dbname}{encoding}")
    with connect(dbname=dbname) as conn:
        conn.execute("CREATE EXTENSION pg_idgen")
        pid, started = conn.execute("SELECT pg_backend_pid(), pg_postmaster_start_time()").fetchone()
        log_path = server_log(conn)
        log_offset = os.path.getsize(log_path) if log_path else 0
        plan = fuzz_database(conn, SEED + (1 if sql_ascii else 0), sql_ascii)
        # A first round over a slice of each corpus, 1 MB values included, so that the memory
        # measured next already holds what a run needs once (caches, the largest buffers).
        for calls, corpus, chunk in plan:
            run_calls(conn, calls, corpus, max_values=300, chunk=chunk)
        run_calls(conn, [("length", "SELECT length($1) > 0", set())], "c_text")
        before = memory_kb(pid)
        problems, total = [], 0
        for calls, corpus, chunk in plan:
            p, t = run_calls(conn, calls, corpus, chunk=chunk)
            problems += p
            total += t
        after = memory_kb(pid)
        growth = after["RssAnon"] - before["RssAnon"]
        print(f"{total} calls; backend {pid} memory before {before}, after {after} (kB): "
              f"private memory grew by {growth} kB (at most {MAX_GROWTH_KB} kB allowed)")
        check_no_crash(conn, pid, started, log_path, log_offset)
        assert not problems, "\n".join(problems)
        assert growth < MAX_GROWTH_KB
        return total


def test_hostile_input_utf8():
    assert hostile_run("hostile_input", sql_ascii=False) > 80_000 * SCALE


def test_hostile_input_sql_ascii():
    """Text that is not UTF-8 reaches the functions in a SQL_ASCII database."""
    assert hostile_run("hostile_input_sql_ascii", sql_ascii=True) > 20_000 * SCALE


# =============================================================================================
# The binary receive path, from the client: binary parameters and binary COPY.


class Xid12Raw(bytes):
    """Bytes psycopg sends in binary format as an xid12 parameter (so xid12_recv reads them)."""


def register_raw_xid12(conn: psycopg.Connection) -> None:
    class Xid12RawDumper(Dumper):
        format = psycopg.pq.Format.BINARY

        def dump(self, obj):
            return bytes(obj)

    Xid12RawDumper.oid = conn.execute("SELECT 'xid12'::regtype::oid").fetchone()[0]
    conn.adapters.register_dumper(Xid12Raw, Xid12RawDumper)


def copy_binary(rows) -> bytes:
    out = [b"PGCOPY\n\xff\r\n\0", struct.pack("!ii", 0, 0)]
    for field in rows:
        out.append(struct.pack("!hi", 1, len(field)) + field)
    out.append(struct.pack("!h", -1))
    return b"".join(out)


def test_hostile_binary_input():
    v = Values(SEED + 2)
    print(f"\nhostile binary input: seed {SEED + 2}")
    values = [v.bytes_() for _ in range(int(1500 * SCALE))] + huge_bytes()
    with connect() as admin:
        admin.execute("DROP DATABASE IF EXISTS hostile_binary")
        admin.execute("CREATE DATABASE hostile_binary")
    with connect(dbname="hostile_binary") as conn:
        conn.execute("CREATE EXTENSION pg_idgen")
        register_raw_xid12(conn)
        pid, started = conn.execute("SELECT pg_backend_pid(), pg_postmaster_start_time()").fetchone()
        log_path = server_log(conn)
        log_offset = os.path.getsize(log_path) if log_path else 0
        outcomes = {}
        for raw in values:
            try:
                text = conn.execute("SELECT %b::text", [Xid12Raw(raw)]).fetchone()[0]
                assert len(raw) == 12 and text == base64.b32hexencode(raw).decode()[:20].lower(), raw
                outcomes["ok"] = outcomes.get("ok", 0) + 1
            except psycopg.Error as e:
                assert e.sqlstate == "22P03" and len(raw) != 12, (raw[:40], e.sqlstate, str(e))
                outcomes[e.sqlstate] = outcomes.get(e.sqlstate, 0) + 1
        print(f"  binary parameters: {outcomes}")
        assert outcomes.get("ok") and outcomes.get("22P03")

        conn.execute("CREATE TABLE t (x xid12)")
        good = [raw for raw in values if len(raw) == 12]
        with conn.cursor().copy("COPY t (x) FROM STDIN (FORMAT binary)") as copy:
            copy.write(copy_binary(good))
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == len(good)
        assert sorted(r[0] for r in conn.execute("SELECT x::bytea FROM t")) == sorted(good)
        bad = [raw for raw in values if len(raw) != 12][:100]
        for raw in bad:
            with pytest.raises(psycopg.Error) as err:
                with conn.cursor().copy("COPY t (x) FROM STDIN (FORMAT binary)") as copy:
                    copy.write(copy_binary(good[:3] + [raw]))
            assert err.value.sqlstate == "22P03", (raw[:40], err.value.sqlstate, str(err.value))
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == len(good)
        check_no_crash(conn, pid, started, log_path, log_offset)


# Every function that takes user data is in a call above (or, for xid12_recv, the binary test).
FUZZED = {
    "xid12_in", "xid12_recv", "xid12", "xid12_from_parts", "xid12_min", "xid12_max", "gen_xid12",
    "rapkey_is_valid", "rapkey_domain_check", "rapkey_check_char", "rapkey_build", "to_rapkey",
    "rapkey_type", "rapkey_segments", "rapkey_segment", "rapkey_prefix_lo", "rapkey_prefix_hi",
    "rapkey_has_prefix", "rapkey_normalize_prefix", "rapkey_next",
    "snowflake_time", "snowflake_worker", "snowflake_sequence", "snowflake_min", "snowflake_max",
    "idgen_acquire", "idgen_writer_of",
}
# idgen_backfill and its helpers take identifiers and the caller's own SQL, not data to decode:
# test_backfill.py checks each of their bad arguments.
NOT_DATA = {
    "idgen_backfill", "idgen_backfill_base_type", "idgen_backfill_check_type",
    "idgen_backfill_column", "idgen_backfill_fill", "idgen_backfill_lock", "idgen_backfill_operator", "idgen_backfill_plan",
    "idgen_backfill_step", "idgen_statement_timeout",
    "idgen_backfill_count", "idgen_backfill_drop_work", "idgen_backfill_fill_range", "idgen_backfill_forget",
    "idgen_backfill_next_chunk",
    "idgen_backfill_sort", "idgen_backfill_start", "idgen_backfill_target_check", "idgen_backfill_work_check", "idgen_backfill_work_plan",
    # The writer registry's other functions take grant ids, tokens, slots and identifiers, and its
    # internal helpers are SQL the public ones call: all SQL, no Rust code to panic. The regress
    # suites registry and registry_edge check each bad argument (unknown grant 42704, wrong token 42501, slot out
    # of range 22023, column missing or of another type).
    "idgen_renew", "idgen_release", "idgen_reserve", "idgen_verify", "idgen_report",
    "idgen_registry_pack", "idgen_registry_time_end", "idgen_registry_pool_of", "idgen_registry_fence_margin",
    "idgen_registry_id_time", "idgen_registry_check_length", "idgen_registry_builtin_pool", "idgen_registry_fence_lease", "idgen_registry_moment", "idgen_registry_row", "idgen_registry_own_slot",
    "idgen_registry_reserve", "idgen_registry_holder", "idgen_registry_point",
    # The roles' part (0.7.0): registry_security checks their bad arguments (a pool or role that
    # is not one, a cap below 1, a lease with months).
    "idgen_registry_trusted", "idgen_registry_cap", "idgen_registry_seconds", "idgen_registry_lease",
    "idgen_pool_allow", "idgen_pool_disallow",
    # The failovers' part (0.7.0, issue 34): leases per kind, the fence's end, xid12 stripes.
    # registry checks their bad arguments (a lease under 1 s or too long, small pools, stripes).
    "idgen_registry_check_lease", "idgen_registry_default_lease", "idgen_registry_max_lease",
    "idgen_registry_fence_until", "idgen_registry_pick_stripe", "idgen_registry_striped",
    "idgen_registry_unstriped_slot",
    # The edition blocks (0.7.0, issue 44): a flag and a setting's name from the registry's own
    # SQL (sql/registry.sql "Edition blocks"), no user data.
    "idgen_registry_site_change", "idgen_registry_setting",
}


def test_every_input_function_is_fuzzed(database):
    """A function of the extension added later with a text, bytea, integer or timestamp
    argument (and no xid12 one, whose values are already checked) must join the calls above."""
    with connect(dbname=database) as conn:
        takes_input = {row[0] for row in conn.execute("""
            SELECT p.proname FROM pg_proc p
            JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
            JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idgen'
            WHERE p.prorettype <> 'internal'::regtype AND p.proname <> 'xid12_sortsupport'
              AND NOT 'xid12'::regtype = ANY (p.proargtypes)
              AND p.pronargs > 0""")}
    assert takes_input, "no function found"
    assert takes_input - NOT_DATA <= FUZZED, f"not fuzzed: {sorted(takes_input - NOT_DATA - FUZZED)}"
