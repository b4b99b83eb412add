# shellcheck shell=bash disable=SC2034  # sourced: CITUS_REASON is its caller's
# Finding or building Citus for the Citus suite (scripts/test_citus.sh). Source it after
# scripts/lib.sh and use_postgres; do not run it.
#
# ensure_citus sets CITUS_REASON and returns 1 when there is no Citus to test with; otherwise
# the selected PostgreSQL has citus.so and citus.control. In order it uses:
#   1. a Citus the PostgreSQL already has;
#   2. a source tarball from scripts/vendor.sh: PG_IDGEN_CITUS_SRC (a `git archive` of a release
#      tag), $ROOT/../shared/vendor/citus-*.tar.gz (beside the checkout: CI runs from a clean
#      clone with shared/ next to it), or the release tarball scripts/vendor_sources pins,
#      downloaded once.
# A tarball is built once per (tarball sha256, PostgreSQL version) into a cache outside the
# checkout, PG_IDGEN_CITUS_CACHE (default /var/cache/pg_idgen), and copied from there into the
# PostgreSQL tree on every run, which takes a second. Only the private PostgreSQL builds
# (target/postgresql) get a Citus copied into them; the system's PostgreSQL must already have it.

CITUS_CACHE=${PG_IDGEN_CITUS_CACHE:-/var/cache/pg_idgen}
CITUS_REASON=""
# shellcheck source=scripts/vendor.sh
source "$ROOT/scripts/vendor.sh"

citus_installed() {
    [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] &&
        [ -f "$("$PG_CONFIG" --sharedir)/extension/citus.control" ]
}

ensure_citus() {
    if citus_installed; then
        return 0
    fi
    local tarball sha prefix key cache
    if ! vendor_source citus PG_IDGEN_CITUS_SRC; then
        CITUS_REASON="PostgreSQL $PG_MAJOR has no Citus, and $VENDOR_REASON"
        return 1
    fi
    tarball=$VENDOR_TARBALL
    if system_postgres; then
        CITUS_REASON="the system's PostgreSQL $PG_MAJOR has no Citus, and the suite installs one only into the private builds"
        return 1
    fi
    prefix=$(dirname "$("$PG_CONFIG" --bindir)")
    sha=$(sha256sum "$tarball" | cut -d' ' -f1)
    key=citus-${sha:0:16}-pg$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9.]+).*/\1/')
    cache=$CITUS_CACHE/$key
    if [ ! -f "$cache/.complete" ]; then
        build_citus "$tarball" "$prefix" "$cache" || { CITUS_REASON="building $tarball failed (log above)"; return 1; }
    fi
    say "installing Citus from the cache $cache"
    copy_citus "$cache/tree" "$prefix"
    citus_installed || { CITUS_REASON="the cached Citus $cache did not install"; return 1; }
}

# build_citus TARBALL PREFIX CACHE: configure, make, and `make install DESTDIR=…`; the
# installed files are kept in CACHE/tree relative to PREFIX.
build_citus() {
    local tarball=$1 prefix=$2 cache=$3 work
    say "building Citus from $tarball for PostgreSQL $PG_MAJOR (once; 5 to 11 minutes on 2 cores)"
    ensure_packages libzstd-dev liblz4-dev libkrb5-dev # the PostgreSQL headers include them
    $SUDO mkdir -p "$CITUS_CACHE"
    $SUDO chown "$(id -u)" "$CITUS_CACHE"
    work=$(mktemp -d "$CITUS_CACHE/build.XXXXXX")
    tar -xzf "$tarball" -C "$work" --no-same-owner
    local src
    src=$(find "$work" -mindepth 2 -maxdepth 2 -name configure -printf '%h\n' | head -1)
    [ -n "$src" ] || { echo "no configure in $tarball" >&2; return 1; }
    (
        cd "$src"
        ./configure PG_CONFIG="$PG_CONFIG" --without-libcurl >"$work/configure.log" 2>&1 ||
            { tail -30 "$work/configure.log"; exit 1; }
        make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log"; exit 1; }
        make install DESTDIR="$work/stage" >"$work/install.log" 2>&1 || { tail -30 "$work/install.log"; exit 1; }
    ) || return 1
    rm -rf "$cache.tmp"
    mkdir -p "$cache.tmp"
    mv "$work/stage$prefix" "$cache.tmp/tree"
    echo "$tarball" >"$cache.tmp/source"
    : >"$cache.tmp/.complete"
    rm -rf "$cache" "$work"
    mv "$cache.tmp" "$cache"
}

# copy_citus FROM PREFIX: every file of FROM into PREFIX, each written beside its target and
# renamed over it (a running server may have the old library mapped).
copy_citus() {
    local from=$1 prefix=$2 f
    (cd "$from" && find . -type f) | while read -r f; do
        mkdir -p "$(dirname "$prefix/$f")"
        cp "$from/$f" "$prefix/$f.citus-tmp"
        chmod a+r "$prefix/$f.citus-tmp"
        mv "$prefix/$f.citus-tmp" "$prefix/$f"
    done
}

# start_citus_cluster BASE_PORT DB NODE...: a Citus cluster of throwaway clusters (lib.sh's
# start_cluster) named NODE..., listening on 127.0.0.1 ports BASE_PORT, BASE_PORT + 1, ...: the
# first node is the coordinator, the others its workers, and node n has pg_idgen.machine_id and
# pg_idgen.worker_id n. Every node gets the database DB with Citus in it; the coordinator adds
# the workers and creates pg_idgen, which Citus propagates to them. The Citus suite
# (tests/citus) and bench/citus.py use this cluster as it is.
start_citus_cluster() {
    local base_port=$1 db=$2 coordinator=$3 node port n=0
    shift 2
    for node in "$@"; do
        port=$((base_port + n))
        n=$((n + 1))
        # Citus first in shared_preload_libraries, as it requires. Logical WAL for shard moves.
        start_cluster "$node" "$port" plain "listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus,pg_idgen'
max_connections = 120
wal_level = logical
citus.shard_count = 8
pg_idgen.machine_id = $n
pg_idgen.worker_id = $n"
        psql_at "$node" "$port" postgres -c "CREATE DATABASE $db"
        psql_at "$node" "$port" "$db" -c "CREATE EXTENSION citus"
    done
    {
        echo "SELECT citus_set_coordinator_host('127.0.0.1', $base_port);"
        for ((port = base_port + 1; port < base_port + n; port++)); do
            echo "SELECT citus_add_node('127.0.0.1', $port);"
        done
        echo "CREATE EXTENSION pg_idgen;"
    } | psql_at "$coordinator" "$base_port" "$db" >/dev/null
}
