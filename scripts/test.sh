#!/usr/bin/env bash
# Runs every test: pure unit and property tests, then, against throwaway clusters, the SQL
# regression suite and the client-side tests. Exits non-zero on any failure.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PRELOADED=$ROOT/target/test-cluster
PLAIN=$ROOT/target/test-cluster-plain
PORT=${PG_IDGEN_TEST_PORT:-54398}
PLAIN_PORT=$((PORT - 1))

trap 'stop_cluster "$PRELOADED"; stop_cluster "$PLAIN"' EXIT

ensure_deps
ensure_venv
PG_REGRESS=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress

say "unit and property tests (idgen-core)"
(cd "$ROOT" && cargo test -p idgen-core)

install_extension "${PG_IDGEN_TEST_PROFILE:-debug}"

run_regress() { # DIR PORT SCHEDULE
    local out=$ROOT/target/regress-$(basename "$3")
    rm -rf "$out"; mkdir -p "$out"
    "$PG_REGRESS" --host="$1/sock" --port="$2" --user=postgres \
        --inputdir="$ROOT/tests/regress" --outputdir="$out" \
        --schedule="$ROOT/tests/regress/$3" --dbname=regress_$(basename "$3") \
        || { cat "$out/regression.diffs" 2>/dev/null | head -200; return 1; }
}

say "SQL regression tests (library preloaded)"
start_cluster "$PRELOADED" "$PORT" preload
chmod -R a+rX "$ROOT/tests"
run_regress "$PRELOADED" "$PORT" schedule

say "SQL regression tests (library not preloaded)"
start_cluster "$PLAIN" "$PLAIN_PORT" plain
run_regress "$PLAIN" "$PLAIN_PORT" schedule_plain

say "client-side tests"
PG_IDGEN_HOST=$PRELOADED/sock PG_IDGEN_PORT=$PORT \
PG_IDGEN_PLAIN_HOST=$PLAIN/sock PG_IDGEN_PLAIN_PORT=$PLAIN_PORT \
    "$ROOT/.venv/bin/pytest" -q "$ROOT/tests/client"
