#!/usr/bin/env bash
# The VM test stage of `make test`: boots the test VM (scripts/vm/build-image.sh builds and caches it)
# once and runs scripts/vm/guest/vmtest.py inside it against the VM's own Xorg, with the debug
# touchbridge `swift build` already made (no second build) and the toolchain's Swift runtime libraries
# it links (found with ldd), carried in over a 9p share with xi2watch (compiled here against libXi).
# Fails, never skips, when qemu, the image, the binaries or a guest test fail.
# Usage: scripts/vm/test.sh [test name ...]   env: TOUCHBRIDGE_BIN, UINPUT_DRIVE_BIN, VM_TIMEOUT (s)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "vm-test: error: $*" >&2; exit 1; }
t0=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (scripts/deps.sh installs qemu-system-x86)"
bin=${TOUCHBRIDGE_BIN:-$root/.build/debug/touchbridge}
[ -x "$bin" ] || die "no touchbridge binary at $bin (run swift build first)"

# The image first (cached; its build time is reported apart from the run).
ti=$(date +%s%N)
eval "$(scripts/vm/build-image.sh)"
echo "vm-test: image ready in $(ms "$ti") ms ($VM_KERNEL_DIR, $VM_ROOTFS_DIR)"

share=$root/.build/vm/share
rm -rf "$share"; mkdir -p "$share/bin" "$share/lib"
# Copies without their debug sections (the same build, a fifth of the bytes to page in over 9p).
strip --strip-debug -o "$share/bin/touchbridge" "$bin"
drive=${UINPUT_DRIVE_BIN:-$(dirname "$bin")/uinput-drive}
[ -x "$drive" ] || die "no uinput-drive binary at $drive (swift build makes it beside touchbridge)"
strip --strip-debug -o "$share/bin/uinput-drive" "$drive"
# The Swift runtime libraries the binaries link, from the toolchain (the guest has the C libraries).
for b in "$share"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
    case $lib in */lib/swift/linux/*) [ -f "$share/lib/${lib##*/}" ] || strip --strip-debug -o "$share/lib/${lib##*/}" "$lib" ;; esac
  done
done
ls "$share"/lib/*.so >/dev/null 2>&1 || die "ldd found no Swift runtime libraries for $bin"
cc -O1 -Wall -o "$share/bin/xi2watch" scripts/vm/xi2watch/xi2watch.c -lXi -lX11 || die "cannot compile xi2watch"
cp scripts/vm/guest/vmtest.py "$share/"
printf '#!/bin/sh\nexec python3 -u /share/vmtest.py %s\n' "$*" > "$share/guest-test.sh"

tr=$(date +%s%N)
set +e
scripts/vm/run.sh "$share" "${VM_TIMEOUT:-900}"
status=$?
set -e
sed -n 's/^vm: /vm-test: guest: /p' "$share/out/init.log" 2>/dev/null || true
cat "$share/out/guest.log" 2>/dev/null || true
echo "vm-test: VM run $(ms "$tr") ms, whole stage $(ms "$t0") ms"
if [ "$status" -ne 0 ]; then
  echo "vm-test: FAILED (status $status); logs in $share/out/" >&2
  exit 1
fi
grep -q '^PASS ' "$share/out/guest.log" || die "no guest test passed"
echo "vm-test: all guest tests passed"
