"""Xid values where nobody declares their type, no server: json, pandas and a FastAPI endpoint
that returns a plain dict write the id's text, with no adapter (an Xid is a str: its text)."""
import json

import pandas as pd
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import pg_idgen
from pg_idgen import Xid

X = Xid("9m4e2mr0ui3e8a215n4g")
Y = Xid("cpbf4n1ua7ni3bgvvvvg")


def test_json_dumps_writes_the_text():
    data = {"id": X, "ids": [Y, None], "n": 1, "key": "ord.cn-x", "seq": 1 << 62}
    want = {"id": str(X), "ids": [str(Y), None], "n": 1, "key": "ord.cn-x", "seq": 1 << 62}
    assert json.loads(json.dumps(data)) == want
    # json_default stays for code written before 0.7.0: the same text.
    assert json.dumps(data, default=pg_idgen.json_default) == json.dumps(data)
    # Anything else: json's own TypeError, as without default=.
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        json.dumps({"s": {1}}, default=pg_idgen.json_default)


def test_pandas_to_json_writes_the_text():
    ids = [Xid.new() for _ in range(3)]
    df = pd.DataFrame({"id": ids + [None], "n": [1, 2, 3, 4]})
    out = json.loads(df.to_json(orient="records"))
    assert out == [{"id": str(x), "n": i + 1} for i, x in enumerate(ids)] + [{"id": None, "n": 4}]
    assert json.loads(pd.DataFrame({"id": [X, Y]}).to_json()) == {"id": {"0": str(X), "1": str(Y)}}
    # Sorting is the server's order; CSV writes the text.
    df = pd.DataFrame({"id": [Y, X, None], "n": [1, 2, 3]})
    assert df["id"].dropna().sort_values().tolist() == [X, Y]
    assert df.to_csv(index=False).splitlines() == ["id,n", f"{Y},1", f"{X},2", ",3"]


def test_fastapi_endpoint_returning_a_plain_dict():
    app = FastAPI()

    @app.get("/items/{oid}")
    def get(oid: Xid) -> dict:
        return {"id": oid, "ids": [oid, Xid.new()], "time": oid.time.isoformat()}

    client = TestClient(app)
    r = client.get(f"/items/{str(X).upper()}")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["id"] == str(X) and body["ids"][0] == str(X) and Xid(body["ids"][1])
    assert body["time"] == X.time.isoformat()
    r = client.get("/items/9m4e2mr0ui3e8a215n41")  # the last character has a low bit set
    assert r.status_code == 422
