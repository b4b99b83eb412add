"""The Python client (clients/python, import pg_idgen) against a real server: the psycopg 3
adapter in text and binary, and the client's values and rules against the server's."""
import asyncio
import datetime as dt
import random

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

import pg_idgen
import pg_idgen.psycopg
from pg_idgen import Snowflake, Xid, XidGenerator, rapkey
from pg_idgen._catalog import ExtensionMissingError

from servers import connect, dsn, fresh_database

UTC = dt.timezone.utc


@pytest.fixture(scope="module")
def db():
    return fresh_database("pyclient", extension=True)


@pytest.fixture(scope="module")
def db_other_schema():
    """The extension in a schema that is not on the search_path."""
    name = fresh_database("pyclient_schema")
    with connect(dbname=name) as conn:
        conn.execute("CREATE SCHEMA ids")
        conn.execute("CREATE EXTENSION pg_idgen SCHEMA ids")
    return name


@pytest.fixture(scope="module")
def db_without():
    return fresh_database("pyclient_without")


def registered(dbname, **kw):
    conn = connect(dbname=dbname, **kw)
    pg_idgen.psycopg.register(conn)
    return conn


def test_results_load_as_xid_in_text_and_binary(db):
    with registered(db) as conn:
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            row = cur.execute("SELECT x, x::text, x::bytea FROM (SELECT gen_xid12() x) s").fetchone()
            x, text, raw = row
            assert isinstance(x, Xid)
            assert str(x) == text and x.bytes == bytes(raw)
            row = cur.execute("SELECT NULL::xid12, '9M4E2MR0UI3E8A215N4G'::xid12").fetchone()
            assert row == (None, Xid("9m4e2mr0ui3e8a215n4g"))


def test_parameters_bind_as_xid12(db):
    x = Xid("9m4e2mr0ui3e8a215n4g")
    with registered(db) as conn:
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            # %s and %b, and a comparison that needs the xid12 type (not bytea, not text).
            row = cur.execute(
                "SELECT %s::text, %b::text, pg_typeof(%s)::text, %s > xid12_min('2011-01-01'), %t::text",
                [x, x, x, x, x],
            ).fetchone()
            assert row == (str(x), str(x), "xid12", True, str(x))
            assert cur.execute("SELECT %s", [x]).fetchone()[0] == x


def test_arrays_both_ways(db):
    with registered(db) as conn:
        conn.execute("DROP TABLE IF EXISTS py_arr")
        conn.execute("CREATE TABLE py_arr (id xid12 PRIMARY KEY DEFAULT gen_xid12(), n int)")
        conn.execute("INSERT INTO py_arr (n) SELECT g FROM generate_series(1, 50) g")
        ids = [r[0] for r in conn.execute("SELECT id FROM py_arr ORDER BY n")]
        assert all(isinstance(i, Xid) for i in ids) and ids == sorted(ids)
        pick = ids[3:9]
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            for placeholder in ("%s", "%b", "%t"):
                got = cur.execute(f"SELECT n FROM py_arr WHERE id = ANY({placeholder}) ORDER BY n", [pick]).fetchall()
                assert [r[0] for r in got] == list(range(4, 10)), (binary, placeholder)
            arr = cur.execute("SELECT array_agg(id ORDER BY n) FROM py_arr").fetchone()[0]
            assert arr == ids
            assert cur.execute("SELECT pg_typeof(%s)::text", [pick]).fetchone()[0] == "xid12[]"
            assert cur.execute("SELECT ARRAY[NULL, %s]::xid12[]", [pick[0]]).fetchone()[0] == [None, pick[0]]


def test_binary_copy_both_ways(db):
    with registered(db) as conn:
        conn.execute("DROP TABLE IF EXISTS py_copy")
        conn.execute("CREATE TABLE py_copy (id xid12 PRIMARY KEY, tags xid12[], n int)")
        gen = XidGenerator(0x0A0B0C)
        rows = [(gen.new(), [gen.new(), gen.new()], n) for n in range(1000)]
        with conn.cursor() as cur:
            with cur.copy("COPY py_copy (id, tags, n) FROM STDIN (FORMAT binary)") as copy:
                copy.set_types(["xid12", "xid12[]", "int4"])
                for i, (x, tags, n) in enumerate(rows):
                    # An Xid, its text or its 12 bytes: all written as the 12 bytes.
                    copy.write_row(((x, str(x), x.bytes)[i % 3], tags, n))
            out = []
            with cur.copy("COPY (SELECT id, tags, n FROM py_copy ORDER BY n) TO STDOUT (FORMAT binary)") as copy:
                copy.set_types(["xid12", "xid12[]", "int4"])
                out = list(copy.rows())
        assert out == rows
        server = conn.execute("SELECT id::text, xid12_machine(id) FROM py_copy ORDER BY n").fetchall()
        assert server == [(str(x), b"\x0a\x0b\x0c") for x, _, _ in rows]


def test_extension_outside_search_path(db_other_schema):
    with registered(db_other_schema) as conn:
        assert conn.execute("SHOW search_path").fetchone()[0] == '"$user", public'
        x = conn.execute("SELECT ids.gen_xid12()").fetchone()[0]
        assert isinstance(x, Xid)
        cur = conn.cursor(binary=True)
        assert cur.execute("SELECT %b, ids.xid12_pid(%s)", [x, x]).fetchone() == (x, x.pid)
        conn.execute("CREATE TEMP TABLE t (id ids.xid12)")
        with cur.copy("COPY t FROM STDIN (FORMAT binary)") as copy:
            copy.set_types(["xid12"])
            copy.write_row([x])
        assert conn.execute("SELECT id FROM t").fetchone()[0] == x


def test_missing_extension_is_a_clear_error(db_without):
    with connect(dbname=db_without) as conn:
        with pytest.raises(ExtensionMissingError, match="pg_idgen extension is not installed in database 'pyclient_without'.*CREATE EXTENSION pg_idgen"):
            pg_idgen.psycopg.register(conn)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_registration_leaves_the_transaction_state_alone(db):
    with psycopg.connect(dsn(dbname=db)) as conn:  # not autocommit
        pg_idgen.psycopg.register(conn)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        conn.execute("SELECT 1")
        pg_idgen.psycopg.register(conn)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS


def test_pools_configure_register(db):
    with ConnectionPool(dsn(dbname=db), min_size=2, max_size=2, configure=pg_idgen.psycopg.register, open=True) as pool:
        for _ in range(3):
            with pool.connection() as conn:
                x = conn.execute("SELECT gen_xid12()").fetchone()[0]
                assert isinstance(x, Xid)

    async def run():
        async with AsyncConnectionPool(dsn(dbname=db), min_size=1, max_size=2,
                                       configure=pg_idgen.psycopg.register, open=False) as pool:
            async with pool.connection() as conn:
                cur = conn.cursor(binary=True)
                await cur.execute("SELECT gen_xid12(), %s = ANY(%s)", [Xid(bytes(12)), [Xid(bytes(12))]])
                return await cur.fetchone()

    x, found = asyncio.run(run())
    assert isinstance(x, Xid) and found is True


def test_async_connection(db):
    async def run():
        async with await psycopg.AsyncConnection.connect(dsn(dbname=db), autocommit=True) as conn:
            await pg_idgen.psycopg.register(conn)
            cur = conn.cursor(binary=True)
            await cur.execute("SELECT array_agg(gen_xid12()) FROM generate_series(1, 3)")
            return (await cur.fetchone())[0]

    ids = asyncio.run(run())
    assert len(ids) == 3 and ids == sorted(ids) and all(isinstance(i, Xid) for i in ids)


# --- The client's rules against the server's --------------------------------------------

BAD_TEXTS = ["", "0000000000000000000", "000000000000000000000", "0000000000w000000000",
             "000000000 0000000000", "00000000000000000001", "0000000000000000000v",
             "0000000000000000000é", " 0000000000000000000", "+0000000000000000000",
             "000000000_0000000000"]


def test_text_rules_match_the_server(db):
    rng = random.Random(21)
    with connect(dbname=db) as conn:
        for text in BAD_TEXTS:
            with pytest.raises(psycopg.errors.InvalidTextRepresentation):
                conn.execute("SELECT %s::xid12", [text])
            with pytest.raises(ValueError):
                Xid(text)
        alphabet = "0123456789abcdefghijklmnopqrstuvABCDEFGHIJKLMNOPQRSTUV"
        texts = ["".join(rng.choice(alphabet) for _ in range(20)) for _ in range(400)]
        server = conn.execute(
            "SELECT t, pg_input_is_valid(t, 'xid12') FROM unnest(%s::text[]) t", [texts]
        ).fetchall() if conn.info.server_version >= 160000 else None
        for text in texts:
            try:
                ours = str(Xid(text))
            except ValueError:
                ours = None
            if ours is not None:
                assert conn.execute("SELECT %s::xid12::text", [text]).fetchone()[0] == ours
        if server is not None:
            for text, valid in server:
                try:
                    Xid(text)
                    assert valid, text
                except ValueError:
                    assert not valid, text


def test_parts_and_bounds_match_the_server(db):
    with registered(db) as conn:
        gen = XidGenerator(0x123456)
        ids = [gen.new() for _ in range(5)] + [Xid("9m4e2mr0ui3e8a215n4g"), Xid(b"\xff" * 12)]
        for x in ids:
            row = conn.execute("SELECT xid12_time(%s), xid12_machine(%s), xid12_pid(%s), xid12_counter(%s)",
                               [x] * 4).fetchone()
            assert row == (x.time, x.machine, x.pid, x.counter)
        for ts in ["2024-07-01 12:00:00.999999+00", "1970-01-01 00:00:00+00", "2106-02-07 06:28:15.5+00",
                   "2024-02-29 23:59:59.000001-05"]:
            t = conn.execute("SELECT %s::timestamptz", [ts]).fetchone()[0]
            row = conn.execute("SELECT xid12_min(%s), xid12_max(%s)", [t, t]).fetchone()
            assert row == (Xid.min_for(t), Xid.max_for(t)), ts
        for ts in ["1969-12-31 23:59:59.999999+00", "2106-02-07 06:28:16+00"]:
            t = conn.execute("SELECT %s::timestamptz", [ts]).fetchone()[0]
            with pytest.raises(psycopg.errors.DatetimeFieldOverflow):
                conn.execute("SELECT xid12_min(%s)", [t])
            with pytest.raises(ValueError, match="timestamp out of range for xid12"):
                Xid.min_for(t)


def test_machine_rule_matches_the_server(db):
    """The server's default machine id (md5 of its host name) is the client's rule; the
    server runs on this machine in the tests."""
    with connect(dbname=db) as conn:
        if conn.execute("SHOW pg_idgen.machine_id").fetchone()[0] != "-1":
            pytest.skip("pg_idgen.machine_id is set")
        assert conn.execute("SELECT xid12_current_machine()").fetchone()[0] == XidGenerator().machine


def test_rapkey_rules_match_the_server(db):
    rng = random.Random(4)
    pieces = ["ord", "o", "usr", "ORD", "cn", "sh", "202407", "8842", "", "a!", "x" * 33, "ab9", "-", "~", " "]
    candidates = []
    for _ in range(1500):
        body = ".".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        candidates.append(body)
        candidates.append(f"{body}-{rng.choice('0123456789abcxyz~A-')}")
    with connect(dbname=db) as conn:
        rows = conn.execute(
            "SELECT k, rapkey_is_valid(k) FROM unnest(%s::text[]) k", [candidates]).fetchall()
        for key, valid in rows:
            assert rapkey.is_valid(key) == valid, key
        for body in candidates[::2][:300]:
            try:
                ours = rapkey.check_char(body)
            except ValueError:
                ours = None
            try:
                theirs = conn.execute("SELECT rapkey_check_char(%s)", [body]).fetchone()[0]
            except psycopg.errors.DatabaseError:
                theirs = None
            assert ours == theirs, body
        for parts in [("ord", "cn", "sh", "202407", "8842"), (" ORD ", "CN"), ("ord", "cn.sh"), ("o", "x")]:
            try:
                ours = rapkey.build(*parts)
            except ValueError:
                ours = None
            try:
                theirs = conn.execute("SELECT rapkey_build(%s, VARIADIC %s::text[])", [parts[0], list(parts[1:])]).fetchone()[0]
            except psycopg.errors.DatabaseError:
                theirs = None
            assert ours == theirs, parts
        for prefix in ["ord.cn.sh.202407", " ORD.CN ", "ord"]:
            lo, hi = conn.execute("SELECT rapkey_prefix_lo(%s), rapkey_prefix_hi(%s)", [prefix, prefix]).fetchone()
            assert rapkey.prefix_range(prefix) == (lo, hi)


def test_snowflake_matches_the_server(db, worker_42):
    with connect(dbname=db) as conn:
        epoch = int(conn.execute("SHOW pg_idgen.snowflake_epoch").fetchone()[0])
        assert epoch == pg_idgen.DEFAULT_EPOCH_MS
        ours = Snowflake(77)
        ids = [ours.next_id() for _ in range(5)]
        ids += [r[0] for r in conn.execute("SELECT gen_snowflake() FROM generate_series(1, 5)")]
        for i in ids:
            row = conn.execute("SELECT snowflake_time(%s), snowflake_worker(%s), snowflake_sequence(%s)",
                               [i, i, i]).fetchone()
            assert row == (ours.time(i), pg_idgen.snowflake_worker(i), pg_idgen.snowflake_sequence(i))
        assert all(pg_idgen.snowflake_worker(i) == 77 for i in ids[:5])
