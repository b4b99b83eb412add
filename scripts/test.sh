#!/usr/bin/env bash
# Runs every test: pure unit and property tests, in-database tests (#[pg_test]), then,
# against throwaway clusters, the SQL regression suites and the client-side tests.
# Exits non-zero on any failure.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${PG_IDGEN_TEST_PORT:-54398}
PLAIN_PORT=$((PORT - 1))
trap 'stop_cluster test; stop_cluster test-plain' EXIT

ensure_deps
ensure_venv
PG_REGRESS=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress

say "unit and property tests (idgen-core)"
(cd "$ROOT" && cargo test -p idgen-core)

say "in-database tests (cargo pgrx test, library preloaded)"
# It installs a build with the test functions; the plain build is installed right after.
$SUDO mkdir -p "$CLUSTERS/pgrx-test"
$SUDO chown postgres:postgres "$CLUSTERS/pgrx-test"
unlink_installed_library
(cd "$ROOT" && cargo pgrx test pg15 --runas postgres --pgdata "$CLUSTERS/pgrx-test")

install_extension "${PG_IDGEN_TEST_PROFILE:-debug}"

run_regress() { # CLUSTER PORT SCHEDULE
    local out=$ROOT/target/regress-$3
    rm -rf "$out"; mkdir -p "$out"
    "$PG_REGRESS" --host="$(socket_dir "$1")" --port="$2" --user=postgres \
        --inputdir="$ROOT/tests/regress" --outputdir="$out" \
        --schedule="$ROOT/tests/regress/$3" --dbname="regress_$3" \
        || { head -300 "$out/regression.diffs" 2>/dev/null; return 1; }
}

say "SQL regression tests (library preloaded)"
start_cluster test "$PORT" preload
run_regress test "$PORT" schedule

say "SQL regression tests (library not preloaded)"
start_cluster test-plain "$PLAIN_PORT" plain
run_regress test-plain "$PLAIN_PORT" schedule_plain

say "client-side tests"
PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT \
PG_IDGEN_PLAIN_HOST=$(socket_dir test-plain) PG_IDGEN_PLAIN_PORT=$PLAIN_PORT \
    "$ROOT/.venv/bin/pytest" -q "$ROOT/tests/client"
