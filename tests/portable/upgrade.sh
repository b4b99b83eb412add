#!/usr/bin/env bash
# tests/portable/upgrade.sh PGVERSION: the portable edition's upgrade path, end to end, in both
# packagings, on a throwaway cluster of its own (portable/README.md "Upgrades").
#
# There is no older release of the edition to upgrade from yet, and the test invents none in
# the repository: it writes two small synthetic upgrades into a temporary directory, from the
# committed version V (portable/dist) to V+1 (a new function, a new table marked for pg_dump in
# the TLE, a changed comment) and V+1 to V+2 (the function replaced, a new SECURITY DEFINER
# gate), and builds V+2 from them with `portable/build.py --version V+2 --upgrades DIR --out
# DIR` (so with portable/src/upgrade's real upgrades too, when there are any). It checks that
# build.py refuses a chain with a gap and that --check notices a missing upgrade file.
#
# Plain script, as a NOSUPERUSER owner of its database: installs V from portable/dist, gives a
# writer role the README's grants, inserts rows made by every generator (gen_xid12(),
# gen_xid12(timestamptz), gen_snowflake(), rapkey_next()); then checks the refusals (the V
# install again: nothing done; the V+2 install over V, V+1 -> V+2 over V, V -> V+1 as another
# role, and into a schema without the edition, each refused with its SQLSTATE and nothing
# changed); with default privileges granting everything to another role, upgrades V -> V+1
# (twice: the second does nothing), refuses an upgrade that leaves a gate executable by PUBLIC,
# upgrades V+1 -> V+2. After it: the old rows unchanged, every generator continuing strictly
# above its values before the upgrade (the writer inserts again), the new objects there and
# not granted to the other role, the owner's grants kept, idgen_portable_version() = V+2, and
# the schema the same as a fresh V+2 install's but for the upgrades' own objects (over which
# the V install is refused: no downgrades).
#
# TLE (pg_tle, as a NOSUPERUSER member of pgtle_admin that owns the database): installs V,
# CREATE EXTENSION pg_idgen, the same rows; the plain scripts refuse the extension's schema;
# the V+1 -> V+2 update script alone is refused (no path from V); the update scripts
# (pgtle.install_update_path, set_default_version) and ALTER EXTENSION pg_idgen UPDATE twice,
# a broken V+1 -> V+2 refused and replaced; then the same checks, the new objects members of the
# extension, pg_dump saying CREATE EXTENSION and carrying the new table's rows, its restore
# into a database with the TLE's scripts; and CREATE EXTENSION pg_idgen in a fresh database
# installs V and updates it to V+2.
#
# PostgreSQL with pg_tle as tests/portable/run_tle.sh makes it (tests/portable/tle_lib.sh).
# Port PORTABLE_UPGRADE_PORT (default scripts/lib.sh PORTS[portable-upgrade]), clusters under
# PG_IDGEN_CLUSTERS (default /var/tmp/pg_idgen_portable_upgrade). It installs nothing into
# PostgreSQL, so it does not take the other scripts' lock.
set -euo pipefail
MAJOR=${1:?usage: tests/portable/upgrade.sh PGVERSION (14 .. 19)}
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1}
export PG_IDGEN_CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen_portable_upgrade}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"
# shellcheck source=tests/portable/tle_lib.sh
source "$ROOT/tests/portable/tle_lib.sh"
tle_source_or_skip "portable upgrade (tests/portable/upgrade.sh)"
PORT=${PORTABLE_UPGRADE_PORT:-${PORTS[portable-upgrade]}}
use_private_postgres "$MAJOR"
started=$(date +%s)

# V, the committed version; V1 and V2, the synthetic ones.
V=$(extension_version)
IFS=. read -r major minor patch <<<"$V"
V1=$major.$minor.$((patch + 1))
V2=$major.$minor.$((patch + 2))
DIST=$ROOT/portable/dist
WORK=$(mktemp -d)
chmod 755 "$WORK"
trap 'stop_cluster upgrade; rm -rf "$WORK"' EXIT

say "synthetic upgrades $V -> $V1 -> $V2, built into $WORK"
mkdir -p "$WORK/up/extension" "$WORK/bad/extension" "$WORK/gap"
cat >"$WORK/up/$V--$V1.sql" <<SQL
-- synthetic (tests/portable/upgrade.sh): a new function, a new table, a changed comment
CREATE FUNCTION @extschema@.idgen_upgrade_probe() RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 'added by $V1';
CREATE TABLE @extschema@.idgen_upgrade_probe_state (k text PRIMARY KEY);
COMMENT ON FUNCTION @extschema@.gen_xid12() IS 'changed by $V1';
SQL
cat >"$WORK/up/extension/$V--$V1.sql" <<'SQL'
SELECT pg_catalog.pg_extension_config_dump('@extschema@.idgen_upgrade_probe_state', '');
SQL
cat >"$WORK/up/$V1--$V2.sql" <<SQL
-- synthetic (tests/portable/upgrade.sh): a function replaced, a new gate
CREATE OR REPLACE FUNCTION @extschema@.idgen_upgrade_probe() RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 'replaced by $V2';
CREATE FUNCTION @extschema@.idgen_upgrade_gate() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    RETURN (SELECT pg_catalog.count(*) FROM @extschema@.idgen_upgrade_probe_state);
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_upgrade_gate() FROM PUBLIC;
SQL
# The broken variant forgets the REVOKE.
cp "$WORK/up/$V--$V1.sql" "$WORK/bad/"
cp "$WORK/up/extension/$V--$V1.sql" "$WORK/bad/extension/"
grep -v '^REVOKE' "$WORK/up/$V1--$V2.sql" >"$WORK/bad/$V1--$V2.sql"
cp "$WORK/up/$V1--$V2.sql" "$WORK/gap/"
BUILD=(python3 "$ROOT/portable/build.py" --version "$V2")
"${BUILD[@]}" --upgrades "$WORK/up" --out "$WORK/dist"
"${BUILD[@]}" --upgrades "$WORK/bad" --out "$WORK/dist-bad" >/dev/null
NEW=$WORK/dist
out=$("${BUILD[@]}" --upgrades "$WORK/gap" --out "$WORK/dist-gap" 2>&1) && die "build.py built a chain with a gap: $out"
grep -q "no upgrade path from $V to $V2\|does not start where the chain is" <<<"$out" || die "build.py, a gap: $out"
echo "    refused, as expected: a chain with a gap: $out"
cp -a "$NEW" "$WORK/dist-check"
rm "$WORK/dist-check/pg_idgen_tle--$V--$V1.sql"
out=$("${BUILD[@]}" --upgrades "$WORK/up" --out "$WORK/dist-check" --check 2>&1) && die "build.py --check missed a missing upgrade file"
grep -q "pg_idgen_tle--$V--$V1.sql is not what its sources build" <<<"$out" || die "build.py --check: $out"
echo "    refused, as expected: $out"
"${BUILD[@]}" --upgrades "$WORK/up" --out "$NEW" --check >/dev/null

say "PostgreSQL $PG_MAJOR with pg_tle"
use_tle_postgres
say "cluster: PostgreSQL $PG_MAJOR, port $PORT, shared_preload_libraries = 'pg_tle'"
start_cluster upgrade "$PORT" plain "shared_preload_libraries = 'pg_tle'"
SOCK=$(socket_dir upgrade)
psql_at upgrade "$PORT" postgres \
    -c "CREATE ROLE idgen_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_writer LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE ROLE idgen_other LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB"
for db in plain plain_fresh tle tle_wrong tle_fresh tle_restored; do
    psql_at upgrade "$PORT" postgres -c "CREATE DATABASE $db OWNER idgen_owner"
done
for db in tle tle_wrong tle_fresh tle_restored; do
    psql_at upgrade "$PORT" "$db" -c "CREATE EXTENSION pg_tle"
done
psql_at upgrade "$PORT" postgres -c "GRANT pgtle_admin TO idgen_owner"
run_as() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U "$@"; }
as_owner() { run_as idgen_owner "$@"; }
value() { as_owner -d "$1" -tA -c "$2"; }

# refused WHAT SQLSTATE MESSAGE COMMAND...: COMMAND fails with SQLSTATE and MESSAGE (a grep
# pattern of the ERROR line).
refused() {
    local what=$1 state=$2 message=$3 out
    shift 3
    out=$("$@" -v VERBOSITY=verbose 2>&1) && die "$what: it ran: $out"
    grep -q "ERROR:  $state: $message" <<<"$out" || die "$what: not $state $message: $out"
    echo "    refused, as expected: $what: $(grep -m1 'ERROR:' <<<"$out")"
}

# The rows made by every generator, as the writer (with the README's grants), before.
setup() {
    as_owner -d "$1" -c "UPDATE idgen.idgen_config SET worker_id = 7" \
        -c "GRANT USAGE ON SCHEMA idgen TO idgen_writer" \
        -c "GRANT SELECT ON idgen.idgen_config TO idgen_writer" \
        -c "GRANT EXECUTE ON FUNCTION idgen.gen_xid12(), idgen.gen_xid12(timestamptz), idgen.gen_snowflake(),
                                      idgen.rapkey_next(text) TO idgen_writer"
}
fill() {
    as_owner -d "$1" -c "CREATE TABLE public.things (
            n integer PRIMARY KEY,
            x idgen.xid12 NOT NULL DEFAULT idgen.gen_xid12(),
            b idgen.xid12 NOT NULL DEFAULT idgen.gen_xid12('2020-01-02 03:04:05+00'),
            s bigint NOT NULL DEFAULT idgen.gen_snowflake(),
            k idgen.rapkey NOT NULL DEFAULT idgen.rapkey_next('up.grade'))" \
        -c "GRANT SELECT, INSERT ON public.things TO idgen_writer"
    run_as idgen_writer -d "$1" -c "INSERT INTO public.things (n) SELECT generate_series(1, 1000)"
}
FINGERPRINT="SELECT md5(string_agg(t::text, ',' ORDER BY n)) FROM public.things t WHERE n <= 1000"

# Default privileges of the owner that grant everything to idgen_other: in force (a table
# created now gets them), so the upgrade's new objects would get them too.
default_privileges() {
    as_owner -d "$1" -c "ALTER DEFAULT PRIVILEGES IN SCHEMA idgen GRANT ALL ON TABLES TO idgen_other" \
        -c "ALTER DEFAULT PRIVILEGES IN SCHEMA idgen GRANT ALL ON SEQUENCES TO idgen_other" \
        -c "ALTER DEFAULT PRIVILEGES IN SCHEMA idgen GRANT ALL ON FUNCTIONS TO idgen_other" \
        -c "CREATE TABLE idgen.dp_probe ()"
    [ "$(value "$1" "SELECT has_table_privilege('idgen_other', 'idgen.dp_probe', 'SELECT')")" = t ] ||
        die "$1: the default privileges do not grant to idgen_other"
    as_owner -d "$1" -c "DROP TABLE idgen.dp_probe"
}

# check_upgraded DB FINGERPRINT: the state after V -> V2.
check_upgraded() {
    local db=$1 fingerprint=$2 got
    run_as idgen_writer -d "$db" -c "INSERT INTO public.things (n) SELECT generate_series(1001, 2000)"
    got=$(value "$db" "
        WITH t AS (SELECT n > 1000 AS new,
                          (extract(epoch FROM idgen.xid12_time(x))::bigint << 24) | idgen.xid12_counter(x) AS xv,
                          idgen.xid12_counter(b) AS bc, s, (idgen.rapkey_segments(k))[2]::bigint AS kn
                     FROM public.things),
             o AS (SELECT max(xv) xv, max(bc) bc, max(s) s, max(kn) kn, count(*) c FROM t WHERE NOT new),
             n AS (SELECT min(xv) xv, min(bc) bc, min(s) s, min(kn) kn, count(*) c FROM t WHERE new)
        SELECT concat_ws(' ',
            o.c = 1000 AND n.c = 1000 AND ($FINGERPRINT) = '$fingerprint',
            n.xv > o.xv, n.bc > o.bc, n.s > o.s, n.kn > o.kn,
            idgen.idgen_portable_version() = '$V2',
            idgen.idgen_upgrade_probe() = 'replaced by $V2',
            obj_description('idgen.gen_xid12()'::regprocedure, 'pg_proc') = 'changed by $V1',
            idgen.idgen_upgrade_gate() = 0,
            NOT EXISTS (SELECT FROM pg_class c, aclexplode(c.relacl) a
                         WHERE c.oid = 'idgen.idgen_upgrade_probe_state'::regclass AND a.grantee <> c.relowner),
            NOT EXISTS (SELECT FROM pg_proc p, aclexplode(p.proacl) a
                         WHERE p.pronamespace = 'idgen'::regnamespace AND p.proname LIKE 'idgen_upgrade%'
                           AND a.grantee = 'idgen_other'::regrole),
            NOT has_function_privilege('idgen_writer', 'idgen.idgen_upgrade_gate()', 'EXECUTE'),
            has_function_privilege('idgen_writer', 'idgen.gen_xid12()', 'EXECUTE')
                AND has_function_privilege('idgen_writer', 'idgen.gen_snowflake()', 'EXECUTE')
                AND has_table_privilege('idgen_writer', 'idgen.idgen_config', 'SELECT'),
            NOT has_function_privilege('idgen_other', 'idgen.gen_xid12()', 'EXECUTE')
                AND NOT has_function_privilege('idgen_other', 'idgen.gen_xid12(timestamptz)', 'EXECUTE')
                AND NOT has_function_privilege('idgen_other', 'idgen.gen_snowflake()', 'EXECUTE')
                AND NOT has_function_privilege('idgen_other', 'idgen.rapkey_next(text)', 'EXECUTE'),
            NOT EXISTS (SELECT FROM pg_proc WHERE pronamespace = 'idgen'::regnamespace AND proowner <> 'idgen_owner'::regrole)
                AND NOT EXISTS (SELECT FROM pg_class WHERE relnamespace = 'idgen'::regnamespace AND relowner <> 'idgen_owner'::regrole))
          FROM o, n")
    echo "    $db: old rows unchanged; xid12, backfill xid12, Snowflake, rapkey above the old; version $V2;" \
        "new function, comment, gate; no default grants on the new objects; writer's grants kept;" \
        "gates closed; one owner: $got"
    [ "$got" = "t t t t t t t t t t t t t t t" ] || die "$db after the upgrade: $got"
}

# The schema's objects (functions, relations, columns, types, constraints, comments, owners,
# grants), one a line, without the synthetic upgrades' own objects and gen_xid12()'s comment.
CATALOG="
    SELECT 'function ' || p.oid::regprocedure || ' ' || p.proowner::regrole || ' ' || coalesce(p.proacl::text, '-')
           || ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), '-') AS line
      FROM pg_proc p WHERE p.pronamespace = 'idgen'::regnamespace AND p.proname NOT LIKE 'idgen_upgrade%'
       AND p.oid <> 'idgen.gen_xid12()'::regprocedure
    UNION ALL
    SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' ' || c.relowner::regrole || ' ' || coalesce(c.relacl::text, '-')
           || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '-') || ' '
           || coalesce((SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull::text
                                          || ':' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ',' ORDER BY a.attnum)
                          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
      FROM pg_class c WHERE c.relnamespace = 'idgen'::regnamespace AND c.relname NOT LIKE 'idgen_upgrade%'
    UNION ALL
    SELECT 'type ' || t.typname || ' ' || t.typowner::regrole || ' ' || coalesce(t.typacl::text, '-') || ' '
           || format_type(t.typbasetype, t.typtypmod) || ' ' || coalesce(obj_description(t.oid, 'pg_type'), '-')
      FROM pg_type t WHERE t.typnamespace = 'idgen'::regnamespace AND t.typname NOT LIKE '%idgen_upgrade%'
    UNION ALL
    SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(oid)
      FROM pg_constraint WHERE connamespace = 'idgen'::regnamespace AND conname NOT LIKE 'idgen_upgrade%'
    UNION ALL
    SELECT 'trigger ' || tgname || ' ' || pg_get_triggerdef(oid)
      FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'idgen'::regnamespace)
    ORDER BY 1"

say "plain script: $V from portable/dist, as idgen_owner (not superuser)"
as_owner -d plain -v schema=idgen -f "$DIST/pg_idgen_portable--$V.sql"
setup plain
fill plain
before=$(value plain "$FINGERPRINT")
state="SELECT idgen.idgen_portable_version() || ' ' || (SELECT count(*) FROM pg_proc WHERE pronamespace = 'idgen'::regnamespace)
              || ' ' || ($FINGERPRINT)"
state_before=$(value plain "$state")

say "plain script: what is refused, and what does nothing"
out=$(as_owner -d plain -v schema=idgen -f "$DIST/pg_idgen_portable--$V.sql" 2>&1)
grep -q "NOTICE:  pg_idgen portable $V is already installed in schema idgen: nothing done" <<<"$out" ||
    die "the $V install again: $out"
echo "    the $V install again: $out"
refused "the $V2 install over $V" 42710 "pg_idgen portable $V is already installed in schema idgen; this script installs $V2" \
    as_owner -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V2.sql"
out=$(as_owner -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V2.sql" 2>&1 || true)
grep -q "HINT:  Upgrade it instead: run pg_idgen_portable--$V--<next>.sql" <<<"$out" || die "the $V2 install's hint: $out"
refused "$V1 -> $V2 over $V" 22023 "pg_idgen portable: schema idgen has version $V; this script upgrades $V1 to $V2" \
    as_owner -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V1--$V2.sql"
refused "$V -> $V1 as a superuser (not the installing role)" 42501 \
    "pg_idgen portable: schema idgen holds pg_idgen portable installed by idgen_owner, not by postgres" \
    run_as postgres -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V--$V1.sql"
refused "$V -> $V1 into a schema without the edition" 42704 "pg_idgen portable is not installed in schema public" \
    as_owner -d plain -v schema=public -f "$NEW/pg_idgen_portable--$V--$V1.sql"
out=$(as_owner -d plain -f "$NEW/pg_idgen_portable--$V--$V1.sql" 2>&1 || true)
grep -q "give the schema to upgrade" <<<"$out" || die "the upgrade ran without -v schema: $out"
refused "$V -> $V1 naming a schema that could end a quoted string" 22P02 \
    "invalid character in extension \"pg_idgen\" schema: must not contain any of \"\"\$'\\\\\"" \
    as_owner -d plain -v "schema=id'gen" -f "$NEW/pg_idgen_portable--$V--$V1.sql"
# An object another role made in the schema while it could CREATE there (an upgrade binds new
# SQL bodies to the names it finds): refused until it is gone.
plant() {
    as_owner -d "$1" -c "GRANT CREATE ON SCHEMA idgen TO idgen_other"
    run_as idgen_other -d "$1" -c "CREATE FUNCTION idgen.to_timestamp(bigint) RETURNS timestamptz
                                       LANGUAGE sql RETURN pg_catalog.to_timestamp(\$1::float8)"
    as_owner -d "$1" -c "REVOKE CREATE ON SCHEMA idgen FROM idgen_other"
}
plant plain
refused "$V -> $V1 over an object of another role in the schema" 42501 \
    "pg_idgen portable: schema idgen holds objects of other roles: function idgen.to_timestamp(bigint) (owner idgen_other)" \
    as_owner -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V--$V1.sql"
as_owner -d plain -c "DROP FUNCTION idgen.to_timestamp(bigint)"
[ "$(value plain "$state")" = "$state_before" ] || die "a refused script changed the schema: $(value plain "$state")"

say "plain script: upgrade $V -> $V1 -> $V2, with default privileges granting all to idgen_other"
default_privileges plain
# (With the guard's setting on in the session, as if it had found V1 there: it upgrades.)
PGOPTIONS="-c idgen_portable.nothing_to_do=on" as_owner -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V--$V1.sql"
[ "$(value plain "SELECT idgen.idgen_portable_version() || ' ' || idgen.idgen_upgrade_probe()")" = "$V1 added by $V1" ] ||
    die "after $V -> $V1: $(value plain "SELECT idgen.idgen_portable_version()")"
out=$(as_owner -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V--$V1.sql" 2>&1)
grep -q "NOTICE:  pg_idgen portable $V1 is already installed in schema idgen: nothing done" <<<"$out" ||
    die "$V -> $V1 again: $out"
echo "    $V -> $V1 again: $out"
refused "$V1 -> $V2 leaving its gate executable by PUBLIC" 42501 \
    "pg_idgen portable: the upgrade leaves SECURITY DEFINER functions executable by PUBLIC: \(idgen\.\)\?idgen_upgrade_gate()" \
    as_owner -d plain -v schema=idgen -f "$WORK/dist-bad/pg_idgen_portable--$V1--$V2.sql"
[ "$(value plain "SELECT idgen.idgen_portable_version() || ' ' || (to_regprocedure('idgen.idgen_upgrade_gate()') IS NULL)")" = "$V1 true" ] ||
    die "the refused upgrade left something behind"
as_owner -d plain -v schema=idgen -f "$NEW/pg_idgen_portable--$V1--$V2.sql"
check_upgraded plain "$before"

say "plain script: the upgraded schema against a fresh $V2 install"
as_owner -d plain_fresh -v schema=idgen -f "$NEW/pg_idgen_portable--$V2.sql"
setup plain_fresh
refused "the $V install over $V2" 42710 "pg_idgen portable $V2 is already installed in schema idgen; this script installs $V" \
    as_owner -d plain_fresh -v schema=idgen -f "$DIST/pg_idgen_portable--$V.sql"
out=$(as_owner -d plain_fresh -v schema=idgen -f "$DIST/pg_idgen_portable--$V.sql" 2>&1 || true)
grep -q "HINT:  There are no downgrades." <<<"$out" || die "the $V install over $V2, its hint: $out"
value plain "$CATALOG" >"$WORK/catalog-upgraded"
value plain_fresh "$CATALOG" >"$WORK/catalog-fresh"
diff "$WORK/catalog-fresh" "$WORK/catalog-upgraded" || die "the upgraded schema differs from a fresh $V2 install (above)"
echo "    the same $(wc -l <"$WORK/catalog-fresh") functions, relations, types, constraints and triggers (owners, grants, definitions, comments)"

say "TLE: $V from portable/dist, CREATE EXTENSION pg_idgen as idgen_owner (pgtle_admin, not superuser)"
for db in tle tle_wrong; do
    as_owner -d "$db" -f "$DIST/pg_idgen_tle--$V.sql" >/dev/null
    as_owner -d "$db" -c "CREATE SCHEMA idgen" -c "CREATE EXTENSION pg_idgen SCHEMA idgen"
done
setup tle
fill tle
before=$(value tle "$FINGERPRINT")

say "TLE: what is refused"
refused "the plain $V install into the extension's schema" 55000 "pg_idgen portable: schema idgen holds the extension pg_idgen $V" \
    as_owner -d tle -v schema=idgen -f "$DIST/pg_idgen_portable--$V.sql"
refused "the plain $V -> $V1 upgrade of the extension's schema" 55000 "pg_idgen portable: schema idgen holds the extension pg_idgen $V" \
    as_owner -d tle -v schema=idgen -f "$NEW/pg_idgen_portable--$V--$V1.sql"
# V1 -> V2 alone: pg_tle refuses a default version no installed path reaches (from V), and the
# script's transaction installs nothing.
refused "the $V1 -> $V2 update script over $V" 42704 "extension and version do not exist" \
    as_owner -d tle_wrong -f "$NEW/pg_idgen_tle--$V1--$V2.sql"
[ "$(value tle_wrong "SELECT count(*) FROM pg_proc WHERE pronamespace = 'pgtle'::regnamespace AND proname LIKE 'pg_idgen--%'")" = 1 ] ||
    die "the refused update script left a path behind: $(value tle_wrong "SELECT string_agg(proname, ' ') FROM pg_proc WHERE proname LIKE 'pg_idgen%'")"
out=$(as_owner -d tle_wrong -c "ALTER EXTENSION pg_idgen UPDATE" 2>&1)
grep -q "version \"$V\" of extension \"pg_idgen\" is already installed" <<<"$out" || die "ALTER EXTENSION UPDATE in tle_wrong: $out"
[ "$(value tle_wrong "SELECT extversion || ' ' || idgen.idgen_portable_version() FROM pg_extension WHERE extname = 'pg_idgen'")" = "$V $V" ] ||
    die "the refused update changed tle_wrong"

say "TLE: update $V -> $V1 -> $V2, with default privileges granting all to idgen_other"
default_privileges tle
as_owner -d tle -f "$NEW/pg_idgen_tle--$V--$V1.sql" >/dev/null
plant tle
refused "ALTER EXTENSION pg_idgen UPDATE over an object of another role in the schema" 42501 \
    "pg_idgen portable: schema idgen holds objects of other roles: function idgen.to_timestamp(bigint) (owner idgen_other)" \
    as_owner -d tle -c "ALTER EXTENSION pg_idgen UPDATE"
as_owner -d tle -c "DROP FUNCTION idgen.to_timestamp(bigint)"
as_owner -d tle -c "ALTER EXTENSION pg_idgen UPDATE"
[ "$(value tle "SELECT extversion || ' ' || idgen.idgen_portable_version() FROM pg_extension WHERE extname = 'pg_idgen'")" = "$V1 $V1" ] ||
    die "after ALTER EXTENSION pg_idgen UPDATE to $V1"
out=$(as_owner -d tle -c "ALTER EXTENSION pg_idgen UPDATE" 2>&1)
grep -q "version \"$V1\" of extension \"pg_idgen\" is already installed" <<<"$out" || die "ALTER EXTENSION UPDATE again: $out"
echo "    ALTER EXTENSION pg_idgen UPDATE again: $out"
as_owner -d tle -f "$WORK/dist-bad/pg_idgen_tle--$V1--$V2.sql" >/dev/null
refused "ALTER EXTENSION pg_idgen UPDATE with a $V1 -> $V2 leaving its gate executable by PUBLIC" 42501 \
    "pg_idgen portable: the upgrade leaves SECURITY DEFINER functions executable by PUBLIC: \(idgen\.\)\?idgen_upgrade_gate()" \
    as_owner -d tle -c "ALTER EXTENSION pg_idgen UPDATE"
# A fixed update script replaces the broken one.
as_owner -d tle -c "SELECT pgtle.uninstall_update_path('pg_idgen', '$V1', '$V2')" >/dev/null
as_owner -d tle -f "$NEW/pg_idgen_tle--$V1--$V2.sql" >/dev/null
as_owner -d tle -c "ALTER EXTENSION pg_idgen UPDATE"
check_upgraded tle "$before"
as_owner -d tle -c "INSERT INTO idgen.idgen_upgrade_probe_state VALUES ('kept by pg_dump')"
got=$(value tle "SELECT concat_ws(' ',
        (SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen') = '$V2',
        (SELECT count(*) FROM pg_depend WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen') AND deptype = 'e'
            AND ((classid = 'pg_proc'::regclass AND objid IN ('idgen.idgen_upgrade_probe()'::regprocedure, 'idgen.idgen_upgrade_gate()'::regprocedure))
                 OR (classid = 'pg_class'::regclass AND objid = 'idgen.idgen_upgrade_probe_state'::regclass))) = 3,
        EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_idgen' AND 'idgen.idgen_upgrade_probe_state'::regclass = ANY (extconfig)))")
echo "    tle: extversion $V2, the new objects members of the extension, the new table in its pg_dump configuration: $got"
[ "$got" = "t t t" ] || die "tle after the update: $got"
"$BINDIR/pg_dump" -h "$SOCK" -p "$PORT" -U idgen_owner -d tle --extension=pg_idgen --exclude-schema=pgtle -f "$WORK/tle.sql"
grep -q '^CREATE EXTENSION IF NOT EXISTS pg_idgen WITH SCHEMA idgen;' "$WORK/tle.sql" || die "the dump does not say CREATE EXTENSION pg_idgen"
! grep -q 'CREATE FUNCTION idgen\.' "$WORK/tle.sql" || die "the dump carries the extension's functions"
grep -A2 '^COPY idgen.idgen_upgrade_probe_state ' "$WORK/tle.sql" | grep -q '^kept by pg_dump$' ||
    die "the dump does not carry the new configuration table's rows"
echo "    pg_dump: CREATE EXTENSION pg_idgen, no function of it, the new table's row"
# Restored by the owner into a database where the TLE's install and update scripts ran.
as_owner -d tle_restored -f "$DIST/pg_idgen_tle--$V.sql" >/dev/null
as_owner -d tle_restored -f "$NEW/pg_idgen_tle--$V--$V1.sql" >/dev/null
as_owner -d tle_restored -f "$NEW/pg_idgen_tle--$V1--$V2.sql" >/dev/null
as_owner -d tle_restored -f "$WORK/tle.sql" >/dev/null 2>"$WORK/restore.err" || { cat "$WORK/restore.err"; die "restoring the dump failed"; }
got=$(value tle_restored "SELECT concat_ws(' ', (SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'),
        idgen.idgen_portable_version(), (SELECT count(*) FROM public.things), (SELECT k FROM idgen.idgen_upgrade_probe_state),
        ($FINGERPRINT) = '$before', (SELECT worker_id FROM idgen.idgen_config))")
echo "    restored: $got"
[ "$got" = "$V2 $V2 2000 kept by pg_dump t 7" ] || die "the restored dump: $got"

say "TLE: CREATE EXTENSION pg_idgen in a fresh database with the two update paths installed"
as_owner -d tle_fresh -f "$DIST/pg_idgen_tle--$V.sql" >/dev/null
as_owner -d tle_fresh -f "$NEW/pg_idgen_tle--$V--$V1.sql" >/dev/null
as_owner -d tle_fresh -f "$NEW/pg_idgen_tle--$V1--$V2.sql" >/dev/null
as_owner -d tle_fresh -c "CREATE SCHEMA idgen" -c "CREATE EXTENSION pg_idgen SCHEMA idgen"
got=$(value tle_fresh "SELECT extversion || ' ' || idgen.idgen_portable_version() || ' ' || idgen.idgen_upgrade_probe()
                         FROM pg_extension WHERE extname = 'pg_idgen'")
echo "    tle_fresh: $got"
[ "$got" = "$V2 $V2 replaced by $V2" ] || die "CREATE EXTENSION in tle_fresh: $got"

say "the portable upgrade path on PostgreSQL $PG_MAJOR: passed ($(($(date +%s) - started)) s)"
