#!/bin/sh
# PID 1 of the test VM (the initramfs switch_roots here; see Tests/VM/build-image.sh). The root
# image is read-only, /share is the host's 9p directory: it starts udev and Xorg on :0,
# runs /share/guest-test.sh, leaves its output and exit status in /share/out/ and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
mkdir -p /share/out
exec > /share/out/init.log 2>&1
mark() { echo "vm: $(cut -d' ' -f1 /proc/uptime) s $*"; }
finish() {
  echo "$1" > /share/out/status
  cp /tmp/Xorg.0.log /share/out/Xorg.0.log 2>/dev/null
  sync
  echo o > /proc/sysrq-trigger
  sleep 10
}
mark "init"
mount -t tmpfs tmpfs /dev/shm 2>/dev/null
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
/lib/systemd/systemd-udevd --daemon || { echo "vm: udevd failed"; finish 91; }
udevadm trigger --action=add
udevadm settle --timeout=30
mark "udev settled"
Xorg :0 -noreset -nolisten tcp -config /etc/X11/xorg.conf -logfile /tmp/Xorg.0.log \
  >/tmp/xorg.out 2>&1 &
i=0
until xdpyinfo -display :0 >/dev/null 2>&1; do
  i=$((i + 1))
  [ $i -gt 300 ] && { echo "vm: Xorg did not come up"; cat /tmp/xorg.out; finish 92; }
  sleep 0.1
done
mark "X ready"
# The binaries and the Swift runtime into RAM: paging them in from 9p costs seconds per process start.
mkdir -p /tmp/tb && cp -r /share/bin /share/lib /tmp/tb/
mark "binaries copied"
export DISPLAY=:0
cd /share
sh /share/guest-test.sh > /share/out/guest.log 2>&1
status=$?
mark "guest tests done (status $status)"
finish $status
