#!/usr/bin/env bash
# Builds the release library and installs pg_idgen into the PostgreSQL that a pg_config names.
#   bash scripts/install.sh                              # the system's: /usr/bin/pg_config
#   bash scripts/install.sh /usr/lib/postgresql/16/bin/pg_config
#   bash scripts/install.sh --build [PG_CONFIG]          # only build (into target/stage/)
#   bash scripts/install.sh --no-build [PG_CONFIG]       # install what --build staged (builds if it is stale)
#   bash scripts/install.sh --uninstall [PG_CONFIG]      # removes the files it installed
# It builds first, then writes each file beside its target and renames it over it, so that a
# running server loads the old library or the new one, never none, and a failed build changes
# nothing. Running servers keep the library they loaded until they restart.
# (The Makefile calls it: make = --build, make install = --no-build after a build when needed.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode=install
case "${1:-}" in
    --uninstall) mode=uninstall; shift ;;
    --build) mode=build; shift ;;
    --no-build) mode=place; shift ;;
esac
use_pg_config "${1:-/usr/bin/pg_config}"

if [ "$mode" = uninstall ]; then
    say "removing pg_idgen from PostgreSQL $PG_MAJOR ($PG_CONFIG)"
    echo "Run DROP EXTENSION pg_idgen in each database that has it, and take pg_idgen out of"
    echo "shared_preload_libraries, before servers restart without the library."
    libdir=$("$PG_CONFIG" --pkglibdir)
    extdir=$("$PG_CONFIG" --sharedir)/extension
    # With the files a run stopped halfway through may have left beside their targets.
    $SUDO rm -fv "$libdir/pg_idgen.so" "$libdir"/.pg_idgen.so.new-* "$extdir"/pg_idgen[.-]* "$extdir"/.pg_idgen[.-]*.new-*
    exit 0
fi

# --no-build (make install) still builds when nothing is staged or the sources are newer.
if [ "$mode" = place ]; then
    staged=$(stage_dir release)$("$PG_CONFIG" --pkglibdir)/pg_idgen.so
    if [ ! -f "$staged" ] || [ -n "$(cd "$ROOT" && find Cargo.toml Cargo.lock pg_idgen.control src sql crates \
        -type f -newer "$staged" -print -quit)" ]; then
        command -v cargo >/dev/null ||
            die "the release build is missing or older than the sources, and cargo is not on PATH: run make (as the user who has Rust) first"
        mode=install
    fi
fi
if [ "$mode" != place ]; then
    if [ -n "${PG_IDGEN_FROM_MAKE:-}" ]; then
        # make: only cargo-pgrx; the PostgreSQL, its server headers (postgresql-server-dev-NN
        # on Debian) and libclang are the caller's to provide, as for any PGXS extension.
        cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION" ||
            cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
    else
        # shellcheck disable=SC2119  # no --for-tests
        ensure_deps
    fi
    build_extension release
    [ "$mode" = build ] && { say "built; install it with: make install (or bash scripts/install.sh --no-build $PG_CONFIG)"; exit 0; }
fi
place_extension release
cat <<MSG

Installed into PostgreSQL $PG_MAJOR ($PG_CONFIG):
    $("$PG_CONFIG" --pkglibdir)/pg_idgen.so
    $("$PG_CONFIG" --sharedir)/extension/pg_idgen.control and pg_idgen--*.sql
Then: CREATE EXTENSION pg_idgen; (or ALTER EXTENSION pg_idgen UPDATE; in databases that have it)
For Snowflake ids and the cluster-wide xid12 counter, add pg_idgen to shared_preload_libraries.
MSG
