#!/usr/bin/env bash
# The PGXN distribution: target/pg_idgen-<version>.zip of the files tracked in the last commit
# (git archive), under the top directory pg_idgen-<version>/, after checking that META.json,
# Cargo.toml, the control file, the SQL scripts and CHANGELOG.md agree. Uncommitted changes
# are not in it. From a clean unpack: make && make install (see the README's Install).
#   bash scripts/pgxn_dist.sh        # or: make dist
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || die "make dist needs the git checkout"
python3 "$ROOT/scripts/release_check.py" "$ROOT"
version=$(extension_version)
mkdir -p "$ROOT/target"
zip=$ROOT/target/pg_idgen-$version.zip
git -C "$ROOT" archive --format=zip --prefix="pg_idgen-$version/" -o "$zip" HEAD
echo "PGXN distribution: $zip"
