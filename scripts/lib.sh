# Shared by scripts/demo.sh, scripts/test.sh and scripts/bench.sh. Source it; do not run it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
PGRX_VERSION=0.18.1
# Throwaway clusters live outside the checkout, which the postgres user may not be able to enter.
CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen}
BINDIR=""

# The extension is installed into the one PostgreSQL of the machine and the clusters share
# $CLUSTERS: one script at a time.
LOCK=/var/tmp/pg_idgen.lock
[ -e "$LOCK" ] || { : >"$LOCK" && chmod 666 "$LOCK"; } 2>/dev/null || true
exec 9<"$LOCK"
flock 9

say() { printf '\n== %s\n' "$*"; }

if [ "$(id -u)" = 0 ]; then
    SUDO=""
    as_postgres() { runuser -u postgres -- "$@"; }
else
    SUDO=sudo
    as_postgres() { sudo -u postgres -- "$@"; }
fi

# Debian packages, cargo-pgrx and pgrx's config, a Python venv for client tests.
ensure_deps() {
    # pkg-config and libssl-dev: cargo-pgrx links OpenSSL.
    local pkgs="postgresql-15 postgresql-server-dev-15 libclang-dev clang sudo python3-venv pkg-config libssl-dev"
    local missing=""
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "installing Debian packages:$missing"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
    fi
    if ! cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION"; then
        say "installing cargo-pgrx $PGRX_VERSION (about 10 minutes, once)"
        cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
    fi
    if ! grep -qs "pg15" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
        cargo pgrx init --pg15 "$PG_CONFIG" >/dev/null
    fi
    BINDIR=$("$PG_CONFIG" --bindir)
}

ensure_venv() {
    if [ ! -x "$ROOT/.venv/bin/pytest" ] || ! "$ROOT/.venv/bin/python" -c 'import psycopg' 2>/dev/null; then
        say "creating the Python venv for client tests"
        python3 -m venv "$ROOT/.venv"
        "$ROOT/.venv/bin/pip" install -q -r "$ROOT/tests/client/requirements.txt"
    fi
}

# Installing copies over the library in place; a running server that has it mapped (the demo
# cluster, say) would then crash. Unlinking first gives the new library a new file.
unlink_installed_library() {
    $SUDO rm -f "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so"
}

# Builds and installs the extension into the local PostgreSQL. $1: "release" or "debug".
install_extension() {
    unlink_installed_library
    local flags=""
    [ "${1:-debug}" = release ] && flags="--release"
    [ -n "$SUDO" ] && flags="$flags --sudo"
    say "building and installing pg_idgen ($1)"
    (cd "$ROOT" && cargo pgrx install --pg-config "$PG_CONFIG" $flags)
}

# start_cluster NAME PORT [preload|plain] [SETTING]: a throwaway cluster in $CLUSTERS/NAME, run
# by the postgres OS user, listening only on its own socket directory, with one extra setting.
start_cluster() {
    local dir=$CLUSTERS/$1 port=$2 preload=${3:-preload} extra=${4:-}
    stop_cluster "$1"
    $SUDO rm -rf "$dir"
    $SUDO mkdir -p "$dir/sock"
    $SUDO chmod 755 "$CLUSTERS"
    $SUDO chown -R postgres:postgres "$dir"
    as_postgres "$BINDIR/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
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

stop_cluster() {
    local dir=$CLUSTERS/$1
    if [ -n "$BINDIR" ] && [ -f "$dir/data/postmaster.pid" ]; then
        as_postgres "$BINDIR/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
}

socket_dir() { echo "$CLUSTERS/$1/sock"; }
