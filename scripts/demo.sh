#!/usr/bin/env bash
# Sets everything up and shows pg_idgen working: installs what is missing, builds and
# installs the extension (release), starts a throwaway cluster with the library preloaded,
# runs a short demo and leaves the cluster running for you to connect to.
#   bash scripts/demo.sh        # PostgreSQL 15 (Debian's)
#   bash scripts/demo.sh 18     # any supported version, from target/postgresql/18
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${PG_IDGEN_DEMO_PORT:-54399}

ensure_deps
use_postgres "${1:-15}"
install_extension release
say "starting a throwaway cluster in $CLUSTERS/demo (port $PORT)"
# The demo cluster is Snowflake worker 1; a real cluster picks its own id (0..1023).
start_cluster demo "$PORT" preload "pg_idgen.worker_id = 1"
"$BINDIR/psql" -h "$(socket_dir demo)" -p "$PORT" -U postgres -d postgres -X -q \
    -v ON_ERROR_STOP=1 -f "$ROOT/scripts/demo.sql"

cat <<MSG

pg_idgen is running. Connect with:
    $BINDIR/psql -h $(socket_dir demo) -p $PORT -U postgres
Stop the cluster with:
    $([ -n "$SUDO" ] && echo "sudo -u postgres" || echo "runuser -u postgres --") $BINDIR/pg_ctl -D $CLUSTERS/demo/data stop
MSG
