"""The three-node Citus cluster that scripts/test_citus.sh starts: node 1 is the coordinator,
nodes 2 and 3 the workers; node n has pg_idgen.machine_id = n and pg_idgen.worker_id = n."""
import os
import sys

import psycopg
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from threads import run_concurrently  # noqa: E402,F401  (the suites import it from here)

PORTS = [int(p) for p in os.environ["PG_IDGEN_CITUS_PORTS"].split()]
# Where scripts/test_citus.sh keeps the nodes (and their server.log), in node order.
CLUSTERS = os.environ.get("PG_IDGEN_CLUSTERS", "/var/tmp/pg_idgen")
NODE_NAMES = ["citus-coord", "citus-w1", "citus-w2"]
DB = "citus_tests"
HOST = "127.0.0.1"


def connect(node: int = 1, dbname: str = DB, **kw) -> psycopg.Connection:
    """A connection to node 1, 2 or 3 (autocommit unless told otherwise)."""
    kw.setdefault("autocommit", True)
    return psycopg.connect(host=HOST, port=PORTS[node - 1], user="postgres", dbname=dbname, **kw)


@pytest.fixture(scope="session")
def cluster():
    """A fresh database on every node, Citus in each, the workers added to the coordinator and
    pg_idgen created on the coordinator only: Citus propagates it to the workers."""
    for node in (1, 2, 3):
        with connect(node, "postgres") as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {DB}")
        with connect(node) as conn:
            conn.execute("CREATE EXTENSION citus")
    with connect(1) as coord:
        coord.execute("SELECT citus_set_coordinator_host(%s, %s)", (HOST, PORTS[0]))
        for port in PORTS[1:]:
            coord.execute("SELECT citus_add_node(%s, %s)", (HOST, port))
        coord.execute("CREATE EXTENSION pg_idgen")
    return PORTS


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """A failed run ends by saying where the nodes' logs are."""
    if exitstatus:
        terminalreporter.write_line(
            "server logs: " + ", ".join(f"{CLUSTERS}/{name}/server.log" for name in NODE_NAMES))
