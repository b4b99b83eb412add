# shellcheck shell=bash disable=SC2034  # sourced: its variables are its callers'
# The Go client's toolchain and libraries, all from Debian (sourced by scripts/test_go.sh).
# Nothing reaches the Go module proxy (GOPROXY=off) and nothing is vendored into the repository:
#   - rs/xid, lib/pq, mattn/go-sqlite3, google/uuid, x/text, x/sync: bookworm's packages;
#   - iproute2 (`ip`): the link-cut test's network namespace and veth pair (scripts/test_go.sh);
#   - pgx v5 (5.9) and what only it needs (puddle v2, pgservicefile, pgpassfile), and Go 1.26
#     (golang-1.26-go, statically linked): unstable's binary packages, downloaded with a private
#     apt state (the machine's sources are not touched) and unpacked into target/go (never
#     installed with dpkg). pgx 5.9 needs Go 1.24 or later (crypto/pbkdf2); Debian 12's
#     backports serve Go 1.22 and 1.23 only.
# Builds run in GOPATH mode over target/go/gopath and /usr/share/gocode: clients/go's go.mod
# states the module path and versions users get, and is not read here.
# Idempotent: a second run checks and returns.

GO_DEPS_DIR=$ROOT/target/go
GO_GOPATH=$GO_DEPS_DIR/gopath
GO_ROOT=$GO_DEPS_DIR/root/usr/lib/go-1.26
GO_BIN=$GO_ROOT/bin/go
GO_SYSTEM_PACKAGES="golang-github-rs-xid-dev golang-github-lib-pq-dev golang-github-mattn-go-sqlite3-dev golang-github-google-uuid-dev golang-golang-x-text-dev golang-golang-x-sync-dev libsqlite3-dev pgbouncer iproute2"
GO_SID_PACKAGES="golang-1.26-go golang-1.26-src golang-github-jackc-pgx-v5-dev golang-github-jackc-puddle-v2-dev golang-github-jackc-pgservicefile-dev golang-github-jackc-pgpassfile-dev"

ensure_go_deps() {
    local missing="" p
    for p in $GO_SYSTEM_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "installing Debian packages for the Go client:$missing"
        $SUDO apt-get update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
            --no-install-recommends $missing >/dev/null
    fi
    local stamp=$GO_DEPS_DIR/sid.stamp
    if [ "$(cat "$stamp" 2>/dev/null)" != "$GO_SID_PACKAGES" ]; then
        say "Go client: pgx v5 and its own libraries from Debian unstable (unpacked into $GO_GOPATH)"
        local apt=$GO_DEPS_DIR/apt
        rm -rf "$apt" "$GO_GOPATH" "$GO_DEPS_DIR/root"
        mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$GO_GOPATH/src"
        echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main' \
            >"$apt/sources.list"
        local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Dir::State::status=/dev/null
            -o APT::Sandbox::User=root)
        apt-get "${opts[@]}" update -qq
        # shellcheck disable=SC2086
        (cd "$apt/debs" && apt-get "${opts[@]}" download $GO_SID_PACKAGES >/dev/null)
        local deb
        for deb in "$apt"/debs/*.deb; do
            dpkg-deb -x "$deb" "$GO_DEPS_DIR/root"
        done
        cp -a "$GO_DEPS_DIR/root/usr/share/gocode/src/." "$GO_GOPATH/src/"
        (cd "$apt/debs" && ls) >"$GO_DEPS_DIR/sid-versions.txt"
        echo "$GO_SID_PACKAGES" >"$stamp"
    fi
    # The client itself, at its import path.
    mkdir -p "$GO_GOPATH/src/github.com/pg-idgen/pg_idgen/clients"
    ln -sfn "$ROOT/clients/go" "$GO_GOPATH/src/github.com/pg-idgen/pg_idgen/clients/go"
}

# go_env COMMAND...: runs the go command in GOPATH mode over the Debian sources, offline.
go_env() {
    env GOROOT="$GO_ROOT" GO111MODULE=off GOPROXY=off GOFLAGS='' GOTOOLCHAIN=local GOPATH="$GO_GOPATH:/usr/share/gocode" \
        GOCACHE="$GO_DEPS_DIR/cache" "$@"
}
