"""pytest set-up of the Python client's tests against a server: scripts/test.sh runs them with
the extension's client-side tests (tests/client), on the same clusters, with the helpers of
tests/servers.py. The tests one level up need no server (the fast tier runs those)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "tests"))
from servers import database, worker_42  # noqa: E402,F401  (fixtures)
