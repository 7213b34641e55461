#!/usr/bin/env python3
"""The hand at the VM's keyboard and pointer (Tests/VM/test-portal.sh): the guest's test asks, over the
9p share, for keys to be pressed or a point to be clicked; this sends them into the VM as a person's
input, through qemu's QMP `input-send-event` on run.sh's virtio keyboard and virtio tablet (VM_INPUT=1; the tablet is
absolute: 0..32767 on each axis across the screen).

The guest writes SHARE/out/input/req-N.json (N = 1, 2, ...; written elsewhere and renamed in), one JSON
object: {"keys": ["alt", "s"]} (a chord: down in order, up in reverse; qemu's QKeyCode names),
{"click": [x, y, width, height]} (the left button at pixel x, y of a width x height screen) or
{"move": [x, y, width, height]}; this answers with SHARE/out/input/done-N holding "ok" or the error.
Runs until qemu's QMP socket closes (the VM powered off) or SHARE/out/input/stop appears.
Usage: qmp-input.py QMP_SOCKET SHARE
"""
import json
import os
import socket
import sys
import time

ABS_MAX = 32767
# input-send-event's `device` names a display device's console (with -display none the input devices
# are bound to none: "is not bound to a QemuConsole"); without it qemu gives each event to the input
# device that takes its kind and was activated last: absolute motion and its buttons to the virtio
# tablet (the only absolute device), keys to a keyboard. QMP_INPUT_DEVICE overrides.
DEVICE = os.environ.get("QMP_INPUT_DEVICE", "")


class Qmp:
    def __init__(self, path, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.file = self.sock.makefile("rw", encoding="utf-8")
        greeting = json.loads(self.file.readline())
        if "QMP" not in greeting:
            raise RuntimeError(f"no QMP greeting: {greeting}")
        self.call("qmp_capabilities")

    def call(self, command, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.file.write(json.dumps(msg) + "\n")
        self.file.flush()
        while True:
            line = self.file.readline()
            if not line:
                raise EOFError("qemu closed QMP")
            reply = json.loads(line)
            if "event" in reply:
                continue
            if "error" in reply:
                raise RuntimeError(f"{command}: {reply['error']}")
            return reply.get("return")

    def events(self, device, events):
        if device:
            self.call("input-send-event", device=device, events=events)
        else:
            self.call("input-send-event", events=events)


def key(name, down):
    return {"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": name}}}


def do(qmp, req):
    if "keys" in req:
        names = req["keys"]
        for n in names:
            qmp.events(DEVICE, [key(n, True)])
            time.sleep(0.05)
        for n in reversed(names):
            qmp.events(DEVICE, [key(n, False)])
            time.sleep(0.05)
    elif "click" in req or "move" in req:
        x, y, w, h = req.get("click") or req["move"]
        ax, ay = round(x * ABS_MAX / max(w - 1, 1)), round(y * ABS_MAX / max(h - 1, 1))
        qmp.events(DEVICE, [{"type": "abs", "data": {"axis": "x", "value": ax}},
                                {"type": "abs", "data": {"axis": "y", "value": ay}}])
        if "click" in req:
            time.sleep(0.2)
            qmp.events(DEVICE, [{"type": "btn", "data": {"down": True, "button": "left"}}])
            time.sleep(0.1)
            qmp.events(DEVICE, [{"type": "btn", "data": {"down": False, "button": "left"}}])
    else:
        raise ValueError(f"unknown request {req}")


def main():
    path, share = sys.argv[1], sys.argv[2]
    box = os.path.join(share, "out", "input")
    qmp = Qmp(path, 60)
    print("qmp-input: connected", flush=True)
    n = 1
    while not os.path.exists(os.path.join(box, "stop")):
        req_path = os.path.join(box, f"req-{n}.json")
        if not os.path.exists(req_path):
            try:
                qmp.call("query-status")  # qemu gone: the socket fails here
            except (OSError, EOFError):
                break
            time.sleep(0.2)
            continue
        try:
            req = json.load(open(req_path))
            do(qmp, req)
            answer = "ok"
        except (OSError, EOFError):
            break
        except Exception as e:  # noqa: BLE001 - carried to the guest
            answer = f"error {type(e).__name__}: {e}"
        print(f"qmp-input: {n} {json.dumps(req)} -> {answer}", flush=True)
        tmp = os.path.join(box, f".done-{n}")
        with open(tmp, "w") as f:
            f.write(answer + "\n")
        os.rename(tmp, os.path.join(box, f"done-{n}"))
        n += 1
    print("qmp-input: done", flush=True)


if __name__ == "__main__":
    main()
