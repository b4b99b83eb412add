"""pandas on a real server: 10,000 rows written with DataFrame.to_sql (an Xid12 column), read back
with read_sql, written with to_json. With ``pg_idgen.sqlalchemy.register(engine, xid12_as=str)``
(psycopg ``register(conn, xid12_as=str)`` underneath) the DataFrame holds the 20-character
texts and to_json writes exactly the server's ``id::text``; in the default mode it holds Xid
values (bytes, which pandas' to_json cannot write: the README's reason for the str mode)."""
import json
import os

import pandas as pd
import psycopg
import pytest
import sqlalchemy as sa

import pg_idgen.psycopg
import pg_idgen.sqlalchemy
from pg_idgen import Xid
from pg_idgen.sqlalchemy import Xid12

from servers import fresh_database

N = 10_000
PAGE = 2_500


def url(dbname):
    host, port = os.environ["PG_IDGEN_HOST"], os.environ["PG_IDGEN_PORT"]
    return f"postgresql+psycopg://postgres@/{dbname}?host={host}&port={port}"


def engine_for(dbname, xid12_as):
    e = sa.create_engine(url(dbname))
    pg_idgen.sqlalchemy.register(e, xid12_as=xid12_as)
    return e


def table():
    md = sa.MetaData()
    return sa.Table("pd_orders", md, sa.Column("id", Xid12), sa.Column("n", sa.Integer))


@pytest.fixture(scope="module")
def db():
    """pd_orders made by to_sql: ids made here, written in a shuffled order, so that the
    server's order is not the order of the INSERTs."""
    name = fresh_database("pyclient_pandas", extension=True)
    ids = [Xid.new() for _ in range(N)]
    df = pd.DataFrame({"id": ids, "n": range(N)}).sample(frac=1, random_state=7)
    e = sa.create_engine(url(name))
    df.to_sql("pd_orders", e, index=False, dtype={"id": Xid12()})
    with e.connect() as conn:
        texts = conn.execute(sa.text("SELECT id::text, n FROM pd_orders ORDER BY id")).all()
    e.dispose()
    assert len(texts) == N and [t for t, _ in texts] == sorted(str(i) for i in ids)  # text order is byte order
    return name, ids, texts


def test_read_sql_then_to_json_writes_the_servers_text(db):
    name, ids, texts = db
    e = engine_for(name, str)
    try:
        df = pd.read_sql("SELECT id, n FROM pd_orders ORDER BY id", e)
        assert len(df) == N and all(v.__class__ is str for v in df["id"])
        rows = json.loads(df.to_json(orient="records"))
        assert [(r["id"], r["n"]) for r in rows] == [tuple(t) for t in texts]
        # A select of the Xid12 column: the same texts (the engine's mode reaches the type).
        typed = pd.read_sql(sa.select(table()).order_by(sa.text("id")), e)
        assert typed["id"].tolist() == [t for t, _ in texts]
        # Look one up by a bound Xid (or its text): the Xid12 type casts the bind to xid12.
        t = table()
        one = pd.read_sql(sa.select(t.c.n).where(t.c.id == ids[1234]), e)
        assert one["n"].tolist() == [1234]
        # Keyset pages: every row once, in the server's order.
        seen, cursor = [], None
        while True:
            q = sa.select(t).order_by(t.c.id).limit(PAGE)
            if cursor is not None:
                q = q.where(t.c.id > cursor)
            page = pd.read_sql(q, e)
            if page.empty:
                break
            seen += page["id"].tolist()
            cursor = page["id"].iloc[-1]
        assert seen == [t for t, _ in texts]
    finally:
        e.dispose()


def test_default_mode_holds_xid_values(db):
    name, ids, texts = db
    e = engine_for(name, Xid)
    try:
        df = pd.read_sql(sa.text("SELECT id, n FROM pd_orders WHERE id = ANY(:ids) ORDER BY id"),
                         e, params={"ids": ids[:3]})  # a list of Xid binds as xid12[]
        assert all(v.__class__ is Xid for v in df["id"]) and df["id"].tolist() == sorted(ids[:3])
        # An Xid is its text: to_json writes it with no adapter (and as before through str).
        for out in (df.to_json(orient="records"), df.assign(id=df["id"].map(str)).to_json(orient="records")):
            assert [r["id"] for r in json.loads(out)] == sorted(str(i) for i in ids[:3])
    finally:
        e.dispose()


def test_a_bad_cursor_is_the_servers_error(db):
    name, _, _ = db
    bad = "9m4e2mr0ui3e8a215n41"
    e = engine_for(name, str)
    try:
        # Sent as text to the server: pandas' DatabaseError, from SQLAlchemy's DataError, with
        # the server's words.
        with pytest.raises(pd.errors.DatabaseError, match="invalid input syntax") as server:
            pd.read_sql(sa.text("SELECT id FROM pd_orders WHERE id > CAST(:c AS xid12)"), e,
                        params={"c": bad})
        assert isinstance(server.value.__cause__, sa.exc.DataError)
        diag = server.value.__cause__.orig.diag
        said = f"{diag.message_primary}: {diag.message_detail}"
        assert diag.sqlstate == "22P02" and said.startswith('invalid input syntax for type xid12')
        # Through the Xid12 type the client refuses it first, in the same words.
        t = table()
        with pytest.raises(pd.errors.DatabaseError) as client:
            pd.read_sql(sa.select(t).where(t.c.id > bad), e)
        cause = client.value.__cause__
        assert isinstance(cause, sa.exc.StatementError) and isinstance(cause.orig, ValueError)
        assert str(cause.orig) == said and said in str(client.value)
    finally:
        e.dispose()


def test_psycopg_register_xid12_as_str(db):
    name, ids, texts = db
    host, port = os.environ["PG_IDGEN_HOST"], os.environ["PG_IDGEN_PORT"]
    with psycopg.connect(host=host, port=port, user="postgres", dbname=name) as conn:
        with pytest.raises(ValueError, match="xid12_as must be Xid or str"):
            pg_idgen.psycopg.register(conn, xid12_as=bytes)
        pg_idgen.psycopg.register(conn, xid12_as=str)
        q = "SELECT id, ARRAY[id, NULL] FROM pd_orders WHERE id = %s"
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                got = cur.execute(q, [ids[5]]).fetchone()
                assert got == (str(ids[5]), [str(ids[5]), None]) and got[0].__class__ is str
        with conn.cursor(binary=True) as cur:
            cur.execute("SELECT id FROM pd_orders ORDER BY id")
            assert [r[0] for r in cur] == [t for t, _ in texts]
        # Binds are the same in both modes: an Xid still binds as xid12.
        assert conn.execute("SELECT n FROM pd_orders WHERE id = %s", [ids[9]]).fetchone()[0] == 9
