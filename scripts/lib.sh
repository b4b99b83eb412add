# Shared by scripts/demo.sh, scripts/test.sh and scripts/bench.sh. Source it; do not run it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
PGRX_VERSION=0.18.1

say() { printf '\n== %s\n' "$*"; }

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Debian packages, cargo-pgrx and pgrx's config, a Python venv for client tests.
ensure_deps() {
    local pkgs="postgresql-15 postgresql-server-dev-15 libclang-dev clang sudo python3-venv"
    local missing=""
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "installing Debian packages:$missing"
        local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
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

# Builds and installs the extension into the local PostgreSQL. $1: "release" or "debug".
install_extension() {
    local flags=""
    [ "${1:-debug}" = release ] && flags="--release"
    say "building and installing pg_idgen ($1)"
    (cd "$ROOT" && cargo pgrx install --pg-config "$PG_CONFIG" $flags)
}

# start_cluster DIR PORT [preload]: a throwaway cluster owned by the postgres OS user,
# listening only on its own socket directory DIR/sock.
start_cluster() {
    local dir=$1 port=$2 preload=${3:-preload}
    stop_cluster "$dir"
    rm -rf "$dir"
    mkdir -p "$dir/sock"
    chown -R postgres:postgres "$dir" 2>/dev/null || true
    as_postgres "$BINDIR/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
    {
        echo "listen_addresses = ''"
        echo "port = $port"
        echo "unix_socket_directories = '$dir/sock'"
        echo "fsync = off"
        echo "max_connections = 60"
        [ "$preload" = preload ] && echo "shared_preload_libraries = 'pg_idgen'"
    } >> "$dir/data/postgresql.conf"
    as_postgres "$BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}

stop_cluster() {
    local dir=$1
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_postgres "$BINDIR/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
}
