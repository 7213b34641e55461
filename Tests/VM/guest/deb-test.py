#!/usr/bin/env python3
"""make test-deb's guest test (Tests/VM/test-deb.sh boots the VM; deb-init.sh makes it a booted Debian 12,
then in a second run Debian 13, with systemd, logind, and `tbuser` logged in on tty1). Runs as root from
tb-deb-test.service:

1. the image has no Swift toolchain, and before the package tbuser cannot write /dev/uinput (lintian,
   Debian 12's and Debian 13's, ran on the host: test-deb.sh);
2. `apt install ./touchbridge_<version>_<arch>.deb`, offline (its Depends: are in the image);
3. tbuser, at the seat, can now write /dev/uinput (the package's uaccess rule, applied by udev and
   logind), runs `touchbridge pair` and `systemctl --user enable --now touchbridge`; the service picks
   the uinput backend by itself (the default, auto), and the phone page's messages (its WebSocket, with
   the secret `pair` printed) move the X pointer through its uinput touchpad (seen by xi2watch);
4. `dpkg -r`: every file the package installed is gone, the ACL is taken back, tbuser's
   ~/.local/state/touchbridge is untouched; `dpkg -P`: the file system is as before the install;
5. an older package, then this one over it (an upgrade), then `dpkg -P`: as before again.

Each step prints `PASS <name> <seconds>` or `FAIL <name> <reason>`; the exit status is the number of
failures (a failed step ends the run: the later ones depend on it). Every wait is bounded.
"""
import glob
import hashlib
import os
import pwd
import re
import socket
import stat
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, "/share")
import rig  # noqa: E402 - the rig's shared guest Python: Proc, Watch (xi2watch), packet(), regex(), check(), until()
from rig import TestFailure, Watch, check, note, packet, regex, run_test, until  # noqa: E402

rig.BIN = "/share/bin"  # xi2watch, compiled on the host
USER = "tbuser"
PKG = "touchbridge"
DEBS = "/share/debs"
# The package's udev rule, in /usr's own place (the older package of the upgrade step has it in /lib).
RULE = "/usr/lib/udev/rules.d/70-touchbridge-uinput.rules"
START = time.monotonic()


def deb(kind):
    """The package built by make deb (kind "new") or the older one test-deb.sh builds (kind "old")."""
    with open(os.path.join(DEBS, kind)) as f:
        return os.path.join(DEBS, f.read().strip())


def run(*argv, user=None, check_status=True, timeout=120, env=None):
    """Runs argv (as `user` through runuser, with that user's XDG_RUNTIME_DIR); returns (status, output)."""
    if user:
        uid = pwd.getpwnam(user).pw_uid
        argv = ("runuser", "-u", user, "--", "env", f"XDG_RUNTIME_DIR=/run/user/{uid}",
                f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{uid}/bus", f"HOME=/home/{user}", *argv)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive", **(env or {})))
    if check_status and p.returncode != 0:
        raise TestFailure(f"`{' '.join(argv)}` exited {p.returncode}:\n    " + p.stdout.strip().replace("\n", "\n    "))
    return p.returncode, p.stdout


def user_can_write_uinput():
    return run("test", "-w", "/dev/uinput", user=USER, check_status=False)[0] == 0


def acl_of_uinput():
    return run("getfacl", "-p", "/dev/uinput")[1]


# What a package may change outside what it owns: dpkg's and apt's own records, logs, caches, the
# user's home (checked on its own) and what systemd and logind keep while the system runs. man-db's index
# (/var/cache/man: on the Debian 13 image, which has man-db for lintian) is man-db's to rebuild.
SNAPSHOT_SKIP = ("/var/lib/dpkg", "/var/lib/apt", "/var/cache/apt", "/var/cache/debconf", "/var/log",
                 "/var/lib/systemd", "/home", "/var/cache/ldconfig", "/etc/ld.so.cache", "/var/cache/man")


def snapshot():
    """Every path on the root file system (tmpfs mounts and /share excluded) with its type and mode, and
    for files their size and modification time."""
    seen = {}
    root_dev = os.lstat("/").st_dev
    for top, dirs, files in os.walk("/"):
        if top.startswith(SNAPSHOT_SKIP):
            dirs[:] = []
            continue
        keep = []
        for d in dirs:
            p = os.path.join(top, d)
            st = os.lstat(p)
            if st.st_dev != root_dev or p.startswith(SNAPSHOT_SKIP):
                continue
            seen[p] = ("dir", stat.S_IMODE(st.st_mode))
            keep.append(d)
        dirs[:] = keep
        for f in files:
            p = os.path.join(top, f)
            if p.startswith(SNAPSHOT_SKIP):
                continue
            st = os.lstat(p)
            seen[p] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns)
    return seen


def snapshot_diff(before, after):
    lines = [f"+ {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"- {p}" for p in sorted(before.keys() - after.keys())]
    lines += [f"~ {p} {before[p]} → {after[p]}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return lines


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class PageSocket:
    """The phone page's WebSocket, opened as the page opens it (/ws?k=<secret>, the page's own Origin):
    masked text frames out, the server's text frames in."""

    def __init__(self, port, secret):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.s.sendall((f"GET /ws?k={secret} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\n"
                        "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        f"Origin: http://127.0.0.1:{port}\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        check(head.startswith(b"HTTP/1.1 101"), f"the page's WebSocket was refused: {head[:200]!r}")

    def _fill(self):
        chunk = self.s.recv(4096)
        if not chunk:
            raise TestFailure("the service closed the page's WebSocket")
        self.buf += chunk

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text):
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        head = bytes([0x81, 0x80 | n]) if n < 126 else bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def wait_for(self, text, timeout):
        """Reads the server's frames until a text frame equal to `text` (socket timeout: 30 s a read)."""
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            b0, b1 = self._take(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._take(2), "big")
            elif n == 127:
                n = int.from_bytes(self._take(8), "big")
            payload = self._take(n)
            if b0 & 0x0F == 1:
                seen.append(payload.decode(errors="replace"))
                if seen[-1] == text:
                    return
        raise TestFailure(f"no `{text}` from the service within {timeout} s (got {seen})")

    def close(self):
        self.s.close()


class State:
    before = None       # snapshot before any install
    files = []          # what dpkg -L listed for the installed package
    secret_sha = None   # tbuser's pairing secret, made by `touchbridge pair`


# ---------------------------------------------------------------------------------------------
# Steps

def step_seat_session_and_x():
    """tbuser's autologin on tty1 is an active logind session on seat0; Xorg on :0 (root, sharing the
    console's VT so that tty1 stays the foreground one, as a display manager's would for its session)."""
    def session():
        out = run("loginctl", "list-sessions", "--no-legend", check_status=False)[1]
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 4 and f[2] == USER and "seat0" in f[3:]:
                return f[0]
        return None
    sid = until(90, "logind session of tbuser on seat0", session, 0.5)
    props = run("loginctl", "show-session", sid, "-p", "Active", "-p", "Seat", "-p", "TTY", "-p", "Remote", "-p", "Type")[1]
    note(f"session {sid}: " + " ".join(props.split()))
    check("Active=yes" in props and "Seat=seat0" in props and "Remote=no" in props, "the tty1 session is not an active local one")
    xorg = subprocess.Popen(["Xorg", ":0", "-noreset", "-nolisten", "tcp", "-sharevts", "-novtswitch",
                             "-config", "/etc/X11/xorg.conf", "-logfile", "/tmp/Xorg.0.log"],
                            stdout=subprocess.DEVNULL, stderr=open("/share/out/xorg.out", "w"))
    until(60, "X server on :0", lambda: xorg.poll() is not None or
          run("xdpyinfo", "-display", ":0", check_status=False)[0] == 0, 0.2)
    check(xorg.poll() is None, f"Xorg exited with {xorg.poll()} (see xorg.out)")
    props = run("loginctl", "show-session", sid, "-p", "Active")[1]
    check("Active=yes" in props, f"the session is no longer active once X runs: {props.strip()}")


def step_clean_image():
    """No Swift toolchain anywhere on the image; tbuser cannot write /dev/uinput before the package."""
    # The release this run is for (test-deb.sh writes it): the image is that Debian.
    with open(f"{DEBS}/release") as f:
        release = f.read().strip()
    with open("/etc/debian_version") as f:
        version = f.read().strip()
    check(release == f"Debian {version.split('.')[0]}", f"{release} was asked for, and the image is Debian {version}")
    note(f"{release} ({version})")
    check(run("sh", "-c", "command -v swift swiftc", check_status=False)[0] != 0, "a swift toolchain is on PATH")
    found = [p for d in ("/usr", "/opt") for p in glob.glob(f"{d}/**/libswiftCore.so*", recursive=True)]
    check(not found, f"Swift runtime libraries in the image: {found}")
    check(run("dpkg-query", "-W", PKG, check_status=False)[0] != 0, "touchbridge is already installed")
    check(os.path.exists("/dev/uinput"), "no /dev/uinput in the VM")
    check(not user_can_write_uinput(), "tbuser can write /dev/uinput before the package is installed")
    note("no swift, no libswiftCore; /dev/uinput: " + " ".join(acl_of_uinput().split()))
    State.before = snapshot()
    note(f"{len(State.before)} paths recorded")


def apt_install(path):
    # The image's build deleted apt's caches and lists; a real system has these directories.
    for d in ("/var/cache/apt/archives/partial", "/var/lib/apt/lists/partial"):
        os.makedirs(d, exist_ok=True)
    t = time.monotonic()
    out = run("apt", "install", "-y", "--no-install-recommends", path, timeout=300)[1]
    note(f"apt install ./{os.path.basename(path)}: {time.monotonic() - t:.1f} s")
    return out


def installed_version():
    return run("dpkg-query", "-W", "-f", "${Status} ${Version}", PKG, check_status=False)[1]


def step_apt_install():
    """`apt install ./touchbridge_….deb` with no network and no toolchain: its Depends: are in the image."""
    path = deb("new")
    out = apt_install(path)
    check("NEWLY INSTALLED" in out.upper() or "Setting up touchbridge" in out, f"apt did not install it:\n{out}")
    st = installed_version()
    check(st.startswith("install ok installed"), f"dpkg-query: {st}")
    State.files = [p for p in run("dpkg", "-L", PKG)[1].splitlines() if os.path.isfile(p)]
    for want in ("/usr/bin/touchbridge", "/usr/share/man/man1/touchbridge.1.gz",
                 "/usr/lib/systemd/user/touchbridge.service", RULE,
                 "/usr/lib/modules-load.d/touchbridge.conf", "/usr/share/doc/touchbridge/copyright",
                 "/usr/share/doc/touchbridge/changelog.gz"):
        check(want in State.files, f"{want} is not in the package (dpkg -L: {State.files})")
    modules = [l for l in open("/usr/lib/modules-load.d/touchbridge.conf").read().splitlines() if l and l[0] != "#"]
    check(modules == ["uinput"], f"modules-load.d/touchbridge.conf names {modules}, not uinput")
    run("dpkg", "--verify", PKG)
    note(f"{st}; {len(State.files)} files: " + " ".join(State.files))


def step_seat_user_gets_uinput():
    """The package's rule (TAG+="uaccess"), applied by udev on the postinst's trigger and logind's seat
    session, gives tbuser read/write on /dev/uinput: no group, no new login."""
    acl = acl_of_uinput()
    check(re.search(rf"^user:{USER}:rw-", acl, re.M), f"no ACL entry for {USER}:\n{acl}")
    check(user_can_write_uinput(), "tbuser still cannot write /dev/uinput")
    tags = run("udevadm", "info", "--query=property", "--name=/dev/uinput")[1]
    check(re.search(r"^CURRENT_TAGS=.*:uaccess:", tags, re.M), f"udev did not tag /dev/uinput uaccess:\n{tags}")
    note("/dev/uinput: " + " ".join(acl.split()))


def journal(unit_for_user):
    return run("journalctl", "--no-pager", "-o", "cat", f"_SYSTEMD_USER_UNIT={unit_for_user}", "_UID=1000",
               check_status=False)[1]


def step_user_runs_the_service():
    """As tbuser: `touchbridge pair`, then `systemctl --user enable --now touchbridge`. The service
    (the package's user unit, default settings) takes the uinput backend by itself, serves the phone
    page, and the page's messages over its WebSocket move the X pointer through its uinput touchpad
    (libinput's motion, seen by xi2watch)."""
    version = run("touchbridge", "--version", user=USER)[1].strip()
    out = run("touchbridge", "pair", user=USER)[1]
    url = re.search(r"http://\S+:8000/#k=(\S+)", out)
    check(url, f"touchbridge pair printed no page address:\n{out}")
    secret = f"/home/{USER}/.local/state/touchbridge/pairing-secret"
    check(os.path.isfile(secret) and os.stat(secret).st_uid == 1000, f"no pairing secret of tbuser's at {secret}")
    State.secret_sha = sha(secret)
    note(f"{version}; pair: {url.group(0)[:40]}…")

    watch = Watch()
    try:
        m0 = watch.mark
        run("systemctl", "--user", "enable", "--now", "touchbridge", user=USER)
        # The page's listener starts after the UDP one (the log says each as it listens): wait for both
        # lines before the page is asked for (a Debian 13 CI run asked between the two and was refused).
        log = until(60, "`listening poseai-udp` and `listening http` in the service's journal",
                    lambda: (lambda j: j if "listening poseai-udp" in j and "listening http" in j else None)(
                        journal("touchbridge.service")), 0.5)
        backend = re.search(r"backend: \S+ \(--backend auto\)[^\n]*", log)
        check(backend and backend.group(0).startswith("backend: uinput"), f"the service did not take uinput:\n{log}")
        note(backend.group(0))
        pid = run("systemctl", "--user", "show", "-p", "MainPID", "--value", "touchbridge", user=USER)[1].strip()
        uid = re.search(r"^Uid:\s+(\d+)", open(f"/proc/{pid}/status").read(), re.M).group(1)
        check(uid == "1000", f"the service runs as uid {uid}, not tbuser")
        page = urllib.request.urlopen("http://127.0.0.1:8000/", timeout=30)
        check(page.status == 200 and b"<html" in page.read(4096).lower(), "the service does not serve the phone page")
        pad, _ = watch.device_named("touchbridge_touchpad", since=m0, timeout=60)
        x0, y0, _ = watch.query()
        # The phone page's path: its WebSocket with the secret `touchbridge pair` gave, its surface size,
        # then a one-finger drag to the right in the page's messages (the PoseAI packet format).
        page = PageSocket(8000, url.group(1))
        try:
            page.send("surface 390 700")
            page.wait_for("hello touchbridge", 30)
            m = watch.mark
            for i in range(30):
                page.send(packet({0: (-0.3 + 0.02 * i, 0.1)}))
                time.sleep(0.02)
            page.send(packet({}, ended=[0]))
            watch.wait_for(regex(rf"^motion src={pad} "), 30, "motion from touchbridge_touchpad", m)
        finally:
            page.close()
        watch.sync()
        x1, y1, _ = watch.query()
        note(f"pid {pid} (uid 1000), device touchbridge_touchpad = X device {pad}; page drag: pointer "
             f"({x0},{y0}) → ({x1},{y1})")
        check(x1 > x0, f"the pointer did not move right: ({x0},{y0}) → ({x1},{y1})")
        run("systemctl", "--user", "disable", "--now", "touchbridge", user=USER)
        st = run("systemctl", "--user", "is-active", "touchbridge", user=USER, check_status=False)[1].strip()
        check(st in ("inactive", "failed"), f"the service is {st} after disable --now")
    finally:
        watch.stop()


def step_remove():
    """`dpkg -r`: every file the package installed is gone, the ACL it granted is taken back, and tbuser's
    ~/.local/state/touchbridge is left as it was."""
    run("dpkg", "-r", PKG)
    left = [p for p in State.files if os.path.lexists(p)]
    check(not left, f"left after dpkg -r: {left}")
    check(not user_can_write_uinput(), "tbuser can still write /dev/uinput after dpkg -r")
    acl = acl_of_uinput()
    check(f"user:{USER}" not in acl, f"the ACL entry is still there:\n{acl}")
    secret = f"/home/{USER}/.local/state/touchbridge/pairing-secret"
    check(os.path.isfile(secret) and sha(secret) == State.secret_sha, "tbuser's pairing secret changed or went away")
    note(f"{installed_version() or 'not installed'}; {secret} kept; /dev/uinput: " + " ".join(acl.split()))


def check_as_before(what):
    diff = snapshot_diff(State.before, snapshot())
    check(not diff, f"{what} left the file system changed:\n    " + "\n    ".join(diff[:40]))


def step_purge():
    """`dpkg -P`: the package is gone from dpkg's records, and the file system is as before the install."""
    run("dpkg", "-P", PKG)
    check(run("dpkg-query", "-W", PKG, check_status=False)[0] != 0 or
          installed_version().startswith("unknown ok not-installed"), f"still known to dpkg: {installed_version()}")
    check_as_before("install, dpkg -r, dpkg -P")
    check(os.path.isdir(f"/home/{USER}/.local/state/touchbridge"), "tbuser's state directory went away on purge")
    note("file system as before the install; ~/.local/state/touchbridge kept")


def step_upgrade():
    """An older package, then this one over it: the version moves up, every file verifies, the seat
    user has /dev/uinput, the binary runs; then `dpkg -P` leaves the file system as before."""
    old, new = deb("old"), deb("new")
    apt_install(old)
    v_old = installed_version()
    check(v_old.startswith("install ok installed"), f"the old package did not install: {v_old}")
    old_rule = [p for p in run("dpkg", "-L", PKG)[1].splitlines() if p.endswith("/70-touchbridge-uinput.rules")]
    apt_install(new)
    v_new = installed_version()
    check(v_new.startswith("install ok installed") and v_new != v_old, f"no upgrade: {v_old} → {v_new}")
    run("dpkg", "--verify", PKG)
    # The rule moved from /lib to /usr/lib, one file on a merged /usr: the upgrade must not have removed it.
    new_rule = [p for p in run("dpkg", "-L", PKG)[1].splitlines() if p.endswith("/70-touchbridge-uinput.rules")]
    check(os.path.isfile(RULE), f"the udev rule is gone after the upgrade moved it ({old_rule} → {new_rule})")
    note(f"the rule moved: {old_rule} → {new_rule}; /lib is {'a link to usr/lib' if os.path.islink('/lib') else 'a directory'}")
    check(user_can_write_uinput(), "tbuser cannot write /dev/uinput after the upgrade")
    run("touchbridge", "--version", user=USER)
    note(f"{v_old.split()[-1]} → {v_new.split()[-1]}")
    run("dpkg", "-P", PKG)
    check(not user_can_write_uinput(), "tbuser can still write /dev/uinput after dpkg -P")
    check_as_before("old install, upgrade, dpkg -P")


STEPS = [step_seat_session_and_x, step_clean_image, step_apt_install, step_seat_user_gets_uinput,
         step_user_runs_the_service, step_remove, step_purge, step_upgrade]


def main():
    os.makedirs(rig.OUT, exist_ok=True)
    for fn in STEPS:
        name = fn.__name__[5:]
        if not run_test(name, fn):  # the later steps depend on this one
            return 1
    print(f"deb-test: all steps passed in {time.monotonic() - START:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
