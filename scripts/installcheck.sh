#!/usr/bin/env bash
# make installcheck: the SQL regression suites (tests/regress) against a running server that
# already has pg_idgen installed, named by the usual libpq variables (PGHOST, PGPORT, PGUSER;
# the user must be a superuser, and the suites that connect as roles they create need those
# roles let in without a password, as on a trust socket).
#   PGHOST=/var/run/postgresql PGPORT=5432 PGUSER=postgres bash scripts/installcheck.sh [PG_CONFIG]
# It works in a database of its own (pg_idgen_installcheck), created and dropped; the suites
# create and drop their own databases and roles, whose names it checks are free first. It
# touches nothing else, and refuses to start when a name it would use is taken.
#
# Which suites run depends on the server: each suite's row in tests/regress/suites (the table
# scripts/test.sh reads too) says what it needs: the library preloaded (every suite but
# no_preload, which needs it not preloaded), a minimum version (soft_errors 16, on_error 17),
# ICU (rapkey_icu), or no pg_idgen.* setting in a configuration file (snowflake, which sets and
# resets them with ALTER SYSTEM). It prints the suites it runs with their count, and each one it
# skips with the reason.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

use_pg_config "${1:-$(command -v pg_config || echo /usr/bin/pg_config)}"
[ -x "$PG_REGRESS" ] || die "no pg_regress at $PG_REGRESS (Debian: apt-get install postgresql-server-dev-$PG_MAJOR)"
DB=pg_idgen_installcheck
q() { "$BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres -c "$1"; }

server=$(q "SHOW server_version_num") || die "cannot connect (PGHOST=${PGHOST:-} PGPORT=${PGPORT:-} PGUSER=${PGUSER:-})"
server_major=$((server / 10000))
[ "$(q "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")" = t ] || die "PGUSER must be a superuser"
[ -n "$(q "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_idgen'")" ] ||
    die "pg_idgen is not installed in that server (make install first)"
preloaded=no
grep -qx pg_idgen <<<"$(q "SHOW shared_preload_libraries" | tr ',' '\n' | sed 's/[ "]//g')" && preloaded=yes
icu=no
# ICU collations are imported by initdb only when the server has ICU; the suite uses en-US.
[ -n "$(q "SELECT 1 FROM pg_collation WHERE collname = 'en-US-x-icu'")" ] && icu=yes
settings=$(q "SELECT string_agg(DISTINCT name, ', ') FROM pg_file_settings WHERE name LIKE 'pg_idgen.%'")

say "PostgreSQL $server_major server at ${PGHOST:-(default)}:${PGPORT:-5432}, library preloaded: $preloaded, ICU: $icu"
suites="" skipped=0 total=0
while read -r name needs; do
    total=$((total + 1))
    why=$(regress_why_not "$needs" "$server_major" "$preloaded" "$icu" "$settings") ||
        die "tests/regress/suites: the row of $name"
    if [ -n "$why" ]; then
        echo "Skipped: $name ($why)"
        skipped=$((skipped + 1))
    else
        suites="$suites $name"
    fi
done < <(regress_table)
suites=${suites# }
[ -n "$suites" ] || die "no suite applies to this server"
echo "Running $((total - skipped)) of the $total suites ($skipped skipped): $suites"

# The names the suites create must be free, so that their DROPs only drop what they made.
taken=""
[ -n "$(q "SELECT 1 FROM pg_database WHERE datname = '$DB'")" ] && taken="$taken database $DB,"
for s in $suites; do
    while read -r kind name; do
        case $kind in
            ROLE) catalog="pg_roles WHERE rolname" ;;
            DATABASE) catalog="pg_database WHERE datname" ;;
        esac
        [ -n "$(q "SELECT 1 FROM $catalog = '$name'")" ] && taken="$taken ${kind,,} $name,"
    done < <(grep -oiE 'CREATE (ROLE|DATABASE) [a-z_0-9]+' "$ROOT/tests/regress/sql/$s.sql" |
        awk '{ print toupper($2), $3 }' | sort -u)
done
[ -z "$taken" ] || die "these already exist in the server, and the suites would create and drop them:${taken%,}"

out=$(mktemp -d "${TMPDIR:-/tmp}/pg_idgen-installcheck.XXXXXX")
trap 'q "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
# shellcheck disable=SC2086
if "$PG_REGRESS" --bindir="$BINDIR" --inputdir="$ROOT/tests/regress" --outputdir="$out" \
    --dbname="$DB" $suites; then
    rm -rf "$out"
else
    head -300 "$out/regression.diffs" 2>/dev/null || true
    die "regression suites failed; the output is in $out"
fi
