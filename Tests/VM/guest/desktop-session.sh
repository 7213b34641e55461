#!/bin/sh
# The seat session's "display manager" in the desktops stage's VM: tbuser's login shell on tty1 execs
# this (~/.bash_profile, made by build-rootfs-desktops.sh). It records the session's environment, then
# runs, inside the session (its logind session, its cgroup, its VT), each command desktopstest.py
# (root) drops in /run/tb-desk/cmd, and writes that command's pid to /run/tb-desk/pid, as a display
# manager starts a session's compositor. The command's output goes to /share/out/<name>.log (root makes
# /run/tb-desk, owned by tbuser, and opens /share/out to it).
d=/run/tb-desk
until [ -d "$d" ] && [ -w "$d" ]; do sleep 0.2; done
env > "$d/session.env.tmp" && mv "$d/session.env.tmp" "$d/session.env"
while :; do
  if [ -f "$d/cmd" ]; then
    name=$(head -n1 "$d/cmd")
    cmd=$(tail -n +2 "$d/cmd")
    rm -f "$d/cmd"
    sh -c "$cmd" > "/share/out/$name.log" 2>&1 &
    echo $! > "$d/pid.tmp" && mv "$d/pid.tmp" "$d/pid"
  fi
  sleep 0.2
done
