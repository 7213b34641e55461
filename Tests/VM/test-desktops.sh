#!/usr/bin/env bash
# `make test-desktops`: touchbridge in the desktops people run, GNOME Shell 43 (Mutter) and KWin 5.27,
# each a real Wayland session at the VM's seat (systemd, logind, tbuser logged in on tty1; the
# compositor started inside that session on DRM, as a display manager would), touchbridge on uinput as
# that user (the ACL the package's uaccess rule gives). Its own image (build-rootfs-desktops.sh,
# cached), the kernel test.sh boots, the debug build `swift build` made (make-share.sh).
# Fails, never skips, when qemu, the image, the binaries or a guest test fail.
# Usage: Tests/VM/test-desktops.sh [test name ...]   env: TOUCHBRIDGE_BIN, VM_TIMEOUT (s)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "desktops-test: error: $*" >&2; exit 1; }
t0=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (scripts/deps.sh installs qemu-system-x86)"

ti=$(date +%s%N)
eval "$(Tests/VM/build-kernel.sh | grep '^VM_KERNEL_DIR=')"
eval "$(Tests/VM/build-rootfs-desktops.sh | grep '^VM_ROOTFS_DIR=')"
[ -n "${VM_KERNEL_DIR:-}" ] && [ -n "${VM_ROOTFS_DIR:-}" ] || die "the image did not build"
export VM_KERNEL_DIR VM_ROOTFS_DIR
echo "desktops-test: image ready in $(ms "$ti") ms ($VM_KERNEL_DIR, $VM_ROOTFS_DIR)"

share=$root/.build/vm/share-desktops
Tests/VM/make-share.sh "$share"
cp Tests/VM/guest/rig.py Tests/VM/guest/waylandtest.py Tests/VM/guest/desktopstest.py \
  Tests/VM/guest/desktop-session.sh "$share/"
printf '%s\n' "$@" > "$share/tests"
# run.sh wants a guest-test.sh; desktops-init.sh runs desktopstest.py from a systemd unit instead.
printf '#!/bin/sh\nexec python3 -u /share/desktopstest.py\n' > "$share/guest-test.sh"

tr=$(date +%s%N)
set +e
VM_INIT=Tests/VM/guest/desktops-init.sh VM_ROOT_WRITABLE=1 VM_GPU=1 VM_GPU_OUTPUTS=2 VM_MEM=2048 \
  Tests/VM/run.sh "$share" "${VM_TIMEOUT:-1500}"
status=$?
set -e
sed -n 's/^vm: /desktops-test: guest: /p' "$share/out/init.log" 2>/dev/null || true
cat "$share/out/guest.log" 2>/dev/null || true
echo "desktops-test: VM run $(ms "$tr") ms, whole stage $(ms "$t0") ms"
if [ "$status" -ne 0 ]; then
  echo "desktops-test: FAILED (status $status); logs (guest.log, journal.log, gnome-shell.log, kwin.log, console.log) in $share/out/" >&2
  exit 1
fi
grep -q '^PASS ' "$share/out/guest.log" || die "no guest test passed"
echo "desktops-test: all guest tests passed"
