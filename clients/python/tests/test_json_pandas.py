"""Xid values in json and pandas, no server: what clients/python/README.md says to write."""
import json

import pandas as pd
import pytest

import pg_idgen
from pg_idgen import Xid

X = Xid("9m4e2mr0ui3e8a215n4g")
Y = Xid("cpbf4n1ua7ni3bgvvvvg")


def test_json_dumps_with_json_default():
    data = {"id": X, "ids": [Y, None], "n": 1, "key": "ord.cn-x", "seq": 1 << 62}
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(data)
    text = json.dumps(data, default=pg_idgen.json_default)
    assert json.loads(text) == {"id": str(X), "ids": [str(Y), None], "n": 1, "key": "ord.cn-x",
                                "seq": 1 << 62}
    # Anything else: json's own TypeError, as without default=.
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        json.dumps({"s": {1}}, default=pg_idgen.json_default)


def test_pandas_to_json_after_map_str():
    df = pd.DataFrame({"id": [X, Y, None], "n": [1, 2, 3]})
    # The limit: pandas writes bytes (an Xid is bytes) as UTF-8 text, and default_handler is
    # not asked for bytes.
    with pytest.raises(UnicodeDecodeError):
        df.to_json()
    with pytest.raises(UnicodeDecodeError):
        df.to_json(default_handler=str)
    out = df.assign(id=df["id"].map(str, na_action="ignore")).to_json(orient="records")
    assert json.loads(out) == [{"id": str(X), "n": 1}, {"id": str(Y), "n": 2}, {"id": None, "n": 3}]
    # Sorting is the server's order; CSV writes the text already.
    assert df["id"].dropna().sort_values().tolist() == [X, Y]
    assert df.to_csv(index=False).splitlines() == ["id,n", f"{X},1", f"{Y},2", ",3"]
