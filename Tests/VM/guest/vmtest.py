#!/usr/bin/env python3
"""The VM's guest tests: run inside the test VM (Tests/VM/test.sh boots it) against the VM's own
Xorg (:0, dummy video, libinput) with the real touchbridge binary and, for the uinput tests, the
uinput devices the kernel makes. Observers are real X clients (xi2watch, compiled on the host).

Each test prints `PASS <name> <seconds>` or `FAIL <name> <reason>`; the exit status is the number of
failures. Every wait has a timeout; nothing proves absence by sleeping.

Usage: vmtest.py [name ...]   (default: every test)
"""
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import (  # noqa: E402  the rig's shared guest Python (rig.py)
    BIN, ENV, OUT, SECRET, Daemon, Drive, Watch, WebSocket, check, check_fingers_at, expected_pixel,
    free_port, note, packet, pen_msg, pen_pixel, private_env, regex, run_test, setxkbmap, stream, until, view_frame, view_settles, wait_count)


# ---------------------------------------------------------------------------------------------
# Tests

def test_xtest_touchscreen_moves_and_clicks():
    """The XTest backend in the VM: a finger at the centre puts the pointer on (960,540) ±1 with
    button 1 down; lifting it releases button 1 (the harness end to end)."""
    watch = Watch()
    daemon = Daemon("--backend", "xtest")
    try:
        m = watch.mark
        daemon.send(packet({0: (0.0, 0.0)}))
        watch.wait_for(regex(r"^press src=\d+ button=1"), 30, "button 1 press", m)
        x, y, buttons = watch.query()
        check(abs(x - 960) <= 1 and abs(y - 540) <= 1, f"pointer at ({x},{y}), want (960,540) ±1")
        check(buttons & 1, f"button 1 not held after the finger went down (mask {buttons})")
        m = watch.mark
        daemon.send(packet({}, ended=[0]))
        watch.wait_for(regex(r"^release src=\d+ button=1"), 30, "button 1 release", m)
        x, y, buttons = watch.query()
        check(buttons == 0, f"buttons still held after the lift (mask {buttons})")
    finally:
        daemon.stop()
        watch.stop()


def create(watch, drive, command, name):
    """Creates a device and waits until the X server has added it (hot-plug through udev); returns
    its X device id and its scroll classes."""
    m = watch.mark
    drive.do(command)
    return watch.device_named(name, since=m, timeout=60)


def events(watch, mark, kind):
    return [l for l in watch.since(mark) if l.startswith(kind)]


def test_uinput_touchscreen_three_fingers():
    """Three fingers on the uinput touchscreen: three simultaneous XI 2.2 touch sequences (distinct
    touch ids, all begun before any ends) at the pixels sent (±1); lifting ends all three."""
    watch = Watch()
    drive = Drive()
    try:
        src, _ = create(watch, drive, "ts create 1920 1080", "touchbridge_touchscreen")
        points = {0: (100, 200), 1: (960, 540), 2: (1800, 1000)}
        m = watch.mark
        drive.do(*[f"ts touch {s} {x} {y}" for s, (x, y) in points.items()], "ts sync")
        begins = wait_count(watch, m, f"touch begin src={src} ", 3, 30, "3 touch begins")
        got = []
        for line in begins:
            r = re.search(r"id=(\d+) x=([\d.]+) y=([\d.]+)", line)
            got.append((int(r.group(1)), float(r.group(2)), float(r.group(3))))
        note(f"touch begins (id, x, y): {got}")
        check(len({g[0] for g in got}) == 3, f"want 3 distinct touch ids, got {got}")
        for (_, (x, y)), (_, gx, gy) in zip(sorted(points.items()), got):
            check(abs(gx - x) <= 1 and abs(gy - y) <= 1, f"touch at ({gx},{gy}), want ({x},{y}) ±1; all: {got}")
        # Move all three, then lift all three: three updates, three ends, none ended before.
        m2 = watch.mark
        drive.do(*[f"ts touch {s} {x + 50} {y - 50}" for s, (x, y) in points.items()], "ts sync")
        watch.wait_for(regex(rf"^touch update src={src} id={got[2][0]} x=1850"), 30, "finger 3's update", m2)
        check(not events(watch, m, "touch end"), "a touch ended before the lift")
        m3 = watch.mark
        drive.do("ts lift 0", "ts lift 1", "ts lift 2", "ts sync")
        for tid, _, _ in got:
            watch.wait_for(regex(rf"^touch end src={src} id={tid} "), 30, f"touch end of id {tid}", m3)
    finally:
        drive.stop()
        watch.stop()


def scroll_classes(description):
    """{valuator: (type, increment)} from a `device` line's scroll= fields."""
    out = {}
    for v, kind, inc in re.findall(r"scroll=(\d+):(\w+):(-?[\d.]+)", description):
        out[int(v)] = (kind, float(inc))
    return out


def vertical_scroll(description, what):
    """The vertical scroll valuator of a `device` line and its increment (one wheel click)."""
    classes = scroll_classes(description)
    vertical = [v for v, (k, _) in classes.items() if k == "vertical"]
    check(vertical, f"no vertical scroll class on {what}: {description}")
    return vertical[0], classes[vertical[0]][1]


def check_smooth_scroll(watch, mark, src, valuator, increment, what):
    """Once `src` scrolled: several valuator steps since `mark`, all one way, the median finer than half a
    wheel click and at most one in ten a click or more. A loaded guest hands a burst of packets on at once
    (a step of 134.6 among 48 of 4 to 59, at load 7 with other VMs beside it), which is no click; a
    scroll by whole clicks has every step a click."""
    watch.wait_for(regex(rf"^motion src={src} .* v{valuator}="), 30, "scroll valuator motion", mark)
    watch.sync()
    steps, values = vertical_steps(watch, mark, src, valuator)
    note(f"{what}, valuator {valuator} (increment {increment}): {len(steps)} steps {steps[:8]}")
    check(len(steps) >= 3, f"want several scroll steps, got values {values}")
    moving = [d for d in steps if d != 0]
    check(moving and (all(d > 0 for d in moving) or all(d < 0 for d in moving)),
          f"want the scroll going one way, got {steps}")
    coarse = [d for d in moving if abs(d) >= abs(increment)]
    median = sorted(abs(d) for d in moving)[len(moving) // 2]
    check(median < abs(increment) / 2 and len(coarse) * 10 <= len(moving),
          f"want steps finer than one click ({increment}): median {median}, {len(coarse)} of {len(moving)} a click or more: {steps}")


def check_pinch(watch, mark, what):
    """GesturePinchBegin/Update/End since `mark`, the scale growing past 1.2."""
    watch.wait_for(regex(r"^pinch end"), 30, "GesturePinchEnd", mark)
    pinch = events(watch, mark, "pinch ")
    check(pinch[0].startswith("pinch begin"), f"the first pinch event is not a begin: {pinch[:3]}")
    scales = [float(re.search(r"scale=([\d.]+)", l).group(1)) for l in pinch if l.startswith("pinch update")]
    note(f"{what}: {len(pinch)} events; scales {scales[:3]} ... {scales[-3:]}")
    check(len(scales) >= 2 and scales[-1] > 1.2 and scales[-1] > scales[0], f"want the scale growing past 1.2, got {scales}")


def check_swipe(watch, mark, what):
    """GestureSwipe* with 3 fingers since `mark`, moving right."""
    watch.wait_for(regex(r"^swipe end"), 30, "GestureSwipeEnd", mark)
    swipe = events(watch, mark, "swipe ")
    note(f"{what}: {len(swipe)} events, {swipe[0]} ... {swipe[-1]}")
    check(swipe[0].startswith("swipe begin") and "fingers=3" in swipe[0], f"want a 3-finger swipe begin: {swipe[:3]}")
    dx = sum(float(re.search(r"dx=(-?[\d.]+)", l).group(1)) for l in swipe if l.startswith("swipe update"))
    check(dx > 20, f"want the swipe moving right, total dx {dx}")


def check_click(watch, mark, what):
    """Button 1 pressed and released since `mark`."""
    watch.wait_for(regex(r"^press src=\d+ button=1"), 30, f"{what}: button 1 press", mark)
    watch.wait_for(regex(r"^release src=\d+ button=1"), 30, f"{what}: button 1 release", mark)


def vertical_steps(watch, mark, src, valuator):
    """The successive changes of a scroll valuator in `motion` events from `src` since `mark`."""
    values = []
    for line in watch.since(mark):
        if line.startswith(f"motion src={src} "):
            r = re.search(rf" v{valuator}=(-?[\d.]+)", line)
            if r:
                values.append(float(r.group(1)))
    return [b - a for a, b in zip(values, values[1:])], values


def test_uinput_pointer_smooth_scroll():
    """The uinput pointer's REL_WHEEL_HI_RES: quarter notches give smooth-scroll valuator steps of a
    quarter of the scroll increment (finer than a wheel click), and the full notch a button 5 click."""
    watch = Watch()
    drive = Drive()
    try:
        src, desc = create(watch, drive, "ptr create", "touchbridge_pointer")
        v, inc = vertical_scroll(desc, "the pointer")
        m = watch.mark
        for _ in range(8):
            drive.do("ptr scroll -30 0", "ptr sync")
        # Both emulated clicks (at 120 and 240): every motion event before the second is in by then.
        clicks = []
        watch.wait_for(lambda l: l.startswith(f"press src={src} button=5") and (clicks.append(l) or len(clicks) >= 2),
                       30, "two emulated button 5 clicks, at each full notch", m)
        steps, values = vertical_steps(watch, m, src, v)
        note(f"pointer scroll valuator {v} (increment {inc}): steps {steps}")
        check(len(values) >= 4, f"want smooth-scroll motion events, got values {values}")
        check(steps and all(0 < abs(d) < abs(inc) for d in steps),
              f"want steps finer than one click ({inc}), got {steps}")
    finally:
        drive.stop()
        watch.stop()


def pad_frames(drive, frames):
    """Each frame: {slot: (x, y)} of the fingers down; a slot missing from a frame lifts."""
    down = set()
    for f in frames:
        cmds = [f"pad touch {s} {x} {y}" for s, (x, y) in f.items()]
        cmds += [f"pad lift {s}" for s in down - set(f)]
        down = set(f)
        drive.do(*cmds, "pad sync")
        time.sleep(0.012)  # a touchpad's frame rate (libinput reads timestamps: a realistic speed)


def test_uinput_touchpad_two_finger_scroll():
    """Two fingers moving down the native touchpad: libinput's smooth two-finger scroll, valuator
    steps finer than one wheel click."""
    watch = Watch()
    drive = Drive()
    try:
        src, desc = create(watch, drive, "pad create 100 60", "touchbridge_touchpad")
        v, inc = vertical_scroll(desc, "the touchpad")
        m = watch.mark
        frames = [{0: (800, 300 + 10 * i), 1: (1200, 300 + 10 * i)} for i in range(60)] + [{}]
        pad_frames(drive, frames)
        check_smooth_scroll(watch, m, src, v, inc, "touchpad scroll")
    finally:
        drive.stop()
        watch.stop()


def test_uinput_touchpad_pinch():
    """Two fingers spreading on the native touchpad: GesturePinchBegin/Update/End, the scale growing."""
    watch = Watch()
    drive = Drive()
    try:
        src, _ = create(watch, drive, "pad create 100 60", "touchbridge_touchpad")
        m = watch.mark
        frames = [{0: (850 - 8 * i, 550 - 4 * i), 1: (1150 + 8 * i, 650 + 4 * i)} for i in range(50)] + [{}]
        pad_frames(drive, frames)
        check_pinch(watch, m, "pinch")
    finally:
        drive.stop()
        watch.stop()


def test_uinput_touchpad_three_finger_swipe():
    """Three fingers moving together on the native touchpad: GestureSwipe* with 3 fingers."""
    watch = Watch()
    drive = Drive()
    try:
        src, _ = create(watch, drive, "pad create 100 60", "touchbridge_touchpad")
        m = watch.mark
        frames = [{0: (600 + 15 * i, 600), 1: (900 + 15 * i, 620), 2: (1200 + 15 * i, 600)} for i in range(40)] + [{}]
        pad_frames(drive, frames)
        check_swipe(watch, m, "swipe")
    finally:
        drive.stop()
        watch.stop()


def test_uinput_touchpad_tap_clicks():
    """A one-finger tap on the native touchpad: libinput's tap-to-click gives button 1 press + release."""
    watch = Watch()
    drive = Drive()
    try:
        src, _ = create(watch, drive, "pad create 100 60", "touchbridge_touchpad")
        m = watch.mark
        drive.do("pad touch 0 1000 600", "pad sync", "pad lift 0", "pad sync")
        check_click(watch, m, "tap")
    finally:
        drive.stop()
        watch.stop()


def test_uinput_sigkill_ends_touches_and_buttons():
    """SIGKILL of the process holding three touches and a pressed button: the kernel destroys its
    devices, X ends every touch and releases the button."""
    watch = Watch()
    drive = Drive()
    try:
        ts, _ = create(watch, drive, "ts create 1920 1080", "touchbridge_touchscreen")
        ptr, _ = create(watch, drive, "ptr create", "touchbridge_pointer")
        m = watch.mark
        drive.do("ts touch 0 300 300", "ts touch 1 600 300", "ts touch 2 900 300", "ts sync")
        for i in range(3):
            watch.wait_for(regex(rf"^touch begin src={ts} .* x={300 * (i + 1)}"), 30, f"touch {i + 1} begin", m)
        ids = [re.search(r"id=(\d+)", l).group(1) for l in events(watch, m, f"touch begin src={ts} ")]
        m2 = watch.mark
        drive.do("ptr button 273 1", "ptr sync")  # BTN_RIGHT: button 3 (button 1 is the emulated touch's)
        watch.wait_for(regex(rf"^press src={ptr} button=3"), 30, "button 3 press", m2)
        m3 = watch.mark
        drive.p.send_signal(signal.SIGKILL)
        drive.p.wait(10)
        for tid in ids:
            watch.wait_for(regex(rf"^touch end src={ts} id={tid} "), 30, f"touch end of id {tid} after SIGKILL", m3)
        watch.wait_for(regex(rf"^release src={ptr} button=3"), 30, "button 3 release after SIGKILL", m3)
        watch.wait_for(regex(rf"^removed src={ts}$"), 30, "the touchscreen's removal", m3)
        x, y, buttons = watch.query()
        check(buttons == 0, f"buttons still held after SIGKILL (mask {buttons})")
    finally:
        drive.stop()
        watch.stop()


def set_monitors():
    """Two RandR monitors on the 1920x1080 screen: LEFT and RIGHT, 960 pixels each (made again when
    they exist: a second --setmonitor of a name is refused)."""
    for name in ("LEFT", "RIGHT"):
        subprocess.run(["xrandr", "--delmonitor", name], env=ENV, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for name, geometry in (("LEFT", "960/254x1080/286+0+0"), ("RIGHT", "960/254x1080/286+960+0")):
        subprocess.run(["xrandr", "--setmonitor", name, geometry, "none"], check=True, env=ENV, timeout=60,
                       stdout=subprocess.DEVNULL)


def test_touchbridge_uinput_three_fingers_on_named_monitor():
    """touchbridge --backend uinput, touchscreen mode, --monitor RIGHT: three PoseAI fingers give three
    simultaneous XI 2.2 touch sequences at their pixels on RIGHT (±1); lifting them ends all three."""
    set_monitors()
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", "--monitor", "RIGHT")
        src, _ = watch.device_named("touchbridge_touchscreen", since=m0, timeout=60)
        fingers = {0: (-0.5, -0.5), 1: (0.0, 0.0), 2: (0.75, 0.5)}
        m = watch.mark
        daemon.send(packet(fingers))
        begins = wait_count(watch, m, f"touch begin src={src} ", 3, 30, "3 touch begins")
        got = [(int(r.group(1)), float(r.group(2)), float(r.group(3)))
               for r in (re.search(r"id=(\d+) x=([\d.]+) y=([\d.]+)", l) for l in begins)]
        note(f"touch begins (id, x, y): {got}")
        check(len({g[0] for g in got}) == 3, f"want 3 distinct touch ids: {got}")
        check_fingers_at(fingers, got, (960, 0, 960, 1080))
        check(not events(watch, m, "touch end"), "a touch ended while all three were down")
        m2 = watch.mark
        daemon.send(packet({}, ended=[0, 1, 2]))
        for tid, _, _ in got:
            watch.wait_for(regex(rf"^touch end src={src} id={tid} "), 30, f"touch end of id {tid}", m2)
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_follows_a_monitor_change():
    """--monitor RIGHT on uinput while RIGHT moves (RandR monitors change, the screen does not): the next
    touch lands on RIGHT's new place (±1), with no restart."""
    set_monitors()
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", "--monitor", "RIGHT")
        src, _ = watch.device_named("touchbridge_touchscreen", since=m0, timeout=60)
        subprocess.run(["xrandr", "--delmonitor", "RIGHT"], check=True, env=ENV, timeout=60, stdout=subprocess.DEVNULL)
        subprocess.run(["xrandr", "--setmonitor", "RIGHT", "640/169x540/143+1280+540", "none"], check=True, env=ENV,
                       timeout=60, stdout=subprocess.DEVNULL)
        ex, ey = expected_pixel(0.5, 1280, 640), expected_pixel(0.5, 540, 540)
        # The daemon hears of the change on its X connection; until then a touch lands on the old place.
        # Tap until one lands on the new one (bounded), each tap's begin read before the next.
        deadline, got = time.monotonic() + 30, None
        while time.monotonic() < deadline:
            m = watch.mark
            daemon.send(packet({0: (0.5, 0.5)}))
            r = watch.wait_for(regex(rf"^touch begin src={src} id=\d+ x=([\d.]+) y=([\d.]+)"), 30, "a touch begin", m)
            daemon.send(packet({}, ended=[0]))
            watch.wait_for(regex(rf"^touch end src={src} "), 30, "its end", m)
            got = (float(r.group(1)), float(r.group(2)))
            if abs(got[0] - ex) <= 1 and abs(got[1] - ey) <= 1:
                break
        note(f"after RIGHT moved to 640x540+1280+540: touch at {got}, want ({ex},{ey}) ±1")
        check(got and abs(got[0] - ex) <= 1 and abs(got[1] - ey) <= 1, f"the touch did not follow RIGHT: {got}")
    finally:
        set_monitors()
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_sigkill_mid_touch_ends_every_touch():
    """SIGKILL of touchbridge --backend uinput with three fingers down: every touch ends, the
    emulated button 1 is released, the device goes."""
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput")
        src, _ = watch.device_named("touchbridge_touchscreen", since=m0, timeout=60)
        m = watch.mark
        daemon.send(packet({0: (-0.6, 0.0), 1: (0.0, 0.0), 2: (0.6, 0.0)}))
        begins = wait_count(watch, m, f"touch begin src={src} ", 3, 30, "3 touch begins")
        ids = [re.search(r"id=(\d+)", l).group(1) for l in begins]
        x, y, buttons = watch.query()
        note(f"before SIGKILL: touches {ids}, pointer ({x},{y}) buttons {buttons}")
        m2 = watch.mark
        daemon.p.send_signal(signal.SIGKILL)
        daemon.p.wait(10)
        for tid in ids:
            watch.wait_for(regex(rf"^touch end src={src} id={tid} "), 30, f"touch end of id {tid} after SIGKILL", m2)
        watch.wait_for(regex(rf"^removed src={src}$"), 30, "the touchscreen's removal", m2)
        x, y, buttons = watch.query()
        check(buttons == 0, f"buttons held after SIGKILL (mask {buttons})")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_presenter_swipe_presses_a_key_on_the_uinput_keyboard():
    """Presenter mode on --backend uinput: a swipe left (next slide) is a key press and release from
    touchbridge's uinput keyboard, not from XTest. (A swipe, not a tap: a tap must lift within 180 ms,
    which a loaded TCG guest does not always keep.)"""
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", mode="presenter")
        kbd, _ = watch.device_named("touchbridge_keyboard", since=m0, timeout=60)
        m = watch.mark
        for x in (0.4, 0.3, 0.1, -0.1, -0.4):
            daemon.send(packet({0: (x, 0.1)}))
        daemon.send(packet({}, ended=[0]))
        press = watch.wait_for(regex(rf"^keypress src={kbd} key=(\d+)"), 30, "a key press from the uinput keyboard", m)
        watch.wait_for(regex(rf"^keyrelease src={kbd} key={press.group(1)} "), 30, "its release", m)
        note(f"presenter swipe: keycode {press.group(1)} from touchbridge_keyboard (src {kbd})")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_touchpad_mode_moves_the_pointer():
    """Touchpad mode on --backend uinput: a one-finger drag moves the pointer through the uinput
    pointer device (relative motion from touchbridge_pointer)."""
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", "--uinput-touchpad", "recognizer", mode="touchpad")
        ptr, _ = watch.device_named("touchbridge_pointer", since=m0, timeout=60)
        x0, y0, _ = watch.query()
        m = watch.mark
        for i in range(12):
            daemon.send(packet({0: (-0.3 + 0.05 * i, 0.0)}))
            time.sleep(0.02)
        daemon.send(packet({}, ended=[0]))
        watch.wait_for(regex(rf"^motion src={ptr} "), 30, "motion from touchbridge_pointer", m)
        watch.sync()
        x1, y1, _ = watch.query()
        note(f"touchpad drag on uinput: pointer ({x0},{y0}) → ({x1},{y1})")
        check(x1 > x0, f"the pointer did not move right: ({x0},{y0}) → ({x1},{y1})")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def person_device(slaves, name):
    """A further person's device in `Watch.pointers()`' slaves: its name is `name` and the run's tag
    (`touchbridge_pointer_2_#3fa2`); (0, 0, False) when there is none."""
    found = [v for n, v in slaves.items() if n.startswith(name + "_#")]
    return found[0] if found else (0, 0, False)


def test_touchbridge_uinput_two_people_each_on_their_own_pointer():
    """--backend uinput --people 2 on Xorg, touchpad mode: a second sender (127.0.0.2) gets uinput devices
    of their own ("touchbridge pointer 2", …), which touchbridge attaches to a master of their own
    ("touchbridge person 2"); their drag moves that master's cursor and not the core one, their tap clicks
    on it, person 1's drag stays on the core pointer. When person 2 falls silent their master and devices
    go and person 1 goes on; a person 2 who comes back gets a fresh master; SIGTERM with both on leaves no
    master and none of their devices."""
    watch = Watch()
    daemon = None
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.2", 0))

    def person2(p):
        other.sendto(p.encode(), ("127.0.0.1", daemon.port))

    def drag(send, y=0.0):
        for i in range(12):
            send(packet({0: (-0.3 + 0.05 * i, y)}))
            time.sleep(0.02)
        send(packet({}, ended=[0]))

    def arrive():
        """Person 2's first touch makes their devices; their input waits until X has them on their master."""
        lm = daemon.mark
        person2(packet({0: (-0.3, 0.0)}))
        daemon.wait_for(lambda l: "person 2: their devices are on their own pointer" in l, 60, "person 2's devices attached", lm)
        person2(packet({}, ended=[0]))
        masters, slaves = watch.pointers()
        check("touchbridge_person_2_pointer" in masters, f"no master of person 2's: {sorted(masters)}")
        p2 = masters["touchbridge_person_2_pointer"][0]
        core_keyboard = slaves["Virtual_core_XTEST_keyboard"][1]
        for name in ("touchbridge_pointer_2", "touchbridge_touchscreen_2"):
            check(person_device(slaves, name)[1] == p2, f"{name} is not on person 2's master {p2}: {slaves}")
        kb = person_device(slaves, "touchbridge_keyboard_2")[1]
        check(kb not in (0, core_keyboard), f"touchbridge keyboard 2 is not on a keyboard of person 2's: {kb}")
        return p2, person_device(slaves, "touchbridge_pointer_2")[0]

    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", "--uinput-touchpad", "recognizer", "--people", "2", mode="touchpad")
        ptr1, _ = watch.device_named("touchbridge_pointer", since=m0, timeout=60)
        masters, _ = watch.pointers()
        core = masters["Virtual_core_pointer"][0]

        m = watch.mark
        drag(daemon.send)
        watch.wait_for(regex(rf"^motion src={ptr1} .* dev={core}$"), 30, "person 1's motion on the core pointer", m)

        p2, ptr2 = arrive()
        watch.sync()
        masters, _ = watch.pointers()
        core_at, p2_at = masters["Virtual_core_pointer"][1:], masters["touchbridge_person_2_pointer"][1:]
        m = watch.mark
        drag(person2)
        watch.wait_for(regex(rf"^motion src={ptr2} .* dev={p2}$"), 30, "person 2's motion on their own master", m)
        watch.sync()
        check(not [l for l in watch.since(m) if re.match(rf"^motion .* dev={core}$", l)], "person 2's drag moved the core pointer")
        masters, _ = watch.pointers()
        note(f"person 2's drag: their cursor {p2_at} → {masters['touchbridge_person_2_pointer'][1:]}, core {core_at} → {masters['Virtual_core_pointer'][1:]}")
        check(masters["Virtual_core_pointer"][1:] == core_at, "the core pointer moved")
        check(masters["touchbridge_person_2_pointer"][1] > p2_at[0], "person 2's cursor did not move right")

        m = watch.mark
        person2(packet({0: (0.0, 0.0)}))
        time.sleep(0.03)
        person2(packet({}, ended=[0]))
        watch.wait_for(regex(rf"^press src={ptr2} button=1 dev={p2}$"), 30, "person 2's tap clicking on their own master", m)
        watch.wait_for(regex(rf"^release src={ptr2} button=1 dev={p2}$"), 30, "person 2's click released", m)

        m = watch.mark
        drag(daemon.send, y=0.2)
        watch.wait_for(regex(rf"^motion src={ptr1} .* dev={core}$"), 30, "person 1's motion, still on the core pointer", m)

        # Someone removes person 2's master: it is made again and their devices go on it.
        lm = daemon.mark
        subprocess.run(["xinput", "remove-master", str(p2)], check=True, env=ENV, timeout=60)
        daemon.wait_for(lambda l: "was removed by someone else: made again" in l, 30, "the removal said", lm)
        daemon.wait_for(lambda l: "person 2: their devices are on their own pointer" in l, 60, "person 2's devices on the new master", lm)
        masters, slaves = watch.pointers()
        p2 = masters["touchbridge_person_2_pointer"][0]
        check(person_device(slaves, "touchbridge_pointer_2")[1] == p2, f"person 2's pointer is not on their new master {p2}: {slaves}")
        m = watch.mark
        drag(person2)
        watch.wait_for(regex(rf"^motion src={ptr2} .* dev={p2}$"), 30, "person 2's motion on their new master", m)

        # Silence: person 2 leaves after the takeover silence (10 s) and takes their pointer with them.
        lm, m = daemon.mark, watch.mark
        daemon.wait_for(lambda l: "person 2 left: removed" in l, 40, "person 2 leaving for silence", lm)
        watch.wait_for(regex(rf"^removed src={ptr2}$"), 30, "person 2's pointer device removed", m)
        masters, slaves = watch.pointers()
        check(not [n for n in masters if n.startswith("touchbridge_person")], f"a master is left: {sorted(masters)}")
        check(not [n for n in slaves if "_2_#" in n], f"a device of person 2's is left: {sorted(slaves)}")
        m = watch.mark
        drag(daemon.send, y=-0.2)
        watch.wait_for(regex(rf"^motion src={ptr1} .* dev={core}$"), 30, "person 1's motion after person 2 left", m)

        # Back, then SIGTERM with both on: nothing of theirs is left.
        p2, ptr2 = arrive()
        person2(packet({0: (0.0, 0.0)}))
        daemon.send(packet({0: (0.0, 0.0)}))
        m = watch.mark
        check(daemon.stop() == 0, "touchbridge did not exit 0 on SIGTERM")
        watch.wait_for(regex(rf"^removed src={ptr2}$"), 30, "person 2's pointer device removed at exit", m)
        watch.wait_for(regex(rf"^removed src={ptr1}$"), 30, "person 1's pointer device removed at exit", m)
        masters, slaves = watch.pointers()
        check(not [n for n in masters if n.startswith("touchbridge_person")], f"a master is left after SIGTERM: {sorted(masters)}")
        check(not [n for n in slaves if n.startswith("touchbridge")], f"a device is left after SIGTERM: {sorted(slaves)}")
        daemon = None
    finally:
        other.close()
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_people_storm_leaves_no_master_and_no_device():
    """--backend uinput --people 4 on Xorg: 60 pages from 60 loopback addresses join with a touch and
    leave, most before their devices are even on their master, every tenth once they are. Afterwards one
    more page's person has the only master and the only devices of a further person; once it leaves, none
    are left, and person 1 still drives the core pointer."""
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", "--people", "4", secret=SECRET, http_port=free_port())
        ts1, _ = watch.device_named("touchbridge_touchscreen", since=m0, timeout=60)
        masters, _ = watch.pointers()
        core = masters["Virtual_core_pointer"][0]
        m = watch.mark
        daemon.send(packet({0: (-0.5, -0.5)}))
        watch.wait_for(regex(rf"^touch begin src={ts1} .* dev={core}$"), 30, "person 1 (PoseAI) on the core pointer", m)
        daemon.send(packet({}, ended=[0]))

        def join(page, what, lm):
            """The page touches until it is told its person ("person 3 #a34fd8"): while the storm's
            leavers still hold the places it is told it is busy. Then the log says their devices are on
            their master. The person's number."""
            def told_person():
                page.send(packet({0: (0.5, 0.5)}))
                return next((t for t in page.messages if isinstance(t, str) and re.match(r"^person \d+ #", t)), None)
            n = until(60, f"{what} told its person", told_person, period=0.5).split()[1]
            daemon.wait_for(lambda l: f"person {n}: their devices are on their own pointer" in l, 60, f"{what}'s devices attached", lm)
            return n

        t0 = time.monotonic()
        for i in range(60):
            # Person 1 (PoseAI) keeps moving: silent for 10 s, their place would go to a page.
            daemon.send(packet({0: (-0.5 + 0.01 * (i % 2), -0.5)}))
            lm = daemon.mark
            page = WebSocket(daemon.http_port, source=f"127.0.1.{2 + i}")
            if i % 10 == 9:
                join(page, f"join {i}", lm)
            else:
                page.send(packet({0: (0.5, 0.5)}))
            page.close()
        daemon.send(packet({}, ended=[0]))
        note(f"60 joins and leaves in {time.monotonic() - t0:.1f} s")
        lm = daemon.mark
        last = WebSocket(daemon.http_port, source="127.0.2.2")
        n = join(last, "the last join", lm)

        def further(masters, slaves):
            return ([m for m in masters if m.startswith("touchbridge_person")],
                    [d for d in slaves if re.match(r"^touchbridge_[a-z]+_\d+_#", d)])

        got = until(60, "only the last person's master and devices", lambda: (lambda f: f if len(f[0]) == 1 and len(f[1]) == 4 else None)(further(*watch.pointers())))
        note(f"with the last page: {got}")
        check(got[0] == [f"touchbridge_person_{n}_pointer"], f"masters: {got[0]}")
        lm = daemon.mark
        last.close()
        daemon.wait_for(lambda l: f"person {n} left: removed" in l, 30, "the last page leaving", lm)
        until(60, "no further person's master or device", lambda: further(*watch.pointers()) == ([], []))
        m = watch.mark
        daemon.send(packet({0: (-0.5, -0.5)}))
        watch.wait_for(regex(rf"^touch begin src={ts1} .* dev={core}$"), 30, "person 1's touch on the core pointer", m)
        daemon.send(packet({}, ended=[0]))
        check(daemon.p.poll() is None, "touchbridge exited")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_touchpad_mode_scrolls_smoothly():
    """Touchpad mode on --backend uinput (touchbridge's own recognizer): a two-finger scroll reaches X
    as smooth-scroll valuator steps finer than one wheel click, from touchbridge's uinput pointer."""
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", "--uinput-touchpad", "recognizer", "--no-kinetic-scroll", mode="touchpad")
        ptr, desc = watch.device_named("touchbridge_pointer", since=m0, timeout=60)
        v, inc = vertical_scroll(desc, "touchbridge_pointer")
        m = watch.mark
        stream(daemon, [{0: (-0.2, -0.3 + 0.01 * i), 1: (0.2, -0.3 + 0.01 * i)} for i in range(40)])
        check_smooth_scroll(watch, m, ptr, v, inc, "touchbridge touchpad scroll")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_native_touchpad_scrolls_through_libinput():
    """Touchpad mode on --backend uinput with the native touchpad (the default): two phone fingers
    moving down reach libinput as a touchpad, which scrolls smoothly (valuator steps finer than one
    click) from touchbridge's touchpad device."""
    watch = Watch()
    daemon = None
    try:
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", mode="touchpad")
        pad, desc = watch.device_named("touchbridge_touchpad", since=m0, timeout=60)
        v, inc = vertical_scroll(desc, "touchbridge_touchpad")
        m = watch.mark
        # Half a hundredth a packet: libinput's step for one packet is then about 29 of a click's 120, so a
        # loaded guest that delivers up to four packets at once still shows steps finer than a click (at a
        # hundredth a packet was 59, and a loaded run failed on steps of 118 and 135).
        stream(daemon, [{0: (-0.3, -0.3 + 0.005 * i), 1: (0.3, -0.3 + 0.005 * i)} for i in range(60)])
        check_smooth_scroll(watch, m, pad, v, inc, "native touchpad scroll via touchbridge")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def native_pad(watch):
    """touchbridge --backend uinput in touchpad mode (the native touchpad, the default) and its
    touchpad's X id, once X has enabled it."""
    m0 = watch.mark
    daemon = Daemon("--backend", "uinput", mode="touchpad")
    try:
        pad, _ = watch.device_named("touchbridge_touchpad", since=m0, timeout=60)
    except Exception:
        daemon.stop()
        raise
    return daemon, pad


def test_touchbridge_native_touchpad_pinch():
    """Two phone fingers spreading, through touchbridge's native touchpad: libinput's
    GesturePinchBegin/Update/End, the scale growing."""
    watch = Watch()
    daemon = None
    try:
        daemon, _ = native_pad(watch)
        m = watch.mark
        stream(daemon, [{0: (-0.1 - 0.012 * i, -0.1 - 0.008 * i), 1: (0.1 + 0.012 * i, 0.1 + 0.008 * i)} for i in range(40)])
        check_pinch(watch, m, "pinch via touchbridge")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_native_touchpad_three_finger_swipe():
    """Three phone fingers moving right together, through touchbridge's native touchpad: libinput's
    GestureSwipe* with 3 fingers, moving right."""
    watch = Watch()
    daemon = None
    try:
        daemon, _ = native_pad(watch)
        m = watch.mark
        stream(daemon, [{0: (-0.6 + 0.02 * i, -0.2), 1: (-0.4 + 0.02 * i, 0.0), 2: (-0.2 + 0.02 * i, 0.2)} for i in range(35)])
        check_swipe(watch, m, "swipe via touchbridge")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_native_touchpad_tap_clicks():
    """A one-finger tap on the phone, through touchbridge's native touchpad: libinput's tap-to-click
    gives button 1 press and release."""
    watch = Watch()
    daemon = None
    try:
        daemon, _ = native_pad(watch)
        m = watch.mark
        stream(daemon, [{0: (0.1, 0.1)}] * 3)
        check_click(watch, m, "tap")
    finally:
        if daemon:
            daemon.stop()
        watch.stop()


def latency(daemon, watch, pattern_for, n=15):
    """Median and maximum seconds from sendto() to the X event's line, over n moves of one finger."""
    samples = []
    for i in range(n):
        x = -0.8 + 1.6 * i / n
        m = watch.mark
        t0 = time.monotonic()
        daemon.send(packet({0: (x, 0.2)}))
        watch.wait_for(regex(pattern_for(expected_pixel(x, 0, 1920))), 30, f"move {i}", m)
        samples.append(time.monotonic() - t0)
    samples.sort()
    return samples[len(samples) // 2], samples[-1]


def test_latency_uinput_next_to_xtest():
    """One finger moving in touchscreen mode, on the whole screen: the time from the packet to the X
    event for XTest (core motion) and for uinput (XI 2.2 TouchUpdate), in the same VM run."""
    results = {}
    for backend in ("xtest", "uinput"):
        watch = Watch()
        daemon = None
        try:
            m0 = watch.mark
            daemon = Daemon("--backend", backend, "--monitor", "all")
            if backend == "uinput":
                src, _ = watch.device_named("touchbridge_touchscreen", since=m0, timeout=60)
                pattern = lambda px: rf"^touch update src={src} .* x={px - 1}|^touch update src={src} .* x={px}|^touch update src={src} .* x={px + 1}"
            else:
                pattern = lambda px: rf"^motion src=\d+ x=({px - 1}|{px}|{px + 1})\."
            m = watch.mark
            daemon.send(packet({0: (-0.9, 0.2)}))
            watch.wait_for(regex(r"^touch begin|^press"), 30, "the first contact", m)
            results[backend] = latency(daemon, watch, pattern)
            daemon.send(packet({}, ended=[0]))
        finally:
            if daemon:
                daemon.stop()
            watch.stop()
    note("latency packet→X event (median, max): " + ", ".join(
        f"{b} {med * 1000:.1f} ms / {mx * 1000:.1f} ms" for b, (med, mx) in results.items()))


# ---------------------------------------------------------------------------------------------
# Keys by the live keymap and a device that fails mid-batch

def test_uinput_backend_releases_despite_a_failing_device():
    """UInputBackend.perform and releaseAll go on past a device that fails: with the pointer's kernel
    device gone (its writes fail), a batch that moves the pointer and releases Ctrl still releases Ctrl
    (and says the pointer failed); so does releaseAll with a button held on the broken pointer."""
    watch = Watch()
    drive = Drive()
    try:
        m0 = watch.mark
        drive.do("be create")
        kbd, _ = watch.device_named("touchbridge_keyboard", since=m0, timeout=60)
        watch.device_named("touchbridge_pointer", since=m0, timeout=60)
        for step, last in (("batch", "be batch move 1 1 , key ffe3 0"), ("releaseAll", "be release")):
            m = watch.mark
            drive.do("be batch button 1 1 , key ffe3 1")
            watch.wait_for(regex(rf"^keypress src={kbd} key=37 "), 30, f"{step}: Ctrl pressed", m)
            drive.do("be break ptr")
            m2, d = watch.mark, drive.mark
            drive.send(last)
            answer = drive.wait_for(lambda l: l if l.startswith(("ok ", "error ")) else None, 20, f"an answer to `{last}`", d)
            note(f"{step} with the pointer broken: {answer}")
            check(answer.startswith("error "), f"{step}: the broken pointer's failure was not reported: {answer}")
            watch.wait_for(regex(rf"^keyrelease src={kbd} key=37 "), 30, f"{step}: Ctrl released although the pointer failed", m2)
            # A fresh backend for the next step (the broken pointer cannot be mended).
            drive.stop()
            drive = Drive()
            m0 = watch.mark
            drive.do("be create")
            kbd, _ = watch.device_named("touchbridge_keyboard", since=m0, timeout=60)
            watch.device_named("touchbridge_pointer", since=m0, timeout=60)
    finally:
        drive.stop()
        watch.stop()


KEY_LINE = re.compile(r"^(keypress|keyrelease) src=(\d+) key=(\d+) sym=0x([0-9a-f]+) mods=0x([0-9a-f]+)")


def observe_chord(watch, send, what):
    """Sends one chord with `send()`, waits until every key pressed since is released again, and returns
    its main key as an X client saw it: (src, keycode, keysym, modifiers) of the last key pressed before
    the first release."""
    m = watch.mark
    send()
    n = {"keypress": 0, "keyrelease": 0}

    def done(line):
        r = KEY_LINE.match(line)
        if r:
            n[r.group(1)] += 1
        return n["keypress"] > 0 and n["keyrelease"] >= n["keypress"]

    watch.wait_for(done, 30, f"{what}: its keys pressed and released", m)
    main = None
    for line in watch.since(m):
        r = KEY_LINE.match(line)
        if not r:
            continue
        if r.group(1) == "keyrelease":
            break
        main = (int(r.group(2)), int(r.group(3)), int(r.group(4), 16), int(r.group(5), 16))
    return main


# (what the page sends, the keysym of the chord's main key, whether it holds Ctrl)
KEYMAP_CHORDS = [
    ("key ctrl+z", 0x7a, True), ("key ctrl+c", 0x63, True), ("key ctrl+v", 0x76, True),  # the keys drawer
    ("key 1", 0x31, False), ("key ctrl+2", 0x32, True), ("key 0", 0x30, False),          # digits
    ("key comma", 0x2c, False), ("key period", 0x2e, False), ("key /", 0x2f, False),     # punctuation
    ("key minus", 0x2d, False), ("key @", 0x40, False),
    ("key Page_Down", 0xff56, False),
    ("slide next", 0x7a, True),                                                          # --presenter-key next=ctrl+z
    ("swipe", 0x61, True),                                                               # --swipe 3-right=ctrl+a
]
# Where z is (X keycode) on each layout: AZERTY has it where US has w, QWERTZ where US has y.
Z_KEYCODE = {"fr": 25, "de": 29}
# Bits of the modifier state compared: Shift, Control, Mod1 (Alt), Mod4 (Super), Mod5 (AltGr); not
# Lock and Mod2 (NumLock), which no chord sets.
MODS = 0x01 | 0x04 | 0x08 | 0x40 | 0x80


def keys_on(backend, layout, watch):
    """touchbridge on `backend` in touchpad mode: the layout set once its devices are up (a desktop sets
    it on every keyboard), then each of KEYMAP_CHORDS from a page over its WebSocket; what X clients saw."""
    setxkbmap("us")
    m0 = watch.mark
    daemon = Daemon("--backend", backend, "--uinput-touchpad", "recognizer", "--presenter-key", "next=ctrl+z",
                    "--swipe", "3-right=ctrl+a", mode="touchpad", secret=SECRET, http_port=free_port())
    ws = None
    try:
        kbd = watch.device_named("touchbridge_keyboard", since=m0, timeout=60)[0] if backend == "uinput" else None
        m = daemon.mark
        setxkbmap(layout)
        r = daemon.wait_for(regex(r"keymap: (\d+) keysyms.* z on evdev (\d+)"), 30, f"the daemon reading the {layout} keymap", m)
        note(f"{backend} on {layout}: {r.group(0)}")
        check(int(r.group(2)) + 8 == Z_KEYCODE[layout], f"the daemon's {layout} keymap has z on evdev {r.group(2)}")
        ws = WebSocket(daemon.http_port)
        seen = {}
        for send, sym, ctrl in KEYMAP_CHORDS:
            if send == "swipe":
                frames = [{0: (-0.6 + 0.02 * i, -0.2), 1: (-0.4 + 0.02 * i, 0.0), 2: (-0.2 + 0.02 * i, 0.2)} for i in range(35)]

                def do_swipe():
                    for f in frames:
                        ws.send(packet(f))
                        time.sleep(0.02)
                    ws.send(packet({}, ended=[0, 1, 2]))
                seen[send] = observe_chord(watch, do_swipe, f"{backend} {layout} {send}")
            else:
                seen[send] = observe_chord(watch, lambda: ws.send(send), f"{backend} {layout} {send}")
        return seen, kbd
    finally:
        if ws:
            ws.close()
        daemon.stop()


def keymap_test(layout):
    watch = Watch()
    try:
        xtest, _ = keys_on("xtest", layout, watch)
        uinput, kbd = keys_on("uinput", layout, watch)
    finally:
        watch.stop()
        setxkbmap("us")
    for send, _, _ in KEYMAP_CHORDS:
        (_, xcode, xsym, xmods), (usrc, ucode, usym, umods) = xtest[send], uinput[send]
        note(f"{layout} {send:16} xtest key={xcode} sym=0x{xsym:x} mods=0x{xmods:x}   uinput key={ucode} sym=0x{usym:x} "
             f"mods=0x{umods:x}{'' if usrc == kbd else f' (from device {usrc}, not touchbridge_keyboard)'}")
    check(uinput["key ctrl+z"][1] == Z_KEYCODE[layout] and uinput["key ctrl+z"][2] == 0x7a,
          f"{layout}: the uinput keyboard's ctrl+z was key {uinput['key ctrl+z'][1]}, keysym 0x{uinput['key ctrl+z'][2]:x}")
    differ = []
    for send, sym, ctrl in KEYMAP_CHORDS:
        _, xcode, xsym, xmods = xtest[send]
        usrc, ucode, usym, umods = uinput[send]
        check(usrc == kbd, f"{layout} `{send}` came from device {usrc}, not touchbridge_keyboard ({kbd})")
        check(usym == sym, f"{layout} `{send}`: the uinput keyboard gave keysym 0x{usym:x} (key {ucode}), want 0x{sym:x}")
        check(ucode == xcode, f"{layout} `{send}`: uinput pressed key {ucode}, XTest key {xcode}")
        check(bool(umods & 0x04) == ctrl, f"{layout} `{send}`: Control {'missing' if ctrl else 'held'} (mods 0x{umods:x})")
        if xsym == sym:
            check(umods & MODS == xmods & MODS, f"{layout} `{send}`: uinput mods 0x{umods:x}, XTest 0x{xmods:x}")
        else:
            differ.append(f"{send} (XTest: 0x{xsym:x})")
    note(f"{layout}: XTest presses these without their level's Shift/AltGr: {', '.join(differ) or 'none'}")


def test_keys_by_the_keymap_fr():
    """On AZERTY (setxkbmap fr): the keys drawer's Undo/Copy/Paste, digits, punctuation, a presenter key
    and a swipe chord through the uinput keyboard reach X clients as the keysyms they name (ctrl+z as z
    with Control on keycode 25, not w), on the same keycodes XTest presses, with the same modifiers
    wherever XTest's key gives the keysym too."""
    keymap_test("fr")


def test_keys_by_the_keymap_de():
    """The same on QWERTZ (setxkbmap de): ctrl+z is keycode 29."""
    keymap_test("de")


def xtest_tap(keycode):
    """A press and release of `keycode` on X's own XTEST keyboard (as another keyboard's typing would):
    the core keyboard takes that keyboard's map again."""
    import ctypes
    x11, xtst = ctypes.CDLL("libX11.so.6"), ctypes.CDLL("libXtst.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    dpy = ctypes.c_void_p(x11.XOpenDisplay(b":0"))
    check(dpy.value, "cannot open :0 for XTest")
    for pressed in (1, 0):
        xtst.XTestFakeKeyEvent(dpy, keycode, pressed, 0)
    x11.XSync(dpy, 0)
    x11.XCloseDisplay(dpy)


def test_keys_by_the_map_of_touchbridges_own_keyboard():
    """A layout set before touchbridge started (setxkbmap fr, then the daemon): X gives the new uinput
    keyboard its default map (us), not fr, and translates its keys by that map. touchbridge reads its own
    keyboard's map, so ctrl+z reaches clients as z every time, also after another keyboard (XTest's, on
    fr) typed in between and the core keyboard took fr again."""
    watch = Watch()
    daemon = ws = None
    try:
        setxkbmap("fr")
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", mode="touchpad", secret=SECRET, http_port=free_port())
        kbd = watch.device_named("touchbridge_keyboard", since=m0, timeout=60)[0]
        daemon.wait_for(regex(r"keymap: .* from X device \d+ \"touchbridge keyboard\""), 30, "the keymap read from its own keyboard", 0)
        ws = WebSocket(daemon.http_port)
        seen = []
        for i in range(3):
            seen.append(observe_chord(watch, lambda: ws.send("key ctrl+z"), f"ctrl+z {i}"))
            # Shift_L on the XTEST keyboard (fr): the core keyboard switches back to its map.
            observe_chord(watch, lambda: xtest_tap(50), f"XTest's Shift_L {i}")
        note(f"ctrl+z three times (src, key, keysym, mods), another keyboard typing between: {seen}")
        for src, code, sym, mods in seen:
            check(src == kbd and sym == 0x7a and mods & 0x04, f"ctrl+z reached clients as {seen}")
    finally:
        if ws:
            ws.close()
        if daemon:
            daemon.stop()
        watch.stop()
        setxkbmap("us")


def test_uinput_types_by_the_keymap_and_borrows_a_keycode_for_the_rest():
    """The page's typing on uinput (AZERTY): a character a key makes is typed on touchbridge's own
    keyboard, with the Shift its level needs (A) or none (é, unshifted on fr); a character no key makes
    (☃) is the one case that goes to the X11 desktop, which types it on a keycode borrowed through XTest
    (so it comes from X's XTEST keyboard)."""
    watch = Watch()
    daemon = ws = None
    try:
        # The layout set once the devices are up (a desktop sets it on every keyboard): the core keyboard
        # and touchbridge's agree, so xi2watch's keysyms are the same whichever map it looks them up in.
        setxkbmap("us")
        m0 = watch.mark
        daemon = Daemon("--backend", "uinput", mode="touchpad", secret=SECRET, http_port=free_port())
        kbd = watch.device_named("touchbridge_keyboard", since=m0, timeout=60)[0]
        m = daemon.mark
        setxkbmap("fr")
        daemon.wait_for(regex(r"keymap: .* z on evdev 17"), 30, "the daemon reading the fr keymap", m)
        ws = WebSocket(daemon.http_port)
        m = watch.mark
        ws.send("text A\u00e9\u2603")
        snowman = 0x1002603

        def typed(line):
            r = KEY_LINE.match(line)
            return r and r.group(1) == "keyrelease" and int(r.group(4), 16) == snowman
        watch.wait_for(typed, 30, "the snowman typed and released", m)
        presses = {}
        for line in watch.since(m):
            r = KEY_LINE.match(line)
            if r and r.group(1) == "keypress":
                presses.setdefault(int(r.group(4), 16), (int(r.group(2)), int(r.group(3)), int(r.group(5), 16)))
        note(f"typed on fr (keysym: src, key, mods): {', '.join(f'0x{k:x}: {v}' for k, v in presses.items())}")
        # AZERTY: A is Shift and keycode 24 (where US has q), é keycode 11 unshifted (where US has 2).
        check(presses.get(0x41) is not None and presses[0x41][:2] == (kbd, 24) and presses[0x41][2] & 0x01,
              f"A was not typed with Shift on keycode 24 of touchbridge's keyboard ({kbd}): {presses.get(0x41)}")
        check(presses.get(0xe9) is not None and presses[0xe9][:2] == (kbd, 11) and not presses[0xe9][2] & 0x01,
              f"é was not typed unshifted on keycode 11 of touchbridge's keyboard ({kbd}): {presses.get(0xe9)}")
        check(presses[snowman][0] != kbd, f"the snowman came from touchbridge's keyboard, which has no key for it: {presses[snowman]}")
    finally:
        if ws:
            ws.close()
        if daemon:
            daemon.stop()
        watch.stop()
        setxkbmap("us")


# ---------------------------------------------------------------------------------------------
# The pen: touchbridge --backend uinput --mode pen, driven by the page's `pen …` messages
# over the WebSocket; observed by xi2watch (the tablet tool's X device and its valuators) and, for the
# kernel's own view of proximity, by python3-evdev on the tablet's event node.

def pen_tool_motions(watch, mark, src):
    """[(x, y, {valuator: value})] of the motion lines of device `src` since `mark`."""
    out = []
    for line in watch.since(mark):
        if not line.startswith(f"motion src={src} "):
            continue
        r = re.search(r"x=([\d.]+) y=([\d.]+)", line)
        vals = {int(k): float(v) for k, v in re.findall(r" v(\d+)=(-?[\d.]+)", line)}
        out.append((float(r.group(1)), float(r.group(2)), vals))
    return out


def pen_daemon(watch):
    """The daemon in pen mode on uinput, its WebSocket, and the X id of its tablet (`touchbridge pen`)."""
    m0 = watch.mark
    daemon = Daemon("--backend", "uinput", mode="pen", secret=SECRET, http_port=free_port())
    daemon.wait_for(regex(r"pen: a pen tablet with pressure, tilt and the eraser"), 30, "the pen start line", 0)
    tablet, _ = watch.device_named("touchbridge_pen", since=m0, timeout=60)
    ws = WebSocket(daemon.http_port)
    return daemon, ws, tablet


def test_touchbridge_uinput_pen_pressure_tilt_and_eraser():
    """Pen mode on --backend uinput: libinput takes the tablet as a pen tablet. The pen's X tool device
    (`touchbridge pen Pen …`) lands at the mapped pixel (±1), presses button 1 with its tip, its
    pressure valuator rises and falls with the messages' pressure, its tilt valuators take the tilt's
    signs; the eraser end comes as a tool of its own (`… Eraser …`)."""
    watch = Watch()
    daemon = ws = None
    try:
        daemon, ws, tablet = pen_daemon(watch)
        m = watch.mark
        ws.send(pen_msg("hover", 0.25, 0.5, tilt=(30, -20)))
        tool, _ = watch.device_named("touchbridge_pen_Pen", since=m, timeout=60)
        watch.wait_for(regex(rf"^motion src={tool} "), 30, "the hovering pen's motion", m)
        m = watch.mark
        pressures = [0.2, 0.5, 0.9, 0.5, 0.2]
        for i, p in enumerate(pressures):
            ws.send(pen_msg("touch", 0.25 + 0.05 * i, 0.5, pressure=p, tilt=(30, -20)))
            px = pen_pixel(0.25 + 0.05 * i, 1920)
            near_x = lambda l, px=px: (r := re.match(rf"^motion src={tool} x=([\d.]+)", l)) and abs(float(r.group(1)) - px) <= 1
            watch.wait_for(near_x, 30, f"the pen's move {i} to x={px} ±1", m)
        watch.wait_for(regex(rf"^press src={tool} button=1"), 30, "the tip's button 1", m)
        motions = pen_tool_motions(watch, m, tool)
        # Valuators 0, 1 are x and y; 2 pressure; 3, 4 tilt x and y (xf86-input-libinput's tablet tool).
        by_x = {}
        for x, y, vals in motions:
            if 2 in vals:
                by_x[round(x)] = vals
        # libinput's own motion events between ours repeat the pressure they had: one value per level.
        seen = []
        for k in sorted(by_x):
            if not seen or by_x[k][2] != seen[-1]:
                seen.append(by_x[k][2])
        note(f"pen tool {tool} (tablet {tablet}): pressure valuator by x {[(k, by_x[k].get(2)) for k in sorted(by_x)]}")
        note(f"tilt valuators (v3, v4) at the last move: {[(v.get(3), v.get(4)) for _, _, v in motions[-1:]]}")
        check(len(seen) == 5, f"want five pressure levels (0.2, 0.5, 0.9, 0.5, 0.2), got {seen}")
        peak = seen.index(max(seen))
        check(0 < peak < len(seen) - 1 and all(seen[i] < seen[i + 1] for i in range(peak))
              and all(seen[i] > seen[i + 1] for i in range(peak, len(seen) - 1)),
              f"the pressure valuator does not rise and fall: {seen}")
        tilts = [(v[3], v[4]) for _, _, v in motions if 3 in v and 4 in v]
        check(tilts and tilts[-1][0] > 0 and tilts[-1][1] < 0, f"tilt x > 0 and tilt y < 0 wanted, got {tilts[-3:]}")
        x, y, buttons = watch.query()
        ex, ey = pen_pixel(0.45, 1920), pen_pixel(0.5, 1080)
        check(abs(x - ex) <= 1 and abs(y - ey) <= 1 and buttons & 1, f"pointer at ({x},{y}) buttons {buttons}, want ({ex},{ey}) ±1 with 1")
        m = watch.mark
        ws.send(pen_msg("hover", 0.45, 0.5, tilt=(30, -20)))
        watch.wait_for(regex(rf"^release src={tool} button=1"), 30, "the lifted tip's release", m)
        # Turned over: the eraser, its own tool device.
        m = watch.mark
        ws.send(pen_msg("hover", 0.5, 0.5, flags="e"))
        eraser, _ = watch.device_named("touchbridge_pen_Eraser", since=m, timeout=60)
        ws.send(pen_msg("touch", 0.5, 0.5, pressure=0.7, flags="e"))
        watch.wait_for(regex(rf"^press src={eraser} button=1"), 30, "the eraser's tip", m)
        note(f"the eraser is X device {eraser}, the pen {tool}")
        check(eraser != tool, "the eraser came as the pen's own device")
        m = watch.mark
        ws.send("pen away")
        watch.wait_for(regex(rf"^release src={eraser} button=1"), 30, "the eraser's release when it goes", m)
        x, y, buttons = watch.query()
        check(buttons == 0, f"buttons held after the pen went (mask {buttons})")
    finally:
        if ws:
            ws.close()
        if daemon:
            daemon.stop()
        watch.stop()


def test_touchbridge_uinput_pen_sigkill_leaves_proximity():
    """SIGKILL of touchbridge with the pen down: the kernel ends the tablet's tip and takes the tool out
    of proximity (BTN_TOUCH 0, BTN_TOOL_PEN 0, read on its event node), X releases button 1 and the
    tablet goes."""
    import evdev
    watch = Watch()
    daemon = ws = None
    try:
        daemon, ws, tablet = pen_daemon(watch)
        node = next((evdev.InputDevice(p) for p in evdev.list_devices() if evdev.InputDevice(p).name == "touchbridge pen"), None)
        check(node, "no evdev node named `touchbridge pen`")
        caps = node.capabilities()
        keys = set(caps.get(evdev.ecodes.EV_KEY, []))
        abs_codes = {a[0] for a in caps.get(evdev.ecodes.EV_ABS, [])}
        props = node.input_props()
        note(f"{node.path}: keys {sorted(keys)}, abs {sorted(abs_codes)}, props {props}")
        e = evdev.ecodes
        check({e.BTN_TOOL_PEN, e.BTN_TOOL_RUBBER, e.BTN_TOUCH, e.BTN_STYLUS, e.BTN_STYLUS2} <= keys, f"keys {keys}")
        check({e.ABS_X, e.ABS_Y, e.ABS_PRESSURE, e.ABS_TILT_X, e.ABS_TILT_Y} <= abs_codes, f"axes {abs_codes}")
        check(e.INPUT_PROP_DIRECT in props, f"props {props}")
        seen = []
        cond = threading.Condition()

        def read():
            try:
                for ev in node.read_loop():
                    with cond:
                        seen.append((ev.type, ev.code, ev.value))
                        cond.notify_all()
            except OSError:
                with cond:
                    seen.append(("gone",))
                    cond.notify_all()

        threading.Thread(target=read, daemon=True).start()
        # Hover first, and touch once X has made the tool's device: xf86-input-libinput makes it when
        # the tool first comes near, and events that come before it exists go through the tablet's own
        # device (a loaded run saw the press there).
        m = watch.mark
        ws.send(pen_msg("hover", 0.5, 0.5))
        tool, _ = watch.device_named("touchbridge_pen_Pen", since=m, timeout=60)
        m = watch.mark
        ws.send(pen_msg("touch", 0.5, 0.5, pressure=0.8))
        pressed = watch.wait_for(regex(rf"^press src=({tool}|{tablet}) button=1"), 60, "the tip's button 1", m)
        tool = int(pressed.group(1))

        def wait_seen(pred, what, timeout=30):
            deadline = time.monotonic() + timeout
            with cond:
                while not any(pred(s) for s in seen):
                    left = deadline - time.monotonic()
                    check(left > 0, f"evdev: no {what} within {timeout} s; read {seen[-12:]}")
                    cond.wait(min(left, 0.5))

        wait_seen(lambda s: s[:3] == (e.EV_KEY, e.BTN_TOUCH, 1), "BTN_TOUCH 1")
        with cond:
            before = len(seen)
        m = watch.mark
        daemon.p.send_signal(signal.SIGKILL)
        daemon.p.wait(10)
        wait_seen(lambda s: s[:3] == (e.EV_KEY, e.BTN_TOOL_PEN, 0), "BTN_TOOL_PEN 0 (out of proximity) after SIGKILL")
        wait_seen(lambda s: s[:3] == (e.EV_KEY, e.BTN_TOUCH, 0), "BTN_TOUCH 0 after SIGKILL")
        with cond:
            note(f"evdev after SIGKILL: {seen[before:before + 8]}")
        watch.wait_for(regex(rf"^release src={tool} button=1"), 30, "button 1 released after SIGKILL", m)
        watch.wait_for(regex(rf"^removed src={tablet}$"), 30, "the tablet's removal", m)
        x, y, buttons = watch.query()
        check(buttons == 0, f"buttons held after SIGKILL (mask {buttons})")
    finally:
        if ws:
            ws.close()
        if daemon:
            daemon.stop()
        watch.stop()


# ---------------------------------------------------------------------------------------------
# touchbridge doctor, as the seat's user with and without /dev/uinput

SEAT_USER, SEAT_UID = "tbwl", 1500
NOBODY_UID = 65534


def screen_size():
    out = subprocess.run(["xdpyinfo"], env=ENV, capture_output=True, text=True, timeout=60, check=True).stdout
    m = re.search(r"dimensions:\s+(\d+)x(\d+) pixels", out)
    check(m, f"xdpyinfo names no dimensions: {out[:300]}")
    return int(m.group(1)), int(m.group(2))


def test_view_on_xorg_follows_the_screen_and_a_still_screen_sends_nothing():
    """The live view on the VM's Xorg (a real X server and driver, not Xvfb), with the uinput backend: the
    page's first ask gets a frame of the screen's shape fitted in the box it asked for, a JPEG of that
    size; asked again with nothing changed, nothing comes (its ping, sent after, is answered first); a
    change of the screen (xsetroot) brings the next frame, a different picture; a bad size is refused in
    words; a touch of the page with the view on lands where the picture shows it (the picture is the whole
    screen: the touch's point of the picture is its point of the screen, ±1 px); `view off` ends the viewing
    and the capture frees what it held on the X server."""
    width, height = screen_size()
    subprocess.run(["xsetroot", "-solid", "#204080"], env=ENV, check=True, timeout=30)
    watch = Watch()
    m0 = watch.mark
    daemon = Daemon("--backend", "uinput", mode="touchscreen", secret=SECRET, http_port=free_port())
    ws = None
    try:
        src, _ = watch.device_named("touchbridge_touchscreen", since=m0, timeout=60)
        ws = WebSocket(daemon.http_port)
        m = ws.mark
        ws.send("view 480 480")
        _, first = ws.wait(m, 30, "the first frame", lambda x: isinstance(x, bytes))
        monitor, picture, in_jpeg, jpeg1 = view_frame(first, "the first frame")
        note(f"first frame: monitor {monitor}, picture {picture}, {len(first)} bytes")
        check(monitor == (width, height), f"the frame's monitor {monitor}, want the screen {width}x{height}")
        check(picture[0] == 480 and abs(picture[1] - 480 * height / width) <= 1, f"the picture {picture}: 480 wide, the screen's shape")
        check(in_jpeg == picture, f"the JPEG is {in_jpeg}, the header says {picture}")
        daemon.wait_for(regex(r"view: .* is viewing"), 30, "the log saying who views")

        # The screen settles (the viewing mark drawn in its corner after the first capture is a change
        # of its own): asked again until an ask's ping is answered with no frame before it. Then nothing
        # changed: that ask stays unanswered, and the next frame comes only with the next change.
        m, _ = view_settles(ws, "view 480 480", "the screen")

        # The screen changes: the ask waiting since gets its frame, a picture never sent before (should a
        # late change answer the waiting ask first, the next ask gets the new picture).
        sent = {x[10:] for x in ws.messages if isinstance(x, bytes)}
        subprocess.run(["xsetroot", "-solid", "#e03020"], env=ENV, check=True, timeout=30)
        for turn in range(5):
            i, second = ws.wait(m, 30, "a frame after the screen changed", lambda x: isinstance(x, bytes))
            _, picture2, _, jpeg2 = view_frame(second, "the frame after the change")
            check(picture2 == picture, f"the frame after the change is {picture2}, want {picture}")
            if jpeg2 not in sent:
                break
            m = i + 1
            ws.send("view 480 480")
        check(jpeg2 not in sent and jpeg2 != jpeg1, "no frame after the change shows a new picture")

        # A touch of the page at (0.625, 0.375) of the picture, which is the whole screen: the touch
        # sequence begins at that point of the screen.
        m = watch.mark
        ws.send(packet({0: (0.25, -0.25)}))
        r = watch.wait_for(regex(rf"^touch begin src={src} id=(\d+) x=([\d.]+) y=([\d.]+)"), 30, "the page's touch", m)
        x, y, want_at = float(r.group(2)), float(r.group(3)), (0.625 * width, 0.375 * height)
        note(f"the page's touch at ({x}, {y}) of the screen, the picture's point {want_at}")
        check(abs(x - want_at[0]) <= 1 and abs(y - want_at[1]) <= 1, f"the page's touch at ({x}, {y}), want {want_at} ±1")
        ws.send(packet({}, ended=[0]))
        watch.wait_for(regex(rf"^touch end src={src} id={r.group(1)} "), 30, "the page's touch end", m)

        m = ws.mark
        ws.send("view 0 100")
        _, said = ws.wait(m, 30, "the answer to a bad size", lambda x: isinstance(x, str) and x.startswith("view none"))
        check(said.startswith("view none bad-size"), f"a size of 0: {said!r}")
        m = daemon.mark
        ws.send("view off")
        daemon.wait_for(regex(r"view: viewing stopped \(the page turned its view off\)"), 30, "view off ends the viewing", m)
    finally:
        if ws:
            ws.close()
        daemon.stop()
        watch.stop()
        subprocess.run(["xsetroot", "-solid", "black"], env=ENV, timeout=30)


def as_user(uid, groups="--init-groups"):
    """setpriv's command line that runs what follows as `uid` (its own group; its supplementary groups
    with --init-groups, none with --clear-groups)."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", groups, "--"]


def uinput_acl_users():
    """The users /dev/uinput's ACL names (getfacl's `user:NAME:rw-` lines)."""
    out = subprocess.run(["getfacl", "-p", "/dev/uinput"], capture_output=True, text=True, check=True, timeout=30).stdout
    return {l.split(":")[1] for l in out.splitlines() if l.startswith("user:") and l.split(":")[1]}


def doctor(run_as, uid, display):
    """`touchbridge doctor` behind `run_as`, in a home of `uid`'s own, on `display` (None: neither DISPLAY nor
    WAYLAND_DISPLAY), the page off (it would find no address a phone can reach in the VM: only lo is up) and
    PoseAI on a free UDP port: its exit status and {topic: [(status, line), ...]}, and its output."""
    env = private_env(owner=uid)
    env.update(DISPLAY=display or "", WAYLAND_DISPLAY="", XDG_SESSION_TYPE="")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        udp = s.getsockname()[1]
    r = subprocess.run([*run_as, os.path.join(BIN, "touchbridge"), "doctor", "--udp-port", str(udp), "--tuio-port", "0",
                        "--http-port", "0", "--bind", "127.0.0.1"],
                       capture_output=True, text=True, env=env, timeout=120)
    findings = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(ok|note|problem) +(\S+) +(.*)$", line)
        if m:
            findings.setdefault(m.group(2), []).append((m.group(1), m.group(3)))
    return r.returncode, findings, r.stdout + r.stderr


def expect_finding(findings, topic, status, text, out, what):
    got = findings.get(topic, [])
    check(any(st == status and text in line for st, line in got),
          f"{what}: no `{status} {topic}` finding with {text!r}; doctor said:\n{out}")


def test_touchbridge_doctor_names_the_backend_and_uinput_for_each_user():
    """`touchbridge doctor` on the VM's Xorg (:0), where /dev/uinput is root's (0600) but for an ACL: as
    the seat's user tbwl without the ACL it takes XTest and notes uinput cannot make devices, with the udev
    rule as the fix, and finds no problem; with the ACL the package's uaccess rule gives the seat's user
    (setfacl here: no logind in this VM), uinput, which makes devices; as nobody with no display, nothing
    can drive: a problem, exit 1."""
    before = uinput_acl_users()
    try:
        if SEAT_USER in before:
            subprocess.run(["setfacl", "-x", f"u:{SEAT_USER}", "/dev/uinput"], check=True, timeout=30)

        status, f, out = doctor(as_user(SEAT_UID), SEAT_UID, ":0")
        note(f"tbwl, no ACL, exit {status}: " + "; ".join(f"{st} {t}: {l}" for t in ("backend", "uinput") for st, l in f.get(t, [])))
        expect_finding(f, "display", "ok", "X display :0 answers", out, "tbwl without uinput")
        expect_finding(f, "backend", "ok", "backend: xtest (--backend auto): /dev/uinput cannot be used", out, "tbwl without uinput")
        expect_finding(f, "uinput", "note", "/dev/uinput cannot make devices", out, "tbwl without uinput")
        check("udev rule" in out.split("/dev/uinput cannot make devices", 1)[1].split("\n", 2)[1],
              f"tbwl without uinput: the uinput finding's fix does not name the udev rule:\n{out}")
        check(status == 0 and out.rstrip().endswith("no problem found"), f"tbwl without uinput: exit {status}, want 0:\n{out}")

        subprocess.run(["setfacl", "-m", f"u:{SEAT_USER}:rw", "/dev/uinput"], check=True, timeout=30)
        status, f, out = doctor(as_user(SEAT_UID), SEAT_UID, ":0")
        note(f"tbwl, ACL rw, exit {status}: " + "; ".join(f"{st} {t}: {l}" for t in ("backend", "uinput") for st, l in f.get(t, [])))
        expect_finding(f, "backend", "ok", "backend: uinput (--backend auto): /dev/uinput is writable", out, "tbwl with uinput")
        expect_finding(f, "uinput", "ok", "/dev/uinput makes devices", out, "tbwl with uinput")
        check(status == 0 and out.rstrip().endswith("no problem found"), f"tbwl with uinput: exit {status}, want 0:\n{out}")

        status, f, out = doctor(as_user(NOBODY_UID, "--clear-groups"), NOBODY_UID, None)
        note(f"nobody, no display, exit {status}: " + "; ".join(f"{st} {t}: {l}" for t in ("backend", "uinput") for st, l in f.get(t, [])))
        expect_finding(f, "display", "note", "neither DISPLAY nor WAYLAND_DISPLAY is set", out, "nobody")
        expect_finding(f, "backend", "problem", "nothing to drive", out, "nobody")
        expect_finding(f, "uinput", "problem", "/dev/uinput cannot make devices", out, "nobody")
        check(status == 1 and re.search(r"\d+ problems? found$", out.rstrip()), f"nobody with no display: exit {status}, want 1:\n{out}")
    finally:
        if SEAT_USER not in before and SEAT_USER in uinput_acl_users():
            subprocess.run(["setfacl", "-x", f"u:{SEAT_USER}", "/dev/uinput"], check=True, timeout=30)
        elif SEAT_USER in before and SEAT_USER not in uinput_acl_users():
            subprocess.run(["setfacl", "-m", f"u:{SEAT_USER}:rw", "/dev/uinput"], check=True, timeout=30)


def all_tests():
    return {name[5:]: fn for name, fn in globals().items() if name.startswith("test_") and callable(fn)}


def main():
    os.makedirs(OUT, exist_ok=True)
    tests = all_tests()
    names = sys.argv[1:] or list(tests)
    # An unknown name fails as a test (KeyError), the run goes on.
    return sum(not run_test(name, lambda: tests[name]()) for name in names)


if __name__ == "__main__":
    sys.exit(main())
