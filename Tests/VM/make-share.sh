#!/usr/bin/env bash
# The binaries a VM run carries in over its 9p share, made into SHARE/bin and SHARE/lib (used by
# test.sh, test-desktops.sh and test-portal.sh): the debug touchbridge, uinput-drive and wayland-probe that `swift
# build` made (debug sections stripped: the same build, a fifth of the bytes to page in over 9p), the
# toolchain's Swift runtime libraries they link (found with ldd; the guest reaches them through
# LD_LIBRARY_PATH: no second build), xi2watch compiled here against libXi, and wlwatch against
# libwayland-client and libxkbcommon with the glue wayland-scanner makes from Debian's wayland-protocols.
# Usage: Tests/VM/make-share.sh SHARE     env: TOUCHBRIDGE_BIN, UINPUT_DRIVE_BIN
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "vm-share: error: $*" >&2; exit 1; }
share=${1:?usage: make-share.sh SHARE}
bin=${TOUCHBRIDGE_BIN:-$root/.build/debug/touchbridge}
[ -x "$bin" ] || die "no touchbridge binary at $bin (run swift build first)"
rm -rf "$share"; mkdir -p "$share/bin" "$share/lib"
strip --strip-debug -o "$share/bin/touchbridge" "$bin"
drive=${UINPUT_DRIVE_BIN:-$(dirname "$bin")/uinput-drive}
[ -x "$drive" ] || die "no uinput-drive binary at $drive (swift build makes it beside touchbridge)"
strip --strip-debug -o "$share/bin/uinput-drive" "$drive"
probe=$(dirname "$bin")/wayland-probe
[ -x "$probe" ] || die "no wayland-probe binary at $probe (swift build makes it beside touchbridge)"
strip --strip-debug -o "$share/bin/wayland-probe" "$probe"
for b in "$share"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
    case $lib in */lib/swift/linux/*) [ -f "$share/lib/${lib##*/}" ] || strip --strip-debug -o "$share/lib/${lib##*/}" "$lib" ;; esac
  done
done
ls "$share"/lib/*.so >/dev/null 2>&1 || die "ldd found no Swift runtime libraries for $bin"
cc -O1 -Wall -o "$share/bin/xi2watch" Tests/VM/xi2watch/xi2watch.c -lXi -lX11 || die "cannot compile xi2watch"
protocols=/usr/share/wayland-protocols
glue=$root/.build/vm/wlwatch-glue
rm -rf "$glue"; mkdir -p "$glue"
for xml in stable/xdg-shell/xdg-shell.xml unstable/pointer-gestures/pointer-gestures-unstable-v1.xml unstable/tablet/tablet-unstable-v2.xml; do
  base=$(basename "$xml" .xml)
  wayland-scanner client-header "$protocols/$xml" "$glue/$base-client-protocol.h" || die "wayland-scanner failed on $xml"
  wayland-scanner private-code "$protocols/$xml" "$glue/$base-protocol.c" || die "wayland-scanner failed on $xml"
done
cc -O1 -Wall -I"$glue" -o "$share/bin/wlwatch" Tests/VM/wlwatch/wlwatch.c "$glue"/*-protocol.c -lwayland-client -lxkbcommon \
  || die "cannot compile wlwatch"
