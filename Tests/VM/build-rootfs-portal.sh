#!/usr/bin/env bash
# The portal stage's root filesystem (Tests/VM/test-portal.sh, `make test-portal`): a minbase Debian 13
# (trixie, from the mirror the host's apt sources name) booted with systemd (logind, the user bus and
# the user's systemd, a user logged in on tty1, the seat's session) with GNOME Shell 48 (Mutter 48, whose
# EIS server the RemoteDesktop portal hands out), xdg-desktop-portal and xdg-desktop-portal-gnome, then
# KDE Plasma 6.3's KWin (kwin-wayland) and xdg-desktop-portal-kde for the stage's KDE part, libei1,
# Xwayland, mesa, udev, python3 with GObject introspection and dbus-python (the stage's own portal
# client) and the C libraries touchbridge links. The kernel stays build-kernel.sh's Debian 12 one (its
# modules are in the initramfs): only the userland is trixie's. Docs, man pages, locales and the
# wallpapers are never unpacked (dpkg path-exclude), Recommends never installed. Cached in
# .build/vm/portal-rootfs-<key>/ (key: this script, the mirror, the suite, the package lists); an older
# build of it is deleted (the other images are other names and stay). Prints VM_ROOTFS_DIR=<dir>.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
vmdir=$root/.build/vm
mkdir -p "$vmdir"
log() { echo "vm-portal-rootfs: $*" >&2; }
die() { echo "vm-portal-rootfs: error: $*" >&2; exit 1; }

for tool in debootstrap mke2fs sha256sum; do
  command -v "$tool" >/dev/null || die "missing $tool (run scripts/deps.sh)"
done
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root"

mirror=$( { grep -rhoE '^(URIs:[[:space:]]*|deb[[:space:]]+)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
  /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true; } \
  | sed -E 's/^(URIs:[[:space:]]*|deb[[:space:]]+)//; s/[[:space:]]+$//' | head -n1)
[ -n "$mirror" ] || die "no Debian mirror in /etc/apt/sources.list*"
suite=trixie

# debootstrap's own set: a booted system (systemd, logind, the user bus), udev, the observers' python.
base_pkgs=(systemd systemd-sysv dbus libpam-systemd dbus-user-session acl udev kmod python3 python3-evdev)
# Then apt (its resolver handles the virtual packages GNOME's dependencies name), no Recommends: GNOME
# Shell, the portal (xdg-desktop-portal, its GNOME backend, which shows the RemoteDesktop dialog and asks
# Mutter for the EIS connection), libei1 (what touchbridge dlopens), Xwayland, mesa (llvmpipe: the VM
# has no 3D), dconf for gsettings, polkitd (logind lets an active session's user call Session.Activate
# only through polkit), python3-gi and python3-dbus (the stage's own portal client), the C libraries
# touchbridge links, x11-utils, fonts (the dialog's text), PipeWire and WirePlumber (the ScreenCast
# portal's streams: Mutter's and KWin's screen casts, which the view reads; the user's units start them).
desk_pkgs=(gnome-shell xdg-desktop-portal xdg-desktop-portal-gnome libei1 dconf-gsettings-backend dconf-service
  libglib2.0-bin xwayland polkitd python3-gi gir1.2-glib-2.0 python3-dbus
  libgl1-mesa-dri libegl-mesa0 libgles2 libgbm1 fonts-dejavu-core fonts-cantarell x11-utils
  libx11-6 libx11-xcb1 libxcb-xtest0 libxtst6 libxi6 libxrandr2 libxext6 libxfixes3 libcairo2 libqrencode4 libwayland-client0 libxkbcommon0
  libtomlplusplus3t64 libsystemd0 libturbojpeg0 libxdamage1
  pipewire wireplumber)
# KDE Plasma 6 (the stage's second desktop, started in the same boot after GNOME): KWin 6 on Wayland
# (its EIS plugin serves org.kde.KWin.EIS.RemoteDesktop.connectToEIS, its screencast plugin the
# zkde_screencast_unstable_v1 global without which xdg-desktop-portal-kde refuses CreateSession),
# xdg-desktop-portal-kde (the "Remote control requested" dialog, a Qt Quick window whose
# org.kde.plasma.workspace.dialogs SystemDialog comes with plasma-workspace), Qt's Wayland platform
# plugin and the QML modules the dialog imports (Recommends, so named here).
kde_pkgs=(kwin-wayland xdg-desktop-portal-kde plasma-workspace qt6-wayland
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts qml6-module-qtquick-templates
  qml6-module-qtquick-window qml6-module-qtqml-workerscript qml6-module-org-kde-kirigami qml6-module-org-kde-desktop
  plasma-integration)
rkey=$(printf '%s\n' "$(sha256sum "$0" | cut -c1-64)" "$mirror" "$suite" "${base_pkgs[*]}" "${desk_pkgs[*]}" "${kde_pkgs[*]}" | sha256sum | cut -c1-16)
rdir=$vmdir/portal-rootfs-$rkey
if [ ! -f "$rdir/done" ]; then
  t0=$(date +%s)
  log "debootstrapping $suite from $mirror into $rdir, then GNOME 48 and the portal (several minutes)"
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
  # KDE's packages: each name apt does not know is left out and logged (the dialog's QML modules were
  # split and renamed between Qt and KF releases); the ones kept are installed in one go.
  kde_have=()
  for p in "${kde_pkgs[@]}"; do
    if chroot "$tree" apt-cache show "$p" > /dev/null 2>&1; then kde_have+=("$p"); else log "no package $p in $suite: left out"; fi
  done
  DEBIAN_FRONTEND=noninteractive chroot "$tree" apt-get install -y -q --no-install-recommends "${kde_have[@]}" \
    >> "$rdir/apt.log" 2>&1 || { tail -n 30 "$rdir/apt.log" >&2; die "apt-get install of KDE's packages failed (log: $rdir/apt.log)"; }
  chroot "$tree" dpkg-query -W kwin-wayland xdg-desktop-portal-kde plasma-workspace 2>/dev/null | sed 's/^/vm-portal-rootfs: /' >&2
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
  du -sh "$tree" | sed 's/^/vm-portal-rootfs: tree /' >&2
  size_mb=$(( $(du -sm "$tree" | cut -f1) + 300 ))
  mke2fs -q -t ext2 -d "$tree" -L tbroot "$rdir/rootfs.img" "${size_mb}M"
  rm -rf "$tree"
  touch "$rdir/done"
  log "image built in $(( $(date +%s) - t0 )) s"
  find "$vmdir" -maxdepth 1 -name 'portal-rootfs-*' ! -name "portal-rootfs-$rkey" -exec rm -rf {} +
fi

echo "VM_ROOTFS_DIR=$rdir"
