#!/usr/bin/env python3
"""Drives a real headless Chromium over the DevTools protocol for touchbridge's web page tests.

Standard library only: the protocol runs over --remote-debugging-pipe (Chromium reads NUL-separated
JSON commands on fd 3 and writes on fd 4). Usage:

    cdp_touch.py CHROMIUM URL [CHROMIUM FLAGS...]

opens URL in a 390x844 phone viewport (device scale 3, mobile) with touch emulation (turned on before
navigating, else the page sees no touch support), then prints "ready" and reads one JSON command per
line on stdin, answering each with one JSON line on stdout:

    {"cmd": "wait", "expr": JS, "timeout": s}   -> {"ok": true, "value": v} once JS is truthy, else ok false
    {"cmd": "eval", "expr": JS}                 -> {"ok": true, "value": v}
    {"cmd": "touch", "type": "touchStart", "points": [{"x": 100, "y": 200, "id": 0}]}
    {"cmd": "screenshot", "path": P}            -> writes a PNG
    {"cmd": "viewport", "width": W, "height": H} -> a phone turned (844x390) or a tablet (820x1180)
    {"cmd": "quit"}
"""
import base64
import ctypes
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class DevTools:
    def __init__(self, chromium, extra):
        self.profile = tempfile.mkdtemp(prefix="tb-chromium-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Above 10, so that dup2 onto 3 and 4 never meets its own number (which would keep CLOEXEC).
        high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD_CLOEXEC, 10)
        high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def child_fds():
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)
            # Chromium dies with this helper, however the helper ends (PR_SET_PDEATHSIG = 1).
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--user-data-dir=" + self.profile, "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
             "--remote-debugging-pipe"] + extra + ["about:blank"],
            preexec_fn=child_fds, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(high_r)
        os.close(high_w)
        self.buffer = b""
        self.next_id = 0
        self.session = None

    def call(self, method, params=None, timeout=15, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.next_id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{method}: no answer within {timeout} s")
            ready, _, _ = select.select([self.from_chrome], [], [], left)
            if ready:
                chunk = os.read(self.from_chrome, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe (did it start?)")
                self.buffer += chunk

    def open_page(self, url):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
        self.call("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        self.call("Page.enable")
        self.call("Page.navigate", {"url": url})

    def evaluate(self, expr):
        result = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expr}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=3)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    chromium, url, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    # SIGTERM from the test ends the helper through `finally` (Chromium closed, profile removed).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tools = DevTools(chromium, extra)
    try:
        tools.open_page(url)
        print("ready", flush=True)
        for line in sys.stdin:
            command = json.loads(line)
            try:
                kind = command["cmd"]
                if kind == "quit":
                    print(json.dumps({"ok": True}), flush=True)
                    break
                if kind == "wait":
                    deadline = time.monotonic() + float(command.get("timeout", 10))
                    value = None
                    while time.monotonic() < deadline:
                        try:
                            value = tools.evaluate(command["expr"])
                        except RuntimeError:
                            value = None  # the page is still loading (no document.body yet)
                        if value:
                            break
                        time.sleep(0.05)
                    answer = {"ok": bool(value), "value": value}
                elif kind == "eval":
                    answer = {"ok": True, "value": tools.evaluate(command["expr"])}
                elif kind == "touch":
                    tools.call("Input.dispatchTouchEvent", {"type": command["type"], "touchPoints": command["points"]})
                    answer = {"ok": True}
                elif kind == "viewport":
                    tools.call("Emulation.setDeviceMetricsOverride",
                               {"width": int(command["width"]), "height": int(command["height"]),
                                "deviceScaleFactor": float(command.get("scale", 3)), "mobile": True})
                    answer = {"ok": True}
                elif kind == "screenshot":
                    data = tools.call("Page.captureScreenshot", {"format": "png"})["data"]
                    with open(command["path"], "wb") as f:
                        f.write(base64.b64decode(data))
                    answer = {"ok": True}
                else:
                    answer = {"ok": False, "error": f"unknown command {kind}"}
            except Exception as error:  # reported to the test, which fails with it
                answer = {"ok": False, "error": str(error)}
            print(json.dumps(answer), flush=True)
    finally:
        tools.close()


if __name__ == "__main__":
    main()
