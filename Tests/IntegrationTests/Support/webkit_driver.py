#!/usr/bin/python3
"""Drives a real WebKit (Debian's WebKitGTK 4.1, through python3-gi) for touchbridge's web page tests: the
iPhone's engine, whose composition events differ from Chromium's. The page is loaded in an off-screen
390x844 view, and an input method of the test's own (a WebKit2.InputMethodContext subclass) composes and
commits text the way a phone's keyboard does, so WebKit itself fires compositionstart/update/end,
beforeinput and input in its own order. Usage (needs an X display; Debian's /usr/bin/python3, which has gi):

    webkit_driver.py URL

prints "ready" once the page has loaded, then reads one JSON command per line on stdin, answering each with
one JSON line on stdout:

    {"cmd": "wait", "expr": JS, "timeout": s}  -> {"ok": true, "value": v} once JS is truthy, else ok false
    {"cmd": "eval", "expr": JS}                -> {"ok": true, "value": v}
    {"cmd": "compose", "text": T}              -> the input method's preedit (composing text) becomes T
    {"cmd": "commit", "text": T}               -> the composition ends and T is committed
    {"cmd": "delete", "offset": o, "count": n} -> the input method deletes n characters around the caret
    {"cmd": "touch", "kind": "begin|update|end", "x": X, "y": Y, "id": n}
                                               -> a touch of finger n at (X, Y) in the view's CSS pixels,
                                                  given to the view as GTK gives a touchscreen's (below)
    {"cmd": "quit"}
"""
import ctypes
import json
import os
import sys
import threading
import time
import warnings

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gdk, GLib, Gtk, WebKit2  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)


class PhoneKeyboard(WebKit2.InputMethodContext):
    """An input method that does what the test says: preedit while composing, then a commit."""

    def __init__(self):
        super().__init__()
        self.preedit = ""

    def do_get_preedit(self):
        return (self.preedit, [], len(self.preedit))

    def do_filter_key_event(self, event):
        return False

    def do_notify_focus_in(self):
        pass

    def do_notify_focus_out(self):
        pass

    def do_notify_cursor_area(self, x, y, width, height):
        pass

    def do_notify_surrounding(self, text, length, cursor_index, selection_index):
        pass

    def do_reset(self):
        self.preedit = ""

    def compose(self, text):
        if not self.preedit and text:
            self.emit("preedit-started")
        self.preedit = text
        self.emit("preedit-changed")

    def commit(self, text):
        if self.preedit:
            self.preedit = ""
            self.emit("preedit-changed")
            self.emit("preedit-finished")
        self.emit("committed", text)


class GdkEventTouch(ctypes.Structure):
    """GTK 3's GdkEventTouch (gdk/gdkevents.h), to fill in what PyGObject cannot: the event's sequence."""
    _fields_ = [("type", ctypes.c_int), ("window", ctypes.c_void_p), ("send_event", ctypes.c_int8),
                ("time", ctypes.c_uint32), ("x", ctypes.c_double), ("y", ctypes.c_double), ("axes", ctypes.c_void_p),
                ("state", ctypes.c_uint), ("sequence", ctypes.c_void_p), ("emulating_pointer", ctypes.c_int),
                ("device", ctypes.c_void_p), ("x_root", ctypes.c_double), ("y_root", ctypes.c_double)]


class Touchscreen:
    """Touches given to the WebView as GTK hands a touchscreen's to a widget (gtk_widget_event with a
    GdkEventTouch), so WebKit makes the page's touchstart/touchmove/touchend itself, with its own hit testing
    and coordinates. Xvfb has no touch device, so the events are made here. Two facts this depends on: WebKit
    keeps touches by their GdkEventSequence pointer, and a NULL one (all PyGObject can set) aborts the web view
    (a hash map's empty key), so the sequence is the finger's number + 1, never dereferenced; and WebKit
    dispatches them although `ontouchstart in window` is false without a touch device."""

    def __init__(self, view):
        self.view = view
        self.gdk = ctypes.CDLL("libgdk-3.so.0")
        self.gtk = ctypes.CDLL("libgtk-3.so.0")
        self.gdk.gdk_event_new.restype = ctypes.c_void_p
        self.gdk.gdk_event_new.argtypes = [ctypes.c_int]
        self.gdk.gdk_event_set_device.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.gdk.gdk_event_free.argtypes = [ctypes.c_void_p]
        self.gdk.g_object_ref.argtypes = [ctypes.c_void_p]
        self.gdk.g_object_ref.restype = ctypes.c_void_p
        self.gtk.gtk_widget_event.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
        ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        self.time = 1000

    @staticmethod
    def pointer(gobject):
        return ctypes.pythonapi.PyCapsule_GetPointer(gobject.__gpointer__, None)

    def touch(self, kind, x, y, finger):
        types = {"begin": Gdk.EventType.TOUCH_BEGIN, "update": Gdk.EventType.TOUCH_UPDATE, "end": Gdk.EventType.TOUCH_END}
        event = self.gdk.gdk_event_new(int(types[kind]))
        t = GdkEventTouch.from_address(event)
        t.window = self.gdk.g_object_ref(self.pointer(self.view.get_window()))  # gdk_event_free unrefs it
        t.x = t.x_root = float(x)
        t.y = t.y_root = float(y)
        t.sequence = finger + 1
        t.emulating_pointer = 1 if finger == 0 else 0
        self.time += 10
        t.time = self.time
        self.gdk.gdk_event_set_device(event, self.pointer(Gdk.Display.get_default().get_default_seat().get_pointer()))
        self.gtk.gtk_widget_event(self.pointer(self.view), event)
        self.gdk.gdk_event_free(event)


class Driver:
    def __init__(self, url):
        self.window = Gtk.OffscreenWindow()
        self.view = WebKit2.WebView(web_context=WebKit2.WebContext.new_ephemeral())
        self.window.add(self.view)
        self.window.set_default_size(390, 844)
        self.window.show_all()
        self.keyboard = PhoneKeyboard()
        self.view.set_input_method_context(self.keyboard)
        self.touchscreen = Touchscreen(self.view)
        self.view.connect("load-changed", self.loaded)
        self.view.load_uri(url)
        self.buffer = b""

    def loaded(self, view, event):
        if event != WebKit2.LoadEvent.FINISHED:
            return
        self.view.grab_focus()
        print("ready", flush=True)
        # A thread reads stdin and hands each line to the main loop (WebKit's replies need that loop free).
        threading.Thread(target=self.read_lines, daemon=True).start()

    def read_lines(self):
        for line in sys.stdin.buffer:
            GLib.idle_add(self.handle, line)
        GLib.idle_add(Gtk.main_quit)

    def answer(self, value):
        print(json.dumps(value), flush=True)

    def evaluate(self, expr, done):
        def finished(view, result):
            try:
                value = view.run_javascript_finish(result).get_js_value()
                done({"ok": True, "value": json.loads(value.to_json(0) or "null")})
            except Exception as error:  # reported to the test, which fails with it
                done({"ok": False, "error": str(error)})
        # run_javascript (deprecated in 2.40, still in 4.1): Debian 12's evaluate_javascript never called back here.
        self.view.run_javascript(expr, None, finished)

    def wait(self, expr, deadline):
        def checked(answer):
            if answer.get("ok") and answer.get("value"):
                self.answer(answer)
            elif time.monotonic() > deadline:
                self.answer({"ok": False, "value": answer.get("value"), "error": answer.get("error")})
            else:
                GLib.timeout_add(50, lambda: self.evaluate(expr, checked) and False)
        self.evaluate(expr, checked)

    def handle(self, data):
        command = json.loads(data)
        kind = command["cmd"]
        if kind == "quit":
            self.answer({"ok": True})
            Gtk.main_quit()
            return False
        if kind == "eval":
            self.evaluate(command["expr"], self.answer)
        elif kind == "wait":
            self.wait(command["expr"], time.monotonic() + float(command.get("timeout", 10)))
        elif kind == "compose":
            self.keyboard.compose(command["text"])
            self.answer({"ok": True})
        elif kind == "commit":
            self.keyboard.commit(command["text"])
            self.answer({"ok": True})
        elif kind == "touch":
            self.touchscreen.touch(command["kind"], command["x"], command["y"], int(command.get("id", 0)))
            self.answer({"ok": True})
        elif kind == "delete":
            self.keyboard.emit("delete-surrounding", int(command["offset"]), int(command["count"]))
            self.answer({"ok": True})
        else:
            self.answer({"ok": False, "error": f"unknown command {kind}"})
        return False


def main():
    driver = Driver(sys.argv[1])
    Gtk.main()
    driver.view.terminate_web_process()  # not left waiting for a connection that is gone
    driver.window.destroy()
    sys.stdout.flush()
    os._exit(0)  # the stdin reader thread may still be blocked in a read


if __name__ == "__main__":
    main()
