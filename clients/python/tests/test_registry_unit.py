"""Unit tests of the grant-bound generators (no server): the pure state machine against the
shared traces (tests/vectors/grant_traces.json, the Rust core runs the same), and the
Registry's client behaviour against an in-memory registry with fake clocks."""
import datetime as dt
import json
import os
import threading
import time
from pathlib import Path

import pytest

import pg_idgen
from pg_idgen import (
    ClockAheadOfWindow,
    ClockBeforeWindow,
    GrantLost,
    Registry,
    RegistryUnavailable,
    SlotsExhausted,
    SnowflakeClockError,
    Xid,
)
from pg_idgen._grant import SnowflakeGrantState, XidGrantState

TRACES = Path(__file__).resolve().parents[3] / "tests" / "vectors" / "grant_traces.json"
EPOCH_MS = pg_idgen.DEFAULT_EPOCH_MS


# --- the state machine against the shared traces -------------------------------------------

def _cases():
    # The traces are committed: a missing file fails the collection, never an empty list.
    cases = json.loads(TRACES.read_text())["cases"]
    assert cases, f"{TRACES} has no cases"
    return cases


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["name"])
def test_grant_traces(case):
    snowflake = case["kind"] == "snowflake"
    if snowflake:
        st = SnowflakeGrantState(case["epoch_ms"], max_wait=case["max_wait"])
    else:
        st = XidGrantState(pid=case["pid"], counter_start=0, max_wait=case["max_wait"])
    st.bind(case["slot"], case["lo"], case["hi"])
    window = (case["slot"], case["lo"], case["hi"])
    issued = []

    def call(now, counter):
        if not snowflake:
            st.counter = counter
        try:
            id, wait = st.step(now)
        except ClockBeforeWindow:
            return {"error": "clock_before_window"}
        except SnowflakeClockError:
            return {"error": "clock_moved_back"}
        if id is not None:
            slot, lo, hi = window
            if snowflake:
                assert (id >> 12) & 1023 == slot and lo <= id >> 22 < hi, (id, window)
            else:
                assert (id >> 40) & 0xFFFFFF == slot and lo <= id >> 64 < hi, (hex(id), window)
            assert not issued or id > issued[-1], "ids must strictly increase"
            issued.append(id)
            return {"id": id if snowflake else id.to_bytes(12, "big").hex()}
        if wait is not None:
            return {"wait_until": wait}
        return {"renew": True}

    for step in case["steps"]:
        if "rebind" in step:
            r = step["rebind"]
            st.bind(r["slot"], r["lo"], r["hi"])
            window = (r["slot"], r["lo"], r["hi"])
            continue
        repeat = step.get("repeat", 1)
        for i in range(repeat):
            got = call(step["now"], (step.get("counter", 0) + i) % (1 << 24))
            if i < repeat - 1:
                assert "id" in got, (step, i, got)
        assert got == step["expect"], (step, got)


def test_trace_file_present_or_explained():
    # The traces are part of the repository from issue 25 on; this keeps a missing file visible.
    assert TRACES.exists(), f"{TRACES} is missing"


# --- the state machine by hand ----------------------------------------------------------

def test_snowflake_state_never_leaves_the_window():
    st = SnowflakeGrantState(EPOCH_MS, max_wait=5000)
    lo, hi = 1_000_000, 1_000_010
    st.bind(3, lo, hi)
    now = EPOCH_MS + lo
    ids = []
    while True:
        id, wait = st.step(now)
        if id is None and wait is None:
            break
        if wait is not None:
            now = wait
            continue
        ids.append(id)
    assert len(ids) == 10 * 4096
    assert all(lo <= i >> 22 < hi and (i >> 12) & 1023 == 3 for i in ids)
    assert ids == sorted(set(ids))
    assert st.step(EPOCH_MS + hi - 1) == (None, None)  # used up, the next ms is hi: renew
    assert st.step(EPOCH_MS + hi) == (None, None)


def test_unbound_state_asks_for_a_grant():
    assert SnowflakeGrantState().step(1_700_000_000_000) == (None, None)
    assert XidGrantState(pid=1, counter_start=0).step(1_700_000_000.5) == (None, None)


def test_clock_before_window_names_the_offset():
    st = SnowflakeGrantState(EPOCH_MS, max_wait=5000)
    st.bind(1, 500_000_000, 500_600_000)
    with pytest.raises(ClockBeforeWindow, match=r"the clock is 12\.3 s behind the grant's window"):
        st.step(EPOCH_MS + 500_000_000 - 12_300)
    x = XidGrantState(pid=1, counter_start=0, max_wait=5)
    x.bind(1, 1_700_000_000, 1_700_000_600)
    with pytest.raises(ClockBeforeWindow, match=r"the clock is 7\.5 s behind"):
        x.step(1_699_999_992.5)


# --- the Registry against an in-memory registry ----------------------------------------



class FakeServer:
    """A registry with the contract's rules, in memory, on a fake server clock (unix µs)."""

    def __init__(self, now_us, slots=1024):
        self.now_us = now_us
        self.slots = slots
        self.grants = {}  # grant_id -> dict
        self.calls = []
        self.down = False
        self.next_id = 1

    def _ends(self, kind, slot):
        return max((g["hi"] for g in self.grants.values() if g["kind"] == kind and g["slot"] == slot),
                   default=None)

    def call(self, name, params):
        self.calls.append((name, params))
        if self.down:
            raise RegistryUnavailable("the writer registry could not be reached: connection refused")
        now = self.now_us()
        if name.startswith("acquire"):
            kind, writer = params[0], params[1]
            lease = params[2] if name == "acquire" else dt.timedelta(minutes=10)
            lease_us = int(lease.total_seconds() * 1e6)
            unit = 1000 if kind == "snowflake" else 1_000_000
            best = None
            for slot in range(self.slots):
                end = self._ends(kind, slot)
                if end is None or end <= now:
                    best = (slot, end)
                    break
            if best is None:
                raise SlotsExhausted(f"every snowflake slot is held (DETAIL: {self.slots} held)", "53400")
            slot, end = best
            lo = max(now - 5_000_000, end if end is not None else 0)
            lo = -(-lo // unit) * unit
            hi = -(-(now + lease_us) // unit) * unit
            g = dict(grant_id=self.next_id, token=self.next_id * 7919, kind=kind, slot=slot, lo=lo,
                     hi=hi, lease=lease_us, writer=writer, released=None)
            self.grants[g["grant_id"]] = g
            self.next_id += 1
        elif name == "renew":
            grant_id, token, lease = params
            g = self.grants[grant_id]
            if any(o["kind"] == g["kind"] and o["slot"] == g["slot"] and o["lo"] >= g["hi"]
                   for o in self.grants.values() if o is not g) or g["released"]:
                raise GrantLost("grant lost", "55000")
            unit = 1000 if g["kind"] == "snowflake" else 1_000_000
            g["hi"] = max(g["hi"], -(-(now + g["lease"]) // unit) * unit)
        else:
            grant_id, token, last = params
            g = self.grants[grant_id]
            g["released"] = last
            return (grant_id,), 0.0
        return self.row(g, now), 0.001

    @staticmethod
    def row(g, now_us):
        """The grant row as the client selects it: the window in the kind's id-time (lo_t,
        hi_t: Snowflake ms since epoch_ms, xid12 unix seconds), the server's clock as psycopg
        reads it: its UTC text to the microsecond."""
        if g["kind"] == "snowflake":
            epoch, lo_t, hi_t = EPOCH_MS, g["lo"] // 1000 - EPOCH_MS, g["hi"] // 1000 - EPOCH_MS
        else:
            epoch, lo_t, hi_t = None, g["lo"] // 1_000_000, g["hi"] // 1_000_000
        server_time = (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
                       + dt.timedelta(microseconds=now_us)).strftime("%Y-%m-%d %H:%M:%S.%f")
        return (g["grant_id"], g["token"], g["kind"], g["slot"], epoch, lo_t, hi_t, server_time)


class Clock:
    """A writer's fake wall clock: unix µs, moved by hand or by sleep()."""

    def __init__(self, us):
        self.us = us

    def ms(self):
        return self.us // 1000

    def s(self):
        return self.us / 1e6

    def sleep(self, seconds):
        self.us += max(int(seconds * 1e6), 1)


T0 = 1_700_000_000_000_000


def fake_registry(server_offset_us=0, *, writer="unit:1", max_wait=5.0, slots=1024):
    clock = Clock(T0)
    server = FakeServer(lambda: clock.us - server_offset_us, slots)

    class R(Registry):
        def _call(self, name, params):
            return server.call(name, params)

    reg = R("host=/nonexistent", writer=writer, max_wait=max_wait, clock_ms=clock.ms,
            clock_s=clock.s, sleep=clock.sleep)
    return reg, server, clock


def test_the_grant_row_is_read_in_id_time_without_sql_arithmetic():
    """The statements select the window as the server gives it in id-time (lo_t, hi_t) and the
    server's clock as its UTC text to the µs (to_char, the same in any DateStyle, TimeZone and
    result format): no epoch arithmetic in SQL. The client turns them into unix µs itself:
    xid12 t·10^6, Snowflake (epoch_ms + t)·10^3; server_time to the µs."""
    from pg_idgen._registry import _statements

    sql = _statements('"s"')
    for name in ("acquire", "acquire_default", "renew"):
        assert sql[name].startswith(
            "SELECT grant_id, token, kind, slot, epoch_ms, lo_t, hi_t, pg_catalog.to_char("
            "pg_catalog.timezone('UTC'::pg_catalog.text, server_time), "
            "'YYYY-MM-DD HH24:MI:SS.US'::pg_catalog.text) FROM \"s\".idgen_"), sql[name]
        assert not any(w in sql[name] for w in ("extract", "floor", "OPERATOR", "epoch'")), sql[name]
    reg, server, clock = fake_registry()
    server_time = "2026-12-04 10:35:12.345678"  # UTC
    server_us = 1_796_380_512_345_678
    g = reg._grant((7, 11, "snowflake", 3, 1_600_000_000_123, 196_380_000_000, 196_380_600_001,
                    server_time), 0.002, server_us + 1_500_000)
    assert (g.lo, g.hi, g.epoch_ms) == (196_380_000_000, 196_380_600_001, 1_600_000_000_123)
    assert (g.lo_us, g.hi_us, g.server_us) == (1_796_380_000_123_000, 1_796_380_600_124_000, server_us)
    assert g.lease_s == pytest.approx(87.778322) and g.offset_s() == pytest.approx(1.499)
    x = reg._grant((8, 12, "xid12", 4, None, 1_796_380_507, 1_796_381_112, server_time), 0.0, server_us)
    assert (x.lo, x.hi, x.lo_us, x.hi_us) == (1_796_380_507, 1_796_381_112, 1_796_380_507_000_000,
                                              1_796_381_112_000_000)
    assert x.lease_s == pytest.approx(599.654322)  # from the server's sub-second clock
    reg.close()


def in_window(server, grant_id, id, kind="snowflake"):
    g = server.grants[grant_id]
    if kind == "snowflake":
        t_us = (EPOCH_MS + (id >> 22)) * 1000
        assert (id >> 12) & 1023 == g["slot"]
        return g["lo"] <= t_us < g["hi"]
    n = int.from_bytes(id, "big")
    assert (n >> 40) & 0xFFFFFF == g["slot"]
    return g["lo"] <= (n >> 64) * 1_000_000 < g["hi"]


def test_registry_renews_at_the_window_end_and_ids_stay_inside():
    reg, server, clock = fake_registry()
    with reg:
        sf = reg.snowflake(lease=3)
        xs = reg.xid12(lease=3)
        sf_ids, xid_ids = [], []
        for _ in range(100):  # 10 s of ids, 100 ms apart: several windows
            sf_ids.append((sf.grant.grant_id, sf.next_id()))
            xid_ids.append((xs.grant.grant_id, xs.new()))
            clock.us += 100_000
        assert all(in_window(server, g, i) for g, i in sf_ids)
        assert all(in_window(server, g, i, "xid12") for g, i in xid_ids)
        assert [i for _, i in sf_ids] == sorted({i for _, i in sf_ids})
        assert [i for _, i in xid_ids] == sorted(set(i for _, i in xid_ids))
        assert isinstance(xid_ids[0][1], Xid)
        assert sum(1 for c in server.calls if c[0] == "renew") >= 3
        assert len({g for g, _ in sf_ids}) == 1  # renewed, never replaced


def test_grant_lost_takes_a_new_slot_and_ids_keep_increasing():
    reg, server, clock = fake_registry()
    sf = reg.snowflake(lease=3)
    first = sf.grant
    a = sf.next_id()
    # Another writer continues the slot after our window.
    g = server.grants[first.grant_id]
    server.grants[99] = dict(grant_id=99, token=1, kind="snowflake", slot=g["slot"], lo=g["hi"],
                             hi=g["hi"] + 10_000_000, lease=0, writer="other", released=None)
    clock.us = g["hi"] + 1000
    b = sf.next_id()
    assert sf.grant.grant_id != first.grant_id and sf.grant.slot != first.slot
    assert b > a and (b >> 12) & 1023 == sf.grant.slot
    assert in_window(server, sf.grant.grant_id, b)


def test_unreachable_registry_at_the_window_end_raises_and_makes_no_id():
    reg, server, clock = fake_registry()
    sf = reg.snowflake(lease=3)
    sf.next_id()
    hi = server.grants[sf.grant.grant_id]["hi"]
    clock.us = hi - 1000
    last = sf.next_id()
    assert in_window(server, sf.grant.grant_id, last)
    server.down = True
    clock.us = hi
    with pytest.raises(RegistryUnavailable, match="could not be renewed, so no id is made"):
        sf.next_id()
    server.down = False
    assert sf.next_id() > last


def test_clock_a_lease_ahead_raises_naming_the_offset():
    reg, server, clock = fake_registry(server_offset_us=3_500_000)  # the writer is 3.5 s ahead
    sf = reg.snowflake(lease=3)
    with pytest.raises(ClockAheadOfWindow, match=r"the clock is 3\.5 s ahead of the registry server's"):
        sf.next_id()
    xs = reg.xid12(lease=3)
    with pytest.raises(ClockAheadOfWindow, match=r"3\.5 s ahead"):
        xs.new()


def test_clock_within_five_seconds_runs():
    for offset in (-4_900_000, -2_000_000, 2_000_000):
        reg, server, clock = fake_registry(server_offset_us=offset)
        sf = reg.snowflake(lease=10)
        xs = reg.xid12(lease=10)
        for _ in range(50):
            assert in_window(server, sf.grant.grant_id, sf.next_id())
            assert in_window(server, xs.grant.grant_id, xs.new(), "xid12")
            clock.us += 100_000


def test_clock_far_behind_raises_naming_the_offset():
    reg, server, clock = fake_registry(server_offset_us=-12_000_000)  # 12 s behind
    sf = reg.snowflake(lease=10)
    with pytest.raises(ClockBeforeWindow,
                       match=r"the clock is 12\.0 s behind the registry server's: the clock is 7\.0 s behind"):
        sf.next_id()


def test_close_releases_with_the_last_id_time():
    reg, server, clock = fake_registry()
    sf = reg.snowflake(lease=3)
    unused = reg.xid12(lease=3)
    i = sf.next_id()
    sf_grant, xid_grant = sf.grant.grant_id, unused.grant.grant_id
    reg.close()
    assert server.grants[sf_grant]["released"] == sf.time(i)
    assert server.grants[xid_grant]["released"] == "-infinity"
    with pytest.raises(pg_idgen.RegistryError, match="closed"):
        clock.us += 10_000_000
        sf.next_id()


def test_threads_share_a_generator():
    reg, server, clock = fake_registry()
    sf = reg.snowflake(lease=600)
    out = [[] for _ in range(8)]

    def work(k):
        for _ in range(3000):
            out[k].append(sf.next_id())

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in out for i in ids]
    assert len(set(every)) == len(every) == 24000
    assert all(ids == sorted(ids) for ids in out)


def test_background_renewal_at_half_the_lease():
    # Real monotonic time for the schedule, fake wall clocks for the windows.
    reg, server, clock = fake_registry()
    with reg:
        sf = reg.snowflake(lease=0.4)
        deadline = time.monotonic() + 30
        while sum(1 for c in server.calls if c[0] == "renew") < 2:
            assert time.monotonic() < deadline, "no background renewal within 30 s"
            time.sleep(0.02)
        assert sf.grant is not None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_child_acquires_its_own_grant_and_never_touches_the_parents():
    reg, server, clock = fake_registry()
    sf = reg.snowflake(lease=600)
    parent_grant = sf.grant.grant_id
    parent_id = sf.next_id()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            before = len(server.calls)
            ok = sf.grant is None
            child_id = sf.next_id()
            ok = ok and sf.grant.grant_id != parent_grant and (child_id >> 12) & 1023 == sf.grant.slot
            reg.close()
            ok = ok and all(p[0] != parent_grant for n, p in server.calls[before:] if n in ("renew", "release"))
            ok = ok and server.grants[parent_grant]["released"] is None
            os.write(w, b"ok" if ok else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    answer = os.read(r, 10)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    assert sf.grant.grant_id == parent_grant and sf.next_id() > parent_id
    reg.close()


def test_inline_fast_path_matches_the_state_machine():
    """GrantSnowflake.next_id and GrantXid.new inline the state machine's common case; over a
    clock that jitters back and forth inside the window they issue exactly the ids a separate
    SnowflakeGrantState / XidGrantState issues at the same readings (waits included)."""
    import random

    rnd = random.Random(25)
    reg, server, clock = fake_registry()
    sf = reg.snowflake(lease=600)
    g = sf.grant
    shadow = SnowflakeGrantState(g.epoch_ms, max_wait=5000)
    shadow.bind(g.slot, g.lo, g.hi)
    start = clock.us
    for _ in range(20000):
        clock.us = max(start, clock.us + rnd.choice([0, 0, 0, 1, 7, 500, -300, -2000]))
        now = clock.ms()
        while True:
            id, wait = shadow.step(now)
            if id is not None:
                break
            assert wait is not None
            now = wait
        clock.us = clock.ms() * 1000  # whole ms: the generator's sleeps land on the same reading
        assert sf.next_id() == id
        clock.us = max(clock.us, now * 1000)

    xs = reg.xid12(lease=600)
    g = xs.grant
    xshadow = XidGrantState(pid=xs._state.pid, counter_start=xs._state.counter, max_wait=5)
    xshadow.bind(g.slot, g.lo, g.hi)
    for _ in range(20000):
        clock.us = max(start, clock.us + rnd.choice([0, 0, 1000, 300_000, -1_500_000]))
        n, wait = xshadow.step(clock.s())
        assert n is not None
        assert int.from_bytes(xs.new(), "big") == n


def test_a_fenced_acquire_after_a_lost_grant_raises_registry_fenced():
    # The grant is lost (its renewal gets 55000) and the registry is fenced (its acquire gets
    # IG001): the id raises RegistryFenced with the fence's end, never GrantLost.
    reg, server, clock = fake_registry()
    with reg:
        sf = reg.snowflake(lease=3)
        sf.next_id()
        server.grants[sf.grant.grant_id]["released"] = "elsewhere"
        served = server.call

        def fenced(name, params):
            if name.startswith("acquire"):
                server.calls.append((name, params))
                raise pg_idgen.RegistryFenced("the writer registry grants no snowflake slot in pool "
                                              "'app' until 2026-12-04T10:35:12.345678Z", "IG001")
            return served(name, params)

        server.call = fenced
        clock.us += 3_000_000  # past the window
        with pytest.raises(pg_idgen.RegistryFenced) as e:
            sf.next_id()
        assert not isinstance(e.value, GrantLost) and e.value.sqlstate == "IG001"
        assert e.value.until == dt.datetime(2026, 12, 4, 10, 35, 12, 345678, tzinfo=dt.timezone.utc)
        assert [c[0] for c in server.calls].count("renew") >= 1
        assert sum(1 for c in server.calls if c[0].startswith("acquire")) >= 2
