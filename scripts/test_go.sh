#!/usr/bin/env bash
# The Go client (clients/go): gofmt, go vet and the unit tests, which run the shared vectors of
# tests/vectors (no server). Given PG_IDGEN_HOST (a socket directory) and PG_IDGEN_PORT of a
# running cluster with pg_idgen installed and preloaded, also the server tests (TestServer*:
# the registry under 8 goroutines x 2 writers, a renewal cut off, a fenced registry,
# PgBouncer in transaction mode, rs/xid through pgx and lib/pq) and the measurements, printed.
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
echo "clients/go: unit and server tests"
go_env "$GO_BIN" test -count=1 -timeout 20m -v . 2>&1 | grep -E -v '^(=== RUN|=== PAUSE|=== CONT)'
