#!/usr/bin/env bash
# Runs the README's "From your application" recipes for pgjdbc and Go
# (clients/recipes/{java,go}; node-pg has the package clients/node, scripts/test_node.sh) against a throwaway cluster of one PostgreSQL version
# (default 18): each is a program that exits non-zero when a check fails. They test drivers,
# not server versions, so test.sh runs them once, on 18.
#
#   bash scripts/test_recipes.sh [--installed] [VERSION]
#
# --installed: the extension is already installed into that version's PostgreSQL (test.sh
# passes it); without it the script installs a debug build first. Installs what the recipes
# need once (Debian's JDK, pgjdbc, Go, rs/xid and pgx v4 packages where missing); a second run
# only compiles what changed. The cluster uses
# PORTS[recipes] of lib.sh (default 54391) on its own socket and on 127.0.0.1 (pgjdbc speaks TCP
# only), where it asks for a password made for the run.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INSTALLED=no
if [ "${1:-}" = --installed ]; then INSTALLED=yes; shift; fi
VERSION=${1:-18}
PORT=${PORTS[recipes]}
RECIPES=$ROOT/clients/recipes
OUT=$ROOT/target/recipes
trap 'stop_cluster recipes' EXIT

# Debian packages: Go in GOPATH mode with Debian's rs/xid and pgx v4 sources (the module proxy
# may be out of reach), pgjdbc and a JDK.
ensure_recipe_deps() {
    local pkgs="golang-go golang-github-rs-xid-dev golang-github-jackc-pgx-v4-dev libpostgresql-jdbc-java"
    local missing="" p
    command -v javac >/dev/null || pkgs="$pkgs default-jdk-headless"
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "installing Debian packages for the recipes:$missing"
        $SUDO apt-get update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
}

ensure_recipe_deps
use_postgres "$VERSION"
[ "$INSTALLED" = yes ] || install_extension debug
mkdir -p "$OUT"

say "recipes: compiling the Go and Java programs"
# GOPATH mode against Debian's /usr/share/gocode; the build cache stays in target/.
(cd "$RECIPES/go" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$OUT/go-cache GOFLAGS='' \
    go build -o "$OUT/go-recipe" .)
JDBC_JAR=/usr/share/java/postgresql.jar
rm -rf "$OUT/java"
javac -Xlint:all -Werror -d "$OUT/java" "$RECIPES/java/Xid12Recipe.java"

say "PostgreSQL $PG_MAJOR: recipes cluster"
start_cluster recipes "$PORT" preload "listen_addresses = '127.0.0.1'"
PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
psql_at recipes "$PORT" postgres -v password="$PASSWORD" <<'SQL'
SET password_encryption = 'scram-sha-256';
ALTER ROLE postgres PASSWORD :'password';
CREATE DATABASE recipes;
SQL
# TCP asks for the password; the socket (in a directory only this run uses) stays trusted.
as_postgres tee "$CLUSTERS/recipes/data/pg_hba.conf" >/dev/null <<'HBA'
local all all trust
host all all 127.0.0.1/32 scram-sha-256
HBA
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/recipes/data" reload >/dev/null
psql_at recipes "$PORT" recipes -c "CREATE EXTENSION pg_idgen"

PGHOST=$(socket_dir recipes)
export PGHOST PGPORT=$PORT PGUSER=postgres PGDATABASE=recipes
unset PGPASSWORD PGSERVICE PGOPTIONS

say "recipes: Go (rs/xid with pgx v4 and database/sql)"
"$OUT/go-recipe"

say "recipes: pgjdbc $(dpkg-query -W -f='${Version}' libpostgresql-jdbc-java)"
PG_IDGEN_JDBC_URL="jdbc:postgresql://127.0.0.1:$PORT/recipes" PGPASSWORD=$PASSWORD \
    java -cp "$JDBC_JAR:$OUT/java" Xid12Recipe

say "recipes: all passed"
