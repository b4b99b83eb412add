"""Snowflake ids across server restarts: a clean shutdown keeps the last id in
$PGDATA/pg_idgen.snowflake, a crash falls back on the lease kept there while running, and a
damaged file is reported without stopping the server.

These tests run their own cluster (pg_ctl from PG_IDGEN_BINDIR, as the postgres OS user),
because they stop and start it, crash it and edit its data directory."""
import os
import struct
import subprocess
import time
import zlib
from pathlib import Path

import psycopg
import pytest

from servers import wait_for_setting

EPOCH_MS = 1288834974657  # the default pg_idgen.snowflake_epoch
MARK = struct.Struct("<8sIIqq")  # magic, version, kind, id, epoch_ms; then a CRC-32
SHUTDOWN, LEASE = 1, 2


def _sudo(cmd):
    return cmd if os.geteuid() == 0 else ["sudo", *cmd]


def _as_postgres(cmd, **kw):
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else ["sudo", "-u", "postgres", "--"]
    return subprocess.run(prefix + cmd, check=True, capture_output=True, **kw)


def snowflake(unix_ms: int, worker: int = 0, sequence: int = 0) -> int:
    return ((unix_ms - EPOCH_MS) << 22) | (worker << 12) | sequence


def encode_mark(kind: int, id_: int, epoch_ms: int = EPOCH_MS) -> bytes:
    body = MARK.pack(b"PGIDSNOW", 1, kind, id_, epoch_ms)
    return body + struct.pack("<I", zlib.crc32(body))


def decode_mark(data: bytes):
    assert len(data) == MARK.size + 4, data
    magic, version, kind, id_, epoch_ms = MARK.unpack(data[: MARK.size])
    assert (magic, version) == (b"PGIDSNOW", 1)
    assert struct.unpack("<I", data[MARK.size:])[0] == zlib.crc32(data[: MARK.size])
    return kind, id_, epoch_ms


# What the postmaster logs once it has ended every backend after one crashed (postmaster.c).
RESTARTING = "all server processes terminated; reinitializing"


class Cluster:
    def __init__(self, base: Path, bindir: str, port: int):
        self.base, self.bindir, self.port = base, bindir, port
        self.data, self.log, self.sock = base / "data", base / "server.log", base / "sock"
        self.mark_file = self.data / "pg_idgen.snowflake"

    def pg_ctl(self, *args):
        # -t: pg_ctl -w gives up after 60 s by default; crash recovery with fsync on, on a
        # loaded machine, is given 300.
        _as_postgres([f"{self.bindir}/pg_ctl", "-D", str(self.data), "-w", "-t", "300", *args])

    def start(self):
        self.pg_ctl("-l", str(self.log), "start")

    def running(self) -> bool:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else ["sudo", "-u", "postgres", "--"]
        status = subprocess.run(prefix + [f"{self.bindir}/pg_ctl", "-D", str(self.data), "status"],
                                capture_output=True)
        return status.returncode == 0

    def stop(self, mode="fast"):
        self.pg_ctl("-m", mode, "stop")

    def connect(self):
        return psycopg.connect(
            f"host={self.sock} port={self.port} user=postgres dbname=postgres", autocommit=True
        )

    def read_mark_bytes(self) -> bytes:
        return _as_postgres(["cat", str(self.mark_file)]).stdout

    def read_mark(self):
        return decode_mark(self.read_mark_bytes())

    def read_mark_if_any(self):
        """The mark, or None without a readable one (checked after the behaviour it explains)."""
        try:
            return self.read_mark()
        except (subprocess.CalledProcessError, AssertionError):
            return None

    def write_mark_bytes(self, data: bytes):
        _as_postgres(["tee", str(self.mark_file)], input=data)

    def log_text(self) -> str:
        return _as_postgres(["cat", str(self.log)]).stdout.decode()


@pytest.fixture(scope="module")
def cluster():
    bindir = os.environ["PG_IDGEN_BINDIR"]
    base = Path(os.environ.get("PG_IDGEN_CLUSTERS", "/var/tmp/pg_idgen")) / "snowflake-restart"
    # Its port is scripts/lib.sh's (PORTS[snowflake-restart]).
    port = os.environ.get("PG_IDGEN_RESTART_PORT") or int(os.environ["PG_IDGEN_PORT"]) - 2
    c = Cluster(base, bindir, int(port))
    if (c.data / "postmaster.pid").exists():
        try:
            c.stop("immediate")
        except subprocess.CalledProcessError:
            pass
    subprocess.run(_sudo(["rm", "-rf", str(base)]), check=True)
    subprocess.run(_sudo(["mkdir", "-p", str(c.sock)]), check=True)
    subprocess.run(_sudo(["chown", "-R", "postgres:postgres", str(base)]), check=True)
    _as_postgres([f"{bindir}/initdb", "-D", str(c.data), "-U", "postgres", "-A", "trust", "--no-sync",
                  "-E", "UTF8", "--locale=C.UTF-8"])
    conf = (
        f"listen_addresses = ''\nport = {c.port}\nunix_socket_directories = '{c.sock}'\n"
        "shared_preload_libraries = 'pg_idgen'\npg_idgen.worker_id = 5\n"
        # The lease is written with fsync, as on a production server.
        "fsync = on\n"
    )
    _as_postgres(["tee", "-a", str(c.data / "postgresql.conf")], input=conf.encode())
    c.start()
    with c.connect() as conn:
        conn.execute("CREATE EXTENSION pg_idgen")
    yield c
    try:
        c.stop("immediate")
    except subprocess.CalledProcessError:
        pass
    subprocess.run(_sudo(["rm", "-rf", str(base)]), check=True)


@pytest.fixture(autouse=True)
def started(cluster):
    """Each test starts with the server up, even after one that failed while it was down."""
    if not cluster.running():
        cluster.start()


def ids(conn, n: int = 1000) -> list[int]:
    return [r[0] for r in conn.execute(
        "SELECT gen_snowflake() FROM generate_series(1, %s)", [n]).fetchall()]


def test_lease_is_on_disk_while_running(cluster):
    with cluster.connect() as conn:
        issued = ids(conn)
        kind, lease, epoch = cluster.read_mark()
    # Written before the first id went out: at or above every id, a little ahead of them.
    assert (kind, epoch) == (LEASE, EPOCH_MS)
    assert lease >= max(issued)
    assert lease >> 22 <= (max(issued) >> 22) + 1000


def test_clean_shutdown_keeps_the_last_id_and_a_clock_behind_it_is_refused(cluster):
    with cluster.connect() as conn:
        last = max(ids(conn))
    cluster.stop()
    written_at_shutdown = cluster.read_mark_if_any()

    # As if the clock had been set back 5 minutes while the server was down: the mark is
    # 5 minutes ahead of the clock. New ids must not go below it, and waiting 5 minutes inside
    # a call is no answer: gen_snowflake() fails, as for any step back beyond the bound.
    far = snowflake(int(time.time() * 1000) + 5 * 60_000, 1023, 4095)
    cluster.write_mark_bytes(encode_mark(SHUTDOWN, far))
    cluster.start()
    with cluster.connect() as conn:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
            conn.execute("SELECT gen_snowflake()")
        assert "behind the last snowflake id issued before the server started" in str(err.value)
        assert "pg_idgen.snowflake" in err.value.diag.message_detail
        assert f"snowflake ids continue above {far}" in cluster.log_text()
        # The refused call left the mark in place: the next start still has it.
        cluster.stop()
    assert cluster.read_mark() == (SHUTDOWN, far, EPOCH_MS)

    # A mark a few seconds ahead, within the bound the session allows: the call waits for
    # the clock, then issues ids above the mark.
    near_ms = int(time.time() * 1000) + 6_000
    near = snowflake(near_ms, 1023, 4095)
    cluster.write_mark_bytes(encode_mark(SHUTDOWN, near))
    cluster.start()
    with cluster.connect() as conn:
        conn.execute("SET pg_idgen.snowflake_max_backward_ms = 60000")
        after = ids(conn, 100)
        assert min(after) > near
        assert after == sorted(after)
        assert conn.execute("SELECT snowflake_time(%s) > to_timestamp(%s / 1000.0)",
                            [min(after), near_ms]).fetchone()[0]
    assert written_at_shutdown == (SHUTDOWN, last, EPOCH_MS)


@pytest.mark.parametrize("damage", ["truncated", "checksum", "garbage"])
def test_damaged_file_is_logged_and_the_server_starts(cluster, damage):
    with cluster.connect() as conn:
        before = max(ids(conn))
    cluster.stop()
    good = encode_mark(SHUTDOWN, before)
    bad = {
        "truncated": good[:20],
        "checksum": good[:20] + bytes([good[20] ^ 1]) + good[21:],
        "garbage": b"not a mark at all".ljust(len(good), b"!"),
    }[damage]
    cluster.write_mark_bytes(bad)
    cluster.start()
    log = cluster.log_text().split("received fast shutdown request")[-1]
    assert "WARNING:  invalid snowflake high-water mark file \"pg_idgen.snowflake\"" in log
    with cluster.connect() as conn:
        # The clock is right, so ids still go up; the first one rewrites a good file.
        after = ids(conn)
        assert min(after) > before
        kind, lease, _ = cluster.read_mark()
        assert kind == LEASE and lease >= max(after)


def _behind_after_restart(conn, ms: int):
    """As if the clock were `ms` behind once the server restarts: a later epoch lowers new ids'
    time by as much (ALTER SYSTEM: it takes effect at the next start or reload)."""
    conn.execute("ALTER SYSTEM SET pg_idgen.snowflake_epoch = %s" % (EPOCH_MS + ms))


def _wait_for_epoch(cluster, epoch_ms: int):
    """Waits until new sessions have pg_idgen.snowflake_epoch = epoch_ms (after a reload)."""
    wait_for_setting("pg_idgen.snowflake_epoch", epoch_ms, connect_to=cluster.connect,
                     log=str(cluster.log))


def _reset_epoch(cluster):
    with cluster.connect() as conn:
        conn.execute("ALTER SYSTEM RESET pg_idgen.snowflake_epoch")
        conn.execute("SELECT pg_reload_conf()")
    _wait_for_epoch(cluster, EPOCH_MS)


def test_immediate_stop_restarts_above_every_id_issued(cluster):
    with cluster.connect() as conn:
        before = ids(conn, 20_000)
        _behind_after_restart(conn, 5_000)
    cluster.stop("immediate")
    on_disk = cluster.read_mark_if_any()
    cluster.start()
    try:
        with cluster.connect() as conn:
            conn.execute("SET pg_idgen.snowflake_max_backward_ms = 60000")
            after = ids(conn, 1000)
            # Without the mark the ids would restart 5 s lower, below those issued before.
            assert min(after) > max(before)
        # Every other process has exited when the postmaster exits, so it writes the exact
        # mark if it can; the lease written while running is there otherwise. Either is high
        # enough.
        kind, mark, _ = on_disk
        assert kind in (SHUTDOWN, LEASE) and max(before) <= mark < min(after)
    finally:
        _reset_epoch(cluster)


def test_crash_restarts_above_the_lease(cluster):
    """A backend killed with SIGKILL: the postmaster reinitializes shared memory without any
    shutdown processing, so only the lease kept on disk while running is left."""
    with cluster.connect() as conn:
        before = ids(conn, 20_000)
        _behind_after_restart(conn, 5_000)
        conn.execute("SELECT pg_reload_conf()")
        # The postmaster has the later epoch before the crash, so the sessions after it have
        # it too (polled, not slept on).
        _wait_for_epoch(cluster, EPOCH_MS + 5_000)
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        restarts = cluster.log_text().count(RESTARTING)
        _as_postgres(["kill", "-KILL", str(pid)])
    # The postmaster reinitializes and runs crash recovery: seconds on an idle machine; 300 s
    # is the deadline, as for pg_ctl -w above. A connection made before the postmaster has ended
    # every backend is closed by that restart: connect once its log says so (an event).
    deadline = time.monotonic() + 300
    while cluster.log_text().count(RESTARTING) <= restarts:
        assert time.monotonic() < deadline, f"no restart in the log within 300 s of the crash; log: {cluster.log}"
        time.sleep(0.1)
    while True:
        try:
            conn = cluster.connect()
            break
        except psycopg.OperationalError as e:
            assert time.monotonic() < deadline, (
                f"the server did not accept a connection within 300 s of the crash ({e}); log: {cluster.log}")
            time.sleep(0.2)
    try:
        with conn:
            on_disk = cluster.read_mark_if_any()
            conn.execute("SET pg_idgen.snowflake_max_backward_ms = 60000")
            after = ids(conn, 1000)
            # Without the lease the ids would restart 5 s lower, below those issued before.
            assert min(after) > max(before)
            log = cluster.log_text().split("terminated by signal 9")[-1]
            assert "a lease: the server did not shut down cleanly" in log
            kind, lease, _ = on_disk
            assert kind == LEASE and max(before) <= lease < min(after)
    finally:
        _reset_epoch(cluster)
