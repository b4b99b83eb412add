#!/usr/bin/env bash
# Builds a release package for copying to servers: a directory tree and a tarball in target/,
# laid out as the given pg_config's PostgreSQL expects (default: the system's).
#   bash scripts/package.sh [PG_CONFIG]
# On a server of the same PostgreSQL major version and architecture: tar -xzf … -C /
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_deps
use_pg_config "${1:-/usr/bin/pg_config}"
version=$(extension_version)
out=$ROOT/target/package
rm -rf "$out/pg_idgen-pg$PG_MAJOR"
say "packaging pg_idgen $version for PostgreSQL $PG_MAJOR"
(cd "$ROOT" && cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$out/pg_idgen-pg$PG_MAJOR")
install_released_scripts "$out/pg_idgen-pg$PG_MAJOR$("$PG_CONFIG" --sharedir)/extension"
tarball=$out/pg_idgen-$version-pg$PG_MAJOR-$(uname -m).tar.gz
tar -czf "$tarball" -C "$out/pg_idgen-pg$PG_MAJOR" .
say "package: $tarball"
tar -tzf "$tarball" | grep -v '/$'
