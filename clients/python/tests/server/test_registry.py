"""The writer registry (issue 25; README "Writers and their identities") under the failures it exists for, with the Python
client's Registry: 200 concurrent acquires, a writer paused past its window, writers whose
clocks are off (libfaketime), every Snowflake slot held, a writer killed without releasing,
PgBouncer in transaction mode, provenance (idgen_writer_of, idgen_verify), and a hostile
public schema whose look-alike operators and functions the client's statements never run.

Writers that must fail or be stopped run as subprocesses (clients/python/tests/server/registry_writer.py).
Each test has its own database. Nothing here sleeps for a state change: every wait polls the
server with a generous deadline, and every bound states its margin.

libfaketime: the writers get FAKETIME_DONT_FAKE_MONOTONIC=1, so only the wall clock is offset
or stepped (a real machine's monotonic clock is never offset, and the client schedules its
renewals on it); their ids take their time from the faked wall clock.
"""
import datetime
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

import pg_idgen
from servers import connect, dsn, faketime_lib, fresh_database, poll

HERE = Path(__file__).resolve().parent
HOSTILE_SQL = HERE.parents[2] / "hostile_public.sql"  # clients/hostile_public.sql
WRITER = HERE / "registry_writer.py"
FREE_SLOT = 700  # the one Snowflake slot left free (in pool 'app', 0-767) where writers must meet


# --- helpers ----------------------------------------------------------------------------

def start_writer(db_dsn, name, out, *, kind="snowflake", lease="3 seconds", seconds=5.0,
                 faketime=None, faketime_file=None, pause=0.01):
    env = dict(os.environ)
    if faketime is not None or faketime_file is not None:
        env.update(LD_PRELOAD=faketime_lib(), FAKETIME_DONT_FAKE_MONOTONIC="1")
        if faketime_file is not None:
            env.update(FAKETIME_TIMESTAMP_FILE=str(faketime_file), FAKETIME_NO_CACHE="1")
        else:
            env["FAKETIME"] = faketime
    return subprocess.Popen(
        [sys.executable, str(WRITER), "--dsn", db_dsn, "--writer", name, "--kind", kind,
         "--lease", lease, "--out", str(out), "--seconds", str(seconds), "--pause", str(pause)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def read_writer(out):
    """(ids, error line or None, whether the writer got to its end)."""
    ids, error, ended = [], None, False
    text = Path(out).read_text() if Path(out).exists() else ""
    for line in text.splitlines():
        if line.startswith("id "):
            ids.append(line[3:])
        elif line.startswith("error "):
            error = line[6:]
        elif line == "end":
            ended = True
    return ids, error, ended


def finish(proc, timeout=120):
    try:
        output = proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        output = proc.communicate()[0]
        pytest.fail(f"writer did not finish within {timeout} s: {output.decode(errors='replace')}")
    return proc.returncode, output.decode(errors="replace")


def id_time_windows(conn, writer):
    """The writer's grants: (grant_id, kind, slot, lo, hi) with lo, hi in id-time."""
    return conn.execute(
        "SELECT grant_id, kind, slot, lo, hi FROM idgen_registry_grant WHERE writer = %s ORDER BY grant_id",
        [writer]).fetchall()


def snowflake_parts(i):
    return (i >> 12) & 1023, i >> 22


def xid_parts(text):
    x = pg_idgen.Xid(text)
    return int.from_bytes(x.machine, "big"), x.unix_seconds


def assert_inside_own_windows(conn, writer, kind, ids):
    """Every id has the slot and an id-time of one of this writer's windows, and
    idgen_writer_of names this writer for it."""
    wins = [(slot, lo, hi) for _, k, slot, lo, hi in id_time_windows(conn, writer) if k == kind]
    assert wins or not ids, f"{writer} made ids but has no {kind} grant"
    parts = snowflake_parts if kind == "snowflake" else xid_parts
    outside = [i for i in ids
               if not any(s == slot and lo <= t < hi for (s, t) in [parts(int(i) if kind == "snowflake" else i)]
                          for slot, lo, hi in wins)]
    assert not outside, f"{writer}: {len(outside)} ids outside its windows {wins}, e.g. {outside[:3]}"
    if kind == "snowflake":
        bad = conn.execute(
            "SELECT count(*) FROM unnest(%s::bigint[]) i "
            "WHERE (SELECT w.writer FROM idgen_writer_of(i) w) IS DISTINCT FROM %s",
            [[int(i) for i in ids], writer]).fetchone()[0]
    else:
        bad = conn.execute(
            "SELECT count(*) FROM unnest(%s::text[]) i "
            "WHERE (SELECT w.writer FROM idgen_writer_of(i::xid12) w) IS DISTINCT FROM %s",
            [list(ids), writer]).fetchone()[0]
    assert bad == 0, f"idgen_writer_of does not name {writer} for {bad} of its ids"


def leave_one_snowflake_slot(conn, free=FREE_SLOT):
    """Reserves every Snowflake slot but one, so writers that acquire in turn meet on it."""
    conn.execute(f"""
        DO $$ BEGIN
            FOR s IN 0..1023 LOOP
                IF s <> {int(free)} THEN
                    BEGIN
                        PERFORM idgen_reserve('snowflake', s, 'filler');
                    EXCEPTION WHEN OTHERS THEN NULL;  -- the server's own worker id
                    END;
                END IF;
            END LOOP;
        END $$""")
    held = conn.execute(
        "SELECT count(*) FROM idgen_registry_grant WHERE kind = 'snowflake' AND reserved").fetchone()[0]
    assert held >= 1022, held


def server_passed(conn, sql_time, params):
    return conn.execute(f"SELECT clock_timestamp() > ({sql_time})", params).fetchone()[0]


@pytest.fixture
def tmp(tmp_path):
    # The writers may run as this user only; the directory is private to the test.
    return tmp_path


# --- 200 writers at once ------------------------------------------------------------------

def test_200_writers_from_20_connections_get_disjoint_grants():
    db = fresh_database("registry_concurrent", extension=True)
    conns = [connect(dbname=db) for _ in range(20)]
    barrier = threading.Barrier(20)
    rows, errors = [], []

    def work(k):
        try:
            barrier.wait()
            for i in range(10):
                kind = "snowflake" if i < 7 else "xid12"  # 140 + 60 writers
                for attempt in range(20):
                    try:
                        rows.append(conns[k].execute(
                            "SELECT grant_id, kind, slot FROM idgen_acquire(%s, %s, '1 minute')",
                            [kind, f"w{k}.{i}"]).fetchone())
                        break
                    except psycopg.errors.LockNotAvailable:  # 55P03 "Try again"
                        continue
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(rows) == 200 and len({r[0] for r in rows}) == 200
    with conns[0] as conn:
        overlapping = conn.execute("""
            SELECT count(*) FROM idgen_grants a JOIN idgen_grants b
              ON a.kind = b.kind AND a.slot = b.slot AND a.grant_id < b.grant_id
             AND tstzrange(a.lo, a.hi) && tstzrange(b.lo, b.hi)""").fetchone()[0]
        assert overlapping == 0
        # The same from the id-time columns, in Python.
        by_slot = {}
        for _, kind, slot, lo, hi in conn.execute(
                "SELECT grant_id, kind, slot, lo, hi FROM idgen_registry_grant").fetchall():
            by_slot.setdefault((kind, slot), []).append((lo, hi))
        for windows in by_slot.values():
            windows.sort()
            assert all(a[1] <= b[0] for a, b in zip(windows, windows[1:])), windows
        # Live windows all contain now, so no two live Snowflake grants share a slot.
        assert len({r[2] for r in rows if r[1] == "snowflake"}) == 140
        own = conn.execute("SELECT nullif(current_setting('pg_idgen.worker_id'), '-1')::int").fetchone()[0]
        assert own is None or own not in {r[2] for r in rows if r[1] == "snowflake"}
    for c in conns[1:]:
        c.close()


# --- a writer paused past its window -----------------------------------------------------

def test_paused_writer_never_leaves_its_window(tmp):
    db = fresh_database("registry_pause", extension=True)
    db_dsn = dsn(dbname=db)
    with connect(dbname=db) as conn:
        leave_one_snowflake_slot(conn)
        out = tmp / "a.txt"
        a = start_writer(db_dsn, "paused-A", out, lease="3 seconds", seconds=0)
        try:
            poll("writer A's first ids", lambda: len(read_writer(out)[0]) >= 100)
            a.send_signal(signal.SIGSTOP)
            # Wait (on the server's clock) until every window A holds has ended.
            poll("A's window to end", lambda: server_passed(
                conn, "SELECT max(lo_hi) FROM (SELECT hi AS lo_hi FROM idgen_grants WHERE writer = %s) s",
                ["paused-A"]), timeout=120)
            (_, _, a_slot, a_lo, a_hi), = id_time_windows(conn, "paused-A")
            assert a_slot == FREE_SLOT
            # Writer B takes the same slot for the id-time after A's window.
            with pg_idgen.Registry(db_dsn, writer="paused-B") as reg:
                b = poll("B's grant", lambda: _try(lambda: reg.snowflake("1 minute")), timeout=60)
                assert b.slot == a_slot and b.grant.lo >= a_hi
                b_ids = [b.next_id() for _ in range(5000)]
                a.send_signal(signal.SIGCONT)
                code, output = finish(a)
                more = [b.next_id() for _ in range(1000)]
                b_ids += more
                assert_inside_own_windows(conn, "paused-B", "snowflake", [str(i) for i in b_ids])
        finally:
            if a.poll() is None:
                a.send_signal(signal.SIGCONT)
                a.kill()
                a.wait()
        a_ids, error, ended = read_writer(out)
        # A resumed: its renewal found the slot gone (55000), and with the only free slot
        # held by B it could not get another one (53400): it raised instead of going on.
        assert code == 3 and error and ended, (code, error, output)
        assert error.split()[0] in ("GrantLost", "SlotsExhausted", "RegistryError"), error
        assert_inside_own_windows(conn, "paused-A", "snowflake", a_ids)
        assert all(snowflake_parts(int(i))[1] < a_hi for i in a_ids)
        union = [int(i) for i in a_ids] + b_ids
        assert len(set(union)) == len(union)


def _try(f):
    try:
        return f()
    except pg_idgen.SlotsExhausted:
        return None


# --- clocks off the server's --------------------------------------------------------------

CLOCK_CASES = [
    # name, FAKETIME (or a step), seconds, what must happen
    ("behind2", "-2s", "runs"),
    ("ahead2", "+2s", "runs"),
    ("ahead_lease", "+3s", "ahead"),   # one lease (3 s) ahead
    ("behind12", "-12s", "behind"),    # beyond the registry's 5 s backdating + 5 s of waiting
    ("stepback5", "step", "runs"),     # 5 s step back mid-window
]


def test_writers_with_clocks_off_never_duplicate(tmp):
    db = fresh_database("registry_clocks", extension=True)
    db_dsn = dsn(dbname=db)
    step_file = tmp / "faketime_step"
    step_file.write_text("+0\n")
    procs = {}
    for name, spec, _ in CLOCK_CASES:
        for kind in ("snowflake", "xid12"):
            writer = f"clock-{name}-{kind}"
            out = tmp / f"{writer}.txt"
            if spec == "step":
                p = start_writer(db_dsn, writer, out, kind=kind, seconds=12, faketime_file=step_file)
            else:
                p = start_writer(db_dsn, writer, out, kind=kind, seconds=5, faketime=spec)
            procs[writer] = (name, kind, out, p)
    try:
        # The step: once the stepping writers have made ids for a second, their clocks go 5 s back.
        stepping = [v[2] for k, v in procs.items() if "stepback5" in k]
        poll("the stepping writers' first ids", lambda: all(read_writer(o)[0] for o in stepping))
        first = time.monotonic()
        poll("a second of ids", lambda: time.monotonic() - first >= 1.0, every=0.1)
        counts_before = [len(read_writer(o)[0]) for o in stepping]
        step_file.write_text("-5s\n")
        results = {w: finish(p) for w, (_, _, _, p) in procs.items()}
    finally:
        for _, _, _, p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    every = []
    with connect(dbname=db) as conn:
        for writer, (name, kind, out, _) in procs.items():
            expect = dict((n, e) for n, _, e in CLOCK_CASES)[name]
            code, output = results[writer]
            ids, error, ended = read_writer(out)
            assert ended, f"{writer} did not end cleanly: {output}"
            assert_inside_own_windows(conn, writer, kind, ids)
            every += [(kind, i) for i in ids]
            if expect == "runs":
                assert error is None and ids, f"{writer}: {error}"
            elif expect == "ahead":
                # One lease ahead: each renewal ends the window about where the clock already
                # is, so the writer stops, naming its offset (3 s; margin 1 s for start-up and
                # round trips), unless a renewal happened to land just ahead of it.
                if error is not None:
                    m = re.search(r"the clock is ([0-9.]+) s ahead of the registry server's", error)
                    assert error.startswith("ClockAheadOfWindow") and m, error
                    assert 2.0 <= float(m.group(1)) <= 4.0, error
            else:
                m = re.search(r"the clock is ([0-9.]+) s behind the registry server's", error or "")
                assert error and error.startswith("ClockBeforeWindow") and m, error
                assert 11.0 <= float(m.group(1)) <= 13.0, error  # 12 s; margin 1 s
                assert not ids
    # Across every writer: no id twice.
    assert len(set(every)) == len(every)
    assert counts_before  # (the stepping writers had made ids before their clocks stepped)


# --- every Snowflake slot held -------------------------------------------------------------

def test_exhaustion_is_53400_and_a_release_frees_a_slot():
    """The built-in pools split the 1,024 Snowflake slots: 'app' (0-767, the clients' default)
    and 'edge' (768-1023). With both held, every slot but the reserved ones is held."""
    db = fresh_database("registry_exhaust", extension=True)
    with connect(dbname=db) as conn:
        conn.execute("SELECT idgen_reserve('snowflake', 7, 'hand-configured')")
        grants, details = [], {}
        for pool in ("app", "edge"):
            while True:
                try:
                    grants.append(conn.execute(
                        # The pool's default lease (app: 3 minutes, its longest for Snowflake).
                        "SELECT grant_id, token, slot FROM idgen_acquire('snowflake', %s, NULL, %s)",
                        [f"filler-{len(grants)}", pool]).fetchone() + (pool,))
                except psycopg.errors.ConfigurationLimitExceeded as e:
                    details[pool] = (e.diag.message_primary, e.diag.message_detail)
                    break
                assert len(grants) <= 1024
        reserved = conn.execute(
            "SELECT count(*) FROM idgen_grants WHERE kind = 'snowflake' AND reserved").fetchone()[0]
        assert reserved >= 1  # slot 7, and the server's own worker id if it has one
        assert len(grants) == 1024 - reserved
        slots = {g[2] for g in grants}
        assert len(slots) == len(grants) and 7 not in slots
        app = sum(1 for g in grants if g[3] == "app")
        assert "every snowflake slot of pool 'app' is held" in details["app"][0], details
        assert f"{app} by grants" in details["app"][1], details  # how many, in the DETAIL
        assert "The first grant ends at" in details["app"][1], details
        # The client says the same, as SlotsExhausted with the DETAIL.
        with pg_idgen.Registry(dsn(dbname=db), writer="late") as reg:
            with pytest.raises(pg_idgen.SlotsExhausted, match=r"every snowflake slot .* is held.*DETAIL") as e:
                reg.snowflake()
            assert e.value.sqlstate == "53400"
            grant_id, token, slot, _ = next(g for g in grants if g[3] == "app")
            conn.execute("SELECT idgen_release(%s, %s, '-infinity')", [grant_id, token])
            gen = reg.snowflake()
            assert gen.slot == slot
            assert_inside_own_windows(conn, "late", "snowflake", [str(gen.next_id()) for _ in range(100)])


# --- kill -9 without release ---------------------------------------------------------------

def test_killed_writer_slot_is_granted_again_only_after_its_window(tmp):
    db = fresh_database("registry_kill", extension=True)
    db_dsn = dsn(dbname=db)
    with connect(dbname=db) as conn:
        leave_one_snowflake_slot(conn)
        out = tmp / "killed.txt"
        a = start_writer(db_dsn, "killed-A", out, lease="3 seconds", seconds=0)
        try:
            poll("the killed writer's first ids", lambda: len(read_writer(out)[0]) >= 100)
        finally:
            a.kill()  # SIGKILL: no release
            a.wait()
        a_ids, _, ended = read_writer(out)
        assert not ended
        with pg_idgen.Registry(db_dsn, writer="after-B") as reg:
            b = poll("a grant of the killed writer's slot", lambda: _try(lambda: reg.snowflake("1 minute")),
                     timeout=120)
            a_windows = id_time_windows(conn, "killed-A")
            a_hi = max(w[4] for w in a_windows)
            assert b.slot == FREE_SLOT == a_windows[0][2]
            assert b.grant.lo >= a_hi  # the slot's id-time from A's hi on, never before
            released = conn.execute("SELECT bool_and(released_at IS NULL) FROM idgen_grants WHERE writer = 'killed-A'").fetchone()[0]
            assert released  # nobody cleaned up: the window just ended
            b_ids = [b.next_id() for _ in range(5000)]
            assert all(snowflake_parts(i)[1] >= a_hi for i in b_ids)
            assert_inside_own_windows(conn, "after-B", "snowflake", [str(i) for i in b_ids])
        assert_inside_own_windows(conn, "killed-A", "snowflake", a_ids)
        union = [int(i) for i in a_ids] + b_ids
        assert len(set(union)) == len(union)


# --- through PgBouncer in transaction mode -----------------------------------------------

def test_registry_through_pgbouncer_in_transaction_mode(tmp):
    pgbouncer = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    assert os.path.exists(pgbouncer), "pgbouncer is missing: the Debian package pgbouncer (scripts/lib.sh TEST_PACKAGES)"
    db = fresh_database("registry_bouncer", extension=True)
    host, port = os.environ["PG_IDGEN_HOST"], os.environ["PG_IDGEN_PORT"]
    work = Path(tempfile.mkdtemp(prefix="pg_idgen_bouncer_"))
    os.chmod(work, 0o777)
    bport = _free_port()
    (work / "users.txt").write_text('"postgres" ""\n')
    (work / "pgbouncer.ini").write_text(f"""[databases]
{db} = host={host} port={port} dbname={db}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {bport}
unix_socket_dir =
auth_type = trust
auth_file = {work}/users.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 100
logfile = {work}/pgbouncer.log
pidfile = {work}/pgbouncer.pid
""")
    for f in work.iterdir():
        os.chmod(f, 0o666)
    cmd = [pgbouncer, str(work / "pgbouncer.ini")]
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    bouncer = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # its log: logfile
    try:
        bdsn = f"host=127.0.0.1 port={bport} user=postgres dbname={db}"
        poll("pgbouncer to accept connections", lambda: _can_connect(bdsn), timeout=60)
        # Five registries share the bouncer's two server connections; each statement may run
        # on either, so any session state would show.
        regs = [pg_idgen.Registry(bdsn, writer=f"bounced-{k}") for k in range(5)]
        try:
            gens = [(r.snowflake("2 seconds"), r.xid12("2 seconds")) for r in regs]
            made = {k: ([], []) for k in range(5)}
            with connect(dbname=db) as conn:
                start = time.monotonic()
                renewed = lambda: conn.execute(
                    "SELECT count(*) FROM idgen_grants WHERE writer LIKE 'bounced-%%' AND renewed_at IS NOT NULL"
                ).fetchone()[0] >= 10
                while not renewed() or time.monotonic() - start < 0.5:
                    for k, (sf, xs) in enumerate(gens):
                        made[k][0].append(sf.next_id())
                        made[k][1].append(str(xs.new()))
                    assert time.monotonic() - start < 120, "no renewals through pgbouncer in 120 s"
                    time.sleep(0.005)
                advisory = conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0]
                assert advisory == 0
            for r in regs:
                r.close()
            with connect(dbname=db) as conn:
                for k in range(5):
                    assert_inside_own_windows(conn, f"bounced-{k}", "snowflake", [str(i) for i in made[k][0]])
                    assert_inside_own_windows(conn, f"bounced-{k}", "xid12", made[k][1])
                assert conn.execute(
                    "SELECT bool_and(released_at IS NOT NULL) FROM idgen_grants WHERE writer LIKE 'bounced-%%'"
                ).fetchone()[0]
        finally:
            for r in regs:
                r.close()
    finally:
        bouncer.terminate()
        try:
            bouncer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            bouncer.kill()
            bouncer.wait()
        shutil.rmtree(work, ignore_errors=True)


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _can_connect(bdsn) -> bool:
    try:
        with psycopg.connect(bdsn, connect_timeout=2) as c:
            c.execute("SELECT 1")
        return True
    except psycopg.OperationalError:
        return False


# --- provenance ----------------------------------------------------------------------------

def test_verify_reports_planted_ids_that_no_grant_covers():
    db = fresh_database("registry_verify", extension=True)
    # A connection factory this time (not autocommit: the Registry sets it).
    factory = lambda: psycopg.connect(dsn(dbname=db))  # noqa: E731
    with connect(dbname=db) as conn, pg_idgen.Registry(factory, writer="verified") as reg:
        sf, xs = reg.snowflake("1 minute"), reg.xid12("1 minute")
        good_sf = [sf.next_id() for _ in range(1000)]
        good_x = [str(xs.new()) for _ in range(1000)]
        conn.execute("CREATE TABLE sf (id bigint)")
        conn.execute("CREATE TABLE xs (id xid12)")
        conn.execute("INSERT INTO sf SELECT unnest(%s::bigint[])", [good_sf])
        conn.execute("INSERT INTO xs SELECT unnest(%s::text[])::xid12", [good_x])
        assert conn.execute("SELECT count(*) FROM idgen_verify('sf', 'id')").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM idgen_verify('xs', 'id')").fetchone()[0] == 0
        # Planted: the writer's slot before its window, a slot never granted, a hand-made xid12.
        slot = sf.slot
        early = (sf.grant.lo - 60_000) << 22 | slot << 12
        never = next(s for s in range(1024) if s not in (slot,) and not conn.execute(
            "SELECT EXISTS (SELECT FROM idgen_grants WHERE kind = 'snowflake' AND slot = %s)", [s]).fetchone()[0])
        other = (sf.grant.lo + 10) << 22 | never << 12
        planted_x = str(pg_idgen.Xid.from_parts(int(time.time()), 0xABCDEF if xs.slot != 0xABCDEF else 0xABCDEE, 1, 1))
        conn.execute("INSERT INTO sf VALUES (%s), (%s)", [early, other])
        conn.execute("INSERT INTO xs VALUES (%s::xid12)", [planted_x])
        found = dict(conn.execute("SELECT id, reason FROM idgen_verify('sf', 'id')").fetchall())
        assert set(found) == {str(early), str(other)}, found
        assert "outside every window" in found[str(early)]
        assert "never granted" in found[str(other)]
        found_x = dict(conn.execute("SELECT id, reason FROM idgen_verify('xs', 'id')").fetchall())
        assert set(found_x) == {planted_x}, found_x
        assert conn.execute("SELECT count(*) FROM idgen_writer_of(%s::bigint)", [early]).fetchone()[0] == 0
        assert_inside_own_windows(conn, "verified", "snowflake", [str(i) for i in good_sf])
        assert_inside_own_windows(conn, "verified", "xid12", good_x)


def test_forked_child_never_uses_the_parents_grant():
    db = fresh_database("registry_fork", extension=True)
    with pg_idgen.Registry(dsn(dbname=db)) as reg:
        sf = reg.snowflake("1 minute")
        parent_ids = [sf.next_id() for _ in range(100)]
        parent_conn = reg._conn
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                ids = [sf.next_id() for _ in range(100)]
                os.write(w, (" ".join(map(str, ids)) + "\n").encode())
                reg.close()
                # Finalize the inherited connection as an exiting child would: its libpq
                # Terminate message must not reach the parent's session.
                import gc
                from pg_idgen import _registry
                _registry._INHERITED.clear()
                gc.collect()
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        child = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            child += chunk
        os.close(r)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        child_ids = [int(i) for i in child.split()]
        parent_ids += [sf.next_id() for _ in range(100)]
        # The parent's connection is the same one and still works.
        assert reg._conn is parent_conn and parent_conn.execute("SELECT 1").fetchone() == (1,)
        with connect(dbname=db) as conn:
            writers = dict(conn.execute(
                "SELECT grant_id, writer FROM idgen_grants WHERE NOT reserved").fetchall())
            assert len(writers) == 2
            parent_writer = reg.writer
            child_writer = next(v for v in writers.values() if v != parent_writer)
            assert child_writer.endswith(f":{pid}")
            assert_inside_own_windows(conn, parent_writer, "snowflake", [str(i) for i in parent_ids])
            assert_inside_own_windows(conn, child_writer, "snowflake", [str(i) for i in child_ids])
            # The child released only its own grant.
            assert conn.execute("SELECT released_at IS NULL FROM idgen_grants WHERE writer = %s",
                                [parent_writer]).fetchone()[0]
        assert len(set(parent_ids + child_ids)) == 200 + 100


# --- a hostile public schema (issue 33) --------------------------------------------------

_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_US = datetime.timedelta(microseconds=1)


def hostile_calls(admin):
    """(calls counted by the attacker's sequence, the look-alikes that ran)."""
    calls = admin.execute("SELECT CASE WHEN is_called THEN last_value ELSE 0 END "
                          "FROM public.hostile_calls").fetchone()[0]
    ran = [r[0] for r in admin.execute("SELECT what FROM public.hostile_ran").fetchall()]
    return calls, ran


def assert_servers_window(admin, g):
    """The client's grant g is the server's: its window in unix µs and in id-time, read from
    idgen_grants (timestamptz, turned into µs here) and idgen_registry_grant (id-time)."""
    lo, hi, epoch_ms = admin.execute(
        "SELECT lo, hi, epoch_ms FROM public.idgen_grants WHERE grant_id OPERATOR(pg_catalog.=) %s::pg_catalog.int8",
        [g.grant_id]).fetchone()
    assert (g.lo_us, g.hi_us) == ((lo - _EPOCH_UTC) // _US, (hi - _EPOCH_UTC) // _US), (g, lo, hi)
    assert g.epoch_ms == epoch_ms
    id_lo, id_hi = admin.execute(
        "SELECT lo, hi FROM public.idgen_registry_grant WHERE grant_id OPERATOR(pg_catalog.=) %s::pg_catalog.int8",
        [g.grant_id]).fetchone()
    assert (g.lo, g.hi) == (id_lo, id_hi), (g, id_lo, id_hi)


@pytest.mark.parametrize("kind", ["snowflake", "xid12"])
@pytest.mark.parametrize("path", ["default", "public,pg_catalog"])
def test_hostile_public_schema_changes_nothing_the_client_computes(kind, path):
    """A role with no grants fills public (writable by all, as on PostgreSQL 14) with
    look-alikes (clients/hostile_public.sql). The writer, with the default search_path (or one
    that puts public before pg_catalog), acquires, renews and releases through Registry: the
    window it believes is exactly the server's at every step, and no look-alike ever ran."""
    db = fresh_database("registry_hostile", extension=True)
    with connect(dbname=db) as admin:
        admin.execute(HOSTILE_SQL.read_text())
        writer_dsn = dsn(dbname=db)
        if path != "default":
            writer_dsn += f" options='-c search_path={path}'"
        with psycopg.connect(writer_dsn) as probe:
            assert probe.execute("SHOW search_path").fetchone()[0] == ('"$user", public' if path == "default" else path)
        with pg_idgen.Registry(writer_dsn, "hostile-path-writer") as reg:
            gen = reg.snowflake(lease=60) if kind == "snowflake" else reg.xid12(lease=60)
            first = gen.grant
            assert_servers_window(admin, first)
            ids = [gen.next_id() if kind == "snowflake" else gen.new() for _ in range(100)]
            with gen._lock:
                gen._renew_or_replace()
            renewed = gen.grant
            assert renewed.grant_id == first.grant_id and renewed.hi_us >= first.hi_us
            assert_servers_window(admin, renewed)
            assert (gen._state.lo, gen._state.hi) == (renewed.lo, renewed.hi)
            grant_id = renewed.grant_id
        released_at, = admin.execute(
            "SELECT released_at FROM public.idgen_grants WHERE grant_id OPERATOR(pg_catalog.=) %s::pg_catalog.int8",
            [grant_id]).fetchone()
        assert released_at is not None
        assert_inside_own_windows(admin, "hostile-path-writer", kind, [str(i) for i in ids])
        assert hostile_calls(admin) == (0, [])
        # The trap is armed: the statement the clients sent before issue 33 runs the attacker's
        # operator through this search_path (so the test above could fail).
        with psycopg.connect(writer_dsn) as old:
            old.execute("SELECT floor(extract(epoch FROM pg_catalog.now()) * 1000000)::bigint")
        calls, ran = hostile_calls(admin)
        assert calls >= 1 and "*(numeric, integer)" in ran, (calls, ran)
        # So does a plain comparison of two rapkeys, on any path: the operator planted on the
        # domain (by a role with USAGE on it) is an exact match, taken before text = text.
        with psycopg.connect(writer_dsn) as old:
            old.execute("SELECT rapkey_build('ord', 'a', '1') = rapkey_build('ord', 'a', '1')")
        assert "=(rapkey, rapkey)" in hostile_calls(admin)[1]


@pytest.mark.parametrize("cursor", ["server", "client"])
@pytest.mark.parametrize("kind", ["snowflake", "xid12"])
def test_the_grant_is_the_servers_in_any_datestyle_and_timezone(kind, cursor):
    """The client reads the window in id-time (lo_t, hi_t) and the server's clock (server_time)
    as its UTC text: on a session with DateStyle 'SQL, DMY' and a time zone 3.5 h west of UTC,
    with psycopg's default cursors and with client-side cursors (PgBouncer users' choice, which
    cannot ask for binary results), the window is exactly the server's and the server's clock
    lies between two readings taken around the call."""
    db = fresh_database("registry_style", extension=True)
    writer_dsn = dsn(dbname=db) + " options='-c DateStyle=SQL,DMY -c TimeZone=America/St_Johns'"
    source = writer_dsn if cursor == "server" else (
        lambda: psycopg.connect(writer_dsn, autocommit=True, cursor_factory=psycopg.ClientCursor))
    with connect(dbname=db) as admin, pg_idgen.Registry(source, "style-writer") as reg:
        def server_clock():
            return admin.execute("SELECT clock_timestamp()").fetchone()[0]

        before = server_clock()
        gen = reg.snowflake(lease=60) if kind == "snowflake" else reg.xid12(lease=60)
        after = server_clock()
        assert reg._conn.execute("SHOW DateStyle").fetchone()[0] == "SQL, DMY"
        g = gen.grant
        assert_servers_window(admin, g)
        moment = _EPOCH_UTC + datetime.timedelta(microseconds=g.server_us)
        assert before <= moment <= after, (before, moment, after)
        assert 59.0 < g.lease_s <= 61.0 and abs(g.offset_s()) < 1.0
        with gen._lock:
            gen._renew_or_replace()
        assert gen.grant.grant_id == g.grant_id and gen.grant.server_us > g.server_us
        assert_servers_window(admin, gen.grant)
