#!/usr/bin/env bash
# Installs the Debian packages of the sets named, if any are missing (sudo is used when not root).
# Usage: scripts/deps.sh [--force] [--list] [SET...]
#   build    what compiling the daemon needs (make build): headers, pkg-config files, and the shared
#            libraries that come with them
#   run      what `make run` needs beyond build: Xvfb, for a machine with no display (scripts/run.sh)
#   package  what `make deb` needs beyond build: dpkg-shlibdeps, strip, xz
#   test     what the tests need (make test, test-vm, test-deb, test-desktops, test-portal, fuzz,
#            bench): X utilities, browsers, a Wayland compositor, qemu and the VM images' tools, lintian;
#            and the browser tests' Playwright venv (.build/browser-venv), made only with this set
#   No SET: all four (make test, and CI's `scripts/deps.sh --force`).
#   --force  install the sets' packages even when all of them are there (apt-get update first)
#   --list   print the sets' packages, one a line, and install nothing
# `make run` installs build and run; `make test` all of them. docs/building.md has what each set costs.
set -euo pipefail

# --- build ---
# Xlib, XTest, XInput2, RandR, XShape, cairo and libqrencode headers and pkg-config files.
build_pkgs=(pkg-config libx11-dev libxtst-dev libxi-dev libxrandr-dev libxext-dev libcairo2-dev libqrencode-dev)
# The XTest input requests through the display's xcb connection: Xlib-xcb and xcb's XTEST.
build_pkgs+=(libx11-xcb-dev libxcb-xtest0-dev)
# The live view: XDamage (what changed), XFixes (the cursor) and libjpeg-turbo (the frames); the .deb's
# Depends gets libxfixes3 from dpkg-shlibdeps, and recommends libxdamage1 and libturbojpeg0 (loaded with dlopen).
build_pkgs+=(libxdamage-dev libxfixes-dev libturbojpeg0-dev)
# The view under GNOME and KDE: PipeWire's headers (the ScreenCast portal's frames; libpipewire-0.3.so.0 is
# loaded at run time, and the .deb recommends it).
build_pkgs+=(libpipewire-0.3-dev)
# The config file's TOML: toml++'s headers and shared library (libtomlplusplus3 at run time).
build_pkgs+=(libtomlplusplus-dev)
# The Wayland desktop (TouchWayland): libwayland-client and libxkbcommon (the protocol glue is committed:
# building needs neither wayland-scanner nor the protocols' XML).
build_pkgs+=(libwayland-dev libxkbcommon-dev)
# The portal backend (TouchPortal): sd-bus's header from libsystemd-dev (libsystemd.so.0 is loaded at run
# time, as libei is, which needs nothing at build time).
build_pkgs+=(libsystemd-dev)

# --- run ---
# make run with no $DISPLAY: a private headless X server (scripts/run.sh). Nothing else: the libraries the
# binary links come with the build set's -dev packages.
run_pkgs=(xvfb)

# --- package ---
# make deb: dpkg-shlibdeps and dpkg-parsechangelog (dpkg-dev), strip (binutils), xz for the package.
package_pkgs=(dpkg-dev binutils xz-utils)

# --- test ---
# A headless X server and X utilities.
# x11-apps: xwd for the overlay's screenshots; imagemagick: import, to renew the pen stroke picture;
# x11-utils: xdpyinfo (the test X server is up), xev (the window below the overlay) and xwininfo (the
# typing tests' xterm mapped); xcompmgr: a compositor, for the overlay's translucency; chromium: a real
# browser for the web page test; x11-xkb-utils: setxkbmap, to change the keyboard layout under the daemon.
test_pkgs=(xvfb xauth x11-utils x11-xserver-utils x11-xkb-utils x11-apps imagemagick xcompmgr xinput mandoc procps chromium)
# openssl: a throwaway certificate for the TLS flood test; python3: its client (and the browser driver);
# libssl3: OpenSSL 3, which the daemon loads for --tls-cert (the TLS tests; Debian 12 has it on most systems).
test_pkgs+=(openssl python3 libssl3)
# xterm: a real X text client the typing tests read typed text from (a tty's line discipline behind it).
# gir1.2-webkit2-4.1 and python3-gi: WebKitGTK, the iPhone's engine, for the page's typing test.
test_pkgs+=(xterm gir1.2-webkit2-4.1 python3-gi)
# node-typescript: TypeScript's checker (tsc) over the page's JSDoc-typed JavaScript (web/, make test).
test_pkgs+=(node-typescript)
# weston: a real Wayland compositor for TouchWaylandTests (its X11 backend inside Xvfb, as root).
test_pkgs+=(weston)
# dbus-daemon: a private session bus for the portal's D-Bus tests (and dbus-run-session, dbus-send:
# Tests/VM/run.sh's bus for qemu's -display dbus, the desktops stage's second output).
test_pkgs+=(dbus-daemon)
# gdbus: a second client on that bus sending what a portal sends (GLib's marshalling of the ScreenCast's streams).
test_pkgs+=(libglib2.0-bin)
# A private PipeWire with WirePlumber and a GStreamer video source: the view's PipeWire stream read for real
# (Tests/TouchPortalTests/pipewire_rig.py).
test_pkgs+=(pipewire pipewire-bin wireplumber gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base)
# wayland-protocols' XML and wayland-scanner (libwayland-bin, with libwayland-dev): the VM tests' Wayland
# client, and scripts/wayland-protocols.sh, which regenerates the committed glue.
test_pkgs+=(wayland-protocols)
# The VM tests (Tests/VM/): qemu, debootstrap for the root image, static busybox for the initramfs,
# xz for the kernel payload, e2fsprogs for mke2fs -d, binutils for strip, gcc for the X observer.
test_pkgs+=(qemu-system-x86 debootstrap busybox-static xz-utils e2fsprogs binutils gcc)
# make test-deb: lintian.
test_pkgs+=(lintian)
# nftables (nft), iproute2 (ip) and util-linux's unshare: the doctor test's firewall, in a network namespace of its own.
test_pkgs+=(nftables iproute2)
# libreoffice-impress: the real Impress remote server for the presenter's view tests (ImpressTests);
# python3-odf: the deck with notes they make.
test_pkgs+=(libreoffice-impress python3-odf)
# The browser tests' driver: Playwright from PyPI, in a venv of Debian's python3 (Debian 12 refuses a
# system-wide pip install), driving Debian's Chromium by its path (Playwright downloads no browser).
# python3-venv: the venv module.
test_pkgs+=(python3-venv)

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.build/browser-venv"
playwright_version="1.65.2"

make_venv() {
  [ -x "$venv/bin/python3" ] && "$venv/bin/python3" -c "import playwright" 2>/dev/null && return 0
  echo "deps: making $venv with playwright $playwright_version"
  mkdir -p "$root/.build"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q "playwright==$playwright_version"
}

force=0 list=0 sets=()
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --list) list=1 ;;
    build|run|package|test) sets+=("$arg") ;;
    *) echo "deps: unknown argument '$arg' (usage: scripts/deps.sh [--force] [--list] [build|run|package|test]...)" >&2; exit 64 ;;
  esac
done
[ ${#sets[@]} -eq 0 ] && sets=(build run package test)

wanted=() with_venv=0
for set in "${sets[@]}"; do
  case "$set" in
    build) wanted+=("${build_pkgs[@]}") ;;
    run) wanted+=("${run_pkgs[@]}") ;;
    package) wanted+=("${package_pkgs[@]}") ;;
    test) wanted+=("${test_pkgs[@]}"); with_venv=1 ;;
  esac
done
# Each package once, in the order first named.
mapfile -t wanted < <(printf '%s\n' "${wanted[@]}" | awk '!seen[$0]++')

if [ "$list" = 1 ]; then
  printf '%s\n' "${wanted[@]}"
  exit 0
fi

missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ "$force" = 1 ] && missing=("${wanted[@]}")
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "deps (${sets[*]}): installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "$with_venv" = 1 ] && make_venv
exit 0
