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
# The writer registry (sql/registry.sql, issue 34), on every version. Four registries lose
# grants of the primary: the promoted standby (its walreceiver is stopped first, primary_conninfo
# emptied, so the grants made just before the stop never reach it); a base backup recovered to a
# new timeline (recovery_target 'immediate', promoted) and a pg_dump restored into a new cluster
# (another system identifier), both taken before those grants; and a second standby taken right
# after CREATE EXTENSION and the pool rows, before any registry call, cut off at once and
# promoted: every grant of the primary is lost to it and it sees none (the registry whose first
# grants are lost). Pools: 'app' (the built-in leases, 1 hour for xid12 and 3 minutes for
# Snowflake, on fewer slots), the built-in 'edge' (366 days), and 'short' and 'tiny' (15-second
# leases, 2 and 1 slots of each kind, under 4096 xid12 machine ids: not striped). On each of the
# four, from the registry's first call after the change (when a new writer first asks):
#  - exactly the lost grants are missing;
#  - a new xid12 writer in 'app' and in 'edge' gets a grant at once, from the new origin's
#    stripe (machine id mod 64), which no lost xid12 grant's machine id is in; its window
#    overlaps no window of the old primary on its machine id, and the same query, given the
#    new window on a lost grant's machine id, counts an overlap (the check can fail);
#  - a new Snowflake writer is refused with IG001 `the writer registry grants no snowflake slot
#    in pool '<pool>' until <UTC>`: in 'app' until 4 minutes after the first call (its longest
#    Snowflake lease, 3 minutes, and the 1-minute margin), at most 5 minutes after the promotion
#    or restore, and after the end of every lost app grant; in 'edge' until 366 days and 1 minute
#    after (read from the message, not waited for); 'short' and 'tiny' refuse both kinds;
#  - a grant that had ended before the fence is lost on renew (55000);
#  - once the fence of 'short' and 'tiny' ends (75 s after the first call, the four run
#    together), new grants on the very slots of the lost grants overlap none of the old
#    primary's grants and start after the end of every lost grant of those pools.
# At the end a table gives, case by kind, the seconds from the first registry call after the
# change until a new writer gets an identity (or the fence's end, from the IG001 message).
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
SHORT_POOLS="'short', 'tiny'"
# The moment the registry noticed the change of origin (its first call after it): the fence
# counts from it.
NOTICED="('epoch'::timestamptz + (SELECT n.last_value FROM idgen_registry_noticed_ms n) * interval '1 millisecond')"
# When each case's change happened (the promotion, the end of recovery or of pg_restore), by its
# server's clock, and what the summary table shows, by case.
declare -A CHANGED_AT CASE_NAME FIRST_CALL XID12_APP XID12_EDGE SF_APP SF_APP_CHANGE SF_EDGE SHORT_SF SHORT_XID12

# overlap_sql GRANTS: a query counting the grants of GRANTS (a relation with kind, slot, lo, hi)
# whose window overlaps one of the old primary's (fo_source) on the same slot.
overlap_sql() {
    echo "SELECT count(*) FROM $1 n JOIN fo_source s ON (s.kind, s.slot) = (n.kind, n.slot)
                                                    AND tstzrange(s.lo, s.hi) && tstzrange(n.lo, n.hi)"
}

# fenced CLUSTER PORT POOL KIND: idgen_acquire (the pool's default lease) in POOL is refused by
# the fence, SQLSTATE IG001; prints the moment the message says the fence ends. A grant made
# instead fails the run, with the windows of the old primary (fo_source) it overlaps on its slot.
fenced() {
    local out=$OUT/$1-fenced-$3-$4.out granted overlaps
    if psql_at "$1" "$2" postgres -At -v VERBOSITY=verbose \
        -c "SELECT grant_id FROM idgen_acquire('$4', 'fenced', NULL, '$3')" >"$out" 2>&1; then
        granted=$(q "$1" "$2" "SELECT format('grant %s, %s slot %s [%s, %s)', grant_id, kind, slot, lo, hi)
                               FROM idgen_grants WHERE grant_id = $(cat "$out")")
        overlaps=$(q "$1" "$2" "SELECT coalesce(string_agg(format('grant %s [%s, %s)', s.grant_id, s.lo, s.hi), ', '), 'none')
            FROM idgen_grants n JOIN fo_source s ON (s.kind, s.slot) = (n.kind, n.slot)
                                                 AND tstzrange(s.lo, s.hi) && tstzrange(n.lo, n.hi)
            WHERE n.grant_id = $(cat "$out")")
        die "$1: idgen_acquire('$4') in pool '$3' made $granted while the registry is fenced;" \
            "the old primary's windows it overlaps: $overlaps"
    fi
    local until
    until=$(sed -n "s/^ERROR:  IG001: the writer registry grants no $4 slot in pool '$3' until \([0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]\{6\}Z\)$/\1/p" "$out" | head -1)
    [ -n "$until" ] ||
        { cat "$out"; die "$1: idgen_acquire('$4') in pool '$3' failed, but not with the fence's IG001 ... until <UTC>"; }
    echo "$until"
}

# new_writers CLUSTER PORT: the registry's first calls after the change: a new xid12 writer in
# the pools 'app' and 'edge' (the default lease) gets a grant at once, from the current origin's
# stripe, which no lost xid12 grant of those pools is in; its window overlaps none of the old
# primary's, and the same query counts an overlap when the window is put on a lost grant's
# machine id. Sets XID12_APP, XID12_EDGE (the seconds from the first call to the grant: a grant's
# granted_at is its call's start, so the call that noticed the change counts 0) and FIRST_CALL.
new_writers() {
    local c=$1 p=$2 pool out
    for pool in app edge; do
        out=$OUT/$c-new-xid12-$pool.out
        q "$c" "$p" "INSERT INTO fo_new_writer SELECT grant_id FROM idgen_acquire('xid12', 'new-writer', NULL, '$pool')" \
            >"$out" 2>&1 || { cat "$out"; die "$c: a new xid12 writer in pool '$pool' got no grant at once after the change"; }
    done
    local n stripe in_stripe lost_stripes shared overlaps planted s_app s_edge s_call
    read -r n stripe in_stripe lost_stripes shared overlaps planted s_app s_edge s_call <<<"$(q "$c" "$p" "
        WITH n AS (SELECT g.* FROM idgen_grants g JOIN fo_new_writer USING (grant_id)),
             lost AS (SELECT * FROM fo_lost WHERE kind = 'xid12' AND pool IN ('app', 'edge'))
        SELECT (SELECT count(*) FROM n),
               idgen_registry_current_stripe(),
               (SELECT count(*) FROM n WHERE n.slot % 64 = idgen_registry_current_stripe()),
               (SELECT coalesce(string_agg(DISTINCT (slot % 64)::text, ','), 'none') FROM lost),
               (SELECT count(*) FROM n JOIN lost l ON l.slot % 64 = n.slot % 64),
               ($(overlap_sql n)),
               ($(overlap_sql "(SELECT n.kind, l.slot, n.lo, n.hi FROM n JOIN lost l ON l.pool = n.pool WHERE n.pool = 'app')")),
               (SELECT round(extract(epoch FROM greatest(n.granted_at, $NOTICED) - $NOTICED), 1) FROM n WHERE n.pool = 'app'),
               (SELECT round(extract(epoch FROM greatest(n.granted_at, $NOTICED) - $NOTICED), 1) FROM n WHERE n.pool = 'edge'),
               round(extract(epoch FROM $NOTICED - '${CHANGED_AT[$c]}'::timestamptz), 1)" | tr '|' ' ')"
    q "$c" "$p" "SELECT format('  %s: new xid12 writer in pool %s: grant %s, machine id %s (stripe %s), [%s, %s)',
                               '$c', pool, grant_id, slot, slot % 64, lo, hi)
                 FROM idgen_grants JOIN fo_new_writer USING (grant_id) ORDER BY grant_id"
    echo "$c: the first registry call came $s_call s after the change; new xid12 writers granted" \
        "$s_app s (app) and $s_edge s (edge) after it, from stripe $stripe (the lost xid12 grants of app" \
        "and edge: stripe $lost_stripes); $overlaps overlap a window of the old primary," \
        "$planted would on a lost grant's machine id"
    [ "$n" = 2 ] || die "$c: expected 2 new xid12 grants, got $n"
    [ "$in_stripe" = 2 ] || die "$c: $((2 - in_stripe)) new xid12 grants are not from the current stripe $stripe"
    [ "$lost_stripes" != none ] || die "$c: no lost xid12 grant of 'app' or 'edge' to compare with"
    [ "$shared" = 0 ] || die "$c: $shared new xid12 grants are in the stripe of a lost grant ($lost_stripes)"
    [ "$overlaps" = 0 ] || die "$c: $overlaps new xid12 grants overlap a window of the old primary on the same machine id"
    # The self-check: the new app window, given the lost app grant's machine id, is counted.
    [ "$planted" -ge 1 ] ||
        die "$c: the overlap query finds no overlap when the new app window is put on a lost grant's machine id: it cannot fail"
    FIRST_CALL[$c]=$s_call
    XID12_APP[$c]=$s_app
    XID12_EDGE[$c]=$s_edge
}

# registry_lost CLUSTER PORT [LOST]: on a registry that came from the old primary without the
# grants LOST (default LOST_IDS; a promoted standby, a restore), right after it came up: exactly
# those are missing; new xid12 writers are granted at once (new_writers); new Snowflake writers
# are fenced (IG001; 'app' for 4 minutes, until after every lost app grant has ended, and at most
# 5 minutes after the change; 'edge' for 366 days and 1 minute), and so is every kind in the
# small pools 'short' and 'tiny'; the grant EARLY_ID, which had ended before, is lost on renew
# (55000; where it is itself lost, unknown: 42704). The first registry call starts the fence.
# Leaves the tables fo_source (every grant of the old primary when it stopped), fo_lost (those
# missing here) and fo_new (for registry_after_fence).
registry_lost() {
    local c=$1 p=$2 expected=${3:-$LOST_IDS} lost pool kind until short_until app_until edge_until early_lost
    psql_at "$c" "$p" postgres \
        -c "CREATE TABLE fo_source (grant_id bigint, kind text, pool text, slot integer,
                                    lo timestamptz, hi timestamptz, reserved boolean)" \
        -c "\\copy fo_source FROM '$OUT/source-grants.csv' WITH (FORMAT csv)" \
        -c "CREATE TABLE fo_lost AS SELECT s.* FROM fo_source s WHERE NOT EXISTS (SELECT FROM idgen_grants g
                WHERE (g.grant_id, g.kind, g.slot, g.lo) = (s.grant_id, s.kind, s.slot, s.lo))" \
        -c "CREATE TABLE fo_new (grant_id bigint PRIMARY KEY)" \
        -c "CREATE TABLE fo_new_writer (grant_id bigint PRIMARY KEY)" >/dev/null
    lost=$(q "$c" "$p" "SELECT coalesce(string_agg(grant_id::text, ',' ORDER BY grant_id), '') FROM fo_lost")
    [ "$lost" = "$expected" ] ||
        die "$c: the old primary's grants missing here are [$lost], but the lost ones are [$expected]"
    new_writers "$c" "$p"
    app_until=$(fenced "$c" "$p" app snowflake)
    edge_until=$(fenced "$c" "$p" edge snowflake)
    for pool in short tiny; do
        for kind in snowflake xid12; do
            until=$(fenced "$c" "$p" "$pool" "$kind")
            [ "$pool/$kind" != short/snowflake ] || short_until=$until
        done
    done
    sed -n "s/^DETAIL:  The registry found itself on \(.*\); grants made on the old history.*/  $c: fenced: \1/p" \
        "$OUT/$c-fenced-app-snowflake.out"
    local app_fence app_change app_after app_ok edge_fence edge_ok short_fence live since
    read -r app_fence app_change app_after app_ok edge_fence edge_ok short_fence live since <<<"$(q "$c" "$p" "
        SELECT round(extract(epoch FROM '$app_until'::timestamptz - $NOTICED), 3),
               round(extract(epoch FROM '$app_until'::timestamptz - '${CHANGED_AT[$c]}'::timestamptz), 1),
               round(extract(epoch FROM '$app_until'::timestamptz - max(hi) FILTER (WHERE pool = 'app' AND kind = 'snowflake')), 1),
               '$app_until'::timestamptz > max(hi) FILTER (WHERE pool = 'app' AND kind = 'snowflake'),
               round(extract(epoch FROM '$edge_until'::timestamptz - $NOTICED), 3),
               '$edge_until'::timestamptz > max(hi) FILTER (WHERE pool = 'edge' AND kind = 'snowflake'),
               round(extract(epoch FROM '$short_until'::timestamptz - $NOTICED), 3),
               round(extract(epoch FROM max(hi) FILTER (WHERE pool IN ($SHORT_POOLS)) - $NOTICED), 1),
               to_char($NOTICED AT TIME ZONE 'UTC', 'HH24:MI:SS.MS')
        FROM fo_lost" | tr '|' ' ')"
    # 'app': its longest Snowflake lease (3 minutes) and the margin (1 minute), counted from the
    # first call; within 5 minutes of the change; after the end of every lost app grant.
    [ "$app_fence" = 240.000 ] || die "$c: pool 'app' is fenced for $app_fence s after the first call, not 240 s"
    awk -v s="$app_change" 'BEGIN { exit !(s <= 300) }' ||
        die "$c: pool 'app' is fenced for $app_change s after the change, more than 5 minutes"
    [ "$app_ok" = t ] || die "$c: pool 'app' is fenced until $app_until, before the end of a lost app grant ($app_after s)"
    # 'edge': 366 days and 1 minute, after the end of its lost Snowflake grant.
    [ "$edge_fence" = "$((366 * 86400 + 60)).000" ] ||
        die "$c: pool 'edge' is fenced for $edge_fence s after the first call, not 366 days and 60 s"
    [ "$edge_ok" = t ] || die "$c: pool 'edge' is fenced until $edge_until, before the end of its lost Snowflake grant"
    [ "$short_fence" = 75.000 ] || die "$c: pool 'short' is fenced for $short_fence s after the first call, not 75 s"
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
    echo "$c: the $(tr ',' '\n' <<<"$expected" | wc -l) lost grants are missing; fenced since $since UTC," \
        "when the lost grants of short and tiny had $live s to run (by this server's clock); new Snowflake" \
        "writers refused (IG001): app until $app_until ($app_fence s after the first call, $app_change s" \
        "after the change, $app_after s after the end of its latest lost Snowflake grant), edge until" \
        "$edge_until ($edge_fence s), short and tiny (both kinds) for $short_fence s;" \
        "grant $EARLY_ID, ended before, is refused on renew ($early_lost)"
    SF_APP[$c]=$app_fence
    SF_APP_CHANGE[$c]=$app_change
    SF_EDGE[$c]=$edge_fence
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
        grep -q "grants no snowflake slot in pool 'short' until" "$OUT/$c-wait.err" ||
            { cat "$OUT/$c-wait.err"; die "$c: idgen_acquire after the fence failed, but not with the fence's error"; }
        refusals=$((refusals + 1))
        sleep 0.5
    done
    q "$c" "$p" "$acquire('snowflake', 'after-fence', '3 seconds', 'short');
                 $acquire('xid12', 'after-fence', '3 seconds', 'short');
                 $acquire('xid12', 'after-fence', '3 seconds', 'short');
                 $acquire('snowflake', 'after-fence', '3 seconds', 'tiny');
                 $acquire('xid12', 'after-fence', '3 seconds', 'tiny')" >/dev/null
    local new same overlaps early_starts gap first_lo last_hi fence_sf fence_xid12
    read -r new same overlaps early_starts gap first_lo last_hi fence_sf fence_xid12 <<<"$(q "$c" "$p" "
        WITH new AS (SELECT g.* FROM idgen_grants g JOIN fo_new USING (grant_id)),
             lost AS (SELECT * FROM fo_lost WHERE pool IN ($SHORT_POOLS))
        SELECT (SELECT count(*) FROM new),
               (SELECT count(*) FROM new n WHERE EXISTS (SELECT FROM lost l WHERE (l.kind, l.slot) = (n.kind, n.slot))),
               ($(overlap_sql new)),
               (SELECT count(*) FROM new n WHERE n.lo < (SELECT max(hi) FROM lost)),
               round(extract(epoch FROM (SELECT min(lo) FROM new) - (SELECT max(hi) FROM lost)), 3),
               to_char((SELECT min(lo) FROM new) AT TIME ZONE 'UTC', 'HH24:MI:SS.MS'),
               to_char((SELECT max(hi) FROM lost) AT TIME ZONE 'UTC', 'HH24:MI:SS.MS'),
               round(extract(epoch FROM (SELECT min(granted_at) FROM new WHERE kind = 'snowflake') - $NOTICED), 1),
               round(extract(epoch FROM (SELECT min(granted_at) FROM new WHERE kind = 'xid12') - $NOTICED), 1)" |
        tr '|' ' ')"
    echo "$c: after $refusals refusals, the fence ended: the first new grants $fence_sf s (Snowflake) and" \
        "$fence_xid12 s (xid12) after the first call; $new new grants, $same on a slot a lost grant had," \
        "$overlaps overlap a window of the old primary; the first new window starts at $first_lo UTC," \
        "$gap s after the last lost window's end ($last_hi UTC)"
    [ "$new" = 6 ] || die "$c: expected 6 new grants in the short-lease pools, got $new"
    [ "$same" = 6 ] || die "$c: $((6 - same)) new grants are on a slot no lost grant had: the pools' slots are not those of the lost grants"
    [ "$overlaps" = 0 ] || die "$c: $overlaps new grants overlap a window of the old primary on the same slot"
    [ "$early_starts" = 0 ] || die "$c: $early_starts new windows start before the end of a lost grant ($first_lo < $last_hi)"
    local pairs
    pairs=$(q "$c" "$p" "SELECT count(*) FROM idgen_registry_grant a JOIN idgen_registry_grant b
        ON a.kind = b.kind AND a.slot = b.slot AND a.grant_id < b.grant_id AND a.span && b.span")
    [ "$pairs" = 0 ] || die "$c: $pairs pairs of grants in the registry overlap"
    SHORT_SF[$c]=$fence_sf
    SHORT_XID12[$c]=$fence_xid12
}

# summary: the table of the seconds until a new writer of each kind gets an identity, by case.
summary() {
    local c
    say "how long until a new writer gets an identity (seconds from the registry's first call after the change)"
    echo "  xid12 app and edge: granted at the first try (the app call is the one that notices the change);"
    echo "  short: a 15-second pool, too small to stripe, waited for; Snowflake app and edge: the fence's end"
    echo "  in the IG001 message, not waited for (app: also from the change itself, the promotion, the end"
    echo "  of recovery or of pg_restore; the target is at most 300 s)"
    printf '  %-30s %9s %9s %9s %10s %10s %10s %11s %12s\n' case 'change->' 'xid12' 'xid12' 'xid12' 'Snowflake' \
        'Snowflake' 'Snowflake' 'Snowflake'
    printf '  %-30s %9s %9s %9s %10s %10s %10s %11s %12s\n' '' '1st call' app edge short short app 'app from' edge
    printf '  %-30s %9s %9s %9s %10s %10s %10s %11s %12s\n' '' '' '' '' '(waited)' '(waited)' '(message)' 'change' '(message)'
    for c in $STANDBY $RESTORE $DUMPED $FIRST; do
        printf '  %-30s %9s %9s %9s %10s %10s %10s %11s %12s\n' "${CASE_NAME[$c]}" "${FIRST_CALL[$c]}" \
            "${XID12_APP[$c]}" "${XID12_EDGE[$c]}" "${SHORT_XID12[$c]}" "${SHORT_SF[$c]}" "${SF_APP[$c]}" \
            "${SF_APP_CHANGE[$c]}" "${SF_EDGE[$c]}"
    done
    echo "  (Snowflake edge: $((366 * 86400 + 60)) s = 366 days and 1 minute, the edge pool's longest lease and the margin)"
}

# changed CLUSTER PORT NAME: notes the moment of the case's change (now, by its server's clock).
changed() {
    CHANGED_AT[$1]=$(q "$1" "$2" "SELECT clock_timestamp()")
    CASE_NAME[$1]=$3
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
# Pools, before any grant: 'app' keeps the built-in leases (1 hour; 3 minutes for Snowflake) on
# fewer slots; 'edge' is the built-in one (366 days); 'short' and 'tiny' have 15-second leases
# (so their fence ends 75 s after a failover, while the lost grants are still live when it
# begins) and so few slots that new grants after the fence must take the slots the lost grants
# had (and too few xid12 machine ids to be striped: fenced as Snowflake is). No two pools share a
# slot: a pool whose fence has ended could otherwise grant a slot inside a lost grant of a
# longer-lease pool.
psql_at $PRIMARY "$PRIMARY_PORT" postgres -c "INSERT INTO idgen_registry_pool VALUES
    ('app', '[0,512)', '[0,8388608)', '1 hour', '3 minutes'),
    ('short', '[512,514)', '[8388608,8388610)', '15 seconds', NULL),
    ('tiny', '[514,515)', '[8388610,8388611)', '15 seconds', NULL)"
[ "$(q $PRIMARY "$PRIMARY_PORT" "SELECT (b.max_lease, b.snowflake_max_lease) = (r.max_lease, r.snowflake_max_lease)
        FROM idgen_registry_builtin_pool('app') b, idgen_registry_pool r WHERE r.pool = 'app'")" = t ] ||
    die "the pool row 'app' does not keep the built-in app pool's leases"
# A Snowflake app lease over 3 minutes is refused (IG004): the app pool's fence rests on it.
if psql_at $PRIMARY "$PRIMARY_PORT" postgres -At -v VERBOSITY=verbose \
    -c "SELECT idgen_acquire('snowflake', 'too-long', '10 minutes')" >"$OUT/too-long.out" 2>&1 ||
    ! grep -q "^ERROR:  IG004: lease .* is longer than pool 'app' allows for snowflake grants" "$OUT/too-long.out"; then
    cat "$OUT/too-long.out"
    die "a 10-minute Snowflake lease in pool 'app' was not refused as too long"
fi
echo "pool 'app': xid12 leases up to $(q $PRIMARY "$PRIMARY_PORT" "SELECT max_lease FROM idgen_registry_pool WHERE pool = 'app'")," \
    "Snowflake up to $(q $PRIMARY "$PRIMARY_PORT" "SELECT snowflake_max_lease FROM idgen_registry_pool WHERE pool = 'app'")" \
    "(a 10-minute Snowflake lease: $(head -1 "$OUT/too-long.out"))"
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
read -r sf_grant_id sf_grant_token <<<"$(q $PRIMARY "$PRIMARY_PORT" \
    "SELECT grant_id, token FROM idgen_acquire('snowflake', 'before-failover', '3 minutes')" | tr '|' ' ')"
echo "grant $sf_grant_id of Snowflake worker id $(q $PRIMARY "$PRIMARY_PORT" "SELECT slot FROM idgen_grants WHERE grant_id = $sf_grant_id")"
wait_for $STANDBY "$STANDBY_PORT" "SELECT count(*) = 2 FROM idgen_registry_grant WHERE grant_id IN ($grant_id, $sf_grant_id)" 120

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
# each of the pool 'short''s two slots, in 'app' the longest leases (a Snowflake grant's is 3
# minutes), in 'edge' short ones.
LOST_IDS=$(q $PRIMARY "$PRIMARY_PORT" "
    SELECT string_agg(a.grant_id::text, ',' ORDER BY a.grant_id)
    FROM (VALUES ('snowflake', 'short', '15 seconds'), ('snowflake', 'short', '15 seconds'),
                 ('xid12', 'short', '15 seconds'), ('xid12', 'short', '15 seconds'),
                 ('snowflake', 'tiny', '15 seconds'), ('xid12', 'tiny', '15 seconds'),
                 ('snowflake', 'edge', '15 seconds'), ('xid12', 'edge', '15 seconds'),
                 ('snowflake', 'app', '3 minutes'), ('xid12', 'app', '1 hour')) v(kind, pool, lease)
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
changed $STANDBY "$STANDBY_PORT" "promoted standby, grants lost"
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
# timeline fences the Snowflake slots (and the small pools' xid12 machine ids) until every such
# grant must have ended; xid12 writers are granted at once from another stripe.
registry_lost $STANDBY "$STANDBY_PORT"
# The second standby, promoted too: it has seen no grant, and is fenced all the same.
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/$FIRST/data" -w promote >/dev/null
wait_for $FIRST "$FIRST_PORT" "SELECT NOT pg_is_in_recovery()" 120
changed $FIRST "$FIRST_PORT" "first grants lost"
echo "$FIRST: promoted with $(q $FIRST "$FIRST_PORT" "SELECT count(*) FROM idgen_registry_grant") grants;" \
    "all $(tr ',' '\n' <<<"$ALL_IDS" | wc -l) of the old primary's are lost to it"
registry_lost $FIRST "$FIRST_PORT" "$ALL_IDS"
renewed=$(q $STANDBY "$STANDBY_PORT" "SELECT hi > now() FROM idgen_renew($sf_grant_id, $sf_grant_token, '3 minutes')")
[ "$renewed" = t ] || die "the Snowflake grant made before the failover did not renew on the new primary"
echo "Snowflake grant $sf_grant_id, made before the failover, renews on the new primary"
# An xid12 grant of the old stripe is not renewed: the old stripe is held only as long as grants
# made before the change can last. Its writer acquires anew, at once, from the new stripe.
if q $STANDBY "$STANDBY_PORT" "SELECT idgen_renew($grant_id, $grant_token)" >"$OUT/renew-old-stripe.out" 2>&1; then
    die "xid12 grant $grant_id of the old stripe renewed on the new primary: $(cat "$OUT/renew-old-stripe.out")"
fi
grep -q "grant lost: xid12 machine id .* is not of the stripe the registry grants from now" "$OUT/renew-old-stripe.out" ||
    { cat "$OUT/renew-old-stripe.out"; die "the renewal of xid12 grant $grant_id failed, but not as a grant of the old stripe"; }
echo "xid12 grant $grant_id, of the old stripe, is lost on renew (55000); its writer acquires anew"

say "the registry restored from the base backup (a new timeline) and from the dump (a new cluster)"
as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/$RESTORE/data" -l "$CLUSTERS/$RESTORE/server.log" -w start >/dev/null 9<&-
wait_for $RESTORE "$RESTORE_PORT" "SELECT NOT pg_is_in_recovery()" 120
changed $RESTORE "$RESTORE_PORT" "base backup, new timeline"
echo "$RESTORE: recovered and promoted, WAL timeline" \
    "$(q $RESTORE "$RESTORE_PORT" "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int")"
registry_lost $RESTORE "$RESTORE_PORT"
start_cluster $DUMPED "$DUMPED_PORT" preload
"$BINDIR/pg_restore" --exit-on-error -d postgres -h "$(socket_dir $DUMPED)" -p "$DUMPED_PORT" -U postgres "$OUT/postgres.dump"
changed $DUMPED "$DUMPED_PORT" "pg_dump, new cluster"
echo "$DUMPED: the dump restored into a new cluster, system identifier" \
    "$(q $DUMPED "$DUMPED_PORT" "SELECT system_identifier FROM pg_control_system()")"
registry_lost $DUMPED "$DUMPED_PORT"

say "after the fence of the short-lease pools: new grants on the lost grants' slots"
registry_after_fence $STANDBY "$STANDBY_PORT"
registry_after_fence $RESTORE "$RESTORE_PORT"
registry_after_fence $DUMPED "$DUMPED_PORT"
registry_after_fence $FIRST "$FIRST_PORT"

say "the writer registry on the promoted standby: idgen_registry_lift_fence()"
# The edge pool's Snowflake fence (366 days) still holds; lifted, a grant comes at once.
edge_until=$(fenced $STANDBY "$STANDBY_PORT" edge snowflake)
q $STANDBY "$STANDBY_PORT" "SELECT idgen_registry_lift_fence()" >/dev/null
after=$(q $STANDBY "$STANDBY_PORT" "SELECT slot FROM idgen_acquire('snowflake', 'after-lift', NULL, 'edge')")
echo "pool 'edge' refused Snowflake writers until $edge_until; after idgen_registry_lift_fence():" \
    "granted Snowflake worker id $after"
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
    summary
    say "failover test passed (PostgreSQL $PG_MAJOR)"
else
    echo "PostgreSQL $PG_MAJOR has no custom WAL resource managers: the standby's mark is its base" \
        "backup's, so ids may repeat (README, Snowflake, Not guaranteed): $duplicates did"
    summary
    say "failover test ran (PostgreSQL $PG_MAJOR: the documented behaviour, not a failure)"
fi
