#!/usr/bin/env bash
# Benchmarks against built-ins measured in the same run (release build, preloaded cluster).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DIR=$ROOT/target/bench-cluster
PORT=${PG_IDGEN_BENCH_PORT:-54396}
trap 'stop_cluster "$DIR"' EXIT

ensure_deps
ensure_venv
install_extension release
start_cluster "$DIR" "$PORT" preload
PG_IDGEN_HOST=$DIR/sock PG_IDGEN_PORT=$PORT "$ROOT/.venv/bin/python" "$ROOT/bench/bench.py"
