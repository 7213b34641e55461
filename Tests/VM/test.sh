#!/usr/bin/env bash
# The VM test stage of `make test`: boots the test VM (Tests/VM/build-image.sh builds and caches it)
# once and runs Tests/VM/guest/vmtest.py inside it against the VM's own Xorg, then
# Tests/VM/guest/waylandtest.py against sway (DRM on qemu's virtio-gpu-pci), with the debug
# touchbridge `swift build` already made (no second build) and the toolchain's Swift runtime libraries
# it links (found with ldd), carried in over a 9p share with xi2watch (compiled here against libXi).
# Fails, never skips, when qemu, the image, the binaries or a guest test fail.
# Usage: Tests/VM/test.sh [test name ...]   env: TOUCHBRIDGE_BIN, UINPUT_DRIVE_BIN, VM_TIMEOUT (s)
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
eval "$(Tests/VM/build-image.sh)"
echo "vm-test: image ready in $(ms "$ti") ms ($VM_KERNEL_DIR, $VM_ROOTFS_DIR)"

share=$root/.build/vm/share
Tests/VM/make-share.sh "$share"
cp Tests/VM/guest/rig.py Tests/VM/guest/vmtest.py Tests/VM/guest/waylandtest.py Tests/VM/guest/typingtest.py Tests/VM/guest/sway.config "$share/"
# Test names starting with wayland_ are waylandtest.py's (sway, after the X tests), typing_ typingtest.py's
# (xterm on Xorg, foot under sway: last); the others vmtest.py's.
x_tests=(); wl_tests=(); typing_tests=()
for t in "$@"; do case $t in wayland_*) wl_tests+=("$t") ;; typing_*) typing_tests+=("$t") ;; *) x_tests+=("$t") ;; esac; done
{
  echo '#!/bin/sh'
  echo 'failures=0'
  if [ $# -eq 0 ] || [ ${#x_tests[@]} -gt 0 ]; then
    echo "python3 -u /share/vmtest.py ${x_tests[*]}; failures=\$((failures + \$?))"
  fi
  if [ $# -eq 0 ] || [ ${#wl_tests[@]} -gt 0 ]; then
    echo "python3 -u /share/waylandtest.py ${wl_tests[*]}; failures=\$((failures + \$?))"
  fi
  if [ $# -eq 0 ] || [ ${#typing_tests[@]} -gt 0 ]; then
    echo "python3 -u /share/typingtest.py ${typing_tests[*]}; failures=\$((failures + \$?))"
  fi
  echo 'exit $failures'
} > "$share/guest-test.sh"

tr=$(date +%s%N)
set +e
VM_GPU=1 Tests/VM/run.sh "$share" "${VM_TIMEOUT:-900}"
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
