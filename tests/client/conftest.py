"""pytest set-up of the extension's client-side tests: the helpers are in tests/servers.py.

The scale of the bulk tests, in one place. scripts/test.sh runs every test of this directory on
every PostgreSQL version: at the full scale on the version that also runs the clients' own suites
(18), at the reduced one on the others (PG_IDGEN_CLIENT_SCALE=reduced). The same tests and
assertions; fewer rows, values and round trips. What the full scale adds is more calls of the
same code: the extension's own, built from one source for every version, and the server's
paths that the reduced scale reaches too. What a major version can change (the catalog, the
planner's choices, locks and cancels, COPY and the binary protocol, encodings, restarts and
crashes, dumps and upgrades) the reduced scale still meets on each version. A variable the
caller sets wins over both.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from servers import database, server_log, worker_42  # noqa: E402,F401  (fixtures)

# Full scale in brackets.
REDUCED = {
    # test_backfill.py, the live backfill: 200,000 rows, 40 batches, while a writer writes
    # (1,000,000: the scale).
    "PG_IDGEN_BACKFILL_ROWS": "200000",
    # test_hostile_input.py: a quarter of the values, 32,500 calls (130,000; seen on 16), the
    # SQL_ASCII database's 33,000 (38,000); every function and cast gets every kind of value.
    "PG_IDGEN_HOSTILE_SCALE": "0.25",
    # test_rapkey.py: 8 connections x 2,500 transactions on one prefix (x 10,000).
    "PG_IDGEN_RAPKEY_PER_CONNECTION": "2500",
    # test_xid12.py: 8 connections x 50,000 ids at once (x 200,000).
    "PG_IDGEN_XID12_PER_CONNECTION": "50000",
}
SCALE = os.environ.get("PG_IDGEN_CLIENT_SCALE", "full")
if SCALE not in ("full", "reduced"):
    raise SystemExit(f"PG_IDGEN_CLIENT_SCALE={SCALE!r}: full or reduced")
if SCALE == "reduced":
    for name, value in REDUCED.items():
        os.environ.setdefault(name, value)


def pytest_report_header(config):
    return [f"tests/client scale: {SCALE} (" + ", ".join(
        f"{name}={os.environ[name]}" for name in REDUCED if name in os.environ) + ")"]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """A failed run ends by saying where the servers' logs are."""
    if exitstatus and os.environ.get("PG_IDGEN_HOST"):
        restart = os.path.join(os.environ.get("PG_IDGEN_CLUSTERS", "/var/tmp/pg_idgen"), "snowflake-restart")
        terminalreporter.write_line(
            f"server logs: {server_log()} (preloaded), {server_log('plain')} (not preloaded), "
            f"{restart}/server.log (test_snowflake_restart.py's own cluster)")
