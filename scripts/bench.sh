#!/usr/bin/env bash
# Benchmarks against built-ins measured in the same run (release build, preloaded cluster).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${PG_IDGEN_BENCH_PORT:-54396}
trap 'stop_cluster bench' EXIT

ensure_deps
ensure_venv
install_extension release
start_cluster bench "$PORT" preload "pg_idgen.worker_id = 1"
PG_IDGEN_HOST=$(socket_dir bench) PG_IDGEN_PORT=$PORT "$ROOT/.venv/bin/python" "$ROOT/bench/bench.py"
