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


def test_rows_written_read_back_and_paged(engine):
    flakes = Snowflake(worker_id=7)
    keys = [rapkey.build("ord", "cn", f"{n:03d}") for n in range(23)]
    with Session(engine) as s:
        made = [SmOrder.model_validate(SmOrderCreate(key=k, seq=flakes.next_id(), note=str(n)))
                for n, k in enumerate(keys)]
        made[5].id = Xid.new()  # one made here, the rest by the server's default
        s.add_all(made)
        s.commit()
        ids = [m.id for m in made]
        assert all(i.__class__ is Xid for i in ids) and len(set(ids)) == len(ids)
        by_server = s.exec(select(SmOrder.id).order_by(SmOrder.id)).all()
        assert by_server == sorted(ids)  # the server's order is the bytes' order
        got = s.get(SmOrder, str(ids[3]))
        assert (got.key, got.note, got.seq) == (keys[3], "3", made[3].seq)
        assert s.exec(select(SmOrder).where(SmOrder.key == keys[7])).one().id == ids[7]
        # Keyset pagination: each row once, in order, whether the cursor is an Xid or its text.
        for as_text in (False, True):
            seen, cursor = [], None
            while True:
                q = select(SmOrder).order_by(SmOrder.id).limit(5)
                if cursor is not None:
                    q = q.where(SmOrder.id > (str(cursor) if as_text else cursor))
                page = s.exec(q).all()
                if not page:
                    break
                seen += [o.id for o in page]
                cursor = page[-1].id
            assert seen == sorted(ids)
        # A prefix of keys: the domain's "C" collation, text binds.
        lo, hi = rapkey.prefix_range("ord.cn")
        assert len(s.exec(select(SmOrder).where(SmOrder.key >= lo, SmOrder.key < hi)).all()) == 23
        assert s.exec(select(SmOrder).where(SmOrder.key == "ord.cn.000-9")).all() == []
        # What an API writes: the text of the id, the Snowflake id as a string.
        js = SmOrder.model_validate(got).model_dump(mode="json")
        assert js["id"] == str(ids[3]) and js["seq"] == str(made[3].seq)


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
    assert "id BYTEA" in ddl  # an Xid is bytes
    assert "key VARCHAR" in ddl
    assert "seq INTEGER" in ddl  # int4, too small for a Snowflake id
