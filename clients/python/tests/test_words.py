"""The words of the registry's, the grant-bound generators' and the edge store's errors against
the shared vectors (``words`` in tests/vectors/registry_errors.json and edge_traces.json, face
``python``; the Rust and TypeScript clients and the Java and Go ones check theirs there too).
Every template is rendered with sample values and compared with ``pg_idgen._words``'s words
for the same values; then the errors the client raises are checked to carry those words."""
import datetime as dt
import json
import re
import sqlite3
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

import pg_idgen
from pg_idgen import _words
from pg_idgen._grant import SnowflakeGrantState, XidGrantState
from pg_idgen._registry import _server_error

VECTORS = Path(__file__).resolve().parents[3] / "tests" / "vectors"
REGISTRY = json.loads((VECTORS / "registry_errors.json").read_text())
EDGE = json.loads((VECTORS / "edge_traces.json").read_text())
PLACEHOLDER = re.compile(r"\{(\w+)(?::(\w+))?\}")
FACE = "python"


def iso(unix_us):
    return (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
            + dt.timedelta(microseconds=unix_us)).isoformat(timespec="milliseconds")


FORMS = {"at": iso, "s": lambda v: f"{v:g}", "s1": lambda v: f"{v:.1f}",
         "s3": lambda v: f"{v:.3f}", "int": str, None: str}


def render(template, values):
    return PLACEHOLDER.sub(lambda m: FORMS[m.group(2)](values[m.group(1)]), template)


def sample(name, form, i):
    """A value for a placeholder: moments with microseconds the words must cut off."""
    return {"at": (1_800_000_000_500 + 1000 * i) * 1000 + 123, "s": 1.5 + i, "s1": 1.26 + i,
            "s3": 12.3456 + i, "int": 7 + i, None: f"<{name}>"}[form]


def entries():
    for doc, prefix in ((REGISTRY, ""), (EDGE, "edge_")):
        for e in doc["words"]:
            yield prefix + e["name"], e


WORDS = list(entries())


def test_the_forms_are_pythons():
    ms = 1_800_000_000_500
    assert iso(ms * 1000 + 999) == REGISTRY["forms"]["at"][FACE]
    for form in ("s", "s1", "s3"):
        for ms, text in REGISTRY["forms"][form]["examples_ms"]:
            assert FORMS[form](ms / 1000) == text, (form, ms)
    for value, text in REGISTRY["forms"]["int"]["examples"]:
        assert FORMS["int"](value) == text


@pytest.mark.parametrize("name,entry", WORDS, ids=[n for n, _ in WORDS])
def test_each_template_is_the_clients_words(name, entry):
    template = entry[FACE]
    fn = getattr(_words, name, None)
    if template is None:
        assert fn is None, f"{name}: the vectors say Python has no such error"
        return
    assert callable(fn), f"no words for {name}"
    spots = PLACEHOLDER.findall(template)
    assert {n for n, _ in spots} <= set(entry["placeholders"]), name
    values = {n: sample(n, form or None, i) for i, (n, form) in enumerate(spots)}
    want = render(template, values)
    assert fn(**values) == want


def test_every_words_function_is_in_the_vectors():
    named = {n for n, e in WORDS if e[FACE] is not None}
    helpers = {"iso_us", "no_id"}
    public = {n for n, v in vars(_words).items()
              if callable(v) and not n.startswith("_") and getattr(v, "__module__", "") == _words.__name__}
    assert public - helpers == named


# --- the errors raised carry those words ------------------------------------------------------

def words(name, **values):
    entry = dict(WORDS)[name]
    return render(entry[FACE], values)


def test_a_grant_state_machine_says_clock_before_window():
    st = SnowflakeGrantState(epoch_ms=1_288_834_974_657, max_wait=5000)
    st.bind(5, 411_165_025_343, 411_165_625_343)
    with pytest.raises(pg_idgen.ClockBeforeWindow) as e:
        st.step(1_699_999_994_999)
    assert str(e.value) == words("clock_before_window", behind=5.001, kind="snowflake", slot=5,
                                 start=1_700_000_000_000 * 1000, max_wait=5)
    st = XidGrantState(pid=1, counter_start=0, max_wait=5)
    st.bind(66051, 1_700_000_000, 1_700_000_600)
    with pytest.raises(pg_idgen.ClockBeforeWindow) as e:
        st.step(1_699_999_994)
    assert str(e.value) == words("clock_before_window", behind=6, kind="xid12", slot=66051,
                                 start=1_700_000_000 * 10**6, max_wait=5)


def test_server_refusals_show_message_and_detail():
    err = SimpleNamespace(sqlstate="IG003", diag=SimpleNamespace(message_primary="m", message_detail="d"))
    assert str(_server_error(err)) == words("server_refusal", message="m", detail="d")
    err.diag.message_detail = None
    assert str(_server_error(err)) == words("server_refusal_no_detail", message="m", sqlstate="IG003")
    err = SimpleNamespace(sqlstate="42703", diag=SimpleNamespace(
        message_primary='column "lo_t" does not exist', message_detail=None))
    assert str(_server_error(err)) == words("needs_0_7_0", message='column "lo_t" does not exist')


def test_a_closed_or_busy_registry():
    reg = pg_idgen.Registry(lambda: None, "w", timeout=0.2)
    held = threading.Event()
    done = threading.Event()

    def hold():
        with reg._conn_lock:
            held.set()
            done.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    try:
        with pytest.raises(pg_idgen.RegistryUnavailable) as e:
            reg._call("renew", (1, 2, None))
        assert str(e.value) == words("busy", timeout=0.2)
    finally:
        done.set()
        t.join()
    reg.close()
    with pytest.raises(pg_idgen.RegistryError) as e:
        reg.snowflake()
    assert str(e.value) == words("closed")


def test_edge_refusals(tmp_path):
    clock = SimpleNamespace(s=1_700_000_000.25)
    conn = sqlite3.connect(tmp_path / "edge.db")
    store = pg_idgen.EdgeStore(conn, "xid12", device="dev 1", clock=lambda: clock.s)
    with pytest.raises(pg_idgen.EdgeError) as e:
        store.next_id()
    assert str(e.value) == words("edge_no_grant", kind="xid12", device="dev 1")
    lo, hi = 1_700_000_100 * 10**6, 1_700_000_102 * 10**6
    store._keep((9, 1, "xid12", 66051, None, lo // 10**6, hi // 10**6, None), "w")
    grant = words("edge_grant", grant_id=9, kind="xid12", slot=66051, lo=lo, hi=hi, device="dev 1")
    with pytest.raises(pg_idgen.EdgeClockBeforeWindow) as e:
        store.next_id()
    assert str(e.value) == words("edge_clock_before_window", now=1_700_000_000_250_000, grant=grant)
    with pytest.raises(pg_idgen.EdgeError) as e:
        store.enrol(None)
    assert str(e.value) == words("edge_already_enrolled", grant=grant)
    clock.s = 1_700_000_101.5
    store._first_pid_counter = lambda: (1, 0xFFFFFF)  # the next counter wraps into the end
    last = store.next_id()
    conn.commit()
    with pytest.raises(pg_idgen.EdgeWindowEnded) as e:
        store.next_id()
    assert str(e.value) == words("edge_used_up", grant=grant, last=last.unix_seconds * 10**6)
    clock.s = 1_700_000_102
    with pytest.raises(pg_idgen.EdgeWindowEnded) as e:
        store.next_id()
    assert str(e.value) == words("edge_window_ended", now=hi, grant=grant)
    conn.execute("BEGIN")
    with pytest.raises(pg_idgen.EdgeError) as e:
        store.sync(None)
    assert str(e.value) == words("edge_sqlite_in_transaction")
