"""pg_idgen.asyncpg: the binary xid12 codec on a real server."""
import asyncio
import os

import asyncpg
import pytest

import pg_idgen.asyncpg
from pg_idgen import Xid, XidGenerator
from pg_idgen._catalog import ExtensionMissingError

from servers import connect, fresh_database


def params(dbname):
    return dict(host=os.environ["PG_IDGEN_HOST"], port=int(os.environ["PG_IDGEN_PORT"]),
                user="postgres", database=dbname)


@pytest.fixture(scope="module")
def db():
    return fresh_database("pyclient_asyncpg", extension=True)


def run(coro):
    return asyncio.run(coro)


def test_values_parameters_and_arrays(db):
    async def go():
        conn = await asyncpg.connect(**params(db))
        try:
            await pg_idgen.asyncpg.register(conn)
            x, text, arr = await conn.fetchrow(
                "SELECT x, x::text, ARRAY[x, NULL] FROM (SELECT gen_xid12() x) s")
            assert isinstance(x, Xid) and str(x) == text and arr == [x, None]
            fixed = Xid("9m4e2mr0ui3e8a215n4g")
            # An Xid, its text or its bytes bind as xid12.
            for value in (fixed, str(fixed), fixed.bytes):
                assert await conn.fetchval("SELECT $1::xid12::text", value) == str(fixed)
            assert await conn.fetchval("SELECT $1 > xid12_min('2011-01-01')", fixed) is True
            await conn.execute("CREATE TEMP TABLE t (id xid12 PRIMARY KEY DEFAULT gen_xid12(), n int)")
            await conn.execute("INSERT INTO t (n) SELECT g FROM generate_series(1, 20) g")
            ids = [r[0] for r in await conn.fetch("SELECT id FROM t ORDER BY n")]
            got = await conn.fetch("SELECT n FROM t WHERE id = ANY($1) ORDER BY n", ids[2:5])
            assert [r[0] for r in got] == [3, 4, 5]
            # asyncpg wraps the codec's ValueError; the message keeps the reason.
            with pytest.raises(asyncpg.DataError, match="last character must be 0 or g"):
                await conn.fetchval("SELECT $1::xid12", "00000000000000000001")
        finally:
            await conn.close()

    run(go())


def test_copy_records_to_table(db):
    gen = XidGenerator(0x0C0B0A)
    records = [(gen.new(), [gen.new()], n) for n in range(2000)]

    async def go():
        conn = await asyncpg.connect(**params(db))
        try:
            await pg_idgen.asyncpg.register(conn)
            await conn.execute("DROP TABLE IF EXISTS ap_copy")
            await conn.execute("CREATE TABLE ap_copy (id xid12 PRIMARY KEY, tags xid12[], n int)")
            await conn.copy_records_to_table("ap_copy", records=records, columns=["id", "tags", "n"])
            back = await conn.fetch("SELECT id, tags, n FROM ap_copy ORDER BY n")
            texts = await conn.fetch("SELECT id::text FROM ap_copy ORDER BY n")
            return [tuple(r) for r in back], [r[0] for r in texts]
        finally:
            await conn.close()

    back, texts = run(go())
    assert back == records
    assert texts == [str(r[0]) for r in records]


def test_pool_init_and_other_schema():
    name = fresh_database("pyclient_asyncpg_schema")
    with connect(dbname=name) as conn:
        conn.execute("CREATE SCHEMA ids")
        conn.execute("CREATE EXTENSION pg_idgen SCHEMA ids")

    async def go():
        async with asyncpg.create_pool(**params(name), min_size=1, max_size=2,
                                       init=pg_idgen.asyncpg.register) as pool:
            async with pool.acquire() as conn:
                x = await conn.fetchval("SELECT ids.gen_xid12()")
                assert isinstance(x, Xid)
                assert await conn.fetchval("SELECT ids.xid12_pid($1::ids.xid12)", x) == x.pid

    run(go())


def test_missing_extension():
    name = fresh_database("pyclient_asyncpg_without")

    async def go():
        conn = await asyncpg.connect(**params(name))
        try:
            with pytest.raises(ExtensionMissingError, match="CREATE EXTENSION pg_idgen"):
                await pg_idgen.asyncpg.register(conn)
        finally:
            await conn.close()

    run(go())


def test_xid12_as_str(db):
    async def go():
        conn = await asyncpg.connect(**params(db))
        try:
            with pytest.raises(ValueError, match="xid12_as must be Xid or str"):
                await pg_idgen.asyncpg.register(conn, xid12_as=bytes)
            await pg_idgen.asyncpg.register(conn, xid12_as=str)
            x, text, arr = await conn.fetchrow(
                "SELECT x, x::text, ARRAY[x, NULL] FROM (SELECT gen_xid12() x) s")
            assert x.__class__ is str and x == text and arr == [text, None]
            # Binds are as in the default mode: an Xid, its text or its bytes.
            fixed = Xid("9m4e2mr0ui3e8a215n4g")
            for value in (fixed, str(fixed), fixed.bytes):
                assert await conn.fetchval("SELECT $1::xid12", value) == str(fixed)
        finally:
            await conn.close()

    run(go())
