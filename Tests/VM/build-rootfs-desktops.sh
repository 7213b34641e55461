#!/usr/bin/env bash
# The desktops stage's root filesystem (Tests/VM/test-desktops.sh, `make test-desktops`): a second
# image beside build-rootfs.sh's, a minbase Debian 12 booted with systemd (logind, the user bus, a user
# logged in on tty1, the seat's session) with GNOME Shell 43 (Mutter) and KWin 5.27 (kwin_wayland),
# Xwayland, mesa, udev, python3-evdev and the C libraries touchbridge links. Docs, man pages, locales and
# the wallpapers are never unpacked (dpkg path-exclude), Recommends never installed. Cached in
# .build/vm/desktops-rootfs-<key>/ (key: this script, the mirror, the suite, the package lists);
# an older build of it is deleted (build-rootfs.sh's image is another name and stays).
# Prints VM_ROOTFS_DIR=<dir>.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
vmdir=$root/.build/vm
mkdir -p "$vmdir"
log() { echo "vm-desktops-rootfs: $*" >&2; }
die() { echo "vm-desktops-rootfs: error: $*" >&2; exit 1; }

for tool in debootstrap mke2fs sha256sum; do
  command -v "$tool" >/dev/null || die "missing $tool (run scripts/deps.sh)"
done
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root"

mirror=$( { grep -rhoE '^(URIs:[[:space:]]*|deb[[:space:]]+)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
  /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true; } \
  | sed -E 's/^(URIs:[[:space:]]*|deb[[:space:]]+)//; s/[[:space:]]+$//' | head -n1)
[ -n "$mirror" ] || die "no Debian mirror in /etc/apt/sources.list*"
suite=bookworm

# debootstrap's own set: a booted system (systemd, logind, the user bus), udev, the observers' python.
base_pkgs=(systemd systemd-sysv dbus libpam-systemd dbus-user-session acl udev kmod python3 python3-evdev)
# Then apt (its resolver handles the virtual packages GNOME's dependencies name), no Recommends: the
# compositors, Xwayland, mesa (llvmpipe: the VM has no 3D), dconf for gsettings, the C libraries
# touchbridge links, x11-utils (xdpyinfo), fonts. polkitd: KWin calls logind's Session.Activate at start,
# which logind lets an active session's user do only through polkit (org.freedesktop.login1.chvt,
# allow_active yes); without a polkit daemon it is refused and kwin_wayland exits ("Failed to activate
# ... session"), as on a desktop with none.
desk_pkgs=(gnome-shell dconf-gsettings-backend dconf-service libglib2.0-bin xwayland
  kwin-wayland polkitd
  libgl1-mesa-dri libegl-mesa0 libgles2 libgbm1 fonts-dejavu-core x11-utils
  libx11-6 libx11-xcb1 libxcb-xtest0 libxtst6 libxi6 libxrandr2 libxext6 libxfixes3 libcairo2 libqrencode4 libwayland-client0 libxkbcommon0 libtomlplusplus3
  libturbojpeg0 libxdamage1)
rkey=$(printf '%s\n' "$(sha256sum "$0" | cut -c1-64)" "$mirror" "$suite" "${base_pkgs[*]}" "${desk_pkgs[*]}" | sha256sum | cut -c1-16)
rdir=$vmdir/desktops-rootfs-$rkey
if [ ! -f "$rdir/done" ]; then
  t0=$(date +%s)
  log "debootstrapping $suite from $mirror into $rdir, then GNOME and KWin (several minutes)"
  rm -rf "$rdir"; mkdir -p "$rdir"
  tree=$rdir/tree
  # What dpkg never unpacks, set before debootstrap's second stage installs anything.
  mkdir -p "$tree/etc/dpkg/dpkg.cfg.d"
  cat > "$tree/etc/dpkg/dpkg.cfg.d/01-touchbridge-vm" <<'EOF'
force-unsafe-io
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/help/*
path-exclude=/usr/share/backgrounds/*
path-exclude=/usr/share/wallpapers/*
path-exclude=/usr/share/gnome-shell/extensions/*
EOF
  include=$(IFS=,; echo "${base_pkgs[*]}")
  debootstrap --variant=minbase --include="$include" "$suite" "$tree" "$mirror" > "$rdir/debootstrap.log" 2>&1 \
    || { tail -n 30 "$rdir/debootstrap.log" >&2; die "debootstrap failed (log: $rdir/debootstrap.log)"; }
  log "debootstrap done after $(( $(date +%s) - t0 )) s"
  printf '#!/bin/sh\nexit 101\n' > "$tree/usr/sbin/policy-rc.d"; chmod +x "$tree/usr/sbin/policy-rc.d"
  mount -t proc proc "$tree/proc"
  trap 'umount "$tree/proc" 2>/dev/null || true' EXIT
  chroot "$tree" apt-get update -q > "$rdir/apt.log" 2>&1 || { tail -n 30 "$rdir/apt.log" >&2; die "apt-get update failed"; }
  DEBIAN_FRONTEND=noninteractive chroot "$tree" apt-get install -y -q --no-install-recommends "${desk_pkgs[@]}" \
    >> "$rdir/apt.log" 2>&1 || { tail -n 30 "$rdir/apt.log" >&2; die "apt-get install failed (log: $rdir/apt.log)"; }
  umount "$tree/proc"; trap - EXIT
  rm -f "$tree/usr/sbin/policy-rc.d"
  log "packages installed after $(( $(date +%s) - t0 )) s"
  mkdir -p "$tree/share"
  # The user at the seat (uid 1000), logged in on tty1 by getty's autologin (the seat session whose
  # user the package's uaccess rule gives /dev/uinput); its login shell hands over to
  # /share/desktop-session.sh, which starts the compositors the test asks for inside that session.
  chroot "$tree" useradd --create-home --uid 1000 --shell /bin/bash tbuser
  printf '[ "$(tty)" = /dev/tty1 ] && [ -f /share/desktop-session.sh ] && exec sh /share/desktop-session.sh\n' \
    > "$tree/home/tbuser/.bash_profile"
  chroot "$tree" chown tbuser:tbuser /home/tbuser/.bash_profile
  echo tbvm > "$tree/etc/hostname"
  rm -rf "$tree"/var/cache/apt "$tree"/var/lib/apt/lists "$tree"/usr/share/doc "$tree"/usr/share/man
  du -sh "$tree" | sed 's/^/vm-desktops-rootfs: tree /' >&2
  size_mb=$(( $(du -sm "$tree" | cut -f1) + 300 ))
  mke2fs -q -t ext2 -d "$tree" -L tbroot "$rdir/rootfs.img" "${size_mb}M"
  rm -rf "$tree"
  touch "$rdir/done"
  log "image built in $(( $(date +%s) - t0 )) s"
  find "$vmdir" -maxdepth 1 -name 'desktops-rootfs-*' ! -name "desktops-rootfs-$rkey" -exec rm -rf {} +
fi

echo "VM_ROOTFS_DIR=$rdir"
