#!/usr/bin/env bash
# The install path, the make verbs, the packages and the release check, as the test command
# runs them (scripts/test.sh calls each step with the PostgreSQL it has selected):
#   bash scripts/test_packaging.sh live-install MAJOR PROFILE  # sessions keep working while the extension is reinstalled
#   bash scripts/test_packaging.sh installcheck MAJOR          # make installcheck, preloaded and not
#   bash scripts/test_packaging.sh deb MAJOR                   # the .deb of the staged release build: files, metadata, lintian
#   bash scripts/test_packaging.sh deb-system                  # 15: apt-get install, use, reinstall under load, remove
#   bash scripts/test_packaging.sh control-path MAJOR          # 18+: found only through extension_control_path
#   bash scripts/test_packaging.sh pgxn MAJOR                  # the PGXN zip: make install from a clean unpack
#   bash scripts/test_packaging.sh release-check               # the version's places agree
# Its clusters use the ports PG_IDGEN_TEST_PORT - 9 and - 10 (default 54389, 54388).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BASE_PORT=${PG_IDGEN_TEST_PORT:-54398}
PKG_PORT=$((BASE_PORT - 9))
PKG_PLAIN_PORT=$((BASE_PORT - 10))
LOOPS_DIR=""
trap 'stop_loops; stop_cluster pkg; stop_cluster pkg-plain' EXIT

# start_loops CLUSTER PORT DB...: for each, a loop of new sessions calling gen_xid12() and
# rapkey_build() until stop_loops; a new session loads the library anew when it is not preloaded.
start_loops() {
    local cluster=$1 port=$2 i=0 db
    shift 2
    [ -n "$LOOPS_DIR" ] || { LOOPS_DIR=$(mktemp -d); chmod 755 "$LOOPS_DIR"; }
    for db in "$@"; do
        i=$((i + 1))
        : >"$LOOPS_DIR/progress-$cluster-$i"
        (
            ok=0 failed=0
            while [ ! -e "$LOOPS_DIR/stop" ]; do
                if "$BINDIR/psql" -X -q -At -h "$(socket_dir "$cluster")" -p "$port" -U postgres -d "$db" \
                    -c "SELECT gen_xid12(), rapkey_build('ord', 'cn', 'sh', '8842')" >/dev/null 2>>"$LOOPS_DIR/errors"; then
                    ok=$((ok + 1))
                    printf . >>"$LOOPS_DIR/progress-$cluster-$i" # one byte a session, for wait_loops
                else
                    failed=$((failed + 1))
                fi
            done
            echo "$cluster/$db $ok $failed" >"$LOOPS_DIR/count-$cluster-$i"
        ) &
    done
}

# wait_loops N: waits until every loop has N more sessions through than when called (a
# deadline of 300 s: a session takes well under a second even on a loaded machine). Called
# before and after a reinstall instead of a fixed sleep, it makes sure sessions ran on either
# side of it however slow the machine.
wait_loops() {
    local f i short want=() files=("$LOOPS_DIR"/progress-*) deadline=$((SECONDS + 300))
    for i in "${!files[@]}"; do want[i]=$(($(stat -c %s "${files[i]}") + $1)); done
    while [ "$SECONDS" -lt "$deadline" ]; do
        short=no
        for i in "${!files[@]}"; do
            [ "$(stat -c %s "${files[i]}")" -ge "${want[i]}" ] || short=yes
        done
        [ "$short" = no ] && return 0
        sleep 0.1
    done
    for f in "${files[@]}"; do echo "  $(basename "$f"): $(stat -c %s "$f") sessions"; done
    die "a loop got fewer than $1 new sessions through within 300 s (above; errors: $LOOPS_DIR/errors)"
}

# stop_loops: stops them, prints each loop's sessions and fails on any failed session or on a
# loop that got fewer than MIN (default 5) sessions through.
stop_loops() {
    [ -n "$LOOPS_DIR" ] || return 0
    touch "$LOOPS_DIR/stop"
    wait
    local name ok failed bad=no
    for f in "$LOOPS_DIR"/count-*; do
        read -r name ok failed <"$f"
        echo "  $name: $ok sessions succeeded, $failed failed"
        [ "$failed" = 0 ] && [ "$ok" -ge "${MIN:-5}" ] || bad=yes
    done
    if [ -s "$LOOPS_DIR/errors" ]; then sort "$LOOPS_DIR/errors" | uniq -c | head -5; bad=yes; fi
    rm -rf "$LOOPS_DIR"
    LOOPS_DIR=""
    [ "$bad" = no ] || die "sessions failed while the extension was installed (above)"
}

# live-install MAJOR PROFILE: reinstalls the extension (PROFILE build, already installed) while
# sessions call it on a preloaded and a plain cluster: none fails, the library is a new file,
# and a failed build leaves the installed library as it was.
live_install() {
    use_postgres "$1"
    local profile=$2 lib before after fake log
    lib=$("$PG_CONFIG" --pkglibdir)/pg_idgen.so
    say "PostgreSQL $PG_MAJOR: sessions use pg_idgen while it is reinstalled ($profile)"
    start_cluster pkg "$PKG_PORT" preload
    start_cluster pkg-plain "$PKG_PLAIN_PORT" plain
    psql_at pkg "$PKG_PORT" postgres -c "CREATE EXTENSION pg_idgen"
    psql_at pkg-plain "$PKG_PLAIN_PORT" postgres -c "CREATE EXTENSION pg_idgen"
    before=$(stat -c %i "$lib")
    start_loops pkg "$PKG_PORT" postgres postgres
    start_loops pkg-plain "$PKG_PLAIN_PORT" postgres postgres
    wait_loops 5
    # The build is up to date, so cargo compiles nothing; it still runs for seconds (cargo,
    # pgrx's schema generation), as long as the old unlink-then-build install left no library.
    log=$(mktemp)
    install_extension "$profile" >"$log" 2>&1 ||
        { tail -30 "$log"; die "the install failed"; }
    rm -f "$log"
    after=$(stat -c %i "$lib")
    [ "$before" != "$after" ] || die "the library file was written in place (inode $before)"
    # A build that fails: the installed files stay.
    fake=$(mktemp -d)
    printf '#!/bin/sh\necho "cargo: this build fails on purpose" >&2\nexit 101\n' >"$fake/cargo"
    chmod +x "$fake/cargo"
    set +e
    (set -e; PATH="$fake:$PATH" install_extension "$profile" >/dev/null 2>&1)
    local rc=$?
    set -e
    [ "$rc" != 0 ] || die "a failing build reported success"
    rm -rf "$fake"
    [ "$(stat -c %i "$lib")" = "$after" ] || die "a failed build changed the installed library"
    wait_loops 5
    MIN=10 stop_loops # 5 sessions before the reinstalls and 5 after, at least, in every loop
    echo "  library replaced (inode $before -> $after); a failed build left it in place"
    stop_cluster pkg
    stop_cluster pkg-plain
}

# installcheck MAJOR: make installcheck against a preloaded and a plain cluster started here,
# through PGHOST/PGPORT/PGUSER; nothing but its own databases and roles comes and goes.
installcheck() {
    use_postgres "$1"
    local c port snapshot files expected
    for c in pkg pkg-plain; do
        port=$([ $c = pkg ] && echo "$PKG_PORT" || echo "$PKG_PLAIN_PORT")
        say "PostgreSQL $PG_MAJOR: make installcheck ($c)"
        start_cluster "$c" "$port" "$([ $c = pkg ] && echo preload || echo plain)"
        psql_at "$c" "$port" postgres -c "CREATE DATABASE keep_me" -c "CREATE ROLE keep_me_too"
        snapshot="SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database UNION ALL
                  SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles UNION ALL
                  SELECT count(*)::text FROM pg_file_settings WHERE sourcefile LIKE '%auto.conf'"
        local before after
        before=$(psql_at "$c" "$port" postgres -At -c "$snapshot")
        (cd "$ROOT" && PGHOST=$(socket_dir "$c") PGPORT=$port PGUSER=postgres make -s installcheck PG_CONFIG="$PG_CONFIG") |
            tee "$ROOT/target/installcheck-$c.log"
        # Every file of tests/regress/sql that applies ran: on the preloaded cluster all but
        # no_preload (and rapkey_icu without ICU), on the plain one no_preload alone.
        files=$(find "$ROOT/tests/regress/sql" -name '*.sql' | wc -l)
        expected=1
        [ $c = pkg-plain ] || expected=$((files - 1 - $([ "$HAS_ICU" = yes ] && echo 0 || echo 1)))
        grep -qx "Running $expected of the $files suites.*" "$ROOT/target/installcheck-$c.log" ||
            die "make installcheck ($c) did not run the $expected of the $files suites that apply"
        after=$(psql_at "$c" "$port" postgres -At -c "$snapshot")
        [ "$before" = "$after" ] || die "make installcheck left the server changed: $before -> $after"
        # A taken name: it refuses before running anything.
        psql_at "$c" "$port" postgres -c "CREATE DATABASE pg_idgen_installcheck"
        if (cd "$ROOT" && PGHOST=$(socket_dir "$c") PGPORT=$port PGUSER=postgres make -s installcheck \
            PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1); then
            die "make installcheck ran over an existing database pg_idgen_installcheck"
        fi
        stop_cluster "$c"
    done
}

# control_path MAJOR (18 or later): the staged release build copied into a directory of its own
# (lib/ and share/extension/, the layout CloudNativePG mounts from an image), which the server
# finds only through extension_control_path and dynamic_library_path: the library preloaded
# from there, CREATE EXTENSION, ids. The machine's installed files are removed first (and put
# back after), so nothing else could serve: with the directory off dynamic_library_path,
# CREATE EXTENSION must fail.
control_path() {
    use_postgres "$1"
    [ "$PG_MAJOR" -ge 18 ] || die "extension_control_path needs PostgreSQL 18 or later"
    local stage dir pid probin out
    stage=$(stage_dir release)
    [ -f "$stage$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" ] || die "no release build staged in $stage"
    say "PostgreSQL $PG_MAJOR: installed in a directory of its own, found through extension_control_path"
    dir=$CLUSTERS/ext-dir
    $SUDO rm -rf "$dir"
    $SUDO mkdir -p "$dir/lib" "$dir/share/extension" "$dir/hard/extension"
    $SUDO cp "$stage$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" "$dir/lib/"
    $SUDO cp "$stage$("$PG_CONFIG" --sharedir)"/extension/pg_idgen* "$dir/share/extension/"
    # The same files with the control file's old module_pathname, in a second directory.
    $SUDO cp "$dir"/share/extension/* "$dir/hard/extension/"
    $SUDO sed -i "s|^module_pathname = .*|module_pathname = '\$libdir/pg_idgen'|" "$dir/hard/extension/pg_idgen.control"
    $SUDO chmod -R a+rX "$dir"
    bash "$ROOT/scripts/install.sh" --uninstall "$PG_CONFIG" >/dev/null
    [ ! -e "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" ] || die "the uninstall left the library"
    start_cluster pkg "$PKG_PORT" preload "extension_control_path = '$dir/share:\$system'
dynamic_library_path = '$dir/lib:\$libdir'
pg_idgen.worker_id = 1"
    pid=$(head -1 "$CLUSTERS/pkg/data/postmaster.pid")
    grep -q " $dir/lib/pg_idgen.so$" "/proc/$pid/maps" || die "the postmaster did not preload $dir/lib/pg_idgen.so"
    psql_at pkg "$PKG_PORT" postgres -c "CREATE EXTENSION pg_idgen"
    probin=$(psql_at pkg "$PKG_PORT" postgres -Atc "SELECT DISTINCT probin FROM pg_proc WHERE probin LIKE '%pg_idgen%'")
    [ "$probin" = pg_idgen ] || die "the functions point at '$probin', not at pg_idgen on dynamic_library_path"
    out=$(psql_at pkg "$PKG_PORT" postgres -Atc "SELECT xid12_time(gen_xid12()) > now() - interval '1 minute',
        gen_snowflake() > 0, rapkey_is_valid(rapkey_build('ord', 'cn', '8842')::text)")
    [ "$out" = "t|t|t" ] || die "ids from the directory's library: $out"
    # A control file of a version before 0.7.0 ('$libdir/pg_idgen'): 18 and later strip the
    # '$libdir/' and search dynamic_library_path too.
    psql_at pkg "$PKG_PORT" postgres -c "DROP EXTENSION pg_idgen"
    psql_at pkg "$PKG_PORT" postgres -c "ALTER SYSTEM SET extension_control_path = '$dir/hard:\$system'" -c "SELECT pg_reload_conf()" >/dev/null
    psql_at pkg "$PKG_PORT" postgres -c "CREATE EXTENSION pg_idgen" -c "SELECT gen_xid12()" >/dev/null
    psql_at pkg "$PKG_PORT" postgres -c "DROP EXTENSION pg_idgen"
    # Without the directory on dynamic_library_path nothing serves the library: this test fails
    # when the server does not take it from there.
    psql_at pkg "$PKG_PORT" postgres -c "ALTER SYSTEM SET extension_control_path = '$dir/share:\$system'" \
        -c "ALTER SYSTEM SET dynamic_library_path = '\$libdir'" -c "SELECT pg_reload_conf()" >/dev/null
    if out=$(psql_at pkg "$PKG_PORT" postgres -c "CREATE EXTENSION pg_idgen" 2>&1); then
        die "CREATE EXTENSION found the library with the directory off dynamic_library_path"
    fi
    grep -qF 'could not access file "pg_idgen"' <<<"$out" || die "CREATE EXTENSION failed otherwise: $out"
    stop_cluster pkg
    place_extension release >/dev/null
    $SUDO rm -rf "$dir"
    echo "  preloaded from $dir/lib, CREATE EXTENSION through extension_control_path (also with an old control file's \$libdir/), ids made; off dynamic_library_path it fails"
}

# deb MAJOR: the .deb of the staged release build: its name, control fields, file list, modes
# and owners, the control file's version, the changelog and copyright, and lintian without errors.
deb() {
    ensure_packaging_tools
    use_postgres "$1"
    local version arch pkg debfile listing expected f lint
    version=$(extension_version)
    arch=$(dpkg --print-architecture)
    pkg=postgresql-$PG_MAJOR-pg-idgen
    say "PostgreSQL $PG_MAJOR: the .deb package"
    bash "$ROOT/scripts/package.sh" --deb --no-build "$PG_CONFIG" >/dev/null
    debfile=$ROOT/target/package/${pkg}_${version}_$arch.deb
    [ -f "$debfile" ] || die "no $debfile"
    field() { dpkg-deb -f "$debfile" "$1"; }
    [ "$(field Package)" = "$pkg" ] || die "Package: $(field Package)"
    [ "$(field Version)" = "$version" ] || die "Version: $(field Version)"
    [ "$(field Architecture)" = "$arch" ] || die "Architecture: $(field Architecture)"
    [ "$(field Maintainer)" = "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["maintainer"][0])' "$ROOT/META.json")" ] ||
        die "Maintainer: $(field Maintainer)"
    grep -qE "(^|, )postgresql-$PG_MAJOR(,|$)" <<<"$(field Depends)" || die "Depends lacks postgresql-$PG_MAJOR: $(field Depends)"
    grep -qE "libc6 \(>= [0-9.]+\)" <<<"$(field Depends)" || die "Depends lacks libc6: $(field Depends)"
    { [ -n "$(field Description)" ] && [ "$(field Section)" = database ]; } || die "Description or Section missing"
    # Exactly these files, root-owned, mode 644.
    listing=$(dpkg-deb -c "$debfile" | awk '$1 !~ /^d/ { print $1, $2, $6 }' | sort)
    expected=("usr/lib/postgresql/$PG_MAJOR/lib/pg_idgen.so" "usr/share/postgresql/$PG_MAJOR/extension/pg_idgen.control"
        "usr/share/postgresql/$PG_MAJOR/extension/pg_idgen--$version.sql"
        "usr/share/doc/$pkg/copyright" "usr/share/doc/$pkg/changelog.gz")
    for f in $(shipped_scripts); do expected+=("usr/share/postgresql/$PG_MAJOR/extension/$f"); done
    [ "$(awk '{ print $3 }' <<<"$listing")" = "$(printf './%s\n' "${expected[@]}" | sort -u)" ] ||
        die "the .deb holds other files than expected: $(awk '{ print $3 }' <<<"$listing")"
    [ -z "$(awk '$1 != "-rw-r--r--" || $2 != "root/root"' <<<"$listing")" ] || die "files not 644 root/root: $listing"
    local x
    x=$(mktemp -d)
    dpkg-deb -x "$debfile" "$x"
    grep -qx "default_version = '$version'" "$x/usr/share/postgresql/$PG_MAJOR/extension/pg_idgen.control" ||
        die "the control file does not default to $version"
    grep -qw Pg_magic_func <<<"$(nm -D --defined-only "$x/usr/lib/postgresql/$PG_MAJOR/lib/pg_idgen.so")" ||
        die "the stripped library lost Pg_magic_func"
    zcat "$x/usr/share/doc/$pkg/changelog.gz" >"$x/changelog"
    [ "$(dpkg-parsechangelog -l "$x/changelog" -S Version)" = "$version" ] ||
        die "changelog.gz does not start with $version"
    grep -q "Permission is hereby granted" "$x/usr/share/doc/$pkg/copyright" || die "copyright lacks the licence"
    rm -rf "$x"
    # lintian, as the postgres user (it warns against running as root): errors fail, the
    # rest (warnings, info, pedantic) is printed.
    lint=$(as_postgres lintian --fail-on error --display-info --pedantic "$debfile" 2>&1) ||
        { echo "$lint"; die "lintian reports errors for $debfile"; }
    echo "  $(basename "$debfile"): ${#expected[@]} files, Depends: $(field Depends); lintian: no error"
    # shellcheck disable=SC2001  # every line indented
    [ -z "$lint" ] || echo "$lint" | sed 's/^/    /'
}

# deb_system: Debian's PostgreSQL 15 gets the .deb (after deb 15 built it): a fresh cluster
# creates the extension and writes data; the newest released version is created from the
# package's files and updated; reinstalling the package under load keeps sessions working;
# apt-get remove leaves no pg_idgen file. Then the release build goes back (scripts/install.sh).
deb_system() {
    use_postgres 15
    system_postgres || die "deb-system is for Debian's PostgreSQL 15"
    local version pkg debfile previous lib before after
    version=$(extension_version)
    pkg=postgresql-15-pg-idgen
    debfile=$ROOT/target/package/${pkg}_${version}_$(dpkg --print-architecture).deb
    [ -f "$debfile" ] || die "no $debfile (run the deb step first)"
    # The newest released version: the newest frozen install script below this one.
    # shellcheck disable=SC2012  # the file names are the project's own
    previous=$(ls "$ROOT"/sql/released/pg_idgen--*.sql | sed -nE 's/.*pg_idgen--([0-9.]+)\.sql$/\1/p' |
        grep -vx "$version" | sort -V | tail -1)
    trap 'stop_loops; stop_cluster pkg; stop_cluster pkg-plain; restore_system_build' EXIT
    say "PostgreSQL 15 (Debian's): apt-get install ./$(basename "$debfile")"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$debfile" >/dev/null 2>&1 ||
        die "apt-get install $debfile failed"
    dpkg-query -W -f='${Status} ${Version}\n' "$pkg" | grep -qx "install ok installed $version" || die "$pkg is not installed"
    lib=/usr/lib/postgresql/15/lib/pg_idgen.so
    [ "$(dpkg -S "$lib" | cut -d: -f1)" = "$pkg" ] || die "$lib does not belong to $pkg"

    start_cluster pkg "$PKG_PORT" preload "pg_idgen.worker_id = 3"
    start_cluster pkg-plain "$PKG_PLAIN_PORT" plain
    psql_at pkg "$PKG_PORT" postgres -c "CREATE DATABASE fresh" -c "CREATE DATABASE updated"
    psql_at pkg "$PKG_PORT" fresh -c "CREATE EXTENSION pg_idgen" -c "
        CREATE TABLE orders (id xid12 PRIMARY KEY DEFAULT gen_xid12(), flake bigint UNIQUE DEFAULT gen_snowflake(),
                             order_key rapkey UNIQUE, n int);
        INSERT INTO orders (order_key, n) SELECT rapkey_build('ord', 'cn', g::text), g FROM generate_series(1, 1000) g;"
    [ "$(psql_at pkg "$PKG_PORT" fresh -At -c "SELECT count(DISTINCT id) || ' ' || count(DISTINCT flake) || ' ' ||
        (SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen') FROM orders")" = "1000 1000 $version" ] ||
        die "the fresh database does not hold 1000 rows of distinct ids at version $version"
    psql_at pkg "$PKG_PORT" updated -c "CREATE EXTENSION pg_idgen VERSION '$previous'" -c "ALTER EXTENSION pg_idgen UPDATE"
    [ "$(psql_at pkg "$PKG_PORT" updated -At -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")" = "$version" ] ||
        die "ALTER EXTENSION UPDATE from $previous did not reach $version"
    psql_at pkg "$PKG_PORT" updated -At -c "SELECT gen_xid12(), rapkey_build('usr', 'cn', '1')" >/dev/null
    echo "  fresh: 1000 rows at $version; $previous created from the package's scripts and updated to $version"

    say "PostgreSQL 15: apt-get install --reinstall while sessions use the library"
    before=$(stat -c %i "$lib")
    psql_at pkg-plain "$PKG_PLAIN_PORT" postgres -c "CREATE EXTENSION pg_idgen"
    start_loops pkg "$PKG_PORT" fresh updated
    start_loops pkg-plain "$PKG_PLAIN_PORT" postgres
    wait_loops 5
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --reinstall "$debfile" >/dev/null 2>&1 ||
        die "apt-get install --reinstall failed"
    wait_loops 5
    MIN=10 stop_loops # 5 sessions before the reinstall and 5 after, at least, in every loop
    after=$(stat -c %i "$lib")
    [ "$before" != "$after" ] || die "the reinstall wrote the library in place"
    psql_at pkg "$PKG_PORT" fresh -c "INSERT INTO orders (order_key, n) VALUES (rapkey_build('ord', 'cn', '1001'), 1001)"
    [ "$(psql_at pkg "$PKG_PORT" fresh -At -c "SELECT count(*) FROM orders")" = 1001 ] || die "rows lost"
    echo "  library replaced (inode $before -> $after); the preloaded server kept working"
    stop_cluster pkg
    stop_cluster pkg-plain

    say "PostgreSQL 15: apt-get remove $pkg"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get remove -y -qq "$pkg" >/dev/null 2>&1 || die "apt-get remove failed"
    local left
    left=$(find /usr/lib/postgresql/15 /usr/share/postgresql/15 /usr/share/doc \( -name '*pg_idgen*' -o -name '*pg-idgen*' \) -print)
    [ -z "$left" ] || die "apt-get remove left: $left"
    echo "  no pg_idgen file left"
}

# The system's PostgreSQL holds the release build when the test is done, as scripts/install.sh
# left it before the package went in.
restore_system_build() {
    if dpkg-query -W -f='${Status}' postgresql-15-pg-idgen 2>/dev/null | grep -q "install ok installed"; then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get remove -y -qq postgresql-15-pg-idgen >/dev/null 2>&1 || true
    fi
    bash "$ROOT/scripts/install.sh" --no-build /usr/bin/pg_config >/dev/null &&
        echo "  the system's PostgreSQL 15 holds the staged release build again (scripts/install.sh)"
}

# The Debian tools the .deb steps use (package.sh needs dpkg-dev and binutils; the test lintian).
ensure_packaging_tools() { ensure_packages lintian dpkg-dev binutils; }

# pgxn MAJOR: make dist's zip, unpacked in a temporary directory (no .git there), builds and
# installs with make && make install into that private PostgreSQL, and the result is the
# extension: its control file and scripts, a library that CREATE EXTENSION loads. The build
# shares target/ (the dependencies are built already).
pgxn() {
    use_postgres "$1"
    system_postgres && die "pgxn installs into a private PostgreSQL, not the system's"
    local version zip dir top
    version=$(extension_version)
    say "PostgreSQL $PG_MAJOR: the PGXN distribution, make install from a clean unpack"
    (cd "$ROOT" && make -s dist)
    zip=$ROOT/target/pg_idgen-$version.zip
    dir=$(mktemp -d)
    python3 - "$zip" "$dir" "$version" <<'PY'
import json, sys, zipfile
zip_path, dest, version = sys.argv[1:]
with zipfile.ZipFile(zip_path) as z:
    names = z.namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {f"pg_idgen-{version}"}, f"not one top directory pg_idgen-{version}: {top}"
    assert not any("/.git/" in n or n.endswith("/.git") for n in names), ".git in the zip"
    for needed in ("META.json", "Makefile", "Cargo.toml", "Cargo.lock", "pg_idgen.control", "LICENSE"):
        assert f"pg_idgen-{version}/{needed}" in names, f"{needed} missing from the zip"
    meta = json.loads(z.read(f"pg_idgen-{version}/META.json"))
    assert meta["version"] == version, meta["version"]
    z.extractall(dest)
print(f"  {zip_path.rsplit('/', 1)[1]}: {len(names)} entries, META.json version {version}")
PY
    top=$dir/pg_idgen-$version
    chmod -R a+rX "$dir"
    bash "$ROOT/scripts/install.sh" --uninstall "$PG_CONFIG" >/dev/null
    # As a user would, with the pg_config of that PostgreSQL; the scripts run from the unpack.
    # It shares target/ and its pgrx-home with the checkout, so that the dependencies built
    # for 18 are reused (a different PGRX_HOME would rebuild pgrx-pg-sys).
    (cd "$top" && export CARGO_TARGET_DIR=$ROOT/target PGRX_HOME=$PGRX_HOME && make PG_CONFIG="$PG_CONFIG" &&
        make install PG_CONFIG="$PG_CONFIG") >"$dir/make.log" 2>&1 ||
        { tail -30 "$dir/make.log"; die "make && make install failed in the unpacked distribution $top"; }
    [ -f "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" ] || die "make install put no library"
    grep -qx "default_version = '$version'" "$("$PG_CONFIG" --sharedir)/extension/pg_idgen.control" ||
        die "make install put no control file of $version"
    start_cluster pkg "$PKG_PORT" plain
    [ "$(psql_at pkg "$PKG_PORT" postgres -At -c "CREATE EXTENSION pg_idgen" \
        -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'" -c "SELECT length(gen_xid12()::text)")" = "$version
20" ] || die "the extension that make install put does not work"
    stop_cluster pkg
    # make uninstall takes every file away; make install puts the build back without building.
    (cd "$top" && make -s uninstall PG_CONFIG="$PG_CONFIG" >/dev/null)
    if ls "$("$PG_CONFIG" --pkglibdir)"/*pg_idgen* "$("$PG_CONFIG" --sharedir)"/extension/*pg_idgen* 2>/dev/null; then
        die "make uninstall left the files above"
    fi
    (cd "$top" && PATH=/usr/bin:/bin make -s install PG_CONFIG="$PG_CONFIG" >/dev/null) ||
        die "make install without cargo on PATH did not install the fresh build"
    rm -rf "$dir"
    echo "  make && make install from the unpacked zip: CREATE EXTENSION gives $version; make uninstall left no file"
}

release_check() {
    say "release check: the version's places agree"
    python3 "$ROOT/scripts/release_check.py" "$ROOT"
}

command=${1//-/_}
shift
"$command" "$@"
