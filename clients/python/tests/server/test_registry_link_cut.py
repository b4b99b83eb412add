"""A writer whose network link is cut past the end of its window (issue 34, "No call waits past
the window"), with real networking: the writer runs in a network namespace joined to this
machine by a veth pair on addresses the test creates (10.231.7.1/30 here, 10.231.7.2/30 in the
namespace; nothing else is ever a target), and talks over TCP to a cluster of the test's own
that also listens on 10.231.7.1. The link goes down (``ip link set ... down`` on this side: the
writer's packets go nowhere, its reads block) for longer than its 3 s lease:

- every call of next_id() returns or raises RegistryUnavailable within the bound (renew_wait,
  1 s, plus a margin for a loaded machine), never blocked for the cut;
- it makes no id outside its windows; another writer takes the slot meanwhile (one Snowflake
  slot is left free, as in test_registry.py) and the union of ids has no duplicate;
- when the link returns, it acquires a new grant and goes on;
- close() with the link down again returns within its bound (timeout, 2 s here, plus margin).

Needs root and iproute2 (scripts/test.sh runs as root): without a namespace it is skipped,
saying why. The cluster's port is scripts/lib.sh's PORTS[link-cut]."""
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

import pg_idgen
from servers import poll
from test_registry import FREE_SLOT, assert_inside_own_windows, leave_one_snowflake_slot

HERE = Path(__file__).resolve().parent
WRITER = HERE / "link_cut_writer.py"
NS, HOST_IF, NS_IF = "pgidgen-lc", "pgidlc0", "pgidlc1"
HOST_IP, NS_IP = "10.231.7.1", "10.231.7.2"
RENEW_WAIT = 1.0  # the Registry's default renew_wait: the bound of a call at the window's end
TIMEOUT = 2.0  # the writer's Registry(timeout=...): the bound of close()
MARGIN = 1.0  # the thread hand-offs, the writer's own pauses, on an idle machine
# On a loaded one each bound also allows twice the writer's measured scheduling delay (its
# "lag" lines): the pass does not depend on the machine's speed (docs/DEVELOPMENT.md).
LAG = [0.0]
LEASE_S = 3
CUT_AFTER_HI_S = 6.0  # the link stays down this long after the writer's window ended


def ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def _as_postgres(cmd, **kw):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd], check=True, capture_output=True, **kw)


def _remove_link():
    ip("link", "del", HOST_IF, check=False)
    ip("netns", "del", NS, check=False)


@pytest.fixture(scope="module")
def link():
    if os.geteuid() != 0:
        pytest.skip("the link-cut test needs root to create a network namespace (scripts/test.sh runs as root)")
    _remove_link()  # a previous run's, if it died
    made = ip("netns", "add", NS, check=False)
    if made.returncode != 0:
        pytest.skip(f"this machine cannot create a network namespace: ip netns add: {made.stderr.strip()}")
    try:
        ip("link", "add", HOST_IF, "type", "veth", "peer", "name", NS_IF)
        ip("link", "set", NS_IF, "netns", NS)
        ip("addr", "add", f"{HOST_IP}/30", "dev", HOST_IF)
        ip("link", "set", HOST_IF, "up")
        ip("netns", "exec", NS, "ip", "addr", "add", f"{NS_IP}/30", "dev", NS_IF)
        ip("netns", "exec", NS, "ip", "link", "set", NS_IF, "up")
        ip("netns", "exec", NS, "ip", "link", "set", "lo", "up")
        yield
    finally:
        _remove_link()


@pytest.fixture(scope="module")
def cluster(link):
    bindir = os.environ["PG_IDGEN_BINDIR"]
    base = Path(os.environ.get("PG_IDGEN_CLUSTERS", "/var/tmp/pg_idgen")) / "link-cut"
    port = int(os.environ.get("PG_IDGEN_LINKCUT_PORT") or int(os.environ["PG_IDGEN_PORT"]) - 8)
    data, sock = base / "data", base / "sock"
    pg_ctl = [f"{bindir}/pg_ctl", "-D", str(data), "-w", "-t", "120"]
    if (data / "postmaster.pid").exists():
        subprocess.run(["runuser", "-u", "postgres", "--", *pg_ctl, "-m", "immediate", "stop"], capture_output=True)
    subprocess.run(["rm", "-rf", str(base)], check=True)
    subprocess.run(["mkdir", "-p", str(sock)], check=True)
    subprocess.run(["chown", "-R", "postgres:postgres", str(base)], check=True)
    _as_postgres([f"{bindir}/initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync",
                  "-E", "UTF8", "--locale=C.UTF-8"])
    _as_postgres(["tee", "-a", str(data / "postgresql.conf")], input=(
        f"listen_addresses = '{HOST_IP}'\nport = {port}\nunix_socket_directories = '{sock}'\n"
        "fsync = off\nshared_preload_libraries = 'pg_idgen'\npg_idgen.worker_id = 5\n").encode())
    # Only the test's /30: the writer's address.
    _as_postgres(["tee", "-a", str(data / "pg_hba.conf")], input=f"host all postgres {NS_IP}/32 trust\n".encode())
    _as_postgres([*pg_ctl, "-l", str(base / "server.log"), "start"])
    try:
        with psycopg.connect(f"host={sock} port={port} user=postgres dbname=postgres", autocommit=True) as c:
            c.execute("CREATE DATABASE linkcut")
        local = f"host={sock} port={port} user=postgres dbname=linkcut"
        with psycopg.connect(local, autocommit=True) as c:
            c.execute("CREATE EXTENSION pg_idgen")
        yield local, f"host={HOST_IP} port={port} user=postgres dbname=linkcut"
    finally:
        subprocess.run(["runuser", "-u", "postgres", "--", *pg_ctl, "-m", "fast", "stop"], capture_output=True)


def read(out):
    """The writer's lines: ids, errors, slow calls, grants, close()'s seconds; and in LAG[0] the
    longest lateness of the writer's beside sleeps so far (its scheduling delay)."""
    ids, errors, slow, grants, closed = [], [], [], [], None
    text = Path(out).read_text() if Path(out).exists() else ""
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "id":
            ids.append(int(rest))
        elif word == "error":
            start, took, what = rest.split(" ", 2)
            errors.append((float(start), float(took), what))
        elif word == "slow":
            start, took = rest.split(" ")
            slow.append((float(start), float(took)))
        elif word == "grant":
            grants.append(tuple(int(x) for x in rest.split()))
        elif word == "closed":
            closed = float(rest)
        elif word == "lag":
            LAG[0] = max(LAG[0], float(rest))
    return ids, errors, slow, grants, closed


def cut():
    ip("link", "set", HOST_IF, "down")
    return time.monotonic()


def mend():
    ip("link", "set", HOST_IF, "up")
    return time.monotonic()


def test_cut_link_raises_within_the_bound_and_resumes(cluster, tmp_path):
    local, remote = cluster
    out, stop = tmp_path / "a.txt", tmp_path / "stop"
    with psycopg.connect(local, autocommit=True) as conn:
        leave_one_snowflake_slot(conn)
        writer = subprocess.Popen(
            ["ip", "netns", "exec", NS, sys.executable, str(WRITER), "--dsn", remote, "--writer", "cut-A",
             "--lease", f"{LEASE_S} seconds", "--out", str(out), "--stop", str(stop), "--timeout", str(TIMEOUT)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            poll("writer A's first ids", lambda: len(read(out)[0]) >= 200 or writer.poll() is not None, timeout=60)
            assert writer.poll() is None, writer.communicate()[0].decode(errors="replace")
            assert read(out)[3][0][1] == FREE_SLOT
            cut_at = cut()
            # The end of every window A holds, on the server's clock; then the link stays down
            # CUT_AFTER_HI_S longer.
            hi = conn.execute("SELECT max(hi) FROM idgen_grants WHERE writer = 'cut-A'").fetchone()[0]
            poll("A's window to end", lambda: conn.execute("SELECT clock_timestamp() > %s", [hi]).fetchone()[0],
                 timeout=60)
            ended_at = time.monotonic()
            # Writer B takes the slot for the id-time after A's window, then releases it.
            with pg_idgen.Registry(local, writer="cut-B") as reg:
                b = poll("B's grant", lambda: _try(lambda: reg.snowflake("1 minute")), timeout=60)
                assert b.slot == FREE_SLOT
                b_ids = [b.next_id() for _ in range(5000)]
                while time.monotonic() < ended_at + CUT_AFTER_HI_S:
                    b_ids += [b.next_id() for _ in range(100)]
                    time.sleep(0.01)
            # While the link was down: A raised within the bound, and no call took longer.
            ids, errors, slow, grants, _ = read(out)
            after_end = [e for e in errors if e[0] + e[1] >= ended_at - 0.5]
            assert after_end, (f"writer A raised nothing in the {time.monotonic() - ended_at:.1f} s since its "
                               f"window ended: next_id() is blocked on the cut link")
            first = after_end[0][0] + after_end[0][1] - ended_at
            longest = max([e[1] for e in errors] + [s[1] for s in slow] + [0.0])
            # A call that has not returned yet counts from its start (the last line A wrote).
            print(f"\nlink cut: first error {first:.2f} s after the window's end, longest call {longest:.2f} s, "
                  f"{len(errors)} errors during a {time.monotonic() - cut_at:.1f} s cut")
            lag = 2 * LAG[0]
            assert longest <= RENEW_WAIT + MARGIN + lag, \
                f"a call took {longest:.2f} s (bound {RENEW_WAIT} s + {MARGIN} s + twice a {LAG[0]:.2f} s delay)"
            assert first <= RENEW_WAIT + MARGIN + 0.5 + lag, f"the first error came {first:.2f} s after the window's end"
            assert all(e[2].startswith("RegistryUnavailable") for e in errors), errors[:3]
            made_in_cut = len(ids)

            # The link returns: A goes on with a new grant (its old one was continued by B).
            up_at = mend()
            poll("A's ids after the link returned",
                 lambda: len(read(out)[3]) > len(grants) and len(read(out)[0]) > made_in_cut + 200, timeout=60)
            ids, errors, slow, grants2, _ = read(out)
            print(f"link back: A made ids with a new grant within {time.monotonic() - up_at:.2f} s "
                  f"(polled), grants {grants2}")
            assert grants2[-1][0] != grants[-1][0]

            # close() with the link down again is bounded.
            cut()
            stop.touch()
            code = writer.wait(timeout=60)
            text = writer.communicate()[0].decode(errors="replace")
            assert code == 0, text
            ids, errors, slow, grants2, closed = read(out)
            print(f"close() with the link down took {closed:.2f} s (bound {TIMEOUT} s + margin; delay {LAG[0]:.2f} s)")
            assert closed is not None and closed <= TIMEOUT + MARGIN + 2 * LAG[0], closed
        finally:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
            mend()
        # No id outside A's windows (nor B's), no duplicate in the union.
        assert_inside_own_windows(conn, "cut-A", "snowflake", [str(i) for i in ids])
        assert_inside_own_windows(conn, "cut-B", "snowflake", [str(i) for i in b_ids])
        union = ids + b_ids
        assert len(set(union)) == len(union), f"{len(union) - len(set(union))} duplicate ids"
        assert ids == sorted(ids) and len(set(ids)) == len(ids)


def _try(fn):
    try:
        return fn()
    except pg_idgen.SlotsExhausted:
        return None
