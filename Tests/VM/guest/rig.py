"""The VM rig's shared guest Python, imported by every stage's guest tests (vmtest.py, waylandtest.py,
typingtest.py, desktopstest.py, portaltest.py, portaltest_kde.py, deb-test.py); each test-*.sh copies it
into its share beside them. Not a test itself.

What is here: where the share's binaries are (BIN, LIB, OUT, ENV); TestFailure and check(); Proc, a
child process whose output lines a test waits on, and its kinds: Watch (xi2watch on :0), Daemon
(touchbridge serve with the tests' listeners), Drive (uinput-drive); the phone's side (PoseAI packets,
stream(), the page's WebSocket and SECRET, pen messages); the fingers' expected pixels; until(), the
bounded poll; run_test(), which prints a test's `PASS <name> <seconds>` or `FAIL <name> <seconds> <reason>`.
Every wait has a timeout; nothing proves absence by sleeping.
"""
import os
import base64
import re
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import traceback

SHARE = "/share"
# guest-init.sh copies /share/bin and /share/lib here (RAM).
BIN = "/tmp/tb/bin"
LIB = "/tmp/tb/lib"
OUT = os.path.join(SHARE, "out")
ENV = dict(os.environ, DISPLAY=":0", LD_LIBRARY_PATH=LIB)


class TestFailure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise TestFailure(message)


class Proc:
    """A child process whose stdout lines are collected by a thread; wait_for() waits on them."""

    def __init__(self, name, argv, env=None, stdin=False, merge_stderr=False):
        """`merge_stderr`: its stderr (a daemon's log) is read as lines too; else it goes to a file."""
        self.name = name
        self.lines = []
        self.cond = threading.Condition()
        self.errlog = open(os.path.join(OUT, f"{name}.stderr"), "a")
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else self.errlog,
                                  stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                  env=env or ENV, text=True, bufsize=1)
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    @property
    def mark(self):
        with self.cond:
            return len(self.lines)

    def wait_for(self, pred, timeout, what, since=0):
        """The first line at or after index `since` for which pred(line) holds (a match object or
        True); fails the test after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        i = since
        with self.cond:
            while True:
                while i < len(self.lines):
                    r = pred(self.lines[i])
                    if r:
                        return r
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and i >= len(self.lines)):
                    tail = "\n    ".join(self.lines[-15:])
                    raise TestFailure(f"{self.name}: no {what} within {timeout} s "
                                      f"(exit={self.p.poll()}); last lines:\n    {tail}")
                self.cond.wait(min(left, 0.5))

    def since(self, mark):
        with self.cond:
            return list(self.lines[mark:])

    def send(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)
        self.t.join(5)
        return self.p.returncode


def note(text):
    """Evidence for the log: what a test measured."""
    print(f"  {text}", flush=True)


def regex(pattern):
    r = re.compile(pattern)
    return lambda line: r.search(line)


class Watch(Proc):
    """xi2watch on :0."""

    def __init__(self):
        super().__init__("xi2watch", [os.path.join(BIN, "xi2watch")], stdin=True)
        self.wait_for(lambda l: l == "ready", 20, "`ready`")

    def sync(self):
        m = self.mark
        self.send("sync")
        self.wait_for(lambda l: l == "synced", 20, "`synced`", m)

    def query(self):
        m = self.mark
        self.send("query")
        r = self.wait_for(regex(r"^pointer x=(-?\d+) y=(-?\d+) buttons=(\d+)"), 20, "`pointer`", m)
        return int(r.group(1)), int(r.group(2)), int(r.group(3))

    def pointers(self):
        """Every master pointer as {name: (id, x, y)} and every slave as {name: (id, master id, enabled)}
        (names with `_` for spaces), as the server has them now."""
        m = self.mark
        self.send("pointers")
        self.wait_for(lambda l: l == "pointers-end", 20, "`pointers-end`", m)
        masters, slaves = {}, {}
        for line in self.since(m):
            r = re.match(r"^master id=(\d+) x=(-?\d+) y=(-?\d+) name=(\S+)$", line)
            if r:
                masters[r.group(4)] = (int(r.group(1)), int(r.group(2)), int(r.group(3)))
            r = re.match(r"^slave id=(\d+) master=(\d+) enabled=(\d) name=(\S+)$", line)
            if r:
                slaves[r.group(4)] = (int(r.group(1)), int(r.group(2)), r.group(3) == "1")
            if line == "pointers-end":
                break
        return masters, slaves

    def device_named(self, fragment, since=0, timeout=20):
        """The X id and the scroll classes of the device named *fragment* that appeared since `since`,
        once X has enabled it (events sent before are not read by X)."""
        r = self.wait_for(regex(r"^device src=(\d+) name=(\S*" + re.escape(fragment) + r"\S*)(.*)$"), timeout,
                          f"a device named *{fragment}*", since)
        self.wait_for(regex(rf"^enabled src={r.group(1)}$"), timeout, f"device {r.group(1)} enabled", since)
        return int(r.group(1)), r.group(3)


def private_env(owner=None):
    """XDG_STATE_HOME, XDG_CONFIG_HOME and HOME of their own for each daemon, owned by `owner` (a uid)
    when the daemon runs as another user."""
    d = tempfile.mkdtemp(prefix="tb-home-")
    for sub in ("state", "config"):
        os.makedirs(os.path.join(d, sub), mode=0o700)
    if owner is not None:
        for sub in ("", "state", "config"):
            os.chown(os.path.join(d, sub), owner, owner)
    return dict(ENV, HOME=d, XDG_STATE_HOME=os.path.join(d, "state"), XDG_CONFIG_HOME=os.path.join(d, "config"))


def write_secret(env, secret, owner=None):
    """The pairing secret the page's tests pair with, where `serve` reads it (XDG_STATE_HOME/touchbridge)."""
    d = os.path.join(env["XDG_STATE_HOME"], "touchbridge")
    os.makedirs(d, mode=0o700)
    path = os.path.join(d, "pairing-secret")
    with open(path, "w") as f:
        f.write(secret + "\n")
    os.chmod(path, 0o600)
    if owner is not None:
        os.chown(d, owner, owner)
        os.chown(path, owner, owner)


class Daemon(Proc):
    """touchbridge serve on :0, PoseAI on an ephemeral UDP port of 127.0.0.1, other listeners off."""

    def __init__(self, *extra, mode="touchscreen", secret=None, http_port=0):
        env = private_env()
        if secret:
            write_secret(env, secret)
        self.serve("touchbridge", ["--display", ":0", *extra], mode, http_port, env)

    def serve(self, name, options, mode, http_port, env, run_as=(), timeout=60):
        """Starts `touchbridge serve` (behind the `run_as` command, if any) with the tests' listeners and
        `options`, and waits until it listens."""
        argv = [*run_as, os.path.join(BIN, "touchbridge"), "serve", "--udp-port", "0", "--tuio-port", "0",
                "--http-port", str(http_port), "--bind", "127.0.0.1", "--mode", mode, "--idle-release-ms", "5000",
                "--log-level", "debug", *options]
        Proc.__init__(self, name, argv, env=env, merge_stderr=True)
        r = self.wait_for(regex(r"^listening poseai-udp (\S+):(\d+)"), timeout, "`listening poseai-udp` line")
        self.port = int(r.group(2))
        self.http_port = http_port
        if http_port:
            self.wait_for(regex(r"^listening http "), 60, "`listening http` line")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))

    def send(self, packet):
        self.sock.sendto(packet.encode(), ("127.0.0.1", self.port))


ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def enc(v):
    """Two base64 digits for v in -1…+1 (raw = round((v+1)·2047), 0…4095), as PoseAI sends it."""
    r = min(max(int(round((v + 1) * 2047)), 0), 4095)
    return ALPHABET[r // 64] + ALPHABET[r % 64]


def packet(fingers, ended=()):
    """A PoseAI packet: `fingers` maps slot → (x, y) in -1…+1 for every finger down; `ended` lists
    slots lifted in this packet."""
    touches = "".join(f"{s}{enc(x)}{enc(y)}" for s, (x, y) in sorted(fingers.items()))
    touches += "".join(f"{s}====" for s in ended)
    state = "".join(enc(fingers[s][0]) + enc(fingers[s][1]) if s in fingers else "====" for s in range(10))
    return '{"Touches":"%s","TouchState":"%s","Timestamp":0,"PF":1}' % (touches, state)


def stream(daemon, frames, period=0.02):
    """Sends one PoseAI packet per frame ({slot: (x, y)} in -1…+1) every `period` s, like a phone's
    touch stream, then lifts every finger of the last frame."""
    for f in frames:
        daemon.send(packet(f))
        time.sleep(period)
    daemon.send(packet({}, ended=sorted(frames[-1])))


class Drive(Proc):
    """uinput-drive: TouchUInput's devices, driven by commands."""

    def __init__(self):
        super().__init__("uinput-drive", [os.path.join(BIN, "uinput-drive")], stdin=True)

    def do(self, *commands):
        """Sends each command and waits for its answer; fails on `error`. Returns the last answer."""
        answer = ""
        answered = lambda l: l.startswith(("ok ", "created ", "error "))
        for c in commands:
            m = self.mark
            self.send(c)
            answer = self.wait_for(lambda l: l if answered(l) else None, 20, f"an answer to `{c}`", m)
            check(not answer.startswith("error"), f"uinput-drive: `{c}` → {answer}")
        return answer


def wait_count(proc, mark, prefix, n, timeout, what):
    """Waits until `n` lines starting with `prefix` arrived since `mark`; returns them."""
    seen = []
    proc.wait_for(lambda l: (seen.append(l) or len(seen) >= n) if l.startswith(prefix) else False, timeout, what, mark)
    return seen


def expected_pixel(v, origin, size):
    """Where the finger at v (-1…+1) should land on a monitor (origin, size): the rig's formula,
    independent of the core's (±1 allowed)."""
    raw = min(max(int(round((v + 1) * 2047)), 0), 4095)
    return origin + min(max(int(round(raw / 4094 * (size - 1))), 0), size - 1)


def check_fingers_at(fingers, got, area):
    """Each finger (slot → device point, in slot order) was seen at its pixel (±1) in `area`
    (x, y, width, height); `got` holds the (id, x, y) seen, in the same order."""
    ox, oy, w, h = area
    for (slot, (fx, fy)), (_, gx, gy) in zip(sorted(fingers.items()), got):
        ex, ey = expected_pixel(fx, ox, w), expected_pixel(fy, oy, h)
        check(abs(gx - ex) <= 1 and abs(gy - ey) <= 1, f"finger {slot} at ({gx},{gy}), want ({ex},{ey}) ±1")


SECRET = "0123456789abcdef0123456789abcdef"


class WebSocket:
    """A minimal WebSocket client (RFC 6455): the page's side, text frames out; what the daemon sends back
    is kept, in order (text as str, the live view's binary frames as bytes), for the tests that wait on it
    (`mark`, `wait`); a ping is answered."""

    def __init__(self, port, source="127.0.0.1", keepalive=False):
        """A page on the daemon's web port, from `source` (a loopback address: a person of its own). With
        `keepalive`, a WebSocket ping every 2 s, as the real page's `ping` (the daemon closes a page it has
        heard nothing from for 10 s: a test slowed by a loaded machine may be quiet that long)."""
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET /ws?k={SECRET} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.s.recv(4096)
            check(chunk, f"the WebSocket handshake got no answer: {head!r}")
            head += chunk
        check(head.startswith(b"HTTP/1.1 101"), f"the WebSocket upgrade was refused: {head[:200]!r}")
        self.s.settimeout(None)
        self.messages = []
        self.cond = threading.Condition()
        self.sending = threading.Lock()
        self.rest = head[head.index(b"\r\n\r\n") + 4:]
        threading.Thread(target=self._drain, daemon=True).start()
        if keepalive:
            threading.Thread(target=self._keepalive, daemon=True).start()

    def _keepalive(self):
        try:
            while True:
                time.sleep(2)
                self._frame(0x9, b"")
        except OSError:
            pass

    def _drain(self):
        buf = self.rest
        try:
            while True:
                while len(buf) >= 2:
                    n, at = buf[1] & 0x7F, 2
                    if n == 126:
                        n, at = int.from_bytes(buf[2:4], "big"), 4
                    elif n == 127:
                        n, at = int.from_bytes(buf[2:10], "big"), 10
                    if len(buf) < at + n:
                        break
                    opcode, payload, buf = buf[0] & 0x0F, buf[at:at + n], buf[at + n:]
                    if opcode == 9:
                        self._frame(0xA, payload)
                    elif opcode in (1, 2):
                        with self.cond:
                            self.messages.append(payload.decode() if opcode == 1 else payload)
                            self.cond.notify_all()
                chunk = self.s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        except OSError:
            pass

    @property
    def mark(self):
        """Where the messages received from now on begin."""
        with self.cond:
            return len(self.messages)

    def wait(self, since, timeout, what, match):
        """The first message from index `since` on for which `match` is true; fails after `timeout` s."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(since, len(self.messages)):
                    if match(self.messages[i]):
                        return i, self.messages[i]
                left = deadline - time.monotonic()
                if left <= 0:
                    shown = [m if isinstance(m, str) else f"<{len(m)} bytes>" for m in self.messages[since:]][-10:]
                    raise TestFailure(f"{what}: not received within {timeout} s (received since: {shown})")
                self.cond.wait(left)

    def _frame(self, opcode, data):
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode, 0x80 | n]) if n < 126 else bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
        with self.sending:
            self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def send(self, text):
        self._frame(0x1, text.encode())

    def close(self):
        """Ends the connection as a browser does: shutdown sends the FIN at once and wakes the drain
        thread's recv (a bare close while that recv is blocked would keep the socket open, so the daemon
        would never hear the page go)."""
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.s.close()
        except OSError:
            pass


def view_frame(frame, what):
    """The live view's frame (docs/wire-format.md): its header's monitor and picture sizes, and the size in
    its JPEG's own SOF0 marker, checked to be a whole baseline JPEG."""
    check(isinstance(frame, bytes) and len(frame) > 12 and frame[:2] == b"V\x01", f"{what}: not a view frame: {frame[:16]!r}")
    mw, mh, pw, ph = struct.unpack(">HHHH", frame[2:10])
    jpeg = frame[10:]
    check(jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9", f"{what}: not a whole JPEG")
    i = 2
    while i + 9 < len(jpeg) and jpeg[i] == 0xFF:
        if jpeg[i + 1] == 0xC0:
            jh, jw = struct.unpack(">HH", jpeg[i + 5:i + 9])
            return (mw, mh), (pw, ph), (jw, jh), jpeg
        i += 2 + int.from_bytes(jpeg[i + 2:i + 4], "big")
    raise TestFailure(f"{what}: no baseline SOF0 marker in the JPEG")


def view_settles(ws, ask, what, ping_base=0, turns=20):
    """Asks the view (`ask`: "view 480 480"), a ping after each ask, until an ask's ping is answered with no
    frame before it (`what` was shown settled). The mark of that last ask (its frame comes with the next
    change) and the last frame received before it, if any."""
    last = None
    for turn in range(turns):
        m = ws.mark
        n = ping_base + turn
        ws.send(ask)
        ws.send(f"ping {n}")
        i, _ = ws.wait(m, 30, "the ping's answer", lambda x, t=n: x == f"pong {t}")
        got = [x for x in ws.messages[m:i] if isinstance(x, bytes)]
        if not got:
            return m, last
        last = got[-1]
        note(f"ask {turn + 1}: a frame ({what} was still changing, or the size was new)")
    raise TestFailure(f"{what} never settled: every ask got a frame")


def jpeg_pixels(jpeg):
    """A JPEG decoded by libturbojpeg (in the VM's rootfs for the view): (width, height, RGB bytes)."""
    import ctypes
    tj = ctypes.CDLL("libturbojpeg.so.0")
    tj.tjInitDecompress.restype = ctypes.c_void_p
    handle = tj.tjInitDecompress()
    try:
        w, h, sub, cs = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        src = ctypes.create_string_buffer(bytes(jpeg), len(jpeg))
        rc = tj.tjDecompressHeader3(ctypes.c_void_p(handle), src, ctypes.c_ulong(len(jpeg)), ctypes.byref(w), ctypes.byref(h),
                                    ctypes.byref(sub), ctypes.byref(cs))
        check(rc == 0, "libturbojpeg cannot read the JPEG's header")
        out = ctypes.create_string_buffer(w.value * h.value * 3)
        # TJPF_RGB is 0; pitch 0: width * 3.
        rc = tj.tjDecompress2(ctypes.c_void_p(handle), src, ctypes.c_ulong(len(jpeg)), out, w, 0, h, 0, 0)
        check(rc == 0, "libturbojpeg cannot decode the JPEG")
        return w.value, h.value, out.raw
    finally:
        tj.tjDestroy(ctypes.c_void_p(handle))


def jpeg_colour_at(jpeg, fx, fy):
    """The mean colour (r, g, b) of a 5x5 patch of the decoded JPEG around the fraction (fx, fy) of its size."""
    w, h, rgb = jpeg_pixels(jpeg)
    cx, cy = int(fx * (w - 1)), int(fy * (h - 1))
    total, n = [0, 0, 0], 0
    for y in range(max(0, cy - 2), min(h, cy + 3)):
        for x in range(max(0, cx - 2), min(w, cx + 3)):
            i = (y * w + x) * 3
            for c in range(3):
                total[c] += rgb[i + c]
            n += 1
    return tuple(round(t / n) for t in total)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setxkbmap(layout):
    subprocess.run(["setxkbmap", layout], check=True, env=ENV, timeout=60)


def pen_msg(state, x, y, pressure=0.0, tilt=(0, 0), flags="-"):
    """One pen message, as the page writes it."""
    return f"pen {state} {x:.4f} {y:.4f} {pressure:.3f} {tilt[0]} {tilt[1]} 0 {flags}"


def pen_pixel(f, size):
    """Where a pad fraction lands on the whole screen: the page's four decimals, 0…4094, the floor."""
    raw = int(round(round(f, 4) * 4094))
    return min(size - 1, raw * size // 4094)


def until(seconds, what, ready, period=0.1):
    """Polls ready() every `period` s until it returns something true, and returns that; fails after
    `seconds` (by time.monotonic)."""
    end = time.monotonic() + seconds
    while True:
        r = ready()
        if r:
            return r
        if time.monotonic() > end:
            raise TestFailure(f"{what}: not within {seconds} s")
        time.sleep(period)


def failure_text(e):
    """What a FAIL line says of `e` (called while handling it): a TestFailure's message, else the traceback."""
    return str(e) if isinstance(e, TestFailure) else traceback.format_exc()


def run_test(name, fn, *args):
    """Runs fn(*args) as the test `name`: prints `PASS <name> <seconds>`, or `FAIL <name> <seconds> <reason>`
    for any exception (reported, never raised: the caller's run goes on or stops as it decides). True
    when it passed."""
    start = time.monotonic()
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        print(f"FAIL {name} {time.monotonic() - start:.1f} {failure_text(e)}", flush=True)
        return False
    print(f"PASS {name} {time.monotonic() - start:.1f}", flush=True)
    return True


def wanted_tests():
    """The test names a stage's script wrote to the share's `tests` file (none, or no file: every test)."""
    path = os.path.join(SHARE, "tests")
    return [l.strip() for l in open(path).read().split() if l.strip()] if os.path.exists(path) else []
