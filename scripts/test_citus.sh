#!/usr/bin/env bash
# The Citus suite: pg_idgen on a Citus cluster of three nodes on this machine (a coordinator
# and two workers, each with its own pg_idgen.machine_id and pg_idgen.worker_id), checked by
# tests/citus (pytest): distributed and reference tables keyed by the three kinds of id, routing,
# pagination and time ranges against a local copy, writes through every node at once,
# rapkey_next across the cluster, the shared-identity guard, idgen_backfill, shard moves.
#
#   bash scripts/test_citus.sh [--installed] [VERSION]     # VERSION 16, 17 or 18 (default)
#   bash scripts/test_citus.sh --bench [VERSION] [ROWS]    # bench/citus.py on a release build instead
#
# --installed: pg_idgen is already installed into that version's PostgreSQL (test.sh passes
# it); without it the script installs a debug build first. Citus comes from scripts/citus.sh
# (built once and cached outside the checkout); with no Citus to be had, the suite says why
# and is skipped (under CI=true it fails: scripts/vendor.sh). The nodes listen on 127.0.0.1, ports PG_IDGEN_CITUS_PORT .. +2
# (default 56000 .. 56002). PG_IDGEN_CITUS_PYTEST adds pytest options (say "-k rapkey -x").
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/citus.sh"

INSTALLED=no
BENCH=no
if [ "${1:-}" = --installed ]; then INSTALLED=yes; shift; fi
if [ "${1:-}" = --bench ]; then BENCH=yes; shift; fi
VERSION=${1:-18}
BENCH_ROWS=${2:-1000000}
BASE_PORT=${PG_IDGEN_CITUS_PORT:-56000}
NODES="citus-coord citus-w1 citus-w2"
# shellcheck disable=SC2154  # c is the trap's loop variable
trap 'for c in $NODES; do stop_cluster $c; done' EXIT

use_postgres "$VERSION"
[ "$PG_MAJOR" -ge 16 ] || die "Citus 14 needs PostgreSQL 16 or later"
if ! ensure_citus; then
    vendor_skip "Citus (scripts/test_citus.sh)" "$CITUS_REASON"
    exit 0
fi
if [ "$BENCH" = yes ]; then
    install_extension release
elif [ "$INSTALLED" = no ]; then
    install_extension debug
fi
ensure_venv

say "PostgreSQL $PG_MAJOR: Citus suite (a coordinator and two workers)"
# One database for the tests, another for the benchmark; made here, used as they are.
if [ "$BENCH" = yes ]; then DB=citus_bench; else DB=citus_tests; fi
# shellcheck disable=SC2086 # the node names are words
start_citus_cluster "$BASE_PORT" "$DB" $NODES

export PG_IDGEN_CITUS_PORTS="$BASE_PORT $((BASE_PORT + 1)) $((BASE_PORT + 2))" PG_IDGEN_CITUS_DB=$DB
if [ "$BENCH" = yes ]; then
    "$ROOT/.venv/bin/python" "$ROOT/bench/citus.py" "$BENCH_ROWS"
    exit
fi
# shellcheck disable=SC2086  # PG_IDGEN_CITUS_PYTEST: pytest's options, split into words
"$ROOT/.venv/bin/pytest" -q -p no:cacheprovider "$ROOT/tests/citus" ${PG_IDGEN_CITUS_PYTEST:-}
