#!/usr/bin/env bash
# make run: serve on the desktop this runs in ($DISPLAY, or $WAYLAND_DISPLAY); with neither, start a
# private headless X server (Xvfb) and serve on it, so that it works on a fresh machine with no desktop.
# Only then is Xvfb needed: it is installed here, if missing (scripts/deps.sh run).
set -euo pipefail
bin="$1"; shift

if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$bin" serve "$@"
fi
"$(dirname "$0")/deps.sh" run

# Xvfb picks a free display itself and writes its number to -displayfd once it accepts connections:
# reading that line waits for the server, and end of file means it did not start.
exec {ready}< <(exec Xvfb -displayfd 1 -screen 0 1920x1080x24 -noreset -nolisten tcp 2>/dev/null)
xvfb=$!
cleanup() { kill "$xvfb" 2>/dev/null || true; }
trap cleanup EXIT
n=""
read -r n <&"$ready" || true
exec {ready}<&-
[ -n "$n" ] || { echo "run: Xvfb did not start (is it installed? scripts/deps.sh run installs it)" >&2; exit 1; }
echo "run: no DISPLAY is set, so touchbridge drives a private headless X server (Xvfb :$n, 1920x1080)."
echo "run: other X clients reach it as DISPLAY=:$n; Ctrl-C stops both."
export DISPLAY=":$n"
# Not exec: the trap must stop Xvfb when touchbridge ends. Signals reach touchbridge via the
# process group (Ctrl-C) or are forwarded here (TERM).
"$bin" serve "$@" &
tb=$!
trap 'kill -TERM "$tb" 2>/dev/null || true' INT TERM
wait "$tb" || status=$?
wait "$tb" 2>/dev/null || true
exit "${status:-0}"
