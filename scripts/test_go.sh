#!/usr/bin/env bash
# The Go client (clients/go): gofmt, go vet and the unit tests, which run the shared vectors of
# tests/vectors (no server). Given PG_IDGEN_HOST (a socket directory) and PG_IDGEN_PORT of a
# running cluster with pg_idgen installed and preloaded, also the server tests (TestServer*:
# the registry under 8 goroutines x 2 writers, a renewal cut off, a fenced registry,
# PgBouncer in transaction mode, rs/xid through pgx and lib/pq) and the measurements, printed.
# With them, as root, also the link cut (TestServerLinkCut, issue 46): this script makes a
# network namespace joined by a veth pair, on addresses of its own (link_cut_setup below), and a
# cluster of the test's own (PORTS[go-link-cut], the test cluster's PostgreSQL) listening also on
# this side's veth address, and removes them all when it ends, failed or not.
# Everything builds offline from Debian's packages (scripts/go_deps.sh), in GOPATH mode.
#
#   bash scripts/test_go.sh                                          # no server
#   PG_IDGEN_HOST=/var/tmp/pg_idgen/test/sock PG_IDGEN_PORT=54398 bash scripts/test_go.sh
set -euo pipefail
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1} # no cluster of the lock's own: the caller's, if any
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/go_deps.sh"

ensure_go_deps
cd "$GO_GOPATH/src/github.com/pg-idgen/pg_idgen/clients/go"
export PG_IDGEN_VECTORS=$ROOT/tests/vectors
echo "clients/go: gofmt, go vet ($(go_env "$GO_BIN" version | cut -d' ' -f3))"
unformatted=$(go_env "$GO_ROOT/bin/gofmt" -l .)
[ -z "$unformatted" ] || die "gofmt would change: $unformatted"
go_env "$GO_BIN" vet . ./cmd/interop
if [ -z "${PG_IDGEN_HOST:-}" ] || [ -z "${PG_IDGEN_PORT:-}" ]; then
    echo "clients/go: unit tests (PG_IDGEN_HOST/PG_IDGEN_PORT not set: no server tests)"
    unset PG_IDGEN_HOST PG_IDGEN_PORT
    go_env "$GO_BIN" test -count=1 .
    exit 0
fi

# The link cut's network: names and a /30 derived from the cluster's port, so that runs beside
# each other (other ports) do not meet; the Python test's (10.231.7.0/30) is another.
LC_PORT=${PORTS[go-link-cut]}
LC_NS=pgidgen-go-$LC_PORT
LC_HOST_IF=pgo${LC_PORT}h
LC_NS_IF=pgo${LC_PORT}n
LC_NET=10.231.46.$((LC_PORT % 64 * 4))
LC_HOST_IP=${LC_NET%.*}.$((${LC_NET##*.} + 1))
LC_NS_IP=${LC_NET%.*}.$((${LC_NET##*.} + 2))
LC_MADE=no

link_cut_cleanup() {
    [ "$LC_MADE" = yes ] || return 0
    stop_cluster go-link-cut
    # A writer the test left in the namespace (a test killed by its timeout): its process ids.
    ip netns pids "$LC_NS" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip link del "$LC_HOST_IF" 2>/dev/null || true
    ip netns del "$LC_NS" 2>/dev/null || true
}

# link_cut_setup: the namespace, the veth pair and the cluster; or PG_IDGEN_LINKCUT_SKIP saying
# in one line why not.
link_cut_setup() {
    local made bindir
    bindir=${PG_IDGEN_BINDIR:-$(cat "$(dirname "$PG_IDGEN_HOST")/bindir" 2>/dev/null || true)}
    if [ "$(id -u)" != 0 ]; then
        export PG_IDGEN_LINKCUT_SKIP="the link-cut test needs root to create a network namespace (scripts/test.sh runs as root)"
        return
    fi
    if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
        export PG_IDGEN_LINKCUT_SKIP="the link-cut test needs the test cluster's PostgreSQL: set PG_IDGEN_BINDIR"
        return
    fi
    LC_MADE=yes
    trap link_cut_cleanup EXIT
    ip link del "$LC_HOST_IF" 2>/dev/null || true # a previous run's, if it died
    ip netns del "$LC_NS" 2>/dev/null || true
    if ! made=$(ip netns add "$LC_NS" 2>&1); then
        export PG_IDGEN_LINKCUT_SKIP="this machine cannot create a network namespace: ip netns add: $made"
        return
    fi
    ip link add "$LC_HOST_IF" type veth peer name "$LC_NS_IF"
    ip link set "$LC_NS_IF" netns "$LC_NS"
    ip addr add "$LC_HOST_IP/30" dev "$LC_HOST_IF"
    ip link set "$LC_HOST_IF" up
    ip netns exec "$LC_NS" ip addr add "$LC_NS_IP/30" dev "$LC_NS_IF"
    ip netns exec "$LC_NS" ip link set "$LC_NS_IF" up
    ip netns exec "$LC_NS" ip link set lo up
    BINDIR=$bindir # start_cluster's PostgreSQL
    start_cluster go-link-cut "$LC_PORT" preload "pg_idgen.worker_id = 5"
    stop_cluster go-link-cut
    # Also on this side's veth address, and only the namespace's address admitted there.
    as_postgres tee -a "$CLUSTERS/go-link-cut/data/postgresql.conf" >/dev/null <<<"listen_addresses = '$LC_HOST_IP'"
    as_postgres tee -a "$CLUSTERS/go-link-cut/data/pg_hba.conf" >/dev/null <<<"host all postgres $LC_NS_IP/32 trust"
    restart_cluster go-link-cut
    PG_IDGEN_LINKCUT_SOCK=$(socket_dir go-link-cut)
    export PG_IDGEN_LINKCUT_NS=$LC_NS PG_IDGEN_LINKCUT_IF=$LC_HOST_IF PG_IDGEN_LINKCUT_ADDR=$LC_HOST_IP \
        PG_IDGEN_LINKCUT_SOCK PG_IDGEN_LINKCUT_PORT=$LC_PORT
    echo "clients/go: the link cut's namespace $LC_NS ($LC_NS_IP) over $LC_HOST_IF ($LC_HOST_IP), cluster on port $LC_PORT"
}
link_cut_setup

echo "clients/go: unit and server tests"
go_env "$GO_BIN" test -count=1 -timeout 20m -v . 2>&1 | grep -E -v '^(=== RUN|=== PAUSE|=== CONT)'
