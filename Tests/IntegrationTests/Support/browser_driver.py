#!/usr/bin/env python3
"""Drives a real headless Chromium through Playwright (PyPI `playwright`, sync API) for touchbridge's web
page tests. The browser is Debian's own (its executable path is given; Playwright downloads none); the
raw DevTools calls (touch, pen, device metrics, screenshots) go through a Playwright CDP session. Usage:

    browser_driver.py CHROMIUM URL [CHROMIUM FLAGS...]

opens URL in a 390x844 phone viewport (device scale 3, mobile) with touch emulation (turned on before
navigating, else the page sees no touch support), then prints "ready" and reads one JSON command per
line on stdin, answering each with one JSON line on stdout:

    {"cmd": "wait", "expr": JS, "timeout": s}   -> {"ok": true, "value": v} once JS is truthy, else ok false
    {"cmd": "eval", "expr": JS}                 -> {"ok": true, "value": v}
    {"cmd": "touch", "type": "touchStart", "points": [{"x": 100, "y": 200, "id": 0}]}
    {"cmd": "pen", "type": "mouseMoved"|"mousePressed"|"mouseReleased", "x": X, "y": Y, "force": 0..1,
     "tiltX": deg, "tiltY": deg, "twist": deg, "buttons": bits, "button": "none"|"left"|"right"}
                                                -> Input.dispatchMouseEvent with pointerType "pen"
    {"cmd": "screenshot", "path": P}            -> writes a PNG
    {"cmd": "viewport", "width": W, "height": H} -> a phone turned (844x390) or a tablet (820x1180)
    {"cmd": "cdp", "method": M, "params": {...}} -> {"ok": true, "value": result}: any DevTools call, e.g.
                                                   Input.imeSetComposition, Input.insertText,
                                                   Input.dispatchKeyEvent (a phone keyboard's input)
    {"cmd": "grant", "permissions": [...]}       -> Browser.grantPermissions for the page's origin
    {"cmd": "quit"}

scripts/deps.sh installs Playwright into .build/browser-venv (Browser.swift runs this script with that
venv's python).
"""
import base64
import json
import shutil
import signal
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}


class Driver:
    def __init__(self, playwright, chromium, extra):
        self.profile = tempfile.mkdtemp(prefix="tb-chromium-")
        # A persistent context gives Chromium the profile directory we remove at the end (never HOME's).
        self.context = playwright.chromium.launch_persistent_context(
            self.profile, executable_path=chromium, headless=True, chromium_sandbox=False,
            args=["--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                  "--mute-audio"] + extra,
            viewport={"width": PHONE["width"], "height": PHONE["height"]},
            device_scale_factor=PHONE["deviceScaleFactor"], is_mobile=True, has_touch=True)
        self.page = self.context.pages[0] if self.context.pages else self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)

    def open_page(self, url):
        self.cdp.send("Emulation.setDeviceMetricsOverride", PHONE)
        self.cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        # "commit": the navigation started; the tests wait for the page's own state themselves.
        self.page.goto(url, wait_until="commit")

    def evaluate(self, expr):
        result = self.cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expr}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def pen(self, command):
        params = {
            "type": command["type"], "x": float(command["x"]), "y": float(command["y"]),
            "pointerType": "pen", "force": float(command.get("force", 0)),
            "tiltX": float(command.get("tiltX", 0)), "tiltY": float(command.get("tiltY", 0)),
            "twist": int(command.get("twist", 0)), "buttons": int(command.get("buttons", 0)),
            "button": command.get("button", "none"),
        }
        if command["type"] in ("mousePressed", "mouseReleased"):
            params["clickCount"] = 1
        self.cdp.send("Input.dispatchMouseEvent", params)

    def close(self):
        try:
            self.context.close()
        except Exception:
            pass
        shutil.rmtree(self.profile, ignore_errors=True)


def answer_for(driver, command):
    kind = command["cmd"]
    if kind == "wait":
        deadline = time.monotonic() + float(command.get("timeout", 10))
        value = None
        while time.monotonic() < deadline:
            try:
                value = driver.evaluate(command["expr"])
            except Exception:
                value = None  # the page is still loading (no document.body yet)
            if value:
                break
            time.sleep(0.05)
        return {"ok": bool(value), "value": value}
    if kind == "eval":
        return {"ok": True, "value": driver.evaluate(command["expr"])}
    if kind == "touch":
        driver.cdp.send("Input.dispatchTouchEvent", {"type": command["type"], "touchPoints": command["points"]})
        return {"ok": True}
    if kind == "pen":
        driver.pen(command)
        return {"ok": True}
    if kind == "viewport":
        driver.cdp.send("Emulation.setDeviceMetricsOverride",
                        {"width": int(command["width"]), "height": int(command["height"]),
                         "deviceScaleFactor": float(command.get("scale", 3)), "mobile": True})
        return {"ok": True}
    if kind == "cdp":
        return {"ok": True, "value": driver.cdp.send(command["method"], command.get("params", {}))}
    if kind == "grant":
        origin = driver.evaluate("location.origin")
        driver.context.grant_permissions(command["permissions"], origin=origin)
        return {"ok": True}
    if kind == "screenshot":
        data = driver.cdp.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(command["path"], "wb") as f:
            f.write(base64.b64decode(data))
        return {"ok": True}
    return {"ok": False, "error": f"unknown command {kind}"}


def main():
    chromium, url, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    # SIGTERM from the test ends the helper through `finally` (Chromium closed, profile removed).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    with sync_playwright() as playwright:
        driver = Driver(playwright, chromium, extra)
        try:
            driver.open_page(url)
            print("ready", flush=True)
            for line in sys.stdin:
                command = json.loads(line)
                if command.get("cmd") == "quit":
                    print(json.dumps({"ok": True}), flush=True)
                    break
                try:
                    answer = answer_for(driver, command)
                except Exception as error:  # reported to the test, which fails with it
                    answer = {"ok": False, "error": str(error)}
                print(json.dumps(answer), flush=True)
        finally:
            driver.close()


if __name__ == "__main__":
    main()
