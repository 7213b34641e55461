"""LibreOffice Impress for the bench's impress row and scripts/screenshot-presenter.py: soffice with a profile of
its own (the remote control on, `touchbridge` authorised with the PIN, so no dialog) and the tests' deck
(Tests/IntegrationTests/Support/impress_deck.py: three slides with notes), and a raw client of Impress's own
remote protocol (messages are lines ended by an empty line), as ImpressTests.swift and
Sources/TouchImpress/ImpressConnection.swift describe them. Standard library only.

Impress's port, 127.0.0.1:1599, is one per machine: run whatever starts an Office under
`flock /tmp/impress-1599.lock ...` when the tests (ImpressTests) may run beside it. Office.stop() kills every
process that names the profile (soffice's script, oosplash, soffice.bin) until nothing listens on 1599. Close the
clients (touchbridge too) before it: a socket that Impress closes first stays in TIME_WAIT on port 1599 for 60 s,
and a new soffice cannot listen there until it is gone (Office waits for that).
"""
import os, shutil, signal, socket, subprocess, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = 1599
PIN = "0427"
DECK_MAKER = os.path.join(ROOT, "Tests", "IntegrationTests", "Support", "impress_deck.py")


def registry(pin):
    """The profile's registry: the remote control on, touchbridge authorised with `pin`, no first-run dialogs."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Impress/Misc/Start"><prop oor:name="EnableSdremote" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Impress/Misc/AuthorisedRemotes"><node oor:name="touchbridge" oor:op="replace"><prop oor:name="PIN" oor:op="fuse"><value>{pin}</value></prop></node></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""


def listening():
    """Whether something listens on 127.0.0.1:1599 (a connection made and closed at once)."""
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
        return True
    except OSError:
        return False


def port_held():
    """The states of the sockets whose local port is 1599 (/proc/net/tcp): one in FIN_WAIT2 (05) or TIME_WAIT (06) is
    left where Impress closed first, killed with clients connected, and a new soffice's server then never listens
    (its bind fails while such a socket lasts, up to a minute; seen: FIN_WAIT2 with the client still open, no
    listener within 30 s)."""
    states = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == PORT:
                        states.append(fields[3])
        except OSError:
            pass
    return states


def processes_naming(text):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in line:
            found.append(int(entry))
    return found


class Office:
    """soffice --impress with the deck, opened normally (not --show), on `display`; started once nothing listens on
    1599, and waited for until its remote server listens. `meanwhile` runs every 2 s of the wait (a page pings)."""

    def __init__(self, display, pin=PIN, meanwhile=lambda: None, timeout=120):
        if listening():
            raise RuntimeError("something already listens on 127.0.0.1:1599 (another Impress?)")
        # A killed Impress's TIME_WAIT: its port cannot be bound again until it is gone.
        wait_until(lambda: not port_held(), 90, meanwhile, 0.5,
                   lambda: f"port 1599 still held after 90 s: socket states {port_held()}")
        soffice = shutil.which("soffice")
        if soffice is None:
            raise RuntimeError("soffice is not installed (Debian: libreoffice-impress; scripts/bench-deps.sh)")
        self.directory = tempfile.mkdtemp(prefix="touchbridge-impress-")
        self.proc = None
        try:
            os.makedirs(os.path.join(self.directory, "profile", "user"))
            with open(os.path.join(self.directory, "profile", "user", "registrymodifications.xcu"), "w") as f:
                f.write(registry(pin))
            self.deck = os.path.join(self.directory, "deck.odp")
            made = subprocess.run(["/usr/bin/python3", DECK_MAKER, self.deck], capture_output=True, text=True, timeout=60)
            if made.returncode != 0 or not os.path.exists(self.deck):
                raise RuntimeError(f"the deck was not made (python3-odf installed?): {made.stderr[-400:]}")
            self.log = open(os.path.join(self.directory, "soffice.log"), "w")
            self.proc = subprocess.Popen([soffice, f"-env:UserInstallation=file://{self.directory}/profile", "--norestore",
                                          "--nologo", "--nodefault", "--impress", self.deck],
                                         env={**os.environ, "DISPLAY": display, "SAL_USE_VCLPLUGIN": "x11"},
                                         stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
            deadline, due = time.time() + timeout, 0
            while not listening():
                if time.time() > deadline:
                    self.log.flush()
                    with open(self.log.name) as f:
                        tail = f.read()[-600:]
                    raise RuntimeError(f"soffice's remote server did not listen on 1599 within {timeout} s: {tail}")
                if time.time() >= due:
                    meanwhile()
                    due = time.time() + 2
                time.sleep(0.2)
        except BaseException:
            self.stop()
            raise

    def stop(self):
        """Kills soffice and what it started (by the process group and by every process naming the profile) until
        none is left and nothing listens on 1599 (at most 30 s); removes the profile and deck."""
        profile = os.path.join(self.directory, "profile")
        deadline = time.time() + 30
        while True:
            pids = set(processes_naming(profile))
            if self.proc is not None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                pids.add(self.proc.pid)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if self.proc is not None:
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            if not processes_naming(profile) and not listening():
                break
            if time.time() > deadline:
                print(f"impress: soffice of {profile} still there after 30 s", flush=True)
                break
            time.sleep(0.2)
        shutil.rmtree(self.directory, ignore_errors=True)


def middle_rgb(display):
    """The colour of the middle of the root window (xwd -root, x11-apps; 24-bit Xvfb, 32 bits a pixel)."""
    data = subprocess.run(["xwd", "-root", "-silent", "-display", display], capture_output=True, check=True).stdout
    field = lambda i: int.from_bytes(data[4 * i:4 * i + 4], "big")
    header, width, height, order, bpp, stride, ncolors = field(0), field(4), field(5), field(7), field(11), field(12), field(19)
    if bpp != 32:
        raise RuntimeError(f"xwd: {bpp} bits a pixel")
    at = header + 12 * ncolors + (height // 2) * stride + (width // 2) * 4
    px = data[at:at + 4]
    return (px[2], px[1], px[0]) if order == 0 else (px[1], px[2], px[3])


def wait_drawn(display, fill=(0xc0, 0x20, 0x20), timeout=120, meanwhile=lambda: None):
    """Waits until the middle of the screen is `fill` (the deck's first slide, red): Impress's editing view has
    drawn the document. A show started before that takes no command (LibreOffice 7.4 under Xvfb)."""
    seen = [None]

    def drawn():
        seen[0] = middle_rgb(display)
        return all(abs(a - b) <= 40 for a, b in zip(seen[0], fill))
    wait_until(drawn, timeout, meanwhile, 0.3,
               lambda: f"Impress's document was not drawn within {timeout} s: the middle of the screen is {seen[0]}")


def wait_until(done, timeout, meanwhile, period, failure):
    """Waits until `done()`, looked at every `period` s, for at most `timeout` s (then RuntimeError(failure()));
    `meanwhile` runs first and then every 2 s (a page pings there, so that it is not closed as silent)."""
    deadline, due = time.time() + timeout, 0
    while not done():
        if time.time() > deadline:
            raise RuntimeError(failure())
        if time.time() >= due:
            meanwhile()
            due = time.time() + 2
        time.sleep(period)


class RawClient:
    """A client of Impress's remote protocol, paired as `name` with `pin`: every message kept as (arrival ns,
    [lines]) as it is read."""

    def __init__(self, pin=PIN, name="touchbridge", timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.messages = []
        self.closed = False
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.send("LO_SERVER_CLIENT_PAIR", name, pin)
        if self.wait_for(0, lambda m: m[0] == "LO_SERVER_SERVER_PAIRED", timeout) is None:
            raise RuntimeError(f"Impress did not pair: {[m[:1] for _, m in self.messages]}")

    def _read(self):
        buf = b""
        try:
            while True:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
                while b"\n\n" in buf:
                    raw, buf = buf.split(b"\n\n", 1)
                    lines = raw.decode(errors="replace").lstrip("\n").split("\n")
                    if lines == [""]:
                        continue
                    with self.cond:
                        self.messages.append((time.monotonic_ns(), lines))
                        self.cond.notify_all()
        except OSError:
            pass
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def send(self, *lines):
        self.sock.sendall(("\n".join(lines) + "\n\n").encode())

    @property
    def mark(self):
        with self.cond:
            return len(self.messages)

    def wait_for(self, start, predicate, timeout):
        """The index of the first message from `start` on whose lines satisfy predicate, or None after timeout."""
        deadline = time.monotonic() + timeout
        i = start
        with self.cond:
            while True:
                while i < len(self.messages):
                    if predicate(self.messages[i][1]):
                        return i
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    return None
                self.cond.wait(left)

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
