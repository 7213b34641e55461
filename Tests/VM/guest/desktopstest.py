#!/usr/bin/env python3
"""The desktops stage's guest tests (Tests/VM/test-desktops.sh boots the VM; desktops-init.sh makes
it a booted Debian 12 with systemd, logind and tbuser logged in on tty1). Runs as root from
tb-desktops-test.service. For each desktop, GNOME Shell 43 (Mutter) and KWin 5.27:

- the compositor is started inside tbuser's seat session (desktop-session.sh, tbuser's login shell on
  tty1, runs it, as a display manager starts a session's compositor) on DRM (qemu's virtio-gpu, mesa's
  llvmpipe), with its own settings as a user sets them: keyboard layout fr, tap to click;
- touchbridge runs as tbuser on --backend uinput (/dev/uinput through an ACL, as the package's uaccess
  rule gives it at the seat), fed over UDP and the page's WebSocket as vmtest.py and waylandtest.py do;
- wlwatch (waylandtest.py's client, xdg-shell, fullscreen) logs what a Wayland client receives; the
  compositor's own screenshot call sees the overlay (an X window on the compositor's Xwayland).

Each test prints `PASS <name> <seconds>` or `FAIL <name> <reason>`; the exit status is the number of
failures. Every wait has a timeout; nothing proves absence by sleeping. /share/tests names the tests to
run (empty: all).
"""
import glob
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, "/share")
import rig  # noqa: E402  the rig's shared guest Python: Proc, packets, the WebSocket client, until()
import waylandtest as wl  # noqa: E402  ends_of, red_near, lines
from rig import TestFailure, check, note, regex, packet, stream, WebSocket, SECRET, free_port, until, run_test  # noqa: E402

USER = "tbuser"
UID = 1000
HOME = "/home/tbuser"
RUNTIME = f"/run/user/{UID}"
AGENT = "/run/tb-desk"
WAYLAND = "wayland-0"
AS_USER = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--init-groups", "--"]
KEY_W, KEY_PAGEDOWN, KEY_PAGEUP = 17, 109, 104
# The second head of run.sh's virtio-gpu-pci (VM_GPU_OUTPUTS=2), plugged for one test by the host
# (gpu-heads.py) at the guest's request in HEADS; its DRM connector's name.
HEADS = "/share/out/heads"
FIRST, SECOND = "Virtual-1", "Virtual-2"
START = time.monotonic()


def user_env(**extra):
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": HOME, "USER": USER,
           "LOGNAME": USER, "XDG_RUNTIME_DIR": RUNTIME, "DBUS_SESSION_BUS_ADDRESS": f"unix:path={RUNTIME}/bus",
           "WAYLAND_DISPLAY": WAYLAND, "LD_LIBRARY_PATH": rig.LIB}
    env.update(extra)
    return env


def run_user(*argv, timeout=60, ok=True):
    r = subprocess.run(AS_USER + list(argv), env=user_env(), capture_output=True, text=True, timeout=timeout)
    if ok:
        check(r.returncode == 0, f"`{' '.join(argv)}` exited {r.returncode}: {r.stdout} {r.stderr}")
    return r


# ---------------------------------------------------------------------------------------------
# The seat session and the compositors

def seat_session():
    """tbuser's autologin on tty1: an active local logind session on seat0 (as deb-test.py checks)."""
    def find():
        out = subprocess.run(["loginctl", "list-sessions", "--no-legend"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 4 and f[2] == USER and "seat0" in f[3:]:
                return f[0]
        return None
    sid = until(120, "logind session of tbuser on seat0", find, 0.5)
    props = subprocess.run(["loginctl", "show-session", sid, "-p", "Active", "-p", "Seat", "-p", "TTY", "-p", "Remote"],
                           capture_output=True, text=True).stdout
    check("Active=yes" in props and "Remote=no" in props, f"the tty1 session is not an active local one: {props}")
    return sid, " ".join(props.split())


def start_agent():
    os.makedirs(AGENT, exist_ok=True)
    os.chown(AGENT, UID, UID)
    until(60, "desktop-session.sh in tbuser's session", lambda: os.path.exists(os.path.join(AGENT, "session.env")), 0.2)
    env = open(os.path.join(AGENT, "session.env")).read()
    return re.search(r"^XDG_SESSION_ID=(\S+)", env, re.M)


def in_session(name, command):
    """Runs `command` (sh) inside the seat session, as tbuser; its output goes to AGENT/<name>.log."""
    if os.path.exists(os.path.join(AGENT, "pid")):
        os.unlink(os.path.join(AGENT, "pid"))
    tmp = os.path.join(AGENT, "cmd.tmp")
    with open(tmp, "w") as f:
        f.write(f"{name}\n{command}\n")
    os.chown(tmp, UID, UID)
    os.rename(tmp, os.path.join(AGENT, "cmd"))
    until(30, f"{name} started by desktop-session.sh", lambda: os.path.exists(os.path.join(AGENT, "pid")))
    return int(open(os.path.join(AGENT, "pid")).read())


def alive(pid):
    """Whether `pid` runs: a zombie not yet reaped by desktop-session.sh counts as gone."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def comm_of(pid):
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return None


def start_compositor(name, command, comm, timeout, period=0.2, attempts=1):
    """Starts `command` (which ends in `exec <comm> ...`) in the seat session, its output in
    out/<name>.log, and waits for its Wayland socket; returns its pid. The wait follows the pid
    desktop-session.sh wrote, never a search by name: that pid is its `sh -c`, which is called `comm`
    only once it has exec'd, so a search right after the start can find nothing yet. A compositor gone
    before its socket appeared is started again, up to `attempts` starts in all, each end printed with
    the end of its log; the last one is a failure that quotes it."""
    log = os.path.join(rig.OUT, f"{name}.log")
    for attempt in range(1, attempts + 1):
        pid = in_session(name, command)
        until(timeout, f"{comm}'s Wayland socket",
              lambda: os.path.exists(os.path.join(RUNTIME, WAYLAND)) or not alive(pid), period)
        if alive(pid):
            check(comm_of(pid) == comm, f"the Wayland socket is up but pid {pid} is {comm_of(pid)!r}, not {comm}")
            return pid
        try:
            tail = open(log, errors="replace").read()[-600:]
        except OSError as e:
            tail = f"(no log: {e})"
        if attempt == attempts:
            raise TestFailure(f"{comm} exited before its Wayland socket was up (start {attempt} of {attempts}); "
                              f"the end of out/{name}.log: {tail!r}")
        note(f"{comm} exited before its Wayland socket was up (start {attempt} of {attempts}), started again; "
             f"the end of its log: {tail!r}")
        lock = os.path.join(RUNTIME, WAYLAND + ".lock")
        if os.path.exists(lock):
            os.unlink(lock)
        time.sleep(5)


def pids_named(comm):
    out = []
    for p in glob.glob("/proc/[0-9]*"):
        try:
            if open(f"{p}/comm").read().strip() == comm and os.stat(p).st_uid == UID:
                out.append(int(p[6:]))
        except OSError:
            pass
    return out


def event_node(name):
    """/dev/input/eventN of the input device called `name` (sysfs), or None."""
    for d in glob.glob("/sys/class/input/event*"):
        try:
            if open(f"{d}/device/name").read().strip() == name:
                return "/dev/input/" + os.path.basename(d)
        except OSError:
            pass
    return None


def compositor_opened(pid, names, timeout=60):
    """Waits until the compositor (pid) holds each named device's event node open (it took it from
    logind and gave it to libinput): the device is then the compositor's."""
    def opened():
        nodes = [event_node(n) for n in names]
        if not all(nodes):
            return False
        held = set()
        for fd in glob.glob(f"/proc/{pid}/fd/*"):
            try:
                held.add(os.readlink(fd))
            except OSError:
                pass
        return all(n in held for n in nodes)
    until(timeout, f"the compositor holding {names} open", opened, 0.1)


def copy_logs():
    for f in glob.glob(os.path.join(AGENT, "*.png")):
        shutil.copy(f, rig.OUT)


class Desktop:
    name = comm = None
    pid = None

    def stop(self):
        for pid in pids_named(self.comm):
            os.kill(pid, signal.SIGTERM)
        until(30, f"{self.comm} gone", lambda: not pids_named(self.comm), 0.2)
        # The next compositor binds wayland-0 afresh (a socket left behind would look like it is up).
        for f in (os.path.join(RUNTIME, WAYLAND), os.path.join(RUNTIME, WAYLAND + ".lock")):
            if os.path.exists(f):
                os.unlink(f)
        # The next desktop's Xwayland is then the only X socket.
        for f in glob.glob("/tmp/.X11-unix/X*") + glob.glob("/tmp/.X*-lock"):
            os.unlink(f)

    def x_env(self):
        """DISPLAY (and XAUTHORITY, if the compositor made one) of the compositor's Xwayland."""
        env = {}
        sockets = sorted(glob.glob("/tmp/.X11-unix/X*"))
        check(sockets, "no Xwayland socket in /tmp/.X11-unix")
        env["DISPLAY"] = self.x_display() or ":" + sockets[0].rsplit("X", 1)[1]
        auth = self.xauthority()
        if auth:
            env["XAUTHORITY"] = auth
        return env

    def xauthority(self):
        return None

    def x_display(self):
        return None


def gdbus(dest, path, method, *args, timeout=60):
    r = run_user("gdbus", "call", "--session", "--dest", dest, "--object-path", path, "--method", method, *args,
                 timeout=timeout, ok=False)
    return r.returncode, (r.stdout + r.stderr).strip()


class Gnome(Desktop):
    """GNOME Shell 43 on Mutter's native backend (DRM, libinput), a --display-server in the seat session,
    --unsafe-mode so that the tests may call the Shell's Eval and Screenshot methods."""
    name, comm = "gnome", "gnome-shell"
    virtual_keyboard = False  # Mutter offers programs no zwp_virtual_keyboard_v1

    def settings(self):
        for schema, key, value in [
                ("org.gnome.desktop.input-sources", "sources", "[('xkb', 'fr')]"),
                ("org.gnome.desktop.peripherals.touchpad", "tap-to-click", "true"),
                ("org.gnome.desktop.interface", "enable-animations", "false"),
                ("org.gnome.desktop.session", "idle-delay", "uint32 0"),
                ("org.gnome.desktop.screensaver", "lock-enabled", "false"),
                ("org.gnome.shell", "welcome-dialog-last-shown-version", "'99'")]:
            run_user("gsettings", "set", schema, key, value)
        note("gsettings: input-sources [('xkb', 'fr')], touchpad tap-to-click true, animations off, idle-delay 0")

    def start(self):
        self.settings()
        t0 = time.monotonic()
        self.pid = start_compositor("gnome-shell", "export XDG_SESSION_TYPE=wayland; exec gnome-shell --wayland "
                                    "--display-server --unsafe-mode", self.comm, 240, attempts=2)
        # 118-155 s at load 7-13 before; over 240 s twice at load 7 with two builds and a VM beside it (the
        # portal stage's GNOME 48 has 900 s): a slow start is no failure of touchbridge's.
        until(600, "the Shell's Eval answering (startup over)",
              lambda: self.eval("Main.layoutManager._startingUp") == "false", 0.5)
        ready = time.monotonic() - t0
        # GNOME starts in the overview: leave it, as a user does, so that windows get the input.
        until(60, "the overview hidden", lambda: self.eval("Main.overview.hide(); Main.overview.visible") == "false", 0.5)
        version = self.eval("imports.misc.config.PACKAGE_VERSION")
        cg = open(f"/proc/{self.pid}/cgroup").read().strip()
        note(f"GNOME Shell {version} ready in {ready:.1f} s (pid {self.pid}, {cg}); overview hidden")
        return version

    def eval(self, code):
        status, out = gdbus("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell.Eval", code)
        r = re.match(r"^\(true, '(.*)'\)$", out, re.S)
        return r.group(1).strip('"') if status == 0 and r else None

    def screenshot(self, x, y, w, h):
        """The Shell's own screenshot of the area (x, y, w, h): what is on the screen there."""
        path = os.path.join(AGENT, "shot.png")
        status, out = gdbus("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot",
                            "org.gnome.Shell.Screenshot.ScreenshotArea", str(x), str(y), str(w), str(h), "false", path)
        check(status == 0 and out.startswith("(true"), f"the Shell's ScreenshotArea call: {out}")
        return read_png(path)

    def x_display(self):
        """Mutter's public X display (it runs a second one, for its own services)."""
        return self.eval("imports.gi.GLib.getenv('DISPLAY')")

    def xauthority(self):
        found = glob.glob(os.path.join(RUNTIME, ".mutter-Xwaylandauth.*"))
        return found[0] if found else None


class KWin(Desktop):
    """KWin 5.27's Wayland session (kwin_wayland on DRM, libinput) in the seat session, with Xwayland;
    the layout and tap to click in the files System Settings writes (kxkbrc, kcminputrc)."""
    name, comm = "kde", "kwin_wayland"
    virtual_keyboard = False  # KWin 5.27 lists no zwp_virtual_keyboard_manager_v1 for programs

    def settings(self):
        config = os.path.join(HOME, ".config")
        os.makedirs(config, exist_ok=True)
        os.chown(config, UID, UID)
        for fname, text in (("kxkbrc", "[Layout]\nLayoutList=fr\nUse=true\n"),
                            ("kcminputrc", "[Libinput][29794][2][touchbridge touchpad]\nTapToClick=true\n\n"
                                           f"[Libinput][29794][1][touchbridge touchscreen]\nOutputName={SECOND}\n")):
            path = os.path.join(config, fname)
            with open(path, "w") as f:
                f.write(text)
            os.chown(path, UID, UID)
        note(f"kxkbrc: LayoutList=fr; kcminputrc: TapToClick=true for touchbridge touchpad (29794:2), OutputName={SECOND} "
             "for touchbridge touchscreen (29794:1; with one output KWin maps it onto that one)")

    def start(self):
        self.settings()
        t0 = time.monotonic()
        # kwin_wayland exiting at start (its log says why: without polkitd, logind refused its
        # Session.Activate) is printed and it is started again, up to four times in all.
        self.pid = start_compositor("kwin", "export XDG_SESSION_TYPE=wayland KWIN_SCREENSHOT_NO_PERMISSION_CHECKS=1; "
                                    "exec kwin_wayland --drm --xwayland --no-lockscreen --no-global-shortcuts "
                                    "--no-kactivities", self.comm, 240, attempts=4)
        cgroup = open(f"/proc/{self.pid}/cgroup").read().strip()
        version = run_user("kwin_wayland", "--version").stdout.strip()
        note(f"{version} ready in {time.monotonic() - t0:.1f} s (pid {self.pid}, {cgroup})")
        return version

    def screenshot(self, x, y, w, h):
        """KWin's own screenshot of the area (x, y, w, h) (org.kde.KWin.ScreenShot2.CaptureArea, the
        image through a pipe; KWIN_SCREENSHOT_NO_PERMISSION_CHECKS=1 lets a caller with no desktop file
        call it)."""
        return as_user(kwin_capture_area, x, y, w, h)

    def xauthority(self):
        found = glob.glob(os.path.join(RUNTIME, "xauth_*"))
        return found[0] if found else None


# ---------------------------------------------------------------------------------------------
# KWin's screenshot call: org.kde.KWin.ScreenShot2.CaptureArea takes the write end of a pipe (a Unix
# file descriptor passed over the bus) and writes the raw image into it. gdbus and dbus-send cannot pass
# one, and the image has no python3-dbus: a minimal D-Bus client of the standard library (the wire
# format of the D-Bus specification: SASL EXTERNAL, NEGOTIATE_UNIX_FD, Hello, one method call).

class DBusError(Exception):
    pass


def _pad(buf, n):
    buf.extend(b"\0" * (-len(buf) % n))


def _dbus_message(serial, path, interface, member, destination, signature="", body=b"", fds=0):
    fields = bytearray()

    def field(code, sig, value):
        _pad(fields, 8)
        fields.extend(bytes([code, 1]) + sig.encode() + b"\0")
        if sig == "u":
            _pad(fields, 4)
            fields.extend(struct.pack("<I", value))
        elif sig == "g":
            fields.extend(bytes([len(value)]) + value.encode() + b"\0")
        else:  # o, s
            _pad(fields, 4)
            fields.extend(struct.pack("<I", len(value)) + value.encode() + b"\0")
    field(1, "o", path)
    field(2, "s", interface)
    field(3, "s", member)
    field(6, "s", destination)
    if signature:
        field(8, "g", signature)
    if fds:
        field(9, "u", fds)
    head = bytearray(b"l\x01\x00\x01" + struct.pack("<III", len(body), serial, len(fields)))
    head.extend(fields)
    _pad(head, 8)
    return bytes(head) + body


def _dbus_read(sock, buf):
    """One message from the bus: (type, header fields {code: value}, body)."""
    while len(buf) < 16:
        chunk = sock.recv(65536)
        if not chunk:
            raise DBusError("the bus closed the connection")
        buf.extend(chunk)
    check(buf[0:1] == b"l", "a big-endian message from the bus")
    mtype = buf[1]
    blen, _, flen = struct.unpack("<III", bytes(buf[4:16]))
    total = 16 + flen + (-(16 + flen) % 8) + blen
    while len(buf) < total:
        chunk = sock.recv(65536)
        if not chunk:
            raise DBusError("the bus closed the connection")
        buf.extend(chunk)
    fields, i, end = {}, 16, 16 + flen
    while i < end:
        i += -i % 8
        code, slen = buf[i], buf[i + 1]
        sig = bytes(buf[i + 2:i + 2 + slen]).decode()
        i += 3 + slen
        if sig == "u":
            i += -i % 4
            fields[code] = struct.unpack("<I", bytes(buf[i:i + 4]))[0]
            i += 4
        elif sig == "g":
            n = buf[i]
            fields[code] = bytes(buf[i + 1:i + 1 + n]).decode()
            i += 2 + n
        else:
            i += -i % 4
            n = struct.unpack("<I", bytes(buf[i:i + 4]))[0]
            fields[code] = bytes(buf[i + 4:i + 4 + n]).decode()
            i += 5 + n
    body = bytes(buf[total - blen:total])
    del buf[:total]
    return mtype, fields, body


def _dbus_call(sock, buf, serial, *args, **kw):
    sock.sendmsg([_dbus_message(serial, *args, **{k: v for k, v in kw.items() if k != "pass_fd"})],
                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("<i", kw["pass_fd"]))] if "pass_fd" in kw else [])
    while True:
        mtype, fields, body = _dbus_read(sock, buf)
        if fields.get(5) != serial:
            continue  # a signal (NameAcquired) or another reply
        if mtype == 3:
            text = body[4:4 + struct.unpack("<I", body[:4])[0]].decode() if fields.get(8, "").startswith("s") else ""
            raise DBusError(f"{fields.get(4)}: {text}")
        return body


def kwin_capture_area(x, y, w, h):
    """Runs as tbuser (the session bus takes only its owner): KWin's CaptureArea of (x, y, w, h), the
    raw image as (width, height, RGB bytes). QImage's 32-bit formats are 0xAARRGGBB words, B G R A in
    memory on x86; the row stride is the data's length over the height."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(f"{RUNTIME}/bus")
    sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    reply = sock.recv(4096)
    check(reply.startswith(b"OK "), f"the session bus refused EXTERNAL: {reply!r}")
    sock.sendall(b"NEGOTIATE_UNIX_FD\r\n")
    reply = sock.recv(4096)
    check(reply.startswith(b"AGREE_UNIX_FD"), f"the session bus does not pass file descriptors: {reply!r}")
    sock.sendall(b"BEGIN\r\n")
    buf = bytearray()
    _dbus_call(sock, buf, 1, "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", "org.freedesktop.DBus")
    r, wfd = os.pipe()
    try:
        # x, y, width, height, options (an empty a{sv}), the pipe (index 0 of the passed fds).
        last = None
        for serial, sig in ((2, "iiuua{sv}h"), (3, "iiiia{sv}h")):
            body = struct.pack("<iiIII", x, y, w, h, 0) + b"\0" * 4 + struct.pack("<I", 0)
            try:
                _dbus_call(sock, buf, serial, "/org/kde/KWin/ScreenShot2", "org.kde.KWin.ScreenShot2", "CaptureArea",
                           "org.kde.KWin.ScreenShot2", sig, body, fds=1, pass_fd=wfd)
                break
            except DBusError as e:  # 5.27 names width and height u; later releases i
                last = e
                if "UnknownMethod" not in str(e) and "InvalidArgs" not in str(e):
                    raise
        else:
            raise last
        os.close(wfd)
        wfd = -1
        data = bytearray()
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data.extend(chunk)
    finally:
        os.close(r)
        if wfd >= 0:
            os.close(wfd)
        sock.close()
    check(data and len(data) % h == 0 and len(data) // h >= 4 * w, f"KWin's CaptureArea gave {len(data)} bytes for {w}x{h}")
    stride = len(data) // h
    rgb = bytearray()
    for row in range(h):
        line = data[row * stride:row * stride + 4 * w]
        for k in range(0, 4 * w, 4):
            rgb += bytes((line[k + 2], line[k + 1], line[k]))
    return w, h, bytes(rgb)


def as_user(fn, *args):
    """fn(*args) in a child process running as tbuser; its result (a bytes-able tuple) back over a pipe."""
    import pickle
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(UID)
            os.setuid(UID)
            out = pickle.dumps(("ok", fn(*args)))
        except BaseException as e:  # noqa: BLE001 - carried to the parent
            out = pickle.dumps(("error", f"{type(e).__name__}: {e}"))
        with os.fdopen(w, "wb") as f:
            f.write(out)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data) if data else ("error", "the child gave nothing")
    if kind != "ok":
        raise TestFailure(value)
    return value


def read_png(path):
    """An 8-bit RGB or RGBA PNG (what the Shell writes) as (width, height, RGB bytes), zlib only."""
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG")
    i, idat, w = 8, b"", None
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
            check(depth == 8 and color in (2, 6), f"PNG depth {depth} colour type {color}")
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        i += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    out = bytearray()
    prev = bytearray(stride)
    pos = 0
    for _ in range(h):
        f = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if bpp == 3:
            out += line
        else:
            out += bytes(v for k, v in enumerate(line) if k % 4 != 3)
    return w, h, bytes(out)


# ---------------------------------------------------------------------------------------------
# Clients and touchbridge in the session

class Watch(rig.Proc):
    """wlwatch: a fullscreen Wayland window that logs what it receives."""

    def wait_lines(self, mark, seconds):
        """The lines since `mark` after up to `seconds` s (less once one more line came)."""
        with self.cond:
            if len(self.lines) <= mark:
                self.cond.wait(seconds)
            return list(self.lines[mark:])

    def __init__(self, desktop, output_at=None, name=None):
        """`output_at` (x, y): fullscreen on the output at that place of the layout; stdin open for sync()."""
        env = user_env(**({"WLWATCH_OUTPUT": f"{output_at[0]},{output_at[1]}"} if output_at else {}))
        super().__init__(name or f"wlwatch-{desktop.name}", AS_USER + [os.path.join(rig.BIN, "wlwatch")], env=env,
                         stdin=output_at is not None)
        r = self.wait_for(regex(r"^ready (\d+) (\d+)"), 90, "`ready`")
        self.size = int(r.group(1)), int(r.group(2))
        self.syncs = 0

    def outputs(self):
        """The wl_outputs the compositor listed to this client: [(x, y, width, height)]."""
        return [tuple(int(v) for v in l.split()[1:]) for l in self.lines if l.startswith("output ")]

    def sync(self, timeout=60):
        """A wl_display.sync and its answer: every event the compositor sent this client before it is in
        self.lines once this returns. Returns the index of the `sync N` line."""
        self.syncs += 1
        m = self.mark
        self.p.stdin.write("sync\n")
        self.p.stdin.flush()
        self.wait_for(regex(rf"^sync {self.syncs}$"), timeout, f"sync {self.syncs}'s answer", m)
        return self.lines.index(f"sync {self.syncs}", m)


class Daemon(rig.Daemon):
    """touchbridge serve as tbuser, --backend uinput, in the Wayland session (with the compositor's
    Xwayland when `x` is true), PoseAI on an ephemeral UDP port of 127.0.0.1."""

    def __init__(self, desktop, *extra, mode="touchpad", x=True, http_port=0):
        home = rig.private_env(owner=UID)
        rig.write_secret(home, SECRET, owner=UID)
        env = user_env(**{k: home[k] for k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")})
        if x:
            env.update(desktop.x_env())
        self.desktop = desktop
        self.serve(f"touchbridge-{desktop.name}", ["--backend", "uinput", *extra], mode, http_port, env,
                   run_as=AS_USER, timeout=90)

    def devices(self, *names):
        compositor_opened(self.desktop.pid, names)


def until_seen(watch, daemon, frames, pattern, what, mark, tries=3):
    """Streams `frames` until the client logs a line matching `pattern` since `mark` (a compositor may
    take a fresh device a moment after opening it)."""
    for k in range(tries):
        stream(daemon, frames)
        try:
            return watch.wait_for(regex(pattern), 10 if k < tries - 1 else 30, what, mark)
        except TestFailure:
            if k == tries - 1:
                raise


# ---------------------------------------------------------------------------------------------
# Tests, each for the desktop given

def t_touchpad(d):
    """Touchpad mode, the native touchpad read by the compositor's libinput: a one-finger drag is
    wl_pointer motion to the right, a tap is button 272 pressed and released (tap to click as the user
    set it), two fingers moving down are axis events finer than a wheel click with axis_source finger,
    two fingers spreading a pinch whose scale grows past 1.2 (zwp_pointer_gestures_v1); a three-finger
    swipe: what the client gets is printed (the desktop may keep it for itself)."""
    watch = Watch(d)
    daemon = Daemon(d, mode="touchpad")
    try:
        daemon.devices("touchbridge touchpad")
        # The compositor takes a fresh device a moment after opening it: move until motion arrives.
        until_seen(watch, daemon, [{0: (0.0, 0.03 * i)} for i in range(5)], r"^motion ", "pointer motion", watch.mark)
        # A drag to the right, then a tap: the tap's button comes after every motion of the drag; the
        # last motion before it is to the right of the last one before the drag. KWin under TCG reads the
        # touchpad's events late at times (libinput: "timer ... scheduled expiry is in the past") and
        # then sends a drag's whole way as one motion event. Up to three drags (the first may come while
        # the compositor is still taking the device).
        for attempt in range(3):
            m = watch.mark
            before = [float(l.split()[1]) for l in watch.since(0)[:m] if l.startswith("motion ")]
            stream(daemon, [{0: (-0.3 + 0.03 * i, 0.0)} for i in range(20)], period=0.04)
            stream(daemon, [{0: (0.1, 0.1)}] * 3)
            watch.wait_for(regex(r"^button 272 pressed"), 30, "the tap's press", m)
            watch.wait_for(regex(r"^button 272 released"), 30, "the tap's release", m)
            seen = watch.since(m)
            xs = [float(l.split()[1]) for l in seen[:seen.index("button 272 pressed")] if l.startswith("motion ")]
            x0 = before[-1] if before else None
            note(f"drag {attempt + 1}: from x {x0}: {len(xs)} motion events, x {xs[0] if xs else '-'} → {xs[-1] if xs else '-'}; "
                 "then the tap: button 272 pressed, released")
            if xs and x0 is not None and xs[-1] > x0 + 20:
                break
        check(xs and x0 is not None and xs[-1] > x0 + 20, f"the pointer did not move right in three drags: from {x0}, {seen[:12]}")
        m = watch.mark
        stream(daemon, [{0: (-0.3, -0.3 + 0.01 * i), 1: (0.3, -0.3 + 0.01 * i)} for i in range(40)])
        values, sources, discrete = wl.check_smooth_axis(watch, m, "two-finger scroll")
        fine = sorted(abs(v) for v in values)
        check(len(values) >= 5 and fine[len(fine) // 2] < 10, f"want several axis steps finer than a click: {values}")
        check(sources == ["finger"], f"want axis_source finger: {sources}")
        check("global zwp_pointer_gestures_v1" in watch.lines, "no zwp_pointer_gestures_v1")
        m = watch.mark
        stream(daemon, [{0: (-0.1 - 0.012 * i, -0.1 - 0.008 * i), 1: (0.1 + 0.012 * i, 0.1 + 0.008 * i)} for i in range(40)])
        watch.wait_for(regex(r"^pinch end"), 30, "the pinch's end", m)
        scales = [float(l.split("=")[1]) for l in wl.lines(watch, m, "pinch update ")]
        note(f"pinch: {wl.lines(watch, m, 'pinch begin')[:1]} scales {scales[:3]} … {scales[-3:]}")
        check(scales and scales[-1] > 1.2, f"want the scale growing past 1.2: {scales}")
        m = watch.mark
        stream(daemon, [{0: (-0.6 + 0.02 * i, -0.2), 1: (-0.4 + 0.02 * i, 0.0), 2: (-0.2 + 0.02 * i, 0.2)} for i in range(35)])
        # Something must come after the swipe: a tap.
        stream(daemon, [{0: (0.1, 0.1)}] * 3)
        watch.wait_for(regex(r"^button 272 released"), 30, "the tap after the swipe", m)
        swipe = [l for l in watch.since(m) if l.startswith("swipe ")]
        note(f"three-finger swipe: the client got {swipe[:2] or 'no swipe events'}{' …' if len(swipe) > 2 else ''}")
    finally:
        daemon.stop()
        watch.stop()


def t_keys(d):
    """Keys by the compositor's keymap (the user's layout fr): touchbridge with no DISPLAY reads it from
    wl_keyboard, the page's ctrl+z reaches the client as KEY_W (17), z with Control (Undo on AZERTY), and
    the presenter's next and previous (Page_Down, Page_Up) as KEY_PAGEDOWN, KEY_PAGEUP."""
    watch = Watch(d)
    daemon = Daemon(d, mode="presenter", x=False, http_port=free_port())
    ws = None
    try:
        daemon.devices("touchbridge keyboard")
        r = daemon.wait_for(regex(r"keymap: .*z on evdev (\d+)"), 60, "the daemon reading the compositor's keymap")
        note(f"daemon: {r.string}")
        check(r.group(1) == "17", f"the daemon's keymap has z on evdev {r.group(1)}, want 17 (fr)")
        watch.wait_for(regex(r"^keyboard enter"), 60, "keyboard focus on the client")
        ws = WebSocket(daemon.http_port)
        m = watch.mark
        ws.send("key ctrl+z")
        r = watch.wait_for(regex(r"^key (\d+) pressed sym=0x([0-9a-f]+) name=(?!Control)(\S+) ctrl=(\d)"), 30, "ctrl+z's main key", m)
        note(f"ctrl+z: {[l for l in watch.since(m) if l.startswith('key ')]}")
        check(int(r.group(1)) == KEY_W and r.group(3) == "z" and r.group(4) == "1", f"want KEY_W (17) as z with Control: {r.string}")
        watch.wait_for(regex(rf"^key {KEY_W} released"), 30, "its release", m)
        for msg, code, sym in (("slide next", KEY_PAGEDOWN, "Next"), ("slide previous", KEY_PAGEUP, "Prior")):
            m = watch.mark
            ws.send(msg)
            r = watch.wait_for(regex(r"^key (\d+) pressed sym=0x[0-9a-f]+ name=(\S+)"), 30, f"{msg}'s key", m)
            watch.wait_for(regex(rf"^key {r.group(1)} released"), 30, f"{msg}'s release", m)
            note(f"{msg}: {r.string}")
            check(int(r.group(1)) == code and r.group(2) == sym, f"{msg}: want key {code} ({sym}): {r.string}")
    finally:
        if ws:
            ws.close()
        daemon.stop()
        watch.stop()


# What the page types (typingtest.py's steps): words, fr's digits (Shift on AZERTY), AltGr's €
# and an unshifted é, an edit with BackSpace, characters no key makes (an emoji outside the BMP, a CJK
# ideograph, a snowman) with a key's character between them, and ASCII again after them.
TYPED = [
    "text Hello, ", "text 1234 ", "text \u20ac\u00e9 ", "text wrold", "key BackSpace", "key BackSpace",
    "key BackSpace", "key BackSpace", "text orld ", "text \U0001F600a\u4e2d\u2603", "text  ok", "key Return"]
NO_KEY = "\U0001F600\u4e2d\u2603"
MODIFIERS = re.compile(r"^(Shift|Control|Alt|Meta|Super|ISO_Level|Mode_switch|Caps|Num_Lock)")


def sym_char(sym, name):
    """The character a keysym stands for (keysyms.h: Latin-1 as is, Unicode as 0x01000000 + the code
    point; € has its own), None for a modifier, and an editing key by name."""
    if MODIFIERS.match(name):
        return None
    if sym >= 0x01000000:
        return chr(sym - 0x01000000)
    if 0x20 <= sym <= 0x7e or 0xa0 <= sym <= 0xff:
        return chr(sym)
    return {0x20ac: "\u20ac"}.get(sym, f"<{name}>")


def read_typed(watch, mark, timeout):
    """The text the client's key presses spell by the keymap it was given at each (wlwatch's sym), up
    to Return, with BackSpace applied as a text field applies it."""
    watch.wait_for(regex(r"^key \d+ pressed sym=0x[0-9a-f]+ name=Return "), timeout, "the typed text's Return", mark)
    text, keymaps = "", 0
    for line in watch.since(mark):
        if line == "keymap":
            keymaps += 1
        r = re.match(r"^key \d+ pressed sym=0x([0-9a-f]+) name=(\S+)", line)
        if not r:
            continue
        c = sym_char(int(r.group(1), 16), r.group(2))
        if c == "<Return>":
            break
        if c == "<BackSpace>":
            text = text[:-1]
        elif c is not None:
            text += c
    return text, keymaps


def t_typed_text(d):
    """The page's text and keys, read back from the client's key events (the keysym each key has in
    the keymap the compositor gave the client at that moment): the layout's characters on the uinput
    keyboard (fr: Shift for digits, AltGr for €), BackSpace editing; characters no key makes on
    touchbridge's virtual keyboard where the compositor lists zwp_virtual_keyboard_manager_v1, else
    (neither Mutter 43 nor KWin 5.27 does) refused, in the log, and the rest typed; fr's keys again
    after them."""
    watch = Watch(d)
    daemon = Daemon(d, mode="presenter", x=False, http_port=free_port())
    ws = None
    try:
        daemon.devices("touchbridge keyboard")
        daemon.wait_for(regex(r"keymap: .*z on evdev 17"), 60, "the daemon reading the compositor's fr keymap", 0)
        watch.wait_for(regex(r"^keyboard enter"), 60, "keyboard focus on the client")
        ws = WebSocket(daemon.http_port)
        # A BackSpace until the client gets one (in one run GNOME Shell passed no key of a fresh keyboard
        # on for 90 s after holding it open): the text starts with the keyboard in use.
        probe = watch.mark

        def backspace_seen():
            n = watch.mark
            ws.send("key BackSpace")
            watch.wait_lines(n, 3)
            return any(l.startswith("key 14 released") for l in watch.since(probe))
        until(90, "a BackSpace from the new keyboard at the client", backspace_seen, 0.0)
        note(f"the new keyboard in use: {len([l for l in watch.since(probe) if l.startswith('key 14 pressed')])} BackSpace press(es) seen before the text")
        m = watch.mark
        t0 = time.monotonic()
        for command in TYPED:
            ws.send(command)
            time.sleep(0.1)
        got, keymaps = read_typed(watch, m, 90)
        offered = "global zwp_virtual_keyboard_manager_v1" in watch.lines
        note(f"{d.comm} lists zwp_virtual_keyboard_manager_v1 to clients: {offered}")
        check(offered == d.virtual_keyboard, f"{d.comm}: zwp_virtual_keyboard_manager_v1 listed {offered}, the test expects {d.virtual_keyboard}")
        want = "Hello, 1234 \u20ac\u00e9 world \U0001F600a\u4e2d\u2603 ok"
        if not d.virtual_keyboard:
            want = "".join(c for c in want if c not in NO_KEY)
        note(f"the client's keys spell {got!r} ({keymaps} keymap(s) sent to it meanwhile) in {time.monotonic() - t0:.1f} s")
        refusals = [l for l in daemon.lines if "refused a key chord" in l or "cannot type" in l]
        note(f"the daemon's refusals: {refusals[:3]}")
        if not d.virtual_keyboard:
            check(refusals, "no refusal in the daemon's log for the characters no key makes")
        check(got == want, f"the client's keys spell {got!r}, want {want!r}")
        keymap_lines = [l for l in daemon.lines if "keysyms from" in l]
        check(all("z on evdev 17" in l for l in keymap_lines), f"the daemon took another keymap than fr's: {keymap_lines}")
    finally:
        if ws:
            ws.close()
        with open(os.path.join(rig.OUT, f"touchbridge-typing-{d.name}.log"), "w") as f:
            f.write("\n".join(daemon.lines) + "\n")
        daemon.stop()
        watch.stop()


THREE = {0: (-0.5, -0.5), 1: (0.0, 0.0), 2: (0.75, 0.5)}


def t_touchscreen(d):
    """Touchscreen mode with no DISPLAY (the output's geometry from xdg-output) on the one output (the
    compositor maps the touchscreen onto it): three fingers are three wl_touch sequences with distinct
    ids, down at their pixels (±1), then lifted: three ups or a cancel (GNOME Shell takes three fingers
    for its own touchscreen gesture and cancels the client's touches), printed; two fingers: down,
    moving, up."""
    watch = Watch(d)
    daemon = Daemon(d, mode="touchscreen", x=False)
    try:
        daemon.devices("touchbridge touchscreen")
        r = daemon.wait_for(regex(r"Wayland display \S+: \d+ output"), 30, "the daemon's outputs", 0)
        note(f"daemon: {r.string}")
        watch.wait_for(regex(r"^seat touch bound$"), 60, "the client's wl_touch (the seat's touch capability)")
        w, h = watch.size
        m = watch.mark
        daemon.send(packet(THREE))
        downs = rig.wait_count(watch, m, "touch down ", 3, 30, "3 touch downs")
        got = [(int(a), float(x), float(y)) for a, x, y in (l.split()[2:5] for l in downs)]
        note(f"touch downs (id, x, y) on {w}x{h}: {got}")
        check(len({g[0] for g in got}) == 3, f"want 3 distinct ids: {got}")
        rig.check_fingers_at(THREE, got, (0, 0, w, h))
        # Lifted: three ups, or (GNOME Shell: three fingers are its touchscreen gesture) one cancel.
        daemon.send(packet({}, ended=[0, 1, 2]))
        until(30, "the three touches' end (three ups, or a cancel)",
              lambda: "touch cancel" in watch.since(m) or len([l for l in watch.since(m) if l.startswith("touch up ")]) == 3)
        note(f"three fingers down, then lifted: the client got {'touch cancel' if 'touch cancel' in watch.since(m) else 'three ups'}")
        two = {0: (-0.4, 0.0), 1: (0.4, 0.0)}
        m = watch.mark
        daemon.send(packet(two))
        downs = rig.wait_count(watch, m, "touch down ", 2, 30, "2 touch downs")
        ids = [l.split()[2] for l in downs]
        daemon.send(packet({s: (x + 0.1, y) for s, (x, y) in two.items()}))
        watch.wait_for(regex(rf"^touch motion {ids[1]} "), 30, "the second finger's motion", m)
        daemon.send(packet({}, ended=[0, 1]))
        for tid in ids:
            watch.wait_for(regex(rf"^touch up {tid}$"), 30, f"touch up {tid}", m)
    finally:
        daemon.stop()
        watch.stop()


def red_at(d, x, y):
    """Red pixels within 12 px of (x, y) in the compositor's screenshot of that 25x25 area (a whole
    screen's PNG takes too long to decode in Python under TCG)."""
    return wl.red_near(d.screenshot(x - 12, y - 12, 25, 25), 12, 12, 12)


def t_overlay(d):
    """Presenter mode: the overlay is an X window on the compositor's Xwayland (GNOME has no
    layer-shell); a long press shows the laser's red dot under the finger, seen in the compositor's own
    screenshot over a fullscreen Wayland window (wlwatch, as a slide show), and gone after the lift."""
    watch = Watch(d)
    daemon = Daemon(d, mode="presenter")
    try:
        daemon.wait_for(regex(r"keymap:"), 60, "the daemon's keymap line (its X connection is up)")
        w, h = watch.size
        ex, ey = rig.expected_pixel(-0.4, 0, w), rig.expected_pixel(0.3, 0, h)
        check(red_at(d, ex, ey) == 0, "red pixels at the laser's place before the press")
        deadline, n, shots = time.monotonic() + 90, 0, 0
        while time.monotonic() < deadline and n < 100:
            daemon.send(packet({0: (-0.4, 0.3)}))
            n = red_at(d, ex, ey)
            shots += 1
        note(f"laser over a fullscreen Wayland window: {n} red pixels within 12 px of ({ex},{ey}) after {shots} screenshots")
        if n < 100:
            shutil.copy(os.path.join(AGENT, "shot.png"), os.path.join(rig.OUT, f"laser-{d.name}.png"))
            tail = "\n    ".join(daemon.lines[-25:])
            raise TestFailure(f"no laser dot at ({ex},{ey}): {n} red pixels (out/laser-{d.name}.png); the daemon's log:\n    {tail}")
        daemon.send(packet({}, ended=[0]))
        until(60, "the laser dot gone after the lift", lambda: red_at(d, ex, ey) == 0, 0.2)
        note("gone after the lift")
    finally:
        daemon.stop()
        watch.stop()


def t_sigkill(d):
    """kill -9 with two fingers down (touchscreen mode): every touch ends for the client (up, cancel,
    or the seat's touch capability removed); what ended them is printed. Then a new daemon's devices
    come back to the seat (its touch capability) and its taps reach the client (which asked for a new
    wl_touch when the capability came back, as toolkits do: Mutter sends nothing to the old one)."""
    watch = Watch(d)
    daemon = Daemon(d, mode="touchscreen", x=False)
    try:
        daemon.devices("touchbridge touchscreen")
        watch.wait_for(regex(r"^seat touch bound$"), 60, "the client's wl_touch (the seat's touch capability)")
        m = watch.mark
        # Two fingers: GNOME Shell takes three for its own gesture (cancelled before any kill).
        daemon.send(packet({0: (-0.6, 0.0), 1: (0.6, 0.0)}))
        downs = rig.wait_count(watch, m, "touch down ", 2, 30, "2 touch downs")
        ids = [l.split()[2] for l in downs]
        check("touch cancel" not in watch.since(m), f"the touches were cancelled before the kill: {watch.since(m)}")
        m2 = watch.mark
        daemon.p.send_signal(signal.SIGKILL)
        daemon.p.wait(10)
        how = wl.ends_of(watch, m2, ids, "touchbridge killed")
        note(f"touchbridge killed with touches {ids} down: ended by {how}; the client saw {watch.since(m2)[:8]}")
        daemon = Daemon(d, mode="touchscreen", x=False)
        daemon.devices("touchbridge touchscreen")
        watch.wait_for(regex(r"^seat touch bound$"), 60, "the client's new wl_touch (the seat's touch capability back)", m2)

        def taps(w, fingers, seconds, what):
            """Taps (down, then lifted) every second until `w` logs a touch down; True if one came."""
            mk = w.mark
            try:
                until(seconds, what, lambda: daemon.send(packet(fingers)) or time.sleep(0.3)
                      or daemon.send(packet({}, ended=list(fingers))) or time.sleep(0.7)
                      or any(l.startswith("touch down ") for l in w.since(mk)), 0.0)
                return True
            except TestFailure:
                note(f"{what}: none within {seconds} s; the client saw {w.since(mk)[:6]}")
                return False
        check(taps(watch, {0: (0.0, 0.0)}, 60, "a tap from the next daemon on the client"),
              "the next daemon's tap did not reach the client within 60 s")
        note("the next daemon's tap reached the client")
    finally:
        daemon.stop()
        watch.stop()


# ---------------------------------------------------------------------------------------------
# A second output: the host plugs the virtio-gpu's second head in (gpu-heads.py), the compositor
# enables it beside the first.

def head(n, width, height):
    """Asks the host to plug head n in at width x height (0 x 0: unplugged) and waits for its answer."""
    os.makedirs(HEADS, exist_ok=True)
    k = len(glob.glob(os.path.join(HEADS, "req-*"))) + 1
    tmp = os.path.join(HEADS, f".req-{k}")
    with open(tmp, "w") as f:
        f.write(f"{n} {width} {height}\n")
    os.rename(tmp, os.path.join(HEADS, f"req-{k}"))
    done = os.path.join(HEADS, f"done-{k}")
    until(60, f"the host's answer to head request {k} ({n} {width}x{height})", lambda: os.path.exists(done), 0.1)
    answer = open(done).read().strip()
    check(answer == "ok", f"head request {k} ({n} {width}x{height}): {answer}")


def connector(name):
    """The DRM connector's sysfs directory (card0-Virtual-2)."""
    found = glob.glob(f"/sys/class/drm/card*-{name}")
    check(found, f"no DRM connector {name} (run.sh's VM_GPU_OUTPUTS=2?)")
    return found[0]


EDID_FILE = "edid/tb-second-monitor.bin"


def second_monitor_edid():
    """qemu gives every head the same EDID (vendor RHT, product "QEMU Monitor", serial number 0, no
    serial string: qemu's edid-generate.c), so Mutter sees two monitors with one (vendor, product,
    serial) triple and its touchscreen setting could not tell them apart (it takes the first that
    matches). Two real monitors differ by serial: the second head gets the first one's EDID with serial
    number 2 (bytes 12-15, checksum fixed), through the kernel's EDID override for that connector
    (drm.edid_firmware, read from /lib/firmware at each probe)."""
    edid = bytearray(open(os.path.join(connector(FIRST), "edid"), "rb").read())
    check(len(edid) >= 128 and edid[:8] == b"\0\xff\xff\xff\xff\xff\xff\0", f"{FIRST}'s EDID: {bytes(edid[:16])!r}")
    edid[12:16] = struct.pack("<I", 2)
    edid[127] = -sum(edid[:127]) & 0xff
    os.makedirs("/lib/firmware/edid", exist_ok=True)
    with open(os.path.join("/lib/firmware", EDID_FILE), "wb") as f:
        f.write(edid)
    with open("/sys/module/drm/parameters/edid_firmware", "w") as f:
        f.write(f"{SECOND}:{EDID_FILE}")


def gnome_monitors():
    """Mutter's own view (org.gnome.Mutter.DisplayConfig.GetCurrentState; GVariant text: only a list's
    first element carries its type, `uint32 0`): its serial, {connector:
    (vendor, product, serial, preferred mode id)} of the connected monitors, and {connector: (x, y,
    primary)} of the enabled ones (in a logical monitor)."""
    status, out = gdbus("org.gnome.Mutter.DisplayConfig", "/org/gnome/Mutter/DisplayConfig",
                        "org.gnome.Mutter.DisplayConfig.GetCurrentState")
    check(status == 0, f"DisplayConfig.GetCurrentState: {out[:300]}")
    serial = int(re.match(r"\(uint32 (\d+)", out).group(1))
    found = list(re.finditer(r"\(\('([^']+)', '([^']*)', '([^']*)', '([^']*)'\), \[\(", out))
    monitors = {}
    for k, m in enumerate(found):
        modes = out[m.end():found[k + 1].start() if k + 1 < len(found) else len(out)]
        pref = re.search(r"'([^']+)', \d+, \d+, [^\[]*\[[^\]]*\], (?:@a\{sv\} )?\{[^}]*'is-preferred': <true>", modes)
        monitors[m.group(1)] = (*m.groups()[1:], pref.group(1) if pref else None)
    logical = {m.group(4): (int(m.group(1)), int(m.group(2)), m.group(3) == "true")
               for m in re.finditer(r"\((-?\d+), (-?\d+), [-+.e\d]+, (?:uint32 )?\d+, (true|false), \[\('([^']+)'", out)}
    return serial, monitors, logical, out


def kwin_outputs():
    """KWin's own view (org.kde.KWin.supportInformation, its "Screens" part): {name: (x, y, w, h)} of the
    enabled outputs."""
    status, out = gdbus("org.kde.KWin", "/KWin", "org.kde.KWin.supportInformation")
    check(status == 0, f"org.kde.KWin.supportInformation: {out[:300]}")
    text = out.replace("\\n", "\n")
    found = {}
    for block in re.split(r"\nScreen \d+:\n", text)[1:]:
        name = re.search(r"^Name: (\S+)", block, re.M)
        enabled = re.search(r"^Enabled: (\S+)", block, re.M)
        geo = re.search(r"^Geometry: (-?\d+),(-?\d+),(\d+)x(\d+)", block, re.M)
        if name and geo and (not enabled or enabled.group(1) in ("1", "true")):
            found[name.group(1)] = tuple(int(v) for v in geo.groups())
    return found, text


def both_outputs(d):
    """Waits until the compositor has both heads enabled side by side; returns the layout
    {connector: (x, y)} and, on GNOME, {connector: (vendor, product, serial)}."""
    if isinstance(d, Gnome):
        try:
            serial, monitors, logical, _ = until(180, "Mutter's two monitors, both enabled",
                                                 lambda: (lambda r: r if len(r[1]) == 2 and len(r[2]) == 2 else None)(gnome_monitors()), 1.0)
        except TestFailure:
            raise TestFailure(f"Mutter's state: {gnome_monitors()[1:3]}; its tail: {gnome_monitors()[3][-700:]}")
        note(f"Mutter (DisplayConfig.GetCurrentState): monitors (vendor, product, serial, preferred mode) {monitors}; "
             f"logical monitors (x, y, primary) {logical}")
        return {k: v[:2] for k, v in logical.items()}, {k: v[:3] for k, v in monitors.items()}

    def ready():
        # KWin owns org.kde.KWin once its workspace is up (after Xwayland's start): until then the call fails.
        try:
            found, _ = kwin_outputs()
        except TestFailure:
            return None
        return found if len(found) == 2 else None
    try:
        found = until(180, "KWin's two outputs, both enabled", ready, 1.0)
    except TestFailure:
        raise TestFailure(f"KWin's supportInformation: {kwin_outputs()[1][-1500:]}")
    note(f"KWin (supportInformation): enabled outputs (x, y, w, h) {found}")
    return {k: v[:2] for k, v in found.items()}, None


def one_output(d):
    """Waits until the compositor is back to the first head alone."""
    if isinstance(d, Gnome):
        until(180, "Mutter back to one monitor", lambda: len(gnome_monitors()[1]) == 1, 1.0)
    else:
        until(180, "KWin back to one output", lambda: list(kwin_outputs()[0]) == [FIRST], 1.0)


def first_tap_on_second(daemon, on_first, on_second, finger, seconds=60):
    """Taps (down, then up) until a tap lands on the client on the second output, and says where the
    ones before it went. In one CI run, the two fingers sent as soon as both clients had printed
    `seat … touch=1` never reached the client on the second output (its last line), and the run kept
    nothing that says where they went. Two moments could lose a first touch: Mutter applies a
    touchscreen's `output` setting after the device appears (its input mapper reads the setting once
    the device is added, and hands the output to the seat's input thread), and wlwatch asked for its
    wl_touch after printing the capability, so its request could reach the compositor after the touch
    (the tests now wait for its `seat touch bound`, the answer to a sync after that request). The
    touches the test checks come after this tap; a mapping never applied fails here, after `seconds`,
    saying where the taps went."""
    misses = []
    end = time.monotonic() + seconds
    while True:
        m1, m2 = on_first.mark, on_second.mark
        daemon.send(packet(finger))
        try:
            where = until(3, "the tap's down on either client",
                          lambda: ("second" if any(l.startswith("touch down ") for l in on_second.since(m2))
                                   else "first" if any(l.startswith("touch down ") for l in on_first.since(m1))
                                   else None), 0.02)
        except TestFailure:
            where = "neither"
        daemon.send(packet({}, ended=list(finger)))
        if where == "second":
            until(10, "the tap's end on the second client",
                  lambda: any(l.startswith(("touch up ", "touch cancel")) for l in on_second.since(m2)), 0.02)
            return f"after {len(misses)} earlier tap(s) {misses}" if misses else "at the first tap"
        misses.append(where)
        if time.monotonic() > end:
            raise TestFailure(f"no tap reached the client on {SECOND} within {seconds} s: the taps' downs went to "
                              f"{misses} (first: the client on {FIRST}); the last one's lines: on {FIRST} "
                              f"{on_first.since(m1)[:6]}, on {SECOND} {on_second.since(m2)[:6]}")
        # The miss's up reaches its client before the next tap goes down.
        if where == "first":
            until(10, "the missed tap's end on the first client",
                  lambda: any(l.startswith(("touch up ", "touch cancel")) for l in on_first.since(m1)), 0.02)


def t_named_output_of_two(d):
    """Touchscreen mode on a named output of two, set up as docs/desktops.md tells users: the host plugs the
    VM's second head in; the compositor enables it beside the first (its own D-Bus view checked); the
    touchscreen is mapped onto the second (GNOME: the monitor's EDID triple in the device's
    org.gnome.desktop.peripherals.touchscreen `output` setting, by gsettings; KDE: `OutputName` in the
    device's kcminputrc group, written before KWin started); touchbridge runs with `--monitor all`.
    Once a tap has reached the client on the second output (first_tap_on_second: a new device's first
    touch can be lost), two fingers land on a client fullscreen on the second output at their pixels
    (the device's whole range stretched over that output: the finger's pixel in the layout's box,
    scaled to the output, ±1); a
    client fullscreen on the first output gets no touch: after the fingers are up, it asks the compositor
    for a wl_display.sync, and no touch came before the answer. Then the head is unplugged and the
    compositor is back to one output."""
    plugged = mapped = False
    watches, daemon = [], None
    try:
        if isinstance(d, Gnome):
            second_monitor_edid()
        head(1, 1280, 800)
        plugged = True
        until(60, f"{SECOND} connected", lambda: open(os.path.join(connector(SECOND), "status")).read().strip() == "connected")
        layout, triples = both_outputs(d)
        check(set(layout) == {FIRST, SECOND}, f"want {FIRST} and {SECOND} enabled: {layout}")
        first_at, second_at = layout[FIRST], layout[SECOND]
        check(second_at != (0, 0) and first_at[1] == second_at[1], f"want the outputs side by side, {SECOND} not at 0,0: {layout}")
        if triples:
            check(triples[FIRST] != triples[SECOND], f"the two monitors have one EDID triple: {triples}")
            value = "[" + ", ".join(f"'{v}'" for v in triples[SECOND]) + "]"
            run_user("gsettings", "set", "org.gnome.desktop.peripherals.touchscreen:"
                     "/org/gnome/desktop/peripherals/touchscreens/7462:0001/", "output", value)
            mapped = True
            note(f"gsettings set org.gnome.desktop.peripherals.touchscreen:/org/gnome/desktop/peripherals/touchscreens/7462:0001/ output \"{value}\"")
        on_first = Watch(d, output_at=first_at, name=f"wlwatch-{d.name}-first")
        watches.append(on_first)
        on_second = Watch(d, output_at=second_at, name=f"wlwatch-{d.name}-second")
        watches.append(on_second)
        outs = on_second.outputs()
        note(f"the clients' wl_outputs (x, y, w, h): {outs}; fullscreen: {on_first.size} on {FIRST}, {on_second.size} on {SECOND}")
        box_w = max(x + w for x, y, w, h in outs) - min(x for x, y, w, h in outs)
        box_h = max(y + h for x, y, w, h in outs) - min(y for x, y, w, h in outs)
        daemon = Daemon(d, "--monitor", "all", mode="touchscreen", x=False)
        daemon.devices("touchbridge touchscreen")
        r = daemon.wait_for(regex(r"Wayland display \S+: \d+ output"), 30, "the daemon's outputs", 0)
        note(f"daemon: {r.string}")
        for w in watches:
            w.wait_for(regex(r"^seat touch bound$"), 60, "the client's wl_touch (the seat's touch capability)")
        w2, h2 = on_second.size
        fingers = {0: (-0.5, -0.5), 1: (0.75, 0.5)}
        mapped_after = first_tap_on_second(daemon, on_first, on_second, {0: fingers[0]})
        note(f"a tap at finger 0's place reached the client on {SECOND} {mapped_after}")
        m1, m2 = on_first.mark, on_second.mark
        daemon.send(packet(fingers))
        downs = rig.wait_count(on_second, m2, "touch down ", 2, 60, f"2 touch downs on the client on {SECOND}")
        got = [(int(a), float(x), float(y)) for a, x, y in (l.split()[2:5] for l in downs)]
        for (slot, (fx, fy)), (_, gx, gy) in zip(sorted(fingers.items()), got):
            # touchbridge: the finger's pixel in the box (--monitor all), sent at pixel·4 + 2 of a range of
            # box·4 units; the compositor stretches that range over the output (libinput: value·size/range).
            ex = (rig.expected_pixel(fx, 0, box_w) * 4 + 2) * w2 / (box_w * 4)
            ey = (rig.expected_pixel(fy, 0, box_h) * 4 + 2) * h2 / (box_h * 4)
            note(f"finger {slot} at ({fx}, {fy}): ({gx}, {gy}) on {SECOND}, want ({ex:.1f}, {ey:.1f}) ±1")
            check(abs(gx - ex) <= 1 and abs(gy - ey) <= 1, f"finger {slot} at ({gx},{gy}) on {SECOND}, want ({ex:.1f},{ey:.1f}) ±1")
        daemon.send(packet({}, ended=[0, 1]))
        until(30, "the two touches' end on the second output (two ups, or a cancel)",
              lambda: "touch cancel" in on_second.since(m2) or len([l for l in on_second.since(m2) if l.startswith("touch up ")]) == 2)
        at = on_first.sync()
        stray = [l for l in on_first.lines[m1:at] if l.startswith("touch ")]
        note(f"the client on {FIRST}, up to its sync after the fingers: {on_first.lines[m1:at][:6] or 'nothing'}")
        check(not stray, f"the client on {FIRST} got touches: {stray}")
    finally:
        if daemon:
            daemon.stop()
        for w in watches:
            w.stop()
        if mapped:
            run_user("gsettings", "reset", "org.gnome.desktop.peripherals.touchscreen:"
                     "/org/gnome/desktop/peripherals/touchscreens/7462:0001/", "output", ok=False)
        if plugged:
            head(1, 0, 0)
            one_output(d)
            note(f"{SECOND} unplugged: the compositor is back to one output")


TESTS = [("touchpad", t_touchpad), ("keys_fr_and_presenter", t_keys), ("typed_text", t_typed_text), ("touchscreen", t_touchscreen),
         ("overlay_laser_through_xwayland", t_overlay), ("sigkill_mid_touch", t_sigkill),
         ("touchscreen_on_the_named_output_of_two", t_named_output_of_two)]


def main():
    os.makedirs(rig.OUT, exist_ok=True)
    os.chmod(rig.OUT, 0o777)  # the compositors' logs, written by tbuser (desktop-session.sh)
    # The binaries and the Swift runtime into RAM (rig.py's BIN and LIB; 9p pages in slowly). Here, not
    # in desktops-init.sh: systemd-tmpfiles empties /tmp at boot.
    shutil.rmtree("/tmp/tb", ignore_errors=True)
    for sub in ("bin", "lib"):
        shutil.copytree(f"/share/{sub}", f"/tmp/tb/{sub}")
    subprocess.run(["chmod", "-R", "a+rX", "/tmp/tb"], check=True)
    wanted = rig.wanted_tests()
    failures = 0
    try:
        sid, props = seat_session()
        session_id = start_agent()
        subprocess.run(["setfacl", "-m", f"u:{USER}:rw", "/dev/uinput"], check=True, timeout=30)
        note(f"seat session {sid}: {props}; desktop-session.sh runs in {session_id.group(0) if session_id else 'no XDG_SESSION_ID'}; "
             f"/dev/uinput ACL for {USER}")
    except Exception as e:  # noqa: BLE001
        print(f"FAIL seat_session {time.monotonic() - START:.1f} {rig.failure_text(e)}", flush=True)
        return 1
    for desktop in (Gnome(), KWin()):
        names = [f"{desktop.name}_{n}" for n, _ in TESTS]
        if wanted and not any(w.startswith(desktop.name) for w in wanted):
            continue
        if not run_test(f"{desktop.name}_session", desktop.start):
            failures += 1
            copy_logs()
            continue
        try:
            for (n, fn), full in zip(TESTS, names):
                if wanted and full not in wanted and desktop.name not in wanted:
                    continue
                if fn is t_overlay and desktop.screenshot is None:
                    print(f"NOT RUN {full}: no screenshot call for {desktop.comm} in this image", flush=True)
                    continue
                failures += not run_test(full, fn, desktop)  # every failure is reported, the run goes on
        finally:
            desktop.stop()
            copy_logs()
    print(f"desktops-test: done in {time.monotonic() - START:.1f} s, {failures} failure(s)", flush=True)
    return failures


if __name__ == "__main__":
    sys.exit(main())
