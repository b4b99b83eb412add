#!/usr/bin/env bash
# Runs every test: the pure unit and property tests once, then for each PostgreSQL version
# the in-database tests (#[pg_test]) and, against throwaway clusters, the SQL regression suites
# and the client-side tests. Exits non-zero on any failure.
#
#   bash scripts/test.sh            # PostgreSQL 14, 15, 16, 17 and 18
#   bash scripts/test.sh 17 18      # only those versions
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSIONS=${*:-$PG_VERSIONS}
PORT=${PG_IDGEN_TEST_PORT:-54398}
PLAIN_PORT=$((PORT - 1))
trap 'stop_cluster test; stop_cluster test-plain' EXIT

ensure_deps
ensure_venv
for v in $VERSIONS; do use_postgres "$v"; done # fetch every build first: fail early

say "unit and property tests (idgen-core)"
(cd "$ROOT" && cargo test -p idgen-core)

run_regress() { # CLUSTER PORT NAME TEST...
    local cluster=$1 port=$2 out=$ROOT/target/regress-$3-pg$PG_MAJOR
    shift 3
    rm -rf "$out"; mkdir -p "$out"
    "$PG_REGRESS" --bindir="$BINDIR" --host="$(socket_dir "$cluster")" --port="$port" --user=postgres \
        --inputdir="$ROOT/tests/regress" --outputdir="$out" --dbname="regress_pg_idgen" "$@" \
        || { head -300 "$out/regression.diffs" 2>/dev/null; return 1; }
}

# The regression tests for the preloaded cluster, in order, with those that need a newer
# server or ICU only where they apply.
preloaded_tests() {
    echo setup xid12_io xid12_index xid12_generate snowflake rapkey encodings
    [ "$PG_MAJOR" -ge 16 ] && echo soft_errors
    [ "$PG_MAJOR" -ge 17 ] && echo on_error
    [ "$HAS_ICU" = yes ] && echo rapkey_icu
    return 0
}

test_version() {
    use_postgres "$1"
    say "PostgreSQL $PG_MAJOR: in-database tests (cargo pgrx test, library preloaded)"
    # It installs a build with the test functions; the plain build is installed right after.
    $SUDO mkdir -p "$CLUSTERS/pgrx-test-$PG_MAJOR"
    $SUDO chown postgres:postgres "$CLUSTERS/pgrx-test-$PG_MAJOR"
    unlink_installed_library
    (cd "$ROOT" && cargo pgrx test "pg$PG_MAJOR" --runas postgres --pgdata "$CLUSTERS/pgrx-test-$PG_MAJOR")

    # The system's PostgreSQL gets the release build, the one its users' servers should load;
    # the private builds get a quicker debug build.
    local profile=debug
    system_postgres && profile=release
    install_extension "${PG_IDGEN_TEST_PROFILE:-$profile}"

    say "PostgreSQL $PG_MAJOR: SQL regression tests (library preloaded)"
    start_cluster test "$PORT" preload
    # shellcheck disable=SC2046
    run_regress test "$PORT" preloaded $(preloaded_tests)

    say "PostgreSQL $PG_MAJOR: SQL regression tests (library not preloaded)"
    start_cluster test-plain "$PLAIN_PORT" plain
    run_regress test-plain "$PLAIN_PORT" plain no_preload

    say "PostgreSQL $PG_MAJOR: client-side tests"
    PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT \
    PG_IDGEN_PLAIN_HOST=$(socket_dir test-plain) PG_IDGEN_PLAIN_PORT=$PLAIN_PORT PG_IDGEN_BINDIR=$BINDIR \
        "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider "$ROOT/tests/client"

    stop_cluster test
    stop_cluster test-plain
}

timings=""
for v in $VERSIONS; do
    started=$SECONDS
    test_version "$v"
    timings="$timings  PostgreSQL $v: $((SECONDS - started)) s"$'\n'
done
say "all tests passed; wall time per version (build included)"
printf '%s' "$timings"
