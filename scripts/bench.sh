#!/usr/bin/env bash
# Benchmarks against the contenders a user would pick instead, measured in the same run
# (release build, throwaway preloaded cluster, jit off, no parallel workers). See BENCHMARKS.md.
#   bash scripts/bench.sh 18                 # the full suite (under 20 minutes on 2 cores):
#                                            # prints one table, writes BENCHMARKS.md and docs/benchmarks.png
#   bash scripts/bench.sh 18 --quick         # smoke-test scale (about 2 minutes, no timing assertions);
#                                            # writes into $TMPDIR/pg_idgen-bench-quick unless --out DIR
#   bash scripts/bench.sh 18 backfill [ROWS ...] [--tables indexed,no-index,partitioned]
#                                            # idgen_backfill against one UPDATE (bench/backfill.py)
#   bash scripts/bench.sh 18 clients [--quick]     # the Python client's loaders and generators (bench/clients.py)
#   bash scripts/bench.sh 18 registry [--quick]    # the writer registry: round trips, concurrency, size, and the
#                                            # app pool's renewals at 768 writers (--renewals: only those)
#   bash scripts/bench.sh 18 registry-client       # grant-bound Python generators against plain ones (bench/registry_client.py)
# VERSION is any supported major version (14 16 17 18; 15 is the system's); 18 adds uuidv7().
# Optional contenders that are not part of this project: pg_uuidv7 is measured when it is
# installed in that PostgreSQL; PG_IDGEN_BENCH_SQL="FILE ..." loads SQL files (e.g. modfin/pg-xid's
# xid.sql) into the benchmark database first.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${PORTS[bench]}
trap 'stop_cluster bench' EXIT

ensure_deps --for-tests
ensure_venv
# matplotlib draws the chart; through the venv's own interpreter (its pip script may carry
# another checkout's path).
"$ROOT/.venv/bin/python" -c 'import matplotlib' 2>/dev/null ||
    "$ROOT/.venv/bin/python" -m pip install -q -r "$ROOT/bench/requirements.txt"
use_postgres "${1:-15}"
install_extension release
start_cluster bench "$PORT" preload "pg_idgen.worker_id = 1
jit = off
max_parallel_workers_per_gather = 0
max_parallel_maintenance_workers = 0
shared_buffers = 1GB
max_wal_size = 16GB
checkpoint_timeout = 1h
work_mem = 1GB
maintenance_work_mem = 1GB"
for f in ${PG_IDGEN_BENCH_SQL:-}; do psql_at bench "$PORT" postgres -f "$f" >/dev/null; done
SUITE=$ROOT/bench/bench.py
ARGS=("${@:2}")
if [ "${2:-}" = backfill ]; then
    SUITE=$ROOT/bench/backfill.py
    ARGS=("${@:3}")
elif [ "${2:-}" = clients ]; then
    SUITE=$ROOT/bench/clients.py
    ARGS=("${@:3}")
elif [ "${2:-}" = registry ]; then
    SUITE=$ROOT/bench/registry.py
    ARGS=("${@:3}")
elif [ "${2:-}" = registry-client ]; then
    SUITE=$ROOT/bench/registry_client.py
    ARGS=("${@:3}")
else
    ARGS+=(--command "bash scripts/bench.sh $*")
fi
PG_IDGEN_HOST=$(socket_dir bench) PG_IDGEN_PORT=$PORT PG_IDGEN_BINDIR=$BINDIR \
    "$ROOT/.venv/bin/python" "$SUITE" "${ARGS[@]}"
