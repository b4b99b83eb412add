#!/usr/bin/env bash
# Reliability tests against real servers of one PostgreSQL version (default 18), each one
# asserting what users rely on (the SQL and data are in tests/reliability and tests/isolation):
#
#  1. many nodes, one merged database: two edge clusters (distinct pg_idgen.machine_id and
#     pg_idgen.worker_id) generate xid12, Snowflake and rapkey keys from several connections at
#     once; a central cluster subscribes to both (logical replication, one subscription in
#     binary mode) into one table with a unique index on each id column. Every row arrives,
#     byte-identical, with no key conflict. Then two edges share a machine id and a worker id
#     ("twins"): their Snowflake ids collide, their xid12 differ only by pid and counter.
#  2. a crash (pg_ctl stop -m immediate) in the middle of concurrent inserts: every
#     acknowledged row is intact, amcheck passes, new ids do not collide with stored ones.
#  3. sorts beyond memory: 2,000,000 xid12 sorted on disk and indexed by a parallel CREATE
#     INDEX, both checked against the byte order, the index with amcheck.
#
# (rapkey_next under contention, an isolation test, runs with the regression suites of every
# version in scripts/test.sh.)
#
#   bash scripts/reliability.sh [--installed] [VERSION] [SCENARIO...]
#
# SCENARIO: merge, twins (needs merge's clusters: runs it first), crash, sorts; all by default.
# --installed: the extension is already installed into that version's PostgreSQL (test.sh
# passes it); without it the script installs a debug build first. The ports are scripts/lib.sh's
# (PORTS: rel-edge1, rel-edge2, rel-central, rel-single).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INSTALLED=no
if [ "${1:-}" = --installed ]; then INSTALLED=yes; shift; fi
VERSION=${1:-18}
SCENARIOS=("${@:2}")
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=(merge twins crash sorts)
DATA=$ROOT/tests/reliability
CLUSTER_NAMES="rel-edge1 rel-edge2 rel-central rel-single"
trap 'for c in $CLUSTER_NAMES; do stop_cluster $c; done' EXIT
# pg_ctl -w gives up after PGCTLTIMEOUT seconds (60 by default); crash recovery on a loaded
# machine is given 300 (docs/DEVELOPMENT.md, "Timing in the tests").
export PGCTLTIMEOUT=${PGCTLTIMEOUT:-300}

# The edges, by number: edge N is the cluster rel-edgeN.
edge_port() { echo "${PORTS[rel-edge$1]}"; }
CENTRAL_PORT=${PORTS[rel-central]}
SINGLE_PORT=${PORTS[rel-single]}

# q CLUSTER PORT SQL: one value, unaligned.
q() { psql_at "$1" "$2" postgres -At -c "$3"; }

# wait_for CLUSTER PORT SQL SECONDS: polls until SQL returns t, for at most SECONDS of wall
# time (a deadline, not a count of tries: each try takes longer on a loaded machine).
wait_for() {
    local deadline=$((SECONDS + $4))
    while [ "$SECONDS" -lt "$deadline" ]; do
        [ "$(q "$1" "$2" "$3")" = t ] && return 0
        sleep 0.2
    done
    die "timed out after $4 s waiting on $1 for: $3 (server log: $CLUSTERS/$1/server.log)"
}

# A cluster's log must hold no error (a failed apply of a replicated row, say). FATAL is not
# looked for: DROP SUBSCRIPTION ends its apply workers with one.
assert_clean_log() {
    if grep -E '(ERROR|PANIC):' "$CLUSTERS/$1/server.log"; then
        die "the server log of $1 has the errors above"
    fi
}

edge_conninfo() { # N
    echo "host=$(socket_dir "rel-edge$1") port=$(edge_port "$1") user=postgres dbname=postgres"
}

###########################################################################################
# Two edges (machine id and worker id 1 and 2) write at once; a central node subscribes to
# both, one subscription in binary mode, and holds every row byte for byte.
scenario_merge() {
    say "PostgreSQL $PG_MAJOR: two edges and a central node (logical replication)"
    local n
    for n in 1 2; do
        start_cluster "rel-edge$n" "$(edge_port $n)" preload \
            "$(printf '%s\n' "wal_level = logical" "pg_idgen.machine_id = $n" "pg_idgen.worker_id = $n")"
        psql_at "rel-edge$n" "$(edge_port $n)" postgres -f "$DATA/edge.sql"
    done
    start_cluster rel-central "$CENTRAL_PORT" preload "pg_idgen.worker_id = 100"
    psql_at rel-central "$CENTRAL_PORT" postgres -f "$DATA/central.sql"
    # Edge 1 in binary mode (xid12_send/xid12_recv on the wire), edge 2 in text mode.
    psql_at rel-central "$CENTRAL_PORT" postgres <<SQL
CREATE SUBSCRIPTION from_edge1 CONNECTION '$(edge_conninfo 1)' PUBLICATION edge_pub
    WITH (binary = true);
CREATE SUBSCRIPTION from_edge2 CONNECTION '$(edge_conninfo 2)' PUBLICATION edge_pub;
SQL

    # Both edges at once, 4 connections each, one transaction per row.
    local clients=4 rows_per_client=250 pgbench_pids=()
    for n in 1 2; do
        "$BINDIR/pgbench" -n -h "$(socket_dir "rel-edge$n")" -p "$(edge_port $n)" -U postgres -c "$clients" -j 2 \
            -t "$rows_per_client" -D edge="$n" -f "$DATA/edge_insert.pgbench" postgres \
            >"$OUT/pgbench-edge$n.log" 2>&1 &
        pgbench_pids[n]=$!
    done
    for n in 1 2; do
        wait "${pgbench_pids[n]}" || { cat "$OUT/pgbench-edge$n.log"; die "pgbench on edge $n failed"; }
    done

    local expected=$((clients * rows_per_client)) processed edge_fp central_fp
    for n in 1 2; do
        processed=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$OUT/pgbench-edge$n.log")
        [ "$processed" = "$expected" ] || die "pgbench on edge $n committed '$processed' rows, not $expected"
        [ "$(q "rel-edge$n" "$(edge_port $n)" "SELECT count(*) FROM events")" = "$expected" ] ||
            die "edge $n does not hold the $expected rows pgbench committed"
        wait_for rel-central "$CENTRAL_PORT" "SELECT count(*) >= $expected FROM events WHERE edge = $n" 120
        edge_fp=$(fingerprint "rel-edge$n" "$(edge_port $n)" "$n")
        central_fp=$(fingerprint rel-central "$CENTRAL_PORT" "$n")
        echo "edge $n:    $edge_fp"
        echo "central $n: $central_fp"
        [ "$edge_fp" = "$central_fp" ] || die "the central node's rows of edge $n differ from the edge's"
    done
    psql_at rel-central "$CENTRAL_PORT" postgres -f "$DATA/central_check.sql"
    if [ "$PG_MAJOR" -ge 15 ]; then
        local errors
        errors=$(q rel-central "$CENTRAL_PORT" \
            "SELECT coalesce(sum(apply_error_count + sync_error_count), -1) FROM pg_stat_subscription_stats")
        [ "$errors" = 0 ] || die "pg_stat_subscription_stats counts $errors errors"
    fi
    assert_clean_log rel-central
}

# count, md5 of the binary form of every column (xid12_send: the bytes binary mode sends),
# md5 of the text form, all in xid12 order: equal on an edge and on the central node for that
# edge's rows means byte-identical rows.
fingerprint() { # CLUSTER PORT EDGE
    q "$1" "$2" "SELECT count(*) || ' ' ||
        md5(string_agg(xid12_send(x) || int8send(s) || convert_to(r, 'UTF8') || int4send(client),
                       '\\x00'::bytea ORDER BY x)) || ' ' ||
        md5(string_agg(x::text || ' ' || s || ' ' || r || ' ' || client, ',' ORDER BY x))
        FROM events WHERE edge = $3"
}

###########################################################################################
# The merge's clusters, with edge 2 given edge 1's machine id and worker id: the
# misconfiguration to show (their Snowflake ids collide).
scenario_twins() {
    say "PostgreSQL $PG_MAJOR: two edges sharing machine id 1 and worker id 1"
    psql_at rel-central "$CENTRAL_PORT" postgres -c "DROP SUBSCRIPTION from_edge1" -c "DROP SUBSCRIPTION from_edge2"
    psql_at rel-edge2 "$(edge_port 2)" postgres \
        -c "ALTER SYSTEM SET pg_idgen.machine_id = 1" -c "ALTER SYSTEM SET pg_idgen.worker_id = 1"
    restart_cluster rel-edge2
    psql_at rel-central "$CENTRAL_PORT" postgres <<SQL
CREATE SUBSCRIPTION twin1 CONNECTION '$(edge_conninfo 1)' PUBLICATION twin_pub
    WITH (binary = true);
CREATE SUBSCRIPTION twin2 CONNECTION '$(edge_conninfo 2)' PUBLICATION twin_pub;
SQL
    # Both generate one row at a time during the same wall-clock second, from 1 s from now.
    # Each edge's psql is started and connected first, reading its statement from a FIFO; the
    # window is chosen only then, and the two statements written at once: starting a psql
    # and connecting (seconds on a loaded machine) is not in the time the window allows.
    local window n fd twin_pids=() twin_in=()
    for n in 1 2; do
        rm -f "$OUT/twin$n.in"
        mkfifo "$OUT/twin$n.in"
        PGAPPNAME=twin_fill "$BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$(socket_dir "rel-edge$n")" \
            -p "$(edge_port $n)" -U postgres -d postgres <"$OUT/twin$n.in" >"$OUT/twin$n.count" 2>"$OUT/twin$n.err" &
        twin_pids[n]=$!
    done
    # Opened once both are started, so that neither inherits the other's writing end (each
    # psql ends at the end of its input).
    for n in 1 2; do
        exec {fd}>"$OUT/twin$n.in"
        twin_in[n]=$fd
    done
    for n in 1 2; do
        wait_for "rel-edge$n" "$(edge_port $n)" \
            "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'twin_fill'" 120
    done
    window=$(q rel-edge1 "$(edge_port 1)" "SELECT now() + interval '1 s' || ',' || now() + interval '2 s'")
    for n in 1 2; do
        echo "SELECT twin_fill($n, '${window%,*}', '${window#*,}');" >&"${twin_in[n]}"
    done
    for n in 1 2; do
        fd=${twin_in[n]}
        exec {fd}>&-
    done
    for n in 1 2; do
        wait "${twin_pids[n]}" || { cat "$OUT/twin$n.err"; die "twin_fill failed on edge $n (server log: $CLUSTERS/rel-edge$n/server.log)"; }
    done
    for n in 1 2; do
        wait_for rel-central "$CENTRAL_PORT" \
            "SELECT count(*) >= $(cat "$OUT/twin$n.count") FROM twin WHERE edge = $n" 120
    done
    psql_at rel-central "$CENTRAL_PORT" postgres -f "$DATA/twin_check.sql"
    assert_clean_log rel-central
}

###########################################################################################
# crash_client CLIENT FIRST LAST: one connection inserting rows FIRST .. LAST of CLIENT, one
# transaction each; prints (as CSV) each row the server acknowledged, exit status in .rc.
crash_client() {
    local file=$OUT/client$1-from$2 rc=0
    seq "$2" "$3" | awk -v c="$1" -v q="'" '{
        printf "INSERT INTO crash VALUES (%d, %d, gen_xid12(), gen_snowflake(), rapkey_next(%sord.crash%s)) RETURNING client, seq, x, s, r;\n", c, $1, q, q
    }' | "$BINDIR/psql" -X -q -t --csv -v ON_ERROR_STOP=1 -h "$(socket_dir rel-single)" -p "$SINGLE_PORT" \
        -U postgres -d postgres >"$file.csv" 2>"$file.err" || rc=$?
    echo "$rc" >"$file.rc"
}

# What a session ended by pg_ctl stop -m immediate prints: the server's message (sent when it
# can), then libpq's on the lost connection, which depends on where psql was in its loop.
CRASH_MESSAGES='terminating connection due to immediate shutdown command|server closed the connection unexpectedly|connection to server was lost|no connection to the server|could not send data to server|could not receive data from server'

# assert_ended_by_crash CLIENT: the client's session was ended by the shutdown, and by nothing
# else. psql exits with 2 when it notices the lost connection itself and with 3 when the
# statement under way fails first (ON_ERROR_STOP); which one depends on where in its loop the
# shutdown lands, so either is accepted with the shutdown's or a lost connection's message in
# its stderr. An ERROR is a statement the server refused before the crash: a real failure.
assert_ended_by_crash() {
    local err=$OUT/client$1-from1.err rc
    rc=$(cat "$OUT/client$1-from1.rc")
    if [[ $rc != [23] ]] || ! grep -qE "$CRASH_MESSAGES" "$err" || grep -q 'ERROR:' "$err"; then
        echo "client $1: psql exited with status $rc; its stderr ($err):"
        sed 's/^/    /' "$err"
        die "client $1 was not ended by the crash: expected psql status 2 or 3, the shutdown's or a lost connection's message and no ERROR in its stderr, saw status $rc and the stderr above (server log: $CLUSTERS/rel-single/server.log)"
    fi
}

# pg_ctl stop -m immediate while four clients insert: every acknowledged row is there after
# recovery, amcheck passes, and new ids go into the same unique indexes.
scenario_crash() {
    say "PostgreSQL $PG_MAJOR: pg_ctl stop -m immediate during concurrent inserts"
    start_cluster rel-single "$SINGLE_PORT" preload "pg_idgen.worker_id = 5"
    psql_at rel-single "$SINGLE_PORT" postgres -f "$DATA/crash_setup.sql"
    local c client_pids=()
    for c in 1 2 3 4; do
        crash_client "$c" 1 1000000 &
        client_pids+=($!)
    done
    # Crash once every client has 50 committed rows: the clients are in the middle of their work.
    wait_for rel-single "$SINGLE_PORT" \
        "SELECT count(*) = 4 FROM (SELECT client FROM crash GROUP BY client HAVING count(*) >= 50) c" 120
    as_postgres "$BINDIR/pg_ctl" -D "$CLUSTERS/rel-single/data" -m immediate -w stop >/dev/null
    wait "${client_pids[@]}" || true
    for c in 1 2 3 4; do
        assert_ended_by_crash "$c"
        echo "client $c: $(wc -l <"$OUT/client$c-from1.csv") rows acknowledged before the crash" \
            "(psql status $(cat "$OUT/client$c-from1.rc"): $(grep -m1 -E "$CRASH_MESSAGES" "$OUT/client$c-from1.err"))"
    done
    restart_cluster rel-single
    grep -q "database system was not properly shut down; automatic recovery in progress" \
        "$CLUSTERS/rel-single/server.log" || die "the restart did not run crash recovery"
    cat "$OUT"/client?-from1.csv | psql_at rel-single "$SINGLE_PORT" postgres -f "$DATA/crash_check.sql"
    psql_at rel-single "$SINGLE_PORT" postgres -f "$DATA/crash_verify.sql" >>"$OUT/amcheck.log"
    # New ids go into the same unique indexes next to the stored ones: no unique violation.
    client_pids=()
    for c in 1 2 3 4; do
        crash_client "$c" 100001 100200 &
        client_pids+=($!)
    done
    wait "${client_pids[@]}" || true
    for c in 1 2 3 4; do
        [ "$(cat "$OUT/client$c-from100001.rc")" = 0 ] ||
            { cat "$OUT/client$c-from100001.err"; die "client $c failed to insert after the restart (psql status $(cat "$OUT/client$c-from100001.rc"), stderr above; server log: $CLUSTERS/rel-single/server.log)"; }
    done
    [ "$(q rel-single "$SINGLE_PORT" "SELECT count(*) FROM crash WHERE seq > 100000")" = 800 ] ||
        die "the rows inserted after the restart are not all there"
    psql_at rel-single "$SINGLE_PORT" postgres -f "$DATA/crash_verify.sql" >>"$OUT/amcheck.log"
}

###########################################################################################
# 2,000,000 xid12 sorted on disk and indexed by a parallel CREATE INDEX.
scenario_sorts() {
    say "PostgreSQL $PG_MAJOR: 2,000,000 xid12 sorted on disk and indexed in parallel"
    start_cluster rel-single "$SINGLE_PORT" preload "pg_idgen.worker_id = 5"
    psql_at rel-single "$SINGLE_PORT" postgres -c "CREATE DATABASE sorts"
    psql_at rel-single "$SINGLE_PORT" sorts -f "$DATA/sort_fill.sql"
    psql_at rel-single "$SINGLE_PORT" sorts -f "$DATA/sort_index.sql" 2>"$OUT/sort_index.log"
    # Participants that sorted: the leader and each launched worker report a "performsort of
    # worker N starting"; a build that launched no worker sorts serially and reports none.
    local participants
    participants=$(sed -nE 's/.*performsort of worker ([0-9]+) starting.*/\1/p' "$OUT/sort_index.log" | sort -u | wc -l)
    echo "parallel CREATE INDEX: $participants participants sorted"
    [ "$participants" -ge 2 ] || { cat "$OUT/sort_index.log"; die "CREATE INDEX did not run in parallel"; }
    psql_at rel-single "$SINGLE_PORT" sorts -f "$DATA/sort_verify.sql" >/dev/null
}

###########################################################################################
use_postgres "$VERSION"
[ "$INSTALLED" = yes ] || install_extension debug
OUT=$ROOT/target/reliability-pg$PG_MAJOR
rm -rf "$OUT"
mkdir -p "$OUT"
ran_merge=no
for scenario in "${SCENARIOS[@]}"; do
    case $scenario in
        merge) scenario_merge; ran_merge=yes ;;
        twins) [ "$ran_merge" = yes ] || { scenario_merge; ran_merge=yes; }; scenario_twins ;;
        crash) scenario_crash ;;
        sorts) scenario_sorts ;;
        *) die "unknown scenario '$scenario' (merge, twins, crash, sorts)" ;;
    esac
done
for c in $CLUSTER_NAMES; do stop_cluster "$c"; done
say "reliability tests passed (PostgreSQL $PG_MAJOR: ${SCENARIOS[*]})"
