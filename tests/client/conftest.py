"""pytest set-up of the extension's client-side tests: the helpers are in tests/servers.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from servers import database, server_log, worker_42  # noqa: E402,F401  (fixtures)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """A failed run ends by saying where the servers' logs are."""
    if exitstatus and os.environ.get("PG_IDGEN_HOST"):
        restart = os.path.join(os.environ.get("PG_IDGEN_CLUSTERS", "/var/tmp/pg_idgen"), "snowflake-restart")
        terminalreporter.write_line(
            f"server logs: {server_log()} (preloaded), {server_log('plain')} (not preloaded), "
            f"{restart}/server.log (test_snowflake_restart.py's own cluster)")
