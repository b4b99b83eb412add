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
# The writer registry (sql/registry.sql), on every version: grants made on the primary just
# before the stop never reach the standby (its walreceiver is stopped first: primary_conninfo
# emptied), and the same grants are missing from two restores taken before them: a base backup
# recovered to a new timeline (recovery_target 'immediate', promoted) and a pg_dump restored into
# a new cluster (another system identifier). On each of the three:
#  - exactly the lost grants are missing;
#  - every pool refuses to grant (55000) until its longest lease and the margin have passed, the
#    app pool's fence ends after every lost app grant's end, and a grant that had ended before
#    the fence is lost on renew (55000);
#  - once the fence of the short-lease pools ends (pool rows with 15 s leases, made before any
#    grant: 75 s, the four fences run together), new grants on the very slots of the
#    lost grants overlap none of the old history's grants and start after the end of every lost
#    grant of those pools.
# And the registry whose first grants are lost (issue 34): a second standby, taken right after
# CREATE EXTENSION and the pool rows, before any registry call, stops receiving at once; every
# grant of the primary is lost to it, so it sees none. Promoted after the stop, it is fenced all
# the same (the install recorded the origin; a new timeline fences whatever grants are to be
# seen): every pool refuses on both kinds (55000), and a call granted there would be shown with
# the old primary's windows it overlaps; after the fence, the same checks as above.
#
#   bash scripts/failover.sh [--installed] [VERSION]
#
# --installed: the extension is already installed into that version's PostgreSQL (test.sh
# passes it); without it the script installs a debug build first. Ports: scripts/lib.sh's PORTS
# (fo-primary, fo-standby, fo-restore, fo-dump, fo-first).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INSTALLED=no
if [ "${1:-}" = --installed ]; then INSTALLED=yes; shift; fi
VERSION=${1:-18}
PRIMARY=fo-primary
STANDBY=fo-standby
PRIMARY_PORT=${PORTS[$PRIMARY]}
STANDBY_PORT=${PORTS[$STANDBY]}
# The base backup restored to a new timeline, and the cluster the dump is restored into.
RESTORE=fo-restore
DUMPED=fo-dump
RESTORE_PORT=${PORTS[$RESTORE]}
DUMPED_PORT=${PORTS[$DUMPED]}
# The standby cut off before the registry's first grant.
FIRST=fo-first
FIRST_PORT=${PORTS[$FIRST]}
# How far the standby's clock is behind.
SKEW_S=3
trap 'stop_cluster $PRIMARY; stop_cluster $STANDBY; stop_cluster $RESTORE; stop_cluster $DUMPED; stop_cluster $FIRST' EXIT
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

# fresh_dir CLUSTER: an empty cluster directory for a data directory that pg_basebackup makes.
fresh_dir() {
    stop_cluster "$1"
    $SUDO rm -rf "${CLUSTERS:?}/$1"
    $SUDO mkdir -p "$CLUSTERS/$1/sock"
    echo "$BINDIR" | $SUDO tee "$CLUSTERS/$1/bindir" >/dev/null
    $SUDO chown -R postgres:postgres "$CLUSTERS/$1"
}

# The registry where the grants LOST_IDS never arrived ----------------------------------------
# The pools whose fence the test waits out: their longest lease is 15 s (pool rows below).
SHORT_POOLS="'short', 'edge'"

# fenced CLUSTER PORT POOL KIND: idgen_acquire in POOL is refused by the fence, SQLSTATE 55000;
# prints the moment the message says the fence ends. A grant made instead fails the run, with the
# windows of the old primary (fo_source) it overlaps on its slot.
fenced() {
    local out=$OUT/$1-fenced-$3-$4.out granted overlaps
    if psql_at "$1" "$2" postgres -At -v VERBOSITY=verbose \
        -c "SELECT grant_id FROM idgen_acquire('$4', 'fenced', '1 second', '$3')" >"$out" 2>&1; then
        granted=$(q "$1" "$2" "SELECT format('grant %s, %s slot %s [%s, %s)', grant_id, kind, slot, lo, hi)
                               FROM idgen_grants WHERE grant_id = $(cat "$out")")
        overlaps=$(q "$1" "$2" "SELECT coalesce(string_agg(format('grant %s [%s, %s)', s.grant_id, s.lo, s.hi), ', '), 'none')
            FROM idgen_grants n JOIN fo_source s ON (s.kind, s.slot) = (n.kind, n.slot)
                                                 AND tstzrange(s.lo, s.hi) && tstzrange(n.lo, n.hi)
            WHERE n.grant_id = $(cat "$out")")
        die "$1: idgen_acquire('$4') in pool '$3' made $granted while the registry is fenced;" \
            "the old primary's windows it overlaps: $overlaps"
    fi
    grep -q "ERROR:  55000: the writer registry grants nothing in pool '$3' until" "$out" ||
        { cat "$out"; die "$1: idgen_acquire in pool '$3' failed, but not with the fence's 55000"; }
    sed -n "s/.*grants nothing in pool '$3' until \(.*\)$/\1/p" "$out" | head -1
}

# registry_lost CLUSTER PORT [LOST]: on a registry that came from the old primary without the
# grants LOST (default LOST_IDS; a promoted standby, a restore), right after it came up: exactly
# those are missing, every pool is fenced (55000; the app pool until after every lost app grant
# has ended), and the grant EARLY_ID, which had ended before, is lost on renew (55000; where it
# is itself lost, unknown: 42704). This first registry call starts the fence. Leaves the tables
# fo_source (every grant of the old primary when it stopped), fo_lost (those missing here) and
# fo_new (for registry_after_fence).
registry_lost() {
    local c=$1 p=$2 expected=${3:-$LOST_IDS} lost pool kind until short_until app_until since early_lost
    psql_at "$c" "$p" postgres \
        -c "CREATE TABLE fo_source (grant_id bigint, kind text, pool text, slot integer,
                                    lo timestamptz, hi timestamptz, reserved boolean)" \
        -c "\\copy fo_source FROM '$OUT/source-grants.csv' WITH (FORMAT csv)" \
        -c "CREATE TABLE fo_lost AS SELECT s.* FROM fo_source s WHERE NOT EXISTS (SELECT FROM idgen_grants g
                WHERE (g.grant_id, g.kind, g.slot, g.lo) = (s.grant_id, s.kind, s.slot, s.lo))" \
        -c "CREATE TABLE fo_new (grant_id bigint PRIMARY KEY)"
    lost=$(q "$c" "$p" "SELECT coalesce(string_agg(grant_id::text, ',' ORDER BY grant_id), '') FROM fo_lost")
    [ "$lost" = "$expected" ] ||
        die "$c: the old primary's grants missing here are [$lost], but the lost ones are [$expected]"
    for pool in short edge app; do
        for kind in snowflake xid12; do
            until=$(fenced "$c" "$p" "$pool" "$kind")
            case $pool in short) short_until=$until ;; app) app_until=$until ;; esac
        done
    done
    # The refused calls rolled back their idgen_registry_origin row; the fence's start is kept
    # (idgen_registry_noticed_ms) and the message names it and why.
    since=$(sed -n 's/^DETAIL:  At \(.*\) the registry found itself on .*/\1/p' "$OUT/$c-fenced-short-snowflake.out")
    [ -n "$since" ] || { cat "$OUT/$c-fenced-short-snowflake.out"; die "$c: the fence's message names no start"; }
    sed -n "s/^DETAIL:  At .* the registry found itself on \(.*\); grants made there.*/  $c: fenced: \1/p" \
        "$OUT/$c-fenced-short-snowflake.out"
    # The app pool's fence (1 hour and the margin) ends after the end of every lost app grant.
    read -r app_after app_ok short_fence live <<<"$(q "$c" "$p" "
        SELECT round(extract(epoch FROM '$app_until'::timestamptz - max(hi) FILTER (WHERE pool = 'app')), 1),
               '$app_until'::timestamptz > max(hi) FILTER (WHERE pool = 'app'),
               round(extract(epoch FROM '$short_until'::timestamptz - '$since'::timestamptz), 1),
               round(extract(epoch FROM max(hi) FILTER (WHERE pool IN ($SHORT_POOLS)) - '$since'::timestamptz), 1)
        FROM fo_lost" | tr '|' ' ')"
    [ "$app_ok" = t ] || die "$c: pool 'app' is fenced until $app_until, before the end of a lost app grant ($app_after s)"
    if q "$c" "$p" "SELECT idgen_renew($EARLY_ID, $EARLY_TOKEN)" >"$OUT/$c-renew-early.out" 2>&1; then
        die "$c: grant $EARLY_ID, which had ended before the fence, renewed: $(cat "$OUT/$c-renew-early.out")"
    fi
    if tr ',' '\n' <<<"$expected" | grep -qx "$EARLY_ID"; then
        early_lost="grant $EARLY_ID does not exist"
    else
        early_lost="grant lost: grant $EARLY_ID had ended when the registry was fenced"
    fi
    grep -q "$early_lost" "$OUT/$c-renew-early.out" ||
        { cat "$OUT/$c-renew-early.out"; die "$c: the renewal of grant $EARLY_ID failed, but not with: $early_lost"; }
    echo "$c: the $(tr ',' '\n' <<<"$expected" | wc -l) lost grants are missing; fenced since $since," \
        "when the lost grants of short and edge had $live s to run (by this server's clock);" \
        "every pool refuses (55000): short and edge for $short_fence s, app until $app_until," \
        "$app_after s after the end of its latest lost grant; grant $EARLY_ID, ended before, is refused on renew ($early_lost)"
}

# registry_after_fence CLUSTER PORT: waits out the fence of the short-lease pools, polling
# idgen_acquire (each refusal must be the fence's), then takes every slot of those pools (the
# slots the lost grants had) and checks the new windows against the old primary's grants: none
# overlaps one of the same slot, and each starts after the end of every lost grant of those pools.
registry_after_fence() {
    local c=$1 p=$2 refusals=0 deadline=$((SECONDS + 240)) acquire
    acquire="INSERT INTO fo_new SELECT grant_id FROM idgen_acquire"
    until q "$c" "$p" "$acquire('snowflake', 'after-fence', '3 seconds', 'short')" >/dev/null 2>"$OUT/$c-wait.err"; do
        [ "$SECONDS" -lt "$deadline" ] || { cat "$OUT/$c-wait.err"; die "$c: the fence of pool 'short' did not end in 240 s"; }
        grep -q "grants nothing in pool 'short' until" "$OUT/$c-wait.err" ||
            { cat "$OUT/$c-wait.err"; die "$c: idgen_acquire after the fence failed, but not with the fence's error"; }
        refusals=$((refusals + 1))
        sleep 0.5
    done
    q "$c" "$p" "$acquire('snowflake', 'after-fence', '3 seconds', 'short');
                 $acquire('xid12', 'after-fence', '3 seconds', 'short');
                 $acquire('xid12', 'after-fence', '3 seconds', 'short');
                 $acquire('snowflake', 'after-fence', '3 seconds', 'edge');
                 $acquire('xid12', 'after-fence', '3 seconds', 'edge')" >/dev/null
    local new same overlaps early_starts gap first_lo last_hi fence_s
    read -r new same overlaps early_starts gap first_lo last_hi fence_s <<<"$(q "$c" "$p" "
        WITH new AS (SELECT g.* FROM idgen_grants g JOIN fo_new USING (grant_id)),
             lost AS (SELECT * FROM fo_lost WHERE pool IN ($SHORT_POOLS))
        SELECT (SELECT count(*) FROM new),
               (SELECT count(*) FROM new n WHERE EXISTS (SELECT FROM lost l WHERE (l.kind, l.slot) = (n.kind, n.slot))),
               (SELECT count(*) FROM new n JOIN fo_source s ON (s.kind, s.slot) = (n.kind, n.slot)
                                                             AND tstzrange(s.lo, s.hi) && tstzrange(n.lo, n.hi)),
               (SELECT count(*) FROM new n WHERE n.lo < (SELECT max(hi) FROM lost)),
               round(extract(epoch FROM (SELECT min(lo) FROM new) - (SELECT max(hi) FROM lost)), 3),
               to_char((SELECT min(lo) FROM new) AT TIME ZONE 'UTC', 'HH24:MI:SS.MS'),
               to_char((SELECT max(hi) FROM lost) AT TIME ZONE 'UTC', 'HH24:MI:SS.MS'),
               round(extract(epoch FROM (SELECT min(granted_at) FROM new)
                     - (SELECT seen_at FROM idgen_registry_origin WHERE fenced ORDER BY seen_at DESC LIMIT 1)), 1)" |
        tr '|' ' ')"
    echo "$c: after $refusals refusals, the fence ended: the first new grant $fence_s s after it began;" \
        "$new new grants, $same on a slot a lost grant had, $overlaps overlap a window of the old primary;" \
        "the first new window starts at $first_lo UTC, $gap s after the last lost window's end ($last_hi UTC)"
    [ "$new" = 6 ] || die "$c: expected 6 new grants in the short-lease pools, got $new"
    [ "$same" = 6 ] || die "$c: $((6 - same)) new grants are on a slot no lost grant had: the pools' slots are not those of the lost grants"
    [ "$overlaps" = 0 ] || die "$c: $overlaps new grants overlap a window of the old primary on the same slot"
    [ "$early_starts" = 0 ] || die "$c: $early_starts new windows start before the end of a lost grant ($first_lo < $last_hi)"
    local pairs
    pairs=$(q "$c" "$p" "SELECT count(*) FROM idgen_registry_grant a JOIN idgen_registry_grant b
        ON a.kind = b.kind AND a.slot = b.slot AND a.grant_id < b.grant_id AND a.span && b.span")
    [ "$pairs" = 0 ] || die "$c: $pairs pairs of grants in the registry overlap"
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
# Pools, before any grant: 'app' keeps its 1-hour leases on fewer slots; 'short' and 'edge' have
# 15-second leases (so their fence ends 75 s after a failover, while the lost grants are still
# live when it begins) and so few slots that new grants after the fence must take the slots the
# lost grants had. No two pools share a slot: a pool
# whose fence has ended could otherwise grant a slot inside a lost grant of a longer-lease pool.
psql_at $PRIMARY "$PRIMARY_PORT" postgres -c "INSERT INTO idgen_registry_pool VALUES
    ('app', '[0,512)', '[0,8388608)', '1 hour'),
    ('short', '[512,514)', '[8388608,8388610)', '15 seconds'),
    ('edge', '[768,769)', '[12582912,12582913)', '15 seconds')"
# The base backup carries the primary's mark file as it is now: nothing issued yet.
stop_cluster $STANDBY
$SUDO rm -rf "${CLUSTERS:?}/$STANDBY"
$SUDO mkdir -p "$CLUSTERS/$STANDBY/sock"
echo "$BINDIR" | $SUDO tee "$CLUSTERS/$STANDBY/bindir" >/dev/null
$SUDO chown -R postgres:postgres "$CLUSTERS/$STANDBY"
# A replication slot keeps the WAL the standby has not received: the base backup below forces a
# checkpoint, which without it may remove the segment the standby is still reading.
as_postgres "$BINDIR/pg_basebackup" -D "$CLUSTERS/$STANDBY/data" -R -C -S fo_standby -X stream -c fast \
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
primary_slot_name = 'fo_standby'
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

say "a second standby, taken before any registry call, stops receiving at once"
# Everything the primary's registry grants from here on is lost to it (issue 34: the registry
# whose first grants are lost). Its slot holds the WAL until it streams, then goes.
fresh_dir $FIRST
as_postgres "$BINDIR/pg_basebackup" -D "$CLUSTERS/$FIRST/data" -R -C -S fo_first -X stream -c fast \
    -h "$(socket_dir $PRIMARY)" -p "$PRIMARY_PORT" -U postgres
as_postgres tee -a "$CLUSTERS/$FIRST/data/postgresql.conf" >/dev/null <<CONF
port = $FIRST_PORT
unix_socket_directories = '$CLUSTERS/$FIRST/sock'
CONF
as_postgres tee -a "$CLUSTERS/$FIRST/data/postgresql.auto.conf" >/dev/null <<CONF
primary_conninfo = 'host=$(socket_dir $PRIMARY) port=$PRIMARY_PORT user=postgres'
primary_slot_name = 'fo_first'
CONF
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/$FIRST/data" -l "$CLUSTERS/$FIRST/server.log" -w start >/dev/null 9<&-
wait_for $FIRST "$FIRST_PORT" "SELECT count(*) = 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'" 120
wait_for $FIRST "$FIRST_PORT" "SELECT pg_last_wal_replay_lsn() >= '$(q $PRIMARY "$PRIMARY_PORT" "SELECT pg_current_wal_lsn()")'" 120
q $FIRST "$FIRST_PORT" "ALTER SYSTEM SET primary_conninfo = ''" >/dev/null
q $FIRST "$FIRST_PORT" "SELECT pg_reload_conf()" >/dev/null
wait_for $FIRST "$FIRST_PORT" "SELECT count(*) = 0 FROM pg_stat_wal_receiver" 120
wait_for $PRIMARY "$PRIMARY_PORT" "SELECT NOT active FROM pg_replication_slots WHERE slot_name = 'fo_first'" 120
q $PRIMARY "$PRIMARY_PORT" "SELECT pg_drop_replication_slot('fo_first')" >/dev/null
echo "$FIRST: stopped receiving at $(q $FIRST "$FIRST_PORT" "SELECT pg_last_wal_receive_lsn()"), with" \
    "$(q $FIRST "$FIRST_PORT" "SELECT count(*) FROM idgen_registry_grant") grants and the origin rows" \
    "[$(q $FIRST "$FIRST_PORT" "SELECT coalesce(string_agg(format('timeline %s%s', timeline, CASE WHEN fenced THEN ', fenced' END), '; '), 'none') FROM idgen_registry_origin")]"

say "the writer registry on the primary: a grant before the failover"
read -r grant_id grant_token <<<"$(q $PRIMARY "$PRIMARY_PORT" \
    "SELECT grant_id, token FROM idgen_acquire('xid12', 'before-failover', '10 minutes')" | tr '|' ' ')"
echo "grant $grant_id of xid12 machine id $(q $PRIMARY "$PRIMARY_PORT" "SELECT slot FROM idgen_grants WHERE grant_id = $grant_id")"
wait_for $STANDBY "$STANDBY_PORT" "SELECT count(*) = 1 FROM idgen_registry_grant WHERE grant_id = $grant_id" 120

say "a base backup and a dump of the primary, then later grants"
# A 3-second grant, ended long before any fence: everywhere it is found, it is lost on renew.
read -r EARLY_ID EARLY_TOKEN <<<"$(q $PRIMARY "$PRIMARY_PORT" \
    "SELECT grant_id, token FROM idgen_acquire('snowflake', 'early', '3 seconds', 'short')" | tr '|' ' ')"
wait_for $STANDBY "$STANDBY_PORT" "SELECT count(*) = 1 FROM idgen_registry_grant WHERE grant_id = $EARLY_ID" 120
# The base backup is recovered later to a new timeline (recovery_target 'immediate', promoted).
fresh_dir $RESTORE
as_postgres "$BINDIR/pg_basebackup" -D "$CLUSTERS/$RESTORE/data" -X stream -c fast \
    -h "$(socket_dir $PRIMARY)" -p "$PRIMARY_PORT" -U postgres
as_postgres tee -a "$CLUSTERS/$RESTORE/data/postgresql.conf" >/dev/null <<CONF
port = $RESTORE_PORT
unix_socket_directories = '$CLUSTERS/$RESTORE/sock'
restore_command = '/bin/false'
recovery_target = 'immediate'
recovery_target_action = 'promote'
CONF
as_postgres touch "$CLUSTERS/$RESTORE/data/recovery.signal"
"$BINDIR/pg_dump" -Fc -f "$OUT/postgres.dump" -h "$(socket_dir $PRIMARY)" -p "$PRIMARY_PORT" -U postgres postgres
echo "base backup and dump taken with $(q $PRIMARY "$PRIMARY_PORT" "SELECT count(*) FROM idgen_registry_grant") grants" \
    "in the registry (grant $EARLY_ID of 3 s among them)"

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
# The pool 'short''s slots are free again once grant EARLY_ID has ended.
wait_for $PRIMARY "$PRIMARY_PORT" "SELECT hi <= clock_timestamp() FROM idgen_grants WHERE grant_id = $EARLY_ID" 120
# The standby stops receiving: its walreceiver ends and is not started again (no primary_conninfo).
q $STANDBY "$STANDBY_PORT" "ALTER SYSTEM SET primary_conninfo = ''" >/dev/null
q $STANDBY "$STANDBY_PORT" "SELECT pg_reload_conf()" >/dev/null
wait_for $STANDBY "$STANDBY_PORT" "SELECT count(*) = 0 FROM pg_stat_wal_receiver" 120
received=$(q $STANDBY "$STANDBY_PORT" "SELECT pg_last_wal_receive_lsn()")
# Grants the standby never receives, made just before the stop: both kinds in every pool, two in
# each of the pool 'short''s two slots.
LOST_IDS=$(q $PRIMARY "$PRIMARY_PORT" "
    SELECT string_agg(a.grant_id::text, ',' ORDER BY a.grant_id)
    FROM (VALUES ('snowflake', 'short', '15 seconds'), ('snowflake', 'short', '15 seconds'),
                 ('xid12', 'short', '15 seconds'), ('xid12', 'short', '15 seconds'),
                 ('snowflake', 'edge', '15 seconds'), ('xid12', 'edge', '15 seconds'),
                 ('snowflake', 'app', '1 hour'), ('xid12', 'app', '1 hour')) v(kind, pool, lease)
    CROSS JOIN LATERAL idgen_acquire(v.kind, 'lost', v.lease::interval, v.pool) a")
psql_at $PRIMARY "$PRIMARY_PORT" postgres \
    -c "\\copy (SELECT grant_id, kind, pool, slot, lo, hi, reserved FROM idgen_grants) TO '$OUT/source-grants.csv' WITH (FORMAT csv)"
# The second standby has none of them.
ALL_IDS=$(q $PRIMARY "$PRIMARY_PORT" "SELECT string_agg(grant_id::text, ',' ORDER BY grant_id) FROM idgen_grants")
q $PRIMARY "$PRIMARY_PORT" "SELECT format('  lost %s grant %s (%s slot %s): [%s, %s)', pool, grant_id, kind, slot, lo, hi)
    FROM idgen_grants WHERE grant_id IN ($LOST_IDS) ORDER BY grant_id"
echo "the standby stopped receiving at $received; the primary's WAL is at $(q $PRIMARY "$PRIMARY_PORT" "SELECT pg_current_wal_lsn()")" \
    "after the lost grants ($(q $STANDBY "$STANDBY_PORT" "SELECT count(*) FROM idgen_registry_grant WHERE grant_id IN ($LOST_IDS)") of them on the standby)"
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

say "the writer registry on the promoted standby: the lost grants are missing, fenced, live grants renew"
# Grants made on the old primary just before the failover did not reach the standby: the new
# timeline fences the registry until every such grant must have ended.
registry_lost $STANDBY "$STANDBY_PORT"
# The second standby, promoted too: it has seen no grant, and is fenced all the same.
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/$FIRST/data" -w promote >/dev/null
wait_for $FIRST "$FIRST_PORT" "SELECT NOT pg_is_in_recovery()" 120
echo "$FIRST: promoted with $(q $FIRST "$FIRST_PORT" "SELECT count(*) FROM idgen_registry_grant") grants;" \
    "all $(tr ',' '\n' <<<"$ALL_IDS" | wc -l) of the old primary's are lost to it"
registry_lost $FIRST "$FIRST_PORT" "$ALL_IDS"
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

say "the registry restored from the base backup (a new timeline) and from the dump (a new cluster)"
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/$RESTORE/data" -l "$CLUSTERS/$RESTORE/server.log" -w start >/dev/null 9<&-
wait_for $RESTORE "$RESTORE_PORT" "SELECT NOT pg_is_in_recovery()" 120
echo "$RESTORE: recovered and promoted, WAL timeline" \
    "$(q $RESTORE "$RESTORE_PORT" "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int")"
registry_lost $RESTORE "$RESTORE_PORT"
start_cluster $DUMPED "$DUMPED_PORT" preload
"$BINDIR/pg_restore" --exit-on-error -d postgres -h "$(socket_dir $DUMPED)" -p "$DUMPED_PORT" -U postgres "$OUT/postgres.dump"
echo "$DUMPED: the dump restored into a new cluster, system identifier" \
    "$(q $DUMPED "$DUMPED_PORT" "SELECT system_identifier FROM pg_control_system()")"
registry_lost $DUMPED "$DUMPED_PORT"

say "after the fence of the short-lease pools: new grants on the lost grants' slots"
registry_after_fence $STANDBY "$STANDBY_PORT"
registry_after_fence $RESTORE "$RESTORE_PORT"
registry_after_fence $DUMPED "$DUMPED_PORT"
registry_after_fence $FIRST "$FIRST_PORT"

say "the writer registry on the promoted standby: idgen_registry_lift_fence()"
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
    { [ "$leases" -ge 1 ] && [ "$malformed" = 0 ]; } ||
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
