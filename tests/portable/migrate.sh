#!/usr/bin/env bash
# tests/portable/migrate.sh OLD NEW: moving a database between pg_idgen's two editions, the
# procedures of portable/MIGRATING.md run as written there, from PostgreSQL OLD to NEW
# (e.g. 15 18, or 18 18).
#
#  1. portable -> native by pg_dump / pg_restore: a portable database on OLD (tables keyed by
#     xid12, a rapkey and a Snowflake column, indexes, a foreign key, a table hash-partitioned on
#     the xid12) restored into a NEW database that has the native extension;
#  2. native -> portable, the reverse, from a native database on OLD into a portable one on NEW;
#  3. logical replication (text mode) from the portable database on OLD to a native one on NEW,
#     with writes going on, then the switch-over; and the same from the native database on OLD
#     to a portable one on NEW;
#  4. what does not carry, each shown: binary COPY, a `binary = true` subscription, `::bytea`,
#     uppercase input, hash partitions restored without --load-via-partition-root, and the
#     binary protocol (a driver's view).
# After each move: every row equal as text (COPY output of every table, byte for byte, and the
# rapkey counters), every index valid (pg_index, and amcheck's bt_index_check with
# heapallindexed), `id > cursor` scans answered by the index with the same rows, and the
# generators continuing without a duplicate (tests/portable/migrate_continue.sql).
#
# Clusters under $PG_IDGEN_CLUSTERS (default /var/tmp/pg_idgen_portable_mig), ports
# $PORTABLE_MIG_PORT (default 54495) .. +2. The portable edition is installed as run.sh does it:
# the plain script, by a role that owns its database (NOSUPERUSER NOCREATEROLE NOCREATEDB).
# The native extension must be installed in NEW's PostgreSQL (target/postgresql/NEW) and, for
# the native source of part 2, in OLD's (target/postgresql/OLD, or Debian's PostgreSQL 15 for
# OLD = 15). Installs nothing; no shared lock needed (PG_IDGEN_LOCKED=1 unless set).
set -euo pipefail
OLD=${1:?usage: tests/portable/migrate.sh OLD NEW (PostgreSQL major versions, e.g. 15 18)}
NEW=${2:?usage: tests/portable/migrate.sh OLD NEW (PostgreSQL major versions, e.g. 15 18)}
[ "$OLD" -le "$NEW" ] || { echo "error: OLD ($OLD) must not be newer than NEW ($NEW)" >&2; exit 1; }
export PG_IDGEN_LOCKED=${PG_IDGEN_LOCKED:-1}
export PG_IDGEN_CLUSTERS=${PG_IDGEN_CLUSTERS:-/var/tmp/pg_idgen_portable_mig}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib.sh"
BASE=${PORTABLE_MIG_PORT:-54495}
P_OLD=$BASE           # mig-old: OLD, portable databases (app: the source and the publisher)
P_OLDN=$((BASE + 1))  # mig-oldnative: OLD, the native source of part 2
P_NEW=$((BASE + 2))   # mig-new: NEW, native preloaded: the targets of all three moves
VERSION=$(extension_version)
SCRIPT=$ROOT/portable/dist/pg_idgen_portable--$VERSION.sql
HERE=$ROOT/tests/portable
WORK=$CLUSTERS/work
STARTED=$SECONDS
TABLES="customer orders event edge"

native_here() {
    [ -f "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/pg_idgen.control" ]
}
# use_native_source: the PostgreSQL OLD that runs part 2's native source. OLD's private build
# when the native extension is installed there (scripts/test.sh installs it for its 15 -> 18
# leg); PORTABLE_MIG_NATIVE_PG_CONFIG names another installation of OLD that has it;
# otherwise NEW's, and the part says so.
NATIVE_SOURCE_NOTE=""
use_native_source() {
    if [ -n "${PORTABLE_MIG_NATIVE_PG_CONFIG:-}" ]; then
        # Only what start_cluster needs: not registered with cargo-pgrx (use_pg_config).
        PG_CONFIG=$PORTABLE_MIG_NATIVE_PG_CONFIG
        BINDIR=$("$PG_CONFIG" --bindir)
        PG_MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
        [ "$PG_MAJOR" = "$OLD" ] || die "PORTABLE_MIG_NATIVE_PG_CONFIG is PostgreSQL $PG_MAJOR, not $OLD"
        native_here || die "no native extension in $PG_CONFIG's PostgreSQL"
        return
    fi
    use_private_postgres "$OLD"
    native_here && return
    use_private_postgres "$NEW"
    native_here || die "the native extension is not installed in PostgreSQL $NEW (scripts/install.sh)"
    NATIVE_SOURCE_NOTE=" (native source on PostgreSQL $NEW: PostgreSQL $OLD's build has no native extension)"
}

trap 'stop_cluster mig-new; stop_cluster mig-oldnative; stop_cluster mig-old' EXIT
use_private_postgres "$OLD"
say "PostgreSQL $OLD (portable, wal_level = logical), port $P_OLD: $BINDIR"
start_cluster mig-old "$P_OLD" plain "wal_level = logical"
use_native_source
NATIVE_MAJOR=$PG_MAJOR
say "PostgreSQL $PG_MAJOR (native, pg_idgen.worker_id = 6, wal_level = logical), port $P_OLDN: $BINDIR"
start_cluster mig-oldnative "$P_OLDN" preload "pg_idgen.worker_id = 6
wal_level = logical"
use_private_postgres "$NEW"
native_here || die "the native extension is not installed in PostgreSQL $NEW (scripts/install.sh)"
say "PostgreSQL $NEW (native preloaded), port $P_NEW: $BINDIR"
start_cluster mig-new "$P_NEW" preload
# From here on every client (psql, pg_dump, pg_restore) is NEW's: dump with the newer pg_dump.
rm -rf "$WORK"
mkdir -p "$WORK"

# q CLUSTER PORT ROLE DB ARGS...: psql, stopping at errors.
q() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$(socket_dir "$1")" -p "$2" -U "$3" -d "$4" "${@:5}"; }
conn() { echo "-h $(socket_dir "$1") -p $2 -U $3 -d $4"; }
# The connections the procedures use, by name.
OLD_APP="mig-old $P_OLD idgen_owner app"         # the portable source / publisher, as its owner
OLDN_APP="mig-oldnative $P_OLDN postgres app"    # the native source
# shellcheck disable=SC2086
at() { local c=$1; shift; q $c "$@"; }
val() { local c=$1; shift; at "$c" -tAc "$@"; }

# texts CONNECTION FILE: every table's rows as COPY text ordered by id, then the rapkey counters.
texts() {
    local t
    : >"$2"
    for t in $TABLES; do at "$1" -c "COPY (SELECT * FROM $t ORDER BY id) TO STDOUT" >>"$2"; done
    at "$1" -c "COPY (SELECT * FROM idgen.rapkey_counter ORDER BY prefix) TO STDOUT" >>"$2"
}

# verify SOURCE TARGET LABEL: the checks after a move (before any new id).
verify() {
    local src=$1 dst=$2 label=$3 cursor n_src n_dst plan t
    texts "$src" "$WORK/src.txt"
    texts "$dst" "$WORK/dst.txt"
    cmp -s "$WORK/src.txt" "$WORK/dst.txt" || { diff "$WORK/src.txt" "$WORK/dst.txt" | head; die "$label: the rows differ"; }
    echo "$label: $(wc -l <"$WORK/src.txt") rows (4 tables and the rapkey counters) equal as text, md5 $(md5sum <"$WORK/dst.txt" | cut -c1-12)"
    local idx="SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT (i.indisvalid AND i.indisready AND i.indislive))
               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = 'public'::regnamespace"
    n_src=$(val "$src" "$idx")
    n_dst=$(val "$dst" "$idx")
    if [ "${n_src% *}" != "${n_dst% *}" ] || [ "${n_dst#* }" != 0 ]; then
        die "$label: indexes: source $n_src, target $n_dst (count, not valid)"
    fi
    # amcheck: every btree index holds exactly the table's rows (heapallindexed).
    local dst_su=${dst% * *}" postgres "${dst##* }
    n_dst=$(at "$dst_su" -tA -c "SET client_min_messages = warning" -c "CREATE SCHEMA mig_check" -c "CREATE EXTENSION amcheck SCHEMA mig_check" \
        -c "SELECT count(mig_check.bt_index_check(c.oid, true)) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
            WHERE c.relkind = 'i' AND a.amname = 'btree' AND c.relnamespace = 'public'::regnamespace" \
        -c "DROP SCHEMA mig_check CASCADE")
    echo "$label: ${n_src% *} indexes valid, $n_dst btree indexes pass bt_index_check(heapallindexed)"
    for t in orders event; do
        cursor=$(val "$src" "SELECT id FROM $t ORDER BY id OFFSET 1000 LIMIT 1")
        local scan="SELECT id FROM $t WHERE id > '$cursor' ORDER BY id LIMIT 500"
        [ "$(at "$src" -c "COPY ($scan) TO STDOUT" | md5sum)" = "$(at "$dst" -c "COPY ($scan) TO STDOUT" | md5sum)" ] ||
            die "$label: $scan differs"
        plan=$(val "$dst" "EXPLAIN (COSTS OFF) $scan")
        grep -q "Index.* Scan using" <<<"$plan" || die "$label: $scan is not an index scan: $plan"
    done
    echo "$label: id > cursor (orders, event) gives the same 500 rows, by index scan"
}

roles() { # the application's roles, on every cluster
    q "$1" "$2" postgres postgres -c "CREATE ROLE idgen_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB"
}
roles mig-old "$P_OLD"
roles mig-oldnative "$P_OLDN"
roles mig-new "$P_NEW"

# ---------------------------------------------------------------------------------------------
say "the portable source on PostgreSQL $OLD: install as idgen_owner, worker_id 5, fill"
q mig-old "$P_OLD" postgres postgres -c "CREATE DATABASE app OWNER idgen_owner"
at "$OLD_APP" -v schema=idgen -f "$SCRIPT"
at "$OLD_APP" -c "UPDATE idgen.idgen_config SET worker_id = 5"
at "$OLD_APP" -f "$HERE/migrate_fill.sql"
echo "filled: $(val "$OLD_APP" "SELECT string_agg(t || ' ' || n, ', ') FROM (VALUES ('customer', (SELECT count(*) FROM customer)),
    ('orders', (SELECT count(*) FROM orders)), ('event', (SELECT count(*) FROM event)), ('edge', (SELECT count(*) FROM edge))) v(t, n)") rows"

# ---------------------------------------------------------------------------------------------
say "1. portable ($OLD) -> native ($NEW): pg_dump, pg_restore"
t0=$SECONDS
# MIGRATING.md 1.1: the target database, the native extension in the schema the portable
# edition used, and the rights the application's roles need on it.
q mig-new "$P_NEW" postgres postgres -c "CREATE DATABASE app OWNER idgen_owner"
q mig-new "$P_NEW" postgres app \
    -c "CREATE SCHEMA idgen AUTHORIZATION idgen_owner" \
    -c "CREATE EXTENSION pg_idgen SCHEMA idgen" \
    -c "GRANT SELECT, INSERT, UPDATE ON idgen.rapkey_counter TO idgen_owner" \
    -c "GRANT USAGE ON TYPE idgen.xid12, idgen.rapkey TO idgen_owner" \
    -c "ALTER DATABASE app SET search_path = \"\$user\", public, idgen"
# 1.2: the configuration: the worker id and the epoch the portable edition used.
read -r worker epoch < <(val "$OLD_APP" "SELECT worker_id || ' ' || snowflake_epoch FROM idgen.idgen_config")
q mig-new "$P_NEW" postgres app \
    -c "ALTER SYSTEM SET pg_idgen.worker_id = $worker" \
    -c "ALTER SYSTEM SET pg_idgen.snowflake_epoch = '$epoch'" \
    -c "SELECT pg_reload_conf()" >/dev/null
# 1.3: dump everything but the portable edition's schema; restore; move the rapkey counters.
# shellcheck disable=SC2046
pg_dump -Fc --load-via-partition-root --exclude-schema=idgen $(conn mig-old "$P_OLD" idgen_owner app) -f "$WORK/app.dump"
# shellcheck disable=SC2046
pg_restore --exit-on-error $(conn mig-new "$P_NEW" idgen_owner app) "$WORK/app.dump"
at "$OLD_APP" -c "COPY idgen.rapkey_counter TO STDOUT" |
    q mig-new "$P_NEW" postgres app -c "COPY idgen.rapkey_counter FROM STDIN"
echo "dump $(stat -c %s "$WORK/app.dump") bytes; dump, restore and counters: $((SECONDS - t0)) s"
for _ in $(seq 50); do
    [ "$(q mig-new "$P_NEW" idgen_owner app -tAc "SHOW pg_idgen.worker_id")" = "$worker" ] && break
    sleep 0.1
done
verify "$OLD_APP" "mig-new $P_NEW idgen_owner app" "portable -> native"
moved=$(diff <(at "$OLD_APP" -c "COPY (SELECT tableoid::regclass, id FROM event ORDER BY id) TO STDOUT") \
             <(q mig-new "$P_NEW" idgen_owner app -c "COPY (SELECT tableoid::regclass, id FROM event ORDER BY id) TO STDOUT") |
        grep -c '^>' || true)
echo "portable -> native: $moved of $(val "$OLD_APP" "SELECT count(*) FROM event") events are in another hash partition than in the source"
q mig-new "$P_NEW" idgen_owner app -v worker="$worker" -f "$HERE/migrate_continue.sql"

# ---------------------------------------------------------------------------------------------
say "2. native ($NATIVE_MAJOR) -> portable ($NEW): pg_dump, pg_restore$NATIVE_SOURCE_NOTE"
q mig-oldnative "$P_OLDN" postgres postgres -c "CREATE DATABASE app OWNER idgen_owner"
at "$OLDN_APP" -c "CREATE SCHEMA idgen AUTHORIZATION idgen_owner" -c "CREATE EXTENSION pg_idgen SCHEMA idgen" \
    -c "GRANT SELECT, INSERT, UPDATE ON idgen.rapkey_counter TO idgen_owner" \
    -c "GRANT USAGE ON TYPE idgen.xid12, idgen.rapkey TO idgen_owner" \
    -c "ALTER DATABASE app SET search_path = \"\$user\", public, idgen"
q mig-oldnative "$P_OLDN" idgen_owner app -f "$HERE/migrate_fill.sql"
t0=$SECONDS
# 2.1: the target database, the portable edition installed by its owner into the schema the
# native extension used, with the source's worker id and epoch.
q mig-new "$P_NEW" postgres postgres -c "CREATE DATABASE app2 OWNER idgen_owner"
q mig-new "$P_NEW" idgen_owner app2 -v schema=idgen -f "$SCRIPT"
read -r worker epoch < <(val "$OLDN_APP" "SELECT current_setting('pg_idgen.worker_id') || ' ' || current_setting('pg_idgen.snowflake_epoch')")
q mig-new "$P_NEW" idgen_owner app2 -c "UPDATE idgen.idgen_config SET worker_id = $worker, snowflake_epoch = $epoch"
# 2.2: dump everything but the extension (and its schema), restore as the owner, counters.
# pg_dump 17 and later: --exclude-extension. Before 17: the dump's list without the extension.
if [ "$NEW" -ge 17 ]; then
    # shellcheck disable=SC2046
    pg_dump -Fc --load-via-partition-root --exclude-schema=idgen --exclude-extension=pg_idgen \
        $(conn mig-oldnative "$P_OLDN" postgres app) -f "$WORK/native.dump"
    # shellcheck disable=SC2046
    pg_restore --exit-on-error --no-owner $(conn mig-new "$P_NEW" idgen_owner app2) "$WORK/native.dump"
fi
# The way before 17 (tested here on every version): a restore list without the extension.
# shellcheck disable=SC2046
pg_dump -Fc --load-via-partition-root --exclude-schema=idgen $(conn mig-oldnative "$P_OLDN" postgres app) -f "$WORK/native16.dump"
pg_restore -l "$WORK/native16.dump" | grep -v -E ' EXTENSION - pg_idgen | COMMENT - EXTENSION pg_idgen ' >"$WORK/native16.list"
listed_db=app2
if [ "$NEW" -ge 17 ]; then
    listed_db=app2b
    q mig-new "$P_NEW" postgres postgres -c "CREATE DATABASE app2b OWNER idgen_owner"
    q mig-new "$P_NEW" idgen_owner app2b -v schema=idgen -f "$SCRIPT"
fi
# shellcheck disable=SC2046
pg_restore --exit-on-error --no-owner -L "$WORK/native16.list" $(conn mig-new "$P_NEW" idgen_owner "$listed_db") "$WORK/native16.dump"
echo "the restore list leaves out: $(pg_restore -l "$WORK/native16.dump" | grep -E ' EXTENSION - pg_idgen | COMMENT - EXTENSION pg_idgen ' | sed -E 's/^[0-9]+; [0-9]+ [0-9]+ //' | paste -sd';')"
if [ "$listed_db" = app2b ]; then
    texts "mig-new $P_NEW idgen_owner app2" "$WORK/a.txt"
    texts "mig-new $P_NEW idgen_owner app2b" "$WORK/b.txt"
    cmp -s "$WORK/a.txt" "$WORK/b.txt" || die "native -> portable: the restore by list differs from the one by --exclude-extension"
    echo "native -> portable: the restore by list (pg_dump before 17) gives the same rows"
fi
at "$OLDN_APP" -c "COPY idgen.rapkey_counter TO STDOUT" |
    q mig-new "$P_NEW" idgen_owner app2 -c "COPY idgen.rapkey_counter FROM STDIN"
echo "dump $(stat -c %s "$WORK/native.dump") bytes; install, dump, restore and counters: $((SECONDS - t0)) s"
[ "$(q mig-new "$P_NEW" idgen_owner app2 -tAc "SELECT count(*) FROM pg_extension WHERE extname = 'pg_idgen'")" = 0 ] ||
    die "native -> portable: the target has the native extension"
verify "$OLDN_APP" "mig-new $P_NEW idgen_owner app2" "native -> portable"
q mig-new "$P_NEW" idgen_owner app2 -v worker="$worker" -f "$HERE/migrate_continue.sql"

# ---------------------------------------------------------------------------------------------
# replicate LABEL PUB_CLUSTER PUB_PORT PUB_CREATOR SUB_DB WORKER: part 3 from the database app of
# PUB_CLUSTER (the publication made by PUB_CREATOR: the tables' owner, or postgres where the
# rapkey counters belong to the native extension) into SUB_DB of mig-new, made ready by the
# caller (3.1), with writes going on, then the switch-over.
replicate() {
    local label=$1 pub_cluster=$2 pub_port=$3 creator=$4 sub=$5 worker=$6 t0=$SECONDS lsn
    local pub="$pub_cluster $pub_port idgen_owner app" pub_su="$pub_cluster $pub_port postgres app"
    local sub_su="mig-new $P_NEW postgres $sub"
    # 3.2 publisher: the application's tables and the rapkey counters, through the partition
    # root; a role that may replicate and read them.
    q "$pub_cluster" "$pub_port" postgres postgres -c "CREATE ROLE idgen_repl LOGIN REPLICATION"
    at "$pub_su" -c "GRANT USAGE ON SCHEMA idgen TO idgen_repl" -c "GRANT SELECT ON idgen.rapkey_counter TO idgen_repl"
    at "$pub" -c "GRANT SELECT ON customer, orders, event, edge TO idgen_repl"
    at "$pub_cluster $pub_port $creator app" \
        -c "CREATE PUBLICATION idgen_move FOR TABLE customer, orders, event, edge, idgen.rapkey_counter
            WITH (publish_via_partition_root = true)"
    # The application keeps writing on the publisher meanwhile: new customers, orders and
    # events (the generators' defaults), updates and deletes, until told to stop.
    rm -f "$WORK/stop" "$WORK/writer.rounds"
    writer() {
        local i=0
        while [ ! -e "$WORK/stop" ]; do
            i=$((i + 1))
            at "$pub" -c "
                INSERT INTO customer (name) SELECT 'live $i.' || g FROM generate_series(1, 20) g;
                INSERT INTO orders (customer_id, ref, amount)
                    SELECT id, idgen.rapkey_next('ord.live'), 2 FROM customer WHERE name LIKE 'live $i.%';
                INSERT INTO event (customer_id, body) SELECT id, 'live' FROM customer WHERE name LIKE 'live $i.%';
                UPDATE orders SET amount = amount + 1 WHERE id IN (SELECT id FROM orders ORDER BY random() LIMIT 5);
                DELETE FROM event WHERE id IN (SELECT id FROM event WHERE body LIKE 'event %' ORDER BY random() LIMIT 3);"
        done
        echo "$i" >"$WORK/writer.rounds"
    }
    writer &
    local writer_pid=$!
    # 3.3: the subscription, in text mode.
    at "$sub_su" -c "SET client_min_messages = warning" -c "CREATE SUBSCRIPTION idgen_move
        CONNECTION 'host=$(socket_dir "$pub_cluster") port=$pub_port dbname=app user=idgen_repl'
        PUBLICATION idgen_move WITH (binary = false)"
    # 3.4: wait for the initial copy of every table.
    local ready="SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate <> 'r'"
    for _ in $(seq 600); do
        [ "$(val "$sub_su" "$ready")" = t ] && break
        sleep 0.1
    done
    [ "$(val "$sub_su" "$ready")" = t ] || die "$label: the initial copy did not finish in 60 s"
    echo "$label: initial copy done after $((SECONDS - t0)) s"
    sleep 2
    # 3.5 switch-over: stop the writers (here: the writer above, and the database made
    # read-only for new sessions), note the publisher's WAL position, wait until the
    # subscription has it.
    touch "$WORK/stop"
    wait "$writer_pid"
    at "$pub" -c "ALTER DATABASE app SET default_transaction_read_only = on"
    if at "$pub" -c "INSERT INTO customer (name) VALUES ('late')" 2>/dev/null; then die "$label: the publisher still takes writes"; fi
    lsn=$(val "$pub_su" "SELECT pg_current_wal_lsn()")
    local caught="SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = 'idgen_move'"
    for _ in $(seq 300); do
        [ "$(val "$pub_su" "$caught")" = t ] && break
        sleep 0.1
    done
    [ "$(val "$pub_su" "$caught")" = t ] || die "$label: the subscriber did not reach $lsn in 30 s"
    echo "$label: $(cat "$WORK/writer.rounds") rounds of writes during the move; caught up with $lsn"
    # 3.6: compare (the same checks as after a restore), then end the subscription (which
    # drops its slot on the publisher) and point the writers at the new database.
    verify "$pub" "mig-new $P_NEW idgen_owner $sub" "$label"
    at "$sub_su" -c "SET client_min_messages = warning" -c "DROP SUBSCRIPTION idgen_move"
    [ "$(val "$pub_su" "SELECT count(*) FROM pg_replication_slots")" = 0 ] || die "$label: a replication slot is left on the publisher"
    q mig-new "$P_NEW" idgen_owner "$sub" -v worker="$worker" -f "$HERE/migrate_continue.sql"
    at "$pub_cluster $pub_port $creator app" -c "SET default_transaction_read_only = off" -c "DROP PUBLICATION idgen_move"
    at "$pub" -c "SET default_transaction_read_only = off" -c "ALTER DATABASE app RESET default_transaction_read_only"
    echo "$label: replication and switch-over in $((SECONDS - t0)) s"
}

say "3. logical replication (text): portable ($OLD) -> native ($NEW), writes going on, switch-over"
# 3.1 subscriber: the native extension as in 1.1, and the schema without data.
q mig-new "$P_NEW" postgres postgres -c "CREATE DATABASE repl OWNER idgen_owner"
q mig-new "$P_NEW" postgres repl \
    -c "CREATE SCHEMA idgen AUTHORIZATION idgen_owner" \
    -c "CREATE EXTENSION pg_idgen SCHEMA idgen" \
    -c "GRANT SELECT, INSERT, UPDATE ON idgen.rapkey_counter TO idgen_owner" \
    -c "GRANT USAGE ON TYPE idgen.xid12, idgen.rapkey TO idgen_owner" \
    -c "ALTER DATABASE repl SET search_path = \"\$user\", public, idgen"
# shellcheck disable=SC2046
pg_dump -Fc --schema-only --no-publications --no-subscriptions --exclude-schema=idgen $(conn mig-old "$P_OLD" idgen_owner app) -f "$WORK/schema.dump"
# shellcheck disable=SC2046
pg_restore --exit-on-error $(conn mig-new "$P_NEW" idgen_owner repl) "$WORK/schema.dump"
replicate "portable -> native replication" mig-old "$P_OLD" idgen_owner repl 5

say "3r. logical replication (text): native ($NATIVE_MAJOR) -> portable ($NEW), the other way round"
# 3.1 subscriber: the portable edition as in 2.1, and the schema without data or extension.
q mig-new "$P_NEW" postgres postgres -c "CREATE DATABASE repl2 OWNER idgen_owner"
q mig-new "$P_NEW" idgen_owner repl2 -v schema=idgen -f "$SCRIPT"
q mig-new "$P_NEW" idgen_owner repl2 -c "UPDATE idgen.idgen_config SET worker_id = 6"
# shellcheck disable=SC2046
pg_dump -Fc --schema-only --no-publications --no-subscriptions --exclude-schema=idgen \
    $(conn mig-oldnative "$P_OLDN" postgres app) -f "$WORK/schema2.dump"
pg_restore -l "$WORK/schema2.dump" | grep -v -E ' EXTENSION - pg_idgen | COMMENT - EXTENSION pg_idgen ' >"$WORK/schema2.list"
# shellcheck disable=SC2046
pg_restore --exit-on-error --no-owner -L "$WORK/schema2.list" $(conn mig-new "$P_NEW" idgen_owner repl2) "$WORK/schema2.dump"
replicate "native -> portable replication" mig-oldnative "$P_OLDN" postgres repl2 6

# ---------------------------------------------------------------------------------------------
say "4. what does not carry"
NEW_APP="mig-new $P_NEW idgen_owner app"       # native (part 1's target)
NEW_APP2="mig-new $P_NEW idgen_owner app2"     # portable (part 2's target)
# Binary COPY: the portable edition sends text's binary form (the 20 characters), native the
# 12 bytes; neither reads the other's.
for pair in "$OLD_APP|$NEW_APP|portable -> native" "$NEW_APP|$NEW_APP2|native -> portable"; do
    IFS='|' read -r from to label <<<"$pair"
    at "$from" -c "COPY (SELECT id FROM customer ORDER BY id LIMIT 3) TO STDOUT (FORMAT binary)" >"$WORK/ids.bin"
    if err=$(at "$to" -c "CREATE TEMP TABLE b (id idgen.xid12)" -c "COPY b FROM STDIN (FORMAT binary)" <"$WORK/ids.bin" 2>&1); then
        die "binary COPY $label was accepted"
    fi
    echo "binary COPY $label: refused: $(grep -m1 ERROR <<<"$err")"
done
# ::bytea: the view customer_bytes (id::bytea) was moved as it was written, and now reads
# another length.
echo "::bytea: customer_bytes.b is $(val "$OLD_APP" "SELECT octet_length(b) FROM customer_bytes LIMIT 1") bytes in the portable source," \
    "$(val "$NEW_APP" "SELECT octet_length(b) FROM customer_bytes LIMIT 1") in its native copy;" \
    "xid12_to_bytea(id) is $(val "$OLD_APP" "SELECT octet_length(idgen.xid12_to_bytea(id)) FROM customer LIMIT 1") and" \
    "$(val "$NEW_APP" "SELECT octet_length(idgen.xid12_to_bytea(id)) FROM customer LIMIT 1")"
if [ "$(val "$OLD_APP" "SELECT count(*) FROM customer_bytes WHERE octet_length(b) <> 20")" != 0 ] ||
    [ "$(val "$NEW_APP" "SELECT count(*) FROM customer_bytes WHERE octet_length(b) <> 12")" != 0 ] ||
    [ "$(val "$OLD_APP" "SELECT md5(string_agg(encode(idgen.xid12_to_bytea(id), 'hex'), ',' ORDER BY id)) FROM customer WHERE name NOT LIKE 'live %'")" != \
      "$(val "$NEW_APP" "SELECT md5(string_agg(encode(b, 'hex'), ',' ORDER BY id)) FROM customer_bytes JOIN customer USING (id) WHERE name NOT LIKE 'after %'")" ]; then
    die "::bytea: not as described"
fi
# Uppercase input: native reads it (and stores lowercase), portable refuses it (22P02);
# to_xid12() is the portable spelling of native's input.
upper=$(val "$NEW_APP" "SELECT upper(idgen.gen_xid12()::text)")
[ "$(val "$NEW_APP" "SELECT '$upper'::idgen.xid12")" = "${upper,,}" ] || die "native did not read $upper"
if err=$(at "$NEW_APP2" -c "SELECT '$upper'::idgen.xid12" 2>&1); then die "portable read uppercase $upper"; fi
[ "$(val "$NEW_APP2" "SELECT idgen.to_xid12('$upper')")" = "${upper,,}" ] || die "to_xid12 did not read $upper"
echo "uppercase '$upper': native reads it, portable refuses: $(grep -m1 ERROR <<<"$err"); to_xid12() reads it"
# Hash partitions without --load-via-partition-root: each partition's rows are loaded into
# the partition of the same name, whose bound the other edition's hash does not satisfy.
# shellcheck disable=SC2046
pg_dump -Fc --exclude-schema=idgen $(conn mig-old "$P_OLD" idgen_owner app) -f "$WORK/noroot.dump"
q mig-new "$P_NEW" postgres postgres -c "CREATE DATABASE noroot OWNER idgen_owner"
q mig-new "$P_NEW" postgres noroot -c "CREATE SCHEMA idgen AUTHORIZATION idgen_owner" -c "CREATE EXTENSION pg_idgen SCHEMA idgen" \
    -c "GRANT USAGE ON TYPE idgen.xid12, idgen.rapkey TO idgen_owner"
# shellcheck disable=SC2046
if err=$(pg_restore --exit-on-error $(conn mig-new "$P_NEW" idgen_owner noroot) "$WORK/noroot.dump" 2>&1); then
    die "a restore without --load-via-partition-root passed"
fi
echo "without --load-via-partition-root: the restore fails: $(grep -m1 -o 'ERROR: .*' <<<"$err")"
# A `binary = true` subscription: the same publication, a native subscriber asking for the
# binary form. The rows reach it as text's binary form and its xid12 refuses them.
at "$OLD_APP" -c "CREATE TABLE bin_probe (id idgen.xid12 PRIMARY KEY DEFAULT idgen.gen_xid12(), note text)" \
    -c "INSERT INTO bin_probe (note) VALUES ('before')" -c "CREATE PUBLICATION idgen_bin FOR TABLE bin_probe"
q mig-new "$P_NEW" postgres postgres -c "CREATE DATABASE binprobe"
q mig-new "$P_NEW" postgres binprobe -c "CREATE SCHEMA idgen" -c "CREATE EXTENSION pg_idgen SCHEMA idgen" \
    -c "CREATE TABLE bin_probe (id idgen.xid12 PRIMARY KEY, note text)" \
    -c "SET client_min_messages = warning" -c "CREATE SUBSCRIPTION idgen_bin CONNECTION 'host=$(socket_dir mig-old) port=$P_OLD dbname=app user=postgres'
        PUBLICATION idgen_bin WITH (binary = true)"
errors=0
for i in $(seq 200); do
    [ "$i" = 20 ] && at "$OLD_APP" -c "INSERT INTO bin_probe (note) VALUES ('after')"
    errors=$(q mig-new "$P_NEW" postgres binprobe -tAc "SELECT sync_error_count + apply_error_count FROM pg_stat_subscription_stats WHERE subname = 'idgen_bin'")
    [ "$errors" -gt 0 ] && [ "$i" -gt 20 ] && break
    sleep 0.1
done
[ "$errors" -gt 0 ] || die "the binary = true subscription had no error in 20 s"
rows=$(q mig-new "$P_NEW" postgres binprobe -tAc "SELECT count(*) FROM bin_probe")
[ "$(q mig-new "$P_NEW" postgres binprobe -tAc "SELECT count(*) FROM bin_probe WHERE note = 'after'")" = 0 ] || die "binary = true: a row arrived"
q mig-new "$P_NEW" postgres binprobe -c "SET client_min_messages = warning" -c "ALTER SUBSCRIPTION idgen_bin DISABLE" \
    -c "DROP SUBSCRIPTION idgen_bin"
at "$OLD_APP" -c "DROP PUBLICATION idgen_bin"
echo "binary = true subscription: $errors errors, rows arrived: $rows of 2; the log: $(grep -a -m1 -o 'ERROR: .*xid12.*' "$CLUSTERS/mig-new/server.log" || grep -a -m1 -o 'ERROR: .*binary.*' "$CLUSTERS/mig-new/server.log")"
# The binary protocol, as a driver sees it (psycopg, binary results).
if [ -x "$ROOT/.venv/bin/python" ] && "$ROOT/.venv/bin/python" -c "import psycopg" 2>/dev/null; then
    "$ROOT/.venv/bin/python" - "host=$(socket_dir mig-old) port=$P_OLD user=idgen_owner dbname=app" \
        "host=$(socket_dir mig-new) port=$P_NEW user=idgen_owner dbname=app" <<'PY'
import sys, psycopg
seen = []
for label, dsn in zip(("portable", "native"), sys.argv[1:]):
    with psycopg.connect(dsn) as conn, conn.cursor(binary=True) as cur:
        cur.execute("SELECT id FROM customer ORDER BY id LIMIT 1")
        value = cur.fetchone()[0]
        typ = conn.execute("SELECT format_type(%s, NULL)", [cur.description[0].type_code]).fetchone()[0]
        seen.append((label, typ, value))
(_, ptyp, pval), (_, ntyp, nval) = seen
assert ptyp == "text" and isinstance(pval, str) and len(pval) == 20, seen
assert ntyp != "text" and isinstance(nval, bytes) and len(nval) == 12, seen
print(f"binary protocol: portable sends type {ptyp} ({pval!r}), native type {ntyp} ({len(nval)} bytes)")
PY
fi

say "migrate.sh $OLD $NEW: passed ($((SECONDS - STARTED)) s)"
