"""pg_idgen with Pydantic v2 and FastAPI, no server: ``id: Xid`` in a model, RapkeyStr,
NormalizedRapkeyStr and SnowflakeId (validation, dumps, JSON schema, errors in the shared
vectors' wording), and FastAPI's 422 with those messages."""
import json
import os
import subprocess
import sys
from typing import List, Optional

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, ValidationError

from pg_idgen import Xid, rapkey
from pg_idgen.pydantic import NormalizedRapkeyStr, RapkeyStr, SnowflakeId

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "vectors")
TEXT = "9m4e2mr0ui3e8a215n4g"
X = Xid(TEXT)
KEY = "ord.cn.sh.202407.8842-2"
BIG = 1541815603606036480  # a Snowflake id of 2022, above 2**53


def vectors(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        return json.load(f)


class Order(BaseModel):
    id: Xid
    parent: Optional[Xid] = None
    tags: List[Xid] = []
    key: RapkeyStr
    typed: Optional[NormalizedRapkeyStr] = None
    sf: SnowflakeId = 0


def only_error(exc_info):
    errors = exc_info.value.errors()
    assert len(errors) == 1, errors
    return errors[0]


def test_import_pg_idgen_imports_no_pydantic():
    code = ("import sys, json, pg_idgen, pg_idgen.rapkey\n"
            "x = pg_idgen.Xid.new(); json.dumps([x], default=pg_idgen.json_default)\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pydantic', 'pydantic_core', 'fastapi', 'pandas', 'sqlmodel', 'sqlalchemy'))\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_xid_validates_from_text_bytes_and_xid():
    for value in (TEXT, TEXT.upper(), X, X.bytes, bytearray(X.bytes), memoryview(X.bytes)):
        m = Order(id=value, key=KEY)
        assert m.id == X and m.id.__class__ is Xid, value
    m = Order(id=X, parent=TEXT, tags=[TEXT, X.bytes], key=KEY)
    assert m.parent == X and m.tags == [X, X] and all(t.__class__ is Xid for t in m.tags)
    assert Order.model_validate_json(f'{{"id": "{TEXT.upper()}", "key": "{KEY}"}}').id == X


def test_xid_dumps_keep_xid_and_json_writes_text():
    m = Order(id=X, parent=None, tags=[X], key=KEY)
    py = m.model_dump()
    assert py["id"].__class__ is Xid and py["tags"][0].__class__ is Xid
    assert m.model_dump(mode="json")["id"] == TEXT
    js = json.loads(m.model_dump_json())
    assert js["id"] == TEXT and js["parent"] is None and js["tags"] == [TEXT]
    assert Order.model_validate_json(m.model_dump_json()) == m


def test_xid_errors_are_the_clients_messages():
    for v in vectors("xid12.json")["invalid_text"]:
        with pytest.raises(ValidationError) as e:
            Order(id=v["text"], key=KEY)
        err = only_error(e)
        assert err["type"] == "xid12_parsing" and err["loc"] == ("id",)
        assert err["msg"] == f"{v['message']}: {v['detail']}", v
    for v in vectors("xid12.json")["invalid_bytes"]:
        with pytest.raises(ValidationError) as e:
            Order(id=bytes.fromhex(v["bytes"]), key=KEY)
        assert only_error(e)["msg"] == f"{v['message']}: {v['detail']}"
    with pytest.raises(ValidationError) as e:
        Order(id=12, key=KEY)
    err = only_error(e)
    assert err["type"] == "xid12_type" and err["msg"] == "an Xid is made from str or bytes, not int"
    # Braces in what was sent are not a template.
    with pytest.raises(ValidationError) as e:
        Order(id="{reason}{0}", key=KEY)
    assert only_error(e)["msg"].startswith('invalid input syntax for type xid12: "{reason}{0}": ')


def test_xid_json_schema():
    props = Order.model_json_schema()["properties"]
    assert props["id"] == {"type": "string", "pattern": "^[0-9a-vA-V]{19}[0gG]$",
                           "minLength": 20, "maxLength": 20, "title": "Id"}
    out = Order.model_json_schema(mode="serialization")["properties"]["id"]
    assert out["pattern"] == "^[0-9a-v]{19}[0g]$"
    import re
    for v in vectors("xid12.json")["valid"]:
        assert re.match(props["id"]["pattern"], v["input"]), v
        assert re.match(out["pattern"], str(Xid(v["input"]))), v
    for v in vectors("xid12.json")["invalid_text"]:
        assert not re.match(props["id"]["pattern"], v["text"]), v


def test_rapkey_str():
    m = Order(id=X, key=KEY, typed=" ORD.CN.sh.202407.8842-2\t")
    assert m.key == KEY and m.typed == KEY and type(m.key) is str
    assert json.loads(m.model_dump_json())["typed"] == KEY
    for v in vectors("rapkey.json")["valid"]:
        assert Order(id=X, key=v["key"]).key == v["key"]
    for v in vectors("rapkey.json")["invalid_keys"]:
        with pytest.raises(ValidationError) as e:
            Order(id=X, key=v["key"])
        err = only_error(e)
        assert err["type"] == "rapkey_parsing" and err["msg"] == f"{v['message']}: {v['detail']}", v
    for v in vectors("rapkey.json")["normalize"]:
        if "key" in v:
            assert Order(id=X, key=KEY, typed=v["input"]).typed == v["key"]
        else:
            with pytest.raises(ValidationError) as e:
                Order(id=X, key=KEY, typed=v["input"])
            assert only_error(e)["msg"] == f"{v['message']}: {v['detail']}", v
        if v["input"] != v.get("key"):  # RapkeyStr takes the domain's form only
            with pytest.raises(ValidationError):
                Order(id=X, key=v["input"])
    with pytest.raises(ValidationError) as e:
        Order(id=X, key=KEY.encode())
    assert only_error(e)["type"] == "string_type"
    schema = Order.model_json_schema()["properties"]["key"]
    assert schema == {"type": "string", "pattern": r"^[a-z]{2,8}(\.[a-z0-9]{1,32}){1,5}-[0-9a-z~]$",
                      "minLength": 6, "maxLength": 128, "title": "Key"}
    import re
    assert all(re.match(schema["pattern"], v["key"]) for v in vectors("rapkey.json")["valid"])
    assert re.match(schema["pattern"], rapkey.build("ab", *["x" * 32] * 3))


def test_snowflake_id():
    for value in (BIG, str(BIG), "0", 0, (1 << 63) - 1, str((1 << 63) - 1)):
        assert Order(id=X, key=KEY, sf=value).sf == int(value)
    m = Order(id=X, key=KEY, sf=BIG)
    assert m.model_dump()["sf"] == BIG
    assert json.loads(m.model_dump_json())["sf"] == str(BIG)  # a string: above 2**53
    assert Order.model_validate_json(m.model_dump_json()).sf == BIG
    assert Order.model_validate_json(f'{{"id": "{TEXT}", "key": "{KEY}", "sf": {BIG}}}').sf == BIG
    refused = {
        -1: ("snowflake_parsing", "invalid snowflake id -1: snowflake ids are never negative"),
        "-1": ("snowflake_parsing", "invalid snowflake id -1: snowflake ids are never negative"),
        1 << 63: ("snowflake_parsing", f"snowflake id {1 << 63} does not fit in a bigint"),
        str(1 << 63): ("snowflake_parsing", f"snowflake id {1 << 63} does not fit in a bigint"),
        "1" * 30: ("snowflake_parsing", f'value "{"1" * 30}" is out of range for type bigint'),
        "": ("snowflake_parsing", 'invalid input syntax for type bigint: ""'),
        " 12": ("snowflake_parsing", 'invalid input syntax for type bigint: " 12"'),
        "1_000": ("snowflake_parsing", 'invalid input syntax for type bigint: "1_000"'),
        "\u0661\u0662": ("snowflake_parsing", 'invalid input syntax for type bigint: "\u0661\u0662"'),
        True: ("snowflake_type", "a snowflake id is an int or its decimal text, not bool"),
        1.5e18: ("snowflake_type", "a snowflake id is an int or its decimal text, not float"),
    }
    for value, (kind, msg) in refused.items():
        with pytest.raises(ValidationError) as e:
            Order(id=X, key=KEY, sf=value)
        err = only_error(e)
        assert (err["type"], err["msg"]) == (kind, msg), value
    assert Order.model_json_schema()["properties"]["sf"]["anyOf"] == [
        {"type": "integer", "minimum": 0, "maximum": (1 << 63) - 1},
        {"type": "string", "pattern": "^[0-9]{1,19}$"}]
    out = Order.model_json_schema(mode="serialization")["properties"]["sf"]
    assert (out["type"], out["pattern"]) == ("string", "^[0-9]{1,19}$")


# --- FastAPI ---------------------------------------------------------------------------------

class OrderIn(BaseModel):
    parent: Xid
    key: RapkeyStr


class OrderOut(BaseModel):
    id: Xid
    parent: Xid
    key: RapkeyStr
    seq: SnowflakeId


app = FastAPI()


@app.get("/orders/{id}")
def get_order(id: Xid) -> OrderOut:
    assert id.__class__ is Xid
    return OrderOut(id=id, parent=id, key=KEY, seq=BIG)


@app.post("/orders")
def post_order(body: OrderIn) -> OrderOut:
    assert body.parent.__class__ is Xid
    return OrderOut(id=Xid.new(), parent=body.parent, key=body.key, seq=BIG)


@pytest.fixture(scope="module")
def client():
    with TestClient(app) as c:
        yield c


def test_fastapi_path_parameter(client):
    r = client.get(f"/orders/{TEXT.upper()}")
    assert r.status_code == 200, r.text
    assert r.json() == {"id": TEXT, "parent": TEXT, "key": KEY, "seq": str(BIG)}
    r = client.get("/orders/9m4e2mr0ui3e8a215n41")
    assert r.status_code == 422
    (err,) = r.json()["detail"]
    assert err["loc"] == ["path", "id"] and err["type"] == "xid12_parsing"
    assert err["msg"] == ('invalid input syntax for type xid12: "9m4e2mr0ui3e8a215n41": The last '
                          "character must be 0 or g: its low 4 bits are unused and must be zero.")


def test_fastapi_body(client):
    r = client.post("/orders", json={"parent": TEXT, "key": KEY})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["parent"] == TEXT and Xid(out["id"]) > X and out["seq"] == str(BIG)
    r = client.post("/orders", json={"parent": TEXT[:-1], "key": "ord.cn.sh.202407.8842-3"})
    assert r.status_code == 422
    got = {(tuple(e["loc"]), e["msg"]) for e in r.json()["detail"]}
    assert got == {
        (("body", "parent"), 'invalid input syntax for type xid12: "9m4e2mr0ui3e8a215n4": '
                             "An xid12 is 20 base32hex characters; the text has 19 characters."),
        (("body", "key"), 'invalid input syntax for type rapkey: "ord.cn.sh.202407.8842-3": '
                          "Wrong check character: expected '2', found '3'."),
    }


def test_fastapi_openapi(client):
    spec = client.get("/openapi.json").json()
    (param,) = spec["paths"]["/orders/{id}"]["get"]["parameters"]
    assert param["schema"]["pattern"] == "^[0-9a-vA-V]{19}[0gG]$"
    schemas = spec["components"]["schemas"]
    assert schemas["OrderIn"]["properties"]["parent"]["maxLength"] == 20
    assert schemas["OrderOut"]["properties"]["seq"]["type"] == "string"
