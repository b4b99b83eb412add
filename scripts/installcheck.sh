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
# Which suites run depends on the server:
#   library preloaded (shared_preload_libraries has pg_idgen): setup xid12_io xid12_index
#     xid12_generate snowflake rapkey search_path encodings permissions, soft_errors (16+),
#     on_error (17+), rapkey_icu (server with ICU). snowflake sets and resets the pg_idgen
#     settings with ALTER SYSTEM, so it runs only when no configuration file sets any
#     pg_idgen.* setting; otherwise it is skipped, and said so.
#   library not preloaded: no_preload.
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

preloaded_suites="setup xid12_io xid12_index xid12_generate"
if [ -z "$settings" ]; then preloaded_suites="$preloaded_suites snowflake"; fi
preloaded_suites="$preloaded_suites rapkey search_path encodings permissions"
[ "$server_major" -ge 16 ] && preloaded_suites="$preloaded_suites soft_errors"
[ "$server_major" -ge 17 ] && preloaded_suites="$preloaded_suites on_error"
[ "$icu" = yes ] && preloaded_suites="$preloaded_suites rapkey_icu"

say "PostgreSQL $server_major server at ${PGHOST:-(default)}:${PGPORT:-5432}, library preloaded: $preloaded"
echo "Suites that need pg_idgen in shared_preload_libraries: $preloaded_suites"
echo "Suite that needs it not preloaded: no_preload"
[ -n "$settings" ] && echo "Skipped: snowflake (it sets and resets pg_idgen settings with ALTER SYSTEM; this server's configuration sets $settings)"
[ "$icu" = yes ] || echo "Skipped: rapkey_icu (the server has no ICU)"
if [ "$preloaded" = yes ]; then suites=$preloaded_suites; else suites=no_preload; fi
echo "Running: $suites"

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
