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
DB = os.environ["PG_IDGEN_CITUS_DB"]
HOST = "127.0.0.1"


def connect(node: int = 1, dbname: str = DB, **kw) -> psycopg.Connection:
    """A connection to node 1, 2 or 3 (autocommit unless told otherwise)."""
    kw.setdefault("autocommit", True)
    return psycopg.connect(host=HOST, port=PORTS[node - 1], user="postgres", dbname=dbname, **kw)


@pytest.fixture(scope="session")
def cluster():
    """The nodes' ports. scripts/test_citus.sh (start_citus_cluster in scripts/citus.sh) made
    the database DB on every node, with Citus in each, the workers added to the coordinator and
    pg_idgen created on the coordinator only: Citus propagated it to the workers."""
    return PORTS


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """A failed run ends by saying where the nodes' logs are."""
    if exitstatus:
        terminalreporter.write_line(
            "server logs: " + ", ".join(f"{CLUSTERS}/{name}/server.log" for name in NODE_NAMES))
