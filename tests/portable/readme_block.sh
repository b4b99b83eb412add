#!/usr/bin/env bash
# tests/portable/readme_block.sh PGVERSION: runs README.md's "On a managed service" block as
# written (the first ```sh block after the marker <!-- managed-service), the way a user on a
# managed service would: as a role that owns its database and has no other rights (NOSUPERUSER
# NOCREATEROLE NOCREATEDB, as tests/portable/run.sh sets it up), on a fresh cluster of its own
# without the native extension preloaded, from the repository's root, with DATABASE_URL naming
# that database. It passes when the block succeeds, its output shows the ids it made (two
# xid12, a Snowflake id, a rapkey) and it leaves the edition installed in schema idgen, owned
# by that role, and nothing else behind.
#
# Port 54533 (PORTABLE_README_PORT), clusters under /var/tmp/pg_idgen_portable_readme
# (PG_IDGEN_CLUSTERS). It installs nothing into PostgreSQL, so it does not need the lock the
# other scripts share (PG_IDGEN_LOCKED=1 unless set).
set -euo pipefail
MAJOR=${1:?usage: tests/portable/readme_block.sh PGVERSION (14 .. 19)}
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1}
export PG_IDGEN_CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen_portable_readme}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"
PORT=${PORTABLE_README_PORT:-54533}
use_private_postgres "$MAJOR"

# The block: from the marker, the first ```sh fence to its closing fence.
BLOCK=$(awk '/<!-- managed-service/ { found = 1; next }
             found && !inside && /^```sh$/ { inside = 1; next }
             inside && /^```$/ { exit }
             inside { print }' "$ROOT/README.md")
[ -n "$BLOCK" ] || die "README.md has no \`\`\`sh block after <!-- managed-service"
printf '%s\n' "$BLOCK" | sed 's/^/  | /'

say "cluster: PostgreSQL $PG_MAJOR, port $PORT (no pg_idgen preloaded)"
trap 'stop_cluster readme' EXIT
start_cluster readme "$PORT" plain
SOCK=$(socket_dir readme)
psql_at readme "$PORT" postgres \
    -c "CREATE ROLE idgen_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
    -c "CREATE DATABASE app OWNER idgen_owner"

say "the block, as idgen_owner"
start=$(date +%s)
out=$(cd "$ROOT" && DATABASE_URL="postgresql:///app?host=$SOCK&port=$PORT&user=idgen_owner" \
    bash -euo pipefail -c "$BLOCK" 2>&1) || { printf '%s\n' "$out"; die "the README block failed"; }
printf '%s\n' "$out"

# Its output shows the ids: two xid12 (20 characters of 0-9a-v ending in 0 or g) with their
# time, a Snowflake id, a rapkey under 'ord'.
xids=$(grep -cE '^ *[0-9a-v]{19}[0g] \| 20[0-9]{2}-' <<<"$out" || true)
[ "$xids" -ge 2 ] || die "the block's output shows $xids xid12 ids with their time, not 2"
grep -qE '^ *[0-9]{15,19} \| ord\.1-[0-9a-z]' <<<"$out" || die "the block's output shows no Snowflake id and rapkey"

# It ran as a role that is not a superuser, installed the edition into idgen as that role, and
# left its demo table behind it.
as_owner() { "$BINDIR/psql" -X -q -tA -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U idgen_owner -d app "$@"; }
got=$(as_owner -c "SELECT rolsuper FROM pg_roles WHERE rolname = current_user" \
               -c "SELECT nspowner::regrole FROM pg_namespace WHERE nspname = 'idgen'" \
               -c "SELECT idgen.idgen_portable_version()" \
               -c "SELECT to_regclass('idgen_try') IS NULL")
want=$(printf 'f\nidgen_owner\n%s\nt' "$(extension_version)")
[ "$got" = "$want" ] || die "after the block: $(tr '\n' ' ' <<<"$got"), expected $(tr '\n' ' ' <<<"$want")"
say "README.md's managed-service block on PostgreSQL $PG_MAJOR: passed ($(($(date +%s) - start)) s)"
