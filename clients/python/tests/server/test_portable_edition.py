"""The clients on the portable SQL edition (portable/: xid12 a domain over text): registration
finds the edition, xid12 values are text on the wire, an Xid binds (text and binary formats),
keyset pages see every row once; and the same registration on a native database says so.

The portable database is made here: the plain script installed with psql (PG_IDGEN_BINDIR) by
a role that owns the database and nothing else, and the writer grants of portable/README.md."""
import asyncio
import os
import subprocess

import asyncpg
import psycopg
import pytest

import pg_idgen.asyncpg
import pg_idgen.psycopg
from pg_idgen import Xid
from pg_idgen._catalog import ExtensionMissingError

from servers import connect, dsn, fresh_database

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")
DB, OWNER, WRITER = "pyclient_portable", "pyclient_portable_owner", "pyclient_portable_writer"
ROWS, PAGE = 40, 7


def _script() -> str:
    dist = os.path.join(ROOT, "portable", "dist")
    found = sorted(f for f in os.listdir(dist) if f.startswith("pg_idgen_portable--"))
    assert found, f"no portable script in {dist}"
    return os.path.join(dist, found[-1])


@pytest.fixture(scope="module")
def portable_db():
    with connect() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        for role in (WRITER, OWNER):
            admin.execute(f"DROP ROLE IF EXISTS {role}")
        admin.execute(f"CREATE ROLE {OWNER} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB")
        admin.execute(f"CREATE ROLE {WRITER} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB")
        admin.execute(f"CREATE DATABASE {DB} OWNER {OWNER}")
    psql = os.path.join(os.environ["PG_IDGEN_BINDIR"], "psql")
    owner_dsn = dsn(dbname=DB).replace("user=postgres", f"user={OWNER}")
    subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "schema=idgen",
                    "-f", _script(), owner_dsn], check=True, capture_output=True)
    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        for sql in (
            f"GRANT USAGE ON SCHEMA idgen TO {WRITER}",
            f"GRANT SELECT ON idgen.idgen_config TO {WRITER}",
            f"GRANT EXECUTE ON FUNCTION idgen.gen_xid12(), idgen.gen_xid12(timestamptz), "
            f"idgen.gen_snowflake(), idgen.rapkey_next(text) TO {WRITER}",
            "CREATE TABLE public.items (id idgen.xid12 PRIMARY KEY DEFAULT idgen.gen_xid12(), "
            "n int NOT NULL)",
            f"GRANT SELECT, INSERT, DELETE ON public.items TO {WRITER}",
        ):
            conn.execute(sql)
        assert conn.execute("SELECT idgen.idgen_portable_version()").fetchone()[0]
    return dsn(dbname=DB).replace("user=postgres", f"user={WRITER}")


@pytest.fixture(scope="module")
def native_db():
    return fresh_database("pyclient_native_edition", extension=True)


def _fill(conn) -> list:
    conn.execute("DELETE FROM public.items")
    conn.execute(f"INSERT INTO public.items (n) SELECT g FROM generate_series(1, {ROWS}) g")
    return [r[0] for r in conn.execute("SELECT id FROM public.items ORDER BY id")]


def _pages(cur, first, param=lambda x: x, mark="%s") -> list:
    seen, last = [], first
    while True:
        cur.execute(f"SELECT id FROM public.items WHERE id > {mark} ORDER BY id LIMIT {PAGE}",
                    (param(last),))
        page = [r[0] for r in cur.fetchall()]
        if not page:
            return seen
        seen += page
        last = Xid.from_str(page[-1]) if isinstance(page[-1], str) else page[-1]


def test_psycopg_portable(portable_db):
    with psycopg.connect(portable_db, autocommit=True) as conn:
        assert pg_idgen.psycopg.edition(conn) == "portable"
        info = pg_idgen.psycopg.register(conn)
        assert info.edition == "portable" and info.name == "xid12"
        ids = _fill(conn)
        # Text on the wire, in text and binary results: str, parsed by Xid.from_str.
        assert all(isinstance(i, str) and len(i) == 20 for i in ids)
        xids = [Xid.from_str(i) for i in ids]
        assert [str(x) for x in xids] == ids and xids == sorted(xids)
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                for mark in ("%s", "%b", "%t"):
                    cur.execute(f"SELECT n, id FROM public.items WHERE id = {mark}", (xids[3],))
                    n, got = cur.fetchone()
                    assert got == ids[3], (binary, mark)
                # Keyset pages from the smallest id: every row once, in order.
                floor = Xid.from_str("00000000000000000000")
                for mark in ("%s", "%b"):
                    assert _pages(cur, floor, mark=mark) == ids, (binary, mark)
                cur.execute("SELECT ARRAY(SELECT id FROM public.items ORDER BY id)")
                assert cur.fetchone()[0] == xids, binary
                # A list of Xid binds as text[]: = ANY works against the domain.
                cur.execute("SELECT count(*) FROM public.items WHERE id = ANY(%s)", (xids[:5],))
                assert cur.fetchone()[0] == 5
        # Inserting an Xid made by the client (the domain checks it).
        made = Xid.from_str("9m4e2mr0ui3e8a215n4g")
        conn.execute("INSERT INTO public.items (id, n) VALUES (%s, 0)", (made,))
        assert conn.execute("SELECT n FROM public.items WHERE id = %b", (made,)).fetchone()[0] == 0
        with conn.cursor() as cur, cur.copy("COPY public.items (id, n) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["xid12", "int4"])
            copy.write_row((Xid.from_str("9m4e2mr0ui3e8a215n50"), -1))
        assert conn.execute("SELECT n FROM public.items WHERE id = '9m4e2mr0ui3e8a215n50'").fetchone()[0] == -1


def test_psycopg_portable_str_and_async(portable_db):
    with psycopg.connect(portable_db, autocommit=True) as conn:
        assert pg_idgen.psycopg.register(conn, xid12_as=str).edition == "portable"
        ids = _fill(conn)
        arr = conn.execute("SELECT ARRAY(SELECT id FROM public.items ORDER BY id)").fetchone()[0]
        assert arr == ids

    async def go():
        async with await psycopg.AsyncConnection.connect(portable_db, autocommit=True) as aconn:
            assert await pg_idgen.psycopg.edition(aconn) == "portable"
            info = await pg_idgen.psycopg.register(aconn)
            assert info.edition == "portable"
            cur = await aconn.execute("SELECT id FROM public.items WHERE id = %s", (Xid.from_str(ids[0]),))
            assert (await cur.fetchone())[0] == ids[0]

    asyncio.run(go())


def test_asyncpg_portable(portable_db):
    async def go():
        conn = await asyncpg.connect(host=os.environ["PG_IDGEN_HOST"], port=int(os.environ["PG_IDGEN_PORT"]),
                                     user=WRITER, database=DB)
        try:
            assert await pg_idgen.asyncpg.edition(conn) == "portable"
            assert await pg_idgen.asyncpg.register(conn) == "portable"
            await conn.execute("DELETE FROM public.items")
            await conn.execute(f"INSERT INTO public.items (n) SELECT g FROM generate_series(1, {ROWS}) g")
            ids = [r[0] for r in await conn.fetch("SELECT id FROM public.items ORDER BY id")]
            assert all(isinstance(i, str) for i in ids)
            x = Xid.from_str(ids[5])
            assert await conn.fetchval("SELECT n FROM public.items WHERE id = $1", str(x)) is not None
            seen, last = [], "00000000000000000000"
            while rows := await conn.fetch(
                    f"SELECT id FROM public.items WHERE id > $1 ORDER BY id LIMIT {PAGE}", str(last)):
                seen += [r[0] for r in rows]
                last = Xid.from_str(rows[-1][0])
            assert seen == ids
        finally:
            await conn.close()

    asyncio.run(go())


def test_sqlalchemy_portable(portable_db):
    sa = pytest.importorskip("sqlalchemy")
    from pg_idgen.sqlalchemy import Xid12, register

    engine = sa.create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(portable_db))
    register(engine)
    items = sa.Table("items", sa.MetaData(), sa.Column("id", Xid12(schema="idgen"), primary_key=True),
                     sa.Column("n", sa.Integer))
    try:
        with engine.begin() as conn:
            got = conn.execute(sa.select(items.c.id).order_by(items.c.id)).scalars().all()
            assert got and all(isinstance(x, Xid) for x in got)
            assert conn.execute(sa.select(sa.func.count()).where(items.c.id > got[0])).scalar() == len(got) - 1
            assert conn.execute(sa.select(items.c.id).where(items.c.id == got[1])).scalar() == got[1]
    finally:
        engine.dispose()


def test_native_says_native(native_db):
    with connect(dbname=native_db) as conn:
        assert pg_idgen.psycopg.edition(conn) == "native"
        info = pg_idgen.psycopg.register(conn)
        assert info.edition == "native"
        conn.execute("CREATE TEMP TABLE items (id xid12 PRIMARY KEY DEFAULT gen_xid12(), n int)")
        conn.execute(f"INSERT INTO items (n) SELECT g FROM generate_series(1, {ROWS}) g")
        ids = [r[0] for r in conn.execute("SELECT id FROM items ORDER BY id")]
        assert all(i.__class__ is Xid for i in ids)
        with conn.cursor(binary=True) as cur:
            assert cur.execute("SELECT id FROM items WHERE id = %s", (ids[2],)).fetchone()[0] == ids[2]

    async def go():
        conn = await asyncpg.connect(host=os.environ["PG_IDGEN_HOST"], port=int(os.environ["PG_IDGEN_PORT"]),
                                     user="postgres", database=native_db)
        try:
            assert await pg_idgen.asyncpg.edition(conn) == "native"
            assert await pg_idgen.asyncpg.register(conn) == "native"
            assert isinstance(await conn.fetchval("SELECT gen_xid12()"), Xid)
        finally:
            await conn.close()

    asyncio.run(go())


def test_neither_edition():
    name = fresh_database("pyclient_no_edition")
    with connect(dbname=name) as conn:
        assert pg_idgen.psycopg.edition(conn) is None
        with pytest.raises(ExtensionMissingError, match="nor a portable xid12 domain"):
            pg_idgen.psycopg.register(conn)


MALLORY = "pyclient_portable_mallory"

PLANT = """
CREATE SCHEMA {schema};
CREATE DOMAIN {schema}.xid12 AS text CHECK (VALUE IS NULL);
CREATE FUNCTION {schema}.idgen_portable_version() RETURNS text LANGUAGE sql AS $$SELECT '9'$$;
"""


def _mallory(database: str) -> str:
    """A role that is not the database owner, with CREATE on the database."""
    with connect() as admin:
        admin.execute(f"DROP ROLE IF EXISTS {MALLORY}")
        admin.execute(f"CREATE ROLE {MALLORY} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB")
        admin.execute(f"GRANT CREATE ON DATABASE {database} TO {MALLORY}")
    return dsn(dbname=database).replace("user=postgres", f"user={MALLORY}")


def _drop_mallory(database: str) -> None:
    with connect(dbname=database) as admin:
        admin.execute(f"DROP OWNED BY {MALLORY} CASCADE")
    with connect() as admin:
        admin.execute(f"DROP ROLE IF EXISTS {MALLORY}")


def test_planted_lookalike_ignored(portable_db):
    """A schema sorting first, made by a role that is not the database owner: not the edition."""
    mallory = _mallory(DB)
    try:
        with psycopg.connect(mallory, autocommit=True) as conn:
            conn.execute(PLANT.format(schema="aaa"))
            # Visible to the planter itself, the real one not: still the real one.
            real = conn.execute(
                "SELECT t.oid FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                "WHERE n.nspname = 'idgen' AND t.typname = 'xid12'").fetchone()[0]
            conn.execute("SET search_path = aaa")
            assert pg_idgen.psycopg.register(conn).oid == real
        with psycopg.connect(portable_db, autocommit=True) as conn:
            assert pg_idgen.psycopg.edition(conn) == "portable"
            assert pg_idgen.psycopg.register(conn).oid == real

        async def go():
            conn = await asyncpg.connect(host=os.environ["PG_IDGEN_HOST"],
                                         port=int(os.environ["PG_IDGEN_PORT"]), user=WRITER, database=DB)
            try:
                assert await pg_idgen.asyncpg.register(conn) == "portable"
            finally:
                await conn.close()

        asyncio.run(go())
    finally:
        _drop_mallory(DB)


def test_planted_lookalike_alone_is_none():
    name = fresh_database("pyclient_planted_only")
    mallory = _mallory(name)
    try:
        with psycopg.connect(mallory, autocommit=True) as conn:
            conn.execute(PLANT.format(schema="aaa"))
            conn.execute("SET search_path = aaa")
            assert pg_idgen.psycopg.edition(conn) is None
            with pytest.raises(ExtensionMissingError):
                pg_idgen.psycopg.register(conn)
    finally:
        _drop_mallory(name)


def test_two_owner_candidates_are_ambiguous(portable_db):
    owner_dsn = dsn(dbname=DB).replace("user=postgres", f"user={OWNER}")
    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        conn.execute(PLANT.format(schema="aaa"))
    try:
        with psycopg.connect(portable_db, autocommit=True) as conn:
            with pytest.raises(psycopg.Error, match=r"more than one portable edition, in schemas aaa, idgen"):
                pg_idgen.psycopg.edition(conn)
            with pytest.raises(psycopg.Error, match=r"more than one portable edition"):
                pg_idgen.psycopg.register(conn)

        async def go():
            conn = await asyncpg.connect(host=os.environ["PG_IDGEN_HOST"],
                                         port=int(os.environ["PG_IDGEN_PORT"]), user=WRITER, database=DB)
            try:
                with pytest.raises(asyncpg.PostgresError, match=r"schemas aaa, idgen"):
                    await pg_idgen.asyncpg.register(conn)
            finally:
                await conn.close()

        asyncio.run(go())
    finally:
        with psycopg.connect(owner_dsn, autocommit=True) as conn:
            conn.execute("DROP SCHEMA aaa CASCADE")
