#!/usr/bin/env python3
"""The portal stage's KDE Plasma 6 part (issue 29), run by portaltest.py in the same boot after the GNOME
tests (or alone when only `kde_…` tests are named): KWin 6 as the seat session's Wayland compositor,
xdg-desktop-portal with xdg-desktop-portal-kde as its backend, and touchbridge --backend auto as
tbuser (no write access to /dev/uinput) taking the RemoteDesktop portal, whose EIS connection KWin's
EIS plugin serves (org.kde.KWin.EIS.RemoteDesktop.connectToEIS, asked by xdg-desktop-portal-kde).

- KWin: `kwin_wayland --drm` inside tbuser's seat session (desktop-session.sh, as a display manager
  starts it), XDG_CURRENT_DESKTOP=KDE in its environment and in the user's systemd (the portal picks its
  backend by it, kde-portals.conf), KWIN_SCREENSHOT_NO_PERMISSION_CHECKS=1 (the test's screenshots:
  org.kde.KWin.ScreenShot2.CaptureArea, desktopstest.py's D-Bus client);
- the dialog, xdg-desktop-portal-kde's "Remote control requested" (a Qt Quick SystemDialog: the text,
  an "Allow restoring on future sessions" check box, checked, shown for persist_mode 2, and the
  buttons Share and Cancel), is found in a screenshot of the whole screen (KWin alone draws a black
  desktop: the dialog is the one bright rectangle), saved to out/kde-dialog-<tag>.png, and answered
  with the VM's tablet (qmp-input.py): a click on Share (or Cancel), found in the dialog's bottom band;
- the tests print `PASS kde_…`/`FAIL kde_…` as portaltest.py's do.
"""
import glob
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

sys.path.insert(0, "/share")
import rig  # noqa: E402  the rig's shared guest Python
import desktopstest as dt  # noqa: E402
import portaltest as pt  # noqa: E402
from rig import TestFailure, check, note, regex, run_test  # noqa: E402

# As startplasma sets them. XDG_MENU_PREFIX=plasma-: KDE's service cache (ksycoca6) is built from
# plasma-applications.menu; without it (no applications.menu) the cache holds no application, and KWin,
# which grants a privileged Wayland interface to a program whose .desktop file lists it
# (X-KDE-Wayland-Interfaces), finds none for xdg-desktop-portal-kde: no zkde_screencast_unstable_v1
# for it, and its CreateSession answers 2 ("zkde_screencast_unstable_v1 does not seem to be available").
SESSION_ENV = {"XDG_CURRENT_DESKTOP": "KDE", "XDG_SESSION_TYPE": "wayland", "XDG_SESSION_DESKTOP": "KDE",
               "XDG_MENU_PREFIX": "plasma-"}


def user_env(**extra):
    return pt.user_env(SESSION_ENV, **extra)


def run_user(*argv, **options):
    return pt.run_user(*argv, session_env=SESSION_ENV, **options)


def versions():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", "kwin-wayland", "xdg-desktop-portal-kde",
                        "xdg-desktop-portal", "plasma-workspace", "libei1", "qt6-base-dev-tools", "libqt6core6t64"],
                       capture_output=True, text=True)
    return " | ".join(r.stdout.split("\n")).strip(" |")


# ---------------------------------------------------------------------------------------------
# KWin's screenshot, raw: (width, height, stride, bytes B G R A per pixel)

def capture_raw(x, y, w, h):
    """Runs as tbuser: KWin's ScreenShot2.CaptureArea of (x, y, w, h), the raw QImage bytes."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(120)
    sock.connect(f"{dt.RUNTIME}/bus")
    sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    check(sock.recv(4096).startswith(b"OK "), "the session bus refused EXTERNAL")
    sock.sendall(b"NEGOTIATE_UNIX_FD\r\n")
    check(sock.recv(4096).startswith(b"AGREE_UNIX_FD"), "the session bus does not pass file descriptors")
    sock.sendall(b"BEGIN\r\n")
    buf = bytearray()
    dt._dbus_call(sock, buf, 1, "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", "org.freedesktop.DBus")
    r, wfd = os.pipe()
    data = bytearray()

    def drain():  # read while KWin writes (a whole screen is more than a pipe holds)
        while True:
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            data.extend(chunk)
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        last = None
        for serial, sig in ((2, "iiuua{sv}h"), (3, "iiiia{sv}h")):
            body = struct.pack("<iiIII", x, y, w, h, 0) + b"\0" * 4 + struct.pack("<I", 0)
            try:
                dt._dbus_call(sock, buf, serial, "/org/kde/KWin/ScreenShot2", "org.kde.KWin.ScreenShot2", "CaptureArea",
                              "org.kde.KWin.ScreenShot2", sig, body, fds=1, pass_fd=wfd)
                break
            except dt.DBusError as e:
                last = e
                if "UnknownMethod" not in str(e) and "InvalidArgs" not in str(e):
                    raise
        else:
            raise last
        os.close(wfd)
        wfd = -1
        reader.join(120)
    finally:
        if wfd >= 0:
            os.close(wfd)
        reader.join(5)
        os.close(r)
        sock.close()
    check(data and len(data) % h == 0 and len(data) // h >= 4 * w, f"KWin's CaptureArea gave {len(data)} bytes for {w}x{h}")
    return w, h, len(data) // h, bytes(data)


def write_png(path, w, h, stride, data):
    """The raw B G R A image as an RGB PNG (filter 0 on each row)."""
    rows = bytearray()
    for y in range(h):
        line = data[y * stride:y * stride + 4 * w]
        rgb = bytearray(3 * w)
        rgb[0::3], rgb[1::3], rgb[2::3] = line[2::4], line[1::4], line[0::4]
        rows += b"\0" + rgb

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(bytes(rows), 3)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def dialog_box(shot):
    """The bounding box (x, y, w, h) of the bright pixels (every 4th pixel, every 4th row; bright: a
    channel above 90, where KWin's empty desktop is black and wlwatch's window 0x203040), or None."""
    w, h, stride, data = shot
    xs, ys = [], []
    for y in range(0, h, 4):
        line = data[y * stride:y * stride + 4 * w]
        bs, gs, rs = line[0::16], line[1::16], line[2::16]
        hit = [i * 4 for i, (b, g, r) in enumerate(zip(bs, gs, rs)) if max(b, g, r) > 90]
        if len(hit) > 4:
            xs += (hit[0], hit[-1])
            ys.append(y)
    if not ys:
        return None
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    return (x0, y0, x1 - x0 + 4, y1 - y0 + 4) if x1 - x0 > 150 and y1 - y0 > 80 else None


def buttons_in(shot, box):
    """The dialog's two right-most buttons (Share, Cancel: KDE's order, the default action left of
    Cancel) as their centres, found in the bottom band of the dialog: runs of pixels unlike the
    dialog's background, 40 to 400 px wide, gathered by their left and right ends over the band's rows."""
    w, h, stride, data = shot
    bx, by, bw, bh = box
    band0 = by + bh * 6 // 10
    band1 = min(by + bh - 2, h - 1)

    def px(x, y):
        o = y * stride + 4 * x
        return data[o + 2], data[o + 1], data[o]
    # The background: the commonest colour in the band.
    counts = {}
    for y in range(band0, band1, 3):
        for x in range(bx + 4, bx + bw - 4, 5):
            c = px(x, y)
            counts[c] = counts.get(c, 0) + 1
    bg = max(counts, key=counts.get)
    runs = {}
    for y in range(band0, band1):
        x, start, last = bx + 3, None, None
        found = []
        while x < bx + bw - 3:
            c = px(x, y)
            diff = max(abs(c[0] - bg[0]), abs(c[1] - bg[1]), abs(c[2] - bg[2])) > 14
            if diff:
                if start is None:
                    start = x
                last = x
            elif start is not None and x - last > 6:
                found.append((start, last))
                start = None
            x += 1
        if start is not None:
            found.append((start, last))
        for a, b in found:
            if 40 <= b - a <= 400:
                key = (a // 4, b // 4)
                runs.setdefault(key, []).append(y)
    # Runs of about the same ends are one button; keep those seen on at least two rows.
    groups = []
    for (a, b), ys in sorted(runs.items()):
        for g in groups:
            if abs(g["a"] - a * 4) <= 8 and abs(g["b"] - b * 4) <= 8:
                g["ys"] += ys
                break
        else:
            groups.append({"a": a * 4, "b": b * 4, "ys": list(ys)})
    groups = [g for g in groups if len(set(g["ys"])) >= 2]
    # Two groups side by side (no overlap), on the same rows, right-most.
    best = None
    for i, g1 in enumerate(groups):
        for g2 in groups:
            if g2["a"] > g1["b"] and abs(min(g1["ys"]) - min(g2["ys"])) < 12 and abs(max(g1["ys"]) - max(g2["ys"])) < 12:
                if best is None or g2["b"] > best[1]["b"] or (g2["b"] == best[1]["b"] and g1["b"] > best[0]["b"]):
                    best = (g1, g2)
    if not best:
        return None, bg, groups
    (g1, g2) = best
    cy = (min(g1["ys"] + g2["ys"]) + max(g1["ys"] + g2["ys"])) // 2
    return ((g1["a"] + g1["b"]) // 2, cy, (g2["a"] + g2["b"]) // 2, cy), bg, groups


class KWin6(dt.KWin):
    """KWin 6 on DRM in the seat session, with XDG_CURRENT_DESKTOP=KDE, then xdg-desktop-portal with
    xdg-desktop-portal-kde (started one after the other, as portaltest.py's GNOME does)."""
    name, comm = "kde", "kwin_wayland"

    def start(self):
        t0 = time.monotonic()
        # What plasma-session would set in the user's systemd before the portal starts.
        run_user("systemctl", "--user", "set-environment", f"WAYLAND_DISPLAY={dt.WAYLAND}",
                 *(f"{k}={v}" for k, v in SESSION_ENV.items()),
                 "QT_LOGGING_RULES=xdp-kde*.debug=true", "KWIN_SCREENSHOT_NO_PERMISSION_CHECKS=1")
        run_user("systemctl", "--user", "unset-environment", "DISPLAY", ok=False)
        # The dialog's Qt Quick Controls style (Plasma's org.kde.desktop) if the image has it; else Fusion.
        if not os.path.isdir("/usr/lib/x86_64-linux-gnu/qt6/qml/org/kde/desktop"):
            run_user("systemctl", "--user", "set-environment", "QT_QUICK_CONTROLS_STYLE=Fusion")
            note("no org.kde.desktop Qt Quick Controls style in the image: QT_QUICK_CONTROLS_STYLE=Fusion")
        # A service cache built before (by another session's environment) would be kept.
        for f in glob.glob(os.path.join(dt.HOME, ".cache", "ksycoca6_*")):
            os.unlink(f)
        helptext = run_user("kwin_wayland", "--help", ok=False).stdout
        opts = [o for o in ("--drm", "--no-lockscreen", "--no-global-shortcuts", "--no-kactivities") if o in helptext]
        env = " ".join(f"{k}={v}" for k, v in SESSION_ENV.items())
        cmd = f"export {env} KWIN_SCREENSHOT_NO_PERMISSION_CHECKS=1; exec kwin_wayland {' '.join(opts)}"
        # Started again if it exits before its socket is up: four starts in all, as the desktops stage's KWin.
        self.pid = dt.start_compositor("kwin-kde", cmd, self.comm, 900, period=0.5, attempts=4)

        def on_bus():
            st, out = dt.gdbus("org.kde.KWin", "/org/kde/KWin/EIS/RemoteDesktop", "org.freedesktop.DBus.Introspectable.Introspect")
            return st == 0 and "connectToEIS" in out
        dt.until(600, "KWin's org.kde.KWin.EIS.RemoteDesktop on the session bus", on_bus, 1.0)
        ready = time.monotonic() - t0
        version = run_user("kwin_wayland", "--version", ok=False).stdout.strip()
        note(f"{version} ({' '.join(opts)}) ready in {ready:.1f} s (pid {self.pid}); org.kde.KWin.EIS.RemoteDesktop there")
        self.start_portal()
        return version

    def start_portal(self):
        # The portal's choice of backends for XDG_CURRENT_DESKTOP=KDE (kde-portals.conf; written if the
        # package lacks it, as Plasma's would be).
        conf = "/usr/share/xdg-desktop-portal/kde-portals.conf"
        if not os.path.exists(conf):
            with open(conf, "w") as f:
                f.write("[preferred]\ndefault=kde;gtk;\n")
            note(f"{conf} written (default=kde;gtk;)")
        else:
            note(f"{conf}: {' '.join(open(conf).read().split())}")
        units = run_user("systemctl", "--user", "list-unit-files", "--no-legend", "*portal*", ok=False).stdout
        kde_unit = next((l.split()[0] for l in units.splitlines() if "kde" in l.split()[0]), None)
        note(f"user units: {' '.join(l.split()[0] for l in units.splitlines())}")
        check(kde_unit, "no systemd user unit for xdg-desktop-portal-kde")
        dropin = f"/etc/systemd/user/{kde_unit}.d"
        os.makedirs(dropin, exist_ok=True)
        with open(f"{dropin}/tcg.conf", "w") as f:
            f.write("[Service]\nTimeoutStartSec=900\n")
        run_user("systemctl", "--user", "daemon-reload")
        # GNOME's portal and backend (if the GNOME tests ran before) go with GNOME Shell.
        run_user("systemctl", "--user", "stop", "xdg-desktop-portal.service", "xdg-desktop-portal-gnome.service", ok=False, timeout=120)
        t1 = time.monotonic()
        run_user("systemctl", "--user", "start", "tb-portal-session.target", ok=False)
        run_user("systemctl", "--user", "start", kde_unit, timeout=900)
        run_user("systemctl", "--user", "start", "xdg-desktop-portal.service", timeout=900)
        note(f"systemd --user: {kde_unit} and xdg-desktop-portal up in {time.monotonic() - t1:.1f} s")
        pt.pipewire_state(SESSION_ENV)

    def shot(self, name=None):
        w, h = self.size()
        s = dt.as_user(capture_raw, 0, 0, w, h)
        if name:
            write_png(os.path.join(rig.OUT, f"{name}.png"), *s)
        return s

    def size(self):
        if not getattr(self, "_size", None):
            # The output's mode from DRM (one output, virtio-gpu's first head).
            for p in sorted(os.listdir("/sys/class/drm")):
                st = f"/sys/class/drm/{p}/status"
                if os.path.exists(st) and open(st).read().strip() == "connected":
                    modes = open(f"/sys/class/drm/{p}/modes").read().split()
                    if modes:
                        self._size = tuple(int(v) for v in modes[0].split("x"))
                        break
            else:
                self._size = (1280, 800)
        return self._size

    def screenshot_file(self, name):
        try:
            self.shot(name)
            return True
        except Exception as e:  # noqa: BLE001 - a screenshot for the log only
            note(f"screenshot {name}: {e}")
            return False


# ---------------------------------------------------------------------------------------------
# The dialog

def portal_journal(tag):
    """The portal's and its KDE backend's lines from the journal, to out/kde-portal-<tag>.journal."""
    r = subprocess.run(["journalctl", "-b", "--no-pager", "-o", "short-monotonic", "_SYSTEMD_USER_UNIT=plasma-xdg-desktop-portal-kde.service",
                        "+", "_SYSTEMD_USER_UNIT=xdg-desktop-portal.service"], capture_output=True, text=True, timeout=120)
    with open(os.path.join(rig.OUT, f"kde-portal-{tag}.journal"), "w") as f:
        f.write(r.stdout + r.stderr)
    return r.stdout.splitlines()


def wait_dialog(d, tag, daemon, seconds=600):
    """The dialog's box once it is drawn: the same bright box in two screenshots in a row; fails at once
    when the daemon exits first (the portal refused before asking)."""
    last = [None]
    t0 = time.monotonic()
    seen = [t0]

    def drawn():
        if daemon.p.poll() is not None:
            raise TestFailure(f"touchbridge exited ({daemon.p.returncode}) before a dialog appeared: "
                              + " | ".join(daemon.lines[-6:]) + " || portal: " + " | ".join(portal_journal(tag)[-8:]))
        box = dialog_box(d.shot())
        if time.monotonic() - seen[0] > 90:
            seen[0] = time.monotonic()
            d.screenshot_file(f"kde-wait-{tag}")
            note(f"{time.monotonic() - t0:.0f} s, no dialog yet; daemon: {daemon.lines[-1:]}; portal: {portal_journal(tag)[-3:]}")
        stable = box is not None and box == last[0]
        last[0] = box
        return box if stable else None
    box = dt.until(seconds, "xdg-desktop-portal-kde's dialog on the screen", drawn, 1.0)
    shot = d.shot(f"kde-dialog-{tag}")
    note(f"dialog at {box} on {d.size()[0]}x{d.size()[1]} (out/kde-dialog-{tag}.png)")
    return box, shot


def text_rows(shot, box, bottom):
    """The dialog's lines of text above `bottom` (the buttons' top), as a person reads them: bands of rows
    holding pixels much darker or lighter than the dialog's background (its commonest colour), inside the
    box's inner part; [(first row, last row)]. xdg-desktop-portal-kde's dialog: KWin's title bar, the
    heading, "An application requested access to:", one bullet per grant ("• Screens" when the session
    asked for a screen cast, "• Input devices" when it asked for devices), the check box's label."""
    w, h, stride, data = shot
    bx, by, bw, bh = box
    counts = {}
    for y in range(by + 4, by + bh - 4, 3):
        for x in range(bx + 4, bx + bw - 4, 5):
            o = y * stride + 4 * x
            c = (data[o + 2], data[o + 1], data[o])
            counts[c] = counts.get(c, 0) + 1
    bg = max(counts, key=counts.get)
    rows, start, last = [], None, None
    for y in range(by + 6, min(bottom, by + bh) - 2):
        line = data[y * stride + 4 * (bx + 8):y * stride + 4 * (bx + bw - 8)]
        ink = sum(1 for i in range(0, len(line), 4)
                  if max(abs(line[i + 2] - bg[0]), abs(line[i + 1] - bg[1]), abs(line[i] - bg[2])) > 60)
        if ink >= 2:
            if start is None:
                start = y
            last = y
        elif start is not None and y - last > 2:
            rows.append((start, last))
            start = None
    if start is not None:
        rows.append((start, last))
    return [r for r in rows if r[1] - r[0] >= 3]


def answer_dialog(d, tag, button, gone, daemon, screen=None):
    """Clicks the dialog's `button` ("share" or "cancel") until `gone()` (up to three times). The dialog
    of a session that asked for a screen cast too (touchbridge's live view, the client's --screen) is the
    same dialog with one more bullet, " - Screens", above " - Input devices": one more line of text, no
    choice to make (xdg-desktop-portal-kde 6.3 streams every output when there is one, its workspace
    otherwise), Share and Cancel where they were relative to the box's bottom (the box 280x244 instead of
    280x220). `screen`: True or False, the test's expectation of that line, checked by the count of lines
    of text above the buttons (6 with it: KWin's title bar, the heading, "An application requested access
    to:", "• Screens", "• Input devices", the check box; 5 without); None: noted only."""
    size = d.size()
    for attempt in range(3):
        box, shot = wait_dialog(d, f"{tag}-{attempt + 1}" if attempt else tag, daemon)
        found, bg, groups = buttons_in(shot, box)
        if attempt == 0:
            rows = text_rows(shot, box, found[1] - 16 if found else box[1] + box[3])
            note(f"dialog {box[2]}x{box[3]}: {len(rows)} lines of text at rows {rows}")
            if screen is not None:
                check(len(rows) == (6 if screen else 5), f"the dialog has {len(rows)} lines of text: want "
                      f"{'6 (with the Screens bullet)' if screen else '5 (devices only)'} (out/kde-dialog-{tag}.png)")
        note(f"dialog background {bg}; button candidates {[(g['a'], g['b'], min(g['ys']), max(g['ys'])) for g in groups][:8]}")
        check(found, f"no two buttons found in the dialog's bottom band (out/kde-dialog-{tag}.png)")
        sx, sy, cx, cy = found
        at = (sx, sy) if button == "share" else (cx, cy)
        pt.HAND.click(*at, size)
        try:
            dt.until(120, f"the dialog answered ({button})", gone, 0.5)
            note(f"clicked {button} at {at} (Share {sx},{sy}, Cancel {cx},{cy}): answered (attempt {attempt + 1})")
            return box
        except TestFailure:
            d.screenshot_file(f"kde-dialog-{tag}-after-click-{attempt + 1}")
            note(f"the dialog stayed after a click on {button} at {at} (attempt {attempt + 1})")
    raise TestFailure(f"the dialog was not answered in three attempts (out/kde-dialog-{tag}-*.png)")


# ---------------------------------------------------------------------------------------------
# touchbridge on the portal, in the KDE session

class KdeDaemon(rig.Daemon):
    """touchbridge serve as tbuser with --backend auto in the KWin session (WAYLAND_DISPLAY,
    XDG_SESSION_TYPE=wayland, XDG_CURRENT_DESKTOP=KDE, the session bus; no DISPLAY), HOME and XDG dirs of
    its own. With `dialog`, the dialog's Share is clicked; without, the portal must start with nobody at
    the VM (Start waits for a dialog's answer: the daemon would never listen)."""

    def __init__(self, d, name, mode, home, dialog, http_port=0, extra=(), screen=None):
        """`extra`: more options (--no-view); `screen`: the dialog must (True) or must not (False) have the
        Screens bullet (None: either)."""
        env = user_env(**{k: home[k] for k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")})
        argv = [*dt.AS_USER, os.path.join(rig.BIN, "touchbridge"), "serve", "--udp-port", "0", "--tuio-port", "0",
                "--http-port", str(http_port), "--bind", "127.0.0.1", "--mode", mode, "--idle-release-ms", "5000",
                "--log-level", "debug", "--backend", "auto", *extra]
        rig.Proc.__init__(self, name, argv, env=env, merge_stderr=True)
        try:
            r = self.wait_for(regex(r"backend:"), 600, "the `backend:` line")
            note(f"daemon: {r.string}")
            check("portal" in r.string, f"--backend auto did not take the portal: {r.string}")
            if dialog:
                answer_dialog(d, name, "share", lambda: any("allowed remote control" in l for l in self.lines)
                              or self.p.poll() is not None, self, screen=screen)
            r = self.wait_for(regex(r"^listening poseai-udp (\S+):(\d+)"), 600 if dialog else 300, "`listening poseai-udp` line")
        except TestFailure:
            d.screenshot_file(f"{name}-no-start")
            self.stop()
            self.dump()
            raise
        self.port = int(r.group(2))
        self.http_port = http_port
        if http_port:
            self.wait_for(regex(r"^listening http "), 120, "`listening http` line")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        said = [l for l in self.lines if l.startswith(("portal:", "info portal:")) or " portal: " in l]
        note(f"{name}: {' | '.join(said[:6])}")

    def dump(self):
        with open(os.path.join(rig.OUT, f"{self.name}.log"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


class Watch(dt.Watch):
    def __init__(self, d):
        rig.Proc.__init__(self, "wlwatch-kde", dt.AS_USER + [os.path.join(rig.BIN, "wlwatch")], env=user_env())
        r = self.wait_for(regex(r"^ready (\d+) (\d+)"), 120, "`ready`")
        self.size = int(r.group(1)), int(r.group(2))


TB_HOME = {}
TB_HOME_FILE = "/tmp/tb-kde-home.json"  # the first daemon's dirs, for the next (also in attach runs)


def fresh_home():
    home = {k: v for k, v in rig.private_env(owner=dt.UID).items() if k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    rig.write_secret(home, rig.SECRET, owner=dt.UID)
    return home


def t_first(d):
    """--backend auto takes the portal; the dialog's Share clicked; then (wlwatch started once the dialog
    has gone: a fullscreen window would hide it) touchpad mode's drag is pointer motion, a tap button
    272, a two-finger drag an axis event; the restore token kept (0600)."""
    check(pt.touchbridge_has_portal(), "the share's touchbridge has no portal backend (serve --help names none)")
    TB_HOME.clear()
    TB_HOME.update(fresh_home())
    with open(TB_HOME_FILE, "w") as f:
        json.dump(TB_HOME, f)
    daemon = KdeDaemon(d, "touchbridge-kde-1", "touchpad", TB_HOME, dialog=True)
    watch = None
    try:
        watch = Watch(d)
        watch.wait_for(regex(r"^pointer enter|^keyboard enter"), 120, "the pointer or keyboard on the client")
        pt.check_motion_tap_token(watch, daemon, TB_HOME)
        pt.check_two_finger_scroll(watch, daemon)
    finally:
        daemon.stop()
        daemon.dump()
        if watch:
            watch.stop()


def t_restored(d):
    """With the kept token: no dialog; presenter `slide next` is key 109 Next, the page's `key ctrl+z` z
    with Control; then touchscreen mode: a finger is wl_touch down and up, if KWin offers touch."""
    if not TB_HOME and os.path.exists(TB_HOME_FILE):
        TB_HOME.update(json.load(open(TB_HOME_FILE)))
    check(TB_HOME, "no first daemon")
    watch = Watch(d)
    daemon = None
    ws = None
    try:
        daemon = KdeDaemon(d, "touchbridge-kde-2", "presenter", TB_HOME, dialog=False, http_port=rig.free_port())
        check(any("kept permission" in l for l in daemon.lines), "the daemon did not say the kept permission was sent")
        watch.wait_for(regex(r"^keyboard enter"), 120, "keyboard focus on the client")
        ws = rig.WebSocket(daemon.http_port)
        pt.check_presenter_keys(watch, ws)
    finally:
        if ws:
            ws.close()
        if daemon:
            daemon.stop()
            daemon.dump()
    daemon = KdeDaemon(d, "touchbridge-kde-3", "touchscreen", TB_HOME, dialog=False)
    try:
        caps = [l for l in daemon.lines if "compositor's devices" in l]
        note(f"touchscreen mode: {caps[:1]}")
        pt.check_touch_down_up(watch, daemon)
    finally:
        daemon.stop()
        daemon.dump()
        watch.stop()


def t_refused(d):
    """The dialog's Cancel clicked (fresh state, no token): touchbridge exits by itself, status 77, with a
    log line saying the user said no."""
    check(pt.touchbridge_has_portal(), "the share's touchbridge has no portal backend (serve --help names none)")
    home = fresh_home()
    argv = [*dt.AS_USER, os.path.join(rig.BIN, "touchbridge"), "serve", "--udp-port", "0", "--tuio-port", "0",
            "--http-port", "0", "--bind", "127.0.0.1", "--mode", "touchpad", "--log-level", "debug", "--backend", "auto"]
    daemon = rig.Proc("touchbridge-kde-refused", argv, env=user_env(**home), merge_stderr=True)
    try:
        answer_dialog(d, "refused", "cancel", lambda: daemon.p.poll() is not None, daemon)
        daemon.t.join(10)
        status = daemon.p.returncode
        said = [l for l in daemon.lines if "portal" in l.lower() and re.search(r"refus|cancel|said no|declin", l, re.I)]
        note(f"after Cancel: exit status {status}; {said[:2]}")
        check(status == 77, f"touchbridge exited {status} after Cancel (want 77)")
        check(said, "no log line saying the portal refused: " + " | ".join(daemon.lines[-8:]))
    finally:
        daemon.stop()
        with open(os.path.join(rig.OUT, "touchbridge-kde-refused.log"), "w") as f:
            f.write("\n".join(daemon.lines) + "\n")


def shot_colour_at(shot, fx, fy, span=5):
    """The mean colour (r, g, b) of the span x span pixels of KWin's raw screenshot around the fraction
    (fx, fy) (portaltest.patch_span: the picture's 5x5 patch at the screen's scale)."""
    w, h, stride, data = shot
    half = span // 2
    cx, cy = min(max(int(fx * (w - 1)), half), w - span + half), min(max(int(fy * (h - 1)), half), h - span + half)
    total = [0, 0, 0]
    for y in range(cy - half, cy - half + span):
        for x in range(cx - half, cx - half + span):
            o = y * stride + 4 * x
            total[0] += data[o + 2]
            total[1] += data[o + 1]
            total[2] += data[o]
    return tuple(round(t / (span * span)) for t in total)


def t_view(d):
    """NEEDS touchbridge's portal screen cast (the live view through the portal), view on by default.
    touchbridge in touchscreen mode in the KWin session (the first KDE daemon's kept token, which with the
    view on covers the screen: no dialog; run alone, a fresh one and the dialog with the Screens bullet),
    a page over WebSocket: the first `view 640 640` gets a frame of the output's shape (640x400); its
    colours at several points match KWin's screenshot taken then (KWin alone: the black desktop; the
    pointer parked in the bottom-right corner first); the screen still, an ask is answered by nothing;
    wlwatch's fullscreen window (0x203040) appears and the waiting ask gets a frame showing it, matching
    KWin's screenshot again; the page's touch at a point of the picture lands there at wlwatch. Then a
    daemon with --no-view (a session without the screen: KDE's portal asks again, the devices-only dialog
    answered): its page gets `view none disabled: …`."""
    check(pt.touchbridge_has_portal(), "the share's touchbridge has no portal backend (serve --help names none)")
    if not TB_HOME and os.path.exists(TB_HOME_FILE):
        TB_HOME.update(json.load(open(TB_HOME_FILE)))
    size = d.size()
    pt.HAND.do(move=[size[0] - 1, size[1] - 1, size[0], size[1]])
    if TB_HOME:
        daemon = KdeDaemon(d, "touchbridge-kde-view", "touchscreen", TB_HOME, dialog=False, http_port=rig.free_port())
    else:
        daemon = KdeDaemon(d, "touchbridge-kde-view", "touchscreen", fresh_home(), dialog=True, http_port=rig.free_port(), screen=True)
    ws = watch = None
    try:
        ws = rig.WebSocket(daemon.http_port, keepalive=True)
        ask = "view 640 640"
        picture, jpeg = pt.first_view_frame(ws, ask, size, "KDE", daemon)
        shot = d.shot("kde-view-first")
        span = pt.patch_span(size, picture)
        pt.compare_with_screen(jpeg, lambda fx, fy: shot_colour_at(shot, fx, fy, span), size, "the first frame")
        m, _ = rig.view_settles(ws, ask, "the screen")
        watch = Watch(d)
        jpeg = pt.frame_showing(ws, m, ask, pt.WLWATCH_RGB, "wlwatch's window")
        shot = d.shot("kde-view-wlwatch")
        pt.compare_with_screen(jpeg, lambda fx, fy: shot_colour_at(shot, fx, fy, span), size, "the frame with wlwatch")
        pt.check_page_tap(ws, watch, 0.625, 0.375)
    finally:
        if ws:
            ws.close()
        daemon.stop()
        daemon.dump()
        if watch:
            watch.stop()
    daemon = KdeDaemon(d, "touchbridge-kde-no-view", "touchscreen", fresh_home(), dialog=True, http_port=rig.free_port(),
                       extra=["--no-view"], screen=False)
    try:
        pt.check_no_view_page(daemon, "--no-view")
    finally:
        daemon.stop()
        daemon.dump()


SCREEN_TOKEN = "/home/tbuser/.portal-client-kde-screen-token"


def t_client_screen(d):
    """The stage's client (portal-client.py --screen, as touchbridge's live view asks) in the KDE session:
    the dialog has the Screens bullet and Share is clicked; Start gives the devices, one stream (the
    output: position 0,0, its size, a node PipeWire has) and a token; OpenPipeWireRemote a live
    connection to PipeWire. Then a second client with the token: Start answers while nobody touches the
    VM (a dialog would wait for an answer), with the stream again, and no dialog is on the screen."""
    pt.pipewire_state(SESSION_ENV)
    if os.path.exists(SCREEN_TOKEN):
        os.unlink(SCREEN_TOKEN)
    c = pt.Client("portal-client-kde-screen-1", SCREEN_TOKEN, screen=True, session_env=SESSION_ENV)
    try:
        r = c.wait_for(regex(r"^portal ScreenCast version (\d+) available-source-types (\d+) available-cursor-modes (\d+)"), 120,
                       "the ScreenCast interface's properties")
        note(r.string)
        r = c.wait_for(regex(r"^select-sources response (\d+)"), 120, "SelectSources")
        check(r.group(1) == "0", f"SelectSources answered {r.group(1)}")
        c.wait_for(regex(r"^start called"), 120, "Start called")
        answer_dialog(d, "client-screen", "share", lambda: any(l.startswith("start response") for l in c.lines)
                      or c.p.poll() is not None, c, screen=True)
        r = c.wait_for(regex(r"^start response (\d+) devices (\d+) restore-token (\S+)"), 300, "Start's response")
        note(r.string)
        check(r.group(1) == "0" and r.group(2) == "7" and r.group(3) == "new", f"want 0, devices 7, a token: {r.string}")
        node = pt.check_screen_cast(c, d.size(), SESSION_ENV)
    finally:
        c.p.stdin.close()
        c.stop()
    state = pt.pipewire_state(SESSION_ENV)
    check(state.get("pipewire.service") == "active", f"PipeWire is not running in {dt.USER}'s session: {state}")
    c = pt.Client("portal-client-kde-screen-2", SCREEN_TOKEN, screen=True, session_env=SESSION_ENV)
    try:
        c.wait_for(regex(r"^select-devices response 0 .* restore-token-given yes"), 120, "SelectDevices with the token")
        r = c.wait_for(regex(r"^start response (\d+) devices (\d+) restore-token (\S+) same-token (\S+)"), 180,
                       "Start's response with no one answering")
        note(r.string)
        check(r.group(1) == "0" and r.group(2) == "7", f"Start with the token: {r.string}")
        box = dialog_box(d.shot("kde-client-screen-restored"))
        check(box is None, f"a dialog is on the screen after the restored Start: {box} (out/kde-client-screen-restored.png)")
        node2 = pt.check_screen_cast(c, d.size(), SESSION_ENV)
        note(f"restored: the screen included again (node {node2}; the first run's was {node})")
    finally:
        c.p.stdin.close()
        c.stop()


TESTS = [("kde_portal_client_screen_cast_stream_and_restore", t_client_screen),
         ("kde_touchbridge_auto_takes_the_portal_dialog_answered", t_first),
         ("kde_touchbridge_restore_token_keys_and_touch", t_restored),
         ("kde_touchbridge_dialog_cancelled_exits_with_a_status", t_refused),
         ("kde_touchbridge_view", t_view)]


def wanted_here(wanted):
    return not wanted or any(n.startswith("kde_") for n in wanted)


def main(wanted, gnome=None):
    """Stops GNOME Shell (if it ran), starts KWin and the KDE portal, runs the KDE tests; returns the
    number of failures."""
    failures = 0
    note(f"KDE packages: {versions()}")
    if gnome is not None:
        try:
            gnome.stop()
        except Exception as e:  # noqa: BLE001
            note(f"stopping GNOME Shell: {e}")
    d = KWin6()
    if not run_test("kde_session", d.start):
        d.screenshot_file("fail-kde_session")
        pt.hold_point("kde-end")
        return 1 + sum(1 for n, _ in TESTS if not wanted or n in wanted)
    def after_failure(name):
        portal_journal(f"fail-{name}")
        return os.path.exists("/share/hold")  # debugging: straight to the hold point

    failures += pt.run_tests(d, wanted, TESTS, after_failure)
    pt.hold_point("kde-end")
    try:
        d.stop()
    except Exception as e:  # noqa: BLE001
        note(f"stopping KWin: {e}")
    return failures


def attach(wanted):
    """Debugging (PORTAL_HOLD=1, from /share/rpc: `python3 -u /share/portaltest_kde.py [test ...]`): the
    named tests against the KWin already running, with the share's binaries copied in afresh."""
    pt.copy_binaries()
    d = KWin6()
    d.pid = dt.pids_named(d.comm)[0]
    return pt.run_tests(d, wanted, TESTS)


if __name__ == "__main__":
    sys.exit(attach(sys.argv[1:]))
