#!/usr/bin/env bash
# `make test-portal`: input without root. A Debian 13 VM (build-rootfs-portal.sh's image, cached; the
# kernel test.sh boots) with GNOME Shell 48 as a real Wayland session at the seat (systemd, logind,
# tbuser logged in on tty1, the compositor started inside that session on DRM, as test-desktops.sh
# does), where tbuser may NOT write /dev/uinput; the RemoteDesktop portal's dialog answered as a person
# would, with clicks sent into the VM through qemu's QMP (qmp-input.py on a virtio tablet); the stage's
# own portal client (portal-client.py) getting an EIS descriptor and a restore token, then a second run
# with the token and no dialog; touchbridge --backend auto as tbuser taking the portal (guest/portaltest.py).
# Then, in the same boot, KWin 6.3 instead of GNOME Shell, with xdg-desktop-portal-kde, and touchbridge's
# tests again there (guest/portaltest_kde.py, tests named kde_…; naming only those skips GNOME).
# Not part of `make test` (GNOME 48 under TCG takes minutes to start; CI runs it after make test-deb). Fails, never skips, when qemu,
# the image, the binaries or a guest test fail.
# Usage: Tests/VM/test-portal.sh [test name ...]   env: TOUCHBRIDGE_BIN, VM_TIMEOUT (s), PORTAL_HOLD=1
# (debugging: the guest stays up after the tests and runs share/rpc/<n>.sh; see portaltest.py)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "portal-test: error: $*" >&2; exit 1; }
t0=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (scripts/deps.sh installs qemu-system-x86)"

ti=$(date +%s%N)
eval "$(Tests/VM/build-kernel.sh | grep '^VM_KERNEL_DIR=')"
eval "$(Tests/VM/build-rootfs-portal.sh | grep '^VM_ROOTFS_DIR=')"
[ -n "${VM_KERNEL_DIR:-}" ] && [ -n "${VM_ROOTFS_DIR:-}" ] || die "the image did not build"
export VM_KERNEL_DIR VM_ROOTFS_DIR
echo "portal-test: image ready in $(ms "$ti") ms ($VM_KERNEL_DIR, $VM_ROOTFS_DIR)"

share=$root/.build/vm/share-portal
Tests/VM/make-share.sh "$share"
cp Tests/VM/guest/rig.py Tests/VM/guest/waylandtest.py Tests/VM/guest/desktopstest.py \
  Tests/VM/guest/desktop-session.sh Tests/VM/guest/portaltest.py Tests/VM/guest/portal-client.py \
  Tests/VM/guest/portaltest_kde.py "$share/"
printf '%s\n' "$@" > "$share/tests"
# run.sh wants a guest-test.sh; portal-init.sh runs portaltest.py from a systemd unit instead.
printf '#!/bin/sh\nexec python3 -u /share/portaltest.py\n' > "$share/guest-test.sh"
rm -rf "$share/rpc" "$share/hold"
[ "${PORTAL_HOLD:-0}" = 1 ] && { touch "$share/hold"; mkdir -p "$share/rpc"; }

qmp=$root/.build/vm/portal-qmp.sock
rm -f "$qmp"
tr=$(date +%s%N)
set +e
VM_INIT=Tests/VM/guest/portal-init.sh VM_ROOT_WRITABLE=1 VM_GPU=1 VM_MEM=2048 VM_INPUT=1 VM_QMP=$qmp \
  Tests/VM/run.sh "$share" "${VM_TIMEOUT:-2700}" &
vm_pid=$!
# The hand at the VM's keyboard and tablet: it ends when qemu closes its QMP socket.
python3 -u Tests/VM/qmp-input.py "$qmp" "$share" > "$root/.build/vm/portal-qmp-input.log" 2>&1 &
hand_pid=$!
wait "$vm_pid"
status=$?
kill "$hand_pid" 2>/dev/null; wait "$hand_pid" 2>/dev/null
set -e
mv "$root/.build/vm/portal-qmp-input.log" "$share/out/qmp-input.log" 2>/dev/null || true
sed -n 's/^vm: /portal-test: guest: /p' "$share/out/init.log" 2>/dev/null || true
cat "$share/out/guest.log" 2>/dev/null || true
echo "portal-test: VM run $(ms "$tr") ms, whole stage $(ms "$t0") ms"
if [ "$status" -ne 0 ]; then
  echo "portal-test: FAILED (status $status); logs (guest.log, journal.log, gnome-shell.log, qmp-input.log, *.png) in $share/out/" >&2
  exit 1
fi
grep -q '^PASS ' "$share/out/guest.log" || die "no guest test passed"
echo "portal-test: all guest tests passed"
