#!/usr/bin/env python3
"""The hand at the VM's monitor cables (Tests/VM/run.sh with VM_GPU_OUTPUTS=N, N > 1): plugs and
unplugs the second (third, ...) head of qemu's virtio-gpu-pci when the guest's test asks.

qemu 7.2's virtio-gpu connects only head 0 until a display front-end reports a size for another head
(dpy_set_ui_info, virtio_gpu_ui_info: a head with a width and a height is enabled, the guest gets a
display event and its DRM connector becomes connected; width 0 disconnects it). With -display none
nothing ever does, so the guest sees one connected output however many heads the device has.
`-display dbus` exports each console on a D-Bus bus as /org/qemu/Display1/Console_<n> with
org.qemu.Display1.Console.SetUIInfo(width_mm q, height_mm q, xoff i, yoff i, width u, height u): what a
window of a D-Bus display client reports when it is resized. run.sh starts qemu with -display dbus on a
private bus (dbus-run-session) and this script beside it, which calls SetUIInfo (dbus-send) for the
guest.

The guest writes SHARE/out/heads/req-N (N = 1, 2, ...; written elsewhere and renamed in), one line
"HEAD WIDTH HEIGHT" (WIDTH 0: unplugged); this answers with SHARE/out/heads/done-N holding "ok" or the
error. Runs COMMAND (qemu) and exits with its status.
Usage: gpu-heads.py SHARE COMMAND...   (inside dbus-run-session: DBUS_SESSION_BUS_ADDRESS set)
"""
import os
import subprocess
import sys
import time


def set_ui_info(head, width, height):
    """Console_<head>'s SetUIInfo: the head side by side with the ones before it (xoff; the guest's
    compositor places its outputs itself)."""
    return subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.qemu", f"/org/qemu/Display1/Console_{head}",
         "org.qemu.Display1.Console.SetUIInfo", "uint16:0", "uint16:0", f"int32:{head * 1280 if width else 0}",
         "int32:0", f"uint32:{width}", f"uint32:{height}"],
        capture_output=True, text=True, timeout=30)


def main():
    share, command = sys.argv[1], sys.argv[2:]
    box = os.path.join(share, "out", "heads")
    os.makedirs(box, exist_ok=True)
    qemu = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    n, t0 = 1, time.monotonic()
    while qemu.poll() is None:
        req = os.path.join(box, f"req-{n}")
        if not os.path.exists(req):
            time.sleep(0.2)
            continue
        try:
            head, width, height = (int(v) for v in open(req).read().split())
            # qemu registers org.qemu on the bus shortly after it starts: a call before that is retried.
            deadline = time.monotonic() + 30
            while True:
                r = set_ui_info(head, width, height)
                if r.returncode == 0 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            answer = "ok" if r.returncode == 0 else f"error: dbus-send exited {r.returncode}: {r.stderr.strip()}"
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            answer = f"error {type(e).__name__}: {e}"
        print(f"gpu-heads: {time.monotonic() - t0:.1f} s request {n} ({open(req).read().strip()}): {answer}",
              file=sys.stderr, flush=True)
        tmp = os.path.join(box, f".done-{n}")
        with open(tmp, "w") as f:
            f.write(answer + "\n")
        os.rename(tmp, os.path.join(box, f"done-{n}"))
        n += 1
    return qemu.returncode


if __name__ == "__main__":
    sys.exit(main())
