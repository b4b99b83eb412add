#!/usr/bin/env bash
# Sets everything up and shows pg_idgen working: installs what is missing, builds and
# installs the extension (release), starts a throwaway cluster with the library preloaded,
# runs a short demo and leaves the cluster running for you to connect to.
#   bash scripts/demo.sh        # PostgreSQL 15 (Debian's)
#   bash scripts/demo.sh 18     # any supported version, from target/postgresql/18
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${PORTS[demo]}

# shellcheck disable=SC2119  # no --for-tests
ensure_deps
use_postgres "${1:-15}"
install_extension release
# One demo cluster per version, kept between runs: a second run restarts it (loading the new
# build) and keeps whatever you put in it. Only the database idgen_demo is made afresh.
NAME=demo-$PG_MAJOR
for other in "$CLUSTERS"/demo-*; do # they share the port
    [ "$other" = "$CLUSTERS/$NAME" ] || stop_cluster "$(basename "$other")"
done
if [ -f "$CLUSTERS/$NAME/data/PG_VERSION" ]; then
    say "restarting the demo cluster in $CLUSTERS/$NAME (port $PORT); its databases are kept"
    restart_cluster "$NAME"
else
    say "starting a new demo cluster in $CLUSTERS/$NAME (port $PORT)"
    # The demo cluster is Snowflake worker 1; a real cluster picks its own id (0..1023).
    start_cluster "$NAME" "$PORT" preload "pg_idgen.worker_id = 1"
fi
SOCK=$(socket_dir "$NAME")
psql_at "$NAME" "$PORT" postgres -c "DROP DATABASE IF EXISTS idgen_demo" -c "CREATE DATABASE idgen_demo"
psql_at "$NAME" "$PORT" idgen_demo -f "$ROOT/scripts/demo.sql"

AS_PG=$([ -n "$SUDO" ] && echo "sudo -u postgres" || echo "runuser -u postgres --")
cat <<MSG

pg_idgen is running. Connect with:
    $BINDIR/psql -h $SOCK -p $PORT -U postgres -d idgen_demo
Stop the cluster with:
    $AS_PG $BINDIR/pg_ctl -D $CLUSTERS/$NAME/data stop
Remove it (after stopping it) with:
    ${SUDO:+sudo }rm -rf $CLUSTERS/$NAME
Running this script again restarts the cluster and keeps your data, except the idgen_demo
database, which it makes afresh.
MSG
