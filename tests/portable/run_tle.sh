#!/usr/bin/env bash
# tests/portable/run_tle.sh PGVERSION: tests the portable edition's pg_tle packaging
# (portable/dist/pg_idgen_tle--<version>.sql) on a throwaway cluster of its own.
#
# pg_tle refuses a TLE named like an extension whose control file the server has, and the
# private PostgreSQL builds (target/postgresql/<major>) have the native pg_idgen installed. So
# this test runs a copy of that build without pg_idgen's files, with pg_tle built into it from
# its source tarball (PG_IDGEN_PG_TLE_SRC, ../shared/vendor/pg_tle-*.tar.gz beside the checkout,
# or the upstream tarball scripts/vendor_sources pins; with none of them the suite says it is
# skipped and why, and fails under CI=true: scripts/vendor.sh): made once per (tarball,
# PostgreSQL build) in a cache outside the checkout (PG_IDGEN_PG_TLE_CACHE, default
# /var/cache/pg_idgen), about 45 MB. The build needs flex (a Debian package, installed when
# missing). Nothing is installed into
# target/postgresql or the system's PostgreSQL.
#
# Then: a cluster with shared_preload_libraries = 'pg_tle'; as superuser CREATE EXTENSION pg_tle
# and a role idgen_owner that is not superuser, member of pgtle_admin, owner of database app. As
# that role: the generated script (pgtle.install_extension), CREATE EXTENSION pg_idgen SCHEMA
# idgen, tests/portable/test_portable.py (vectors, security as a writer role and a role without
# rights, concurrency at a smaller scale), tests/portable/test_operators.py (nobody plants
# operators on the types) and tests/portable/test_backfill.py, then a table of ids, pg_dump (which must say CREATE
# EXTENSION pg_idgen), restored by the owner into a database where the TLE is installed (a
# dump of pg_idgen and the data only) and by a superuser into an empty one (the full dump, which
# carries the TLE's definition): rows, configuration, counters, sequences and grants come back.
#
# Port PORTABLE_TLE_PORT (default scripts/lib.sh PORTS[portable-tle]), clusters under PG_IDGEN_CLUSTERS (default
# /var/tmp/pg_idgen_portable_tle). It shares nothing with the other scripts' PostgreSQL, so it
# does not take their lock.
set -euo pipefail
MAJOR=${1:?usage: tests/portable/run_tle.sh PGVERSION (14 .. 19)}
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1}
export PG_IDGEN_CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen_portable_tle}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"
# shellcheck source=tests/portable/tle_lib.sh
source "$ROOT/tests/portable/tle_lib.sh"
tle_source_or_skip "portable-tle (tests/portable/run_tle.sh and upgrade.sh)"
PORT=${PORTABLE_TLE_PORT:-${PORTS[portable-tle]}}
use_private_postgres "$MAJOR"
VERSION=$(extension_version)
SCRIPT=$ROOT/portable/dist/pg_idgen_tle--$VERSION.sql
PY=$ROOT/.venv/bin/python
"$PY" -c "import psycopg" 2>/dev/null || die "needs $ROOT/.venv with psycopg (scripts/lib.sh ensure_venv)"
started=$(date +%s)

say "portable/dist matches portable/src"
python3 "$ROOT/portable/build.py" --check

say "PostgreSQL $PG_MAJOR with pg_tle"
use_tle_postgres

say "cluster: PostgreSQL $PG_MAJOR, port $PORT, shared_preload_libraries = 'pg_tle'"
trap 'stop_cluster tle' EXIT
start_cluster tle "$PORT" plain "shared_preload_libraries = 'pg_tle'"
SOCK=$(socket_dir tle)
psql_at tle "$PORT" postgres \
    -c "CREATE ROLE idgen_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_writer LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_other LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_stranger LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE DATABASE app OWNER idgen_owner" \
    -c "CREATE DATABASE restored OWNER idgen_owner"
for db in app restored; do
    psql_at tle "$PORT" "$db" -c "CREATE EXTENSION pg_tle"
done
psql_at tle "$PORT" postgres -c "GRANT pgtle_admin TO idgen_owner"
as_owner() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U idgen_owner "$@"; }

say "install the TLE as idgen_owner (pgtle_admin, owner of app; not superuser)"
as_owner -d app -f "$SCRIPT" >/dev/null
# A schema that holds an object another role made while it could CREATE there is refused (42501):
# to_timestamp(bigint) would be what xid12_time()'s SQL body binds to, before pg_catalog's.
as_owner -d app -c "CREATE SCHEMA idgen_planted" -c "GRANT USAGE, CREATE ON SCHEMA idgen_planted TO idgen_other"
"$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U idgen_other -d app \
    -c "CREATE FUNCTION idgen_planted.to_timestamp(bigint) RETURNS timestamptz LANGUAGE sql RETURN pg_catalog.to_timestamp(\$1::float8)"
as_owner -d app -c "REVOKE CREATE ON SCHEMA idgen_planted FROM idgen_other"
out=$(as_owner -d app -v VERBOSITY=verbose -c "CREATE EXTENSION pg_idgen SCHEMA idgen_planted" 2>&1) &&
    die "CREATE EXTENSION into a schema holding an object of idgen_other: it ran"
grep -q "ERROR:  42501: pg_idgen portable: schema idgen_planted holds objects of other roles: function idgen_planted.to_timestamp(bigint) (owner idgen_other)" <<<"$out" ||
    die "CREATE EXTENSION into a schema holding an object of idgen_other: $out"
echo "    refused, as expected: $(grep -m1 'ERROR:' <<<"$out")"
as_owner -d app -c "DROP SCHEMA idgen_planted CASCADE"
as_owner -d app -c "CREATE SCHEMA idgen" -c "CREATE EXTENSION pg_idgen SCHEMA idgen"
as_owner -d app -tAc "SELECT 'CREATE EXTENSION pg_idgen ' || extversion || ' (pg_tle ' ||
                             (SELECT extversion FROM pg_extension WHERE extname = 'pg_tle') || ') into schema '
                             || extnamespace::regnamespace || ' as ' || current_user || ' (superuser: '
                             || (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) || ')'
                      FROM pg_extension WHERE extname = 'pg_idgen'"
# One install per database, plain or TLE, in any schema: a second is refused (42710) before it
# creates anything; both ways round.
PLAIN=$ROOT/portable/dist/pg_idgen_portable--$VERSION.sql
out=$(as_owner -d app -v VERBOSITY=verbose -v schema=idgen2 -f "$PLAIN" 2>&1) && die "the plain script installed beside the TLE"
grep -q "ERROR:  42710: pg_idgen portable: this database already has pg_idgen, in schema idgen (extension pg_idgen $VERSION)" <<<"$out" ||
    die "the plain script beside the TLE: $out"
as_owner -d app -tAc "SELECT count(*) FROM pg_namespace WHERE nspname = 'idgen2'" | grep -qx 0 || die "the refused plain install left schema idgen2"
psql_at tle "$PORT" postgres -c "CREATE DATABASE twice OWNER idgen_owner"
psql_at tle "$PORT" twice -c "CREATE EXTENSION pg_tle"
as_owner -d twice -f "$SCRIPT" >/dev/null
as_owner -d twice -v schema=idgen_plain -f "$PLAIN" >/dev/null
out=$(as_owner -d twice -v VERBOSITY=verbose -c "CREATE SCHEMA idgen" -c "CREATE EXTENSION pg_idgen SCHEMA idgen" 2>&1) &&
    die "CREATE EXTENSION pg_idgen beside the plain script's install: it ran"
grep -q "ERROR:  42710: pg_idgen portable: this database already has pg_idgen, in schema idgen_plain (pg_idgen portable, owner idgen_owner)" <<<"$out" ||
    die "CREATE EXTENSION pg_idgen beside the plain script's install: $out"
echo "    refused, as expected: $(grep -m1 'ERROR:' <<<"$out")"
psql_at tle "$PORT" postgres -c "DROP DATABASE twice"

say "tests/portable/test_portable.py against the TLE"
dsn() { echo "host=$SOCK port=$PORT user=$1 dbname=app options='-c search_path='"; }
PORTABLE_SESSIONS=${PORTABLE_SESSIONS:-4} PORTABLE_PER_SESSION=${PORTABLE_PER_SESSION:-20000} \
    PORTABLE_TIMING_N=${PORTABLE_TIMING_N:-50000} \
    PORTABLE_OTHER_DSN=$(dsn idgen_other) PORTABLE_WRITER_DSN=$(dsn idgen_writer) \
    "$PY" "$ROOT/tests/portable/test_portable.py" "$(dsn idgen_owner)"

say "tests/portable/test_hostile.py against the TLE"
PORTABLE_WRITER_DSN=$(dsn idgen_writer) PORTABLE_STRANGER_DSN=$(dsn idgen_stranger) \
    "$PY" "$ROOT/tests/portable/test_hostile.py" "$(dsn idgen_owner)"

say "tests/portable/test_operators.py against the TLE"
PORTABLE_OTHER_DSN=$(dsn idgen_other) PORTABLE_WRITER_DSN=$(dsn idgen_writer) \
    "$PY" "$ROOT/tests/portable/test_operators.py" "$(dsn idgen_owner)"

say "tests/portable/test_backfill.py against the TLE"
PORTABLE_OTHER_DSN=$(dsn idgen_other) PORTABLE_WRITER_DSN=$(dsn idgen_writer) \
    "$PY" "$ROOT/tests/portable/test_backfill.py" "$(dsn idgen_owner)"

say "tests/portable/test_registry.py against the TLE (phase main)"
PORTABLE_OTHER_DSN=$(dsn idgen_other) PORTABLE_WRITER_DSN=$(dsn idgen_writer) PORTABLE_SUPER_DSN=$(dsn postgres) \
    "$PY" "$ROOT/tests/portable/test_registry.py" main "$(dsn idgen_owner)"

say "pg_dump of app, restored into a database where the TLE is installed"
as_owner -d app -c "CREATE TABLE public.orders (id idgen.xid12 PRIMARY KEY DEFAULT idgen.gen_xid12(),
                                                sf bigint NOT NULL DEFAULT idgen.gen_snowflake(),
                                                k idgen.rapkey NOT NULL DEFAULT idgen.rapkey_next('ord.dump'))" \
    -c "INSERT INTO public.orders SELECT FROM generate_series(1, 100)"
# A full dump also carries the TLE's definition (functions in schema pgtle, owned by the
# installer) and pg_tle itself: a superuser restores it into an empty database. The owner's
# way, on a managed service: only pg_idgen and the data (--extension, --exclude-schema), into a
# database where the TLE is installed.
FULL=$CLUSTERS/tle/app-full.sql
DUMP=$CLUSTERS/tle/app.sql
"$BINDIR/pg_dump" -h "$SOCK" -p "$PORT" -U idgen_owner -d app -f "$FULL"
"$BINDIR/pg_dump" -h "$SOCK" -p "$PORT" -U idgen_owner -d app --extension=pg_idgen --exclude-schema=pgtle -f "$DUMP"
for f in "$FULL" "$DUMP"; do
    grep -q '^CREATE EXTENSION IF NOT EXISTS pg_idgen WITH SCHEMA idgen;' "$f" ||
        die "$f does not say CREATE EXTENSION pg_idgen: $(grep -n EXTENSION "$f")"
    if grep -q 'CREATE FUNCTION idgen\.' "$f"; then
        die "$f carries the extension's functions: $(grep -n 'CREATE FUNCTION idgen\.' "$f" | head -3)"
    fi
done
grep -n '^CREATE EXTENSION' "$DUMP" | sed 's/^/    owner dump: /'
grep -n '^CREATE EXTENSION\|^CREATE FUNCTION pgtle' "$FULL" | sed 's/^/    full dump: /'
as_owner -d restored -f "$SCRIPT" >/dev/null
as_owner -d restored -f "$DUMP" >/dev/null 2>"$CLUSTERS/tle/restore.err" ||
    { cat "$CLUSTERS/tle/restore.err"; die "restoring the owner's dump failed"; }
psql_at tle "$PORT" postgres -c "CREATE DATABASE restored_full OWNER idgen_owner"
psql_at tle "$PORT" restored_full -f "$FULL" >/dev/null 2>>"$CLUSTERS/tle/restore.err" ||
    { cat "$CLUSTERS/tle/restore.err"; die "restoring the full dump (as superuser) failed"; }
# The state came back: rows, configuration, per-prefix counter, sequences ahead of the rows,
# the writer's grants (and none to PUBLIC).
# The full dump's restore made its restoring superuser the extension's owner, as with any
# extension: its checks run as that role.
for db in restored restored_full; do
    as=(as_owner -d "$db")
    [ "$db" = restored ] || as=(psql_at tle "$PORT" "$db")
    # The writer registry came with its grants, and notices the restore (a change of origin).
    check=$("${as[@]}" -tA -c "SET search_path = ''" -c "DO \$\$ BEGIN PERFORM idgen.idgen_registry_check_origin(); END \$\$" -c "
        SELECT concat_ws(' ',
            (SELECT count(*) FROM public.orders) = 100,
            (SELECT worker_id FROM idgen.idgen_config) = 378,
            idgen.rapkey_next('ord.dump')::text = idgen.rapkey_build('ord', 'dump', '101')::text,
            idgen.gen_snowflake() > (SELECT max(sf) FROM public.orders),
            idgen.gen_xid12() IS NOT NULL,
            (SELECT last_value FROM idgen.idgen_xid12_seq) >= (SELECT max((extract(epoch FROM idgen.xid12_time(id))::bigint << 24)
                                                                          | idgen.xid12_counter(id)) FROM public.orders),
            (SELECT last_value FROM idgen.idgen_snowflake_seq) >= (SELECT max((sf >> 22) + 1288834974657) << 12 FROM public.orders),
            has_function_privilege('idgen_writer', 'idgen.gen_xid12()', 'EXECUTE'),
            NOT has_function_privilege('idgen_other', 'idgen.gen_snowflake()', 'EXECUTE'),
            (SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen') = '$VERSION',
            (SELECT count(*) FROM idgen.idgen_registry_grant) > 0,
            (SELECT fenced AND reason LIKE 'restored from a dump into a new install in this cluster %'
               FROM idgen.idgen_registry_origin ORDER BY seen_at DESC, reason IS NULL LIMIT 1))")
    echo "    $db: rows, worker_id, rapkey counter, snowflake > rows, xid12, both sequences kept, writer grant, no PUBLIC grant, version, the registry's grants, its origin fenced as a restore: $check"
    [ "$check" = "t t t t t t t t t t t t" ] || die "the database $db restored from the dump differs: $check"
done
[ ! -s "$CLUSTERS/tle/restore.err" ] || sed 's/^/    restore said: /' "$CLUSTERS/tle/restore.err"

say "pg_idgen TLE on PostgreSQL $PG_MAJOR: passed ($(($(date +%s) - started)) s)"
# The upgrade path, both packagings, on a cluster of its own.
bash "$ROOT/tests/portable/upgrade.sh" "$MAJOR"
