"""Connections to the throwaway clusters that scripts/test.sh starts."""
import contextlib
import os
import sys
import time

import psycopg
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from threads import run_concurrently  # noqa: E402,F401  (the suites import it from here)


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


@contextlib.contextmanager
def cluster_worker_id(worker_id: int):
    """pg_idgen.worker_id is cluster-wide: set it with ALTER SYSTEM, reset it afterwards."""
    with connect() as conn:
        conn.execute(f"ALTER SYSTEM SET pg_idgen.worker_id = {int(worker_id)}")
        conn.execute("SELECT pg_reload_conf()")
    time.sleep(0.5)
    try:
        yield
    finally:
        with connect() as conn:
            conn.execute("ALTER SYSTEM RESET pg_idgen.worker_id")
            conn.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)


@pytest.fixture
def worker_42():
    with cluster_worker_id(42):
        yield
