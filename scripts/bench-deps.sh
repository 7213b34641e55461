#!/usr/bin/env bash
# Installs what `make bench` needs beyond scripts/deps.sh, if missing: the references it measures
# against (xdotool; barrier, whose barrierc the closed loop and the cost rows drive), strace (syscalls per
# packet), the harness's runner (python3, standard library only), and for the impress row LibreOffice
# Impress (libreoffice-impress, whose remote server is the reference), python3-odf (the deck it opens) and
# x11-apps (xwd: whether Impress has drawn the deck).
# Usage: scripts/bench-deps.sh   (sudo is used when not root)
set -euo pipefail
pkgs=(xdotool barrier strace python3 libreoffice-impress python3-odf x11-apps)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bench-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "bench-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
