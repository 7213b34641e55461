#!/usr/bin/env bash
# `make deb`'s packaging step: the Debian package touchbridge_<version>_<arch>.deb from a release binary
# built with the Swift runtime linked in (`swift build -c release --static-swift-stdlib`), so that the
# target needs no Swift toolchain. Files come from contrib/ and man/; Depends: is what dpkg-shlibdeps
# finds for the binary's shared libraries.
#
# The version is the binary's own (`static let version` in Sources/touchbridge/Touchbridge.swift, what
# `touchbridge --version` prints); contrib/debian/changelog's first entry and the man page must name the
# same one. VERSION overrides it (the upgrade test builds an older package from the same binary); the
# changelog then gets an entry for it on top.
# Usage: scripts/deb/build.sh BINARY OUTDIR [VERSION]     prints the .deb's path on the last line
#   env DEB_COMPRESSION: dpkg-deb's compression options (default -Zxz -z9 -Sextreme: xz's strongest,
#   about 1% smaller than its default level; the upgrade test's older package uses a fast one)
#   env DEB_UDEV_RULES_DIR: where the udev rule goes (default usr/lib/udev/rules.d, /usr's own place, which
#   Debian 13's lintian asks for; the upgrade test's older package puts it in lib/udev/rules.d, where the
#   packages before 2026-12-05 had it, so that the upgrade moves it)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "deb: error: $*" >&2; exit 1; }
bin=${1:?usage: build.sh BINARY OUTDIR [VERSION]}
outdir=${2:?usage: build.sh BINARY OUTDIR [VERSION]}
[ -x "$bin" ] || die "no binary at $bin (make deb builds it)"
for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip gzip; do
  command -v "$tool" >/dev/null || die "missing $tool (scripts/deps.sh installs dpkg-dev and binutils)"
done

source_version=$(sed -n 's/^ *static let version = "\([^"]*\)".*/\1/p' Sources/touchbridge/Touchbridge.swift)
[ -n "$source_version" ] || die "no 'static let version' in Sources/touchbridge/Touchbridge.swift"
changelog_version=$(dpkg-parsechangelog -l contrib/debian/changelog -S Version)
[ "$changelog_version" = "$source_version" ] \
  || die "contrib/debian/changelog starts at $changelog_version, the source says $source_version: add a changelog entry"
grep -q "^\.TH .*\"touchbridge $source_version\"" man/touchbridge.1 \
  || die "man/touchbridge.1's .TH line does not name touchbridge $source_version"
version=${3:-$source_version}
arch=$(dpkg --print-architecture)
# The binary must not need the toolchain's Swift runtime (libswiftCore.so and the rest).
if readelf -d "$bin" | grep -q 'NEEDED.*libswift\|NEEDED.*libFoundation\|NEEDED.*lib_Foundation\|NEEDED.*libdispatch'; then
  readelf -d "$bin" | grep NEEDED >&2
  die "$bin links the Swift runtime dynamically: build it with --static-swift-stdlib"
fi

# Nor full Foundation linked in: FoundationEssentials is allowed, but Foundation's Swift symbols
# ($s10Foundation…, $s30FoundationInternationalization…) or ICU's data (icudt…) mean Foundation and its
# 34 MB of ICU data are back. Read before strip removes the symbol table.
foundation=$(nm --format=just-symbols "$bin" | grep -E '^(\$s10Foundation|\$s30FoundationInternationalization|icudt[0-9]+_dat)' || true)
if [ -n "$foundation" ]; then
  head -5 <<<"$foundation" >&2
  die "$bin links full Foundation (ICU included): use FoundationEssentials, Glibc or the standard library"
fi

# What the binary is made of, by origin and by section (before strip removes the symbols).
python3 scripts/deb/sizes.py "$bin" | sed 's/^/deb: /' >&2

udev_rules=${DEB_UDEV_RULES_DIR:-usr/lib/udev/rules.d}
work=$root/.build/deb/work-$version
rm -rf "$work"
umask 022
pkg=$work/root
install -d "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/share/man/man1" "$pkg/usr/lib/systemd/user" \
  "$pkg/$udev_rules" "$pkg/usr/lib/modules-load.d" "$pkg/usr/share/doc/touchbridge" \
  "$pkg/usr/share/lintian/overrides"
strip --strip-unneeded --remove-section=.comment --remove-section=.note -o "$pkg/usr/bin/touchbridge" "$bin"
chmod 755 "$pkg/usr/bin/touchbridge"
gzip -9n < man/touchbridge.1 > "$pkg/usr/share/man/man1/touchbridge.1.gz"
# The same unit `make install` writes, with the binary in /usr/bin.
sed 's|@BINDIR@|/usr/bin|' contrib/touchbridge.service > "$pkg/usr/lib/systemd/user/touchbridge.service"
install -m 644 contrib/debian/70-touchbridge-uinput.rules "$pkg/$udev_rules/70-touchbridge-uinput.rules"
install -m 644 contrib/debian/modules-load.conf "$pkg/usr/lib/modules-load.d/touchbridge.conf"
install -m 644 contrib/debian/lintian-overrides "$pkg/usr/share/lintian/overrides/touchbridge"
install -m 644 contrib/debian/copyright "$pkg/usr/share/doc/touchbridge/copyright"
install -m 644 contrib/debian/README.Debian "$pkg/usr/share/doc/touchbridge/README.Debian"
# A native package (no Debian revision): changelog.gz, not changelog.Debian.gz.
{
  if [ "$version" != "$source_version" ]; then
    printf 'touchbridge (%s) unstable; urgency=medium\n\n  * Built with the version overridden (make deb DEB_VERSION=%s) from %s.\n\n -- %s  %s\n\n' \
      "$version" "$version" "$source_version" "$(dpkg-parsechangelog -l contrib/debian/changelog -S Maintainer)" \
      "$(dpkg-parsechangelog -l contrib/debian/changelog -S Date)"
  fi
  cat contrib/debian/changelog
} | gzip -9n > "$pkg/usr/share/doc/touchbridge/changelog.gz"
install -m 755 contrib/debian/postinst contrib/debian/postrm "$pkg/DEBIAN/"

# Depends: dpkg-shlibdeps reads the shlibs/symbols files of the packages that hold the libraries the
# binary links; it wants a debian/control beside it, so it runs in a scratch source tree.
mkdir -p "$work/src/debian"
printf 'Source: touchbridge\n\nPackage: touchbridge\nArchitecture: any\n' > "$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "$pkg/usr/bin/touchbridge" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"
# Packed relative relocations (DT_RELR, Package.swift's release linker settings) need glibc 2.36, which the
# binary's GLIBC_ABI_DT_RELR version says but libc6's symbols file does not map to a version.
if readelf -V "$pkg/usr/bin/touchbridge" | grep -q GLIBC_ABI_DT_RELR; then
  depends=$(sed -E 's/libc6 \(>= [0-9.]+\)/libc6 (>= 2.36)/' <<<"$depends")
fi
# The portal backend loads libsystemd.so.0 (sd-bus) with dlopen, which dpkg-shlibdeps does not see.
depends="$depends, libsystemd0"
# The live view loads libXdamage.so.1 and libturbojpeg.so.0 with dlopen too: without them touchbridge runs
# and the page says there is no picture, so they are recommended (Recommends: below), not needed. The same
# for libssl.so.3 (OpenSSL 3), which --tls-cert loads: Debian 13's libssl3t64 provides libssl3 on amd64.
# The portal backend's libei.so.1 and its view's libpipewire-0.3.so.0 (dlopen) are suggested, with the portal.

installed_kb=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat > "$pkg/DEBIAN/control" <<EOF
Package: touchbridge
Version: $version
Architecture: $arch
Maintainer: $(dpkg-parsechangelog -l contrib/debian/changelog -S Maintainer)
Installed-Size: $installed_kb
Depends: $depends
Recommends: libturbojpeg0, libxdamage1, libssl3
Suggests: libei1, libpipewire-0.3-0, xdg-desktop-portal
Section: x11
Priority: optional
Description: phone as touchpad, touchscreen or presentation remote for X11
 touchbridge receives the touches a phone streams over the network (the
 PoseAI touch stream over UDP, TUIO 1.1, or a web page it serves to any phone
 browser), tracks every finger, recognises taps and gestures, and drives an
 X11 desktop: through XTest, or through kernel input devices made with
 /dev/uinput (real multi-touch, the desktop's own touchpad gestures).
 .
 The package includes a systemd user unit (systemctl --user enable --now
 touchbridge) and a udev rule that gives /dev/uinput to the user at the
 local seat (uaccess).
EOF
(cd "$pkg" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$pkg/DEBIAN/md5sums"
chmod 644 "$pkg/DEBIAN/control" "$pkg/DEBIAN/md5sums"

mkdir -p "$outdir"
deb=$(cd "$outdir" && pwd)/touchbridge_${version}_${arch}.deb
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l contrib/debian/changelog -S Timestamp) \
  dpkg-deb --root-owner-group ${DEB_COMPRESSION:--Zxz -z9 -Sextreme} --build "$pkg" "$deb" >/dev/null
echo "deb: Depends: $depends" >&2
echo "deb: binary $(stat -c %s "$pkg/usr/bin/touchbridge") bytes stripped, package $(stat -c %s "$deb") bytes, installed $installed_kb KiB" >&2
echo "$deb"
