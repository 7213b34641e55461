#!/usr/bin/env bash
# Boots the test VM once (qemu under TCG: KVM is unusable on this machine kind, see
# docs in Tests/VM/README.md) with SHARE as its read-write 9p share, and waits for it to power off.
# SHARE must hold guest-test.sh; this script copies guest-init.sh in beside it. The guest leaves
# out/status (the guest test's exit status), out/guest.log, out/init.log, out/Xorg.0.log; the serial
# console goes to out/console.log. Exit status: the guest test's, or 1 when the VM could not run
# or did not finish within TIMEOUT seconds (default 600).
# Usage: Tests/VM/run.sh SHARE [TIMEOUT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
share=$(cd "$1" && pwd)
timeout_s=${2:-600}
die() { echo "vm-run: error: $*" >&2; exit 1; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (scripts/deps.sh installs qemu-system-x86)"
[ -f "$share/guest-test.sh" ] || die "$share/guest-test.sh is missing"
# The image: build-image.sh's (cached), unless the caller already names one (test-desktops.sh's).
[ -n "${VM_KERNEL_DIR:-}" ] && [ -n "${VM_ROOTFS_DIR:-}" ] || eval "$("$here/build-image.sh")"
[ -f "$VM_KERNEL_DIR/vmlinux" ] && [ -f "$VM_ROOTFS_DIR/rootfs.img" ] || die "the VM image is incomplete"
# VM_INIT: the guest's PID 1 script instead of guest-init.sh (make test-deb's deb-init.sh). VM_ROOT_WRITABLE=1:
# the root image writable for the guest, every write thrown away when qemu exits (qemu's snapshot=on).
cp "${VM_INIT:-$here/guest-init.sh}" "$share/guest-init.sh"
root_mode=readonly=on; [ "${VM_ROOT_WRITABLE:-0}" = 1 ] && root_mode=snapshot=on
# VM_GPU=1: a virtio-gpu-pci display device (DRM in the guest: sway, for the Wayland tests).
gpu=(); [ "${VM_GPU:-0}" = 1 ] && gpu=(-device virtio-gpu-pci)
# VM_GPU_OUTPUTS=N (N > 1): that many heads on it, head 0 connected; the guest plugs and unplugs the
# others by asking the host (gpu-heads.py: qemu's -display dbus on a private bus, SetUIInfo on the head's
# console; with -display none qemu never connects a head but the first). The desktops stage's two outputs.
display=(-display none); wrap=()
if [ "${VM_GPU:-0}" = 1 ] && [ "${VM_GPU_OUTPUTS:-1}" -gt 1 ]; then
  command -v dbus-run-session >/dev/null && command -v dbus-send >/dev/null \
    || die "dbus-run-session and dbus-send are missing (scripts/deps.sh installs dbus-daemon)"
  gpu=(-device "virtio-gpu-pci,max_outputs=$VM_GPU_OUTPUTS")
  display=(-display dbus)
  wrap=(dbus-run-session -- python3 "$here/gpu-heads.py" "$share")
fi
# VM_INPUT=1: a virtio keyboard and tablet (absolute pointer) in the guest; VM_QMP=PATH: qemu's QMP on
# that Unix socket, where the host sends them events (input-send-event: the portal stage answers a
# dialog through them, Tests/VM/qmp-input.py).
input=(); [ "${VM_INPUT:-0}" = 1 ] && input=(-device virtio-keyboard-pci -device virtio-tablet-pci)
[ -n "${VM_QMP:-}" ] && input+=(-qmp "unix:$VM_QMP,server=on,wait=off")
rm -rf "$share/out"; mkdir -p "$share/out"
start=$(date +%s%N)
set +e
"${wrap[@]}" timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 \
  -accel tcg,thread=multi -smp 2 -m "${VM_MEM:-1024}" -no-reboot -vga none -nic none "${display[@]}" \
  -monitor none -serial "file:$share/out/console.log" \
  -kernel "$VM_KERNEL_DIR/vmlinux" -initrd "$VM_KERNEL_DIR/initramfs.cpio" \
  -append "console=ttyS0 panic=-1 quiet loglevel=4" \
  -drive "file=$VM_ROOTFS_DIR/rootfs.img,if=virtio,format=raw,$root_mode" \
  -virtfs "local,path=$share,mount_tag=share,security_model=none" "${gpu[@]}" "${input[@]}" </dev/null
qemu_status=$?
set -e
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
echo "vm-run: qemu exited with $qemu_status after ${elapsed} ms" >&2
[ "$qemu_status" -eq 124 ] || [ "$qemu_status" -eq 137 ] && { tail -n 20 "$share/out/console.log" >&2; die "the VM did not power off within $timeout_s s"; }
[ "$qemu_status" -eq 0 ] || { tail -n 20 "$share/out/console.log" >&2; die "qemu failed ($qemu_status)"; }
[ -f "$share/out/status" ] || { tail -n 20 "$share/out/console.log" >&2; cat "$share/out/init.log" >&2 2>/dev/null; die "the guest left no status"; }
exit "$(cat "$share/out/status")"
