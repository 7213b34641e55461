#!/usr/bin/env bash
# Builds the VM the uinput tests boot (scripts/vm/README.md), cached under .build/vm/:
#   kernel-<key>/vmlinux, initramfs.cpio   scripts/vm/build-kernel.sh
#   rootfs-<key>/rootfs.img                scripts/vm/build-rootfs.sh
# Each <key> hashes everything that goes into that part (its script, the package versions or the
# mirror), so a change rebuilds that part and nothing else.
# Prints VM_KERNEL_DIR=... and VM_ROOTFS_DIR=... on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/build-kernel.sh"
"$here/build-rootfs.sh"
