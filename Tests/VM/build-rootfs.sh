#!/usr/bin/env bash
# Part of Tests/VM/build-image.sh: the root filesystem image, a debootstrapped minbase Debian 12 with
# Xorg (dummy video, libinput), sway (DRM, seatd, Xwayland), udev, observers and the C libraries
# touchbridge links, cached in .build/vm/rootfs-<key>/ (key: this script, the mirror, the suite). Prints VM_ROOTFS_DIR=<dir>.
# VM_SUITE=trixie: a Debian 13 image for make test-deb only (Xorg, systemd and logind, the C libraries
# under Debian 13's names), cached in .build/vm/rootfs-trixie-<key>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
vmdir=$root/.build/vm
mkdir -p "$vmdir"
log() { echo "vm-rootfs: $*" >&2; }
die() { echo "vm-rootfs: error: $*" >&2; exit 1; }

for tool in debootstrap mke2fs sha256sum; do
  command -v "$tool" >/dev/null || die "missing $tool (run scripts/deps.sh)"
done
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root"

# The mirror this machine's apt sources already name (deb822 URIs: or one-line deb entries).
mirror=$( { grep -rhoE '^(URIs:[[:space:]]*|deb[[:space:]]+)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
  /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true; } \
  | sed -E 's/^(URIs:[[:space:]]*|deb[[:space:]]+)//; s/[[:space:]]+$//' | head -n1)
[ -n "$mirror" ] || die "no Debian mirror in /etc/apt/sources.list*"
suite=${VM_SUITE:-bookworm}
case $suite in bookworm|trixie) ;; *) die "VM_SUITE must be bookworm or trixie, not $suite" ;; esac


# ---- root filesystem ----------------------------------------------------------------------------
# Xorg with the dummy video driver and libinput; udev tags input devices (Xorg ignores untagged ones);
# observers (xinput, xdpyinfo from x11-utils, python3-evdev); the C libraries touchbridge links.
rootfs_pkgs=(xserver-xorg-core xserver-xorg-video-dummy xserver-xorg-input-libinput xinput x11-utils
  x11-xserver-utils python3 python3-evdev udev kmod
  libx11-6 libx11-xcb1 libxcb-xtest0 libxtst6 libxi6 libxrandr2 libxext6 libxfixes3 libcairo2 libqrencode4 libtomlplusplus3)
# make test-deb (Tests/VM/test-deb.sh): systemd as init, with logind and a login on tty1 (the seat
# session whose user the package's uaccess rule gives /dev/uinput), the user bus, and getfacl.
rootfs_pkgs+=(systemd systemd-sysv dbus libpam-systemd dbus-user-session acl)
# The Wayland tests (guest/waylandtest.py): sway 1.7 on DRM (virtio-gpu) with seatd, Xwayland for the
# overlay, grim for screenshots, wev; mesa's dri drivers and EGL, which wlroots and Xwayland load (so the
# trim below keeps mesa, LLVM, z3 and icu); libwayland-client and libxkbcommon, which touchbridge links.
rootfs_pkgs+=(sway seatd wev xwayland grim fonts-dejavu-core libgl1-mesa-dri libegl-mesa0 libgles2
  libwayland-client0 libxkbcommon0)
# The typing tests (typing_* in guest/vmtest.py, wayland_typing_* in guest/waylandtest.py) read typed text
# from real text clients: xterm on Xorg (and through Xwayland), foot under sway.
rootfs_pkgs+=(xterm foot)
# Debian 13 (make test-deb's second run): what the package test needs, nothing of the Wayland and typing
# tests, and Debian 13's lintian (with perl-openssl-defaults named: debootstrap does not resolve the virtual
# perl-openssl-abi-3 that libnet-ssleay-perl depends on), which test-deb.sh runs on the host in a chroot of
# the tree kept beside the image (about 12 s, where in the VM under TCG it took 3.5 min); toml++ is
# libtomlplusplus3t64 there (it provides libtomlplusplus3, which the package names).
if [ "$suite" = trixie ]; then
  rootfs_pkgs=(xserver-xorg-core xserver-xorg-video-dummy xserver-xorg-input-libinput xinput x11-utils
    x11-xserver-utils python3 udev kmod
    libx11-6 libx11-xcb1 libxcb-xtest0 libxtst6 libxi6 libxrandr2 libxext6 libxfixes3 libcairo2 libqrencode4 libtomlplusplus3t64
    libwayland-client0 libxkbcommon0
    systemd systemd-sysv dbus libpam-systemd dbus-user-session acl
    lintian perl-openssl-defaults)
fi
# The live view's libraries (both suites): libjpeg-turbo's TurboJPEG and XDamage.
rootfs_pkgs+=(libturbojpeg0 libxdamage1)
rkey=$(printf '%s\n' "$(sha256sum "$0" | cut -c1-64)" "$mirror" "$suite" "${rootfs_pkgs[*]}" | sha256sum | cut -c1-16)
prefix=rootfs-
[ "$suite" = bookworm ] || prefix=rootfs-$suite-
rdir=$vmdir/$prefix$rkey
if [ ! -f "$rdir/done" ]; then
  log "debootstrapping $suite from $mirror into $rdir (a few minutes)"
  rm -rf "$rdir"; mkdir -p "$rdir"
  tree=$rdir/tree
  include=$(IFS=,; echo "${rootfs_pkgs[*]}")
  debootstrap --variant=minbase --include="$include" "$suite" "$tree" "$mirror" > "$rdir/debootstrap.log" 2>&1 \
    || { tail -n 30 "$rdir/debootstrap.log" >&2; die "debootstrap failed (log: $rdir/debootstrap.log)"; }
  # Xorg: dummy video, libinput for every evdev node, GLX off (mesa + LLVM cost seconds under TCG).
  mkdir -p "$tree/etc/X11/xorg.conf.d"
  cat > "$tree/etc/X11/xorg.conf" <<'EOF'
Section "ServerFlags"
    Option "AutoAddGPU" "false"
EndSection
Section "Module"
    Disable "glx"
EndSection
Section "Device"
    Identifier "dummy"
    Driver "dummy"
    VideoRam 32768
EndSection
Section "Monitor"
    Identifier "monitor"
    HorizSync 5.0 - 1000.0
    VertRefresh 5.0 - 200.0
    Modeline "1920x1080" 148.50 1920 2008 2052 2200 1080 1084 1089 1125 +hsync +vsync
EndSection
Section "Screen"
    Identifier "screen"
    Device "dummy"
    Monitor "monitor"
    DefaultDepth 24
    SubSection "Display"
        Depth 24
        Modes "1920x1080"
        Virtual 1920 1080
    EndSubSection
EndSection
Section "InputClass"
    Identifier "libinput evdev"
    MatchDevicePath "/dev/input/event*"
    Driver "libinput"
EndSection
Section "InputClass"
    Identifier "libinput touchpad"
    MatchIsTouchpad "on"
    MatchDevicePath "/dev/input/event*"
    Driver "libinput"
    Option "Tapping" "on"
EndSection
EOF
  mkdir -p "$tree/share"
  # sway refuses to run as root: the Wayland tests run it as tbwl, in the groups seatd and the DRM and
  # input nodes want (the root image is read-only in the VM, so the user is made here).
  for g in video input render; do chroot "$tree" groupadd -f "$g"; done
  [ "$suite" = bookworm ] && chroot "$tree" useradd -m -u 1500 -G video,input,render -s /bin/sh tbwl
  # Trim what the tests never load (docs, locales, apt caches; mesa, LLVM, z3 and icu stay for sway).
  rm -rf "$tree"/usr/share/doc "$tree"/usr/share/man \
    "$tree"/usr/share/locale "$tree"/usr/share/info "$tree"/var/cache/apt "$tree"/var/lib/apt/lists
  # Free space: make test-deb installs the package (75 MB installed, twice that during an upgrade).
  # man-db (lintian's, on Debian 13) rebuilds its index after every install and removal: under TCG that is
  # 20 s an apt install, for an index no test reads. Without this flag file its trigger does nothing.
  rm -f "$tree/var/lib/man-db/auto-update"
  size_mb=$(( $(du -sm "$tree" | cut -f1) + 320 ))
  mke2fs -q -t ext2 -d "$tree" -L tbroot "$rdir/rootfs.img" "${size_mb}M"
  du -sh "$tree" | sed 's/^/vm-image: rootfs tree /' >&2
  if [ "$suite" = trixie ]; then
    # Kept for Debian 13's lintian (test-deb.sh runs it with chroot).
    mv "$tree" "$rdir/lintian-root"
  else
    rm -rf "$tree"
  fi
  touch "$rdir/done"
  # Older builds of this part are stale: keep the disk bounded.
  # (Each suite's own: Debian 12's names are rootfs-<key>, Debian 13's rootfs-trixie-<key>.)
  if [ "$suite" = bookworm ]; then
    find "$vmdir" -maxdepth 1 -name 'rootfs-*' ! -name 'rootfs-trixie-*' ! -name "rootfs-$rkey" -exec rm -rf {} +
  else
    find "$vmdir" -maxdepth 1 -name "rootfs-$suite-*" ! -name "$prefix$rkey" -exec rm -rf {} +
  fi
fi

echo "VM_ROOTFS_DIR=$rdir"
