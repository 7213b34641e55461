#!/usr/bin/env bash
# Installs the Debian packages touchbridge needs to build and test, if any are missing.
# Usage: scripts/deps.sh [--force]   (sudo is used when not root)
set -euo pipefail

# Build: Xlib, XTest, XInput2, RandR, XShape, cairo and libqrencode headers and pkg-config files.
build_pkgs=(pkg-config libx11-dev libxtst-dev libxi-dev libxrandr-dev libxext-dev libcairo2-dev libqrencode-dev)
# The XTest input requests through the display's xcb connection: Xlib-xcb and xcb's XTEST.
build_pkgs+=(libx11-xcb-dev libxcb-xtest0-dev)
# The config file's TOML: toml++'s headers and shared library (libtomlplusplus3 at run time).
build_pkgs+=(libtomlplusplus-dev)
# The Wayland desktop (TouchWayland): libwayland-client and libxkbcommon; wayland-protocols' XML and
# wayland-scanner (libwayland-bin, with libwayland-dev) regenerate the xdg-output glue
# (scripts/wayland-protocols.sh) and build the VM tests' Wayland client.
build_pkgs+=(libwayland-dev libxkbcommon-dev wayland-protocols)
# The portal backend (TouchPortal): sd-bus's header from libsystemd-dev (libsystemd.so.0 is loaded at run
# time, as libei is, which needs nothing at build time). dbus-daemon: a private session bus for its D-Bus tests (and dbus-run-session,
# dbus-send: scripts/vm/run.sh's bus for qemu's -display dbus, the desktops stage's second output).
build_pkgs+=(libsystemd-dev)
# Run without a display (make run) and test: a headless X server and X utilities.
# x11-apps: xwd for the overlay's screenshots; imagemagick: import, to renew the README's pen stroke picture; x11-utils: xev, the window below the overlay, and xwininfo, the typing tests' xterm mapped;
# xcompmgr: a compositor, for the overlay's translucency; chromium: a real browser for the web page test.
# x11-xkb-utils: setxkbmap, to change the keyboard layout under the daemon.
test_pkgs=(xvfb xauth x11-utils x11-xserver-utils x11-xkb-utils x11-apps imagemagick xcompmgr xinput mandoc procps chromium)
# openssl: a throwaway certificate for the TLS flood test; python3: its client (and the browser driver).
test_pkgs+=(openssl python3)
# xterm: a real X text client the typing tests read typed text from (a tty's line discipline behind it).
# gir1.2-webkit2-4.1 and python3-gi: WebKitGTK, the iPhone's engine, for the page's typing test.
test_pkgs+=(xterm gir1.2-webkit2-4.1 python3-gi)
# node-typescript: TypeScript's checker (tsc) over the page's JSDoc-typed JavaScript (web/, make test).
test_pkgs+=(node-typescript)
# weston: a real Wayland compositor for TouchWaylandTests (its X11 backend inside Xvfb, as root).
test_pkgs+=(weston)
test_pkgs+=(dbus-daemon)
# The VM tests (scripts/vm/): qemu, debootstrap for the root image, static busybox for the initramfs,
# xz for the kernel payload, e2fsprogs for mke2fs -d, binutils for strip, gcc for the X observer.
test_pkgs+=(qemu-system-x86 debootstrap busybox-static xz-utils e2fsprogs binutils gcc)
# make deb: dpkg-shlibdeps (dpkg-dev); make test-deb: lintian.
build_pkgs+=(dpkg-dev)
test_pkgs+=(lintian)

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

missing=()
for p in "${build_pkgs[@]}" "${test_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${1:-}" != "--force" ] && [ ${#missing[@]} -eq 0 ]; then
  make_venv
  exit 0
fi
[ "${1:-}" = "--force" ] && missing=("${build_pkgs[@]}" "${test_pkgs[@]}")

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
make_venv
