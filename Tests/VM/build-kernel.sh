#!/usr/bin/env bash
# Part of Tests/VM/build-image.sh: Debian's kernel as an ELF vmlinux (the XZ payload cut out of the
# bzImage: qemu boots it through its PVH entry, with no decompression under TCG) and an initramfs of
# static busybox and the modules (virtio, 9p, ext4, evdev, uinput; DRM with virtio-gpu), cached in
# .build/vm/kernel-<key>/ (key: this script and the kernel package's name and version). Prints
# VM_KERNEL_DIR=<dir>.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
vmdir=$root/.build/vm
mkdir -p "$vmdir"
log() { echo "vm-kernel: $*" >&2; }
die() { echo "vm-kernel: error: $*" >&2; exit 1; }

for tool in busybox xz dpkg-deb apt-get apt-cache sha256sum; do
  command -v "$tool" >/dev/null || die "missing $tool (run scripts/deps.sh)"
done
case $(ldd /bin/busybox 2>&1) in *"not a dynamic"*) ;; *) die "/bin/busybox is not static (install busybox-static)" ;; esac



# ---- kernel + initramfs -------------------------------------------------------------------------
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$kpkg" ] || die "apt-cache cannot resolve linux-image-amd64 (run apt-get update)"
kver=$(apt-cache policy "$kpkg" | awk '/Candidate:/{print $2}')
# The DRM ones (drm ... virtio-gpu) are for sway in the Wayland tests: wlroots 0.15 needs a virtio-gpu-pci
# device (on bochs it fails with "PRIME import not supported"); they load and find nothing when qemu has none.
# virtio_input: qemu's virtio keyboard and tablet, through which the portal stage (test-portal.sh) answers
# the portal's dialog as a user would.
modules=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache 9pnet
  9pnet_virtio 9p virtio_blk crc32c_generic mbcache jbd2 crc16 ext4 evdev uinput
  virtio_dma_buf drm drm_kms_helper drm_shmem_helper virtio-gpu virtio_input)
kkey=$(printf '%s\n' "$(sha256sum "$0" | cut -c1-64)" "$kpkg" "$kver" "${modules[*]}" | sha256sum | cut -c1-16)
kdir=$vmdir/kernel-$kkey
if [ ! -f "$kdir/done" ]; then
  log "building kernel + initramfs ($kpkg $kver) in $kdir"
  rm -rf "$kdir"; mkdir -p "$kdir/work"
  (cd "$kdir/work" && apt-get download -q -o APT::Sandbox::User=root "$kpkg" >&2)
  dpkg-deb -x "$kdir"/work/*.deb "$kdir/work/x"
  kimage=$(ls "$kdir"/work/x/boot/vmlinuz-*)
  kname=${kimage##*/vmlinuz-}
  # The bzImage carries the kernel as an XZ stream; find its magic (FD 37 7A 58 5A 00) and unpack it.
  off=$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$kimage" | head -n1 | cut -d: -f1)
  [ -n "$off" ] || die "no XZ payload in $kimage"
  tail -c +"$((off + 1))" "$kimage" | xz -dc 2>/dev/null > "$kdir/vmlinux" || true
  head -c 4 "$kdir/vmlinux" | grep -q 'ELF' || die "the payload of $kimage is not an ELF kernel"
  # initramfs: static busybox, the modules, /init.
  ir=$kdir/work/initramfs
  mkdir -p "$ir"/{bin,dev,proc,sys,newroot,lib/modules}
  cp /bin/busybox "$ir/bin/busybox"
  moddir=$kdir/work/x/lib/modules/$kname/kernel
  for m in "${modules[@]}"; do
    f=$(find "$moddir" -name "$m.ko*" | head -n1)
    [ -n "$f" ] || die "module $m not in $kpkg"
    case $f in
      *.ko) cp "$f" "$ir/lib/modules/$m.ko" ;;
      *.ko.xz) xz -dc "$f" > "$ir/lib/modules/$m.ko" ;;
      *) die "unknown module format $f" ;;
    esac
  done
  cat > "$ir/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in ${modules[*]}; do insmod /lib/modules/\$m.ko || echo "initramfs: insmod \$m failed"; done
# virtio-blk appears asynchronously.
i=0; while [ ! -b /dev/vda ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done
[ -b /dev/vda ] || { echo "initramfs: no /dev/vda"; echo o > /proc/sysrq-trigger; }
mount -t ext4 -o ro /dev/vda /newroot || { echo "initramfs: cannot mount root"; echo o > /proc/sysrq-trigger; }
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /newroot/share \
  || { echo "initramfs: cannot mount the 9p share"; echo o > /proc/sysrq-trigger; }
for d in tmp run root var/log var/tmp var/lib/xkb; do mount -t tmpfs tmpfs /newroot/\$d; done
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
# Loopback up (minbase has no iproute2; -nic none leaves lo down): UDP to 127.0.0.1 needs it.
ip link set lo up || echo "initramfs: cannot bring lo up"
exec switch_root /newroot /bin/sh /share/guest-init.sh
EOF
  chmod 755 "$ir/init"
  (cd "$ir" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) > "$kdir/initramfs.cpio"
  echo "$kname" > "$kdir/kernel-release"
  rm -rf "$kdir/work"
  touch "$kdir/done"
  # Older builds of this part are stale: keep the disk bounded.
  find "$vmdir" -maxdepth 1 -name 'kernel-*' ! -name "kernel-$kkey" -exec rm -rf {} +
fi

echo "VM_KERNEL_DIR=$kdir"
