"""FastAPI (its TestClient) with SQLModel over a real server: 10,000 orders posted in one request,
read back, one looked up by its id in the path, all of them paged by ``GET /orders?after=``
(every row once, in the server's order), and a bad id from the URL refused with 422 in the
server's words."""
import os
from typing import List, Optional

import psycopg
import pytest
import sqlalchemy as sa
from fastapi import FastAPI, HTTPException, Query
from fastapi.testclient import TestClient
from sqlmodel import Field, Session, SQLModel, create_engine, select

from pg_idgen import Snowflake, Xid, rapkey
from pg_idgen.pydantic import RapkeyStr, SnowflakeId
from pg_idgen.sqlalchemy import Rapkey, Xid12

from servers import fresh_database

N = 10_000
PAGE = 1_000
BAD = "9m4e2mr0ui3e8a215n41"  # the last character has a low bit set


class ApiOrderBase(SQLModel):
    key: RapkeyStr = Field(sa_type=Rapkey, unique=True)
    seq: SnowflakeId = Field(sa_type=sa.BigInteger)


class ApiOrder(ApiOrderBase, table=True):
    __tablename__ = "api_orders"
    id: Optional[Xid] = Field(default=None, primary_key=True, sa_type=Xid12,
                              sa_column_kwargs={"server_default": sa.text("gen_xid12()")})


class ApiOrderCreate(ApiOrderBase):
    pass


class ApiOrderRead(ApiOrderBase):
    id: Xid


class ApiPage(SQLModel):
    items: List[ApiOrderRead]
    next: Optional[Xid] = None


def make_app(engine) -> FastAPI:
    app = FastAPI()

    @app.post("/orders/bulk")
    def create_orders(orders: List[ApiOrderCreate]) -> List[Xid]:
        with Session(engine) as s:
            got = s.exec(sa.insert(ApiOrder).returning(ApiOrder.key, ApiOrder.id),
                         params=[o.model_dump() for o in orders]).all()
            s.commit()
        by_key = dict(got)
        return [by_key[o.key] for o in orders]

    @app.get("/orders/{id}")
    def get_order(id: Xid) -> ApiOrderRead:
        with Session(engine) as s:
            order = s.get(ApiOrder, id)
            if order is None:
                raise HTTPException(404)
            return ApiOrderRead.model_validate(order)

    @app.get("/orders")
    def list_orders(after: Optional[Xid] = None,
                    limit: int = Query(PAGE, ge=1, le=PAGE)) -> ApiPage:
        q = select(ApiOrder).order_by(ApiOrder.id).limit(limit)
        if after is not None:
            q = q.where(ApiOrder.id > after)
        with Session(engine) as s:
            items = [ApiOrderRead.model_validate(o) for o in s.exec(q)]
        return ApiPage(items=items, next=items[-1].id if len(items) == limit else None)

    return app


@pytest.fixture(scope="module")
def api():
    host, port = os.environ["PG_IDGEN_HOST"], os.environ["PG_IDGEN_PORT"]
    name = fresh_database("pyclient_fastapi", extension=True)
    engine = create_engine(f"postgresql+psycopg://postgres@/{name}?host={host}&port={port}")
    SQLModel.metadata.create_all(engine, tables=[ApiOrder.__table__])
    with TestClient(make_app(engine)) as client:
        yield client, engine
    engine.dispose()


@pytest.fixture(scope="module")
def posted(api):
    client, engine = api
    flakes = Snowflake(worker_id=9)
    body = [{"key": rapkey.build("ord", "api", f"{n:05d}"), "seq": str(flakes.next_id())}
            for n in range(N)]
    r = client.post("/orders/bulk", json=body)
    assert r.status_code == 200, r.text
    ids = r.json()
    assert len(ids) == N and len(set(ids)) == N
    return body, ids


def test_every_order_once_in_the_servers_order(api, posted):
    client, engine = api
    body, ids = posted
    with engine.connect() as conn:
        server = conn.execute(sa.text("SELECT id::text FROM api_orders ORDER BY id")).scalars().all()
    assert sorted(ids) == server
    seen, after, calls = [], None, 0
    while True:
        r = client.get("/orders", params={} if after is None else {"after": after})
        assert r.status_code == 200, r.text
        page = r.json()
        seen += [o["id"] for o in page["items"]]
        calls += 1
        if page["next"] is None:
            break
        after = page["next"]
    assert seen == server and calls == N // PAGE + 1  # the last page is empty


def test_look_one_up_by_its_id(api, posted):
    client, _ = api
    body, ids = posted
    r = client.get(f"/orders/{ids[4321].upper()}")  # the text in either case
    assert r.status_code == 200
    assert r.json() == {"id": ids[4321], "key": body[4321]["key"], "seq": body[4321]["seq"]}
    assert client.get(f"/orders/{Xid.new()}").status_code == 404


def test_a_bad_cursor_is_422_in_the_servers_words(api, posted):
    client, engine = api
    with engine.connect() as conn:
        with pytest.raises(sa.exc.DataError) as server:
            conn.execute(sa.text("SELECT CAST(:c AS xid12)"), {"c": BAD})
    diag = server.value.orig.diag
    assert isinstance(server.value.orig, psycopg.errors.InvalidTextRepresentation)
    said = f"{diag.message_primary}: {diag.message_detail}"
    for path, params, loc in (("/orders", {"after": BAD}, ["query", "after"]),
                              (f"/orders/{BAD}", {}, ["path", "id"])):
        r = client.get(path, params=params)
        assert r.status_code == 422
        [err] = r.json()["detail"]
        assert (err["loc"], err["type"], err["msg"]) == (loc, "xid12_parsing", said)
    r = client.get("/orders", params={"after": "x" * 50})
    assert r.status_code == 422 and r.json()["detail"][0]["msg"].startswith(
        'invalid input syntax for type xid12: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..." (50 characters)')
