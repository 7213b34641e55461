#!/usr/bin/env bash
# make run: serve on $DISPLAY; with no $DISPLAY, start a private headless X server (Xvfb) and
# serve on it, so that it works on a fresh machine with no desktop.
set -euo pipefail
bin="$1"; shift

if [ -n "${DISPLAY:-}" ]; then
  exec "$bin" serve "$@"
fi

n=73
while [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; do n=$((n + 1)); done
Xvfb ":$n" -screen 0 1920x1080x24 -noreset -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
cleanup() { kill "$xvfb" 2>/dev/null || true; wait "$xvfb" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 100); do
  xdpyinfo -display ":$n" >/dev/null 2>&1 && break
  kill -0 "$xvfb" 2>/dev/null || { echo "run: Xvfb :$n did not start" >&2; exit 1; }
  sleep 0.05
done
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
