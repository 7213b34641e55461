#!/usr/bin/env python3
"""The portal stage's guest tests (Tests/VM/test-portal.sh boots the Debian 13 image; portal-init.sh
makes it a booted system with systemd, logind and tbuser logged in on tty1). Runs as root from
tb-portal-test.service:

- GNOME Shell 48 is started inside tbuser's seat session (desktopstest.py's way: desktop-session.sh runs
  it, as a display manager would) on DRM (virtio-gpu, llvmpipe), then tb-portal-session.target (the
  user's graphical-session.target, which xdg-desktop-portal-gnome requires) with the session's
  environment imported into the user's systemd;
- tbuser has no write access to /dev/uinput (checked first: that is the point of the portal path);
- the portal's "Remote desktop" dialog is answered as a person would: the test finds the dialog window
  (the Shell's Eval), takes a screenshot (out/portal-dialog-*.png), and asks the host (qmp-input.py,
  over the share) to click the "Allow remote interaction" row and then "Share" with the VM's tablet;
- `portal_client_*`: the stage's own client (portal-client.py) gets an EIS descriptor and a restore
  token; a second run with the token starts with no dialog (Start answers while nobody touches the VM);
- `touchbridge_*` (when the share's touchbridge has --backend portal): touchbridge --backend auto as
  tbuser takes the portal, and wlwatch sees its pointer motion, button, scroll, key and touch.

Each test prints `PASS <name> <seconds>` or `FAIL <name> <reason>`; the exit status is the number of
failures. Every wait has a timeout; nothing proves absence by sleeping. /share/tests names the tests to
run (empty: all). /share/hold (debugging): after the tests, run /share/rpc/<n>.sh as root until
/share/rpc/stop appears.
"""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid

sys.path.insert(0, "/share")
import rig  # noqa: E402  the rig's shared guest Python
import desktopstest as dt  # noqa: E402
from rig import TestFailure, check, note, regex, run_test  # noqa: E402

START = time.monotonic()
INPUT_BOX = os.path.join(rig.OUT, "input")
DIALOG_TITLE = "Remote Desktop"  # xdg-desktop-portal-gnome 48's window title
SESSION_ENV = {"XDG_CURRENT_DESKTOP": "GNOME", "XDG_SESSION_TYPE": "wayland", "XDG_SESSION_DESKTOP": "gnome"}


def user_env(session_env=None, **extra):
    """The desktop user's environment in this session (GNOME's, or `session_env`'s: KDE's test passes its own)."""
    return dt.user_env(**(SESSION_ENV if session_env is None else session_env), **extra)


def run_user(*argv, timeout=60, ok=True, session_env=None):
    r = subprocess.run(dt.AS_USER + list(argv), env=user_env(session_env), capture_output=True, text=True, timeout=timeout)
    if ok:
        check(r.returncode == 0, f"`{' '.join(argv)}` exited {r.returncode}: {r.stdout} {r.stderr}")
    return r


# ---------------------------------------------------------------------------------------------
# The hand at the VM's keyboard and pointer: requests to the host's qmp-input.py over the share.

class Hand:
    def do(self, **req):
        os.makedirs(INPUT_BOX, exist_ok=True)
        n = len(glob.glob(os.path.join(INPUT_BOX, "req-*.json"))) + 1  # requests are numbered 1, 2, ...
        tmp = os.path.join(INPUT_BOX, f".req-{n}.json")
        with open(tmp, "w") as f:
            json.dump(req, f)
        os.rename(tmp, os.path.join(INPUT_BOX, f"req-{n}.json"))
        done = os.path.join(INPUT_BOX, f"done-{n}")
        dt.until(60, f"the host's input request {n} {req}", lambda: os.path.exists(done), 0.1)
        answer = open(done).read().strip()
        check(answer == "ok", f"the host's input request {n} {req}: {answer}")

    def click(self, x, y, size):
        self.do(click=[x, y, size[0], size[1]])

    def keys(self, *names):
        self.do(keys=list(names))


HAND = Hand()


# ---------------------------------------------------------------------------------------------
# GNOME Shell 48

class Gnome48(dt.Gnome):
    """GNOME Shell 48 in the seat session (desktopstest.py's Gnome: --display-server --unsafe-mode), with
    the session's environment in the user's systemd and graphical-session.target up (as gnome-session
    leaves them), so that the portal and its GNOME backend start on demand."""

    def settings(self):
        for schema, key, value in [
                ("org.gnome.desktop.interface", "enable-animations", "false"),
                ("org.gnome.desktop.session", "idle-delay", "uint32 0"),
                ("org.gnome.desktop.screensaver", "lock-enabled", "false")]:
            run_user("gsettings", "set", schema, key, value)
        run_user("gsettings", "set", "org.gnome.shell", "welcome-dialog-last-shown-version", "'99'", ok=False)
        note("gsettings: animations off, idle-delay 0, no lock")

    def start(self, log_name="gnome-shell"):
        """`log_name`: out/<log_name>.log takes the Shell's output (a restarted Shell's its own)."""
        self.settings()
        # The session's environment for D-Bus-activated services (the portal, which picks its GNOME
        # backend by XDG_CURRENT_DESKTOP), before anything in the session activates one, as
        # gnome-session sets it.
        run_user("systemctl", "--user", "set-environment", f"WAYLAND_DISPLAY={dt.WAYLAND}",
                 *(f"{k}={v}" for k, v in SESSION_ENV.items()))
        t0 = time.monotonic()
        env = " ".join(f"{k}={v}" for k, v in SESSION_ENV.items())
        self.pid = dt.start_compositor(log_name, f"export {env}; exec gnome-shell --wayland --display-server --unsafe-mode",
                                       self.comm, 900, attempts=2)
        dt.until(900, "the Shell's Eval answering (startup over)",
                 lambda: self.eval("Main.layoutManager._startingUp") == "false", 0.5)
        ready = time.monotonic() - t0
        dt.until(60, "the overview hidden", lambda: self.eval("Main.overview.hide(); Main.overview.visible") == "false", 0.5)
        version = run_user("gnome-shell", "--version").stdout.strip()
        note(f"{version} ready in {ready:.1f} s (pid {self.pid}); overview hidden")
        # The session target (graphical-session.target, which xdg-desktop-portal-gnome.service requires),
        # then the portal's backend and the portal, one after the other: started on demand by the first
        # call under TCG, the portal's own wait for its backend (D-Bus's 25 s) runs out.
        t1 = time.monotonic()
        run_user("systemctl", "--user", "start", "tb-portal-session.target")
        run_user("systemctl", "--user", "start", "xdg-desktop-portal-gnome.service", timeout=900)
        run_user("systemctl", "--user", "start", "xdg-desktop-portal.service", timeout=900)
        note(f"systemd --user: graphical-session.target, xdg-desktop-portal-gnome and xdg-desktop-portal up in "
             f"{time.monotonic() - t1:.1f} s")
        pipewire_state()
        return version

    def windows(self):
        """The Shell's windows as (title, x, y, width, height, focused)."""
        # Eval answers with JSON.stringify of the value.
        code = ("global.get_window_actors().map(a => a.meta_window).map(w => "
                "{ const r = w.get_frame_rect(); return [w.get_title(), r.x, r.y, r.width, r.height, w.has_focus()]; })")
        out = self.eval(code)
        try:
            return [tuple(w) for w in json.loads(out)] if out else []
        except ValueError:
            note(f"the Shell's window list: {out!r}")
            return []

    def screen_size(self):
        out = self.eval("[global.stage.width, global.stage.height]")
        w, h = json.loads(out)
        return int(w), int(h)

    def screenshot_file(self, name):
        path = os.path.join(dt.AGENT, f"{name}.png")
        status, out = dt.gdbus("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot",
                               "org.gnome.Shell.Screenshot.Screenshot", "false", "false", path)
        if status == 0 and os.path.exists(path):
            shutil.copy(path, os.path.join(rig.OUT, f"{name}.png"))
            return True
        note(f"screenshot {name}: {out}")
        return False


def versions():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", "gnome-shell", "mutter-common", "xdg-desktop-portal",
                        "xdg-desktop-portal-gnome", "libei1", "libmutter-16-0", "systemd"], capture_output=True, text=True)
    return " | ".join(r.stdout.split("\n")).strip(" |")


def uinput_not_writable():
    """tbuser must not be able to write /dev/uinput (no uaccess rule, no ACL, not in a group that may)."""
    check(os.path.exists("/dev/uinput"), "no /dev/uinput in the guest (the uinput module)")
    r = subprocess.run(dt.AS_USER + ["sh", "-c", "test -w /dev/uinput && echo writable || echo not-writable"],
                       capture_output=True, text=True, timeout=30)
    st = os.stat("/dev/uinput")
    acl = subprocess.run(["getfacl", "-cp", "/dev/uinput"], capture_output=True, text=True).stdout.split()
    note(f"/dev/uinput mode {oct(st.st_mode & 0o777)} uid {st.st_uid} gid {st.st_gid}, ACL {acl}; for {dt.USER}: {r.stdout.strip()}")
    check(r.stdout.strip() == "not-writable", f"{dt.USER} may write /dev/uinput: {r.stdout} {r.stderr}")


# ---------------------------------------------------------------------------------------------
# Answering the dialog

def wait_dialog(desktop, seconds=300):
    """The dialog's window once Mutter has placed it: focused, its frame (0x0 until GTK has drawn it, at
    first at the work area's corner, then centred) the same in two reads in a row."""
    last = [None]

    def placed():
        w = next((w for w in desktop.windows() if w[0] == DIALOG_TITLE and w[3] > 0 and w[5]), None)
        stable = w is not None and w == last[0]
        last[0] = w
        return w if stable else None
    return dt.until(seconds, f"the portal's '{DIALOG_TITLE}' dialog placed and focused", placed, 0.5)


def switch_is_on(desktop, sx, sy):
    """What a person sees: the switch at (sx, sy) is blue when on (Adwaita's accent), grey when off;
    the Shell's screenshot of 40x16 pixels around it."""
    w, h, rgb = desktop.screenshot(sx - 20, sy - 8, 40, 16)
    blue = sum(1 for i in range(0, len(rgb), 3) if rgb[i + 2] > 180 and rgb[i] < 120)
    return blue > 40


def answer_dialog(desktop, tag, screen=None):
    """As a person: a click on the "Allow Remote Interaction" switch turns it on (the Share button is
    insensitive until then), a click on "Share" (the header bar's right end) accepts. Where they are is
    taken from the dialog's frame (xdg-desktop-portal-gnome 48's remotedesktopdialog.ui, 660x500 here:
    the header bar, then, with persist_mode 2, the checked "Remember This Selection", then the switch's
    row): the switch 85 px left of the right edge, 156 px below the top; Share 43 px and 22 px. The
    switch is clicked until it shows on; Share until the dialog is gone (up to three times each).

    When the session asked for a screen cast too (SelectSources: touchbridge's live view, the client's
    --screen), the same dialog shows the screen choice below the switch's row (the screen cast widget:
    each monitor a tile in a framed box); with one monitor its tile is selected already (a 3 px accent
    border), and then Share is sensitive even with the switch off (a screen cast alone), so the switch
    matters all the more: without it Start grants no device. The tile is looked at first and clicked only
    if it does not show selected (a click on a selected tile unselects it). `screen`: True, the dialog must
    show the screen choice; False, it must not; None, either (noted). Returns whether it showed it."""
    size = desktop.screen_size()
    shown = None
    for attempt in range(3):
        title, x, y, width, height, focused = wait_dialog(desktop)
        sw = switch_at(x, y, width, height)
        share = share_at(x, y, width, height)
        tiles = screen_choice(desktop, x, y, width, height)
        if attempt == 0:
            shown = tiles is not None
            note(f"dialog '{title}' at {x},{y} {width}x{height} on {size[0]}x{size[1]}, focused {focused}; "
                 f"screen choice {'shown: ' + str(tiles) if shown else 'not shown'}")
            desktop.screenshot_file(f"portal-dialog-{tag}")
            if screen is not None:
                check(shown == screen, f"the dialog {'lacks' if screen else 'shows'} the screen choice "
                      f"(out/portal-dialog-{tag}.png): {tiles}")
        if tiles is not None and not tiles["selected"]:
            HAND.click(*tiles["centre"], size)
            try:
                dt.until(60, "the monitor's tile showing selected",
                         lambda: (screen_choice(desktop, x, y, width, height) or {}).get("selected"), 0.5)
                note(f"clicked the monitor's tile at {tiles['centre']}: it shows selected")
            except TestFailure:
                desktop.screenshot_file(f"portal-dialog-{tag}-tile-{attempt + 1}")
                note(f"the tile at {tiles['centre']} does not show selected after a click (attempt {attempt + 1})")
                continue
        if not switch_is_on(desktop, *sw):
            HAND.click(*sw, size)
            try:
                dt.until(60, "the switch showing on", lambda: switch_is_on(desktop, *sw), 0.5)
            except TestFailure:
                desktop.screenshot_file(f"portal-dialog-{tag}-switch-{attempt + 1}")
                note(f"the switch at {sw} does not show on after a click (attempt {attempt + 1})")
                continue
        if tiles is not None:
            now = screen_choice(desktop, x, y, width, height)
            check(now and now["selected"], f"the monitor's tile no longer shows selected after the switch: {now}")
        HAND.click(*share, size)
        try:
            dt.until(90, "the dialog gone after Share", lambda: not any(w[0] == DIALOG_TITLE for w in desktop.windows()), 0.5)
            note(f"{'the monitor selected, ' if tiles is not None else ''}clicked the switch at {sw} (it showed on), "
                 f"then Share at {share}: the dialog went (attempt {attempt + 1})")
            return shown
        except TestFailure:
            desktop.screenshot_file(f"portal-dialog-{tag}-share-{attempt + 1}")
            note(f"the dialog stayed after a click on Share at {share} (attempt {attempt + 1})")
    raise TestFailure(f"the dialog was not answered in three attempts (out/portal-dialog-{tag}-*.png)")


def is_accent(r, g, b):
    """Adwaita's accent (#3584e4, the switch when on, the selected tile's border, the Share button)."""
    return b > 180 and r < 120 and 90 < g < 180


def screen_choice(desktop, x, y, w, h):
    """The screen cast widget below the switch's row, as a person sees it, or None when the dialog has
    none (the devices-only dialog: the dialog's background alone there). From the Shell's screenshot of
    the band from 40 px under the switch's row to 8 px above the dialog's bottom: the pixels unlike the
    band's commonest colour (the framed box, the tiles); the tile is the box's darker grey
    (shade(view_bg, 0.8)) with, when selected, a 3 px accent border. Returns {"box": (x, y, w, h) of
    what differs, "centre": the tile's centre, "accent": accent pixels, "selected": bool}."""
    top = switch_at(x, y, w, h)[1] + 40
    bx, bw, bh = x + 16, w - 32, y + h - 8 - top
    if bh < 40:
        return None
    sw, sh, rgb = desktop.screenshot(bx, top, bw, bh)
    counts = {}
    for i in range(0, len(rgb), 3 * 7):
        c = rgb[i:i + 3]
        counts[c] = counts.get(c, 0) + 1
    bg = max(counts, key=counts.get)
    xs, ys, ax, ay, tx, ty = [], [], [], [], [], []
    for py in range(0, sh, 2):
        row = rgb[py * sw * 3:(py + 1) * sw * 3]
        for px in range(0, sw, 2):
            r, g, b = row[px * 3:px * 3 + 3]
            if max(abs(r - bg[0]), abs(g - bg[1]), abs(b - bg[2])) <= 12:
                continue
            xs.append(px)
            ys.append(py)
            if is_accent(r, g, b):
                ax.append(px)
                ay.append(py)
            elif abs(r - g) < 10 and abs(g - b) < 10 and sum(bg) / 3 - 60 < (r + g + b) / 3 < sum(bg) / 3 - 12:
                tx.append(px)  # the tile's darker grey
                ty.append(py)
    if len(xs) < 200:
        return None
    if len(ax) > 60:
        cx, cy = (min(ax) + max(ax)) // 2, (min(ay) + max(ay)) // 2
    elif tx:
        cx, cy = (min(tx) + max(tx)) // 2, (min(ty) + max(ty)) // 2
    else:
        cx, cy = (min(xs) + max(xs)) // 2, (min(ys) + max(ys)) // 2
    return {"box": (bx + min(xs), top + min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1),
            "centre": (bx + cx, top + cy), "accent": len(ax), "selected": len(ax) > 60}


def switch_at(x, y, w, h):
    return x + w - 85, y + 156


def share_at(x, y, w, h):
    return x + w - 43, y + 22


# ---------------------------------------------------------------------------------------------
# Tests

class Client(rig.Proc):
    def __init__(self, name, token_file, screen=False, session_env=None):
        super().__init__(name, dt.AS_USER + ["python3", "-u", "/share/portal-client.py", "--token", token_file]
                         + (["--screen"] if screen else []), env=user_env(session_env), stdin=True)


def pipewire_state(session_env=None):
    """PipeWire and WirePlumber in tbuser's session (systemctl --user): {unit: state}, noted; the screen
    cast's streams are PipeWire nodes, which the compositor makes in the user's PipeWire daemon."""
    units = ["pipewire.socket", "pipewire.service", "wireplumber.service"]
    r = run_user("systemctl", "--user", "is-active", *units, ok=False, session_env=session_env)
    state = dict(zip(units, r.stdout.split()))
    missing = [u for u in units if state.get(u) != "active"]
    note(f"PipeWire in {dt.USER}'s session: {state}" + (f"; NOT running: {' '.join(missing)}" if missing else ""))
    return state


def pipewire_node(node, session_env=None):
    """The PipeWire node `node` as PipeWire's own tool lists it (pw-cli info, as tbuser): its media.class
    and name, or None when the daemon has no such node."""
    if not shutil.which("pw-cli"):
        raise TestFailure("no pw-cli in the image (pipewire-bin) to look the stream's node up")
    r = run_user("pw-cli", "info", str(node), ok=False, session_env=session_env, timeout=120)
    cls = re.search(r'media\.class = "([^"]+)"', r.stdout)
    name = re.search(r'node\.name = "([^"]+)"', r.stdout)
    if r.returncode != 0 or not re.search(rf"\bid: {node}\b", r.stdout):
        note(f"pw-cli info {node}: status {r.returncode} {(r.stdout + r.stderr).strip()[:300]}")
        return None
    return {"class": cls.group(1) if cls else "?", "name": name.group(1) if name else "?"}


def check_screen_cast(c, size, session_env=None):
    """The client's --screen lines after Start: one stream, the monitor (position 0,0 if given, the screen's size),
    a node PipeWire has, and a PipeWire descriptor whose peer is the PipeWire daemon and which answers a
    core sync. Returns the node id."""
    r = c.wait_for(regex(r"^streams (\d+)"), 60, "the streams line")
    check(r.group(1) == "1", f"want one stream (one monitor, multiple false): {r.string}")
    r = c.wait_for(regex(r"^stream (\d+) position (\S+) (\S+) size (\S+) (\S+)"), 60, "the stream")
    note(r.string)
    node, pos, got = int(r.group(1)), (r.group(2), r.group(3)), (r.group(4), r.group(5))
    # Mutter gives the position; KWin 6.3 leaves it out (its one output's stream: size only).
    check(pos in (("0", "0"), ("none", "none")) and got == tuple(str(v) for v in size),
          f"the stream is at {pos} size {got}, want the monitor (at 0,0 if said) of size {size}")
    r = c.wait_for(regex(r"^pipewire fd (\d+) (\S+) peer (\S+) sync-done (\S+)"), 120, "the PipeWire descriptor")
    note(r.string)
    # The peer named by SO_PEERCRED is whoever made the listening socket: systemd --user when PipeWire is
    # socket-activated (pipewire.socket), so only the answered sync proves PipeWire is at the other end.
    check(r.group(2) == "unix-stream" and r.group(4) == "yes", f"not a live PipeWire connection: {r.string}")
    info = pipewire_node(node, session_env)
    note(f"PipeWire node {node}: {info}")
    check(info is not None, f"PipeWire has no node {node} (the stream Start named)")
    check(info["class"].startswith("Video/Source") or info["class"] == "Stream/Output/Video",
          f"node {node} is no video source: {info}")
    return node


TOKEN = "/home/tbuser/.portal-client-token"


def t_client_first(d):
    """The stage's own client: the dialog appears, is answered by clicks, Start succeeds with the
    devices offered and a restore token; ConnectToEIS gives a Unix stream socket on which EIS speaks."""
    if os.path.exists(TOKEN):
        os.unlink(TOKEN)
    c = Client("portal-client-1", TOKEN)
    try:
        r = c.wait_for(regex(r"^portal RemoteDesktop version (\d+) available-device-types (\d+)"), 120, "the portal's version")
        note(c.lines[0])
        check(int(r.group(1)) >= 2, f"RemoteDesktop version {r.group(1)} < 2 (no persist_mode)")
        c.wait_for(regex(r"^start called"), 120, "Start called")
        answer_dialog(d, "first")
        r = c.wait_for(regex(r"^start response (\d+) devices (\d+) restore-token (\S+)"), 300, "Start's response")
        note(r.string)
        check(r.group(1) == "0", f"Start answered {r.group(1)}")
        check(r.group(3) == "new", "no restore token from Start (persist_mode 2)")
        r = c.wait_for(regex(r"^eis fd (\d+) (\S+) first-bytes (\d+)"), 120, "the EIS descriptor")
        note(r.string)
        check(r.group(2) == "unix-stream" and int(r.group(3)) > 0, f"not a live EIS socket: {r.string}")
        check(os.path.exists(TOKEN) and (os.stat(TOKEN).st_mode & 0o777) == 0o600, "the token file (0600)")
    finally:
        c.p.stdin.close()
        c.stop()


def t_client_restore(d):
    """A second run with the token: Start answers with success and the same devices while nobody touches
    the VM (a dialog would wait for an answer), and ConnectToEIS works again."""
    check(os.path.exists(TOKEN), "no token from the first run")
    c = Client("portal-client-2", TOKEN)
    try:
        c.wait_for(regex(r"^select-devices response 0 .* restore-token-given yes"), 120, "SelectDevices with the token")
        r = c.wait_for(regex(r"^start response (\d+) devices (\d+) restore-token (\S+) same-token (\S+)"), 180,
                       "Start's response with no one answering")
        note(r.string)
        check(r.group(1) == "0", f"Start answered {r.group(1)} with the token")
        dialogs = [w for w in d.windows() if w[0] == DIALOG_TITLE]
        check(not dialogs, f"a dialog is on the screen: {dialogs}")
        r = c.wait_for(regex(r"^eis fd (\d+) (\S+) first-bytes (\d+)"), 120, "the EIS descriptor")
        note(r.string)
        check(r.group(2) == "unix-stream" and int(r.group(3)) > 0, f"not a live EIS socket: {r.string}")
    finally:
        c.p.stdin.close()
        c.stop()


def t_client_libei(d):
    """The EIS connection the portal gave carries input to a client: the stage's client, restored by its
    token, as a libei sender (libei.so.1 through ctypes) sends relative motion, a left click, smooth
    scroll, KEY_A and (if Mutter offers a touch device) a touch; wlwatch (fullscreen) sees each."""
    check(os.path.exists(TOKEN), "no token from the first run")
    watch = dt.Watch(d)
    c = Client("portal-client-3", TOKEN)
    try:
        r = c.wait_for(regex(r"^start response (\d+)"), 180, "Start's response")
        check(r.group(1) == "0", f"Start answered {r.group(1)} with the token")
        c.wait_for(regex(r"^holding"), 120, "the EIS descriptor")
        watch.wait_for(regex(r"^keyboard enter"), 60, "keyboard focus on the client")
        m = watch.mark
        c.send("send")
        c.wait_for(regex(r"^sent all"), 120, "the libei sender's input")
        note("; ".join(l for l in c.lines if l.startswith(("libei:", "sent "))))
        seen = {}
        for what, pattern in (("motion", r"^motion "), ("button", r"^button 272 released"), ("scroll", r"^axis vertical "),
                              ("key", r"^key 30 released")):
            seen[what] = watch.wait_for(regex(pattern), 60, what, m).string
        if any(l.startswith("sent touch") for l in c.lines):
            seen["touch"] = watch.wait_for(regex(r"^touch up "), 60, "touch", m).string
        note(f"wlwatch saw: {seen}")
    finally:
        c.p.stdin.close()
        c.stop()
        watch.stop()


SCREEN_TOKEN = "/home/tbuser/.portal-client-screen-token"


def t_client_screen(d):
    """The stage's client asking for a screen cast too (--screen, as touchbridge's live view does): the
    dialog shows the screen choice and is answered (the monitor selected, the switch on, Share); Start
    gives the devices, one stream (the monitor: position 0,0, the screen's size, a node PipeWire has) and
    a token; OpenPipeWireRemote a live connection to PipeWire. Then a second client with that token:
    Start answers while nobody touches the VM, with the stream again."""
    pipewire_state()
    if os.path.exists(SCREEN_TOKEN):
        os.unlink(SCREEN_TOKEN)
    size = d.screen_size()
    c = Client("portal-client-screen-1", SCREEN_TOKEN, screen=True)
    try:
        r = c.wait_for(regex(r"^portal ScreenCast version (\d+) available-source-types (\d+) available-cursor-modes (\d+)"), 120,
                       "the ScreenCast interface's properties")
        note(r.string)
        r = c.wait_for(regex(r"^select-sources response (\d+)"), 120, "SelectSources")
        note(r.string)
        check(r.group(1) == "0", f"SelectSources answered {r.group(1)}")
        c.wait_for(regex(r"^start called"), 120, "Start called")
        answer_dialog(d, "screen-first", screen=True)
        r = c.wait_for(regex(r"^start response (\d+) devices (\d+) restore-token (\S+)"), 300, "Start's response")
        note(r.string)
        check(r.group(1) == "0" and r.group(2) == "7" and r.group(3) == "new", f"want 0, devices 7, a token: {r.string}")
        node = check_screen_cast(c, size)
        check(os.path.exists(SCREEN_TOKEN), "no token file")
    finally:
        c.p.stdin.close()
        c.stop()
    state = pipewire_state()
    check(state.get("pipewire.service") == "active", f"PipeWire is not running in {dt.USER}'s session: {state}")
    c = Client("portal-client-screen-2", SCREEN_TOKEN, screen=True)
    try:
        c.wait_for(regex(r"^select-devices response 0 .* restore-token-given yes"), 120, "SelectDevices with the token")
        r = c.wait_for(regex(r"^start response (\d+) devices (\d+) restore-token (\S+) same-token (\S+)"), 180,
                       "Start's response with no one answering")
        note(r.string)
        check(r.group(1) == "0" and r.group(2) == "7", f"Start with the token: {r.string}")
        dialogs = [w for w in d.windows() if w[0] == DIALOG_TITLE]
        check(not dialogs, f"a dialog is on the screen: {dialogs}")
        node2 = check_screen_cast(c, size)
        note(f"restored: the screen included again (node {node2}; the first run's was {node})")
    finally:
        c.p.stdin.close()
        c.stop()


# ---------------------------------------------------------------------------------------------
# touchbridge on the portal

GRANTED = re.compile(r"portal: (the kept permission was sent|the user allowed remote control)")


class PortalDaemon(rig.Daemon):
    """touchbridge serve as tbuser with --backend auto in the GNOME session (WAYLAND_DISPLAY,
    XDG_SESSION_TYPE=wayland, the session bus; no DISPLAY), its own HOME and XDG dirs (the restore
    token in XDG_STATE_HOME/touchbridge/portal-restore-token). With `dialog`, the portal's dialog is
    answered as the stage's client's was; the daemon may ask the portal before or after it listens."""

    def __init__(self, d, name, mode, home, dialog, http_port=0, idle_release_ms=5000, extra=(), screen=None):
        """`dialog`: True, the dialog is answered; False, a dialog fails the test; "maybe": a dialog,
        if one comes, is answered (`self.asked` says whether one came). `extra`: more options (--no-view);
        `screen`: the dialog must (True) or must not (False) show the screen choice (None: either)."""
        env = user_env(**{k: home[k] for k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")})
        argv = [*dt.AS_USER, os.path.join(rig.BIN, "touchbridge"), "serve", "--udp-port", "0", "--tuio-port", "0",
                "--http-port", str(http_port), "--bind", "127.0.0.1", "--mode", mode, "--idle-release-ms", str(idle_release_ms),
                "--log-level", "debug", "--backend", "auto", *extra]
        rig.Proc.__init__(self, name, argv, env=env, merge_stderr=True)
        self.asked = bool(dialog)
        if dialog is True:
            answer_dialog(d, name, screen)
        elif dialog == "maybe":
            def started_or_asked():
                if any(w[0] == DIALOG_TITLE for w in d.windows()):
                    return "dialog"
                # The `backend:` line comes before the dialog; the portal's answer after it.
                return any(GRANTED.search(l) for l in self.lines) or self.p.poll() is not None
            self.asked = dt.until(600, f"{name}: the portal's answer or its dialog", started_or_asked, 1.0) == "dialog"
            if self.asked:
                answer_dialog(d, name, screen)
        else:
            # With the kept token: the portal session starts with nobody at the VM; a dialog instead fails
            # the test at once (the daemon's `backend:` line or its exit ends the wait otherwise).
            def started_or_asked():
                if any(w[0] == DIALOG_TITLE for w in d.windows()):
                    d.screenshot_file(f"{name}-unexpected-dialog")
                    raise TestFailure(f"{name}: the portal's dialog appeared despite the kept token")
                return any("backend:" in l for l in self.lines) or self.p.poll() is not None
            dt.until(600, f"{name}: the `backend:` line", started_or_asked, 1.0)
        r = self.wait_for(regex(r"^listening poseai-udp (\S+):(\d+)"), 600, "`listening poseai-udp` line")
        self.port = int(r.group(2))
        self.http_port = http_port
        if http_port:
            self.wait_for(regex(r"^listening http "), 120, "`listening http` line")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        r = self.wait_for(regex(r"backend:"), 600, "the `backend:` line")
        note(f"daemon: {r.string}")
        check("portal" in r.string, f"--backend auto did not take the portal: {r.string}")

    def dump(self):
        with open(os.path.join(rig.OUT, f"{self.name}.log"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def touchbridge_has_portal():
    r = subprocess.run([os.path.join(rig.BIN, "touchbridge"), "serve", "--help"], capture_output=True, text=True,
                       env=dict(rig.ENV), timeout=60)
    return re.search(r"\bportal\b", r.stdout + r.stderr) is not None


def check_motion_tap_token(watch, daemon, home):
    """Touchpad mode: a one-finger drag is pointer motion at the client, a tap button 272 pressed and
    released; the restore token is kept under `home`'s state directory, mode 0600."""
    m = watch.mark
    dt.until_seen(watch, daemon, [{0: (0.0, 0.03 * i)} for i in range(8)], r"^motion ", "pointer motion", m)
    note(f"motion: {[l for l in watch.since(m) if l.startswith('motion ')][:3]}")
    m = watch.mark
    # Tapped again if the first was too slow to be a tap: under load the VM's packets can spread the
    # finger's stay past the tap's 300 ms (the daemon's log then says `touch → timeout → hold`).
    dt.until_seen(watch, daemon, [{0: (0.1, 0.1)}] * 3, r"^button 272 pressed", "the tap's press", m)
    watch.wait_for(regex(r"^button 272 released"), 60, "the tap's release", m)
    note("tap: button 272 pressed and released")
    token = os.path.join(home["XDG_STATE_HOME"], "touchbridge", "portal-restore-token")
    check(os.path.exists(token), f"no restore token at {token}")
    mode = os.stat(token).st_mode & 0o777
    check(mode == 0o600, f"the restore token's mode is {oct(mode)}")
    note(f"restore token kept at {token} (0600)")


def check_two_finger_scroll(watch, daemon):
    """Touchpad mode: a two-finger drag is scrolling at the client."""
    m = watch.mark
    rig.stream(daemon, [{0: (-0.3, -0.3 + 0.01 * i), 1: (0.3, -0.3 + 0.01 * i)} for i in range(40)])
    watch.wait_for(regex(r"^axis (vertical|horizontal) "), 60, "scroll", m)
    note(f"two-finger drag: {[l for l in watch.since(m) if l.startswith('axis')][:6]}")


def check_presenter_keys(watch, ws):
    """Presenter mode, from the page: `slide next` is key 109 Next pressed and released, `key ctrl+z` z
    with Control."""
    m = watch.mark
    ws.send("slide next")
    r = watch.wait_for(regex(r"^key (\d+) pressed sym=0x[0-9a-f]+ name=(\S+)"), 60, "slide next's key", m)
    watch.wait_for(regex(rf"^key {r.group(1)} released"), 60, "its release", m)
    note(f"slide next: {r.string}")
    check(r.group(1) == "109" and r.group(2) == "Next", f"want key 109 Next: {r.string}")
    m = watch.mark
    ws.send("key ctrl+z")
    r = watch.wait_for(regex(r"^key (\d+) pressed sym=0x[0-9a-f]+ name=(?!Control)(\S+) ctrl=(\d)"), 60, "ctrl+z", m)
    note(f"ctrl+z: {r.string}")
    check(r.group(2) == "z" and r.group(3) == "1", f"want z with Control: {r.string}")


def check_touch_down_up(watch, daemon):
    """Touchscreen mode: a finger at the middle is a wl_touch down at the client, its lift the up."""
    w, h = watch.size
    m = watch.mark
    daemon.send(rig.packet({0: (0.0, 0.0)}))
    r = watch.wait_for(regex(r"^touch down (\d+) (\S+) (\S+)"), 60, "a touch down", m)
    daemon.send(rig.packet({}, ended=[0]))
    watch.wait_for(regex(rf"^touch up {r.group(1)}$"), 60, "its touch up", m)
    note(f"touchscreen: {r.string} on {w}x{h}, then up")
    return r


TB_HOME = {}
TB_HOME_FILE = "/tmp/tb-portal-home.json"  # the first daemon's dirs, for the next (also in --attach runs)


def t_touchbridge_first(d):
    """touchbridge --backend auto as tbuser (no /dev/uinput) takes the portal: the dialog answered by
    clicks, then, in touchpad mode, a one-finger drag is pointer motion at the client, a tap a button
    272 press and release, a two-finger drag vertical scroll; the restore token kept (0600)."""
    check(touchbridge_has_portal(), "the share's touchbridge has no portal backend (serve --help names none)")
    TB_HOME.clear()
    TB_HOME.update({k: v for k, v in rig.private_env(owner=dt.UID).items() if k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")})
    rig.write_secret(TB_HOME, rig.SECRET, owner=dt.UID)
    with open(TB_HOME_FILE, "w") as f:
        json.dump(TB_HOME, f)
    watch = dt.Watch(d)
    daemon = PortalDaemon(d, "touchbridge-portal-1", "touchpad", TB_HOME, dialog=True)
    try:
        check_motion_tap_token(watch, daemon, TB_HOME)
        check_two_finger_scroll(watch, daemon)
    finally:
        daemon.stop()
        daemon.dump()
        watch.stop()


def t_touchbridge_restored(d):
    """A second daemon with the kept token: no dialog (its devices work while nobody touches the VM);
    presenter keys (slide next: Page_Down, key 109) and the page's key command reach the client; then a
    third in touchscreen mode: a finger is a wl_touch down and up at the client, if GNOME offers touch."""
    if not TB_HOME and os.path.exists(TB_HOME_FILE):
        TB_HOME.update(json.load(open(TB_HOME_FILE)))
    check(TB_HOME, "no first daemon")
    watch = dt.Watch(d)
    daemon = PortalDaemon(d, "touchbridge-portal-2", "presenter", TB_HOME, dialog=False, http_port=rig.free_port())
    ws = None
    try:
        watch.wait_for(regex(r"^keyboard enter"), 60, "keyboard focus on the client")
        ws = rig.WebSocket(daemon.http_port)
        check_presenter_keys(watch, ws)
    finally:
        if ws:
            ws.close()
        daemon.stop()
        daemon.dump()
    daemon = PortalDaemon(d, "touchbridge-portal-3", "touchscreen", TB_HOME, dialog=False)
    try:
        check_touch_down_up(watch, daemon)
    finally:
        daemon.stop()
        daemon.dump()
        watch.stop()


def cancel_at(x, y, w, h):
    return x + 45, y + 22


def t_touchbridge_refused(d):
    """The user says no: a daemon with no token, the dialog's Cancel clicked; touchbridge exits on its
    own with a non-zero status and a log line that says the portal refused (the status is printed)."""
    check(touchbridge_has_portal(), "the share's touchbridge has no portal backend (serve --help names none)")
    home = {k: v for k, v in rig.private_env(owner=dt.UID).items() if k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    rig.write_secret(home, rig.SECRET, owner=dt.UID)
    env = user_env(**home)
    argv = [*dt.AS_USER, os.path.join(rig.BIN, "touchbridge"), "serve", "--udp-port", "0", "--tuio-port", "0",
            "--http-port", "0", "--bind", "127.0.0.1", "--mode", "touchpad", "--log-level", "debug", "--backend", "auto"]
    daemon = rig.Proc("touchbridge-portal-refused", argv, env=env, merge_stderr=True)
    try:
        title, x, y, width, height, focused = wait_dialog(d)
        HAND.click(*cancel_at(x, y, width, height), d.screen_size())
        dt.until(300, "touchbridge exiting after Cancel", lambda: daemon.p.poll() is not None, 0.5)
        daemon.t.join(10)
        status = daemon.p.returncode
        said = [l for l in daemon.lines if "portal" in l.lower() and re.search(r"refus|cancel|said no|declin", l, re.I)]
        note(f"after Cancel: exit status {status}; {said[:2]}")
        check(status not in (0, None), f"touchbridge exited {status} after Cancel")
        check(said, "no log line saying the portal refused: " + " | ".join(daemon.lines[-8:]))
    finally:
        daemon.stop()
        with open(os.path.join(rig.OUT, "touchbridge-portal-refused.log"), "w") as f:
            f.write("\n".join(daemon.lines) + "\n")


# ---------------------------------------------------------------------------------------------
# The live view through the portal (touchbridge's ScreenCast in its RemoteDesktop session)

VIEW_POINTS = [(0.25, 0.012), (0.75, 0.012), (0.1, 0.15), (0.5, 0.5), (0.9, 0.5), (0.3, 0.85), (0.8, 0.9)]
WLWATCH_RGB = (0x20, 0x30, 0x40)  # wlwatch's window (Tests/VM/wlwatch/wlwatch.c)


def near(a, b, tol=24):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def patch_span(size, picture):
    """The side, in the screen's pixels, of the 5x5 patch rig.jpeg_colour_at averages in the picture."""
    return max(5, round(5 * size[0] / picture[0]))


def shell_colour_at(desktop, size, fx, fy, span=5):
    """The mean colour of the span x span pixels of the Shell's screenshot around the fraction (fx, fy) of
    the screen (rig.jpeg_colour_at's 5x5 patch of the picture, at the screen's scale: patch_span)."""
    w, h = size
    half = span // 2
    cx, cy = min(max(int(fx * (w - 1)), half), w - span + half), min(max(int(fy * (h - 1)), half), h - span + half)
    sw, sh, rgb = desktop.screenshot(cx - half, cy - half, span, span)
    n = sw * sh
    return tuple(round(sum(rgb[i + c] for i in range(0, 3 * n, 3)) / n) for c in range(3))


def compare_with_screen(jpeg, colour_at, size, what):
    """The frame's colours at VIEW_POINTS against the desktop's own screenshot taken now (`colour_at(fx,
    fy)`), ±24 a channel (JPEG); the points as noted. Fails unless every point matches."""
    pairs = [((fx, fy), rig.jpeg_colour_at(jpeg, fx, fy), colour_at(fx, fy)) for fx, fy in VIEW_POINTS]
    note(f"{what}: (point, frame, screenshot) {pairs}")
    bad = [p for p in pairs if not near(p[1], p[2])]
    check(not bad, f"{what}: the frame differs from the screenshot at {bad}")
    return pairs


def first_view_frame(ws, ask, monitor_size, what, daemon=None):
    """The page asks (`view W H`); the first answer must be a frame of the monitor's shape: returns
    (picture size, jpeg). A text answer fails the test with the daemon's `view:` lines."""
    m = ws.mark
    ws.send(ask)
    _, first = ws.wait(m, 120, f"{what}: the first frame", lambda x: isinstance(x, bytes) or x.startswith("view "))
    said = " | ".join(l for l in daemon.lines if " view: " in l)[-600:] if daemon and isinstance(first, str) else ""
    check(isinstance(first, bytes), f"{what}: the view through the portal: {first!r}; the daemon: {said}")
    monitor, picture, in_jpeg, jpeg = rig.view_frame(first, f"{what}: the first frame")
    bw, bh = (int(v) for v in ask.split()[1:3])
    note(f"{what}: first frame: monitor {monitor}, picture {picture}, {len(first)} bytes")
    check(monitor == tuple(monitor_size), f"{what}: the frame's monitor {monitor}, want the screen {monitor_size}")
    scale = min(bw / monitor_size[0], bh / monitor_size[1])
    want = (round(monitor_size[0] * scale), round(monitor_size[1] * scale))
    check(abs(picture[0] - want[0]) <= 1 and abs(picture[1] - want[1]) <= 1, f"{what}: the picture {picture}, want {want} (the shape fitted in {bw}x{bh})")
    check(in_jpeg == picture, f"{what}: the JPEG is {in_jpeg}, the header says {picture}")
    return picture, jpeg


def frame_showing(ws, m, ask, colour, what, turns=6):
    """After a change on the screen: the waiting ask's frames (asked again after each) until one shows
    `colour` at its centre (a capture may come between two of the compositor's repaints); returns its jpeg."""
    got = None
    for turn in range(turns):
        i, frame = ws.wait(m, 60, f"{what}: a frame after the change", lambda x: isinstance(x, bytes))
        jpeg = rig.view_frame(frame, f"{what}: the frame after the change")[3]
        got = rig.jpeg_colour_at(jpeg, 0.5, 0.5)
        if near(got, colour):
            note(f"{what}: frame {turn + 1} after the change shows {got} at its centre")
            return jpeg
        m = i + 1
        ws.send(ask)
    raise TestFailure(f"{what}: no frame after the change shows {colour} at its centre (last {got})")


TURN_MONITOR = """
import sys, dbus
bus = dbus.SessionBus()
config = dbus.Interface(bus.get_object("org.gnome.Mutter.DisplayConfig", "/org/gnome/Mutter/DisplayConfig"),
                        "org.gnome.Mutter.DisplayConfig")
serial, monitors, logical, properties = config.GetCurrentState()
connector = monitors[0][0][0]
mode = next(m[0] for m in monitors[0][1] if m[6].get("is-current"))
current = int(logical[0][3])
if current != int(sys.argv[1]):
    config.ApplyMonitorsConfig(serial, 1, [(0, 0, 1.0, int(sys.argv[1]), True, [(connector, mode, {})])], {},
                               signature="uua(iiduba(ssa{sv}))a{sv}")
print("transform", current, "->", sys.argv[1])
"""


def turn_monitor(transform, ok=True):
    """Mutter's one monitor turned (`transform` as wl_output's: 1 is 90° counter-clockwise, 0 normal), a
    temporary configuration through org.gnome.Mutter.DisplayConfig, as the desktop's user."""
    path = os.path.join(dt.AGENT, "turn-monitor.py")
    with open(path, "w") as f:
        f.write(TURN_MONITOR)
    os.chmod(path, 0o644)
    r = run_user("python3", path, str(transform), ok=ok)
    note(f"turn the monitor: {r.stdout.strip()} {r.stderr.strip()[-300:]}")


def check_page_tap(ws, watch, fx, fy):
    """The page's touch at the fraction (fx, fy) of the picture (the page's -1…+1) lands at that fraction
    of the monitor (±1 px) at wlwatch, then lifts."""
    w, h = watch.size
    m = watch.mark
    ws.send(rig.packet({0: (2 * fx - 1, 2 * fy - 1)}))
    r = watch.wait_for(regex(r"^touch down (\d+) (\S+) (\S+)"), 60, "the page's touch down", m)
    x, y = float(r.group(2)), float(r.group(3))
    want = (fx * w, fy * h)
    note(f"the page's touch at ({fx}, {fy}) of the picture: {r.string} on {w}x{h}")
    check(abs(x - want[0]) <= 1.5 and abs(y - want[1]) <= 1.5, f"the page's touch at ({x}, {y}), want {want} ±1")
    ws.send(rig.packet({}, ended=[0]))
    watch.wait_for(regex(rf"^touch up {r.group(1)}$"), 60, "the page's touch up", m)


def check_no_view_page(daemon, what):
    """A page of a daemon started with --no-view asks for the view: `view none disabled: …`."""
    ws = rig.WebSocket(daemon.http_port, keepalive=True)
    try:
        m = ws.mark
        ws.send("view 480 480")
        _, said = ws.wait(m, 60, f"{what}: the answer to the page's view", lambda x: isinstance(x, bytes) or x.startswith("view "))
        note(f"{what}: the page got {said!r}" if isinstance(said, str) else f"{what}: a frame of {len(said)} bytes")
        check(isinstance(said, str) and said.startswith("view none disabled"), f"{what}: want `view none disabled: …`, got {said!r:.80}")
    finally:
        ws.close()


def home_with_token_of(home):
    """A fresh HOME and XDG dirs for tbuser holding a copy of `home`'s kept restore token (if any)."""
    new = {k: v for k, v in rig.private_env(owner=dt.UID).items() if k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    rig.write_secret(new, rig.SECRET, owner=dt.UID)
    old = token_file(home) if home else None
    if old:
        path = token_path(new)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(old[0])
        os.chmod(path, 0o600)
        for p in (os.path.dirname(path), path):
            os.chown(p, dt.UID, dt.UID)
    return new


def t_touchbridge_view(d):
    """NEEDS touchbridge's portal screen cast (the live view through the portal: ScreenCast.SelectSources
    in its RemoteDesktop session, the frames read from PipeWire); the view is on by default.
    touchbridge on the portal in touchscreen mode (the first daemon's kept token, which with the view on
    covers the screen: no dialog; run alone, a fresh one: the dialog with the screen choice answered), a
    page over WebSocket: its first `view 640 640` gets a frame of the screen's shape (1280x800 → 640x400);
    its colours at several points match the Shell's own screenshot taken then (±24 a channel: JPEG; the
    pointer parked in the bottom-right corner first, the frames embed it); the screen still, an ask is
    answered by nothing; wlwatch's fullscreen window (0x203040) appears and the waiting ask gets a frame
    showing it, which matches the Shell's screenshot again; the page's touch at a point of the picture lands
    at that point of the screen at wlwatch. Then a daemon with --no-view (a fresh home: the devices-only dialog,
    checked to have no screen choice, answered): its page's ask gets `view none disabled: …`."""
    check(touchbridge_has_portal(), "the share's touchbridge has no portal backend (serve --help names none)")
    if not TB_HOME and os.path.exists(TB_HOME_FILE):
        TB_HOME.update(json.load(open(TB_HOME_FILE)))
    home = TB_HOME if TB_HOME else home_with_token_of(None)
    size = d.screen_size()
    HAND.do(move=[size[0] - 1, size[1] - 1, size[0], size[1]])
    daemon = PortalDaemon(d, "touchbridge-portal-view", "touchscreen", home, dialog="maybe", http_port=rig.free_port(), screen=True)
    ws = watch = None
    try:
        note(f"view daemon: {'the dialog answered' if daemon.asked else 'no dialog (the kept token)'}; "
             + " | ".join(l for l in daemon.lines if re.search(r"screen ?cast|pipewire|view", l, re.I))[:600])
        ws = rig.WebSocket(daemon.http_port, keepalive=True)
        ask = "view 640 640"
        picture, jpeg = first_view_frame(ws, ask, size, "GNOME", daemon)
        span = patch_span(size, picture)
        compare_with_screen(jpeg, lambda fx, fy: shell_colour_at(d, size, fx, fy, span), size, "the first frame")
        m, _ = rig.view_settles(ws, ask, "the screen")
        watch = dt.Watch(d)
        jpeg = frame_showing(ws, m, ask, WLWATCH_RGB, "wlwatch's window")
        compare_with_screen(jpeg, lambda fx, fy: shell_colour_at(d, size, fx, fy, span), size, "the frame with wlwatch")
        check_page_tap(ws, watch, 0.625, 0.375)
        # The monitor turned (Mutter's DisplayConfig, a temporary configuration, as the Settings' Displays
        # panel applies one): Mutter 48 ends the monitor's stream then (its node goes; the portal session
        # has no other to give). The view says why, to the log and to the page. (The session's touch
        # device went too and did not come back: not checked here, see Tests/VM/README.md.)
        md, m = daemon.mark, ws.mark
        turn_monitor(1)
        turned = (size[1], size[0])
        dt.until(60, f"the Shell's stage {turned[0]}x{turned[1]}", lambda: d.screen_size() == turned, 0.5)
        daemon.wait_for(regex(rf"monitors changed: .* {turned[0]}x{turned[1]}"), 60, "the turned monitor seen", md)
        ws.send(ask)
        daemon.wait_for(regex(r"the screen cast ended, its node gone \(GNOME ends it when the monitor turns"), 60,
                        "the log saying the cast ended", md)
        _, said = ws.wait(m, 60, "the page told", lambda x: isinstance(x, str) and x.startswith("view none"))
        check(said.startswith("view none no-picture"), f"the view after the monitor turned: {said!r}")
        turn_monitor(0)
        dt.until(60, "the Shell's stage back", lambda: d.screen_size() == size, 0.5)
    finally:
        turn_monitor(0, ok=False)
        if ws:
            ws.close()
        daemon.stop()
        daemon.dump()
        if watch:
            watch.stop()
    # A home of its own, the devices-only dialog answered: a restore token is the portal's state, not the
    # file's; restored with a token granted with the screen, a session without it (--no-view) succeeds with
    # no dialog on GNOME 48, and the portal then keeps devices-only data under that same token (a later
    # session asking for the screen with it gets no dialog and no stream).
    daemon = PortalDaemon(d, "touchbridge-portal-no-view", "touchscreen", home_with_token_of(None), dialog=True,
                          http_port=rig.free_port(), extra=["--no-view"], screen=False)
    try:
        check_no_view_page(daemon, "--no-view")
    finally:
        daemon.stop()
        daemon.dump()


# ---------------------------------------------------------------------------------------------
# Faults: a stale restore token, the compositor going away (issue 29's "Bad input and faults")

STALE = {}
STALE_FILE = "/tmp/tb-portal-stale-home.json"


def stale_home():
    """The dirs of the stale-token tests (made by the first, read back by the next, also in --attach runs)."""
    if not STALE and os.path.exists(STALE_FILE):
        STALE.update(json.load(open(STALE_FILE)))
    if not STALE:
        STALE.update({k: v for k, v in rig.private_env(owner=dt.UID).items() if k in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")})
        rig.write_secret(STALE, rig.SECRET, owner=dt.UID)
        with open(STALE_FILE, "w") as f:
            json.dump(STALE, f)
    return STALE


def token_path(home):
    return os.path.join(home["XDG_STATE_HOME"], "touchbridge", "portal-restore-token")


def token_file(home):
    """(content, mode, uid, mtime_ns) of the kept token, or None."""
    path = token_path(home)
    if not os.path.exists(path):
        return None
    st = os.stat(path)
    return open(path).read(), st.st_mode & 0o777, st.st_uid, st.st_mtime_ns


def write_stale_token(home):
    """A token the portal never gave (a random UUID), kept as touchbridge keeps one (0600, tbuser's)."""
    stale = str(uuid.uuid4())
    path = token_path(home)
    with open(path, "w") as f:
        f.write(stale + "\n")
    os.chmod(path, 0o600)
    os.chown(path, dt.UID, dt.UID)
    return stale


def t_stale_token_cancel(d):
    """A token the portal does not honour (a random UUID, as one the permission store forgot): the dialog
    appears again; Cancel clicked: touchbridge exits 77 (the user said no) and the kept file is left as it
    was (content, mode, owner, modification time): a token is replaced only by one a Start returned."""
    check(touchbridge_has_portal(), "the share's touchbridge has no portal backend (serve --help names none)")
    STALE.clear()
    if os.path.exists(STALE_FILE):
        os.unlink(STALE_FILE)
    home = stale_home()
    stale = write_stale_token(home)
    before = token_file(home)
    env = user_env(**home)
    argv = [*dt.AS_USER, os.path.join(rig.BIN, "touchbridge"), "serve", "--udp-port", "0", "--tuio-port", "0",
            "--http-port", "0", "--bind", "127.0.0.1", "--mode", "touchpad", "--log-level", "debug", "--backend", "auto"]
    daemon = rig.Proc("touchbridge-portal-stale-cancel", argv, env=env, merge_stderr=True)
    try:
        daemon.wait_for(regex(r"devices selected with the kept restore token"), 300, "the daemon sending the kept token")
        title, x, y, width, height, focused = wait_dialog(d)
        note(f"stale token {stale}: the dialog appeared ({width}x{height})")
        HAND.click(*cancel_at(x, y, width, height), d.screen_size())
        dt.until(300, "touchbridge exiting after Cancel", lambda: daemon.p.poll() is not None, 0.5)
        daemon.t.join(10)
        status = daemon.p.returncode
        said = [l for l in daemon.lines if "portal" in l.lower() and re.search(r"refus|cancel|said no|declin", l, re.I)]
        after = token_file(home)
        note(f"after Cancel: exit status {status}; {said[:1]}; the file {'unchanged' if after == before else after}")
        check(status == 77, f"touchbridge exited {status} after Cancel (77: the user said no)")
        check(said, "no log line saying the user said no: " + " | ".join(daemon.lines[-8:]))
        check(after == before, f"the kept token file changed after Cancel: {before} -> {after}")
    finally:
        daemon.stop()
        with open(os.path.join(rig.OUT, f"{daemon.name}.log"), "w") as f:
            f.write("\n".join(daemon.lines) + "\n")


def t_stale_token_replaced(d):
    """The same stale token again, the dialog answered this time: touchbridge works (a tap is a click at
    the client) and the file then holds the token Start returned (another one, 0600, tbuser's)."""
    home = stale_home()
    if token_file(home) is None:  # run alone: a stale token of its own
        write_stale_token(home)
    before = token_file(home)
    watch = dt.Watch(d)
    daemon = PortalDaemon(d, "touchbridge-portal-stale-answered", "touchpad", home, dialog=True)
    try:
        m = watch.mark
        dt.until_seen(watch, daemon, [{0: (0.0, 0.03 * i)} for i in range(8)], r"^motion ", "pointer motion", m)
        m = watch.mark
        rig.stream(daemon, [{0: (0.1, 0.1)}] * 3)
        watch.wait_for(regex(r"^button 272 released"), 60, "the tap's click", m)
        after = token_file(home)
        check(after is not None, "no token file after the dialog was answered")
        note(f"token file: {before[0].strip()} -> {after[0].strip()}, mode {oct(after[1])}, uid {after[2]}")
        check(after[0] != before[0], "the stale token was not replaced after the dialog was answered")
        check(after[1] == 0o600 and after[2] == dt.UID, f"the new token file's mode {oct(after[1])} uid {after[2]}")
        check(not os.path.exists(token_path(home) + ".new"), "a temporary token file was left")
    finally:
        daemon.stop()
        daemon.dump()
        watch.stop()


def restart_shell(d):
    """A new GNOME Shell in the same seat session (its output in out/gnome-shell-2.log), the portal's
    services stopped and started again with it."""
    dt.until(60, "the old gnome-shell gone", lambda: not any(dt.alive(p) for p in dt.pids_named(d.comm)), 0.2)
    # The next Shell binds wayland-0 afresh (the old socket would look like it is up), as Desktop.stop does.
    for f in [os.path.join(dt.RUNTIME, dt.WAYLAND), os.path.join(dt.RUNTIME, dt.WAYLAND + ".lock")] + \
            glob.glob("/tmp/.X11-unix/X*") + glob.glob("/tmp/.X*-lock"):
        if os.path.exists(f):
            os.unlink(f)
    # The portal's services as a new login has them: started afresh for the new Shell. The old
    # xdg-desktop-portal-gnome may outlive its Wayland display for a while, and a portal served by it
    # refused the next CreateSession at once (response 2); a Wayland session that loses GNOME Shell ends,
    # and the next login starts them anew.
    run_user("systemctl", "--user", "stop", "xdg-desktop-portal.service", "xdg-desktop-portal-gnome.service", timeout=300)
    t0 = time.monotonic()
    d.start(log_name="gnome-shell-2")
    note(f"a new GNOME Shell (pid {d.pid}) and the portal in {time.monotonic() - t0:.1f} s")


def t_compositor_killed(d):
    """The compositor goes with a finger down: touchbridge (touchscreen mode, restored by the token the
    test before kept) holds a touch that wlwatch saw go down, gnome-shell is killed (SIGKILL, as a
    crash); touchbridge says the session ended, releases what it held (its log names the touch) and exits
    69 (the man page's EXIT STATUS). Then a new GNOME Shell starts in the same session and a new
    touchbridge with the same token works there: a touch goes down and up, and a key typed then
    arrives with no modifier stuck (`key z`: z with ctrl=0 shift=0). Whether the portal still honours the
    token after the restart, or asks again (then answered), is printed."""
    # The token the stale-token test kept (proving the replacement is honoured), else the first daemon's.
    if os.path.exists(STALE_FILE) and token_file(stale_home()):
        home = stale_home()
    else:
        if not TB_HOME and os.path.exists(TB_HOME_FILE):
            TB_HOME.update(json.load(open(TB_HOME_FILE)))
        home = TB_HOME
    check(home and token_file(home), "no kept token from an earlier test")
    watch = dt.Watch(d)
    daemon = PortalDaemon(d, "touchbridge-portal-crash", "touchscreen", home, dialog=False, idle_release_ms=60000)
    killed = False
    try:
        m = watch.mark
        daemon.send(rig.packet({0: (0.0, 0.0)}))
        r = watch.wait_for(regex(r"^touch down (\d+) (\S+) (\S+)"), 60, "the held finger's touch down", m)
        note(f"held: {r.string}")
        dm = daemon.mark
        pids = dt.pids_named(d.comm)
        t0 = time.monotonic()
        for pid in pids:
            os.kill(pid, 9)
        killed = True
        dt.until(120, "touchbridge exiting after the compositor went", lambda: daemon.p.poll() is not None, 0.2)
        took = time.monotonic() - t0
        daemon.t.join(10)
        status = daemon.p.returncode
        after = daemon.since(dm)
        ended = [l for l in after if re.search(r"ended the remote desktop session|EIS connection closed", l)]
        released = [l for l in after if re.search(r"released .*touch", l)]
        note(f"gnome-shell {pids} killed: touchbridge exited {status} in {took:.1f} s; {ended[:1]}; {released[:1]}")
        check(status == 69, f"touchbridge exited {status} after the compositor went (69 documented): " + " | ".join(after[-8:]))
        check(ended, "no log line saying the session ended: " + " | ".join(after[-8:]))
        check(released, "no log line releasing the held touch: " + " | ".join(after[-8:]))
    finally:
        daemon.stop()
        daemon.dump()
        watch.stop()
        if killed:
            restart_shell(d)
    watch = dt.Watch(d)
    daemon = PortalDaemon(d, "touchbridge-portal-after-restart", "touchscreen", home, dialog="maybe", http_port=rig.free_port())
    ws = None
    try:
        note(f"after the restart: {'the portal asked again (the dialog answered)' if daemon.asked else 'the kept token restored the permission, no dialog'}")
        # The page first: one phone at a time, and a PoseAI phone's session would make the page wait 10 s.
        watch.wait_for(regex(r"^keyboard enter"), 60, "keyboard focus on the client")
        ws = rig.WebSocket(daemon.http_port)
        m = watch.mark
        ws.send("key z")
        r = watch.wait_for(regex(r"^key (\d+) pressed sym=0x[0-9a-f]+ name=(\S+) ctrl=(\d) shift=(\d)"), 60, "key z", m)
        note(f"new session: key z: {r.string}")
        check(r.group(2) == "z" and r.group(3) == "0" and r.group(4) == "0", f"want z, no modifier: {r.string}")
        dm = daemon.mark
        ws.close()
        ws = None
        daemon.wait_for(regex(r"web page disconnected"), 60, "the page gone", dm)
        m = watch.mark
        daemon.send(rig.packet({0: (0.0, 0.0)}))
        r = watch.wait_for(regex(r"^touch down (\d+) "), 60, "a touch down in the new session", m)
        daemon.send(rig.packet({}, ended=[0]))
        watch.wait_for(regex(rf"^touch up {r.group(1)}$"), 60, "its touch up", m)
        note(f"new session: touch down and up: {r.string}")
    finally:
        if ws:
            ws.close()
        daemon.stop()
        daemon.dump()
        watch.stop()


TESTS = [("portal_client_dialog_answered_gives_eis_and_token", t_client_first),
         ("portal_client_restore_token_no_dialog", t_client_restore),
         ("portal_client_libei_input_reaches_a_client", t_client_libei),
         ("portal_client_screen_cast_stream_and_restore", t_client_screen),
         ("touchbridge_auto_takes_the_portal_dialog_answered", t_touchbridge_first),
         ("touchbridge_restore_token_keys_and_touch", t_touchbridge_restored),
         ("touchbridge_dialog_cancelled_exits_with_a_status", t_touchbridge_refused),
         ("touchbridge_view", t_touchbridge_view),
         # Faults (portalfault); the last one restarts GNOME Shell: keep it last.
         ("touchbridge_stale_token_cancel_keeps_the_file", t_stale_token_cancel),
         ("touchbridge_stale_token_replaced_after_the_dialog", t_stale_token_replaced),
         ("touchbridge_compositor_killed_ends_session_and_restarts", t_compositor_killed)]


def hold_point(tag):
    """Debugging (/share/hold): run /share/rpc/<n>.sh as root (output to <n>.out) until /share/rpc/go-<tag>
    or /share/rpc/stop appears."""
    if not os.path.exists("/share/hold"):
        return
    rpc = "/share/rpc"
    os.makedirs(rpc, exist_ok=True)
    note(f"holding at {tag}")
    done = set()
    while not (os.path.exists(f"{rpc}/go-{tag}") or os.path.exists(f"{rpc}/stop")):
        for f in sorted(glob.glob(f"{rpc}/*.sh")):
            if f in done:
                continue
            done.add(f)
            with open(f[:-3] + ".out.tmp", "w") as o:
                subprocess.run(["sh", f], stdout=o, stderr=subprocess.STDOUT, timeout=300)
            os.rename(f[:-3] + ".out.tmp", f[:-3] + ".out")
        time.sleep(0.3)


def copy_binaries():
    shutil.rmtree("/tmp/tb", ignore_errors=True)
    for sub in ("bin", "lib"):
        if os.path.isdir(f"/share/{sub}"):
            shutil.copytree(f"/share/{sub}", f"/tmp/tb/{sub}")
    subprocess.run(["chmod", "-R", "a+rX", "/tmp/tb"], check=False)


def run_tests(d, wanted, tests=None, after_failure=None):
    """Runs `tests` (GNOME's `TESTS` unless given) against the desktop `d`, or only the `wanted` ones; a
    failure is reported with a screenshot, then `after_failure(name)`, which stops the run if it returns
    true. Returns the number of failures."""
    failures = 0
    for name, fn in TESTS if tests is None else tests:
        if wanted and name not in wanted:
            continue
        if not run_test(name, fn, d):  # every failure is reported, the run goes on
            failures += 1
            d.screenshot_file(f"fail-{name}")
            if after_failure is not None and after_failure(name):
                break
    return failures


def attach(wanted):
    """Debugging (PORTAL_HOLD=1, from /share/rpc): the named tests against the GNOME Shell already
    running, with the share's binaries copied in afresh."""
    copy_binaries()
    d = Gnome48()
    d.pid = dt.pids_named(d.comm)[0]
    return run_tests(d, wanted)


def main():
    if "--attach" in sys.argv:
        return attach(sys.argv[sys.argv.index("--attach") + 1:])
    os.makedirs(rig.OUT, exist_ok=True)
    os.chmod(rig.OUT, 0o777)
    copy_binaries()
    wanted = rig.wanted_tests()
    failures = 0
    note(f"packages: {versions()}; kernel {os.uname().release}")
    # KDE Plasma 6's part (portaltest_kde.py, kdeportal's) runs after GNOME's in the same boot; only it
    # when every test named is a `kde_` one.
    kde = None
    if os.path.exists("/share/portaltest_kde.py"):
        import portaltest_kde as kde
        if not kde.wanted_here(wanted):
            kde = None
    gnome_wanted = not wanted or any(not n.startswith("kde_") for n in wanted)
    d = Gnome48()
    try:
        sid, props = dt.seat_session()
        dt.start_agent()
        note(f"seat session {sid}: {props}")
        uinput_not_writable()
        if gnome_wanted:
            start = time.monotonic()
            d.start()
            print(f"PASS gnome_session {time.monotonic() - start:.1f}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"FAIL gnome_session {time.monotonic() - START:.1f} {rig.failure_text(e)}", flush=True)
        hold_point("end")
        return 1
    if gnome_wanted:
        failures += run_tests(d, wanted)
        hold_point("end")
    if kde:
        failures += kde.main(wanted, gnome=d if gnome_wanted else None)
    elif gnome_wanted:
        d.stop()
    print(f"portal-test: done in {time.monotonic() - START:.1f} s, {failures} failure(s)", flush=True)
    return failures


if __name__ == "__main__":
    sys.exit(main())
