#!/usr/bin/env bash
# The Java client (clients/java, Maven artifact io.github.pgidgen:pg-idgen): compiles it with
# javac against Debian's packaged jars (pgjdbc, the SQLite JDBC driver of the edge store, JUnit 5:
# no Maven Central here; the pom.xml is what users build with), runs its unit tests (no server;
# they include the shared vectors of tests/vectors) with the JUnit console launcher. With
# --server VERSION it also starts a throwaway cluster of its own on 127.0.0.1 (pgjdbc speaks TCP)
# with the extension installed (--installed: already installed into that version, as test.sh
# does), a PgBouncer in transaction mode in front of it, and runs the server tests and the
# measurements.
#
#   bash scripts/test_java.sh                       # no server
#   bash scripts/test_java.sh --server 18 [--installed]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$ROOT/clients/java
SERVER=""
INSTALLED=no
while [ $# -gt 0 ]; do
    case $1 in
        --server) SERVER=${2:?--server needs a version}; shift 2 ;;
        --installed) INSTALLED=yes; shift ;;
        *) echo "test_java.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# Debian's packages, installed once (idempotent): a JDK, pgjdbc, the SQLite JDBC driver (xerial's),
# JUnit 5, PgBouncer for the server tests.
PKGS="libpostgresql-jdbc-java libxerial-sqlite-jdbc-java junit5"
[ -z "$SERVER" ] || PKGS="$PKGS pgbouncer maven maven-debian-helper maven-repo-helper"
command -v javac >/dev/null || PKGS="$PKGS openjdk-17-jdk-headless"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "clients/java: installing Debian packages:$missing"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
fi

J=/usr/share/java
CP_MAIN=$J/postgresql.jar
CP_SQLITE=$J/sqlite-jdbc.jar
OUT=$ROOT/target/java
rm -rf "$OUT/classes" "$OUT/test-classes"
mkdir -p "$OUT"
PGJDBC=$(find "$J" -maxdepth 1 -name 'postgresql-4*.jar' -printf '%f\n' | sed 's/postgresql-//; s/.jar$//')
SQLITE_JDBC=$(dpkg-query -W -f='${Version}' libxerial-sqlite-jdbc-java)
echo "clients/java: javac (Java 17, pgjdbc $PGJDBC, sqlite-jdbc $SQLITE_JDBC)"
mapfile -t MAIN < <(find "$DIR/src/main/java" -name '*.java')
mapfile -t TESTS < <(find "$DIR/src/test/java" -name '*.java')
javac --release 17 -Xlint:all -Werror -d "$OUT/classes" -cp "$CP_MAIN" "${MAIN[@]}"
# the words of the registry's and the edge store's errors: read from the shared vectors, carried in
# the jar (pom.xml does the same)
cp "$ROOT/tests/vectors/registry_errors.json" "$ROOT/tests/vectors/edge_traces.json" "$OUT/classes/io/github/pgidgen/"
javac --release 17 -Xlint:all,-try -d "$OUT/test-classes" \
    -cp "$OUT/classes:$CP_MAIN:$J/junit-jupiter-api.jar:$J/apiguardian-api.jar:$J/opentest4j.jar:$J/junit-platform-commons.jar" \
    "${TESTS[@]}"
CP_TEST=$OUT/classes:$OUT/test-classes:$CP_MAIN:$CP_SQLITE
run_junit() {
    java -Dpgidgen.vectors="$ROOT/tests/vectors" -jar "$J/junit-platform-console-standalone.jar" \
        -cp "$CP_TEST" --disable-banner --details=summary --fail-if-no-tests "${JUNIT_SELECT[@]}"
}
echo "clients/java: unit tests"
JUNIT_SELECT=(--scan-classpath "$OUT/test-classes" --exclude-tag server)
run_junit

[ -n "$SERVER" ] || exit 0

# The server tests: a cluster of their own on 127.0.0.1 (trust, a throwaway), a PgBouncer in
# transaction mode in front of it (every database, server_reset_query empty: nothing of a
# session survives a transaction), both run by the postgres OS user.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
use_postgres "$SERVER"
[ "$INSTALLED" = yes ] || install_extension debug
PORT=${PORTS[java]}
BPORT=${PORTS[java-bouncer]}
BDIR=$CLUSTERS/java/bouncer
stop_bouncer() {
    if [ -f "$BDIR/pgbouncer.pid" ]; then
        $SUDO kill "$(cat "$BDIR/pgbouncer.pid")" 2>/dev/null || true
        sleep 0.5
    fi
}
trap 'stop_bouncer; stop_cluster java' EXIT
stop_bouncer
start_cluster java "$PORT" preload "listen_addresses = '127.0.0.1'"
$SUDO mkdir -p "$BDIR"
$SUDO tee "$BDIR/pgbouncer.ini" >/dev/null <<INI
[databases]
* = host=$(socket_dir java) port=$PORT
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BPORT
unix_socket_dir =
auth_type = trust
auth_file = $BDIR/users.txt
pool_mode = transaction
server_reset_query =
ignore_startup_parameters = extra_float_digits
max_client_conn = 200
default_pool_size = 20
logfile = $BDIR/pgbouncer.log
pidfile = $BDIR/pgbouncer.pid
INI
printf '"postgres" ""\n"java_writer" ""\n"java_owner" ""\n' | $SUDO tee "$BDIR/users.txt" >/dev/null
$SUDO chown -R postgres:postgres "$BDIR"
as_postgres pgbouncer -d "$BDIR/pgbouncer.ini"
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$BPORT") 2>/dev/null && break
    sleep 0.1
done
# the portable edition: a database owned by a plain role, which installs portable/dist's script
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -1)
pg() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$(socket_dir java)" -p "$PORT" "$@"; }
pg -U postgres -d postgres -c "CREATE ROLE java_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE DATABASE java_portable OWNER java_owner"
pg -U java_owner -d java_portable -v schema=idgen -f "$ROOT/portable/dist/pg_idgen_portable--$VERSION.sql" >/dev/null
echo "clients/java: server tests on PostgreSQL $SERVER (127.0.0.1:$PORT) and through $(pgbouncer --version | head -1) in transaction mode (127.0.0.1:$BPORT)"
export PG_IDGEN_JAVA_URL="jdbc:postgresql://127.0.0.1:$PORT/postgres"
export PG_IDGEN_JAVA_BOUNCER_URL="jdbc:postgresql://127.0.0.1:$BPORT/postgres"
JUNIT_SELECT=(--scan-classpath "$OUT/test-classes" --include-tag server)
run_junit
echo "clients/java: mvn -o package (the pom.xml, offline against Debian's /usr/share/maven-repo through a symlinked copy, with Debian's surefire)"
M2=$OUT/m2
# (links to what is missing: a copy made before a package was installed gets its artifacts)
mkdir -p "$M2"
cp -rsn /usr/share/maven-repo/. "$M2"/
(cd "$DIR" && mvn -o -q -B -Dmaven.repo.local="$M2" -Dsurefire.version=2.22.3 package)
ls "$DIR"/target/pg-idgen-*.jar
echo "clients/java: measurements"
java -cp "$CP_TEST" io.github.pgidgen.Measure
