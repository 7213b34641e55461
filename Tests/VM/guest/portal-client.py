#!/usr/bin/env python3
"""The portal stage's own RemoteDesktop client (Tests/VM/guest/portaltest.py runs it as the seat's
user): it calls org.freedesktop.portal.RemoteDesktop on the session bus as a program would, with Gio
(python3-gi):

  CreateSession -> SelectDevices (types: keyboard|pointer|touchscreen as offered, persist_mode 2, the
  restore token if one is given) -> Start (the dialog, unless the token is honoured) -> ConnectToEIS

and checks the descriptor it gets is a live EIS connection: a Unix stream socket on which the
compositor's EIS server speaks first (libei's protocol opens with the server's ei_handshake events), so
bytes arrive on it. With --screen it also asks for a screen cast in the same session, as touchbridge does for
its live view (org.freedesktop.portal.ScreenCast on the same object):

  ... SelectDevices -> SelectSources (types: monitor, multiple: no, cursor_mode: embedded when offered)
  -> Start (the dialog then has the screen choice; its results carry the streams) -> ConnectToEIS
  -> OpenPipeWireRemote

and prints each stream of Start's results (`stream NODE position X Y size W H source-type T`, `none` for
a property left out: KWin 6.3 gives no position), then checks the PipeWire
descriptor: a Unix stream socket (its peer's name printed: the PipeWire daemon, or systemd --user, which made
the listening socket when PipeWire is socket-activated) answering a core `sync` with its `done` (PipeWire's
native protocol, spoken by hand: the portal's connection is already past its hello).
Prints one line per step (portaltest.py reads them), then holds the session until
its stdin closes, and closes it. A line `send` on its stdin makes it a libei sender on that descriptor
(libei.so.1 through ctypes, as touchbridge dlopens it): it binds every capability the seat offers and,
once the devices are resumed, sends relative motion, a left button click, smooth scroll, a key (KEY_A)
and a touch, each followed by a frame, printing what it sent.

Usage: portal-client.py [--token FILE] [--screen]   (FILE: read the restore token from it if it exists,
write the new one to it)
"""
import ctypes as C
import os
import select
import socket
import stat
import struct
import sys
import time

from gi.repository import Gio, GLib

PORTAL = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
IFACE = "org.freedesktop.portal.RemoteDesktop"
SCREENCAST = "org.freedesktop.portal.ScreenCast"
KEYBOARD, POINTER, TOUCHSCREEN = 1, 2, 4
MONITOR = 1  # ScreenCast source types
CURSOR_EMBEDDED = 2  # ScreenCast cursor modes


def out(line):
    print(line, flush=True)


class Client:
    def __init__(self):
        self.bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        self.sender = self.bus.get_unique_name()[1:].replace(".", "_")
        self.n = 0

    def prop(self, name, iface=IFACE):
        v = self.bus.call_sync(PORTAL, PATH, "org.freedesktop.DBus.Properties", "Get",
                               GLib.Variant("(ss)", (iface, name)), GLib.VariantType("(v)"),
                               Gio.DBusCallFlags.NONE, 60000, None)
        return v.unpack()[0]

    def request(self, method, args, options, timeout, iface=IFACE):
        """Calls `method` of `iface` with `args` + options (a handle_token added) and waits for its
        Request's Response signal: (response code, results dict)."""
        self.n += 1
        token = f"tb{os.getpid()}_{self.n}"
        path = f"/org/freedesktop/portal/desktop/request/{self.sender}/{token}"
        got = []
        sub = self.bus.signal_subscribe(PORTAL, "org.freedesktop.portal.Request", "Response", path, None,
                                        Gio.DBusSignalFlags.NONE,
                                        lambda *a: got.append(a[5].unpack()))
        options = dict(options, handle_token=GLib.Variant("s", token))
        sig = "(" + "".join(s for s, _ in args) + "a{sv})"
        self.bus.call_sync(PORTAL, PATH, iface, method, GLib.Variant(sig, tuple(v for _, v in args) + (options,)),
                           GLib.VariantType("(o)"), Gio.DBusCallFlags.NONE, 60000, None)
        deadline = time.monotonic() + timeout
        ctx = GLib.MainContext.default()
        while not got:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method}: no Response within {timeout} s")
            ctx.iteration(False) or time.sleep(0.05)
        self.bus.signal_unsubscribe(sub)
        return got[0]

    def connect_to_eis(self, session):
        v, fds = self.bus.call_with_unix_fd_list_sync(
            PORTAL, PATH, IFACE, "ConnectToEIS", GLib.Variant("(oa{sv})", (session, {})),
            GLib.VariantType("(h)"), Gio.DBusCallFlags.NONE, 60000, None, None)
        return fds.get(v.unpack()[0])

    def open_pipewire_remote(self, session):
        v, fds = self.bus.call_with_unix_fd_list_sync(
            PORTAL, PATH, SCREENCAST, "OpenPipeWireRemote", GLib.Variant("(oa{sv})", (session, {})),
            GLib.VariantType("(h)"), Gio.DBusCallFlags.NONE, 60000, None, None)
        return fds.get(v.unpack()[0])


def pipewire_check(fd):
    """What the PipeWire descriptor is: (kind, the peer's command name and pid, whether a core `sync` got
    its `done`). PipeWire's native protocol (version 3): a 16-byte header (object id; opcode << 24 | payload
    size; sequence; number of descriptors), then an SPA POD struct. Core (object 0) method 2 is sync(id,
    seq); the server answers with core event 1, done(id, seq)."""
    st = os.fstat(fd)
    s = socket.socket(fileno=os.dup(fd))
    try:
        kind = "unix-stream" if stat.S_ISSOCK(st.st_mode) and s.family == socket.AF_UNIX and s.type == socket.SOCK_STREAM else "other"
        if kind != "unix-stream":
            return kind, "-", False
        pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        try:
            peer = open(f"/proc/{pid}/comm").read().strip()
        except OSError:
            peer = "?"
        seq = 0x7b5
        ints = b"".join(struct.pack("<IIi4x", 4, 4, v) for v in (0, seq))  # SPA_TYPE_Int is 4, padded to 8
        body = struct.pack("<II", len(ints), 14) + ints  # SPA_TYPE_Struct is 14
        s.sendall(struct.pack("<IIII", 0, (2 << 24) | len(body), 0x7fff0000, 0) + body)
        data, done, deadline = b"", False, time.monotonic() + 30
        while not done and time.monotonic() < deadline:
            r, _, _ = select.select([s], [], [], max(0.0, deadline - time.monotonic()))
            if not r:
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            while len(data) >= 16:
                oid, opsize, _, _ = struct.unpack("<IIII", data[:16])
                size = opsize & 0xFFFFFF
                if len(data) < 16 + size:
                    break
                payload, data = data[16:16 + size], data[16 + size:]
                if oid == 0 and opsize >> 24 == 1 and len(payload) >= 40:
                    done = done or struct.unpack("<i", payload[32:36])[0] == seq
        return kind, f"{peer}({pid})", done
    finally:
        s.close()


# libei.h: event types and device capabilities.
EV_CONNECT, EV_DISCONNECT, EV_SEAT_ADDED, EV_DEVICE_ADDED, EV_DEVICE_RESUMED = 1, 2, 3, 5, 8
CAP_POINTER, CAP_ABS, CAP_KEYBOARD, CAP_TOUCH, CAP_SCROLL, CAP_BUTTON = 1, 2, 4, 8, 16, 32
CAPS = {CAP_POINTER: "pointer", CAP_ABS: "pointer-absolute", CAP_KEYBOARD: "keyboard", CAP_TOUCH: "touch",
        CAP_SCROLL: "scroll", CAP_BUTTON: "button"}


def libei():
    ei = C.CDLL("libei.so.1")
    P, I, U, D, B = C.c_void_p, C.c_int, C.c_uint32, C.c_double, C.c_bool
    for name, res, args in [
            ("ei_new_sender", P, [P]), ("ei_configure_name", None, [P, C.c_char_p]), ("ei_setup_backend_fd", I, [P, I]),
            ("ei_get_fd", I, [P]), ("ei_dispatch", None, [P]), ("ei_get_event", P, [P]), ("ei_event_get_type", I, [P]),
            ("ei_event_get_seat", P, [P]), ("ei_event_get_device", P, [P]), ("ei_event_unref", P, [P]),
            ("ei_device_ref", P, [P]), ("ei_device_has_capability", B, [P, I]), ("ei_device_get_name", C.c_char_p, [P]),
            ("ei_device_start_emulating", None, [P, U]), ("ei_device_stop_emulating", None, [P]),
            ("ei_device_pointer_motion", None, [P, D, D]), ("ei_device_button_button", None, [P, U, B]),
            ("ei_device_scroll_delta", None, [P, D, D]), ("ei_device_keyboard_key", None, [P, U, B]),
            ("ei_device_frame", None, [P, C.c_uint64]), ("ei_now", C.c_uint64, [P]),
            ("ei_device_get_region", P, [P, C.c_size_t]), ("ei_region_get_x", U, [P]), ("ei_region_get_y", U, [P]),
            ("ei_region_get_width", U, [P]), ("ei_region_get_height", U, [P]),
            ("ei_device_touch_new", P, [P]), ("ei_touch_down", None, [P, D, D]), ("ei_touch_motion", None, [P, D, D]),
            ("ei_touch_up", None, [P])]:
        f = getattr(ei, name)
        f.restype = res
        f.argtypes = args
    ei.ei_seat_bind_capabilities.restype = None  # variadic: every argument passed as a ctypes object
    return ei


def send_input(fd):
    """A libei sender on the EIS descriptor: devices bound, resumed, then one of each input."""
    ei = libei()
    ctx = ei.ei_new_sender(None)
    ei.ei_configure_name(ctx, b"portal-client")
    check_rc = ei.ei_setup_backend_fd(ctx, os.dup(fd))
    if check_rc != 0:
        out(f"libei: setup_backend_fd failed {check_rc}")
        return False
    devices, resumed, seq = {}, set(), 0
    deadline = time.monotonic() + 60

    def pump(wait):
        nonlocal seq
        select.select([ei.ei_get_fd(ctx)], [], [], wait)
        ei.ei_dispatch(ctx)
        while True:
            ev = ei.ei_get_event(ctx)
            if not ev:
                return
            t = ei.ei_event_get_type(ev)
            if t == EV_SEAT_ADDED:
                ei.ei_seat_bind_capabilities(C.c_void_p(ei.ei_event_get_seat(ev)), *[C.c_int(c) for c in CAPS], C.c_void_p(None))
            elif t == EV_DEVICE_ADDED:
                d = ei.ei_device_ref(ei.ei_event_get_device(ev))
                caps = [n for c, n in CAPS.items() if ei.ei_device_has_capability(d, c)]
                devices[d] = caps
                out(f"libei: device added {ei.ei_device_get_name(d).decode()} {','.join(caps)}")
            elif t == EV_DEVICE_RESUMED:
                d = ei.ei_event_get_device(ev)
                seq += 1
                ei.ei_device_start_emulating(d, seq)
                resumed.add(d)
            elif t == EV_DISCONNECT:
                out("libei: disconnected")
            ei.ei_event_unref(ev)

    def dev(cap):
        return next((d for d, caps in devices.items() if cap in caps and d in resumed), None)
    while time.monotonic() < deadline and not (dev("pointer") and dev("keyboard") and dev("button")):
        pump(0.5)
    for _ in range(5):  # the touch device, if offered, may come a moment later
        pump(0.2)
    out(f"libei: resumed {sorted(','.join(devices[d]) for d in resumed)}")

    def frame(d):
        ei.ei_device_frame(d, ei.ei_now(ctx))
        pump(0.0)
        time.sleep(0.05)
    p = dev("pointer")
    if p:
        for _ in range(10):
            ei.ei_device_pointer_motion(p, 8.0, 4.0)
            frame(p)
        out("sent motion 10x(8,4)")
    b = dev("button")
    if b:
        ei.ei_device_button_button(b, 272, True)
        frame(b)
        ei.ei_device_button_button(b, 272, False)
        frame(b)
        out("sent button 272")
    s = dev("scroll")
    if s:
        for _ in range(3):
            ei.ei_device_scroll_delta(s, 0.0, 5.0)
            frame(s)
        out("sent scroll 3x(0,5)")
    k = dev("keyboard")
    if k:
        ei.ei_device_keyboard_key(k, 30, True)
        frame(k)
        ei.ei_device_keyboard_key(k, 30, False)
        frame(k)
        out("sent key 30")
    t = dev("touch")
    if t:
        r = ei.ei_device_get_region(t, 0)
        x, y = (ei.ei_region_get_x(r) + ei.ei_region_get_width(r) / 2, ei.ei_region_get_y(r) + ei.ei_region_get_height(r) / 2) if r else (300.0, 300.0)
        touch = ei.ei_device_touch_new(t)
        ei.ei_touch_down(touch, x, y)
        frame(t)
        ei.ei_touch_motion(touch, x + 20, y)
        frame(t)
        ei.ei_touch_up(touch)
        frame(t)
        out(f"sent touch at {x:.0f},{y:.0f}")
    out("sent all")
    return True


def main():
    token_file = sys.argv[sys.argv.index("--token") + 1] if "--token" in sys.argv else None
    token = open(token_file).read().strip() if token_file and os.path.exists(token_file) else ""
    screen = "--screen" in sys.argv
    c = Client()
    version = c.prop("version")
    available = c.prop("AvailableDeviceTypes")
    out(f"portal RemoteDesktop version {version} available-device-types {available}")
    if screen:
        cursor_modes = c.prop("AvailableCursorModes", SCREENCAST)
        out(f"portal ScreenCast version {c.prop('version', SCREENCAST)} available-source-types "
            f"{c.prop('AvailableSourceTypes', SCREENCAST)} available-cursor-modes {cursor_modes}")
    t0 = time.monotonic()
    code, res = c.request("CreateSession", [], {"session_handle_token": GLib.Variant("s", f"tbs{os.getpid()}")}, 60)
    if code != 0:
        out(f"create-session response {code}")
        return 2
    session = res["session_handle"]
    out(f"session {session}")
    types = available & (KEYBOARD | POINTER | TOUCHSCREEN)
    opts = {"types": GLib.Variant("u", types), "persist_mode": GLib.Variant("u", 2)}
    if token:
        opts["restore_token"] = GLib.Variant("s", token)
    code, res = c.request("SelectDevices", [("o", session)], opts, 60)
    out(f"select-devices response {code} types {types} restore-token-given {'yes' if token else 'no'}")
    if code != 0:
        return 2
    if screen:
        sopts = {"types": GLib.Variant("u", MONITOR), "multiple": GLib.Variant("b", False)}
        if cursor_modes & CURSOR_EMBEDDED:
            sopts["cursor_mode"] = GLib.Variant("u", CURSOR_EMBEDDED)
        code, res = c.request("SelectSources", [("o", session)], sopts, 60, iface=SCREENCAST)
        out(f"select-sources response {code} types {MONITOR} cursor-mode {sopts['cursor_mode'].unpack() if 'cursor_mode' in sopts else 'default'}")
        if code != 0:
            return 2
    out("start called")
    code, res = c.request("Start", [("o", session), ("s", "")], {}, 600)
    new_token = res.get("restore_token", "")
    out(f"start response {code} devices {res.get('devices', 0)} restore-token {'new' if new_token else 'none'} "
        f"same-token {'yes' if new_token and new_token == token else 'no'} after {time.monotonic() - t0:.1f} s")
    if code != 0:
        return 1
    streams = res.get("streams", [])
    if screen or streams:
        out(f"streams {len(streams)}")
        for node, props in streams:  # a property the compositor leaves out is printed as "none"
            x, y = props.get("position", ("none", "none"))
            w, h = props.get("size", ("none", "none"))
            out(f"stream {node} position {x} {y} size {w} {h} source-type {props.get('source_type', 'none')}")
    if token_file and new_token:
        fd = os.open(token_file + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, new_token.encode() + b"\n")
        os.close(fd)
        os.rename(token_file + ".tmp", token_file)
    fd = c.connect_to_eis(session)
    st = os.fstat(fd)
    s = socket.socket(fileno=fd)
    kind = "unix-stream" if stat.S_ISSOCK(st.st_mode) and s.family == socket.AF_UNIX and s.type == socket.SOCK_STREAM else "other"
    r, _, _ = select.select([s], [], [], 60)
    first = s.recv(4096, socket.MSG_PEEK) if r else b""
    out(f"eis fd {fd} {kind} first-bytes {len(first)}")
    if screen:
        pw = c.open_pipewire_remote(session)
        kind, peer, done = pipewire_check(pw)
        out(f"pipewire fd {pw} {kind} peer {peer} sync-done {'yes' if done else 'no'}")
    out("holding")
    for line in sys.stdin:
        if line.strip() == "send":
            send_input(fd)
    c.bus.call_sync(PORTAL, session, "org.freedesktop.portal.Session", "Close", None, None,
                    Gio.DBusCallFlags.NONE, 60000, None)
    s.close()
    out("closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
