"""The registry's errors against the shared vectors (tests/vectors/registry_errors.json, which
the Rust and TypeScript clients run too): every SQLSTATE gives the class its condition names,
exported from pg_idgen, and every fenced message gives its ``until``. No server: the server's
errors are stood in for by objects with psycopg's ``sqlstate`` and ``diag``."""
import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import pg_idgen
from pg_idgen._registry import _server_error

VECTORS = Path(__file__).resolve().parents[3] / "tests" / "vectors" / "registry_errors.json"


def _vectors():
    # Committed: a missing file or an empty list fails the collection, never passes.
    v = json.loads(VECTORS.read_text())
    assert v["conditions"] and v["fenced_messages"], f"{VECTORS} has no cases"
    return v


VECTOR = _vectors()


def server_error(sqlstate, message, detail=None):
    """What psycopg raises for a server error, as far as the client reads it."""
    return SimpleNamespace(sqlstate=sqlstate, diag=SimpleNamespace(message_primary=message,
                                                                   message_detail=detail))


@pytest.mark.parametrize("cond", VECTOR["conditions"], ids=lambda c: c["condition"])
def test_each_code_gives_its_class(cond):
    cls = getattr(pg_idgen, cond["class"])  # exported under the contract's name
    assert cls.__name__ == cond["class"]
    assert issubclass(cls, pg_idgen.RegistryError)
    assert cond["class"] in pg_idgen.__all__
    for acquire in (False, True):
        if acquire and "idgen_acquire" not in cond["raised_by"]:
            continue
        e = _server_error(server_error(cond["sqlstate"], "the server's message", "its detail"),
                          acquire=acquire)
        assert type(e) is cls, (cond, acquire, type(e))
        assert e.sqlstate == cond["sqlstate"]
        assert str(e) == "the server's message (DETAIL: its detail)"


def test_conditions_have_distinct_classes():
    # One class per condition; grant_missing alone shares GrantLost (acquire again).
    by_class = {}
    for cond in VECTOR["conditions"]:
        by_class.setdefault(cond["class"], []).append(cond["condition"])
    shared = {c: names for c, names in by_class.items() if len(names) > 1}
    assert shared == {"GrantLost": ["grant_lost", "grant_missing"]}
    classes = [getattr(pg_idgen, c) for c in by_class]
    for a in classes:
        for b in classes:
            assert a is b or not issubclass(a, b), (a, b)


@pytest.mark.parametrize("code", ["XX000", "22023", "40001", "IG999"])
def test_other_codes_are_plain_registry_errors(code):
    e = _server_error(server_error(code, "something else"))
    assert type(e) is pg_idgen.RegistryError and e.sqlstate == code


@pytest.mark.parametrize("case", VECTOR["fenced_messages"], ids=lambda c: c["message"][-30:])
def test_fenced_message_gives_until(case):
    want = case["until"]
    if want is not None:
        want = dt.datetime.fromisoformat(want.replace("Z", "+00:00"))
    for detail in (None, "At 2026-12-04 10:23:00+00 the registry found itself on a new timeline 2"):
        e = _server_error(server_error("IG001", case["message"], detail), acquire=True)
        assert isinstance(e, pg_idgen.RegistryFenced)
        assert e.until == want, (case, detail, e.until)
        if want is not None:
            assert e.until.utcoffset() == dt.timedelta(0)
            assert e.until.isoformat(timespec="microseconds").replace("+00:00", "Z") == case["until"]
        # Raised again with its message (as a generator does for an id that waited on it).
        again = type(e)(str(e), e.sqlstate)
        assert again.until == want


def test_until_only_at_the_end_in_the_contract_form():
    for message in [
        "the writer registry grants no snowflake slot in pool 'app' until 2026-12-04 10:35:12.345678+00",
        "the writer registry grants no snowflake slot in pool 'app' until 2026-12-04T10:35:12Z",
        "the writer registry grants no snowflake slot in pool 'app' until 2026-13-04T10:35:12.345678Z",
        "until 2026-12-04T10:35:12.345678Z the writer registry grants nothing",
    ]:
        assert pg_idgen.RegistryFenced(message).until is None, message


def test_a_fenced_acquire_is_never_grant_lost():
    # An extension before 0.7.0 raised its fence as 55000 from idgen_acquire: the client's
    # GrantLost would acquire again at once; it is RegistryFenced (its moment unparsed) instead.
    old = "the writer registry grants nothing in pool 'app' until 2026-12-04 11:24:05.123456+00"
    e = _server_error(server_error("55000", old, "At ... a new timeline 2"), acquire=True)
    assert type(e) is pg_idgen.RegistryFenced and e.sqlstate == "55000" and e.until is None
    # Its other 55000 (the epoch changed) is a plain RegistryError; only a renewal loses a grant.
    e = _server_error(server_error("55000", "the registry's Snowflake grants use the epoch 0, "
                                            "and pg_idgen.snowflake_epoch is now 1"), acquire=True)
    assert type(e) is pg_idgen.RegistryError
    for code in ("55000", "42704"):
        assert type(_server_error(server_error(code, "grant lost: ..."))) is pg_idgen.GrantLost


def test_edge_cloned_is_a_device_conflict():
    assert issubclass(pg_idgen.EdgeCloned, pg_idgen.DeviceConflict)
    assert issubclass(pg_idgen.EdgeCloned, pg_idgen.EdgeError)
    e = pg_idgen.EdgeCloned("grant 7 is used by two devices", "devices a and b")
    assert e.sqlstate == "23505" and e.detail == "devices a and b"
