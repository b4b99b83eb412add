#!/usr/bin/env bash
# Builds the release library and installs pg_idgen into the PostgreSQL that a pg_config names.
#   bash scripts/install.sh                              # the system's: /usr/bin/pg_config
#   bash scripts/install.sh /usr/lib/postgresql/16/bin/pg_config
#   bash scripts/install.sh --uninstall [PG_CONFIG]      # removes the files it installed
# Installing replaces the library file rather than writing into it, so running servers keep
# the one they loaded until they restart (restart them to load the new build).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

uninstall=no
[ "${1:-}" = --uninstall ] && { uninstall=yes; shift; }
use_pg_config "${1:-/usr/bin/pg_config}"

if [ "$uninstall" = yes ]; then
    say "removing pg_idgen from PostgreSQL $PG_MAJOR ($PG_CONFIG)"
    echo "Run DROP EXTENSION pg_idgen in each database that has it, and take pg_idgen out of"
    echo "shared_preload_libraries, before servers restart without the library."
    $SUDO rm -fv "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" "$("$PG_CONFIG" --sharedir)"/extension/pg_idgen[.-]*
    exit 0
fi

ensure_deps
install_extension release
cat <<MSG

Installed into PostgreSQL $PG_MAJOR ($PG_CONFIG):
    $("$PG_CONFIG" --pkglibdir)/pg_idgen.so
    $("$PG_CONFIG" --sharedir)/extension/pg_idgen.control and pg_idgen--*.sql
Then: CREATE EXTENSION pg_idgen; (or ALTER EXTENSION pg_idgen UPDATE; in databases that have it)
For Snowflake ids and the cluster-wide xid12 counter, add pg_idgen to shared_preload_libraries.
MSG
