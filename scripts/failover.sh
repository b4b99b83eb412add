#!/usr/bin/env bash
# The server's Snowflake generator across a failover (issue 26): a primary and a streaming
# standby (pg_basebackup -R), both preloaded with the same pg_idgen.worker_id. The primary
# issues ids under load (4 pgbench clients inserting gen_snowflake() into a table) and is
# stopped with pg_ctl stop -m immediate; the standby, whose clock is 3 s behind (libfaketime),
# is promoted and issues ids into the same table, which holds the primary's replicated rows.
#
# Checked on PostgreSQL 15 and later (the lease travels in WAL, src/snowflake/wal.rs):
#  - while in recovery, gen_snowflake() on the standby is an error (25006);
#  - after the promotion no id repeats, and every id the new primary issued is above every id
#    of the old primary that reached it (refused with 55000 until its clock has passed the
#    last lease, never issued below it).
# On PostgreSQL 14 (no custom WAL resource managers) the same run shows the documented
# behaviour: the standby starts from its mark file as old as its base backup, so with a clock
# behind, its ids can repeat the old primary's; the script reports how many did and does not
# fail on them.
#
#   bash scripts/failover.sh [--installed] [VERSION]
#
# --installed: the extension is already installed into that version's PostgreSQL (test.sh
# passes it); without it the script installs a debug build first. Ports: scripts/lib.sh's PORTS
# (fo-primary, fo-standby).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INSTALLED=no
if [ "${1:-}" = --installed ]; then INSTALLED=yes; shift; fi
VERSION=${1:-18}
PRIMARY=fo-primary
STANDBY=fo-standby
PRIMARY_PORT=${PORTS[$PRIMARY]}
STANDBY_PORT=${PORTS[$STANDBY]}
# How far the standby's clock is behind.
SKEW_S=3
trap 'stop_cluster $PRIMARY; stop_cluster $STANDBY' EXIT
export PGCTLTIMEOUT=${PGCTLTIMEOUT:-300}

# q CLUSTER PORT SQL: one value, unaligned.
q() { psql_at "$1" "$2" postgres -At -c "$3"; }

# wait_for CLUSTER PORT SQL SECONDS: polls until SQL returns t, for at most SECONDS.
wait_for() {
    local deadline=$((SECONDS + $4))
    while [ "$SECONDS" -lt "$deadline" ]; do
        [ "$(q "$1" "$2" "$3" 2>/dev/null)" = t ] && return 0
        sleep 0.2
    done
    die "timed out after $4 s waiting on $1 for: $3 (server log: $CLUSTERS/$1/server.log)"
}

libfaketime() {
    local lib
    for lib in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
        [ -e "$lib" ] && { echo "$lib"; return; }
    done
    return 1
}

# load CLUSTER PORT NODE SECONDS: 4 pgbench clients insert gen_snowflake() ids, 200 a
# statement, tagged NODE, for at most SECONDS; errors (the stop) end it.
load() {
    "$BINDIR/pgbench" -n -c 4 -j 2 -T "$4" -f "$OUT/insert-$3.sql" \
        -h "$(socket_dir "$1")" -p "$2" -U postgres postgres >"$OUT/pgbench-$3.log" 2>&1 || true
}

use_postgres "$VERSION"
[ "$INSTALLED" = yes ] || install_extension debug
OUT=$ROOT/target/failover-pg$PG_MAJOR
rm -rf "$OUT"
mkdir -p "$OUT"
chmod 755 "$OUT"
for node in primary standby; do
    echo "INSERT INTO ids (id, node) SELECT gen_snowflake(), '$node' FROM generate_series(1, 200);" \
        >"$OUT/insert-$node.sql"
done
FAKETIME_LIB=$(libfaketime) || { ensure_packages faketime; FAKETIME_LIB=$(libfaketime); } ||
    die "libfaketime not found (Debian package faketime)"

say "PostgreSQL $PG_MAJOR: a primary and a streaming standby, worker_id 5 on both"
start_cluster $PRIMARY "$PRIMARY_PORT" preload "pg_idgen.worker_id = 5"
psql_at $PRIMARY "$PRIMARY_PORT" postgres -c "CREATE EXTENSION pg_idgen" \
    -c "CREATE TABLE ids (id bigint NOT NULL, node text NOT NULL)"
# The base backup carries the primary's mark file as it is now: nothing issued yet.
stop_cluster $STANDBY
$SUDO rm -rf "${CLUSTERS:?}/$STANDBY"
$SUDO mkdir -p "$CLUSTERS/$STANDBY/sock"
echo "$BINDIR" | $SUDO tee "$CLUSTERS/$STANDBY/bindir" >/dev/null
$SUDO chown -R postgres:postgres "$CLUSTERS/$STANDBY"
as_postgres "$BINDIR/pg_basebackup" -D "$CLUSTERS/$STANDBY/data" -R -X stream -c fast \
    -h "$(socket_dir $PRIMARY)" -p "$PRIMARY_PORT" -U postgres
as_postgres tee -a "$CLUSTERS/$STANDBY/data/postgresql.conf" >/dev/null <<CONF
port = $STANDBY_PORT
unix_socket_directories = '$CLUSTERS/$STANDBY/sock'
# The WAL since the promotion stays for pg_walinspect below.
wal_keep_size = '2GB'
CONF
# pg_basebackup -R writes every option its libpq knows into primary_conninfo; the server's
# walreceiver may link an older libpq that refuses some (sslnegotiation): only what is needed.
as_postgres tee -a "$CLUSTERS/$STANDBY/data/postgresql.auto.conf" >/dev/null <<CONF
primary_conninfo = 'host=$(socket_dir $PRIMARY) port=$PRIMARY_PORT user=postgres'
CONF
# The standby's clock: SKEW_S seconds behind (the monotonic clock, which PostgreSQL's timeouts
# use, is left alone).
as_postgres env LD_PRELOAD="$FAKETIME_LIB" FAKETIME="-${SKEW_S}s" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    "$BINDIR/pg_ctl" -D "$CLUSTERS/$STANDBY/data" -l "$CLUSTERS/$STANDBY/server.log" -w start >/dev/null 9<&-
behind=$(q $STANDBY "$STANDBY_PORT" "SELECT round(extract(epoch FROM now()) * 1000)::bigint")
behind=$(($(date +%s%3N) - behind))
echo "the standby's clock is $behind ms behind"
[ "$behind" -ge $((SKEW_S * 1000 - 500)) ] || die "libfaketime did not set the standby's clock back"
wait_for $STANDBY "$STANDBY_PORT" "SELECT count(*) = 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'" 120

say "the writer registry on the primary: a grant before the failover"
read -r grant_id grant_token <<<"$(q $PRIMARY "$PRIMARY_PORT" \
    "SELECT grant_id, token FROM idgen_acquire('xid12', 'before-failover', '10 minutes')" | tr '|' ' ')"
echo "grant $grant_id of xid12 machine id $(q $PRIMARY "$PRIMARY_PORT" "SELECT slot FROM idgen_grants WHERE grant_id = $grant_id")"
wait_for $STANDBY "$STANDBY_PORT" "SELECT count(*) = 1 FROM idgen_registry_grant WHERE grant_id = $grant_id" 120

say "a standby in recovery issues no id"
if q $STANDBY "$STANDBY_PORT" "SELECT gen_snowflake()" >"$OUT/standby-recovery.out" 2>&1; then
    die "gen_snowflake() on a standby in recovery returned $(cat "$OUT/standby-recovery.out")"
fi
grep -q "cannot generate snowflake ids during recovery" "$OUT/standby-recovery.out" ||
    { cat "$OUT/standby-recovery.out"; die "gen_snowflake() on a standby failed, but not with the recovery error"; }
cat "$OUT/standby-recovery.out"

say "the primary issues ids under load, then pg_ctl stop -m immediate"
load $PRIMARY "$PRIMARY_PORT" primary 60 &
load_pid=$!
# Stop in the middle of the load, once it has run about 2 s and its rows reach the standby.
wait_for $STANDBY "$STANDBY_PORT" "SELECT count(*) >= 20000 FROM ids" 120
sleep 2
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/$PRIMARY/data" -m immediate -w stop >/dev/null
wait "$load_pid" || true
grep -E "number of transactions actually processed|terminating connection|server closed" "$OUT/pgbench-primary.log" | head -3 || true

say "the standby, its clock ${SKEW_S} s behind, is promoted and issues ids"
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/$STANDBY/data" -w promote >/dev/null
wait_for $STANDBY "$STANDBY_PORT" "SELECT NOT pg_is_in_recovery()" 120
promote_lsn=$(q $STANDBY "$STANDBY_PORT" "SELECT pg_current_wal_lsn()")
primary_rows=$(q $STANDBY "$STANDBY_PORT" "SELECT count(*) FROM ids")
primary_max=$(q $STANDBY "$STANDBY_PORT" "SELECT max(id) FROM ids")
echo "the old primary's rows that reached the standby: $primary_rows, its highest id $primary_max" \
    "($(q $STANDBY "$STANDBY_PORT" "SELECT snowflake_time($primary_max)"))"
# The first id: refused (55000) while the clock is too far behind the replayed lease, then
# issued above it. A generous deadline: the refusal lasts about SKEW_S + 1 s.
refusals=0
deadline=$((SECONDS + 120))
until first=$(q $STANDBY "$STANDBY_PORT" "SELECT gen_snowflake()" 2>"$OUT/first.err"); do
    [ "$SECONDS" -lt "$deadline" ] || { cat "$OUT/first.err"; die "the promoted standby issued no id in 120 s"; }
    grep -q "behind the last snowflake id issued before the server started" "$OUT/first.err" ||
        { cat "$OUT/first.err"; die "gen_snowflake() on the promoted standby failed with an unexpected error"; }
    [ "$refusals" -gt 0 ] || cp "$OUT/first.err" "$OUT/refused.err"
    refusals=$((refusals + 1))
    sleep 0.2
done
echo "first id of the new primary: $first ($(q $STANDBY "$STANDBY_PORT" "SELECT snowflake_time($first)")), after $refusals refusals"
[ "$refusals" -eq 0 ] || sed 's/^/  the first refusal: /' "$OUT/refused.err" | head -2
q $STANDBY "$STANDBY_PORT" "INSERT INTO ids VALUES ($first, 'standby')" >/dev/null
load $STANDBY "$STANDBY_PORT" standby 2
grep -E "number of transactions actually processed" "$OUT/pgbench-standby.log" || true

say "the writer registry on the promoted standby: fenced, live grants renew"
# Grants made on the old primary just before the failover may not have reached the standby:
# the new timeline fences the registry until every such grant must have ended.
if q $STANDBY "$STANDBY_PORT" "SELECT idgen_acquire('xid12', 'after-failover')" >"$OUT/fenced.out" 2>&1; then
    die "idgen_acquire on the promoted standby granted $(cat "$OUT/fenced.out") before the fence ended"
fi
grep -q "the writer registry grants nothing in pool 'app' until" "$OUT/fenced.out" ||
    { cat "$OUT/fenced.out"; die "idgen_acquire after the promotion failed, but not with the fence's error"; }
sed 's/^/  /' "$OUT/fenced.out" | head -1
fence_until=$(sed -n "s/.*grants nothing in pool 'app' until \(.*\)$/\1/p" "$OUT/fenced.out" | head -1)
fence_end=$(q $STANDBY "$STANDBY_PORT" "SELECT round(extract(epoch FROM '$fence_until'::timestamptz - now()))::int")
echo "the fence of pool 'app' ends in $fence_end s (its longest lease, 1 hour, and 1 minute)"
[ "$fence_end" -ge 3600 ] || die "the fence ends in $fence_end s, before the longest lease of pool 'app' (3600 s)"
renewed=$(q $STANDBY "$STANDBY_PORT" "SELECT hi > now() FROM idgen_renew($grant_id, $grant_token, '10 minutes')")
[ "$renewed" = t ] || die "the grant made before the failover did not renew on the new primary"
echo "grant $grant_id, made before the failover, renews on the new primary"
q $STANDBY "$STANDBY_PORT" "SELECT timeline, fenced, reason FROM idgen_registry_origin ORDER BY seen_at" | sed 's/^/  origin: /'
q $STANDBY "$STANDBY_PORT" "SELECT idgen_registry_lift_fence()" >/dev/null
after=$(q $STANDBY "$STANDBY_PORT" "SELECT slot FROM idgen_acquire('xid12', 'after-failover', '10 minutes')")
echo "after idgen_registry_lift_fence(): granted xid12 machine id $after"
overlaps=$(q $STANDBY "$STANDBY_PORT" "SELECT count(*) FROM idgen_registry_grant a JOIN idgen_registry_grant b
    ON a.kind = b.kind AND a.slot = b.slot AND a.grant_id < b.grant_id AND a.span && b.span")
[ "$overlaps" = 0 ] || die "$overlaps pairs of grants overlap after the failover"

say "the ids after the failover"
q $STANDBY "$STANDBY_PORT" "SELECT node, count(*), min(id), max(id) FROM ids GROUP BY node ORDER BY node" |
    sed 's/^/  /'
standby_rows=$(q $STANDBY "$STANDBY_PORT" "SELECT count(*) FROM ids WHERE node = 'standby'")
duplicates=$(q $STANDBY "$STANDBY_PORT" "SELECT count(*) - count(DISTINCT id) FROM ids")
at_or_below=$(q $STANDBY "$STANDBY_PORT" "SELECT count(*) FROM ids WHERE node = 'standby' AND id <= $primary_max")
echo "the new primary issued $standby_rows ids: $duplicates repeat an id of the old primary," \
    "$at_or_below are at or below its highest replicated id"
[ "$standby_rows" -ge 1000 ] || die "the promoted standby issued too few ids to show anything ($standby_rows)"
if [ "$PG_MAJOR" -ge 15 ]; then
    # The new primary logs its own leases (docs/formats.md §7), and they cover every id it issued.
    psql_at $STANDBY "$STANDBY_PORT" postgres -c "CREATE EXTENSION pg_walinspect" >/dev/null
    read -r leases malformed max_lease <<<"$(q $STANDBY "$STANDBY_PORT" "
        SELECT count(*),
               count(*) FILTER (WHERE record_type <> 'SNOWFLAKE_LEASE'
                                   OR description !~ '^id [0-9]+ epoch [0-9]+$'),
               max(substring(description FROM '^id ([0-9]+)')::bigint)
        FROM pg_get_wal_records_info('$promote_lsn', pg_current_wal_lsn())
        WHERE resource_manager = 'pg_idgen'" | tr '|' ' ')"
    standby_max=$(q $STANDBY "$STANDBY_PORT" "SELECT max(id) FROM ids WHERE node = 'standby'")
    echo "the new primary logged $leases snowflake leases in WAL since its promotion, the highest $max_lease"
    [ "$leases" -ge 1 ] && [ "$malformed" = 0 ] ||
        die "expected SNOWFLAKE_LEASE records 'id N epoch N' of resource manager pg_idgen after the promotion ($leases, $malformed malformed)"
    [ "$max_lease" -ge "$standby_max" ] || die "the highest lease in WAL ($max_lease) is below an id issued ($standby_max)"
    [ "$duplicates" = 0 ] || die "$duplicates ids repeat after the failover"
    [ "$at_or_below" = 0 ] || die "$at_or_below ids of the new primary are at or below the old primary's highest id"
    # The unique index the application would have: it builds.
    q $STANDBY "$STANDBY_PORT" "CREATE UNIQUE INDEX ON ids (id)" >/dev/null
    say "failover test passed (PostgreSQL $PG_MAJOR)"
else
    echo "PostgreSQL $PG_MAJOR has no custom WAL resource managers: the standby's mark is its base" \
        "backup's, so ids may repeat (README, Snowflake, Not guaranteed): $duplicates did"
    say "failover test ran (PostgreSQL $PG_MAJOR: the documented behaviour, not a failure)"
fi
