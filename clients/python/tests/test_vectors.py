"""The shared vectors (tests/vectors/xid12.json, rapkey.json, snowflake.json; README.md there
says what each holds) through the Python client: every output, and every error's text, which
is the server's message, then ": " and its DETAIL."""
import json
import os

import pytest

from pg_idgen import Xid, rapkey, snowflake_parts, snowflake_sequence, snowflake_unix_ms
from pg_idgen import snowflake_worker

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "vectors")


def load(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        return json.load(f)


def expected(case) -> str:
    detail = case.get("detail")
    return f"{case['message']}: {detail}" if detail is not None else case["message"]


XID12 = load("xid12.json")
RAPKEY = load("rapkey.json")
SNOWFLAKE = load("snowflake.json")


@pytest.mark.parametrize("case", XID12["valid"], ids=lambda c: c["input"])
def test_xid12_valid(case):
    x = Xid(case["input"])
    assert str(x) == case["text"]
    assert x.bytes.hex() == case["bytes"]
    assert x.unix_seconds == case["unix_seconds"]
    assert x.machine.hex() == case["machine"]
    assert (x.pid, x.counter) == (case["pid"], case["counter"])
    assert Xid.from_bytes(bytes.fromhex(case["bytes"])) == x


@pytest.mark.parametrize("case", XID12["invalid_text"], ids=repr)
def test_xid12_invalid_text(case):
    with pytest.raises(ValueError) as e:
        Xid(case["text"])
    assert str(e.value) == expected(case)


@pytest.mark.parametrize("case", XID12["invalid_bytes"], ids=lambda c: c["bytes"])
def test_xid12_invalid_bytes(case):
    for make in (Xid, Xid.from_bytes):
        with pytest.raises(ValueError) as e:
            make(bytes.fromhex(case["bytes"]))
        assert str(e.value) == expected(case)


@pytest.mark.parametrize("case", XID12["parts"], ids=repr)
def test_xid12_parts(case):
    args = (case["unix_seconds"], bytes.fromhex(case["machine"]), case["pid"], case["counter"])
    if "text" in case:
        assert str(Xid.from_parts(*args)) == case["text"]
    else:
        with pytest.raises(ValueError) as e:
            Xid.from_parts(*args)
        assert str(e.value) == expected(case)


@pytest.mark.parametrize("case", RAPKEY["valid"], ids=lambda c: c["key"])
def test_rapkey_valid(case):
    assert rapkey.check_char(case["body"]) == case["check"]
    rapkey.validate(case["key"])
    assert rapkey.is_valid(case["key"])
    kind, segments, check = rapkey.parse(case["key"])
    assert rapkey.build(kind, *segments) == case["key"]


@pytest.mark.parametrize("case", RAPKEY["invalid_bodies"], ids=repr)
def test_rapkey_invalid_body(case):
    with pytest.raises(rapkey.RapkeyError) as e:
        rapkey.check_char(case["body"])
    assert str(e.value) == expected(case)
    assert (e.value.message, e.value.detail) == (case["message"], case["detail"])


@pytest.mark.parametrize("case", RAPKEY["invalid_keys"], ids=repr)
def test_rapkey_invalid_key(case):
    assert not rapkey.is_valid(case["key"])
    for check in (rapkey.validate, rapkey.parse):
        with pytest.raises(rapkey.RapkeyError) as e:
            check(case["key"])
        assert str(e.value) == expected(case)


def outcome(case, key, call):
    if key in case:
        return call() == (tuple(case[key]) if isinstance(case[key], list) else case[key])
    with pytest.raises(rapkey.RapkeyError) as e:
        call()
    return str(e.value) == expected(case)


@pytest.mark.parametrize("case", RAPKEY["normalize"], ids=repr)
def test_rapkey_normalize(case):
    assert outcome(case, "key", lambda: rapkey.normalize(case["input"]))


@pytest.mark.parametrize("case", RAPKEY["build"], ids=repr)
def test_rapkey_build(case):
    assert outcome(case, "key", lambda: rapkey.build(case["type"], *case["segments"]))


@pytest.mark.parametrize("case", RAPKEY["prefix_range"], ids=repr)
def test_rapkey_prefix_range(case):
    assert outcome(case, "range", lambda: rapkey.prefix_range(case["prefix"]))


@pytest.mark.parametrize("case", SNOWFLAKE["layouts"], ids=lambda c: str(c["id"]))
def test_snowflake_layout(case):
    epoch = int(SNOWFLAKE["epoch"])
    i = case["id"]
    parts = snowflake_parts(i)
    assert (parts.ms_since_epoch, parts.worker, parts.sequence) == (
        case["ms_since_epoch"], case["worker"], case["sequence"])
    assert (snowflake_worker(i), snowflake_sequence(i)) == (case["worker"], case["sequence"])
    assert snowflake_unix_ms(i, epoch) == case["unix_ms"]


@pytest.mark.parametrize("case", SNOWFLAKE["invalid_ids"], ids=lambda c: str(c["id"]))
def test_snowflake_invalid_id(case):
    with pytest.raises(ValueError) as e:
        snowflake_worker(case["id"])
    assert str(e.value) == expected(case)


def test_edition_query_starts_with_the_shared_rule():
    """tests/vectors/edition_rule.sql: how every client finds the edition and its xid12 type."""
    from pg_idgen._catalog import EDITION_QUERY

    with open(os.path.join(VECTORS, "edition_rule.sql"), encoding="utf-8") as f:
        rule = "".join(line for line in f.read().splitlines(keepends=True) if not line.startswith("--"))
    assert rule.count("WITH c AS (") == 1
    assert EDITION_QUERY.lstrip("\n").startswith(rule.rstrip("\n"))
