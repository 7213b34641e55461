#!/usr/bin/env python3
"""make bench: every stage of touchbridge, side by side with its references, in one run.

Runs the release binaries in BIN (default .build/release) on a private Xvfb it starts itself and
prints one table; writes the same as JSON to .bench/results-<UTC time>.json and .bench/latest.json.

  decode     touchbridge-bench decode       PoseAIDecoder vs JSONSerialization vs JSONDecoder
  core       touchbridge-bench core         TouchPipeline.handle, 1, 2, 10 fingers
  inject     touchbridge-bench inject       XTestOutput vs xtest-reference loop vs xdotool
  e2e        touchbridge replay -> touchbridge serve -> X -> xobserve, vs xtest-reference stream -> X -> xobserve
  closed     closed loop (send one packet, wait for its XI2 motion, repeat): ideal-bridge (C), and asleep in
             epoll_wait, vs touchbridge over UDP vs over WebSocket vs barrierc (Debian's barrier 2.4, driven by the
             scripted server in barrier.py); a WebSocket burst; syscalls per packet (strace -c)
  blast      a page's blast over WebSocket (15,000 moves/s for 3 s, unread): its last motion after the blast's end
  cost       touchbridge serve: CPU streaming 120/s for 30 s, wake-ups idle for 30 s, RSS (ideal-bridge beside)
  flood      a live 120 Hz sender while a flooder sends as fast as it can from other ports and 127.0.0.2-5: the
             share of the sender's packets X shows
  people     person 1's closed loop over UDP (the core pointer) alone, while person 2 streams at 120 Hz on their own
             master, and while person 2 sends as fast as one socket can (--people 2)
  view       the live view, pulled by a page's client at 960x540: CPU per frame of a changing 1920x1080 screen vs a
             C loop (XShmGetImage + tjCompress2, compiled here with cc), frames/s, a still screen's frames, bytes and
             wake-ups over 30 s (vs the same with `view off`), peak RSS; a screen change to its picture painted on
             the page in a real headless Chromium (view_page.py) vs the C loop's time for one frame
  impress    the presenter's view: a page's slide next/previous to its show and notes lines through touchbridge, vs
             Impress's own remote client's transition_next/previous to slide_updated (LibreOffice Impress, soffice,
             on port 1599: run under `flock /tmp/impress-1599.lock` when ImpressTests may run beside it)

Environment: BENCH_ONLY=decode,core,... runs a subset (BENCH_ONLY=blast needs only touchbridge and xobserve); BENCH_E2E_COUNT (default 1200) packets per
end-to-end case; BENCH_CLOSED_COUNT (default 1000) packets per closed-loop case; BENCH_COST_SECONDS (default 30);
BENCH_FLOOD_SECONDS (default 5) of the flood row's stream; BENCH_VIEW_STILL_SECONDS (default 30) of a still screen,
BENCH_VIEW_STREAM_SECONDS (default 12) of a changing one, BENCH_VIEW_PAGE_CHANGES (default 60) changes seen by the page.
BENCH_ONLY=view needs only touchbridge and xobserve (and cc, and Chromium with the Playwright venv: scripts/deps.sh).
BENCH_IMPRESS_TURNS (default 40) turns per impress case; BENCH_ONLY=impress needs only touchbridge and xobserve (and soffice,
python3-odf: scripts/bench-deps.sh).
BENCH_BASELINE=DIR adds another build's touchbridge (DIR/touchbridge) to the closed-loop blocks and syscall rows,
interleaved with this one's, to compare two builds on a loaded machine, and a flood row of its own.
"""
import base64, json, os, platform, re, shutil, socket, statistics, subprocess, sys, tempfile, threading, time
from barrier import BarrierServer
from view_page import page_latency

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release")
ONLY = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
E2E_COUNT = int(os.environ.get("BENCH_E2E_COUNT", "1200"))
COST_SECONDS = float(os.environ.get("BENCH_COST_SECONDS", "30"))
CLOSED_COUNT = int(os.environ.get("BENCH_CLOSED_COUNT", "1000"))
FLOOD_SECONDS = float(os.environ.get("BENCH_FLOOD_SECONDS", "5"))
BASELINE = os.environ.get("BENCH_BASELINE")
WIDTH, HEIGHT = 1920, 1080
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
rows = []          # every measurement, as printed and as written to JSON
tmp = tempfile.mkdtemp(prefix="touchbridge-bench-")


def log(text):
    print(text, file=sys.stderr, flush=True)


def wanted(group):
    return not ONLY or group in ONLY


def row(group, name, median, lo, hi, unit, target=None, ok=None, **extra):
    r = dict(group=group, name=name, median=median, min=lo, max=hi, unit=unit, target=target, met=ok, **extra)
    rows.append(r)
    return r


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


# ---------------------------------------------------------------- processes

class Xvfb:
    def __init__(self):
        for n in range(140, 400):
            if not os.path.exists(f"/tmp/.X{n}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{n}"):
                break
        self.display = f":{n}"
        self.proc = subprocess.Popen(["Xvfb", self.display, "-screen", "0", f"{WIDTH}x{HEIGHT}x24", "-noreset",
                                      "-nolisten", "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            if time.time() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"bench: Xvfb {self.display} did not start")
            time.sleep(0.05)
        time.sleep(0.2)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Observer:
    """xobserve on the display; every line kept with its index."""

    def __init__(self, display):
        self.proc = subprocess.Popen([os.path.join(BIN, "xobserve"), "-display", display], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for(0, lambda l: l == "ready", 10)

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def wait_for(self, start, predicate, timeout, fatal=True):
        deadline = time.time() + timeout
        i = start
        with self.cond:
            while True:
                while i < len(self.lines):
                    if predicate(self.lines[i]):
                        return i
                    i += 1
                left = deadline - time.time()
                if left <= 0:
                    if not fatal:
                        return None
                    raise SystemExit("bench: xobserve did not answer")
                self.cond.wait(left)

    def line(self, i):
        with self.cond:
            return self.lines[i]

    @property
    def mark(self):
        with self.cond:
            return len(self.lines)

    def command(self, text, answer):
        mark = self.mark
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        return self.wait_for(mark, lambda l: l.startswith(answer), 10)

    def sync(self):
        return self.command("sync", "synced")

    def motions(self, start, end):
        """(t_ns, rx, ry) of the motion lines in [start, end)."""
        out = []
        with self.cond:
            lines = self.lines[start:end]
        for line in lines:
            if line.startswith("motion "):
                parts = line.split()
                fields = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
                if "rx" in fields and "ry" in fields:
                    out.append((int(parts[1]), int(fields["rx"]), int(fields["ry"])))
        return out

    def stop(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(5)
        except Exception:
            self.proc.kill()


def free_port(kind):
    """A port that is free now on 127.0.0.1 (SOCK_DGRAM or SOCK_STREAM)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, display, extra=(), env=None, binary=None):
        self.proc = subprocess.Popen([binary or os.path.join(BIN, "touchbridge"), "serve", "--display", display, "--udp-port", "0",
                                      # the PoseAI stream only: no TUIO or web listener on fixed ports
                                      "--tuio-port", "0", "--http-port", "0", "--bind", "127.0.0.1", "--log-level", "warning", "--mode", "touchscreen",
                                      "--monitor", "all", "--fit", "stretch",
                                      # Xvfb reads no kernel devices: XTest whatever /dev/uinput allows
                                      "--backend", "xtest", *extra],
                                     stdout=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        m = re.match(r"listening poseai-udp (\S+):(\d+)", line)
        if not m:
            raise SystemExit(f"bench: touchbridge serve did not start: {line!r}")
        self.port = int(m.group(2))
        self.pid = self.proc.pid

    def tasks(self):
        return os.listdir(f"/proc/{self.pid}/task")

    def cpu_ns(self):
        total = 0
        for t in self.tasks():
            try:
                with open(f"/proc/{self.pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:
                pass
        return total

    def switches(self):
        total = 0
        for t in self.tasks():
            try:
                with open(f"/proc/{self.pid}/task/{t}/status") as f:
                    for line in f:
                        if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                            total += int(line.split()[1])
            except FileNotFoundError:
                pass
        return total

    def status(self, key):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ---------------------------------------------------------------- recordings

def enc(raw):
    return ALPHABET[raw // 64] + ALPHABET[raw % 64]


def pattern_raw(i):
    """Move i of the pattern (kept in step with xtest-reference): every move a new pixel."""
    return 300 + (i % 600) * 5, 600 + ((i // 600) % 100) * 25


def pixel(raw, extent):
    return min(extent - 1, raw * extent // 4094)


def write_recording(path, count, fingers, hz):
    """count packets at hz; finger 0 follows the pattern, the others move beside it; then all lift."""
    with open(path, "w") as f:
        f.write('{"recording":"touchbridge","format":1}\n')
        for i in range(count + 1):
            rx, ry = pattern_raw(i)
            touches, state = "", ["===="] * 10
            for k in range(fingers):
                if i == count:
                    touches += f"{k}===="
                else:
                    p = enc(rx) + enc(min(4095, ry + 150 * k))
                    touches += f"{k}{p}"
                    state[k] = p
            packet = '{"Timestamp":%.4f,"Touches":"%s","TouchState":"%s","Orientation":1,"PF":1}' % (
                i / hz, touches, "".join(state))
            f.write('{"t":%.6f,"from":"127.0.0.1:1","packet":"%s"}\n' % (i / hz, packet.replace('"', '\\"')))


# ---------------------------------------------------------------- stats

def pct(values, p):
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def bench_json(args):
    out = subprocess.run([os.path.join(BIN, "touchbridge-bench"), *args], capture_output=True, text=True, check=True)
    return [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]


# ---------------------------------------------------------------- groups

def decode():
    results = {r["name"]: r for r in bench_json(["decode"])}
    for label in ("typical", "50 events"):
        ours = results[f"{label}: touchbridge PoseAIDecoder"]
        js = results[f"{label}: JSONSerialization"]
        jd = results[f"{label}: JSONDecoder"]
        speedup = jd["min"] / ours["min"]  # fastest vs fastest: the least disturbed by other load
        allocs = ours["allocations_per_op"]
        target = "<= 1000 ns, >= 10x JSONDecoder, 0 allocs" if label == "typical" else ">= 10x JSONDecoder, 0 allocs"
        ok = speedup >= 10 and allocs == 0 and (label != "typical" or ours["median"] <= 1000)
        row("decode", ours["name"], ours["median"], ours["min"], ours["max"], "ns/packet", target, ok,
            allocations_per_packet=allocs, speedup_vs_jsondecoder=round(speedup, 1))
        for r in (js, jd):
            row("decode", r["name"], r["median"], r["min"], r["max"], "ns/packet", None, None,
                allocations_per_packet=r["allocations_per_op"])


def core():
    for r in bench_json(["core"]):
        row("core", r["name"], r["median"], r["min"], r["max"], "ns/packet", "<= 1000 ns",
            r["median"] <= 1000 and r["allocations_per_op"] == 0, allocations_per_packet=r["allocations_per_op"])


def inject(display):
    env = dict(os.environ, DISPLAY=display)
    ref_out = subprocess.run([os.path.join(BIN, "xtest-reference"), "loop", display, "2000", "11"],
                             capture_output=True, text=True, check=True).stdout
    ref = [float(l.split()[1]) for l in ref_out.splitlines()]
    ours = bench_json(["inject", "--display", display])[0]
    # Again, in the other order, so a drift in load does not favour one side.
    ref_out = subprocess.run([os.path.join(BIN, "xtest-reference"), "loop", display, "2000", "11"],
                             capture_output=True, text=True, check=True).stdout
    ref += [float(l.split()[1]) for l in ref_out.splitlines()]
    ref_median = statistics.median(ref)
    ratio = ours["min"] / min(ref)  # fastest vs fastest: the least disturbed by other load
    row("inject", "touchbridge XTestOutput: move + XFlush", ours["median"] / 1000, ours["min"] / 1000,
        ours["max"] / 1000, "us/event", "<= 1.5x C loop (min vs min)", ratio <= 1.5, ratio_vs_c=round(ratio, 2))
    row("inject", "C reference: XTestFakeMotionEvent + XFlush", ref_median / 1000, min(ref) / 1000, max(ref) / 1000,
        "us/event")
    if shutil.which("xdotool"):
        per_call = []
        for rep in range(5):
            t0 = time.perf_counter()
            for i in range(40):
                subprocess.run(["xdotool", "mousemove", str(100 + i), str(200 + rep)], env=env, check=True)
            per_call.append((time.perf_counter() - t0) / 40 * 1e6)
        row("inject", "xdotool mousemove, one process per event", statistics.median(per_call), min(per_call),
            max(per_call), "us/event", ratio_vs_c=round(statistics.median(per_call) * 1000 / ref_median, 1))

        def feed(n):
            script = "".join(f"mousemove {100 + i % 1000} {100 + i % 700}\n" for i in range(n))
            t0 = time.perf_counter()
            subprocess.run(["xdotool", "-"], input=script, text=True, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return time.perf_counter() - t0
        per_move = []
        for rep in range(5):
            empty = feed(0)
            per_move.append((feed(2000) - empty) / 2000 * 1e6)
        row("inject", "xdotool - (one process fed 2000 moves; start-up subtracted)", statistics.median(per_move),
            min(per_move), max(per_move), "us/event",
            ratio_vs_c=round(statistics.median(per_move) * 1000 / ref_median, 1))
    else:
        log("bench: xdotool not installed; its rows are skipped")


def latencies(observer, start, end, stamps, count):
    """Observed - sent, per move of the pattern, matched by the pixel it moved to."""
    index = {}
    for i in range(count):
        rx, ry = pattern_raw(i)
        index[(pixel(rx, WIDTH), pixel(ry, HEIGHT))] = i
    seen = {}
    for t, x, y in observer.motions(start, end):
        i = index.get((x, y))
        if i is not None and i not in seen:
            seen[i] = t
    return [(seen[i] - stamps[i]) / 1000 for i in sorted(seen)]


def read_stamps(path):
    with open(path) as f:
        return [int(l.split()[1]) for l in f if l.strip()]


def e2e(display, observer):
    """Per rate, BLOCKS rounds of: the floor, then touchbridge with 1 and with 10 fingers, so that the
    three see the same machine (load from elsewhere drifts); samples pooled per case."""
    blocks = 4
    per_block = max(1, E2E_COUNT // blocks)

    def floor_block(hz, b):
        observer.command("warp 5 5", "warped")
        mark = observer.mark
        log_path = os.path.join(tmp, f"floor-{hz}-{b}.log")
        subprocess.run([os.path.join(BIN, "xtest-reference"), "stream", display, str(per_block), str(hz), log_path],
                       check=True)
        end = observer.sync()
        return latencies(observer, mark, end, read_stamps(log_path), per_block)

    def touchbridge_block(hz, fingers, b):
        # A daemon per block: each replay is a new sender (a new source port), and a daemon follows
        # one sender until it has been silent for 10 s.
        daemon = Daemon(display)
        try:
            time.sleep(0.2)
            rec = os.path.join(tmp, f"e2e-{hz}-{fingers}.jsonl")
            if b == 0:
                write_recording(rec, per_block, fingers, hz)
            observer.command("warp 5 5", "warped")
            mark = observer.mark
            log_path = os.path.join(tmp, f"e2e-{hz}-{fingers}-{b}.log")
            subprocess.run([os.path.join(BIN, "touchbridge"), "replay", rec, "--to", f"127.0.0.1:{daemon.port}",
                            "--rate", str(hz), "--send-log", log_path], check=True, stdout=subprocess.DEVNULL)
            time.sleep(0.05)
            end = observer.sync()
        finally:
            daemon.stop()
        return latencies(observer, mark, end, read_stamps(log_path), per_block)

    for hz in (60, 120, 240):
        floor, ours = [], {1: [], 10: []}
        for b in range(blocks):
            floor += floor_block(hz, b)
            for fingers in (1, 10):
                ours[fingers] += touchbridge_block(hz, fingers, b)
        f50, f99, f999 = pct(floor, 50), pct(floor, 99), pct(floor, 99.9)
        row("e2e", f"X server floor (XTestFakeMotionEvent + XFlush -> XI2), {hz}/s", f50, f99, f999,
            "us p50 (p99, p99.9)", samples=len(floor), rate=hz, p50=f50, p99=f99, p999=f999)
        for fingers in (1, 10):
            lat = ours[fingers]
            p50, p99, p999 = pct(lat, 50), pct(lat, 99), pct(lat, 99.9)
            ok = p50 <= 1.5 * f50 and p99 <= 2 * f99
            row("e2e", f"touchbridge replay -> serve -> XI2, {fingers} finger{'s' if fingers > 1 else ''}, {hz}/s",
                p50, p99, p999, "us p50 (p99, p99.9)", "p50 <= 1.5x, p99 <= 2x floor", ok, samples=len(lat),
                rate=hz, fingers=fingers, p50=p50, p99=p99, p999=p999,
                p50_ratio=round(p50 / f50, 2), p99_ratio=round(p99 / f99, 2))


# ---------------------------------------------------------------- closed loop

CLOSED_GAP = 0.005  # between one packet's motion and the next packet: > the web path's 4 ms move pacing


def closed_packet(i, lift=False):
    rx, ry = pattern_raw(i)
    p = "====" if lift else enc(rx) + enc(ry)
    return ('{"Timestamp":%.4f,"Touches":"0%s","TouchState":"%s%s","Orientation":1,"PF":1}'
            % (i / 120, p, p, "====" * 9))


def motion_at(px, py):
    def match(line):
        if not line.startswith("motion "):
            return False
        parts = line.split()
        fields = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
        return fields.get("rx") == str(px) and fields.get("ry") == str(py)
    return match


class IdealBridge:
    """Benchmarks/ideal-bridge on the display, on a port of its own."""

    def __init__(self, display, epoll=False):
        self.proc = subprocess.Popen([os.path.join(BIN, "ideal-bridge"), display, *(["--epoll"] if epoll else [])],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening "):
            raise SystemExit(f"bench: ideal-bridge did not start: {line!r}")
        self.port = int(line.split()[1])
        self.pid = self.proc.pid

    switches = Daemon.switches
    cpu_ns = Daemon.cpu_ns
    tasks = Daemon.tasks
    status = Daemon.status
    stop = Daemon.stop


# barrierc's process, measured as the other bridges are (its pid, its threads' CPU and switches, its status).
for _name in ("switches", "cpu_ns", "status"):
    setattr(BarrierServer, _name, getattr(Daemon, _name))


def stream_packets(sock, port, packets, hz):
    """`packets` to 127.0.0.1:`port` from `sock` at `hz`, paced by absolute deadlines as replay is."""
    start = time.monotonic()
    for i, packet in enumerate(packets):
        delay = start + i / hz - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sock.sendto(packet, ("127.0.0.1", port))


def stream_moves(server, count, hz):
    """DMMV moves to barrierc at `hz`, the recording's pattern, paced by absolute deadlines as replay is."""
    start = time.monotonic()
    for i in range(count):
        delay = start + i / hz - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        rx, ry = pattern_raw(i)
        server.move(pixel(rx, WIDTH), pixel(ry, HEIGHT))


class WebSocketClient:
    """The page's side of the WebSocket, in the standard library: handshake, then masked text frames."""

    def __init__(self, port, secret):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws?k={secret} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise SystemExit("bench: the WebSocket was refused")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise SystemExit(f"bench: the WebSocket was refused: {head[:80]!r}")
        self.rest = head[head.index(b"\r\n\r\n") + 4:]  # the first messages, when they came with the head
        threading.Thread(target=self._drain, daemon=True).start()  # the hello and any reply

    def _drain(self):
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass

    @staticmethod
    def frame(text):
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
        return bytes([0x81]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))

    def close(self):
        # shutdown first: close alone leaves the connection open while the drain thread is in recv (the
        # daemon then closed it as silent, 10 s on).
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def web_daemon(display, binary=None, extra=()):
    state = os.path.join(tmp, f"state-{time.monotonic_ns()}")
    port = free_port(socket.SOCK_STREAM)
    daemon = Daemon(display, ["--http-port", str(port), *extra], env={**os.environ, "XDG_STATE_HOME": state}, binary=binary)
    path = os.path.join(state, "touchbridge", "pairing-secret")
    deadline = time.time() + 10
    while True:  # the secret is written before the web server listens; its line says it listens
        line = daemon.proc.stdout.readline()
        if line.startswith("listening http") or not line or time.time() > deadline:
            break
    with open(path) as f:
        secret = f.read().strip()
    return daemon, port, secret


def closed_loop(observer, send, first, count):
    """send(i) each packet once the previous one's motion was seen; latencies in µs, and how many were lost."""
    lat, lost = [], 0
    for i in range(first, first + count):
        rx, ry = pattern_raw(i)
        mark = observer.mark
        stamp = send(i)
        hit = observer.wait_for(mark, motion_at(pixel(rx, WIDTH), pixel(ry, HEIGHT)), 1.0, fatal=False)
        if hit is None:
            lost += 1
        else:
            lat.append((int(observer.line(hit).split()[1]) - stamp) / 1000)
        time.sleep(CLOSED_GAP)
    return lat, lost


def udp_sender(port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(("127.0.0.1", port))
    def send(i):
        data = closed_packet(i).encode()
        t = time.monotonic_ns()
        sock.send(data)
        return t
    return sock, send


def ws_sender(client):
    def send(i):
        data = client.frame(closed_packet(i))
        t = time.monotonic_ns()
        client.sock.sendall(data)
        return t
    return send


def strace_counts(pid, run):
    """Syscalls of every thread of pid while run() runs: {name: calls}."""
    out = os.path.join(tmp, f"strace-{pid}.txt")
    tracer = subprocess.Popen(["strace", "-f", "-c", "-o", out, "-p", str(pid)], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    run()
    tracer.send_signal(2)
    tracer.wait(10)
    counts = {}
    with open(out) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                counts[parts[-1]] = int(parts[3])
    return counts


def closed(display, observer):
    """BLOCKS rounds of: the ideal bridge, the ideal bridge asleep in epoll_wait, touchbridge over UDP,
    touchbridge over WebSocket; one sender (this process), one observer; samples pooled per case. Then a
    burst over WebSocket, then syscalls per packet.
    Every case's bridge runs from the start, asleep while another's block runs (none of them polls), and
    the cases take turns in short blocks: the host's speed, which drifts over a run (twofold between runs
    here), falls on every case alike."""
    blocks = 20
    per_block = max(1, CLOSED_COUNT // blocks)
    cases = {"ideal": [], "ideal-epoll": [], "udp": [], "web": [], "barrier": []}
    baseline = os.path.join(BASELINE, "touchbridge") if BASELINE else None
    if baseline:
        cases.update({"udp-base": [], "web-base": []})
    lost = {k: 0 for k in cases}
    wakeups = {k: 0 for k in cases}
    cpu = {k: 0 for k in cases}
    bridges = {}

    def start(kind):
        # Each bridge is entered before its client connects, so that a failed connection still stops it.
        binary = baseline if kind.endswith("-base") else None
        if kind == "barrier":
            server = BarrierServer(display, tmp)
            bridges[kind] = (server, None, lambda i: server.move(*(pixel(r, e) for r, e in zip(pattern_raw(i), (WIDTH, HEIGHT)))))
        elif kind.startswith("web"):
            proc, port, secret = web_daemon(display, binary)
            bridges[kind] = (proc, None, None)
            client = WebSocketClient(port, secret)
            bridges[kind] = (proc, client, ws_sender(client))
        else:
            proc = Daemon(display, binary=binary) if kind.startswith("udp") else IdealBridge(display, epoll=kind == "ideal-epoll")
            bridges[kind] = (proc, None, None)
            bridges[kind] = (proc, *udp_sender(proc.port))

    def run_block(kind, b):
        proc, client, send = bridges[kind]
        first = 1 + b * per_block
        observer.command("warp 5 5", "warped")
        send(first - 1)  # the touch begins
        time.sleep(0.05)
        s0, c0 = proc.switches(), proc.cpu_ns()
        lat, n_lost = closed_loop(observer, send, first, per_block)
        wakeups[kind] += proc.switches() - s0
        cpu[kind] += proc.cpu_ns() - c0
        if not kind.startswith("ideal") and kind != "barrier":
            client.sock.sendall(WebSocketClient.frame(closed_packet(0, lift=True))) if kind.startswith("web") else \
                client.send(closed_packet(0, lift=True).encode())
            time.sleep(0.05)
        cases[kind] += lat
        lost[kind] += n_lost

    try:
        for kind in cases:
            start(kind)
        time.sleep(0.2)
        for b in range(blocks):
            for kind in cases:
                run_block(kind, b)
        barrier_peak = bridges["barrier"][0].status("VmHWM") / 1024
    finally:
        for proc, client, _ in bridges.values():
            if client is not None:
                client.close()
            proc.stop()
    ideal = cases["ideal"]
    b50, b99 = pct(cases["barrier"], 50), pct(cases["barrier"], 99)
    i50, i99 = pct(ideal, 50), pct(ideal, 99)
    names = {"ideal": "ideal bridge (C: recvfrom, strstr, XTestFakeMotionEvent, XFlush), UDP",
             "ideal-epoll": "ideal bridge asleep in epoll_wait, then recvfrom (touchbridge's extra syscall alone), UDP",
             "udp": "touchbridge serve, UDP", "web": "touchbridge serve, WebSocket",
             "udp-base": f"baseline {BASELINE}, UDP", "web-base": f"baseline {BASELINE}, WebSocket",
             "barrier": "barrierc (barrier 2.4: DMMV over TCP from a scripted server, XTest)"}
    for kind, lat in cases.items():
        p50, p99, p999 = pct(lat, 50), pct(lat, 99), pct(lat, 99.9)
        extra = dict(samples=len(lat), lost=lost[kind], p50=p50, p99=p99, p999=p999,
                     wakeups_per_packet=round(wakeups[kind] / max(1, len(lat) + lost[kind]), 2),
                     # CPU time of all the process's threads per packet: other load barely moves it
                     cpu_us_per_packet=round(cpu[kind] / 1000 / max(1, len(lat) + lost[kind]), 1))
        target, ok = None, None
        if kind == "udp":
            # Close to the limit: the decode, gate, tracking, gesture and output work a strstr bridge does not
            # do costs about 5-15% (the --epoll reference alone 0-5%); and no slower than barrierc.
            target = "p50 <= 1.1x, p99 <= 1.2x ideal bridge; p50, p99 <= barrierc's"
            ok = p50 <= 1.1 * i50 and p99 <= 1.2 * i99 and p50 <= b50 and p99 <= b99
            extra.update(p50_ratio=round(p50 / i50, 2), p99_ratio=round(p99 / i99, 2), ratio_of="ideal bridge",
                         barrier_p50_ratio=round(p50 / b50, 2), barrier_p99_ratio=round(p99 / b99, 2))
        elif kind == "barrier":
            extra.update(p50_ratio=round(p50 / i50, 2), p99_ratio=round(p99 / i99, 2), ratio_of="ideal bridge",
                         peak_rss_mb=round(barrier_peak, 1))
        elif kind == "web":
            u50 = pct(cases["udp"], 50)
            target, ok = "p50 <= 1.1x UDP", p50 <= 1.1 * u50
            extra.update(p50_ratio=round(p50 / u50, 2), p99_ratio=round(p99 / pct(cases["udp"], 99), 2),
                         ratio_of="UDP")
        elif kind == "ideal-epoll":
            # No target: what an io_uring loop (the datagram read by the sleep itself) could win at most.
            extra.update(p50_ratio=round(p50 / i50, 2), p99_ratio=round(p99 / i99, 2), ratio_of="ideal bridge")
        elif kind.endswith("-base"):
            ours = cases[kind[:-5]]
            extra.update(p50_ratio=round(pct(ours, 50) / p50, 2), p99_ratio=round(pct(ours, 99) / p99, 2),
                         ratio_of="baseline (this build over it)")
        row("closed", f"{names[kind]}: send -> XI2 motion, closed loop", p50, p99, p999, "us p50 (p99, p99.9)",
            target, ok, **extra)

    # Bursts: 300 moves back to back over one WebSocket, BURSTS times (a new daemon each); what is applied
    # must be at most 50 ms old. Several, since a stall of the page's TCP came in about one burst in three
    # (a segment the kernel dropped, resent 200 ms later; see WebServer.Limits.receiveWindowBytes).
    bursts, worst_each, applied = 5, [], 0
    for b in range(bursts):
        daemon, port, secret = web_daemon(display)
        try:
            time.sleep(0.2)
            observer.command("warp 5 5", "warped")
            client = WebSocketClient(port, secret)
            frames = [client.frame(closed_packet(i)) for i in range(3000, 3300)]
            mark = observer.mark
            stamps = []
            for f in frames:
                stamps.append(time.monotonic_ns())
                client.sock.sendall(f)
            time.sleep(0.3)
            end = observer.sync()
            lat = latencies_from(observer, mark, end, stamps, 3000)
            client.close()
        finally:
            daemon.stop()
        worst_each.append(max(lat) / 1000 if lat else float("nan"))
        applied += len(lat)
    worst = max(worst_each)
    late = sum(1 for w in worst_each if not w <= 50)
    row("closed", f"WebSocket burst: 300 moves back to back, the oldest applied, worst of {bursts} bursts", worst, min(worst_each),
        worst, "ms", "<= 50 ms", late == 0, samples=applied, applied_of=300 * bursts, bursts_over_50_ms=late)

    # Syscalls per packet, every thread (strace -f -c; it slows both, so no timing is taken from it).
    if shutil.which("strace"):
        n = 200
        for kind in ("ideal", "udp") + (("udp-base",) if baseline else ()):
            proc = IdealBridge(display) if kind == "ideal" else Daemon(display, binary=baseline if kind == "udp-base" else None)
            try:
                time.sleep(0.2)
                sock, send = udp_sender(proc.port)
                send(5000)
                time.sleep(0.05)
                counts = strace_counts(proc.pid, lambda: closed_loop(observer, send, 5001, n))
                sock.close()
            finally:
                proc.stop()
            total = sum(counts.values()) / n
            detail = ", ".join(f"{k} {v / n:.2g}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]) if v / n >= 0.05)
            row("closed", f"syscalls per packet, {names[kind]}", total, total, total, "syscalls", None, None,
                syscalls=detail)
    else:
        log("bench: strace not installed; the syscall rows are skipped")


def blast(display, observer):
    """A page's blast: moves back to back at 15,000 a second for 3 s, written as a browser
    does, into a buffer of the page's own that never makes it wait; then one last, distinctive move. The
    row is when X shows that last move after the blast's end: a backlog the daemon did not read shows here."""
    daemon, port, secret = web_daemon(display)
    try:
        time.sleep(0.2)
        observer.command("warp 5 5", "warped")
        client = WebSocketClient(port, secret)
        client.sock.sendall(client.frame(closed_packet(0)))
        time.sleep(0.05)
        rate, seconds = 15_000, 3.0

        def unmasked(text):  # a zero mask: the same bytes on the wire, without Python's per-byte XOR
            data = text.encode()
            n = len(data)
            length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
            return bytes([0x81]) + length + b"\0\0\0\0" + data

        frames = [unmasked(closed_packet(4000 + i % 20000)) for i in range(int(rate * seconds))]
        last = unmasked(closed_packet(30001))
        client.sock.setblocking(False)
        pending, made, start = bytearray(), 0, time.monotonic()
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= seconds:
                break
            due = min(len(frames), int(elapsed * rate))
            pending += b"".join(frames[made:due])
            made = due
            try:
                if pending:
                    del pending[:client.sock.send(pending)]
            except BlockingIOError:
                pass
            time.sleep(0.0005)
        mark = observer.mark
        pending += last
        ended = time.monotonic_ns()
        backlog = len(pending)
        client.sock.setblocking(True)
        client.sock.sendall(pending)
        rx, ry = pattern_raw(30001)
        hit = observer.wait_for(mark, motion_at(pixel(rx, WIDTH), pixel(ry, HEIGHT)), 30, fatal=False)
        late = (int(observer.line(hit).split()[1]) - ended) / 1e6 if hit is not None else float("nan")
        client.sock.sendall(client.frame(closed_packet(0, lift=True)))
        client.close()
    finally:
        daemon.stop()
    row("blast", "WebSocket blast: 15,000 moves/s for 3 s, last motion after the blast's end", late, late, late, "ms",
        "<= 100 ms", hit is not None and late <= 100, sent=made + 1, backlog_kib_at_end=backlog >> 10,
        ratio=round(late / 100, 2) if hit is not None else None, ratio_of="the 100 ms promise")


def latencies_from(observer, start, end, stamps, first):
    """Observed - sent (µs) of pattern moves first.. that were seen, matched by pixel."""
    index = {}
    for k in range(len(stamps)):
        rx, ry = pattern_raw(first + k)
        index[(pixel(rx, WIDTH), pixel(ry, HEIGHT))] = k
    seen = {}
    for t, x, y in observer.motions(start, end):
        k = index.get((x, y))
        if k is not None and k not in seen:
            seen[k] = t
    return [(seen[k] - stamps[k]) / 1000 for k in sorted(seen)]


def cost(display):
    # Every listener open, as users run it: PoseAI UDP, TUIO and the web server (later options win);
    # the web server's pairing secret goes to a private state folder. Default --idle-release-ms 500.
    http_port = free_port(socket.SOCK_STREAM)
    listeners = ["--tuio-port", str(free_port(socket.SOCK_DGRAM)), "--http-port", str(http_port)]
    daemon = Daemon(display, listeners, env={**os.environ, "XDG_STATE_HOME": os.path.join(tmp, "state")})
    try:
        # A web page first (100 moves over a WebSocket, then it goes): the web path's tasks have run
        # before the idle window, so a pool they start would show there.
        while True:
            line = daemon.proc.stdout.readline()
            if not line:
                raise SystemExit("bench: touchbridge serve did not open its web listener")
            if line.startswith("listening http"):
                break
        with open(os.path.join(tmp, "state", "touchbridge", "pairing-secret")) as f:
            client = WebSocketClient(http_port, f.read().strip())
        for i in range(100):
            client.sock.sendall(client.frame(closed_packet(i)))
            time.sleep(0.005)
        client.sock.sendall(client.frame(closed_packet(0, lift=True)))
        time.sleep(0.1)
        client.close()
        # In turns of 5 s with the reference, COST_SECONDS each in all: the ideal bridge, streamed the same
        # recording at the same rate (it sleeps in recvfrom while touchbridge streams, and touchbridge in
        # epoll while it does), so that the host's drift falls on both alike. Issue 31 asked for 0.5% of
        # a core; a fixed share of a core is a timed target, which the host's speed decides (the ideal
        # bridge itself took 0.29% to 0.72% in the runs of 2026-12-01 here), so the target is the ratio,
        # and both shares are in the row.
        # Each bridge is streamed to from one phone, one socket for every turn, as a phone streams: a new
        # socket a turn (a `touchbridge replay` each) made each turn after the first a new sender, which
        # with --people (default 4) became a further person with an X master of their own, made each turn
        # (until 2026-12-05; 1.54x-1.70x the ideal bridge then).
        turns = max(1, round(COST_SECONDS / 5))
        per_turn = int(120 * COST_SECONDS / turns)
        packets = [closed_packet(i).encode() for i in range(per_turn)] + [closed_packet(per_turn, lift=True).encode()]
        ideal = IdealBridge(display)
        barrier = BarrierServer(display, tmp)
        phones = {b: socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for b in (daemon, ideal)}
        time.sleep(0.5)
        spent = {daemon: [0, 0.0], ideal: [0, 0.0], barrier: [0, 0.0]}
        try:
            for bridge in (daemon, ideal, barrier) * turns:
                c0, t0 = bridge.cpu_ns(), time.monotonic()
                if bridge is barrier:
                    stream_moves(barrier, per_turn, 120)
                else:
                    stream_packets(phones[bridge], bridge.port, packets, 120)
                time.sleep(0.02)  # the last packet's work done
                spent[bridge][0] += bridge.cpu_ns() - c0
                spent[bridge][1] += time.monotonic() - t0
        finally:
            for phone in phones.values():
                phone.close()
            ideal.stop()
            barrier.stop()
        busy, ideal_busy, barrier_busy = (spent[b][0] / (spent[b][1] * 1e9) * 100 for b in (daemon, ideal, barrier))
        row("cost", f"CPU streaming 120 packets/s for {COST_SECONDS:.0f} s", busy, busy, busy, "% of one core",
            "<= 1.0x ideal bridge, <= barrierc", busy <= ideal_busy and busy <= barrier_busy, cpu_ms=spent[daemon][0] / 1e6,
            reference=f"ideal bridge {ideal_busy:.2f}% ({busy / ideal_busy:.2f}x); barrierc {barrier_busy:.2f}% ({busy / barrier_busy:.2f}x)")
        time.sleep(2)  # the watchdog's last firing (idle-release 500 ms) is behind us
        # The reference idles beside it: the ideal bridge, which sleeps in recvfrom.
        ideal = IdealBridge(display)
        try:
            time.sleep(0.5)
            s0, c0, r0 = daemon.switches(), daemon.cpu_ns(), ideal.switches()
            time.sleep(COST_SECONDS)
            s1, c1, r1 = daemon.switches(), daemon.cpu_ns(), ideal.switches()
            ideal_rss = ideal.status("VmRSS") / 1024
        finally:
            ideal.stop()
        row("cost", f"wake-ups idle for {COST_SECONDS:.0f} s, every listener open, after a web page (context switches, all threads)", s1 - s0, s1 - s0,
            s1 - s0, "wake-ups", "0", s1 - s0 == 0, idle_cpu_us=(c1 - c0) / 1000, reference=f"ideal bridge {r1 - r0}")
        rss, peak = daemon.status("VmRSS") / 1024, daemon.status("VmHWM") / 1024
        # What the resident memory is: file-backed (code and read-only data, shared with other processes
        # that map the same files) and anonymous (heap, stacks, relocated data); and the threads.
        split = (f"{daemon.status('RssFile') / 1024:.1f} MB file-backed, {daemon.status('RssAnon') / 1024:.1f} MB anonymous, "
                 f"{len(daemon.tasks())} threads")
        row("cost", "RSS (VmRSS) after streaming, serving UDP, WebSocket and TUIO", rss, rss, rss, "MB", "<= 16 MB",
            rss <= 16, reference=f"ideal bridge {ideal_rss:.1f} MB", split=split)
        row("cost", "peak RSS (VmHWM), serving UDP, WebSocket and TUIO", peak, peak, peak, "MB", "<= 16 MB", peak <= 16,
            reference=f"ideal bridge {ideal_rss:.1f} MB", order=f"{hot_functions_found()}; {code_beyond_list(daemon.pid)}")
    finally:
        daemon.stop()


def code_beyond_list(pid):
    """How much of touchbridge's code is resident in `pid` beyond the functions the release link places first (the
    end of the last listed one): code that ran while serving and that hot-functions.txt lacks, 64 KiB (the
    kernel's fault-around) for each such function far from the others. A list gone stale shows here before
    the peak RSS row fails: 0.2 to 0.5 MiB after the list was made again on 2026-12-07, 2.1 MiB before
    (functions added since it was made: the people's, the sway seats', the loop's; peak RSS 15.5 MB against
    17.0 in one run)."""
    binary = os.path.realpath(os.path.join(BIN, "touchbridge"))
    with open(os.path.join(ROOT, "scripts", "release-link", "hot-functions.txt")) as f:
        listed = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True).stdout
    ends = [int(p[0], 16) + int(p[1], 16) for p in (line.split() for line in out.splitlines())
            if len(p) == 4 and p[3] in listed]
    if not ends:
        return "no listed function in the binary"
    end = max(ends)
    with open(f"/proc/{pid}/maps") as f:
        maps = [line.split() for line in f]
    mine = [p for p in maps if len(p) >= 6 and os.path.realpath(p[5]) == binary]
    base = min(int(p[0].split("-")[0], 16) for p in mine if int(p[2], 16) == 0)  # the binary's load address
    first = base + end + (-(base + end)) % 4096  # the first page wholly past the list's end
    resident = 0
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for p in mine:
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            if p[1] != "r-xp":
                continue
            for page in range(max(lo, first) // 4096, hi // 4096):
                pagemap.seek(page * 8)
                resident += int.from_bytes(pagemap.read(8), "little") >> 63  # bit 63: present
    return f"{resident * 4} KiB of code resident beyond the listed functions"


def hot_functions_found():
    """How many of the functions the release link places first (scripts/release-link/hot-functions.txt) the binary
    still has: fewer means the list went stale and more code is resident while serving; hot-functions.py makes it
    again."""
    with open(os.path.join(ROOT, "scripts", "release-link", "hot-functions.txt")) as f:
        listed = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    out = subprocess.run(["nm", "--defined-only", os.path.join(BIN, "touchbridge")], capture_output=True, text=True).stdout
    found = len(listed & {line.split()[-1] for line in out.splitlines() if line.strip()})
    return f"{found} of the {len(listed)} functions of scripts/release-link/hot-functions.txt in the binary"


# ---------------------------------------------------------------- flood

# The flooder, a process of its own (its own interpreter, on whichever core is free): valid PoseAI packets that
# would put finger 0 at the top-left corner, from 4 ports of 127.0.0.1 and one each of 127.0.0.2-5, sent as fast as
# one Python process can until its time is up; prints how many it sent. Loopback never makes a sender wait: a
# datagram the daemon's socket has no room for is dropped at the socket.
FLOODER = r"""
import socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
packet = b'{"Touches":"0AAAA","TouchState":"AAAA' + b"=" * 36 + b'","Orientation":1,"PF":1}'
socks = []
for source in ["127.0.0.1"] * 4 + ["127.0.0.%d" % k for k in range(2, 6)]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((source, 0))
    s.setblocking(False)
    socks.append(s)
dest = ("127.0.0.1", port)
sent = 0
print("flooding", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    for s in socks:
        for _ in range(64):
            try:
                s.sendto(packet, dest)
                sent += 1
            except OSError:
                pass
print(sent, flush=True)
"""
FLOOD_SOURCES = "4 ports of 127.0.0.1 and 127.0.0.2-5"


def flood(display, observer):
    """A live sender (this process) at 120 Hz for FLOOD_SECONDS, each packet finger 0 at a pixel of its own, while
    the flooder sends valid packets from other ports and addresses as fast as it can, from 0.5 s before the
    stream to its end: the share of the sender's packets whose motion X shows (xobserve, matched by pixel), target
    at least 99% (issue 51). With BENCH_BASELINE, the other build's daemon gets the same, in a row of its own."""
    builds = [("", None)] + ([(" (baseline)", os.path.join(BASELINE, "touchbridge"))] if BASELINE else [])
    count = int(120 * FLOOD_SECONDS)
    first = 8000
    for label, binary in builds:
        daemon = Daemon(display, binary=binary)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.connect(("127.0.0.1", daemon.port))
        flooder = None
        try:
            # The sender holds the session, its finger down, before the flood starts.
            mark = observer.mark
            for i in range(first - 12, first):
                sock.send(closed_packet(i).encode())
                time.sleep(1 / 120)
            rx, ry = pattern_raw(first - 1)
            observer.wait_for(mark, motion_at(pixel(rx, WIDTH), pixel(ry, HEIGHT)), 5)
            flooder = subprocess.Popen([sys.executable, "-c", FLOODER, str(daemon.port), str(FLOOD_SECONDS + 1.0)],
                                       stdout=subprocess.PIPE, text=True)
            if flooder.stdout.readline().strip() != "flooding":
                raise SystemExit("bench: the flooder did not start")
            time.sleep(0.5)
            start = observer.mark
            stamps = []
            t0 = time.monotonic()
            for k in range(count):
                delay = t0 + k / 120 - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                data = closed_packet(first + k).encode()
                stamps.append(time.monotonic_ns())
                sock.send(data)
            sent_flood = int(flooder.stdout.readline().strip() or 0)
            flooder.wait(10)
            flooder = None
            rx, ry = pattern_raw(first + count - 1)
            observer.wait_for(start, motion_at(pixel(rx, WIDTH), pixel(ry, HEIGHT)), 5, fatal=False)
            observer.sync()
            applied = len(latencies_from(observer, start, observer.mark, stamps, first))
            sock.send(closed_packet(0, lift=True).encode())
        finally:
            if flooder is not None:
                flooder.kill()
            sock.close()
            daemon.stop()
        share = applied / count * 100
        row("flood", f"a 120 Hz sender's packets applied under a flood from other ports{label}", share, share, share,
            "% applied", ">= 99%", share >= 99, applied=applied, sent=count,
            flood_per_second=sent_flood / (FLOOD_SECONDS + 1.0), flood_sources=FLOOD_SOURCES)


def closed_block(observer, send, sock, first, count, seen, latencies):
    """One block of a closed loop over UDP: packet `first - 1` begins the touch, then packets `first` to
    `first + count - 1`, each sent once the last one's motion (a line `seen(match)` accepts) came at X or 1 s
    passed, and the lift. Each latency (µs, send to X) goes to `latencies`; returns how many were not seen."""
    send(first - 1)
    time.sleep(0.05)
    lost = 0
    for i in range(first, first + count):
        rx, ry = pattern_raw(i)
        mark = observer.mark
        stamp = send(i)
        hit = observer.wait_for(mark, seen(motion_at(pixel(rx, WIDTH), pixel(ry, HEIGHT))), 1.0, fatal=False)
        if hit is None:
            lost += 1
        else:
            latencies.append((int(observer.line(hit).split()[1]) - stamp) / 1000)
        time.sleep(CLOSED_GAP)
    sock.send(closed_packet(0, lift=True).encode())
    return lost


# ---------------------------------------------------------------- people

PERSON2_GAP = {"alone": None, "streams at 120 Hz": 1 / 120, "sends as fast as one socket can": 0.0}


def person2_packet(k):
    """Person 2's finger: a small circle of its own at the bottom right, away from person 1's pattern."""
    rx, ry = 3700 + (k % 40) * 5, 3700 + ((k // 40) % 40) * 5
    p = enc(rx) + enc(ry)
    return ('{"Timestamp":%.4f,"Touches":"0%s","TouchState":"%s%s","Orientation":1,"PF":1}' % (k / 120, p, p, "====" * 9))


def people(display, observer):
    """Person 1's closed loop (send one packet, wait for its XI2 motion on the core pointer, repeat), alone,
    while person 2 (another address, their own master) streams at 120 Hz, and while person 2 sends as fast
    as one socket can (the per-source rate limit, 1,000/s, takes the rest); the cases take turns in blocks."""
    blocks = 10
    per_block = max(1, CLOSED_COUNT // blocks)
    daemon = Daemon(display, ["--people", "2"])
    sock, send = udp_sender(daemon.port)
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.2", 0))
    other.connect(("127.0.0.1", daemon.port))
    lat = {k: [] for k in PERSON2_GAP}
    lost = {k: 0 for k in PERSON2_GAP}
    sent2 = {k: 0 for k in PERSON2_GAP}
    try:
        # Person 1 comes first (the core pointer), then person 2 once, so that their master exists before any block.
        mark = observer.mark
        send(0)
        observer.wait_for(mark, lambda line: line.startswith("press ") and " dev=2 " in line, 5)
        sock.send(closed_packet(0, lift=True).encode())
        mark = observer.mark
        other.send(person2_packet(0).encode())
        if observer.wait_for(mark, lambda line: line.startswith("press ") and " dev=2 " not in line, 5, fatal=False) is None:
            raise SystemExit("bench: person 2's press on a master of their own not seen: "
                             + " | ".join(observer.line(i) for i in range(mark, observer.mark)))

        def dev2(match):
            return lambda line: match(line) and " dev=2 " in line

        first = 20000
        for b in range(blocks):
            for case, gap in PERSON2_GAP.items():
                stop = threading.Event()
                count = [0]

                def stream():
                    k = 1
                    t0 = time.monotonic()
                    while not stop.is_set():
                        other.send(person2_packet(k).encode())
                        k += 1
                        if gap:
                            delay = t0 + k * gap - time.monotonic()
                            if delay > 0:
                                time.sleep(delay)
                    count[0] = k

                streamer = threading.Thread(target=stream) if gap is not None else None
                if streamer:
                    streamer.start()
                    time.sleep(0.2)
                lost[case] += closed_block(observer, send, sock, first, per_block, dev2, lat[case])
                if streamer:
                    stop.set()
                    streamer.join()
                    sent2[case] += count[0]
                first += per_block + 1
    finally:
        other.close()
        sock.close()
        daemon.stop()
    base50, base99 = pct(lat["alone"], 50), pct(lat["alone"], 99)
    for case in PERSON2_GAP:
        p50, p99, p999 = pct(lat[case], 50), pct(lat[case], 99), pct(lat[case], 99.9)
        what = "alone" if case == "alone" else f"while person 2 {case}"
        extra = {} if case == "alone" else dict(p50_ratio=round(p50 / base50, 2), p99_ratio=round(p99 / base99, 2),
                                                 ratio_of="person 1 alone", person2_sent=sent2[case])
        row("people", f"person 1: send -> XI2 motion on the core pointer, closed loop, {what}", p50, p99, p999,
            "us p50 (p99, p99.9)", samples=len(lat[case]), lost=lost[case], **extra)


# ---------------------------------------------------------------- view (the live view's speed)

VIEW_W, VIEW_H = 960, 540
VIEW_STILL_SECONDS = float(os.environ.get("BENCH_VIEW_STILL_SECONDS", "30"))
VIEW_STREAM_SECONDS = float(os.environ.get("BENCH_VIEW_STREAM_SECONDS", "12"))
VIEW_CHANGES_PER_SECOND = 120


class ViewClient(WebSocketClient):
    """The page's side of the live view: its messages read as they come (the view's binary frames, the
    text lines), the `pong`s of its own pings apart, since a page that sends nothing for 10 s is closed."""

    def __init__(self, port, secret):
        self.cond = threading.Condition()
        self.frames = []        # (arrival ns, payload) of every binary message
        self.texts = []         # every text line but the pongs
        self.text_times = []    # the arrival ns of each of those
        self.pongs = set()
        self.other_bytes = 0    # bytes of the text lines but the pongs
        self.closed = False
        super().__init__(port, secret)

    def _drain(self):
        buf = bytearray(self.rest)
        try:
            while True:
                while self._take(buf):
                    pass
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        except OSError:
            pass
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def _take(self, buf):
        """One whole message off buf (the server's frames are unmasked and unfragmented), or False."""
        if len(buf) < 2:
            return False
        opcode, n, at = buf[0] & 0x0f, buf[1] & 0x7f, 2
        if n >= 126:
            at = 4 if n == 126 else 10
            if len(buf) < at:
                return False
            n = int.from_bytes(buf[2:at], "big")
        if len(buf) < at + n:
            return False
        payload = bytes(buf[at:at + n])
        del buf[:at + n]
        now = time.monotonic_ns()
        with self.cond:
            if opcode == 0x2:
                self.frames.append((now, payload))
            elif opcode == 0x1:
                line = payload.decode(errors="replace")
                if line.startswith("pong "):
                    self.pongs.add(line[5:])
                else:
                    self.texts.append(line)
                    self.text_times.append(now)
                    self.other_bytes += len(payload) + at
            self.cond.notify_all()
        return True

    def send(self, text):
        self.sock.sendall(self.frame(text))

    def wait(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    return False
                self.cond.wait(left)
            return True

    def ping(self, n):
        """A ping, as the page sends one every 2 s, and its pong: everything sent before it was read."""
        self.send(f"ping {n}")
        if not self.wait(lambda: str(n) in self.pongs, 10):
            raise SystemExit(f"bench: no pong {n} from the daemon")

    def next_frame(self, count, timeout=10):
        """The payload of frame number count + 1, once it came, else None."""
        if not self.wait(lambda: len(self.frames) > count, timeout):
            return None
        with self.cond:
            return self.frames[count][1]


def view_reference():
    """Benchmarks/view-reference/main.c, compiled with cc into the run's folder (not a SwiftPM target: it needs
    libturbojpeg's and libXext's development files, which scripts/deps.sh installs, and nothing else)."""
    out = os.path.join(tmp, "view-reference")
    subprocess.run(["cc", "-O2", "-o", out, os.path.join(ROOT, "Benchmarks", "view-reference", "main.c"),
                    "-lX11", "-lXext", "-lturbojpeg"], check=True)
    return out


def view(display, observer):
    """The live view (issue 45): a page's WebSocket client (ViewClient, standard library) pulls 960x540 frames of
    the 1920x1080 screen as the page does, asking for the next once it has the last (one frame in flight).
    A still screen: 30 s with the page's ask outstanding, in 4 windows with a ping between (the daemon closes a
    page silent for 10 s): frames, bytes and the daemon's context switches (all threads, /proc/PID/task/*/status)
    in the windows, the same with `view off` as the reference. A changing screen (view-reference change, 120
    changes/s): frames/s, and the daemon's CPU (all threads, schedstat) per frame, in turns with the C loop
    (XShmGetImage + tjCompress2 alone) on the same screen; then the daemon's peak RSS."""
    ref = view_reference()
    subprocess.run([ref, "paint", display], check=True, stdout=subprocess.DEVNULL)
    daemon, port, secret = web_daemon(display)
    changer, client = None, None
    try:
        client = ViewClient(port, secret)
        client.send(f"surface {VIEW_W} {VIEW_H}")  # the page's first word: it holds the session
        if not client.wait(lambda: any(t.startswith("mode ") for t in client.texts), 10):
            raise SystemExit(f"bench: the page was not told its mode: {client.texts}")
        peak_before = daemon.status("VmHWM") / 1024
        client.send(f"view {VIEW_W} {VIEW_H}")
        first = client.next_frame(0)
        if first is None or first[:2] != b"V\x01":
            raise SystemExit(f"bench: no first frame: {client.texts}")
        picture = (int.from_bytes(first[6:8], "big"), int.from_bytes(first[8:10], "big"))
        # The viewing mark's painting is one more change: asked until a second goes by without a frame.
        while True:
            client.send(f"view {VIEW_W} {VIEW_H}")
            if client.next_frame(len(client.frames), timeout=1) is None:
                break

        # A still screen, the next ask outstanding; then, with the view off, the reference.
        pings = iter(range(1, 1000))
        windows = 4
        still = {}
        for case in ("view", "off"):
            client.send(f"view {VIEW_W} {VIEW_H}" if case == "view" else "view off")
            client.ping(next(pings))
            frames0, bytes0 = len(client.frames), client.other_bytes
            switches = 0
            for _ in range(windows):
                client.ping(next(pings))
                time.sleep(0.1)  # the pong's own work done
                s0 = daemon.switches()
                time.sleep(VIEW_STILL_SECONDS / windows)
                switches += daemon.switches() - s0
            with client.cond:
                frames = len(client.frames) - frames0
                sent = sum(len(p) for _, p in client.frames[frames0:]) + client.other_bytes - bytes0
            still[case] = (frames, sent, switches)
        # What must come after what must not: the screen painted again, and its frame.
        client.send(f"view {VIEW_W} {VIEW_H}")
        count = len(client.frames)
        subprocess.run([ref, "paint", display], check=True, stdout=subprocess.DEVNULL)
        if client.next_frame(count) is None:
            raise SystemExit("bench: the view sent no frame after the still screen changed")

        # A changing screen: the daemon's turns (pull frames) and the C loop's turns.
        changer = subprocess.Popen([ref, "change", display, str(VIEW_CHANGES_PER_SECOND)], stdout=subprocess.PIPE, text=True)
        if changer.stdout.readline().strip() != "changing":
            raise SystemExit("bench: view-reference change did not start")
        turns = 4
        ours_cpu, ref_cpu, ref_wall, ref_bytes, waits = [], [], [], [], []
        frames, seconds, sizes = 0, 0.0, []
        for _ in range(turns):
            count = len(client.frames)
            c0, t0 = daemon.cpu_ns(), time.monotonic()
            n = 0
            while time.monotonic() - t0 < VIEW_STREAM_SECONDS / turns:
                asked = time.monotonic_ns()
                client.send(f"view {VIEW_W} {VIEW_H}")
                payload = client.next_frame(count + n, timeout=5)
                if payload is None:
                    raise SystemExit("bench: a changing screen's frame did not come within 5 s")
                with client.cond:
                    waits.append((client.frames[count + n][0] - asked) / 1e6)
                sizes.append(len(payload))
                n += 1
            seconds += time.monotonic() - t0
            ours_cpu.append((daemon.cpu_ns() - c0) / n / 1e6)
            frames += n
            out = subprocess.run([ref, "loop", display, "30", "1", str(VIEW_W), str(VIEW_H)], capture_output=True,
                                 text=True, check=True).stdout.split()
            ref_cpu.append(int(out[1]) / 1e6)
            ref_wall.append(int(out[3]) / 1e6)
            ref_bytes.append(int(out[5]))
        peak = daemon.status("VmHWM") / 1024
        rss_split = (f"{daemon.status('RssFile') / 1024:.1f} MB file-backed, {daemon.status('RssAnon') / 1024:.1f} MB "
                     f"anonymous, {len(daemon.tasks())} threads")
    finally:
        if changer is not None:
            changer.kill()
            changer.wait(5)
        if client is not None:
            client.close()
        daemon.stop()

    med, ref_med = statistics.median(ours_cpu), statistics.median(ref_cpu)
    ratio = min(ours_cpu) / min(ref_cpu)
    row("view", f"capture, scale and encode: a changing 1920x1080 screen to {picture[0]}x{picture[1]}, CPU of all "
        f"the daemon's threads per frame sent", med, min(ours_cpu), max(ours_cpu), "ms CPU/frame", "<= 8 ms", med <= 8,
        ratio_vs_c=round(ratio, 2), reference=f"{turns} turns of {VIEW_STREAM_SECONDS / turns:.1f} s; "
        f"{statistics.median(sizes) / 1024:.0f} KiB a frame")
    row("view", f"C reference: XShmGetImage 1920x1080 + tjCompress2 of its top-left {VIEW_W}x{VIEW_H} (no scaling), "
        f"CPU per frame", ref_med, min(ref_cpu), max(ref_cpu), "ms CPU/frame",
        reference=f"{turns} turns of 30 frames; {statistics.median(ref_bytes) / 1024:.0f} KiB a frame")
    fps = frames / seconds
    # The C loop's wall clock in the same turns: how many frames the machine allowed then, for capture and
    # encode alone (a loaded host shows here first).
    ref_fps = 1000 / statistics.median(ref_wall)
    row("view", f"frames/s of a changing screen ({VIEW_CHANGES_PER_SECOND} changes/s), {picture[0]}x{picture[1]}, "
        f"loopback, one frame in flight", fps, fps, fps, "frames/s", ">= 30", fps >= 30, samples=frames,
        reference=f"ask -> frame p50 {pct(waits, 50):.1f} ms, p99 {pct(waits, 99):.1f} ms; the C loop alone "
        f"{ref_fps:.0f} frames/s by the wall clock ({fps / ref_fps:.2f}x); the screen changes "
        f"{VIEW_CHANGES_PER_SECOND}/s")
    # A connected page alone wakes the web server's loop: its silence check (a page silent for 10 s is closed)
    # comes due after each ping; so the target's "0 wake-ups" is the view's own, none beyond `view off`'s.
    (f, b, w), (rf, rb, rw) = still["view"], still["off"]
    row("view", f"a still screen for {VIEW_STILL_SECONDS:.0f} s, the page's next ask outstanding: wake-ups "
        f"(context switches, all threads)", w, w, w, "wake-ups", "0 frames, 0 bytes, 0 wake-ups beyond `view off`'s",
        f == 0 and b == 0 and w <= rw, reference=f"{f} frames, {b} bytes; with `view off` instead: {rw} wake-ups "
        f"(the page's silence check), {rf} frames, {rb} bytes; {windows} windows, a ping between")
    row("view", "peak RSS (VmHWM) after streaming the view", peak, peak, peak, "MB", "<= 32 MB", peak <= 32,
        reference=f"{peak_before:.1f} MB before the view", split=rss_split)
    view_latency(display, observer, ref)
    page_latency(display, ref, web_daemon, row)


VIEW_STREAM_FPS = 30


def view_latency(display, observer, ref):
    """The closed loop over UDP (as in `closed`) while the view streams 30 frames/s of a changing screen, against
    the same without the view, in turns of 10 blocks. The view is the session's holder's, and one sender holds
    the session, so the page is person 1 (`--people 2`, the page's `surface` first) and the UDP sender person 2
    (127.0.0.2, their own master pointer: its motion is the one not on the core pointer, dev 2). The screen
    changes 120 times a second in both cases (view-reference change), so the X server's work is the same; the
    page's client asks for a frame every 1/30 s, once the last came."""
    blocks = 10
    per_block = max(1, CLOSED_COUNT // blocks)
    daemon, port, secret = web_daemon(display, extra=["--people", "2"])
    client, changer = None, None
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.2", 0))
    sock.connect(("127.0.0.1", daemon.port))
    cases = ("streaming", "without")
    lat, lost = {k: [] for k in cases}, {k: 0 for k in cases}
    shown, streamed = 0, 0.0  # frames the page got while streaming, and for how long
    try:
        client = ViewClient(port, secret)
        client.send(f"surface {VIEW_W} {VIEW_H}")
        if not client.wait(lambda: any(t.startswith("mode ") for t in client.texts), 10):
            raise SystemExit(f"bench: the page was not told its mode: {client.texts}")
        changer = subprocess.Popen([ref, "change", display, str(VIEW_CHANGES_PER_SECOND)], stdout=subprocess.PIPE, text=True)
        if changer.stdout.readline().strip() != "changing":
            raise SystemExit("bench: view-reference change did not start")

        def send(i):
            data = closed_packet(i).encode()
            t = time.monotonic_ns()
            sock.send(data)
            return t

        def person2(match):
            return lambda line: match(line) and " dev=2 " not in line

        first = 40000
        for b in range(blocks):
            for case in (cases if b % 2 == 0 else cases[::-1]):
                stop = threading.Event()

                def stream():
                    count, due = len(client.frames), time.monotonic()
                    while not stop.is_set():
                        client.send(f"view {VIEW_W} {VIEW_H}")
                        if client.next_frame(count, timeout=5) is None:
                            return
                        count += 1
                        due += 1 / VIEW_STREAM_FPS
                        delay = due - time.monotonic()
                        if delay > 0:
                            time.sleep(delay)
                        else:
                            due = time.monotonic()

                streamer = threading.Thread(target=stream) if case == "streaming" else None
                frames0 = len(client.frames)
                s0 = time.monotonic()  # the frames shown count from the streamer's start, and so does its time
                if streamer:
                    streamer.start()
                    time.sleep(0.2)
                lost[case] += closed_block(observer, send, sock, first, per_block, person2, lat[case])
                if streamer:
                    stop.set()
                    streamer.join()
                    shown += len(client.frames) - frames0
                    streamed += time.monotonic() - s0
                    client.send("view off")
                    client.ping(b + 1)  # the last frame, if one was on its way, has come
                first += per_block + 1
    finally:
        if changer is not None:
            changer.kill()
            changer.wait(5)
        if client is not None:
            client.close()
        sock.close()
        daemon.stop()
    base50, base99 = pct(lat["without"], 50), pct(lat["without"], 99)
    rate = shown / streamed if streamed else 0
    for case in cases:
        p50, p99, p999 = pct(lat[case], 50), pct(lat[case], 99), pct(lat[case], 99.9)
        if case == "streaming":
            ratio = p50 / base50
            row("view", f"closed loop over UDP (person 2's pointer) while the view streams {VIEW_STREAM_FPS} frames/s "
                f"to person 1's page", p50, p99, p999, "us p50 (p99, p99.9)", "p50 <= 1.2x without the view",
                ratio <= 1.2, samples=len(lat[case]), lost=lost[case], p50_ratio=round(ratio, 2),
                p99_ratio=round(p99 / base99, 2), ratio_of="without the view",
                reference=f"{rate:.1f} frames/s shown while it ran")
        else:
            row("view", "closed loop over UDP (person 2's pointer), the same without the view", p50, p99, p999,
                "us p50 (p99, p99.9)", samples=len(lat[case]), lost=lost[case])


# ---------------------------------------------------------------- impress (the presenter's view and Impress)

IMPRESS_TURNS = int(os.environ.get("BENCH_IMPRESS_TURNS", "40"))
# What touchbridge may add to Impress's own turn, at p50. A turn through touchbridge is Impress's own turn plus a
# relay: the page's WebSocket frame in, the command out to Impress, Impress's slide_updated in, and two lines out
# (the show, and the new slide's notes, which touchbridge has from the show's start). That is a few hundred
# microseconds of work against Impress's ~20 ms (it draws the slide before it answers), so a fifth more than
# Impress's own, and at least 5 ms (a third of a frame at 60 Hz, which no one sees; it keeps the target honest
# when Impress answers fast), leaves room for scheduling on a loaded machine and nothing more.
IMPRESS_RATIO, IMPRESS_SLACK_MS = 1.2, 5.0


def impress_row(display, observer):
    """The presenter's view against Impress's own remote client (issue 46): LibreOffice Impress (soffice, opened
    normally with the tests' three-slide deck and a profile of the bench's own; Benchmarks/impress.py) on the
    bench's Xvfb, touchbridge serve paired with it, and a raw client of Impress's protocol paired beside it (as
    `touchbridge`, with the profile's PIN). The raw client starts the show; once the show settled (the raw client
    has the last slide's notes, the page `impress show N 0`, then 2 s), turns in alternation, the two cases'
    order swapped each turn: the raw client's `transition_next`/`transition_previous` until its `slide_updated`
    (Impress's own), and the page's `slide next`/`slide previous` until it has both `impress show N n` and
    `impress notes n ...` (touchbridge). Slides 1 and 2 alternate, so the show never ends. Both clients stay
    paired throughout, so Impress's work is the same in both cases."""
    import impress
    daemon, port, secret = web_daemon(display, extra=["--impress-pin", impress.PIN, "--debug-impress-port", str(impress.PORT)])
    client, office, raw = None, None, None
    cases = ("reference", "touchbridge")
    lat, lost = {k: [] for k in cases}, {k: 0 for k in cases}
    pings = iter(range(1, 1 << 30))
    try:
        client = ViewClient(port, secret)
        client.send("mode presenter")
        if not client.wait(lambda: "mode presenter" in client.texts, 10):
            raise SystemExit(f"bench: the page was not put in presenter mode: {client.texts}")
        observer.command(f"warp {WIDTH // 2} {HEIGHT // 2}", "warped")  # the pointer over Impress's window
        office = impress.Office(display, meanwhile=lambda: client.send(f"ping {next(pings)}"))
        if not client.wait(lambda: "impress on" in client.texts, 30):
            raise SystemExit(f"bench: touchbridge did not pair with Impress: {client.texts[-5:]}")
        impress.wait_drawn(display, meanwhile=lambda: client.send(f"ping {next(pings)}"))
        time.sleep(1)
        raw = impress.RawClient()
        # The show, started by the raw client once Impress has drawn its document (asked again every 15 s).
        for attempt in range(8):
            mark = raw.mark
            raw.send("presentation_start")
            started = raw.wait_for(mark, lambda m: m[0] == "slideshow_started", 15)
            client.ping(next(pings))
            if started is not None:
                break
        else:
            raise SystemExit("bench: Impress did not start the show")
        count = int(raw.messages[started][1][1])
        if count < 2:
            raise SystemExit(f"bench: a deck of {count} slides")
        # Impress ignores a command that comes before it has sent every slide's preview and notes.
        if raw.wait_for(started, lambda m: m[0] == "slide_notes" and m[1] == str(count - 1), 60) is None:
            raise SystemExit("bench: Impress did not send the last slide's notes after the show started")
        if not client.wait(lambda: f"impress show {count} 0" in client.texts, 30):
            raise SystemExit(f"bench: the page was not told the show: {client.texts[-5:]}")
        time.sleep(2)
        client.ping(next(pings))

        current = 0

        def page_has(start, target):
            """The arrival ns of the later of the page's show and notes lines for slide target, from start, or None."""
            show_at = notes_at = None
            with client.cond:
                for i in range(start, len(client.texts)):
                    line = client.texts[i]
                    if show_at is None and line == f"impress show {count} {target}":
                        show_at = client.text_times[i]
                    if notes_at is None and (line == f"impress notes {target}" or line.startswith(f"impress notes {target} ")):
                        notes_at = client.text_times[i]
            return None if show_at is None or notes_at is None else max(show_at, notes_at)

        def updated(target):
            return lambda m: m[0] == "slide_updated" and len(m) > 1 and m[1] == str(target)

        for turn in range(IMPRESS_TURNS):
            for case in (cases if turn % 2 == 0 else cases[::-1]):
                forward = current == 0
                target = current + 1 if forward else current - 1
                raw_mark = raw.mark
                with client.cond:
                    page_mark = len(client.texts)
                t0 = time.monotonic_ns()
                if case == "reference":
                    raw.send("transition_next" if forward else "transition_previous")
                    i = raw.wait_for(raw_mark, updated(target), 10)
                    if i is not None:
                        lat[case].append((raw.messages[i][0] - t0) / 1e6)
                    # Settled for the next turn: the page has the slide too.
                    settled = i is not None and client.wait(lambda: page_has(page_mark, target) is not None, 10)
                else:
                    client.send("slide next" if forward else "slide previous")
                    settled = client.wait(lambda: page_has(page_mark, target) is not None, 10)
                    if settled:
                        lat[case].append((page_has(page_mark, target) - t0) / 1e6)
                    settled = settled and raw.wait_for(raw_mark, updated(target), 10) is not None
                if not settled:
                    lost[case] += 1
                    with raw.cond:
                        said = [m[0] for _, m in raw.messages[raw_mark:]]
                    with client.cond:
                        told = [t[:40] for t in client.texts[page_mark:]]
                    log(f"bench: impress: a {case} turn to slide {target} was not seen within 10 s: Impress said {said}, "
                        f"the page was told {told}")
                    client.ping(next(pings))
                    time.sleep(2)
                    # Where the show is now, as Impress last said it.
                    with raw.cond:
                        said = [m for _, m in raw.messages if m[0] in ("slide_updated", "slideshow_started")]
                    current = int(said[-1][-1] if said[-1][0] == "slide_updated" else said[-1][2])
                else:
                    current = target
                time.sleep(0.3)  # Impress draws the slide; a presenter turns far more slowly
            if turn % 8 == 7:
                client.ping(next(pings))
        version = next((m[1] for _, m in raw.messages if m[0] == "LO_SERVER_INFO"), "?")
    finally:
        # The clients first (touchbridge's too), so that Impress, killed, leaves no TIME_WAIT on its port.
        if raw is not None:
            raw.close()
        if client is not None:
            client.close()
        daemon.stop()
        if office is not None:
            office.stop()
    ref50, ref99 = pct(lat["reference"], 50), pct(lat["reference"], 99)
    p50, p99 = pct(lat["touchbridge"], 50), pct(lat["touchbridge"], 99)
    bound = max(IMPRESS_RATIO * ref50, ref50 + IMPRESS_SLACK_MS)
    row("impress", f"Impress's own: its remote client's transition_next/previous -> slide_updated (LibreOffice {version}, "
        f"{count} slides)", ref50, ref99, max(lat["reference"], default=float("nan")), "ms p50 (p99, max)",
        samples=len(lat["reference"]), lost=lost["reference"])
    row("impress", "a page's slide next/previous -> its impress show and the new slide's impress notes, through "
        "touchbridge", p50, p99, max(lat["touchbridge"], default=float("nan")), "ms p50 (p99, max)",
        f"p50 <= max({IMPRESS_RATIO}x Impress's own, its own + {IMPRESS_SLACK_MS:.0f} ms)",
        p50 <= bound and not lost["touchbridge"], samples=len(lat["touchbridge"]), lost=lost["touchbridge"],
        p50_ratio=round(p50 / ref50, 2), p99_ratio=round(p99 / ref99, 2), ratio_of="Impress's own",
        reference=f"bound {bound:.1f} ms; turns interleaved, 0.3 s apart")


# ---------------------------------------------------------------- table

def fmt(v):
    if isinstance(v, float):
        return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def table():
    lines = ["| stage | what | median | min–max | unit | extra | target | met |",
             "|---|---|---:|---:|---|---|---|---|"]
    for r in rows:
        extra = []
        if "allocations_per_packet" in r:
            extra.append(f"{r['allocations_per_packet']:g} allocs/packet")
        if "speedup_vs_jsondecoder" in r:
            extra.append(f"{r['speedup_vs_jsondecoder']}x faster than JSONDecoder (min vs min)")
        if "ratio_vs_c" in r:
            extra.append(f"{r['ratio_vs_c']}x the C loop" + (" (min vs min)" if r["met"] is not None else ""))
        if "samples" in r and "applied_of" not in r:
            extra.append(f"n={r['samples']}")
        if "lost" in r and r["lost"]:
            extra.append(f"{r['lost']} lost")
        if "p50_ratio" in r:
            extra.append(f"{r['p50_ratio']}x / {r['p99_ratio']}x {r.get('ratio_of', 'floor')} (p50 / p99)")
        if "wakeups_per_packet" in r:
            extra.append(f"{r['wakeups_per_packet']:g} wake-ups/packet")
        if "cpu_us_per_packet" in r:
            extra.append(f"{r['cpu_us_per_packet']:g} µs CPU/packet")
        if "syscalls" in r:
            extra.append(r["syscalls"])
        if "applied_of" in r:
            extra.append(f"{r['samples']} of {r['applied_of']} applied (stale ones dropped)")
        if "bursts_over_50_ms" in r:
            extra.append(f"{r['bursts_over_50_ms']} bursts over 50 ms")
        if "reference" in r:
            extra.append(r["reference"])
        if "split" in r:
            extra.append(r["split"])
        if "order" in r:
            extra.append(r["order"])
        if "backlog_kib_at_end" in r:
            seen = f"{r['ratio']}x {r['ratio_of']}" if r["ratio"] is not None else "the last move not seen within 30 s"
            extra.append(f"{seen}; {r['sent']} moves, {r['backlog_kib_at_end']} KiB not yet sent at the end")
        if "flood_per_second" in r:
            extra.append(f"{r['applied']} of {r['sent']} applied; flood {r['flood_per_second']:.0f} datagrams/s from "
                         f"{r['flood_sources']}")
        if "idle_cpu_us" in r:
            extra.append(f"{r['idle_cpu_us']:.0f} µs CPU idle")
        if "p50" in r:
            value, spread = fmt(r["p50"]), f"p99 {fmt(r['p99'])}, p99.9 {fmt(r['p999'])}"
        elif r["min"] == r["max"]:
            value, spread = fmt(r["median"]), "(one run)"
        else:
            value, spread = fmt(r["median"]), f"{fmt(r['min'])}–{fmt(r['max'])}"
        met = "" if r["met"] is None else ("yes" if r["met"] else "**no**")
        lines.append(f"| {r['group']} | {r['name']} | {value} | {spread} | {r['unit']} | {'; '.join(extra)} | "
                     f"{r['target'] or ''} | {met} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- typing (the page's text field)

TYPING_ROUNDS = int(os.environ.get("BENCH_TYPING_ROUNDS", "40"))


def typing(display, observer):
    """The page's text field: a committed word as one `edit` message against the same word as `key`
    messages, from the send to the word's last key release at X; and a 2,000-character paste (8 edits,
    characters on borrowed keycodes among them) to its 2,000th key release."""
    proc, port, secret = web_daemon(display)
    client = WebSocketClient(port, secret)
    word = "world"

    def releases(mark, n, timeout):
        count = [0]
        def match(line):
            if line.startswith("keyrelease "):
                count[0] += 1
            return count[0] >= n
        hit = observer.wait_for(mark, match, timeout, fatal=False)
        return None if hit is None else int(observer.line(hit).split()[1])

    def send_all(messages):
        frames = b"".join(client.frame(m) for m in messages)
        t = time.monotonic_ns()
        client.sock.sendall(frames)
        return t

    try:
        # The first message makes the page the sender; Escape's keycode marks the end of a paste below.
        mark = observer.mark
        send_all(["key Escape"])
        hit = observer.wait_for(mark, lambda l: l.startswith("keyrelease "), 10)
        escape = observer.line(hit).split()[-1]
        times = {"edit": [], "key": []}
        lost = {"edit": 0, "key": 0}
        for r in range(TYPING_ROUNDS):
            for kind in (("edit", "key") if r % 2 == 0 else ("key", "edit")):
                observer.sync()
                mark = observer.mark
                t = send_all([f"edit 0 {word}"] if kind == "edit" else [f"key {c}" for c in word])
                end = releases(mark, len(word), 5)
                if end is None:
                    lost[kind] += 1
                else:
                    times[kind].append((end - t) / 1e3)
                time.sleep(0.01)
        med = {k: statistics.median(v) for k, v in times.items() if v}
        ratio = round(med["edit"] / med["key"], 2) if med.get("edit") and med.get("key") else None
        for kind, name in (("edit", f"a committed word ({len(word)} characters) as one edit, to its last key at X"),
                           ("key", f"the same word as {len(word)} key messages")):
            v = times[kind]
            if not v:
                continue
            extra = dict(samples=len(v), lost=lost[kind])
            if kind == "edit" and ratio is not None:
                extra.update(p50_ratio=ratio, p99_ratio=round(pct(times["edit"], 99) / pct(times["key"], 99), 2), ratio_of="the key path")
            row("typing", name, statistics.median(v), min(v), max(v), "µs",
                target="<= 1.5x the key path" if kind == "edit" else None,
                ok=(ratio <= 1.5) if kind == "edit" and ratio is not None else None, **extra)

        # A paste: 2,000 characters, in edits of at most 256.
        piece = "The quick brown fox, 0123 éü€漢😀 jumps. "
        paste = "".join(piece[i % len(piece)] for i in range(2000))
        messages = ["edit 0 " + paste[i:i + 256] for i in range(0, len(paste), 256)]
        runs, short = [], 0
        for _ in range(3):
            observer.sync()
            mark = observer.mark
            # Escape after the paste: its release is the paste's end, whatever keys a character took.
            t = send_all(messages + ["key Escape"])
            hit = observer.wait_for(mark, lambda l: l.startswith("keyrelease ") and l.endswith(escape), 60, fatal=False)
            if hit is not None:
                with observer.cond:
                    typed = sum(1 for l in observer.lines[mark:hit] if l.startswith("keyrelease "))
                if typed >= len(paste):
                    runs.append((int(observer.line(hit).split()[1]) - t) / 1e6)
                else:
                    short += 1
            time.sleep(0.2)
        if runs:
            row("typing", f"a 2,000-character paste ({len(messages)} edits) to its last key at X",
                statistics.median(runs), min(runs), max(runs), "ms", samples=len(runs), lost=3 - len(runs),
                reference=f"{round(len(paste) / statistics.median(runs) * 1000)} characters/s" + (f"; {short} short" if short else ""))
    finally:
        client.close()
        proc.stop()


def main():
    needed = ["touchbridge", "xobserve"]
    if not ONLY or ONLY - {"blast", "flood", "people", "view", "impress"}:
        needed += ["touchbridge-bench", "xtest-reference", "ideal-bridge"]
    for name in needed:
        if not os.access(os.path.join(BIN, name), os.X_OK):
            raise SystemExit(f"bench: {BIN}/{name} missing: run `make bench`")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_before = loadavg()
    if wanted("decode"):
        log("bench: decode"); decode()
    if wanted("core"):
        log("bench: core"); core()
    x_groups = {"inject", "e2e", "closed", "blast", "cost", "typing", "flood", "people", "view", "impress"}
    if x_groups & (ONLY or x_groups):
        xvfb = Xvfb()
        observer = Observer(xvfb.display)
        try:
            if wanted("inject"):
                log("bench: inject"); inject(xvfb.display)
            if wanted("e2e"):
                log(f"bench: end to end ({E2E_COUNT} packets per case)"); e2e(xvfb.display, observer)
            if wanted("closed"):
                log(f"bench: closed loop ({CLOSED_COUNT} packets per case)"); closed(xvfb.display, observer)
            if wanted("blast"):
                log("bench: blast (15,000 moves/s over one WebSocket for 3 s)"); blast(xvfb.display, observer)
            if wanted("typing"):
                log(f"bench: typing ({TYPING_ROUNDS} words per path, 3 pastes)"); typing(xvfb.display, observer)
            if wanted("cost"):
                log(f"bench: cost ({COST_SECONDS:.0f} s streaming, {COST_SECONDS:.0f} s idle)"); cost(xvfb.display)
            if wanted("flood"):
                log(f"bench: flood ({FLOOD_SECONDS:.0f} s of a 120 Hz sender under a flood from other ports)"); flood(xvfb.display, observer)
            if wanted("people"):
                log(f"bench: people ({CLOSED_COUNT} packets per case)"); people(xvfb.display, observer)
            if wanted("view"):
                log(f"bench: view ({VIEW_STILL_SECONDS:.0f} s still twice, {VIEW_STREAM_SECONDS:.0f} s streaming, "
                    f"{CLOSED_COUNT} packets of the closed loop with and without it)"); view(xvfb.display, observer)
            if wanted("impress"):
                log(f"bench: impress ({IMPRESS_TURNS} turns a case, LibreOffice Impress on port 1599)")
                impress_row(xvfb.display, observer)
        finally:
            observer.stop()
            xvfb.stop()
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, load average {load_before} before and "
               f"{loadavg()} after; Swift {os.path.basename(os.path.normpath(BIN))} build")
    text = table()
    print(f"touchbridge benchmarks, {started} ({machine})\n")
    print(text)
    os.makedirs(os.path.join(ROOT, ".bench"), exist_ok=True)
    doc = dict(started=started, machine=machine, rows=rows)
    stamp = started.replace(":", "")
    for name in (f"results-{stamp}.json", "latest.json"):
        with open(os.path.join(ROOT, ".bench", name), "w") as f:
            json.dump(doc, f, indent=1)
    with open(os.path.join(ROOT, ".bench", "latest.md"), "w") as f:
        f.write(f"touchbridge benchmarks, {started} ({machine})\n\n{text}\n")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
