#!/usr/bin/env bash
# PostgreSQL 19 for the tests: Debian serves it (19~rc1) only in its experimental suite, built
# for Debian unstable, whose C library is newer than Debian 12's. So the tests of 19 run in a
# Debian unstable root made with debootstrap from Debian's packages, with PostgreSQL 19 and 18,
# Rust, clang and the tests' tools in it. The root is built once and cached
# (PG_IDGEN_SID_ROOT, default /var/cache/pg_idgen/sid-root); a missing or outdated cache
# (its stamp: the packages, build_root and PGRX_VERSION) is built again, never skipped.
#
#   bash scripts/sid_root.sh setup           # build the root unless the cache is current
#   bash scripts/sid_root.sh run CMD [ARG]...  # CMD as root inside it
#
# run gives CMD a mount namespace of its own (the mounts end with it): /proc, /sys and /dev,
# and at their own paths the checkout, ../shared when it exists, the clusters' directory
# (PG_IDGEN_CLUSTERS) and the machine's Python (pyenv), so that the checkout's venv and paths
# work unchanged. Its cargo builds go to target/sid (another rustc than the host's) and its
# cargo-pgrx configuration to target/sid/pgrx-home. Needs root (debootstrap, chroot, mounts).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SID=${PG_IDGEN_SID_ROOT:-/var/cache/pg_idgen/sid-root}
MIRROR=${PG_IDGEN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# From experimental: PostgreSQL 19. From unstable: 18 (pg_upgrade 18 -> 19), Rust, the build's
# and the tests' tools.
EXPERIMENTAL_PACKAGES="postgresql-19 postgresql-server-dev-19 postgresql-client-19 libpq-dev"
SID_PACKAGES="postgresql-18 postgresql-server-dev-18 rustc cargo rustfmt rust-clippy clang libclang-dev"
SID_PACKAGES+=" pkg-config libssl-dev ca-certificates python3 faketime pgbouncer sudo make gcc dpkg-dev curl lintian binutils"
# Debian's 18 is built with ICU (its headers include ICU's); pg_tle's build needs flex and GSSAPI's headers.
SID_PACKAGES+=" libicu-dev flex libkrb5-dev"
STAMP_FILE=.pg_idgen-sid-root

[ "$(id -u)" = 0 ] || die "scripts/sid_root.sh needs root (debootstrap, chroot and mounts)"

# What the root is made of: the packages, how it is built, and the cargo-pgrx it gets.
stamp() {
    { echo "$MIRROR $EXPERIMENTAL_PACKAGES $SID_PACKAGES $PGRX_VERSION"; declare -f build_root in_root; } |
        sha256sum | cut -d' ' -f1
}

# in_root DIR CMD...: CMD in the root at DIR with /proc and /dev, nothing else mounted.
in_root() {
    local dir=$1
    shift
    # shellcheck disable=SC2016  # the inner shell expands them
    unshare --mount --propagation private bash -c '
        dir=$1; shift
        mount -t proc proc "$dir/proc" && mount --rbind /dev "$dir/dev"
        exec chroot "$dir" env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
            DEBIAN_FRONTEND=noninteractive "$@"' in_root "$dir" "$@"
}

build_root() {
    local tmp=$SID.tmp started=$SECONDS uid gid
    say "building the Debian unstable root for PostgreSQL 19 in $SID (debootstrap and apt, a few minutes, once)"
    ensure_packages debootstrap
    rm -rf "$tmp"
    debootstrap --variant=minbase sid "$tmp" "$MIRROR" >"$SID.log" 2>&1 ||
        { tail -20 "$SID.log"; die "debootstrap failed (its log: $SID.log)"; }
    echo "deb $MIRROR experimental main" >"$tmp/etc/apt/sources.list.d/experimental.list"
    # The mirror's unstable suite may be a snapshot older than its Valid-Until.
    echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99pg-idgen"
    cp /etc/resolv.conf "$tmp/etc/resolv.conf"
    # The machine's own certificate authorities (its HTTPS proxy's among them), for crates.io.
    mkdir -p "$tmp/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$tmp/usr/local/share/ca-certificates/" 2>/dev/null || true
    # The postgres user with the machine's uid and gid: the clusters' files are shared.
    if uid=$(id -u postgres 2>/dev/null) && gid=$(id -g postgres 2>/dev/null); then
        in_root "$tmp" groupadd -g "$gid" postgres
        in_root "$tmp" useradd -r -u "$uid" -g "$gid" -d /var/lib/postgresql -s /bin/bash postgres
    fi
    # Packages start no service in the root, and PostgreSQL's create no cluster there.
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod 755 "$tmp/usr/sbin/policy-rc.d"
    mkdir -p "$tmp/etc/postgresql-common/createcluster.d"
    echo "create_main_cluster = false" >"$tmp/etc/postgresql-common/createcluster.d/pg-idgen.conf"
    # shellcheck disable=SC2086
    in_root "$tmp" bash -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $SID_PACKAGES >/dev/null &&
        apt-get install -y -qq --no-install-recommends $(printf '%s/experimental ' $EXPERIMENTAL_PACKAGES) >/dev/null &&
        update-ca-certificates >/dev/null && apt-get clean" >>"$SID.log" 2>&1 ||
        { tail -20 "$SID.log"; die "installing PostgreSQL 19 in the root failed (its log: $SID.log)"; }
    # cargo-pgrx: the machine's build of the pinned version (ensure_deps) runs there as well.
    install -m 755 "$(command -v cargo-pgrx)" "$tmp/usr/local/bin/cargo-pgrx"
    stamp >"$tmp/$STAMP_FILE"
    rm -rf "$SID"
    mv "$tmp" "$SID"
    say "the root is ready in $((SECONDS - started)) s: $(in_root "$SID" /usr/lib/postgresql/19/bin/postgres --version)"
}

setup() {
    # shellcheck disable=SC2119
    ensure_deps
    mkdir -p "$(dirname "$SID")"
    (
        flock 7
        if [ "$(cat "$SID/$STAMP_FILE" 2>/dev/null)" = "$(stamp)" ]; then
            # The machine's cargo-pgrx may have been rebuilt since.
            cmp -s "$(command -v cargo-pgrx)" "$SID/usr/local/bin/cargo-pgrx" ||
                install -m 755 "$(command -v cargo-pgrx)" "$SID/usr/local/bin/cargo-pgrx"
            exit 0
        fi
        build_root
    ) 7>"$SID.lock"
}

# run CMD...: see the top of this file.
run() {
    [ -f "$SID/$STAMP_FILE" ] || die "no root in $SID: bash scripts/sid_root.sh setup"
    local binds=("$ROOT" "$CLUSTERS") d
    [ ! -d "$ROOT/../shared" ] || binds+=("$(realpath "$ROOT/../shared")")
    [ ! -d /root/.pyenv ] || binds+=(/root/.pyenv)
    for d in "${PG_IDGEN_PG_TLE_SRC:-}" "${PG_IDGEN_CITUS_SRC:-}"; do
        [ -z "$d" ] || binds+=("$(dirname "$(realpath "$d")")")
    done
    mkdir -p "$CLUSTERS"
    # The variables the tests pass on (PG_IDGEN_*, the portable suites' ports, CI), the
    # root's own PATH and HOME, and the cargo directories of the root's Rust.
    local vars=() v
    while read -r v; do vars+=("$v=${!v}"); done < <(compgen -e | grep -E '^(PG_IDGEN_|PORTABLE_|CI$)' |
        grep -vxE 'PG_IDGEN_RUST_SAID')
    # shellcheck disable=SC2016  # the inner shell expands them
    unshare --mount --propagation private bash -c '
        sid=$1; nbinds=$2; shift 2
        for ((i = 0; i < nbinds; i++)); do
            mkdir -p "$sid$1" && mount --bind "$1" "$sid$1"
            shift
        done
        mount -t proc proc "$sid/proc" && mount -t sysfs sys "$sid/sys" && mount --rbind /dev "$sid/dev"
        exec chroot "$sid" "$@"' sid_run "$SID" "${#binds[@]}" "${binds[@]}" \
        env -i HOME=/root LANG=C.UTF-8 TERM=dumb PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
        SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
        REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
        CARGO_TARGET_DIR="$ROOT/target/sid" PGRX_HOME="$ROOT/target/sid/pgrx-home" "${vars[@]}" "$@"
}

case ${1:-} in
    setup) setup ;;
    run) shift; [ $# -gt 0 ] || die "run: which command?"; run "$@" ;;
    *) die "usage: bash scripts/sid_root.sh setup | run CMD [ARG]..." ;;
esac
