#!/bin/sh
# PID 1 of the desktops stage's VM run (Tests/VM/test-desktops.sh; run.sh copies it in as
# guest-init.sh, boots the image build-rootfs-desktops.sh made with VM_ROOT_WRITABLE=1: writes are
# thrown away when qemu exits). It hands over to systemd, as on a booted Debian 12 with a desktop:
#   - udev, logind and the system bus; tbuser (uid 1000, made by the image's build) logged in on tty1,
#     the VM's seat (seat0), by getty's autologin: the stand-in for a person at the machine; its login
#     shell runs /share/desktop-session.sh, which starts, inside that seat session, the compositor the
#     test asks for (as a display manager starts a session's compositor);
#   - tb-desktops-test.service, which runs /share/desktopstest.py as root once the system is up, leaves
#     /share/out/status and the journal, and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p /share/out
exec > /share/out/init.log 2>&1
mark() { echo "vm: $(cut -d' ' -f1 /proc/uptime) s $*"; }
fail() { echo "vm: $*"; echo 93 > /share/out/status; sync; echo o > /proc/sysrq-trigger; sleep 10; }
mark "init (desktops)"
mount -o remount,rw / || fail "cannot remount the root read-write (run.sh without VM_ROOT_WRITABLE=1?)"
[ -x /lib/systemd/systemd ] || fail "no systemd in the image"
ln -sf /lib/systemd/system/multi-user.target /etc/systemd/system/default.target
mkdir -p /etc/systemd/system/getty@tty1.service.d /etc/systemd/system/getty.target.wants
cat > /etc/systemd/system/getty@tty1.service.d/autologin.conf <<'UNIT'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin tbuser --noclear %I $TERM
UNIT
ln -sf /lib/systemd/system/getty@.service /etc/systemd/system/getty.target.wants/getty@tty1.service
ln -sf /dev/null /etc/systemd/system/serial-getty@ttyS0.service
# /tmp is not a tmpfs here: systemd-tmpfiles would not clean what the init put there.
cat > /etc/systemd/system/tb-desktops-test.service <<'UNIT'
[Unit]
Description=make test-desktops: GNOME and KWin at the seat
Wants=systemd-logind.service getty@tty1.service
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'python3 -u /share/desktopstest.py > /share/out/guest.log 2>&1; s=$?; \
  journalctl -b --no-pager -o short-monotonic > /share/out/journal.log 2>&1; \
  echo $s > /share/out/status; sync; echo o > /proc/sysrq-trigger'
UNIT
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -sf /etc/systemd/system/tb-desktops-test.service /etc/systemd/system/multi-user.target.wants/tb-desktops-test.service
mark "exec systemd"
exec /lib/systemd/systemd
