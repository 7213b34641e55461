#!/usr/bin/env bash
# Builds the VM the uinput tests boot (Tests/VM/README.md), cached under .build/vm/:
#   kernel-<key>/vmlinux, initramfs.cpio   Tests/VM/build-kernel.sh
#   rootfs-<key>/rootfs.img                Tests/VM/build-rootfs.sh
# Each <key> hashes everything that goes into that part (its script, the package versions or the
# mirror), so a change rebuilds that part and nothing else.
# Prints VM_KERNEL_DIR=... and VM_ROOTFS_DIR=... on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Only the builders' VM_*_DIR= lines reach stdout (the caller evals it); everything else a tool prints
# there (mke2fs says "Creating regular file ..." on a first build) goes to stderr.
for builder in build-kernel.sh build-rootfs.sh; do
  "$here/$builder" | while IFS= read -r line; do
    case $line in
      VM_KERNEL_DIR=*|VM_ROOTFS_DIR=*) printf '%s\n' "$line" ;;
      *) printf '%s\n' "$line" >&2 ;;
    esac
  done
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "vm-image: $builder failed" >&2; exit 1; }
done
