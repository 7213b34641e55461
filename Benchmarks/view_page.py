"""The view's row seen from a real page: a change of the screen to its picture shown on the page, in a real headless
Chromium (Debian's, driven through Playwright by Tests/IntegrationTests/Support/browser_driver.py with the venv that
scripts/deps.sh makes), on loopback. Standard library only here; run.py calls page_latency().

The screen changes by view-reference's `mark` mode: the desktop-like picture shifted (the whole screen changes, so
the capture and the JPEG have a real screen's work), and a 240x240 square of a new colour on the screen's centre.
It prints the time the X server had done that (after XSync, CLOCK_REALTIME). The page's own drawing is timed in
the page: CanvasRenderingContext2D.drawImage is wrapped (after the page loaded; the page's context finds the
method on the prototype at each call) so that each draw onto the view's canvas records when it was drawn, the
colour in the square (off its centre, where
the cursor is drawn in), and the time of the next animation frame, which is when the browser paints it:
the picture on the page. performance.timeOrigin + performance.now() is on the same clock as CLOCK_REALTIME.
"""
import json, os, random, statistics, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(ROOT, "Tests", "IntegrationTests", "Support", "browser_driver.py")
CHANGES = int(os.environ.get("BENCH_VIEW_PAGE_CHANGES", "60"))
# Six colours, each far from the one before on some channel; a JPEG's square is within 40 of its colour.
COLOURS = ["ff0000", "00ff00", "0000ff", "ffff00", "ff00ff", "00ffff"]
TARGET_MS = 50.0

HOOK = """(() => {
  if (window.tbBench) return true;
  const seen = window.tbBench = [];
  const proto = CanvasRenderingContext2D.prototype, draw = proto.drawImage;
  proto.drawImage = function (...args) {
    draw.apply(this, args);
    if (this.canvas.id !== 'view') return;
    const drawn = performance.timeOrigin + performance.now();
    const c = this.canvas, d = this.getImageData(Math.floor(c.width * 0.53), Math.floor(c.height * 0.46), 1, 1).data;
    const entry = {drawn, shown: 0, rgb: [d[0], d[1], d[2]]};
    seen.push(entry);
    requestAnimationFrame(() => { entry.shown = performance.timeOrigin + performance.now(); });
  };
  return true;
})()"""


def found(since, colour):
    """JavaScript: [drawn, shown] of the first draw from number `since` on whose square is `colour`, once painted."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (0, 2, 4))
    return (f"(() => {{ const s = window.tbBench; for (let i = {since}; i < s.length; i++) {{ const e = s[i]; "
            f"if (Math.abs(e.rgb[0] - {r}) < 40 && Math.abs(e.rgb[1] - {g}) < 40 && Math.abs(e.rgb[2] - {b}) < 40) "
            f"return e.shown ? [e.drawn, e.shown] : null; }} return null; }})()")


class Chromium:
    def __init__(self, url):
        chromium = os.environ.get("CHROMIUM_BIN") or next(
            (p for p in ("/usr/lib/chromium/chromium", "/usr/lib/chromium/chrome") if os.access(p, os.X_OK)), None)
        python = os.environ.get("BROWSER_PYTHON") or os.path.join(ROOT, ".build", "browser-venv", "bin", "python3")
        if chromium is None:
            raise SystemExit("bench: no Chromium at /usr/lib/chromium/chromium: run scripts/deps.sh (Debian package chromium)")
        if not os.access(python, os.X_OK):
            raise SystemExit(f"bench: no Playwright venv at {python}: run scripts/deps.sh")
        self.proc = subprocess.Popen([python, DRIVER, chromium, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            self.close()
            raise SystemExit("bench: Chromium did not open the page")

    def command(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("bench: the browser driver ended")
        return json.loads(line)

    def eval(self, expr):
        answer = self.command(cmd="eval", expr=expr)
        if not answer.get("ok"):
            raise SystemExit(f"bench: the page could not evaluate {expr[:60]}: {answer.get('error')}")
        return answer.get("value")

    def wait(self, expr, timeout, what):
        answer = self.command(cmd="wait", expr=expr, timeout=timeout)
        if not answer.get("ok"):
            raise SystemExit(f"bench: the page did not show {what} within {timeout} s")
        return answer.get("value")

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.proc.stdin.flush()
            self.proc.wait(10)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(5)


def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def page_latency(display, ref, web_daemon, row):
    """CHANGES changes of the screen, each once the page showed the last and a random 30-120 ms later (so the
    changes fall anywhere in the page's frame): the time from the change to the page's painting its picture (p50,
    p90, p99), and to its drawing it. The reference, on the same screen between the same runs: the C loop's wall
    time for one frame (XShmGetImage of the screen and tjCompress2 of the picture's size, nothing else): the
    capture loop alone."""
    daemon, port, secret = web_daemon(display)
    marker, browser = None, None
    shown, drawn = [], []
    try:
        marker = subprocess.Popen([ref, "mark", display], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if marker.stdout.readline().strip() != "ready":
            raise SystemExit("bench: view-reference mark did not start")
        browser = Chromium(f"http://127.0.0.1:{port}/#k={secret}")
        browser.wait("document.body && document.body.dataset.state === 'connected'", 30, "its connection")
        browser.wait("window.tbView && window.tbView.frames >= 1", 30, "a first picture")
        browser.eval(HOOK)
        # Settled: the viewing mark's painting is a change too; a second without a new frame.
        last = -1
        while True:
            count = browser.eval("window.tbView.frames")
            if count == last:
                break
            last = count
            time.sleep(1)
        picture = browser.eval("window.tbView.picture")
        for i in range(CHANGES):
            colour = COLOURS[i % len(COLOURS)]
            since = browser.eval("window.tbBench.length")
            marker.stdin.write(colour + "\n")
            marker.stdin.flush()
            changed = int(marker.stdout.readline()) / 1e6
            at = browser.wait(found(since, colour), 5, f"change {i + 1}'s colour #{colour}")
            drawn.append(at[0] - changed)
            shown.append(at[1] - changed)
            time.sleep(random.uniform(0.03, 0.12))
    finally:
        if browser is not None:
            browser.close()
        if marker is not None:
            marker.kill()
            marker.wait(5)
        daemon.stop()
    w, h = picture
    walls = []
    for _ in range(3):
        out = subprocess.run([ref, "loop", display, "30", "1", str(w), str(h)], capture_output=True, text=True,
                             check=True).stdout.split()
        walls.append(int(out[3]) / 1e6)
    floor = statistics.median(walls)
    p50, p90, p99 = pct(shown, 50), pct(shown, 90), pct(shown, 99)
    row("view", f"screen change to picture on the page (Chromium, loopback): a changing 1920x1080 screen, a "
        f"{w}x{h} picture, the page's next animation frame after drawing it", p50, p90, p99, "ms p50 (p90, p99)",
        f"p50 <= {TARGET_MS:.0f} ms", p50 <= TARGET_MS, samples=len(shown), ratio_vs_capture_loop=round(p50 / floor, 2),
        reference=f"the capture loop alone (XShmGetImage + tjCompress2 of {w}x{h}): {floor:.1f} ms a frame by the "
        f"wall clock ({p50 / floor:.1f}x); change to drawn on the canvas p50 {pct(drawn, 50):.1f} ms")
