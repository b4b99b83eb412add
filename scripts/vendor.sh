# shellcheck shell=bash disable=SC2034  # sourced: VENDOR_TARBALL and VENDOR_REASON are its caller's
# Sources of the third-party components some suites build (pg_tle for the portable edition's
# TLE suite, Citus for the Citus suite), which no package registry reachable from every machine
# ships. Source it after scripts/lib.sh; do not run it.
#
# vendor_source NAME ENVVAR sets VENDOR_TARBALL to a source tarball of NAME and returns 0, or
# sets VENDOR_REASON and returns 1. In order it takes:
#   1. the file named by ENVVAR (PG_IDGEN_PG_TLE_SRC, PG_IDGEN_CITUS_SRC);
#   2. ../shared/vendor/NAME-*.tar.gz beside the checkout (what CI has);
#   3. the upstream tarball of scripts/vendor_sources: downloaded once into PG_IDGEN_VENDOR_CACHE
#      (default /var/cache/pg_idgen/vendor) and kept only if its files are the pinned ones (the
#      table's tree sha256, see vendor_tree_sha256).
# vendor_skip SUITE REASON: the one line that says a suite is skipped and why, also appended to
# PG_IDGEN_SKIPS as SUITE, PostgreSQL major (when known) and REASON, tab-separated (scripts/test.sh
# lists each suite and reason once at the end of a run, with the versions it was skipped on); under CI=true a skip is a
# failure instead (CI must run every suite).
VENDOR_CACHE=${PG_IDGEN_VENDOR_CACHE:-/var/cache/pg_idgen/vendor}
VENDOR_TARBALL=""
VENDOR_REASON=""

# vendor_tree_sha256 TARBALL: the sha256 of the files a source tarball holds, independent of its
# top directory's name, its compression and its timestamps: one line per file or symbolic link
# (path below the top directory, and the file's sha256 or the link's target), in C order.
vendor_tree_sha256() {
    local dir
    dir=$(mktemp -d)
    tar -xzf "$1" -C "$dir" --no-same-owner || { rm -rf "$dir"; return 1; }
    (
        cd "$dir"/* || exit 1
        export LC_ALL=C
        { find . -type f -print0 | sort -z | xargs -0 -r sha256sum
          find . -type l -print0 | sort -z | while IFS= read -r -d '' l; do printf 'link %s %s\n' "$(readlink "$l")" "$l"; done
        } | sha256sum | cut -d' ' -f1
    )
    local status=$?
    rm -rf "$dir"
    return $status
}

vendor_source() {
    local name=$1 var=$2 f url tree file
    VENDOR_TARBALL="" VENDOR_REASON=""
    if [ -n "${!var:-}" ]; then
        [ -f "${!var}" ] || { VENDOR_REASON="$var=${!var} is not a file"; return 1; }
        VENDOR_TARBALL=${!var}
        return 0
    fi
    for f in "$ROOT"/../shared/vendor/"$name"-*.tar.gz; do
        [ -f "$f" ] && { VENDOR_TARBALL=$(realpath "$f"); return 0; }
    done
    read -r url tree < <(awk -v n="$name" '$1 == n { print $2, $3 }' "$ROOT/scripts/vendor_sources")
    [ -n "${url:-}" ] || die "scripts/vendor_sources has no row for $name"
    file=$VENDOR_CACHE/$name-${tree:0:16}.tar.gz
    if [ ! -f "$file" ]; then
        $SUDO mkdir -p "$VENDOR_CACHE"
        $SUDO chown "$(id -u)" "$VENDOR_CACHE"
        # One download at a time (the versions' lanes may ask at once).
        (
            flock 7
            [ ! -f "$file" ] || exit 0
            say "downloading $name from $url (scripts/vendor_sources)"
            curl -fsSL --connect-timeout 10 --max-time 300 -o "$file.tmp" "$url" 2>"$file.err" || exit 2
            [ "$(vendor_tree_sha256 "$file.tmp")" = "$tree" ] || exit 3
            mv "$file.tmp" "$file"
        ) 7>"$VENDOR_CACHE/$name.lock"
        case $? in
            0) ;;
            2) VENDOR_REASON="$var is not set, there is no $(realpath -m "$ROOT/../shared/vendor")/$name-*.tar.gz, and $url is not reachable ($(tr -d '\n' <"$file.err"))"
               rm -f "$file.tmp" "$file.err"; return 1 ;;
            3) VENDOR_REASON="$url does not hold the files scripts/vendor_sources pins (tree sha256 $tree)"
               rm -f "$file.tmp" "$file.err"; return 1 ;;
            *) VENDOR_REASON="the download of $url failed"; return 1 ;;
        esac
        rm -f "$file.err"
    fi
    VENDOR_TARBALL=$file
}

vendor_skip() {
    local suite=$1 reason=$2
    if [ "${CI:-}" = true ]; then
        [ -z "${PG_IDGEN_SKIPS:-}" ] || printf '%s\t%s\t%s\n' "$suite" "${PG_MAJOR:-}" "NOT RUN under CI=true: $reason" >>"$PG_IDGEN_SKIPS"
        die "CI=true: the $suite suite must run, but $reason"
    fi
    say "skipping the $suite suite: $reason"
    [ -z "${PG_IDGEN_SKIPS:-}" ] || printf '%s\t%s\t%s\n' "$suite" "${PG_MAJOR:-}" "$reason" >>"$PG_IDGEN_SKIPS"
}
