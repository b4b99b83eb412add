"""Connections to the throwaway clusters that scripts/test.sh starts, for every pytest suite
that talks to them (tests/client, clients/python/tests/server): the suites import these
helpers from here, and their conftest.py files import the fixtures."""
import contextlib
import glob
import os
import time

import psycopg
import pytest

from threads import run_concurrently  # noqa: F401  (the suites import it from here)


def dsn(kind: str = "preloaded", dbname: str = "postgres") -> str:
    prefix = "PG_IDGEN_PLAIN" if kind == "plain" else "PG_IDGEN"
    host = os.environ[f"{prefix}_HOST"]
    port = os.environ[f"{prefix}_PORT"]
    return f"host={host} port={port} user=postgres dbname={dbname}"


def connect(kind: str = "preloaded", dbname: str = "postgres", **kw) -> psycopg.Connection:
    return psycopg.connect(dsn(kind, dbname), autocommit=True, **kw)


def fresh_database(name: str, extension: bool = False) -> str:
    """Drops and creates a database on the preloaded cluster, with the extension if asked."""
    with connect() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    if extension:
        with connect(dbname=name) as conn:
            conn.execute("CREATE EXTENSION pg_idgen")
    return name


@pytest.fixture(scope="session")
def database():
    """A fresh database with the extension, on the preloaded cluster."""
    return fresh_database("client_tests", extension=True)


def server_log(kind: str = "preloaded") -> str:
    """The server log of a cluster scripts/test.sh started (its socket directory's parent)."""
    prefix = "PG_IDGEN_PLAIN" if kind == "plain" else "PG_IDGEN"
    return os.path.join(os.path.dirname(os.environ[f"{prefix}_HOST"]), "server.log")


# How long a reload may take to reach new sessions: the postmaster rereads the files when it
# is next scheduled, well under a second even at a load average of 11 on 2 cores; 60 s is the
# margin for a machine far slower than that.
RELOAD_DEADLINE_S = 60.0


def wait_for_setting(name: str, value, kind: str = "preloaded", connect_to=None,
                     deadline_s: float = RELOAD_DEADLINE_S, log: str | None = None) -> None:
    """Polls SHOW name in new sessions until it reads value: after pg_reload_conf() the
    postmaster applies the files when it runs next, then signals every backend. A session
    that reads the new value was started (or signalled) after that, so every session that runs
    a statement from then on has it too. connect_to: a function returning a new connection
    (default: connect(kind))."""
    connect_to = connect_to or (lambda: connect(kind))
    wanted, seen = str(value), None
    stop = time.monotonic() + deadline_s
    while True:
        with connect_to() as conn:
            seen = conn.execute(f"SHOW {name}").fetchone()[0]
        if seen == wanted or time.monotonic() > stop:
            break
        time.sleep(0.05)
    assert seen == wanted, (
        f"{name} still reads {seen!r} in new sessions {deadline_s:.0f} s after pg_reload_conf(), "
        f"expected {wanted!r} (server log: {log or server_log(kind)})")


@contextlib.contextmanager
def cluster_worker_id(worker_id: int):
    """pg_idgen.worker_id is cluster-wide: set it with ALTER SYSTEM, reset it afterwards; each
    time the change is waited for (wait_for_setting), not slept on."""
    with connect() as conn:
        before = conn.execute("SHOW pg_idgen.worker_id").fetchone()[0]
        conn.execute(f"ALTER SYSTEM SET pg_idgen.worker_id = {int(worker_id)}")
        conn.execute("SELECT pg_reload_conf()")
    wait_for_setting("pg_idgen.worker_id", int(worker_id))
    try:
        yield
    finally:
        with connect() as conn:
            conn.execute("ALTER SYSTEM RESET pg_idgen.worker_id")
            conn.execute("SELECT pg_reload_conf()")
        wait_for_setting("pg_idgen.worker_id", before)


@pytest.fixture
def worker_42():
    with cluster_worker_id(42):
        yield


def poll(what: str, check, timeout: float = 120.0, every: float = 0.05):
    """check() until it returns something true, which is returned; fails the test after
    timeout seconds (generous: the machine may be loaded). For a state change, never a sleep."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def faketime_lib() -> str:
    """Debian's libfaketime, which the test set-up installs (package faketime): preloaded into a
    process, it offsets or sets that process's wall clock."""
    found = glob.glob("/usr/lib/*/faketime/libfaketime.so.1")
    assert found, "libfaketime is missing: the Debian package faketime (scripts/lib.sh TEST_PACKAGES)"
    return found[0]
