#!/usr/bin/env python3
"""Takes the README's pictures of the presenter's view: the page in Slides mode driving a real LibreOffice Impress,
on slide 2 of the tests' three-slide deck, with the current slide's picture, the next slide's and the notes.

    .build/browser-venv/bin/python scripts/screenshot-presenter.py [BUILD_DIR]

BUILD_DIR holds the touchbridge binary (default .build/debug). Writes docs/web-presenter.png (a 390x844 phone,
portrait, device scale 3) and docs/web-presenter-landscape.png (the same phone turned: 844x390).

It starts, all of its own, and stops at the end (also on failure): Xvfb on a free display; soffice --impress
with the deck (Tests/IntegrationTests/Support/impress_deck.py, python3-odf) and a profile of its own that turns
Impress's remote control on and authorises touchbridge with PIN 0427 (no dialog; Benchmarks/impress.py);
`touchbridge serve` with private state directories, `--impress-pin 0427`; and Debian's Chromium through
Playwright (the browser venv that scripts/deps.sh makes, as the tests' browser_driver.py uses it) as a phone,
opening the page with the pairing secret in the address (`#k=`). The page switches to Slides, waits for
`impress on`, presses Start show, waits until the show settled (Impress ignores a command that comes while it
still sends every slide's preview and notes) and presses Next.

Impress's port, 127.0.0.1:1599, is one per machine: run it under `flock /tmp/impress-1599.lock` when the tests
(ImpressTests) or `make bench`'s impress row may run beside it. Needs Xvfb, xwd (x11-apps), soffice
(libreoffice-impress), python3-odf and chromium: scripts/deps.sh test, scripts/bench-deps.sh.
"""
import os, shutil, socket, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
import impress  # noqa: E402  (Benchmarks/impress.py: soffice with its profile, and whether the deck is drawn)
from playwright.sync_api import sync_playwright  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug")
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
TURNED = {"width": 844, "height": 390, "deviceScaleFactor": 3, "mobile": True}


def log(text):
    print("screenshot-presenter: " + text, file=sys.stderr, flush=True)


def start_xvfb():
    for n in range(140, 400):
        if not os.path.exists(f"/tmp/.X{n}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            break
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
        if time.time() > deadline or proc.poll() is not None:
            raise SystemExit(f"screenshot-presenter: Xvfb :{n} did not start")
        time.sleep(0.05)
    return proc, f":{n}"


def start_daemon(display, home):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "XDG_STATE_HOME": home + "/state", "XDG_CONFIG_HOME": home + "/config", "HOME": home}
    proc = subprocess.Popen([os.path.join(BUILD, "touchbridge"), "serve", "--display", display, "--udp-port", "0",
                             "--tuio-port", "0", "--http-port", str(port), "--bind", "127.0.0.1", "--mode", "touchpad",
                             "--backend", "xtest", "--log-level", "warning", "--impress-pin", impress.PIN,
                             "--debug-impress-port", str(impress.PORT)],
                            stdout=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 15
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("listening http"):
            with open(home + "/state/touchbridge/pairing-secret") as f:
                return proc, port, f.read().strip()
    proc.kill()
    raise SystemExit("screenshot-presenter: touchbridge serve did not say it listens on http")


def chromium():
    for path in (os.environ.get("CHROMIUM_BIN", ""), "/usr/lib/chromium/chromium", "/usr/lib/chromium/chrome"):
        if path and os.access(path, os.X_OK):
            return path
    raise SystemExit("screenshot-presenter: no Chromium at /usr/lib/chromium/chromium (Debian package chromium)")


def wait(page, expr, what, timeout=60):
    try:
        page.wait_for_function(expr, timeout=timeout * 1000, polling=100)
    except Exception as error:
        raise SystemExit(f"screenshot-presenter: {what} did not come within {timeout} s: {error}")


LOADED = "(id => { const i = document.getElementById(id); return i && i.getAttribute('src') && i.complete && i.naturalWidth > 0; })"


def main():
    home = tempfile.mkdtemp(prefix="touchbridge-shot-")
    xvfb, display = start_xvfb()
    daemon, office, context, profile = None, None, None, None
    try:
        daemon, port, secret = start_daemon(display, home)
        with sync_playwright() as playwright:
            profile = tempfile.mkdtemp(prefix="tb-chromium-")
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=chromium(), headless=True, chromium_sandbox=False,
                args=["--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio"],
                viewport={"width": PHONE["width"], "height": PHONE["height"]}, device_scale_factor=PHONE["deviceScaleFactor"],
                is_mobile=True, has_touch=True)
            page = context.pages[0] if context.pages else context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Emulation.setDeviceMetricsOverride", PHONE)
            cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
            page.goto(f"http://127.0.0.1:{port}/#k={secret}", wait_until="load")
            wait(page, "document.body.dataset.state === 'connected'", "the page's connection", 20)
            page.click("button[data-mode=presenter]")
            wait(page, "document.body.dataset.view === 'presenter'", "Slides mode", 10)
            log("starting LibreOffice Impress")
            office = impress.Office(display)  # the page pings by itself meanwhile
            wait(page, "document.getElementById('impress').dataset.impress === 'on'", "impress on (paired)", 60)
            impress.wait_drawn(display)
            time.sleep(1)
            page.click("#startShow")
            wait(page, "document.getElementById('slideCount').textContent === '1 of 3'", "the show (1 of 3)", 60)
            # The show settles: Impress sends every slide's preview and notes first, and ignores a command meanwhile.
            wait(page, LOADED + "('slideNow') && " + LOADED + "('slideNext')", "slide 1's and 2's pictures", 30)
            time.sleep(2)
            page.click("#next")
            wait(page, "document.getElementById('slideCount').textContent === '2 of 3'", "slide 2 (2 of 3)", 30)
            wait(page, LOADED + "('slideNow') && " + LOADED + "('slideNext') && "
                 "document.getElementById('notes').textContent.includes('Notes of slide 2')",
                 "slide 2's picture, slide 3's and slide 2's notes", 30)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            time.sleep(0.5)
            portrait = os.path.join(ROOT, "docs", "web-presenter.png")
            page.screenshot(path=portrait)
            log(f"wrote {portrait}")
            cdp.send("Emulation.setDeviceMetricsOverride", TURNED)
            page.set_viewport_size({"width": TURNED["width"], "height": TURNED["height"]})
            time.sleep(1)
            wait(page, LOADED + "('slideNow') && " + LOADED + "('slideNext')", "the pictures, turned", 10)
            landscape = os.path.join(ROOT, "docs", "web-presenter-landscape.png")
            page.screenshot(path=landscape)
            log(f"wrote {landscape}")
            context.close()
            context = None
    finally:
        # touchbridge first, so that Impress, killed, leaves no TIME_WAIT on its port (Benchmarks/impress.py).
        if daemon is not None:
            daemon.terminate()
            try:
                daemon.wait(5)
            except subprocess.TimeoutExpired:
                daemon.kill()
        if office is not None:
            office.stop()
        xvfb.terminate()
        xvfb.wait(5)
        shutil.rmtree(home, ignore_errors=True)
        if profile:
            shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
