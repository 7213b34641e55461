#!/bin/sh
# PID 1 of make test-deb's VM run (Tests/VM/test-deb.sh; run.sh copies it in as guest-init.sh and
# boots with VM_ROOT_WRITABLE=1, so the root is writable and every write is gone when qemu exits).
# It turns the test image into a small booted Debian 12 (or 13) system and hands over to systemd:
#   - systemd as init, with udev, logind and the system bus, as on any Debian machine;
#   - a user `tbuser` (uid 1000, no sudo) logged in on tty1, the VM's local seat (seat0), by getty's
#     autologin: the stand-in for a person logging in at the machine's own screen and keyboard;
#   - tb-deb-test.service, which runs /share/deb-test.py as root once the system is up, leaves
#     /share/out/status and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p /share/out
exec > /share/out/init.log 2>&1
mark() { echo "vm: $(cut -d' ' -f1 /proc/uptime) s $*"; }
fail() { echo "vm: $*"; echo 93 > /share/out/status; sync; echo o > /proc/sysrq-trigger; sleep 10; }
mark "init (deb)"
mount -o remount,rw / || fail "cannot remount the root read-write (run.sh without VM_ROOT_WRITABLE=1?)"
[ -x /lib/systemd/systemd ] || fail "no systemd in the image (Tests/VM/build-rootfs.sh installs it)"

useradd --create-home --uid 1000 --shell /bin/bash tbuser || fail "useradd failed"
echo tbvm > /etc/hostname
ln -sf /lib/systemd/system/multi-user.target /etc/systemd/system/default.target
# The login on tty1: agetty's autologin runs login(1), whose PAM session (pam_systemd) registers a
# logind session on seat0 for tbuser, active while tty1 is the foreground console.
mkdir -p /etc/systemd/system/getty@tty1.service.d /etc/systemd/system/getty.target.wants
cat > /etc/systemd/system/getty@tty1.service.d/autologin.conf <<'EOF'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin tbuser --noclear %I $TERM
EOF
ln -sf /lib/systemd/system/getty@.service /etc/systemd/system/getty.target.wants/getty@tty1.service
# The serial console stays the kernel's log (no login prompt on it).
ln -sf /dev/null /etc/systemd/system/serial-getty@ttyS0.service
cat > /etc/systemd/system/tb-deb-test.service <<'EOF'
[Unit]
Description=make test-deb: the package test
Wants=systemd-logind.service getty@tty1.service
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'python3 -u /share/deb-test.py > /share/out/guest.log 2>&1; s=$?; \
  journalctl -b --no-pager -o short-monotonic > /share/out/journal.log 2>&1; \
  cp /var/log/Xorg.0.log /share/out/ 2>/dev/null; echo $s > /share/out/status; sync; echo o > /proc/sysrq-trigger'
EOF
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -sf /etc/systemd/system/tb-deb-test.service /etc/systemd/system/multi-user.target.wants/tb-deb-test.service
mark "exec systemd"
exec /lib/systemd/systemd
