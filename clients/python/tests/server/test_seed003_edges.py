"""Seed 003 for real (issue 26): four edge devices, each its own OS process with its own SQLite
file, enrolled in the registry's 'edge' pool (a Snowflake grant and an xid12 grant each): three
run the Python client (clients/python/tests/server/edge_device.py), one the Rust client
(clients/rust/examples/edge_device.rs, built once per session).

- edge-a goes offline with its clock three days ahead (libfaketime FAKETIME=+3d) and makes its
  ids then; its grant (10 days, enrolled on the real clock) covers that.
- edge-b is killed with SIGKILL in the middle of a batch (half a SQLite transaction inserted),
  then restarted: it goes on above its last committed mark, no committed row lost, no id twice.
- edge-c's clock is reset to 2000 after enrolment (FAKETIME=@2000-01-01): its store refuses
  (EdgeClockBeforeWindow) and it makes no id.
- edge-d is the Rust device, on the real clock.

Meanwhile the centre keys its own rows with gen_snowflake() (worker 3) and gen_xid12(). Then
every device syncs (report and release), its rows go by binary COPY into staging tables,
idgen_verify finds every id covered, and all of it meets the central unique indexes in one
transaction: no conflict, every row byte-identical to the device's copy, idgen_writer_of names
the device of every device row.

The devices' clocks are faked per process, with FAKETIME_DONT_FAKE_MONOTONIC=1 (only the wall
clock moves); the server's is real. Nothing sleeps for a state change: every wait polls with a
generous deadline.
"""
import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import pg_idgen.psycopg
from pg_idgen import Xid

from servers import cluster_worker_id, connect, dsn, faketime_lib, fresh_database, poll

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
DEVICE = HERE / "edge_device.py"
ROWS = 200          # per device and table
BATCH = 20          # rows per SQLite transaction
STALL_AFTER = 4     # edge-b's batches committed before it is killed in the next one
LEASE_DAYS = 10     # covers edge-a's three days ahead
DEADLINE = 120.0    # for any one process or wait (the machine may be loaded)
PY_DEVICES = ("edge-a", "edge-b", "edge-c")
RUST_DEVICE = "edge-d"
DEVICES = PY_DEVICES + (RUST_DEVICE,)
MERGED = ("edge-a", "edge-b", "edge-d")  # edge-c makes no ids


# --- helpers ------------------------------------------------------------------------------

def faketime_env(spec):
    return {"LD_PRELOAD": faketime_lib(), "FAKETIME": spec, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


@pytest.fixture(scope="session")
def rust_device():
    """The Rust device's binary: built once (cargo caches it)."""
    cmd = ["cargo", "build", "-q", "-p", "pg-idgen-client", "--features", "edge",
           "--example", "edge_device", "--message-format=json-render-diagnostics"]
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=900, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stderr}"
    for line in done.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "edge_device":
            exe = msg.get("executable")
            if exe:
                return exe
    pytest.fail(f"cargo built no edge_device example:\n{done.stdout[-2000:]}")


class Device:
    """One edge device: its SQLite file, its clock (FAKETIME or the real one), its program."""

    def __init__(self, name, tmp, rust_exe=None, faketime=None):
        self.name, self.db = name, tmp / f"{name}.db"
        self.tmp, self.rust_exe, self.faketime = tmp, rust_exe, faketime
        self.runs = 0

    def start(self, command, *args, fake=True):
        """The device's program as a process; its output goes to a file of its own."""
        if self.rust_exe:
            argv = [self.rust_exe, command]
        else:
            argv = [sys.executable, str(DEVICE), command]
        argv += ["--db", str(self.db), "--device", self.name, *map(str, args)]
        env = dict(os.environ)
        if fake and self.faketime:
            env.update(faketime_env(self.faketime))
        self.runs += 1
        out = self.tmp / f"{self.name}.{self.runs}.{command}.out"
        with open(out, "w") as f:
            proc = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT, cwd=self.tmp)
        proc.out = out
        return proc


def output(proc):
    return proc.out.read_text() if proc.out.exists() else ""


def finish(proc, timeout=DEADLINE):
    """(exit status, output lines)."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"{proc.args} did not finish within {timeout:.0f} s:\n{output(proc)}")
    return proc.returncode, output(proc).splitlines()


def finish_ok(proc):
    code, lines = finish(proc)
    assert code == 0, f"{proc.args} exited with {code}:\n" + "\n".join(lines)
    return lines


def committed(lines):
    """The row numbers the process reported committed, in order."""
    rows = []
    for line in lines:
        if line.startswith("committed "):
            first, last = map(int, line.split()[1:])
            rows += range(first, last + 1)
    return rows


def read_rows(path):
    """The device's rows, as its SQLite file holds them: (Snowflake rows, xid12 rows, marks)."""
    lite = sqlite3.connect(path)
    try:
        sf = lite.execute("SELECT id, origin, payload FROM events_sf ORDER BY id").fetchall()
        xid = lite.execute("SELECT id, origin, payload FROM events_xid ORDER BY id").fetchall()
        marks = dict(lite.execute("SELECT kind, last_id FROM pg_idgen_edge").fetchall())
    finally:
        lite.close()
    return sf, xid, marks


@pytest.fixture
def worker_3():
    with cluster_worker_id(3):
        yield


# --- the test -------------------------------------------------------------------------------

def test_four_edge_devices_merge_into_central_at_once(tmp_path, worker_3, rust_device):
    dbname = fresh_database("pyclient_seed003_edges", extension=True)
    db_dsn = dsn(dbname=dbname)
    with connect(dbname=dbname) as conn:
        conn.execute("CREATE TABLE events_sf (id bigint PRIMARY KEY DEFAULT gen_snowflake(), origin text NOT NULL, payload text NOT NULL)")
        conn.execute("CREATE TABLE events_xid (id xid12 PRIMARY KEY DEFAULT gen_xid12(), origin text NOT NULL, payload text NOT NULL)")
        conn.execute("CREATE TABLE staging_sf (LIKE events_sf)")
        conn.execute("CREATE TABLE staging_xid (LIKE events_xid)")

    dev = {
        "edge-a": Device("edge-a", tmp_path, faketime="+3d"),
        "edge-b": Device("edge-b", tmp_path),
        "edge-c": Device("edge-c", tmp_path, faketime="@2000-01-01 00:00:00"),
        RUST_DEVICE: Device(RUST_DEVICE, tmp_path, rust_exe=rust_device),
    }

    # 1. Online, on the real clock: every device enrols (10-day grants of pool 'edge').
    enrol = {n: d.start("enrol", "--dsn", db_dsn, "--lease-days", LEASE_DAYS, fake=False) for n, d in dev.items()}
    grants = {}
    for name, proc in enrol.items():
        lines = finish_ok(proc)
        for line in lines:
            if line.startswith("enrolled "):
                _, kind, grant_id, slot = line.split()
                grants[name, kind] = (int(grant_id), int(slot))
    assert sorted(grants) == sorted((n, k) for n in DEVICES for k in ("snowflake", "xid12"))
    assert all(768 <= grants[n, "snowflake"][1] < 1024 for n in DEVICES)  # the 'edge' pool's
    assert all(12_582_912 <= grants[n, "xid12"][1] < 16_777_216 for n in DEVICES)

    # 2. Offline: every device makes its rows at once (edge-a three days ahead, edge-c in 2000,
    #    edge-b stalls in the middle of a batch), while the centre makes its own.
    gen = {
        "edge-a": dev["edge-a"].start("generate", "--rows", ROWS, "--batch", BATCH),
        "edge-b": dev["edge-b"].start("generate", "--rows", ROWS, "--batch", BATCH,
                                      "--stall-after", STALL_AFTER),
        "edge-c": dev["edge-c"].start("generate", "--rows", ROWS, "--batch", BATCH),
        RUST_DEVICE: dev[RUST_DEVICE].start("generate", "--rows", ROWS, "--batch", BATCH),
    }
    central_rounds = 0
    with connect(dbname=dbname) as conn:
        def central_round():
            nonlocal central_rounds
            lo = central_rounds * 50
            for table, kind in (("events_sf", "sf"), ("events_xid", "xid")):
                conn.execute(f"INSERT INTO {table} (origin, payload) SELECT 'central', 'central {kind} ' || g "
                             f"FROM generate_series(%s::int, %s::int) g", [lo, lo + 49])
            central_rounds += 1
            return True

        # edge-b: once it has stalled with half a batch inserted and uncommitted, kill -9.
        b = gen["edge-b"]
        poll("edge-b to stall in the middle of a batch",
             lambda: central_round() and ("stalled" in output(b) or b.poll() is not None))
        assert b.poll() is None, f"edge-b ended instead of stalling:\n{output(b)}"
        b.send_signal(signal.SIGKILL)
        code, b_lines = finish(b)
        assert code == -signal.SIGKILL
        uncommitted = [line.split() for line in b_lines if line.startswith("uncommitted ")]
        assert len(uncommitted) == BATCH // 2
        b_committed = committed(b_lines)
        assert b_committed == list(range(STALL_AFTER * BATCH))

        # What the killed device left: exactly its committed rows, its marks at the last of them.
        sf, xid, marks = read_rows(dev["edge-b"].db)
        assert len(sf) == len(xid) == STALL_AFTER * BATCH
        assert sorted(int(p.split()[2]) for _, _, p in sf) == b_committed
        assert marks["snowflake"] == max(i for i, _, _ in sf)
        assert marks["xid12"] == str(Xid.from_bytes(max(i for i, _, _ in xid)))
        lost = {int(u[2]) for u in uncommitted} & {i for i, _, _ in sf}
        assert not lost, f"rows of the killed batch were kept: {lost}"
        assert not {u[3] for u in uncommitted} & {str(Xid.from_bytes(i)) for i, _, _ in xid}
        b_before = (sf, xid, marks)

        # Restarted: it goes on from its committed rows to the end.
        gen["edge-b"] = dev["edge-b"].start("generate", "--rows", ROWS, "--batch", BATCH)

        # edge-c refuses: its clock reads 2000, before its window.
        code, c_lines = finish(gen["edge-c"])
        assert code == 3, f"edge-c exited with {code}:\n" + "\n".join(c_lines)
        assert len(c_lines) == 1 and c_lines[0].startswith("refused EdgeClockBeforeWindow "), c_lines
        assert "the device clock reads 2000-01-01" in c_lines[0] and "no id is made" in c_lines[0], c_lines

        # The centre goes on while the others finish.
        poll("edge-a, edge-b and edge-d to finish",
             lambda: central_round() and all(gen[n].poll() is not None for n in MERGED))
        central_round()
    results = {n: finish(gen[n]) for n in MERGED}
    for name, (code, lines) in results.items():
        assert code == 0, f"{name} exited with {code}:\n" + "\n".join(lines)
    assert committed(results["edge-a"][1]) == list(range(ROWS))
    assert committed(results["edge-d"][1]) == list(range(ROWS))
    assert committed(results["edge-b"][1]) == list(range(STALL_AFTER * BATCH, ROWS))

    # Each device's file: its rows, each row number once, every id distinct.
    edge_rows = {}
    for name in DEVICES:
        sf, xid, marks = read_rows(dev[name].db)
        edge_rows[name] = (sf, xid)
        if name == "edge-c":
            assert (sf, xid, marks) == ([], [], {"snowflake": None, "xid12": None})
            continue
        for rows, kind in ((sf, "sf"), (xid, "xid")):
            assert sorted(int(p.split()[2]) for _, _, p in rows) == list(range(ROWS)), name
            assert all(o == name and p.startswith(f"{name} {kind} ") for _, o, p in rows)
        assert marks["snowflake"] == max(i for i, _, _ in sf)
        assert marks["xid12"] == str(Xid.from_bytes(max(i for i, _, _ in xid)))
    # edge-b kept every row it had committed before the kill, unchanged, and went on above its mark.
    sf, xid = edge_rows["edge-b"]
    assert set(b_before[0]) <= set(sf) and set(b_before[1]) <= set(xid)
    assert all(i > b_before[2]["snowflake"] for i, _, _ in set(sf) - set(b_before[0]))
    assert all(str(Xid.from_bytes(i)) > b_before[2]["xid12"] for i, _, _ in set(xid) - set(b_before[1]))

    # 3. Back online: every device reports and releases its grants (edge-a still three days ahead).
    sync = {n: d.start("sync", "--dsn", db_dsn) for n, d in dev.items()}
    for name, proc in sync.items():
        lines = finish_ok(proc)
        assert sorted(lines) == sorted(f"released {k} {grants[name, k][0]}" for k in ("snowflake", "xid12"))

    with connect(dbname=dbname) as conn:
        # The registry's view: one report per grant, from its device; edge-c's grants released
        # with an empty window (no id-time used), the others' ending just after their last id.
        for (name, kind), (grant_id, slot) in grants.items():
            writer, g_kind, g_slot, lo, hi, released = conn.execute(
                "SELECT writer, kind, slot, lo, hi, released_at FROM idgen_grants WHERE grant_id = %s",
                [grant_id]).fetchone()
            assert (writer, g_kind, g_slot) == (name, kind, slot) and released is not None
            device, syncs, last_time = conn.execute(
                "SELECT device, syncs, last_id_time FROM idgen_registry_report WHERE grant_id = %s",
                [grant_id]).fetchone()
            assert (device, syncs) == (name, 1)
            if name == "edge-c":
                assert hi == lo and last_time is None
            else:
                assert lo <= last_time < hi

        # edge-a's ids were made three days ahead of the server's clock (a day of margin).
        now = conn.execute("SELECT now()").fetchone()[0]
        a_times = [pg_idgen.snowflake_time(i, conn.execute(
            "SELECT epoch_ms FROM idgen_grants WHERE grant_id = %s", [grants["edge-a", "snowflake"][0]]).fetchone()[0])
            for i, _, _ in edge_rows["edge-a"][0]]
        assert all(dt.timedelta(days=2) < t - now < dt.timedelta(days=4) for t in a_times), (min(a_times), now)
        assert all(abs(Xid.from_bytes(i).time - now) < dt.timedelta(days=1) for i, _, _ in edge_rows["edge-d"][1])

        # 4. The devices' rows, by binary COPY through the psycopg adapter, into staging.
        pg_idgen.psycopg.register(conn)
        with conn.transaction(), conn.cursor() as cur:
            for name in DEVICES:
                sf, xid = edge_rows[name]
                with cur.copy("COPY staging_sf (id, origin, payload) FROM STDIN (FORMAT binary)") as copy:
                    copy.set_types(["int8", "text", "text"])
                    for row in sf:
                        copy.write_row(row)
                with cur.copy("COPY staging_xid (id, origin, payload) FROM STDIN (FORMAT binary)") as copy:
                    copy.set_types(["xid12", "text", "text"])
                    for i, o, p in xid:
                        copy.write_row((Xid.from_bytes(i), o, p))
        for staging in ("staging_sf", "staging_xid"):
            assert conn.execute(f"SELECT count(*) FROM {staging}").fetchone()[0] == len(MERGED) * ROWS
            # Every id is covered by a grant, and idgen_writer_of names its device, once.
            assert conn.execute(f"SELECT * FROM idgen_verify('{staging}', 'id')").fetchall() == []
            assert conn.execute(
                f"SELECT count(*) FROM {staging} s WHERE (SELECT array_agg(w.writer) FROM idgen_writer_of(s.id) w) "
                f"IS DISTINCT FROM ARRAY[s.origin]").fetchone()[0] == 0

        # 5. All of it meets the unique indexes at once: no conflict.
        central = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("events_sf", "events_xid")}
        assert central["events_sf"] == central["events_xid"] == 50 * central_rounds >= 150
        with conn.transaction():
            conn.execute("INSERT INTO events_sf SELECT * FROM staging_sf")
            conn.execute("INSERT INTO events_xid SELECT * FROM staging_xid")
        for table in ("events_sf", "events_xid"):
            total = central[table] + len(MERGED) * ROWS
            assert conn.execute(f"SELECT count(*), count(DISTINCT id) FROM {table}").fetchone() == (total, total)
            counts = dict(conn.execute(f"SELECT origin, count(*) FROM {table} GROUP BY 1").fetchall())
            assert counts == {"central": central[table], **{n: ROWS for n in MERGED}}

        # Byte-identical: each device's rows read back as its SQLite file holds them; the xid12s'
        # bytes and text as the server sees them are the device's bytes and the text its client
        # printed into the payload (the Rust client's for edge-d).
        cur = conn.cursor(binary=True)
        for name in MERGED:
            sf, xid = edge_rows[name]
            assert cur.execute("SELECT id, origin, payload FROM events_sf WHERE origin = %s ORDER BY id",
                               [name]).fetchall() == sf
            assert all(p.split()[3] == str(i) for i, _, p in sf)
            back = cur.execute("SELECT id::bytea, origin, payload, id::text FROM events_xid e WHERE origin = %s ORDER BY e.id",
                               [name]).fetchall()
            assert [(bytes(i), o, p) for i, o, p, _ in back] == xid
            assert all(p.split()[3] == text for _, _, p, text in back)

        # idgen_writer_of names the device of every merged device row, and no device's for the
        # centre's rows; edge-c's name is on no row.
        for table in ("events_sf", "events_xid"):
            named = conn.execute(
                f"SELECT e.origin, w.writer, count(*) FROM {table} e LEFT JOIN LATERAL idgen_writer_of(e.id) w ON true "
                f"GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
            devices = [(o, w, c) for o, w, c in named if o != "central"]
            assert devices == [(n, n, ROWS) for n in MERGED], named
            assert not {w for o, w, _ in named if o == "central"} & set(DEVICES), named
        # The centre's own rows: worker 3, the server's machine id.
        assert conn.execute("SELECT array_agg(DISTINCT snowflake_worker(id)) FROM events_sf WHERE origin = 'central'"
                            ).fetchone()[0] == [3]
        assert conn.execute("SELECT count(DISTINCT xid12_machine(id)) FROM events_xid WHERE origin = 'central'"
                            ).fetchone()[0] == 1
