#!/usr/bin/env python3
"""The VM's typing tests: the page's `text` and `key` commands, typed by touchbridge on
--backend uinput, read back from a real text client: a terminal running `stty -echo iutf8; cat > FILE`,
so the file holds exactly the line the terminal's line discipline received (BackSpace edits applied).

- typing_on_xorg_uinput: xterm on the VM's Xorg (:0), layout fr. Keys by the keymap on touchbridge's
  uinput keyboard (Shift for fr's digits, AltGr for €); characters no key makes (emoji, CJK) on a
  keycode the X11 desktop borrows.
- typing_on_sway_uinput: foot under sway (fr, as sway.config sets it). Keys the same way;
  characters no key makes on touchbridge's virtual keyboard (zwp_virtual_keyboard_v1).

Each test prints `PASS <name> <seconds>` or `FAIL <name> <reason>`; the exit status is the number of
failures. Every wait has a timeout; nothing proves absence by sleeping.

Usage: typingtest.py [name ...]   (default: every test)
"""
import ctypes
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rig  # noqa: E402  the rig's shared guest Python
import waylandtest as wl  # noqa: E402
from rig import TestFailure, check, note, regex, WebSocket, SECRET, free_port, run_test  # noqa: E402

# What is typed, as (command, what the line holds after it): plain ASCII with Shift (H) and
# punctuation, fr's digits (Shift on AZERTY), AltGr's € and an unshifted é, an edit with BackSpace,
# then characters no key makes (an emoji outside the BMP, a CJK ideograph, a snowman) with a key's
# character between them in the same command (the two ways of typing keep their order), and ASCII again
# after them (the keymap the desktop follows must still be the layout's).
STEPS = [
    ("text Hello, ", "Hello, "),
    ("text 1234 ", "Hello, 1234 "),
    ("text \u20ac\u00e9 ", "Hello, 1234 \u20ac\u00e9 "),
    ("text wrold", "Hello, 1234 \u20ac\u00e9 wrold"),
    ("key BackSpace", None), ("key BackSpace", None), ("key BackSpace", None), ("key BackSpace", None),
    ("text orld ", "Hello, 1234 \u20ac\u00e9 world "),
    ("text \U0001F600a\u4e2d\u2603", "Hello, 1234 \u20ac\u00e9 world \U0001F600a\u4e2d\u2603"),
    ("text  ok", "Hello, 1234 \u20ac\u00e9 world \U0001F600a\u4e2d\u2603 ok"),
]
EXPECTED = STEPS[-1][1]
# On X, the X11 desktop types each character no key makes on one spare keycode, remapped for each, and
# an X client (xterm) looks the keycode up when it gets to the event: two such characters 0.1 s apart
# reached xterm as the second one twice ('…😀a☃☃ ok', 2026-11-27 under TCG; three in one command as
# '☃a☃☃'). That is the borrower's defect (TouchX11's KeycodeBorrower: one keycode, remapped before the
# client read the last), which this test keeps showing until it is fixed.


def read_line(path, timeout, what):
    """The first line the terminal's `cat` wrote to `path` (waits for its newline)."""
    end = time.monotonic() + timeout
    while True:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        if b"\n" in data:
            return data.split(b"\n", 1)[0].decode("utf-8", errors="replace")
        if time.monotonic() > end:
            raise TestFailure(f"{what}: no line in {path} within {timeout} s (so far {data!r})")
        time.sleep(0.1)


def type_steps(ws, steps=STEPS):
    """Sends `steps`, then Return, a tenth of a second apart (a quick typist's pace; the daemon takes
    them in order whatever the pace)."""
    for command, _ in steps:
        ws.send(command)
        time.sleep(0.1)
    ws.send("key Return")


def check_typed(got, where):
    note(f"{where}: the terminal got {got!r}")
    check(got == EXPECTED, f"{where}: the terminal got {got!r}, want {EXPECTED!r}")


# ---------------------------------------------------------------------------------------------
# Xorg

def until_viewable(window):
    """Waits until `window` (on :0) is viewable (xwininfo's Map State): xterm runs its shell, which wrote
    the id, before it maps its window, and keys sent before the map reach no window."""
    def viewable():
        r = subprocess.run(["xwininfo", "-id", str(window)], env=rig.ENV, capture_output=True, text=True, timeout=30)
        return r.returncode == 0 and "Map State: IsViewable" in r.stdout
    wl.until(60, f"xterm's window 0x{window:x} viewable", viewable)


def focus_x_window(window):
    """Gives `window` (on :0) the keyboard focus (no window manager runs there)."""
    x11 = ctypes.CDLL("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    dpy = ctypes.c_void_p(x11.XOpenDisplay(b":0"))
    check(dpy.value, "cannot open :0")
    x11.XSetInputFocus(dpy, ctypes.c_ulong(window), 1, 0)  # RevertToPointerRoot, CurrentTime
    x11.XSync(dpy, 0)
    x11.XCloseDisplay(dpy)


def test_typing_on_xorg_uinput():
    """xterm on Xorg, layout fr set once touchbridge's devices are up: the page's text and keys arrive
    exactly, on uinput (borrowing a keycode for what no key makes)."""
    out = "/tmp/typed-x.txt"
    for p in (out, out + ".id"):
        if os.path.exists(p):
            os.remove(p)
    rig.setxkbmap("us")
    daemon = ws = term = None
    watch = rig.Watch()
    try:
        m0 = watch.mark
        daemon = rig.Daemon("--backend", "uinput", mode="touchpad", secret=SECRET, http_port=free_port())
        watch.device_named("touchbridge_keyboard", since=m0, timeout=60)
        m = daemon.mark
        rig.setxkbmap("fr")
        daemon.wait_for(regex(r"keymap: .* z on evdev 17"), 30, "the daemon reading the fr keymap", m)
        env = dict(rig.ENV, LANG="C.UTF-8", LC_ALL="C.UTF-8")
        term = rig.Proc("xterm", ["xterm", "-u8", "-geometry", "120x10+0+0", "-e", "sh", "-c",
                                 f"echo $WINDOWID > {out}.id.tmp && mv {out}.id.tmp {out}.id; stty -echo iutf8; exec cat > {out}"],
                       env=env)
        wl.until(60, "xterm's window id", lambda: os.path.exists(out + ".id"))
        with open(out + ".id") as f:
            window = int(f.read().strip())
        t_shell = time.monotonic()
        until_viewable(window)
        note(f"xterm's window viewable {time.monotonic() - t_shell:.2f} s after its shell ran")
        focus_x_window(window)
        ws = WebSocket(daemon.http_port)
        t0 = time.monotonic()
        type_steps(ws)
        got = read_line(out, 60, "xterm")
        note(f"typed and read back in {time.monotonic() - t0:.1f} s (0.1 s between commands)")
        check_typed(got, "xterm on Xorg, uinput, fr")
    finally:
        if ws:
            ws.close()
        if term:
            term.stop()
        if daemon:
            with open(os.path.join(rig.OUT, "touchbridge-typing-x.log"), "w") as f:
                f.write("\n".join(daemon.lines) + "\n")
            daemon.stop()
        watch.stop()
        rig.setxkbmap("us")


# ---------------------------------------------------------------------------------------------
# sway

def sway_focused(app_id):
    """Whether sway's tree holds a window of `app_id` with the keyboard focus (mapped: it is in the tree)."""
    def walk(node):
        return (node.get("app_id") == app_id and node.get("focused")) or \
            any(walk(n) for n in node.get("nodes", []) + node.get("floating_nodes", []))
    return walk(json.loads(wl.swaymsg("-t", "get_tree", "-r")))


def test_typing_on_sway_uinput():
    """foot under sway (fr): the page's text and keys arrive exactly, on uinput, and what no key of
    sway's keymap makes on touchbridge's virtual keyboard; ASCII typed after it is still fr's."""
    wl.Session.start()
    out = "/tmp/typed-wl.txt"
    if os.path.exists(out):
        os.remove(out)
    daemon = ws = term = None
    try:
        daemon = wl.Daemon(x=False, http_port=free_port())
        wl.devices_ready(daemon, ["touchbridge keyboard"])
        daemon.wait_for(regex(r"keymap: .* z on evdev 17"), 60, "the daemon reading sway's fr keymap", 0)
        env = wl.user_env(LANG="C.UTF-8", LC_ALL="C.UTF-8")
        term = rig.Proc("foot", wl.AS_USER + ["foot", "-e", "sh", "-c", f"stty -echo iutf8; exec cat > {out}"], env=env)
        # foot starts its shell before its window is mapped: keys typed then reach no window (a run lost
        # the first two commands so). Sway focuses a new window; the keys wait until its tree says so.
        wl.until(60, "foot running cat", lambda: os.path.exists(out))
        t_shell = time.monotonic()
        wl.until(60, "foot's window mapped and focused (sway's tree)", lambda: sway_focused("foot"))
        note(f"foot's window focused {time.monotonic() - t_shell:.2f} s after its shell ran")
        ws = WebSocket(daemon.http_port)
        t0 = time.monotonic()
        type_steps(ws)
        got = read_line(out, 60, "foot")
        note(f"typed and read back in {time.monotonic() - t0:.1f} s (0.1 s between commands)")
        keymaps = [l for l in daemon.lines if "keysyms from" in l]
        note(f"the daemon's keymap lines: {keymaps[-3:]}")
        check_typed(got, "foot under sway, uinput + virtual keyboard, fr")
        check(all("z on evdev 17" in l for l in keymaps), f"the daemon took another keymap than fr's: {keymaps}")
    finally:
        if ws:
            ws.close()
        if term:
            term.stop()
        if daemon:
            with open(os.path.join(rig.OUT, "touchbridge-typing-wl.log"), "w") as f:
                f.write("\n".join(daemon.lines) + "\n")
            daemon.stop()


def all_tests():
    return {name[5:]: fn for name, fn in globals().items() if name.startswith("test_") and callable(fn)}


def main():
    os.makedirs(rig.OUT, exist_ok=True)
    tests = all_tests()
    names = sys.argv[1:] or list(tests)

    def one(name):
        check(name in tests, f"no typing test named {name}")
        tests[name]()

    try:
        return sum(not run_test(name, one, name) for name in names)  # every failure is reported, the run goes on
    finally:
        wl.Session.stop()


if __name__ == "__main__":
    sys.exit(main())
