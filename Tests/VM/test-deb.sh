#!/usr/bin/env bash
# `make test-deb`: the Debian package `make deb` built, checked with lintian on the host (Debian 12's) and with
# Debian 13's (in a chroot of the Debian 13 image's tree, which the image build keeps), then installed,
# used and removed in the test VM booted as a small Debian 12 system (systemd, logind, a user logged in
# on tty1; no Swift toolchain), then the same in one booted as Debian 13 (its own image, VM_SUITE=trixie
# Tests/VM/build-rootfs.sh): one package for both. Tests/VM/guest/deb-init.sh and deb-test.py say
# what happens there.
# An older package (the same binary, version <version>~older) is built here for the upgrade step.
# Fails, never skips, when qemu, the image, lintian or a guest step fails.
# Usage: Tests/VM/test-deb.sh PATH/touchbridge_<version>_<arch>.deb     env: VM_TIMEOUT (s)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "deb-test: error: $*" >&2; exit 1; }
t0=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

new=$(cd "$(dirname "${1:?usage: test-deb.sh PATH/touchbridge_<version>_<arch>.deb}")" && pwd)/$(basename "$1")
[ -f "$new" ] || die "no package at $1 (make deb builds it)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (scripts/deps.sh installs qemu-system-x86)"
command -v lintian >/dev/null || die "lintian is missing (scripts/deps.sh installs it)"

# lintian: every tag it reports must be an error-free, explained one (the package's own overrides,
# /usr/share/lintian/overrides/touchbridge, say why); info and pedantic tags are shown, not fatal.
echo "deb-test: lintian $(lintian --version | cut -d' ' -f2) on ${new##*/}"
# (Two runs: with --show-overrides an overridden warning counts for --fail-on.)
lintian --display-info --display-experimental --pedantic --show-overrides "$new" || true
set +e
lintian --fail-on error,warning "$new" >/dev/null
lint_status=$?
set -e
[ "$lint_status" -eq 0 ] || die "lintian reports errors or warnings (status $lint_status)"

# Debian 13's lintian, in a chroot of the Debian 13 image's tree (Tests/VM/build-rootfs.sh keeps it for this):
# one run, the tags not overridden shown (info and pedantic too); errors and warnings fail. The overridden
# ones are explained in the overrides file (--show-overrides would count them for --fail-on).
eval "$(VM_SUITE=trixie Tests/VM/build-image.sh)"
lroot=$VM_ROOTFS_DIR/lintian-root
[ -x "$lroot/usr/bin/lintian" ] || die "no Debian 13 tree with lintian at $lroot (rm -rf $VM_ROOTFS_DIR; the image build makes it)"
cp "$new" "$lroot/tmp/${new##*/}"
set +e
lint13=$(chroot "$lroot" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
  lintian --display-info --display-experimental --pedantic --fail-on error,warning "/tmp/${new##*/}" 2>&1)
lint_status=$?
set -e
rm -f "$lroot/tmp/${new##*/}"
echo "deb-test: Debian 13's $(chroot "$lroot" lintian --version) on ${new##*/}:"
printf '%s\n' "$lint13" | sed '/running with root privileges/d; s/^/  /'
[ "$lint_status" -eq 0 ] || die "Debian 13's lintian reports errors or warnings (status $lint_status)"

# The older package: the same binary and files under a lower version, the udev rule where the packages
# before 2026-12-05 had it (/lib/udev/rules.d), so that the upgrade moves it to /usr/lib/udev/rules.d.
version=$(dpkg-deb -f "$new" Version)
old_version="${version}~older"
extract=$root/.build/deb/extract
rm -rf "$extract"; mkdir -p "$extract"
dpkg-deb -x "$new" "$extract"
old=$(DEB_COMPRESSION="-Zgzip -z1" DEB_UDEV_RULES_DIR=lib/udev/rules.d scripts/deb/build.sh "$extract/usr/bin/touchbridge" "$root/.build/deb/older" "$old_version" 2>/dev/null | tail -n1)
[ -f "$old" ] || die "cannot build the older package"

# One VM run on the image of Debian `suite` (bookworm: 12, trixie: 13).
run_on() {
  local suite=$1 name=$2
  local ti tr status share
  ti=$(date +%s%N)
  eval "$(VM_SUITE=$suite Tests/VM/build-image.sh)"
  echo "deb-test: $name image ready in $(ms "$ti") ms ($VM_KERNEL_DIR, $VM_ROOTFS_DIR)"

  share=$root/.build/vm/share-deb-$suite
  rm -rf "$share"; mkdir -p "$share/bin" "$share/debs"
  cp "$new" "$old" "$share/debs/"
  basename "$new" > "$share/debs/new"
  basename "$old" > "$share/debs/old"
  cc -O1 -Wall -o "$share/bin/xi2watch" Tests/VM/xi2watch/xi2watch.c -lXi -lX11 || die "cannot compile xi2watch"
  cp Tests/VM/guest/rig.py Tests/VM/guest/deb-test.py "$share/"
  echo "$name" > "$share/debs/release"
  # run.sh wants a guest-test.sh; deb-init.sh runs deb-test.py from a systemd unit instead.
  printf '#!/bin/sh\nexec python3 -u /share/deb-test.py\n' > "$share/guest-test.sh"

  tr=$(date +%s%N)
  set +e
  # This suite's image, named to run.sh (which otherwise builds and boots build-image.sh's default, Debian 12).
  VM_KERNEL_DIR=$VM_KERNEL_DIR VM_ROOTFS_DIR=$VM_ROOTFS_DIR VM_INIT=Tests/VM/guest/deb-init.sh VM_ROOT_WRITABLE=1 \
    Tests/VM/run.sh "$share" "${VM_TIMEOUT:-600}"
  status=$?
  set -e
  sed -n "s/^vm: /deb-test: $name guest: /p" "$share/out/init.log" 2>/dev/null || true
  sed "s/^/[$name] /" "$share/out/guest.log" 2>/dev/null || true
  echo "deb-test: $name: package $(stat -c %s "$new") bytes; VM run $(ms "$tr") ms"
  if [ "$status" -ne 0 ]; then
    echo "deb-test: $name FAILED (status $status); logs (journal.log, guest.log, console.log) in $share/out/" >&2
    exit 1
  fi
  grep -q '^deb-test: all steps passed' "$share/out/guest.log" || die "$name: the guest did not finish its steps"
  echo "deb-test: $name passed"
}

run_on bookworm "Debian 12"
run_on trixie "Debian 13"
echo "deb-test: whole stage $(ms "$t0") ms"
echo "deb-test: passed"
