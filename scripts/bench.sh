#!/usr/bin/env bash
# Benchmarks against built-ins measured in the same run (release build, preloaded cluster).
#   bash scripts/bench.sh        # PostgreSQL 15 (Debian's)
#   bash scripts/bench.sh 18     # any supported version; 18 adds uuidv7() as a contender
#   bash scripts/bench.sh 18 backfill [ROWS ...]   # idgen_backfill against one UPDATE (bench/backfill.py)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${PG_IDGEN_BENCH_PORT:-54396}
trap 'stop_cluster bench' EXIT

ensure_deps
ensure_venv
use_postgres "${1:-15}"
install_extension release
start_cluster bench "$PORT" preload "pg_idgen.worker_id = 1"
SUITE=$ROOT/bench/bench.py
[ "${2:-}" = backfill ] && SUITE=$ROOT/bench/backfill.py
PG_IDGEN_HOST=$(socket_dir bench) PG_IDGEN_PORT=$PORT PG_IDGEN_BINDIR=$BINDIR \
    "$ROOT/.venv/bin/python" "$SUITE" "${@:3}"
