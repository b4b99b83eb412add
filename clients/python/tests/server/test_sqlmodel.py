"""SQLModel (Pydantic + SQLAlchemy) with pg_idgen's types on a real server: a table of an xid12
primary key (DEFAULT gen_xid12()), a rapkey and a Snowflake column made by create_all, rows
written and read back, keyset pagination, and the SQLAlchemy Rapkey type."""
import os
from typing import Optional

import pytest
import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.dialects import postgresql
from sqlmodel import Field, Session, SQLModel, create_engine, select

from pg_idgen import Snowflake, Xid, rapkey
from pg_idgen.pydantic import RapkeyStr, SnowflakeId
from pg_idgen.sqlalchemy import Rapkey, Xid12

from servers import fresh_database


class OrderBase(SQLModel):
    key: RapkeyStr = Field(sa_type=Rapkey, unique=True)
    seq: SnowflakeId = Field(sa_type=sa.BigInteger)
    note: str = ""


class SmOrder(OrderBase, table=True):
    __tablename__ = "sm_orders"
    id: Optional[Xid] = Field(default=None, primary_key=True, sa_type=Xid12,
                              sa_column_kwargs={"server_default": sa.text("gen_xid12()")})


class SmOrderCreate(OrderBase):
    pass


@pytest.fixture(scope="module")
def engine():
    host, port = os.environ["PG_IDGEN_HOST"], os.environ["PG_IDGEN_PORT"]
    name = fresh_database("pyclient_sqlmodel", extension=True)
    e = create_engine(f"postgresql+psycopg://postgres@/{name}?host={host}&port={port}")
    SQLModel.metadata.create_all(e, tables=[SmOrder.__table__])
    yield e
    e.dispose()


def test_create_all_makes_the_servers_types(engine):
    with engine.connect() as conn:
        cols = conn.execute(sa.text(
            "SELECT attname, format_type(atttypid, atttypmod), pg_get_expr(adbin, adrelid) "
            "FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum "
            "WHERE attrelid = 'sm_orders'::regclass AND attnum > 0 ORDER BY attnum")).all()
    assert {c[0]: c[1:] for c in cols} == {
        "key": ("rapkey", None), "seq": ("bigint", None), "note": ("character varying", None),
        "id": ("xid12", "gen_xid12()")}


N = 10_000
PAGE = 1_000


@pytest.fixture(scope="module")
def rows(engine):
    """10,000 orders through SQLModel (an ORM bulk INSERT ... RETURNING id, validated by the
    non-table model first); every 10th id made here, the rest by the server's DEFAULT."""
    flakes = Snowflake(worker_id=7)
    made = []
    for n in range(N):
        order = SmOrderCreate(key=rapkey.build("ord", "cn", f"{n:05d}"), seq=flakes.next_id(),
                              note=str(n)).model_dump()
        if n % 10 == 5:
            order["id"] = Xid.new()
        made.append(order)
    # RETURNING the key too: rows come back by key (sort_by_parameter_order would need a
    # sentinel column, or SQLAlchemy sends one INSERT per row), and the rows with an id go
    # first (a batch is a run of rows of the same columns).
    with Session(engine) as s:
        got = s.exec(sa.insert(SmOrder).returning(SmOrder.key, SmOrder.id),
                     params=sorted(made, key=lambda o: "id" not in o)).all()
        s.commit()
    by_key = dict(got)
    ids = [by_key[o["key"]] for o in made]
    assert len(ids) == N and all(i.__class__ is Xid for i in ids) and len(set(ids)) == N
    assert all(ids[n] == made[n]["id"] for n in range(5, N, 10))
    return made, ids


def test_rows_written_read_back_and_paged(engine, rows):
    made, ids = rows
    with Session(engine) as s:
        server = s.exec(sa.text("SELECT id::text FROM sm_orders ORDER BY id")).scalars().all()
        assert len(server) == N
        by_server = s.exec(select(SmOrder.id).order_by(SmOrder.id)).all()
        assert all(i.__class__ is Xid for i in by_server)
        assert by_server == sorted(ids) and [str(i) for i in by_server] == server
        got = s.get(SmOrder, str(ids[3]))  # the text, or the Xid: both bind as xid12
        assert (got.key, got.note, got.seq) == (made[3]["key"], "3", made[3]["seq"])
        assert s.exec(select(SmOrder).where(SmOrder.id == ids[4321])).one().note == "4321"
        assert s.exec(select(SmOrder).where(SmOrder.key == made[7]["key"])).one().id == ids[7]
        # Keyset pagination: each row once, in the server's order, whether the cursor is an
        # Xid or its text (as it comes back from a client).
        for as_text in (False, True):
            seen, cursor = [], None
            while True:
                q = select(SmOrder).order_by(SmOrder.id).limit(PAGE)
                if cursor is not None:
                    q = q.where(SmOrder.id > (str(cursor) if as_text else cursor))
                page = s.exec(q).all()
                if not page:
                    break
                seen += [o.id for o in page]
                cursor = page[-1].id
            assert [str(i) for i in seen] == server
        # A prefix of keys: the domain's "C" collation, text binds.
        lo, hi = rapkey.prefix_range("ord.cn")
        in_range = select(sa.func.count()).select_from(SmOrder).where(SmOrder.key >= lo, SmOrder.key < hi)
        assert s.exec(in_range).one() == N
        assert s.exec(select(SmOrder).where(SmOrder.key == "ord.cn.00001-0")).all() == []
        # What an API writes: the text of the id, the Snowflake id as a string.
        js = SmOrder.model_validate(got).model_dump(mode="json")
        assert js["id"] == str(ids[3]) and js["seq"] == str(made[3]["seq"])


def test_a_bad_cursor_is_refused_in_the_servers_words(engine, rows):
    bad = "9m4e2mr0ui3e8a215n41"  # the last character has a low bit set
    with Session(engine) as s:
        with pytest.raises(sa.exc.DataError) as server:
            s.exec(sa.text("SELECT 1 FROM sm_orders WHERE id > CAST(:c AS xid12)"),
                   params={"c": bad})
        diag = server.value.orig.diag
        said = f"{diag.message_primary}: {diag.message_detail}"
        assert diag.sqlstate == "22P02" and said.startswith("invalid input syntax for type xid12")
    with Session(engine) as s:
        # Through the Xid12 column the client refuses it before sending, in the same words.
        with pytest.raises(sa.exc.StatementError) as client:
            s.exec(select(SmOrder).where(SmOrder.id > bad)).all()
        assert isinstance(client.value.orig, ValueError) and str(client.value.orig) == said


def test_create_all_twice_changes_nothing(engine, rows):
    def catalog():
        with engine.connect() as conn:
            return conn.execute(sa.text(
                "SELECT c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod), "
                "pg_get_expr(d.adbin, d.adrelid) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public' "
                "LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 "
                "LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum "
                "ORDER BY 1, 3")).all()

    before = catalog()
    statements = []

    def record(conn, cursor, statement, *args):
        statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        SQLModel.metadata.create_all(engine, tables=[SmOrder.__table__])
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert statements  # it looked
    assert not [q for q in statements if q.lstrip().upper().startswith(("CREATE", "ALTER", "DROP"))]
    assert catalog() == before
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM sm_orders")).scalar_one() == N


def test_the_server_checks_the_key(engine):
    with pytest.raises(ValidationError, match="Wrong check character"):
        SmOrderCreate(key="ord.cn.001-0", seq=1)
    with pytest.raises(ValidationError, match="Wrong check character"):
        SmOrder.model_validate({"key": "ord.cn.001-0", "seq": 1})
    with Session(engine) as s:
        # A table model is not validated when made: the domain's CHECK refuses it.
        s.add(SmOrder(key="ord.cn.001-0", seq=1))
        with pytest.raises(sa.exc.IntegrityError, match="Wrong check character"):
            s.commit()


def test_rapkey_type_ddl_and_literal():
    md = sa.MetaData()
    t = sa.Table("t", md, sa.Column("k", Rapkey), sa.Column("q", Rapkey(schema="ids")))
    ddl = str(sa.schema.CreateTable(t).compile(dialect=postgresql.dialect()))
    assert "k rapkey" in ddl and 'q "ids".rapkey' in ddl
    stmt = sa.select(t.c.k).where(t.c.k == "it's")
    sql = str(stmt.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    assert "t.k = 'it''s'::rapkey" in sql


def test_without_sa_type_sqlmodel_guesses_wrong():
    """What the README warns of: SQLModel's own guess from the annotation."""
    class SmGuessed(SQLModel, table=True):
        __tablename__ = "sm_guessed"
        id: Optional[Xid] = Field(default=None, primary_key=True)
        key: RapkeyStr
        seq: SnowflakeId

    ddl = str(sa.schema.CreateTable(SmGuessed.__table__).compile(dialect=postgresql.dialect()))
    assert "id VARCHAR" in ddl  # an Xid is a str: text, not xid12
    assert "key VARCHAR" in ddl
    assert "seq INTEGER" in ddl  # int4, too small for a Snowflake id
