"""A scripted barrier server for the bench: Debian's barrierc (barrier 2.4, the client of the
barrier/input-leap family) connects to it, enters its screen, and injects the absolute moves it is sent
through XTest, as it does for a real barrier server.

The protocol, as barrier's source and QEMU's input-barrier notes describe it: every message is a 32-bit
big-endian length, then the payload; a payload starts with a four-letter code (the hello's is "Barrier"),
numbers big-endian. The server says hello (protocol 1.6), the client answers with its name; the server asks
for the screen's shape (QINF), the client gives it (DINF: x, y, width, height, warp, mouse x, mouse y as
16-bit numbers), the server acknowledges it (CIAK), resets and sets options (CROP, DSOP with none), and
enters the screen (CINN: x, y, a 32-bit sequence number, the modifier mask). Then DMMV x y moves the pointer
to x, y. Keep-alives (CALV) go both ways; the client gives up after three missed (3 s apart), so the server
sends one every second. TLS is off with barrierc's own --disable-crypto.
"""
import os, socket, struct, subprocess, threading, time


def _frame(payload):
    return struct.pack(">I", len(payload)) + payload


class BarrierServer:
    """Listens on 127.0.0.1, starts barrierc in the foreground against it on `display`, and drives it."""

    def __init__(self, display, tmp, barrierc="barrierc", timeout=20):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        port = self.listener.getsockname()[1]
        home = os.path.join(tmp, f"barrier-home-{time.monotonic_ns()}")
        os.makedirs(home)
        env = {**os.environ, "HOME": home, "DISPLAY": display, "XDG_CONFIG_HOME": os.path.join(home, "config"),
               "XDG_DATA_HOME": os.path.join(home, "data")}
        self.proc = subprocess.Popen([barrierc, "--no-daemon", "--no-restart", "--no-tray", "--disable-crypto",
                                      "--debug", "WARNING", "--name", "bench", "--display", display,
                                      "--profile-dir", os.path.join(home, "profile"), f"127.0.0.1:{port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        self.pid = self.proc.pid
        self.listener.settimeout(timeout)
        try:
            self.sock, _ = self.listener.accept()
        except socket.timeout:
            self.proc.kill()
            raise SystemExit(f"bench: barrierc did not connect within {timeout} s: {self._stderr()}")
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(timeout)
        self.lock = threading.Lock()
        self.send(b"Barrier" + struct.pack(">hh", 1, 6))
        hello = self._read()
        if not hello.startswith(b"Barrier"):
            raise SystemExit(f"bench: barrierc's hello: {hello[:32]!r}")
        self.send(b"QINF")
        info = self._read_code(b"DINF")
        self.screen = struct.unpack(">7h", info[4:18])
        self.send(b"CIAK")
        self.send(b"CROP")
        self.send(b"DSOP" + struct.pack(">I", 0))
        self.sequence = 1
        self.send(b"CINN" + struct.pack(">hhIh", 5, 5, self.sequence, 0))
        self.running = True
        self.sock.settimeout(None)
        threading.Thread(target=self._drain, daemon=True).start()
        threading.Thread(target=self._keep_alive, daemon=True).start()

    def _stderr(self):
        try:
            return self.proc.stderr.read().decode(errors="replace")[-400:]
        except Exception:
            return ""

    def _exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise SystemExit(f"bench: barrierc closed the connection: {self._stderr()}")
            data += chunk
        return data

    def _read(self):
        (n,) = struct.unpack(">I", self._exactly(4))
        return self._exactly(n)

    def _read_code(self, code):
        while True:
            message = self._read()
            if message[:4] == code:
                return message

    def _drain(self):
        """What barrierc says after entering (its keep-alives, a DINF again): read and let go."""
        try:
            while self.running:
                self._read()
        except (OSError, SystemExit):
            pass

    def _keep_alive(self):
        while self.running:
            time.sleep(1)
            try:
                self.send(b"CALV")
            except OSError:
                return

    def send(self, payload):
        data = _frame(payload)
        with self.lock:
            self.sock.sendall(data)

    def move(self, x, y):
        """DMMV: the pointer to x, y; returns the monotonic time just before the send, in ns."""
        data = _frame(b"DMMV" + struct.pack(">hh", x, y))
        with self.lock:
            t = time.monotonic_ns()
            self.sock.sendall(data)
        return t

    # The process, as the bench's other bridges are measured.
    def tasks(self):
        return os.listdir(f"/proc/{self.pid}/task")

    def stop(self):
        self.running = False
        try:
            self.sock.close()
        except OSError:
            pass
        self.listener.close()
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
