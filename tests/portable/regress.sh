#!/usr/bin/env bash
# tests/portable/regress.sh PGVERSION: runs the native regression suites (tests/regress/sql,
# tests/regress/expected) against the portable SQL edition, with pg_regress.
#
# tests/portable/regress_differences.md says how each suite of tests/regress/suites runs here:
# "unchanged" (native's expected output as it is), "differences" (native's expected output with
# the diff hunks listed and justified there, applied by patch without fuzz) or "skipped" (with
# the reason). A suite of tests/regress/suites without a row there, or a row without a suite,
# fails the run, and so does a suite whose output differs from what the file allows. A
# suite's version and ICU needs skip it as on native. The same file describes the run (roles,
# schema, configuration) and the two rules applied to every suite: the line "CREATE EXTENSION IF
# NOT EXISTS pg_idgen;" becomes a comment (in the SQL and the expected output alike), and psql
# starts with SHOW_CONTEXT never (PL/pgSQL's CONTEXT line on every error of the edition).
#
# The cluster is its own (nothing preloaded, so no pg_idgen.* setting exists), at port
# PORTABLE_REGRESS_PORT (default scripts/lib.sh PORTS[portable-regress]), under
# PG_IDGEN_CLUSTERS (default /var/tmp/pg_idgen_portable). The superuser makes the roles and the
# database regress_pg_idgen (with pg_regress's database settings); its owner,
# regress_portable_owner (NOSUPERUSER), installs portable/dist/pg_idgen_portable--<version>.sql
# into schema public and runs setup and the suites (pg_regress --use-existing). Output, with
# each suite's native expected output after the two rules (native/) for reviewing the hunks:
# target/portable-regress-pgNN. tests/portable/run.sh runs this last.
set -euo pipefail
MAJOR=${1:?usage: tests/portable/regress.sh PGVERSION (14 .. 19)}
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1}
export PG_IDGEN_CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen_portable}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"
PORT=${PORTABLE_REGRESS_PORT:-${PORTS[portable-regress]}}
use_private_postgres "$MAJOR"
VERSION=$(extension_version)
SCRIPT=$ROOT/portable/dist/pg_idgen_portable--$VERSION.sql
DIFFERENCES=$ROOT/tests/portable/regress_differences.md
OWNER=regress_portable_owner
DB=regress_pg_idgen
OUT=$ROOT/target/portable-regress-pg$PG_MAJOR
INPUT=$OUT/input

# The table of regress_differences.md: "SUITE STATUS" a line, for its rows "| suite | status | why |".
differences_table() {
    awk -F'|' '/^\| *[a-z0-9_]+ *\| *(unchanged|differences|skipped) *\|/ {
        gsub(/ /, "", $2); gsub(/ /, "", $3); print $2, $3 }' "$DIFFERENCES"
}
# The diff hunks of one suite: the ```diff blocks of its section "## SUITE".
suite_hunks() {
    awk -v want="## $1" '
        /^## / { in_suite = ($0 == want) }
        in_suite && /^```diff$/ { in_block = 1; next }
        in_block && /^```$/ { in_block = 0; next }
        in_block { print }' "$DIFFERENCES"
}
# The first rule, on a file of SQL or expected output.
portable_copy() {
    sed 's/^CREATE EXTENSION IF NOT EXISTS pg_idgen;$/-- portable: CREATE EXTENSION IF NOT EXISTS pg_idgen; (the plain script installed the edition)/' "$1" >"$2"
}

command -v patch >/dev/null || ensure_packages patch

say "portable/dist matches portable/src"
python3 "$ROOT/portable/build.py" --check

TABLE=$(differences_table)
NATIVE_TABLE=$(regress_table)
while read -r name _; do
    grep -q "^$name " <<<"$TABLE" || die "tests/regress/suites has $name; $DIFFERENCES has no row for it"
done <<<"$NATIVE_TABLE"
while read -r name status; do
    grep -q "^$name " <<<"$NATIVE_TABLE" || die "$DIFFERENCES has a row for $name, which tests/regress/suites does not have"
    hunks=$(suite_hunks "$name")
    case $status in
        differences) [ -n "$hunks" ] || die "$DIFFERENCES: $name has differences but its section lists no diff" ;;
        *) [ -z "$hunks" ] || die "$DIFFERENCES: $name is $status but its section lists a diff" ;;
    esac
done <<<"$TABLE"
[ "$(cut -d' ' -f1 <<<"$TABLE" | sort | uniq -d)" = "" ] || die "$DIFFERENCES: a suite has two rows"
grep -q '^setup unchanged$' <<<"$TABLE" || die "$DIFFERENCES: setup (the helpers every suite uses) must run unchanged"

# The input of pg_regress: the suites that run here, each with the expected output it must give.
rm -rf "$OUT"
mkdir -p "$INPUT/sql" "$INPUT/expected" "$OUT/native"
TESTS=()
unchanged=0 changed=0 skipped=0 why_skipped=()
while read -r name needs; do
    status=$(grep "^$name " <<<"$TABLE" | cut -d' ' -f2)
    native_needs=$(tr ',' '\n' <<<"$needs" | grep -Ev '^(preload|plain|no-settings)$' | paste -sd, || true)
    why=$(regress_why_not "$native_needs" "$PG_MAJOR" yes "$HAS_ICU" "") || die "tests/regress/suites: the row of $name"
    if [ "$status" = skipped ] || [ -n "$why" ]; then
        skipped=$((skipped + 1))
        [ "$status" = skipped ] || why_skipped+=("$name: $why")
        continue
    fi
    portable_copy "$ROOT/tests/regress/sql/$name.sql" "$INPUT/sql/$name.sql"
    portable_copy "$ROOT/tests/regress/expected/$name.out" "$OUT/native/$name.out"
    cp "$OUT/native/$name.out" "$INPUT/expected/$name.out"
    if [ "$status" = differences ]; then
        { printf -- '--- %s.out\n+++ %s.out\n' "$name" "$name"; suite_hunks "$name"; } >"$OUT/$name.patch"
        patch --quiet --fuzz=0 --no-backup-if-mismatch --reject-file=- "$INPUT/expected/$name.out" "$OUT/$name.patch" >"$OUT/$name.patch.log" 2>&1 ||
            die "the differences of $name ($DIFFERENCES) no longer apply to tests/regress/expected/$name.out: $(cat "$OUT/$name.patch.log")"
        changed=$((changed + 1))
    else
        unchanged=$((unchanged + 1))
    fi
    # PostgreSQL 19 words "does not exist" for functions and operators otherwise (a DETAIL
    # first): pg_regress's alternative expected file NAME_1.out holds that wording.
    if [ "$PG_MAJOR" -ge 19 ] && grep -Eq '^HINT:  No (function|operator) matches the given name' "$INPUT/expected/$name.out"; then
        sed -e 's/^HINT:  No function matches the given name and argument types\. You might need to add explicit type casts\.$/DETAIL:  There is no function of that name./' \
            -e 's/^HINT:  No operator matches the given name and argument types\. You might need to add explicit type casts\.$/DETAIL:  No operator of that name accepts the given argument types.\nHINT:  You might need to add explicit type casts./' \
            "$INPUT/expected/$name.out" >"$INPUT/expected/${name}_1.out"
    fi
    TESTS+=("$name")
done <<<"$NATIVE_TABLE"

say "cluster: PostgreSQL $PG_MAJOR, port $PORT, the library not preloaded"
trap 'stop_cluster portable-regress' EXIT
start_cluster portable-regress "$PORT" plain
SOCK=$(socket_dir portable-regress)
# The database as pg_regress makes it (pg_regress.c, create_database); lc_messages needs a superuser.
# The owner may create roles (as a managed service's database owner may). Two roles the suites
# create and SET ROLE to exist already, given to the owner WITH ADMIN OPTION, so that the owner
# can SET ROLE to them and drop them on every version (a role the owner created itself it could
# not SET ROLE to, on any version here): xid12_generate's idgen_plain_user, made with what a
# writer is granted, and registry_security's writer regress_sec_w1, with nothing.
psql_at portable-regress "$PORT" postgres \
    -c "CREATE ROLE $OWNER LOGIN NOSUPERUSER CREATEROLE NOCREATEDB" \
    -c "CREATE ROLE regress_portable_writer NOLOGIN" \
    -c "CREATE ROLE idgen_plain_user IN ROLE regress_portable_writer" \
    -c "GRANT idgen_plain_user TO $OWNER WITH ADMIN OPTION" \
    -c "CREATE ROLE regress_sec_w1 NOLOGIN" \
    -c "GRANT regress_sec_w1 TO $OWNER WITH ADMIN OPTION" \
    -c "CREATE DATABASE $DB OWNER $OWNER TEMPLATE template0" \
    -c "ALTER DATABASE $DB SET lc_messages TO 'C'" -c "ALTER DATABASE $DB SET lc_monetary TO 'C'" \
    -c "ALTER DATABASE $DB SET lc_numeric TO 'C'" -c "ALTER DATABASE $DB SET lc_time TO 'C'" \
    -c "ALTER DATABASE $DB SET bytea_output TO 'hex'" -c "ALTER DATABASE $DB SET timezone_abbreviations TO 'Default'"
as_owner() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U "$OWNER" -d "$DB" "$@"; }

say "install into schema public as $OWNER"
# Schema public is pg_database_owner's from PostgreSQL 15 (the owner could take it itself), the
# bootstrap superuser's on 14: the superuser gives it to the owner on every version.
psql_at portable-regress "$PORT" "$DB" -c "ALTER SCHEMA public OWNER TO $OWNER"
as_owner -c "REVOKE CREATE ON SCHEMA public FROM PUBLIC"
as_owner -v schema=public -f "$SCRIPT"
# What the portable README has the owner grant a writer; a machine id of its own (0x123456), or
# it would be derived from the cluster's identity and start time, different in every run.
as_owner -c "GRANT EXECUTE ON FUNCTION gen_xid12(), gen_xid12(timestamptz), gen_snowflake(), rapkey_next(text) TO regress_portable_writer" \
    -c "GRANT SELECT ON idgen_config TO regress_portable_writer" \
    -c "UPDATE idgen_config SET machine_id = 1193046"
as_owner -tAc "SELECT 'installed pg_idgen portable ' || idgen_portable_version() || ' into schema public as ' || current_user
               || ' (superuser: ' || (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) || ')'"

say "PostgreSQL $PG_MAJOR: the native regression suites against the portable edition"
# psql starts with SHOW_CONTEXT never (the second rule): pg_regress runs it through this launcher.
printf '#!/bin/sh\nexec "$@" -v SHOW_CONTEXT=never\n' >"$OUT/psql_launcher"
chmod +x "$OUT/psql_launcher"
"$PG_REGRESS" --bindir="$BINDIR" --host="$SOCK" --port="$PORT" --user="$OWNER" --use-existing \
    --launcher="$OUT/psql_launcher" \
    --inputdir="$INPUT" --outputdir="$OUT" --dbname="$DB" "${TESTS[@]}" ||
    { head -300 "$OUT/regression.diffs" 2>/dev/null; die "the portable edition differs from native beyond $DIFFERENCES"; }
# The suites used the edition, never a native extension.
as_owner -tAc "SELECT count(*) FROM pg_extension WHERE extname = 'pg_idgen'" | grep -qx 0 ||
    die "an extension pg_idgen exists in $DB"

for line in "${why_skipped[@]}"; do echo "skipped here: $line"; done
say "portable edition against the native suites on PostgreSQL $PG_MAJOR: suites: $unchanged unchanged, $changed with listed differences, $skipped skipped (tests/portable/regress_differences.md)"
