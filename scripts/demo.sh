#!/usr/bin/env bash
# Sets everything up and shows pg_idgen working: installs what is missing, builds and
# installs the extension (release), starts a throwaway cluster with the library preloaded,
# runs a short demo and leaves the cluster running for you to connect to.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DIR=$ROOT/target/demo-cluster
PORT=${PG_IDGEN_DEMO_PORT:-54399}

ensure_deps
install_extension release
say "starting a throwaway cluster in $DIR (port $PORT)"
start_cluster "$DIR" "$PORT" preload
as_postgres "$BINDIR/psql" -h "$DIR/sock" -p "$PORT" -U postgres -d postgres -X -q \
    -v ON_ERROR_STOP=1 -f "$ROOT/scripts/demo.sql"

cat <<MSG

pg_idgen is running. Connect with:
    runuser -u postgres -- psql -h $DIR/sock -p $PORT -U postgres
Stop the cluster with:
    runuser -u postgres -- $BINDIR/pg_ctl -D $DIR/data stop
MSG
