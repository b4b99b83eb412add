"""pg_idgen.sqlalchemy.Xid12 on a real server (psycopg 3 and asyncpg drivers)."""
import os

import pytest
import sqlalchemy as sa

from pg_idgen import Xid
from pg_idgen.sqlalchemy import Xid12

from servers import fresh_database


def url(driver, dbname):
    host, port = os.environ["PG_IDGEN_HOST"], os.environ["PG_IDGEN_PORT"]
    return f"postgresql+{driver}://postgres@/{dbname}?host={host}&port={port}"


@pytest.fixture(scope="module")
def engine():
    e = sa.create_engine(url("psycopg", fresh_database("pyclient_sqlalchemy", extension=True)))
    yield e
    e.dispose()


def test_column_type_binds_and_loads_xid(engine):
    md = sa.MetaData()
    orders = sa.Table("orders", md,
                      sa.Column("id", Xid12, primary_key=True, server_default=sa.text("gen_xid12()")),
                      sa.Column("n", sa.Integer, nullable=False))
    md.create_all(engine)
    with engine.begin() as conn:
        ids = [conn.execute(sa.insert(orders).values(n=n).returning(orders.c.id)).scalar_one()
               for n in range(10)]
        assert all(isinstance(i, Xid) for i in ids) and ids == sorted(ids)
        # Comparisons with an Xid or its text: both bound as xid12.
        assert conn.execute(sa.select(orders.c.n).where(orders.c.id == ids[3])).scalar_one() == 3
        assert conn.execute(sa.select(orders.c.n).where(orders.c.id == str(ids[4]))).scalar_one() == 4
        later = conn.execute(sa.select(orders.c.n).where(orders.c.id > str(ids[7])).order_by(orders.c.n)).scalars().all()
        assert later == [8, 9]
        some = conn.execute(sa.select(orders.c.n).where(orders.c.id.in_([ids[1], str(ids[2])])).order_by(orders.c.n)).scalars().all()
        assert some == [1, 2]
        fixed = Xid("9m4e2mr0ui3e8a215n4g")
        conn.execute(sa.insert(orders).values(id=fixed, n=100))
        row = conn.execute(sa.select(orders.c.id, sa.cast(orders.c.id, sa.Text)).where(orders.c.n == 100)).one()
        assert row == (fixed, str(fixed))
        with pytest.raises(sa.exc.StatementError, match="last character must be 0 or g"):
            conn.execute(sa.select(orders.c.n).where(orders.c.id == "00000000000000000001"))


def test_orm_and_reflection(engine):
    from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

    class Base(DeclarativeBase):
        pass

    class Event(Base):
        __tablename__ = "events"
        id: Mapped[Xid] = mapped_column(Xid12, primary_key=True, server_default=sa.text("gen_xid12()"))
        name: Mapped[str]

    Base.metadata.create_all(engine)
    with Session(engine) as s:
        e = Event(name="a")
        s.add(e)
        s.commit()
        assert isinstance(e.id, Xid)
        assert s.get(Event, e.id).name == "a"
        assert s.get(Event, str(e.id)).name == "a"
    reflected = sa.Table("events", sa.MetaData(), autoload_with=engine)
    assert isinstance(reflected.c.id.type, Xid12)
    with engine.connect() as conn:
        assert isinstance(conn.execute(sa.select(reflected.c.id)).scalar_one(), Xid)


def test_asyncpg_driver():
    import asyncio

    from sqlalchemy.ext.asyncio import create_async_engine

    name = fresh_database("pyclient_sqlalchemy_async", extension=True)

    async def go():
        e = create_async_engine(url("asyncpg", name))
        md = sa.MetaData()
        t = sa.Table("t", md, sa.Column("id", Xid12, primary_key=True, server_default=sa.text("gen_xid12()")),
                     sa.Column("n", sa.Integer))
        async with e.begin() as conn:
            await conn.run_sync(md.create_all)
            x = (await conn.execute(sa.insert(t).values(n=1).returning(t.c.id))).scalar_one()
            n = (await conn.execute(sa.select(t.c.n).where(t.c.id == str(x)))).scalar_one()
        await e.dispose()
        return x, n

    x, n = asyncio.run(go())
    assert isinstance(x, Xid) and n == 1


@pytest.mark.parametrize("driver", ["psycopg", "psycopg_async", "asyncpg"])
def test_register_engine(driver):
    """register(engine): plain SQL loads Xid (or str with xid12_as=str) on each driver, as the
    Xid12 column does."""
    import asyncio

    from sqlalchemy.ext.asyncio import create_async_engine

    import pg_idgen.sqlalchemy

    name = fresh_database("pyclient_sqlalchemy_register", extension=True)
    md = sa.MetaData()
    t = sa.Table("t", md, sa.Column("id", Xid12, server_default=sa.text("gen_xid12()")),
                 sa.Column("n", sa.Integer))
    plain = sa.text("SELECT id, ARRAY[id] FROM t")

    async def go(xid12_as):
        e = create_async_engine(url(driver, name))
        pg_idgen.sqlalchemy.register(e, xid12_as=xid12_as)
        async with e.begin() as conn:
            await conn.run_sync(md.create_all)
            await conn.execute(sa.insert(t).values(n=1))
            row = (await conn.execute(plain)).one()
            typed = (await conn.execute(sa.select(t.c.id))).scalar_one()
            await conn.run_sync(md.drop_all)
        await e.dispose()
        return row, typed

    for xid12_as in (Xid, str):
        if driver == "psycopg":
            e = sa.create_engine(url(driver, name))
            pg_idgen.sqlalchemy.register(e, xid12_as=xid12_as)
            with e.begin() as conn:
                md.create_all(conn)
                conn.execute(sa.insert(t).values(n=1))
                row = conn.execute(plain).one()
                typed = conn.execute(sa.select(t.c.id)).scalar_one()
                md.drop_all(conn)
            e.dispose()
        else:
            row, typed = asyncio.run(go(xid12_as))
        (x, arr) = row
        assert x.__class__ is xid12_as and arr == [x] and typed.__class__ is xid12_as and typed == x
    with pytest.raises(ValueError, match="xid12_as must be Xid or str"):
        pg_idgen.sqlalchemy.register(sa.create_engine(url("psycopg", name)), xid12_as=bytes)
