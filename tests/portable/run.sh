#!/usr/bin/env bash
# tests/portable/run.sh PGVERSION: tests pg_idgen's portable SQL edition (portable/) on a
# throwaway cluster of its own.
#
# Checks that portable/dist matches portable/src (build.py --check), starts a cluster, creates
# a role that owns one database and has no other rights (NOSUPERUSER NOCREATEROLE NOCREATEDB),
# installs the plain script as that role, and runs tests/portable/test_portable.py: the shared
# vectors, native comparisons, the security model (a writer role and a role without rights),
# COPY compatibility with the native type, concurrency (8 sessions x 50000 ids of each
# generator, as the writer; PORTABLE_SESSIONS and PORTABLE_PER_SESSION scale it) and a timing
# line; then tests/portable/test_operators.py: operators planted on the types run nothing as
# the owner, invalid ids against a column raise 22P02, comparisons use the index; then
# tests/portable/test_backfill.py: idgen_backfill on a live table, resumed, as the
# writer, and its hostile cases (PORTABLE_BACKFILL_ROWS, 20000, scales it); then
# tests/portable/test_registry.py: the writer registry, with a crash (twice) and a standby
# promoted in place of the cluster. When the native extension is installed in that PostgreSQL it is preloaded and
# created in a second database of the cluster for the comparisons; otherwise they are skipped.
# Last, tests/portable/regress.sh: the native regression suites against the edition, on a
# cluster of its own (tests/portable/regress_differences.md lists what differs).
#
# It installs nothing into PostgreSQL and uses its own cluster directory and port, so it does
# not need the lock the other scripts share (PG_IDGEN_LOCKED=1 unless set).
set -euo pipefail
MAJOR=${1:?usage: tests/portable/run.sh PGVERSION (14 .. 19)}
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1}
export PG_IDGEN_CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen_portable}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"
PORT=${PORTABLE_PORT:-${PORTS[portable]}}
use_private_postgres "$MAJOR"
VERSION=$(extension_version)
SCRIPT=$ROOT/portable/dist/pg_idgen_portable--$VERSION.sql
PY=$ROOT/.venv/bin/python
"$PY" -c "import psycopg" 2>/dev/null || die "needs $ROOT/.venv with psycopg (scripts/lib.sh ensure_venv)"

say "portable/dist matches portable/src"
python3 "$ROOT/portable/build.py" --check
python3 "$ROOT/portable/build.py" --self-test

NATIVE=no
if [ -f "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/pg_idgen.control" ]; then
    NATIVE=yes
fi
say "cluster: PostgreSQL $PG_MAJOR, port $PORT, native extension: $NATIVE"
trap 'stop_cluster portable; stop_cluster portable-standby' EXIT
start_cluster portable "$PORT" "$([ $NATIVE = yes ] && echo preload || echo plain)"
SOCK=$(socket_dir portable)
psql_at portable "$PORT" postgres \
    -c "CREATE ROLE idgen_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_writer LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_other LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_stranger LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE DATABASE app OWNER idgen_owner"
as_owner() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U idgen_owner -d app "$@"; }

say "install as idgen_owner"
# Without -v schema: an error (non-zero exit status), its message and hint, nothing else.
out=$(as_owner -f "$SCRIPT" 2>&1) && die "the script exited 0 without -v schema: $out"
grep -q "ERROR:  pg_idgen portable: give the schema to install into" <<<"$out" || die "the script ran without -v schema: $out"
grep -q "^HINT:  psql -v schema=NAME -f pg_idgen_portable--$VERSION.sql" <<<"$out" || die "no hint without -v schema: $out"
[ "$(wc -l <<<"$out")" -le 3 ] || die "without -v schema, more than the error and its hint: $out"
# A schema name that could end a quoted string or body where the sources say @extschema@ is
# refused (22P02), as CREATE EXTENSION refuses it for the TLE; nothing is created.
# shellcheck disable=SC2016 # the names are literal
for name in "id'gen" 'id$$gen' 'id\gen' 'id"gen'; do
    out=$(as_owner -v VERBOSITY=verbose -v schema="$name" -f "$SCRIPT" 2>&1) && die "installed into $name"
    grep -q "ERROR:  22P02: invalid character in extension \"pg_idgen\" schema" <<<"$out" || die "install into $name: $out"
done
as_owner -tAc "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'id_gen'" | grep -qx 0 || die "a schema was created"
# A schema another role can CREATE in (or owns) is refused, with 42501.
refused() {
    local out
    out=$(as_owner -v VERBOSITY=verbose -v schema="$1" -f "$SCRIPT" 2>&1) && die "installed into $1: $2"
    grep -q "ERROR:  42501: pg_idgen portable: .*$2" <<<"$out" || die "install into $1: $out"
    as_owner -tAc "SELECT count(*) FROM pg_proc WHERE pronamespace = '$1'::regnamespace" | grep -qx 0 || die "objects left in $1"
}
as_owner -c "CREATE SCHEMA idgen_shared" -c "GRANT CREATE ON SCHEMA idgen_shared TO idgen_other"
refused idgen_shared "other roles can CREATE in schema idgen_shared: idgen_other"
as_owner -c "REVOKE CREATE ON SCHEMA idgen_shared FROM idgen_other" -c "GRANT CREATE ON SCHEMA idgen_shared TO PUBLIC"
refused idgen_shared "other roles can CREATE in schema idgen_shared: PUBLIC"
psql_at portable "$PORT" app -c "CREATE SCHEMA idgen_theirs AUTHORIZATION idgen_other" -c "GRANT CREATE, USAGE ON SCHEMA idgen_theirs TO idgen_owner"
refused idgen_theirs "is owned by idgen_other, not by the installing role idgen_owner"
# What another role made while it could CREATE there stays after the REVOKE, and is refused: a
# domain named timestamptz, which the native piece's CREATE TABLE idgen_backfill_progress would
# take for its columns' type (its CHECK would run as every role that writes a progress row).
as_owner -c "REVOKE CREATE ON SCHEMA idgen_shared FROM PUBLIC" -c "GRANT USAGE, CREATE ON SCHEMA idgen_shared TO idgen_other"
"$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U idgen_other -d app \
    -c "CREATE DOMAIN idgen_shared.timestamptz AS pg_catalog.timestamptz"
as_owner -c "REVOKE CREATE ON SCHEMA idgen_shared FROM idgen_other"
refused idgen_shared "schema idgen_shared holds objects of other roles: type idgen_shared.timestamptz (owner idgen_other)"
as_owner -c "DROP SCHEMA idgen_shared CASCADE"
psql_at portable "$PORT" app -c "DROP SCHEMA idgen_theirs"
# A successful install says one line: the edition, the version, the schema.
out=$(as_owner -v schema=idgen -f "$SCRIPT" 2>&1)
[ "$out" = "pg_idgen portable $VERSION (plain SQL script): installed into schema idgen" ] || die "the install said: $out"
# One install per database: a second, in another schema, is refused (42710) before it creates
# anything (two would repeat each other's ids).
out=$(as_owner -v VERBOSITY=verbose -v schema=idgen2 -f "$SCRIPT" 2>&1) && die "a second install, into idgen2, ran"
grep -q "ERROR:  42710: pg_idgen portable: this database already has pg_idgen, in schema idgen (pg_idgen portable, owner idgen_owner)" <<<"$out" ||
    die "a second install into idgen2: $out"
grep -q "^HINT:  One install per database" <<<"$out" || die "a second install into idgen2, no hint: $out"
# A refusal is the check's message and hint (and, verbose, its LOCATION): no CONTEXT with the
# check's source.
[ "$(wc -l <<<"$out")" -le 3 ] || die "a refusal printed more than its message and hint: $out"
as_owner -tAc "SELECT count(*) FROM pg_namespace WHERE nspname = 'idgen2'" | grep -qx 0 || die "the refused second install left schema idgen2"

# The owner's default privileges grant everything to another role: the install takes back
# every grant on its objects, so that role (with USAGE on the schema) is refused all of it
# (USAGE on the types too: it cannot create anything that takes or holds one).
say "install with default privileges granting all to idgen_other"
# (In a database of its own: one install per database.)
psql_at portable "$PORT" postgres -c "CREATE DATABASE app_dp OWNER idgen_owner"
as_owner_dp() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U idgen_owner -d app_dp "$@"; }
as_owner_dp -c "CREATE SCHEMA idgen_dp" -c "GRANT USAGE ON SCHEMA idgen_dp TO idgen_other" \
    -c "ALTER DEFAULT PRIVILEGES IN SCHEMA idgen_dp GRANT ALL ON TABLES TO idgen_other" \
    -c "ALTER DEFAULT PRIVILEGES IN SCHEMA idgen_dp GRANT ALL ON SEQUENCES TO idgen_other, PUBLIC" \
    -c "ALTER DEFAULT PRIVILEGES IN SCHEMA idgen_dp GRANT ALL ON FUNCTIONS TO idgen_other" \
    -c "ALTER DEFAULT PRIVILEGES IN SCHEMA idgen_dp GRANT ALL ON TYPES TO idgen_other"
# (With the guard's setting on in the session, as if it had found the edition there: it installs.)
PGOPTIONS="-c idgen_portable.nothing_to_do=on" as_owner_dp -v schema=idgen_dp -f "$SCRIPT" >/dev/null
as_owner_dp -tAc "SELECT idgen_dp.idgen_portable_version()" | grep -qx "$VERSION" || die "not installed into idgen_dp"
for sql in "SELECT setval('idgen_dp.idgen_xid12_seq', 1)" "SELECT setval('idgen_dp.idgen_snowflake_seq', 1)" \
           "SELECT nextval('idgen_dp.idgen_xid12_backfill_seq')" "UPDATE idgen_dp.idgen_config SET worker_id = 1" \
           "DELETE FROM idgen_dp.rapkey_counter" \
           "SELECT idgen_dp.idgen_sequence_jump('idgen_dp.idgen_xid12_seq', 'idgen_dp.idgen_xid12_jumps', 'idgen_dp.idgen_xid12_jumper', 1, true)" \
           "SELECT setval('idgen_dp.idgen_xid12_jumps', 1)" "SELECT idgen_dp.idgen_xid12_session()" "SELECT idgen_dp.gen_xid12()" \
           "SELECT idgen_dp.gen_xid12(now())" "SELECT idgen_dp.gen_snowflake()" "SELECT idgen_dp.rapkey_next('a.b')" \
           "SELECT idgen_dp.idgen_acquire('snowflake', 'w')" "UPDATE idgen_dp.idgen_registry_grant SET hi = lo" \
           "SELECT nextval('idgen_dp.idgen_registry_grant_id_seq')" "DELETE FROM idgen_dp.idgen_registry_site" \
           "SELECT idgen_dp.idgen_pool_allow('app', 'idgen_other')" "TRUNCATE idgen_dp.idgen_backfill_progress" \
           "CREATE TEMP TABLE planted (id idgen_dp.xid12)" "CREATE TEMP TABLE planted (k idgen_dp.rapkey)"; do
    out=$("$BINDIR/psql" -X -q -v VERBOSITY=verbose -h "$SOCK" -p "$PORT" -U idgen_other -d app_dp -c "$sql" 2>&1) && die "idgen_other ran: $sql"
    grep -q "ERROR:  42501: permission denied for" <<<"$out" || die "idgen_other: $sql: $out"
done
psql_at portable "$PORT" postgres -c "DROP DATABASE app_dp"
as_owner -tAc "SELECT 'installed pg_idgen portable ' || idgen.idgen_portable_version() || ' into schema idgen as ' || current_user
               || ' (superuser: ' || (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) || ')'"

NATIVE_DSN=()
if [ $NATIVE = yes ]; then
    psql_at portable "$PORT" postgres -c "CREATE DATABASE native" 
    psql_at portable "$PORT" native -c "CREATE EXTENSION pg_idgen"
    NATIVE_DSN=("host=$SOCK port=$PORT user=postgres dbname=native")
fi

say "tests/portable/test_portable.py"
start=$(date +%s)
PORTABLE_OTHER_DSN="host=$SOCK port=$PORT user=idgen_other dbname=app options='-c search_path='" \
    PORTABLE_WRITER_DSN="host=$SOCK port=$PORT user=idgen_writer dbname=app options='-c search_path='" \
    "$PY" "$ROOT/tests/portable/test_portable.py" \
    "host=$SOCK port=$PORT user=idgen_owner dbname=app options='-c search_path='" "${NATIVE_DSN[@]}"

# What a writer sets in its session, what a role with only CONNECT can lock, the backfill
# counter's end (issue 44).
say "tests/portable/test_hostile.py"
PORTABLE_WRITER_DSN="host=$SOCK port=$PORT user=idgen_writer dbname=app options='-c search_path='" \
    PORTABLE_STRANGER_DSN="host=$SOCK port=$PORT user=idgen_stranger dbname=app" \
    "$PY" "$ROOT/tests/portable/test_hostile.py" "host=$SOCK port=$PORT user=idgen_owner dbname=app options='-c search_path='"

# Planted operators on the edition's types, from a schema first, last and off the owner's
# search_path and in a public schema as PostgreSQL 14's; invalid ids against a column (22P02);
# the index under the edition's operators.
say "tests/portable/test_operators.py"
PORTABLE_OTHER_DSN="host=$SOCK port=$PORT user=idgen_other dbname=app options='-c search_path='" \
    PORTABLE_WRITER_DSN="host=$SOCK port=$PORT user=idgen_writer dbname=app options='-c search_path='" \
    "$PY" "$ROOT/tests/portable/test_operators.py" \
    "host=$SOCK port=$PORT user=idgen_owner dbname=app options='-c search_path='" "${NATIVE_DSN[@]}"

say "tests/portable/test_backfill.py"
PORTABLE_OTHER_DSN="host=$SOCK port=$PORT user=idgen_other dbname=app options='-c search_path='" \
    PORTABLE_WRITER_DSN="host=$SOCK port=$PORT user=idgen_writer dbname=app options='-c search_path='" \
    "$PY" "$ROOT/tests/portable/test_backfill.py" \
    "host=$SOCK port=$PORT user=idgen_owner dbname=app options='-c search_path='" "${NATIVE_DSN[@]}"

# The writer registry (sql/registry.sql in the edition): grants, roles, provenance, the Python
# client, a dump restored and a database copied (new origins); then its origin check after a
# crash with the WAL functions refused (fenced: a crash cannot be told from a promotion there)
# and readable (no change, as native), and on a promoted standby (a new timeline).
say "tests/portable/test_registry.py"
app_dsn() { echo "host=$SOCK port=$PORT user=$1 dbname=app options='-c search_path='"; }
registry() {
    PORTABLE_WRITER_DSN=$(app_dsn idgen_writer) PORTABLE_OTHER_DSN=$(app_dsn idgen_other) \
        PORTABLE_SUPER_DSN=$(app_dsn postgres) PORTABLE_NATIVE_DSN="${NATIVE_DSN[*]}" PORTABLE_BINDIR=$BINDIR \
        "$PY" "$ROOT/tests/portable/test_registry.py" "$1" "$(app_dsn idgen_owner)"
}
crash() {
    as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/portable/data" -m immediate -w stop >/dev/null
    as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/portable/data" -l "$CLUSTERS/portable/server.log" -w start >/dev/null 9<&-
}
registry main
crash
registry crashed
crash
registry crashed-wal
# A standby from a base backup, started in place of the stopped primary (its port and socket)
# and promoted: the registry's unlogged marker is empty there, and the timeline is new.
STANDBY=$CLUSTERS/portable-standby
stop_cluster portable-standby
$SUDO rm -rf "$STANDBY"
$SUDO mkdir -p "$STANDBY"
echo "$BINDIR" | $SUDO tee "$STANDBY/bindir" >/dev/null
$SUDO chown -R postgres:postgres "$STANDBY"
as_postgres "$BINDIR/pg_basebackup" -h "$SOCK" -p "$PORT" -U postgres -D "$STANDBY/data" -R -X stream
stop_cluster portable
as_postgres "$BINDIR/pg_ctl" -D "$STANDBY/data" -l "$STANDBY/server.log" -w start >/dev/null 9<&-
as_postgres "$BINDIR/pg_ctl" -D "$STANDBY/data" -w promote >/dev/null
registry promoted
stop_cluster portable-standby
# The native suites, on a cluster of their own.
bash "$ROOT/tests/portable/regress.sh" "$MAJOR"
say "portable edition on PostgreSQL $PG_MAJOR: passed ($(($(date +%s) - start)) s of tests)"
