#!/bin/sh
# PID 1 of the portal stage's VM run (Tests/VM/test-portal.sh; run.sh copies it in as guest-init.sh,
# boots the Debian 13 image build-rootfs-portal.sh made with VM_ROOT_WRITABLE=1: writes are thrown away
# when qemu exits). desktops-init.sh's way, with the portal's test instead: it hands over to systemd, as
# on a booted Debian 13 with a desktop:
#   - udev, logind and the system bus; tbuser (uid 1000, made by the image's build) logged in on tty1,
#     the VM's seat (seat0), by getty's autologin: the stand-in for a person at the machine; its login
#     shell runs /share/desktop-session.sh, which starts, inside that seat session, the compositor the
#     test asks for (as a display manager starts a session's compositor);
#   - tb-portal-session.target, a user unit as gnome-session's gnome-session-wayland.target: started by
#     the test once GNOME Shell is up, it brings up graphical-session.target, which the portal's GNOME
#     backend (xdg-desktop-portal-gnome.service) requires;
#   - tb-portal-test.service, which runs /share/portaltest.py as root once the system is up, leaves
#     /share/out/status and the journal, and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p /share/out
exec > /share/out/init.log 2>&1
mark() { echo "vm: $(cut -d' ' -f1 /proc/uptime) s $*"; }
fail() { echo "vm: $*"; echo 93 > /share/out/status; sync; echo o > /proc/sysrq-trigger; sleep 10; }
mark "init (portal)"
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
mkdir -p /etc/systemd/user
cat > /etc/systemd/user/tb-portal-session.target <<'UNIT'
[Unit]
Description=The test's GNOME session (as gnome-session-wayland.target)
BindsTo=graphical-session.target
Before=graphical-session.target
UNIT
# What gnome-session's package ships and this image lacks (it has no gnome-session): the portal's choice
# of backends for a GNOME session. Without it xdg-desktop-portal falls back to the gtk backend, which
# has no RemoteDesktop ("No such interface").
printf '[preferred]\ndefault=gnome;gtk;\n' > /usr/share/xdg-desktop-portal/gnome-portals.conf
# Under TCG the portal takes minutes to start: systemd's 90 s would kill it while it waits for its
# backend.
for unit in xdg-desktop-portal xdg-desktop-portal-gnome; do
  mkdir -p "/etc/systemd/user/$unit.service.d"
  printf '[Service]\nTimeoutStartSec=900\n' > "/etc/systemd/user/$unit.service.d/tcg.conf"
done
cat > /etc/systemd/system/tb-portal-test.service <<'UNIT'
[Unit]
Description=make test-portal: GNOME 48 at the seat, the RemoteDesktop portal
Wants=systemd-logind.service getty@tty1.service
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'python3 -u /share/portaltest.py > /share/out/guest.log 2>&1; s=$?; \
  journalctl -b --no-pager -o short-monotonic > /share/out/journal.log 2>&1; \
  echo $s > /share/out/status; sync; echo o > /proc/sysrq-trigger'
UNIT
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -sf /etc/systemd/system/tb-portal-test.service /etc/systemd/system/multi-user.target.wants/tb-portal-test.service
mark "exec systemd"
exec /lib/systemd/systemd
