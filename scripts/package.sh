#!/usr/bin/env bash
# Builds release packages of pg_idgen for the PostgreSQL a pg_config names (default: the system's).
#   bash scripts/package.sh [PG_CONFIG]          # a tarball in target/package/, for tar -xzf … -C /
#                                                # on a server of the same major version and architecture
#   bash scripts/package.sh --deb [PG_CONFIG]    # also target/package/postgresql-NN-pg-idgen_<version>_<arch>.deb
#                                                # (Debian/PGDG layout: /usr/lib/postgresql/NN/lib,
#                                                # /usr/share/postgresql/NN/extension)
# --no-build packages the release build already staged by scripts/install.sh (the test command
# uses it so as not to build twice).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

deb=no build=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) deb=yes; shift ;;
        --no-build) build=no; shift ;;
        *) break ;;
    esac
done
use_pg_config "${1:-/usr/bin/pg_config}"
version=$(extension_version)
out=$ROOT/target/package
mkdir -p "$out"
[ "$build" = no ] || bash "$ROOT/scripts/install.sh" --build "$PG_CONFIG"
stage=$(stage_dir release)
libdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension
[ -f "$stage$libdir/pg_idgen.so" ] || die "no release build staged in $stage"

say "packaging pg_idgen $version for PostgreSQL $PG_MAJOR"
tarball=$out/pg_idgen-$version-pg$PG_MAJOR-$(uname -m).tar.gz
tar -czf "$tarball" -C "$stage" .
echo "tarball: $tarball"

[ "$deb" = yes ] || exit 0

# The .deb: the staged files moved to the paths of Debian's and PGDG's postgresql-NN, whatever
# pg_config built them, with the metadata dpkg, apt and lintian expect.
for tool in dpkg-deb dpkg-shlibdeps strip; do
    command -v "$tool" >/dev/null || die "$tool is missing (apt-get install dpkg-dev binutils)"
done
pkg=postgresql-$PG_MAJOR-pg-idgen
arch=$(dpkg --print-architecture)
root=$out/deb-$PG_MAJOR/$pkg
rm -rf "$out/deb-$PG_MAJOR"
umask 022
mkdir -p "$root/DEBIAN" "$root/usr/lib/postgresql/$PG_MAJOR/lib" \
    "$root/usr/share/postgresql/$PG_MAJOR/extension" "$root/usr/share/doc/$pkg"
install -m 644 "$stage$libdir/pg_idgen.so" "$root/usr/lib/postgresql/$PG_MAJOR/lib/"
# As dh_strip does: the symbols PostgreSQL looks up are dynamic ones and stay.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/lib/postgresql/$PG_MAJOR/lib/pg_idgen.so"
install -m 644 "$stage$extdir"/pg_idgen* "$root/usr/share/postgresql/$PG_MAJOR/extension/"

# Depends: the libraries the .so links (libc6, libgcc-s1), as dpkg-shlibdeps finds them.
shlibs_dir=$out/deb-$PG_MAJOR/shlibs
mkdir -p "$shlibs_dir/debian"
printf 'Source: pg-idgen\n\nPackage: %s\nArchitecture: any\n' "$pkg" >"$shlibs_dir/debian/control"
shlibs=$(cd "$shlibs_dir" && dpkg-shlibdeps -O "$root/usr/lib/postgresql/$PG_MAJOR/lib/pg_idgen.so" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || die "dpkg-shlibdeps found no library dependencies"
rm -rf "$shlibs_dir"

python3 "$ROOT/scripts/debian_meta.py" --root "$ROOT" --package "$pkg" --major "$PG_MAJOR" \
    --version "$version" --arch "$arch" --depends "postgresql-$PG_MAJOR, $shlibs" --dest "$root"
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -i "s/^Installed-Size: .*/Installed-Size: $installed_kb/" "$root/DEBIAN/control"
debfile=$out/${pkg}_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$debfile" >/dev/null
echo "deb: $debfile"
