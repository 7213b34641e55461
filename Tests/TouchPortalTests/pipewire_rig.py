#!/usr/bin/env python3
"""A private PipeWire for PipeWireCastTests: the daemon, WirePlumber (which links a stream to the node it
names, as in a desktop session) on a session bus of its own and a video source of one colour (GStreamer's videotestsrc into
pipewiresink: 640x480 BGRx at 10 frames a second), in a runtime directory of its own under /tmp.

Prints `ready RUNTIME_DIR NODE_ID` when the source's node exists (or `fail WHY`, and exits 1, when a part is
missing or does not come up in 30 s). Then reads its stdin: a line
`stop-source` ends the source (its node goes) and prints `stopped`; end of input stops everything and
removes the directory. Its stderr is not read (the test's own output stays the test's).
Usage: pipewire_rig.py COLOUR (0xAARRGGBB)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE = "touchbridge-test-source"


def fail(why):
    print(f"fail {why}", flush=True)
    sys.exit(1)


def main():
    # What the test process left open (the test runner's own pipes among them) is not the rig's to hold:
    # a runner reading its pipe to the end would wait for the rig, or stop reading.
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    colour = sys.argv[1]
    for tool in ("dbus-daemon", "pipewire", "wireplumber", "gst-launch-1.0", "pw-dump"):
        if not shutil.which(tool):
            fail(f"{tool} is missing (scripts/deps.sh test installs pipewire, wireplumber, gstreamer1.0-pipewire, gstreamer1.0-tools)")
    rt = tempfile.mkdtemp(prefix="touchbridge-pipewire-")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "XDG_RUNTIME_DIR": rt, "HOME": rt,
           "XDG_CONFIG_HOME": f"{rt}/config", "XDG_STATE_HOME": f"{rt}/state", "XDG_DATA_HOME": f"{rt}/data",
           "DBUS_SESSION_BUS_ADDRESS": f"unix:path={rt}/bus"}
    log = open(os.path.join(rt, "log"), "w")
    procs = []

    def start(argv):
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        procs.append(p)
        return p

    def until(what, ready):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            got = ready()
            if got is not None:
                return got
            for p in procs:
                if p.poll() is not None:
                    log.flush()
                    fail(f"{p.args[0]} exited {p.returncode} while waiting for {what}: {open(log.name).read()[-2000:]}")
            time.sleep(0.05)
        log.flush()
        fail(f"no {what} within 30 s: {open(log.name).read()[-2000:]}")

    def node_id():
        r = subprocess.run(["pw-dump"], env=env, capture_output=True, text=True, timeout=10)
        try:
            objects = json.loads(r.stdout or "[]")
        except ValueError:
            return None
        for o in objects:
            props = (o.get("info") or {}).get("props") or {}
            if o.get("type", "").endswith(":Node") and props.get("node.name") == SOURCE:
                return o["id"]
        return None

    try:
        start(["dbus-daemon", "--session", f"--address=unix:path={rt}/bus", "--nofork", "--nopidfile"])
        until("session bus", lambda: True if os.path.exists(f"{rt}/bus") else None)
        start(["pipewire"])
        until("PipeWire socket", lambda: True if os.path.exists(f"{rt}/pipewire-0") else None)
        start(["wireplumber"])
        source = start(["gst-launch-1.0", "-q", "videotestsrc", "pattern=solid-color", f"foreground-color={colour}",
                        "is-live=true", "!", "video/x-raw,format=BGRx,width=640,height=480,framerate=10/1", "!",
                        "pipewiresink", "mode=provide", f"stream-properties=p,media.class=Video/Source,node.name={SOURCE}"])
        node = until("video source node", node_id)
        print(f"ready {rt} {node}", flush=True)
        for line in sys.stdin:
            if line.strip() == "stop-source":
                # SIGKILL: gst-launch does not end on SIGTERM while a consumer is linked.
                source.kill()
                source.wait(timeout=30)
                print("stopped", flush=True)
    finally:
        # SIGKILL: nothing of theirs outlives the directory, and WirePlumber and PipeWire take seconds
        # over SIGTERM.
        for p in reversed(procs):
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(rt, ignore_errors=True)


if __name__ == "__main__":
    main()
