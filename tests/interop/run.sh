#!/usr/bin/env bash
# Cross-client interop (issue 46): ids made by each client — Python, Rust, TypeScript, Java and
# Go — are read by every client and by the server, which take each id apart the same way
# (xid12: unix second, machine id, pid, counter; Snowflake: unix ms, worker, sequence) and put
# all of them in the same order. tests/interop/README.md says how.
#
#   PG_IDGEN_HOST=SOCKET_DIR PG_IDGEN_PORT=PORT bash tests/interop/run.sh
#
# scripts/test.sh runs it on 18 after the clients' own suites, which build what it runs: the
# .venv, clients/node/dist (scripts/test_node.sh), target/java/classes and test-classes
# (scripts/test_java.sh), the Go sources (scripts/go_deps.sh); the Rust example is built here
# (cargo, the features the Rust suite builds with). The server is a cluster with pg_idgen
# installed (the test cluster of test.sh).
set -euo pipefail
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1} # no cluster of its own: the caller's
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"
# shellcheck source=scripts/go_deps.sh
source "$ROOT/scripts/go_deps.sh"
: "${PG_IDGEN_HOST:?the socket directory of a server with pg_idgen}" "${PG_IDGEN_PORT:?and its port}"
# What the clients' suites build, when they have not run (test.sh --only interop): their unit tiers.
[ -f "$ROOT/clients/node/dist/index.js" ] || env -u PG_IDGEN_HOST -u PG_IDGEN_PORT bash "$ROOT/scripts/test_node.sh"
[ -d "$ROOT/target/java/test-classes" ] || bash "$ROOT/scripts/test_java.sh"

DIR=$ROOT/target/interop
rm -rf "$DIR"
mkdir -p "$DIR"
J=/usr/share/java
ensure_go_deps
go_env "$GO_BIN" build -o "$DIR/go-interop" github.com/pg-idgen/pg_idgen/clients/go/cmd/interop
(cd "$ROOT" && cargo build -q -p pg-idgen-client --all-features --example interop)

client() { # client NAME PHASE: one client's make or read, in DIR
    case $1 in
        python) "$ROOT/.venv/bin/python" "$ROOT/tests/interop/interop.py" "$2" "$DIR" ;;
        rust) "$ROOT/target/debug/examples/interop" "$2" "$DIR" ;;
        node) node "$ROOT/tests/interop/interop.mjs" "$2" "$DIR" ;;
        java) java -cp "$ROOT/target/java/classes:$ROOT/target/java/test-classes:$J/postgresql.jar" \
                  io.github.pgidgen.InteropCli "$2" "$DIR" ;;
        go) "$DIR/go-interop" "$2" "$DIR" ;;
    esac
}
CLIENTS=(python rust node java go)
for c in "${CLIENTS[@]}"; do client "$c" make; done
for c in "${CLIENTS[@]}"; do client "$c" read; done

"$ROOT/.venv/bin/python" "$ROOT/tests/interop/server.py" "$DIR" \
    "host=$PG_IDGEN_HOST port=$PG_IDGEN_PORT user=postgres dbname=postgres"

# Every client's reading equals the server's: each id's fields, then the order of all of them.
ids=$(cat "$DIR"/*.ids | wc -l)
for c in "${CLIENTS[@]}"; do
    cmp -s "$DIR/server.read" "$DIR/$c.read" ||
        die "$c reads the ids otherwise than the server: diff $DIR/server.read $DIR/$c.read: $(diff "$DIR/server.read" "$DIR/$c.read" | head -5)"
done
grep -q '^ox ' "$DIR/server.read" || die "no xid12 was read"
grep -q '^os ' "$DIR/server.read" || die "no Snowflake id was read"
echo "interop: $ids ids made by ${#CLIENTS[@]} clients (${CLIENTS[*]}), read by each and by the server: the same fields and order"
