"""Unit tests of pg_idgen.EdgeStore without a server: a grant is put into the SQLite file as
enrol would, and a fake clock stands for the device's. (clients/python/tests/server/test_edge.py runs enrol
and sync against the registry.)"""
import contextlib
import datetime as dt
import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

import pg_idgen
from pg_idgen import (
    EdgeClockBeforeWindow,
    EdgeCloned,
    EdgeError,
    EdgeStore,
    EdgeWindowEnded,
    Xid,
)

T0 = 1_700_000_000  # the window's start, unix seconds
DAY = 86_400
LO_US, HI_US = T0 * 1_000_000, (T0 + 28 * DAY) * 1_000_000
SLOT = {"xid12": 12_582_912 + 7, "snowflake": 800}
EPOCH_MS = pg_idgen.DEFAULT_EPOCH_MS
KINDS = ["xid12", "snowflake"]


EDGE_TRACES = Path(__file__).parents[3] / "tests" / "vectors" / "edge_traces.json"


class Clock:
    def __init__(self, s):
        self.s = s

    def __call__(self):
        return self.s


def open_store(path, kind, clock, device="unit-device"):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, n INTEGER)")
    return conn, EdgeStore(conn, kind, device=device, clock=clock)


def grant_row(grant_id, kind, lo_us, hi_us, server_us, token=8_112_348_937_541):
    """The row idgen_acquire returns as the client selects it: the window in the kind's
    id-time (lo_t, hi_t: Snowflake ms since epoch_ms, xid12 unix seconds), server_time as
    psycopg loads it."""
    if kind == "snowflake":
        epoch, lo_t, hi_t = EPOCH_MS, lo_us // 1000 - EPOCH_MS, hi_us // 1000 - EPOCH_MS
    else:
        epoch, lo_t, hi_t = None, lo_us // 1_000_000, hi_us // 1_000_000
    server_time = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=server_us)
    return (grant_id, token, kind, SLOT[kind], epoch, lo_t, hi_t, server_time)


def enrolled(path, kind, clock):
    """A store holding a 28-day grant [T0, T0 + 28 days), as enrol keeps it."""
    conn, store = open_store(path, kind, clock)
    store._keep(grant_row(41, kind, LO_US, HI_US, LO_US + 5_000_000), "unit-writer")
    return conn, store


def insert(conn, store, n):
    """The row's transaction: the id and its row commit together."""
    with conn:
        id = store.next_id()
        conn.execute("INSERT INTO rows VALUES (?, ?)", (str(id), n))
    return id


def parts(kind, id):
    """(slot, unix µs of the id's time)."""
    if kind == "xid12":
        return int.from_bytes(id.machine, "big"), id.unix_seconds * 1_000_000
    return pg_idgen.snowflake_worker(id), pg_idgen.snowflake_unix_ms(id, EPOCH_MS) * 1000


def set_mark(conn, store, id, us):
    with conn:
        conn.execute("UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ? WHERE kind = ?",
                     (str(id) if isinstance(id, Xid) else id, us, store.kind))


@pytest.mark.parametrize("kind", KINDS)
def test_ids_embed_the_slot_stay_in_the_window_and_increase(tmp_path, kind):
    clock = Clock(T0 + 10.25)
    conn, store = enrolled(tmp_path / "edge.db", kind, clock)
    ids = []
    for i in range(300):  # days of ids, some in the same second / millisecond
        ids.append(insert(conn, store, i))
        clock.s += 0 if i % 3 else 7 * 3600 / 100
    assert isinstance(ids[0], Xid if kind == "xid12" else int)
    assert ids == sorted(set(ids))
    for id in ids:
        slot, us = parts(kind, id)
        assert slot == SLOT[kind] and LO_US <= us < HI_US
    g = store.grant
    assert (g.grant_id, g.slot, g.syncs, g.last_id, g.writer) == (41, SLOT[kind], 0, ids[-1], "unit-writer")
    assert g.last_id_time.timestamp() * 1_000_000 == parts(kind, ids[-1])[1]


@pytest.mark.parametrize("kind", KINDS)
def test_state_persists_across_reopening_the_file(tmp_path, kind):
    path = tmp_path / "edge.db"
    clock = Clock(T0 + 100)
    conn, store = enrolled(path, kind, clock)
    first = [insert(conn, store, i) for i in range(5)]
    conn.close()
    conn, store = open_store(path, kind, clock)  # the app restarted, same clock second
    assert store.grant.grant_id == 41 and store.grant.last_id == first[-1]
    more = [insert(conn, store, i) for i in range(5, 10)]
    assert more[0] > first[-1]
    committed = [r[0] for r in conn.execute("SELECT id FROM rows ORDER BY n")]
    assert committed == [str(i) for i in first + more]


@pytest.mark.parametrize("kind", KINDS)
def test_a_crash_before_commit_loses_the_row_and_the_mark_together(tmp_path, kind):
    path = tmp_path / "edge.db"
    clock = Clock(T0 + 100)
    conn, store = enrolled(path, kind, clock)
    kept = insert(conn, store, 1)
    lost = store.next_id()
    conn.execute("INSERT INTO rows VALUES (?, ?)", (str(lost), 2))
    assert conn.in_transaction
    conn.close()  # the app dies: nothing of that transaction was committed
    conn, store = open_store(path, kind, clock)
    assert store.grant.last_id == kept
    again = insert(conn, store, 3)
    assert again > kept
    rows = [r[0] for r in conn.execute("SELECT id FROM rows")]
    assert sorted(rows) == sorted({str(kept), str(again)})  # no id repeats among committed rows


@pytest.mark.parametrize("kind", KINDS)
def test_a_clock_outside_the_window_refuses(tmp_path, kind):
    clock = Clock(T0 + 50)
    conn, store = enrolled(tmp_path / "edge.db", kind, clock)
    made = insert(conn, store, 1)
    clock.s = 946_684_800  # an RTC reset to 2000-01-01
    with pytest.raises(EdgeClockBeforeWindow, match=r"the device clock reads 2000-01-01T00:00:00\.000\+00:00, "
                       r"before the window of grant 41 .* on device 'unit-device'"):
        store.next_id()
    clock.s = T0 - 0.001
    with pytest.raises(EdgeClockBeforeWindow):
        store.next_id()
    clock.s = HI_US / 1e6  # offline past the window's end
    with pytest.raises(EdgeWindowEnded, match=r"at or after the end of the window .* sync with the registry"):
        store.next_id()
    clock.s += 30 * DAY
    with pytest.raises(EdgeWindowEnded):
        store.next_id()
    assert isinstance(EdgeWindowEnded("x"), EdgeError) and isinstance(EdgeError("x"), pg_idgen.RegistryError)
    conn.rollback()
    assert store.grant.last_id == made  # no mark moved


def test_xid12_clock_stepping_back_continues_above_the_mark(tmp_path):
    clock = Clock(T0 + 1000)
    conn, store = enrolled(tmp_path / "edge.db", "xid12", clock)
    a = insert(conn, store, 1)
    clock.s = T0 + 10  # back 990 s, still inside the window
    b = insert(conn, store, 2)
    assert b > a and b.unix_seconds == a.unix_seconds and b.counter == (a.counter + 1) % 2**24
    assert b.pid == a.pid
    # The counter used up within the mark's second: the next second (the clock is behind it).
    last = Xid.from_parts(T0 + 1000, SLOT["xid12"], a.pid, 2**24 - 1)
    set_mark(conn, store, last, (T0 + 1000) * 1_000_000)
    c = insert(conn, store, 3)
    assert c > last and c.unix_seconds == T0 + 1001 and c.counter == 0


def test_xid12_never_goes_past_the_window_end(tmp_path):
    hi_s = HI_US // 1_000_000
    clock = Clock(hi_s - 0.5)
    conn, store = enrolled(tmp_path / "edge.db", "xid12", clock)
    last = Xid.from_parts(hi_s - 1, SLOT["xid12"], 1, 2**24 - 1)
    set_mark(conn, store, last, (hi_s - 1) * 1_000_000)
    with pytest.raises(EdgeWindowEnded, match="are used up"):
        store.next_id()
    assert store.grant.last_id == last


def test_snowflake_clock_stepping_back_continues_above_the_mark(tmp_path):
    clock = Clock(T0 + 1000)
    conn, store = enrolled(tmp_path / "edge.db", "snowflake", clock)
    a = insert(conn, store, 0)
    clock.s = T0 + 10
    with conn:  # 5000 ids with the clock stuck behind the mark: the sequence, then the next ms
        ids = [store.next_id() for _ in range(5000)]
    assert ids[0] == a + 1 and ids == sorted(set(ids))
    ms = [pg_idgen.snowflake_unix_ms(i, EPOCH_MS) for i in [a] + ids]
    assert ms[0] == (T0 + 1000) * 1000 and ms[-1] == ms[0] + 1
    assert all(pg_idgen.snowflake_worker(i) == SLOT["snowflake"] for i in ids)
    assert store.grant.last_id == ids[-1]


def test_snowflake_never_goes_past_the_window_end(tmp_path):
    hi_ms = HI_US // 1000
    clock = Clock((hi_ms - 1) / 1000)
    conn, store = enrolled(tmp_path / "edge.db", "snowflake", clock)
    last = (hi_ms - 1 - EPOCH_MS) << 22 | SLOT["snowflake"] << 12 | 4095
    set_mark(conn, store, last, (hi_ms - 1) * 1000)
    with pytest.raises(EdgeWindowEnded, match="are used up"):
        store.next_id()


def test_a_second_connection_never_reuses_an_uncommitted_mark(tmp_path):
    path = tmp_path / "edge.db"
    clock = Clock(T0 + 100)
    conn, store = enrolled(path, "xid12", clock)
    other = sqlite3.connect(path, timeout=0.05)
    other_store = EdgeStore(other, "xid12", device="unit-device", clock=clock)
    a = store.next_id()  # uncommitted: conn holds the write lock
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other_store.next_id()
    other.rollback()
    conn.commit()
    b = other_store.next_id()
    other.commit()
    assert b > a


def test_enrol_refuses_while_a_live_grant_is_held(tmp_path):
    clock = Clock(T0 + 100)
    conn, store = enrolled(tmp_path / "edge.db", "xid12", clock)
    with pytest.raises(EdgeError, match=r"already holds grant 41 \(xid12 slot 12582919, window "
                       r"2023-11-14T22:13:20\.000\+00:00 to 2023-12-12T22:13:20\.000\+00:00\)"):
        store.enrol(None, "w")  # refused before the server is asked


def test_a_store_found_cloned_makes_no_more_ids(tmp_path):
    clock = Clock(T0 + 100)
    conn, store = enrolled(tmp_path / "edge.db", "xid12", clock)
    with conn:
        conn.execute("UPDATE pg_idgen_edge SET cloned = 'grant 41 is used by two devices'")
    with pytest.raises(EdgeCloned, match="grant 41 is used by two devices"):
        store.next_id()


def test_no_grant_and_bad_kind(tmp_path):
    conn = sqlite3.connect(tmp_path / "edge.db")
    store = EdgeStore(conn, "snowflake", device="d")
    assert store.grant is None
    with pytest.raises(EdgeError, match="holds no snowflake grant on device 'd': enrol it first"):
        store.next_id()
    with pytest.raises(ValueError, match="'xid12' or 'snowflake'"):
        EdgeStore(conn, "uuid")
    assert pg_idgen._edge.default_device()


@pytest.mark.parametrize("kind", KINDS)
def test_the_system_clock_by_default(tmp_path, kind):
    """Without an injected clock the store reads the system's: a window around now makes ids of
    now; one that ended an hour ago refuses."""
    import time

    now_us = time.time_ns() // 1000
    conn = sqlite3.connect(tmp_path / "d.db")
    store = EdgeStore(conn, kind, device="system-clock")
    now_us -= now_us % 1_000_000  # a window of whole seconds, as xid12's are
    store._keep(grant_row(42, kind, now_us - 60_000_000, now_us + 3_600_000_000, now_us, token=1),
                "unit-writer")
    with conn:
        slot, us = parts(kind, store.next_id())
    assert slot == SLOT[kind] and abs(us - now_us) < 60_000_000
    store._keep(grant_row(43, kind, now_us - 7_200_000_000, now_us - 3_600_000_000, now_us, token=1),
                "unit-writer")
    with pytest.raises(EdgeWindowEnded):
        store.next_id()


def test_the_file_layout_is_the_shared_one():
    """The table, its columns and the enrolment row are tests/vectors/edge_store.json's, which the
    Rust client's EdgeStore checks too: a device's file works with either client."""
    shared = json.loads((Path(__file__).parents[3] / "tests" / "vectors" / "edge_store.json").read_text())
    assert pg_idgen._edge._SCHEMA == shared["table"]
    assert pg_idgen._edge._COLUMNS == ", ".join(shared["columns"])
    assert pg_idgen._edge._ENROL == shared["enrol"]
    db = sqlite3.connect(":memory:")
    EdgeStore(db, "xid12", clock=Clock(T0))
    assert [row[1] for row in db.execute("PRAGMA table_info(pg_idgen_edge)")] == ["kind"] + shared["columns"]


def test_enrol_and_sync_refuse_inside_the_callers_transaction(tmp_path):
    """They commit their own writes, which would commit the caller's unfinished batch too."""
    conn, store = enrolled(tmp_path / "d.db", "xid12", Clock(T0 + 60))
    conn.execute("INSERT INTO rows VALUES (?, ?)", (str(store.next_id()), 1))
    assert conn.in_transaction
    for call in (lambda: store.sync(None), lambda: store.enrol(None, "w")):
        with pytest.raises(EdgeError, match="inside a transaction"):
            call()
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM rows").fetchone()[0] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_the_window_is_kept_in_unix_microseconds_from_the_rows_id_time(tmp_path, kind):
    """The server gives the window in the kind's id-time (lo_t, hi_t); the file keeps it in
    unix µs: xid12 t·10^6, Snowflake (epoch_ms + t)·10^3 with the grant's own epoch."""
    conn, store = open_store(tmp_path / "d.db", kind, Clock(T0))
    epoch = 1_600_000_000_123 if kind == "snowflake" else None
    lo_t, hi_t = (123_456_789, 987_654_321) if kind == "snowflake" else (T0, T0 + DAY)
    store._keep((44, 5, kind, SLOT[kind], epoch, lo_t, hi_t,
                 dt.datetime(2023, 11, 14, 22, 13, 25, 250_000, tzinfo=dt.timezone.utc)), "w")
    row = conn.execute("SELECT lo_us, hi_us, epoch_ms FROM pg_idgen_edge WHERE kind = ?", (kind,)).fetchone()
    if kind == "snowflake":
        assert row == (1_600_123_456_912_000, 1_600_987_654_444_000, epoch)
    else:
        assert row == (T0 * 1_000_000, (T0 + DAY) * 1_000_000, None)
    g = store.grant
    unix = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    assert (g.lo, g.hi) == (unix + dt.timedelta(microseconds=row[0]), unix + dt.timedelta(microseconds=row[1]))


# --- the offline rule against the shared vectors (tests/vectors/edge_traces.json) -----------

def _edge_traces():
    # The vectors are committed: a missing file fails the collection, never an empty list.
    doc = json.loads(EDGE_TRACES.read_text())
    assert doc["cases"], f"{EDGE_TRACES} has no cases"
    return doc


# Each refusal's class, and what its message says (window_ended and used_up are both
# EdgeWindowEnded; the message tells them apart).
REFUSED = {
    "cloned": (EdgeCloned, "no id is made"),
    "clock_before_window": (EdgeClockBeforeWindow, "before the window of"),
    "window_ended": (EdgeWindowEnded, "at or after the end of the window"),
    "used_up": (EdgeWindowEnded, "are used up"),
}


def test_edge_traces_refusals_are_the_python_classes():
    refusals = _edge_traces()["refusals"]
    assert set(refusals) == set(REFUSED)
    for name, (cls, _) in REFUSED.items():
        assert refusals[name]["python"].split()[0] == cls.__name__, name


class FakeLink:
    """A psycopg connection as EdgeStore.sync uses it. ``hi_us``: the end the server's renewal
    answers with; None: the link is down, every statement fails (the server never answers)."""

    connection = None  # as psycopg.sql's context: quoting without a server
    info = SimpleNamespace(transaction_status=psycopg.pq.TransactionStatus.IDLE)
    pgconn = SimpleNamespace(parameter_status=lambda name: b"ISO, MDY")

    def __init__(self, kind, state, hi_us=None):
        self.kind, self.state, self.hi_us = kind, state, hi_us

    def transaction(self):
        return contextlib.nullcontext()

    def execute(self, sql, params=(), **kw):
        if self.hi_us is None:
            raise psycopg.OperationalError("the link is down")
        st, kind = self.state, self.kind
        if "pg_extension" in sql:  # _catalog.EDITION_QUERY: edition, oids, schema, ...
            row = ("native", 0, 0, "public", True, 0)
        elif "idgen_report" in sql:
            row = (1,)
        else:  # the renewal: the row in id-time, the window's end the server's
            assert "idgen_renew" in sql, sql
            if kind == "snowflake":
                epoch, lo_t, hi_t = st["epoch_ms"], st["lo_us"] // 1000 - st["epoch_ms"], self.hi_us // 1000 - st["epoch_ms"]
            else:
                epoch, lo_t, hi_t = None, st["lo_us"] // 1_000_000, self.hi_us // 1_000_000
            server_time = dt.datetime(2027, 1, 15, 8, 0, tzinfo=dt.timezone.utc)
            row = (params[0], params[1], kind, st["slot"], epoch, lo_t, hi_t, server_time)
        return SimpleNamespace(fetchone=lambda: row)


@pytest.mark.parametrize("case", _edge_traces()["cases"], ids=lambda c: c["name"])
def test_edge_traces(case, tmp_path):
    """One case of the shared vectors through EdgeStore: the state written as a row of the
    shared table, each step a next_id on the injected clock, a renewing sync (a server that
    answers with the new end) or a releasing sync whose server never answers."""
    kind, st = case["kind"], case["state"]
    xid = kind == "xid12"
    clock = Clock(None)
    conn, store = open_store(tmp_path / "trace.db", kind, clock, device="trace-device")
    if xid:
        store._first_pid_counter = lambda: (case["pid"], case["counter"])

    def stored(id):  # an id of the vectors (xid12: 24 hex digits) as the row keeps it
        return None if id is None else str(Xid(bytes.fromhex(id))) if xid else id

    with conn:
        conn.execute(pg_idgen._edge._ENROL, (kind, 7, 99, st["slot"], st["lo_us"], st["hi_us"],
                                             st["epoch_ms"], "trace-writer"))
        conn.execute("UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ?, cloned = ? WHERE kind = ?",
                     (stored(st["last_id"]), st["last_id_us"], st["cloned"], kind))

    def row():
        return conn.execute("SELECT slot, lo_us, hi_us, epoch_ms, last_id, last_id_us, cloned "
                            "FROM pg_idgen_edge WHERE kind = ?", (kind,)).fetchone()

    for i, step in enumerate(case["steps"]):
        before = row()
        where = f"step {i}: {step}"
        if "now_us" in step:
            clock.s = step["now_us"] / 1e6
            assert round(clock.s * 1e6) == step["now_us"], where  # the reading reaches the store whole
            expect = step["expect"]
            if "refused" in expect:
                cls, says = REFUSED[expect["refused"]]
                with pytest.raises(cls, match=says):
                    store.next_id()
                assert not conn.in_transaction and row() == before, where
                continue
            with conn:
                made = store.next_id()
            assert (bytes(made).hex() if xid else made) == expect["id"], where
            assert row() == before[:4] + (stored(expect["id"]), expect["last_id_us"], None), where
            if xid:
                slot, us = int.from_bytes(made.machine, "big"), made.unix_seconds * 1_000_000
            else:
                slot, us = pg_idgen.snowflake_worker(made), pg_idgen.snowflake_unix_ms(made, st["epoch_ms"]) * 1000
            assert slot == st["slot"] and before[1] <= us < before[2], where
            if before[4] is not None:
                assert made > (Xid(before[4]) if xid else before[4]), where
        elif "renew" in step:
            hi_us = step["renew"]["hi_us"]
            g = store.sync(FakeLink(kind, st, hi_us), renew=dt.timedelta(days=28))
            assert g.syncs == 1 and row() == before[:2] + (hi_us,) + before[3:], where
        else:
            assert step["release"] is True
            with pytest.raises(psycopg.OperationalError, match="the link is down"):
                store.sync(FakeLink(kind, st), renew=None)
            assert row() == before[:2] + (step["expect"]["hi_us"],) + before[3:], where


@pytest.mark.parametrize("kind", KINDS)
def test_a_release_never_ends_the_window_below_an_id_made_meanwhile(tmp_path, kind):
    """Another connection to the file makes an id after this one read the row for a release:
    the window's end comes from the mark as it is when the end is written (one statement), so
    it never falls below that id (the release's server call fails here: the link is down)."""
    lo_us, hi_us = T0 * 1_000_000, (T0 + DAY) * 1_000_000
    conn_a, a = open_store(tmp_path / "d.db", kind, Clock(T0 + 1))
    conn_b, b = open_store(tmp_path / "d.db", kind, Clock(T0 + 50))
    a._keep(grant_row(45, kind, lo_us, hi_us, lo_us), "w")
    with conn_a:
        a.next_id()
    read = a._row

    def read_then_b_makes_an_id():
        row = read()
        a._row = read  # once
        with conn_b:
            b.next_id()
        return row

    a._row = read_then_b_makes_an_id
    with pytest.raises(Exception):
        a.sync(FakeLink(kind, {}, hi_us=None), renew=None)
    end, last_us = conn_a.execute("SELECT hi_us, last_id_us FROM pg_idgen_edge WHERE kind = ?",
                                  (kind,)).fetchone()
    assert last_us // 1_000_000 == T0 + 50
    assert end == last_us + (1_000_000 if kind == "xid12" else 1000), (end, last_us)
