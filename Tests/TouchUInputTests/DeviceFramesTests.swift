// The uinput devices' frames as the kernel would read them, recorded without /dev/uinput
// (`UInputDevice(recording:)`): multitouch protocol B on the touchscreen, the touchpad's finger-count
// tools, the pointer's hi-res wheel. Whether libinput and the compositors take these frames as meant is
// the VM stage's (Tests/VM: Xorg's libinput driver, sway, GNOME, KDE).
import Testing
import TouchCore
@testable import TouchUInput

/// An event in words: `ABS_MT_SLOT 1`, `BTN_TOUCH 1`, `SYN`.
func words(_ e: InputEvent) -> String {
    let names: [UInt16: [UInt16: String]] = [
        EV.abs: [ABS.x: "ABS_X", ABS.y: "ABS_Y", ABS.mtSlot: "ABS_MT_SLOT", ABS.mtTrackingID: "ABS_MT_TRACKING_ID",
                 ABS.mtPositionX: "ABS_MT_POSITION_X", ABS.mtPositionY: "ABS_MT_POSITION_Y"],
        EV.key: [BTN.touch: "BTN_TOUCH", BTN.left: "BTN_LEFT", BTN.toolFinger: "BTN_TOOL_FINGER",
                 BTN.toolDoubleTap: "BTN_TOOL_DOUBLETAP", BTN.toolTripleTap: "BTN_TOOL_TRIPLETAP"],
        EV.rel: [REL.wheel: "REL_WHEEL", REL.wheelHiRes: "REL_WHEEL_HI_RES", REL.hwheel: "REL_HWHEEL",
                 REL.hwheelHiRes: "REL_HWHEEL_HI_RES", REL.x: "REL_X", REL.y: "REL_Y"],
    ]
    if e.type == EV.syn { return "SYN" }
    return "\(names[e.type]?[e.code] ?? "\(e.type):\(e.code)") \(e.value)"
}

/// The frames recorded since the last call, in words.
func frames(_ device: UInputDevice, since: inout Int) -> [[String]] {
    let all = device.recorded ?? []
    defer { since = all.count }
    return all[since...].map { $0.map(words) }
}

@Suite struct DeviceFramesTests {
    /// Two fingers on the touchscreen, lifted one by one: each contact a slot with its own tracking id,
    /// the slot switched only when it changes, `BTN_TOUCH` with the first down and the last up, the
    /// single-touch axes following the lowest finger down; a position past the screen clamped to its
    /// last pixel (4 units a pixel, at the pixel's middle).
    @Test func touchscreenContactsFollowProtocolB() throws {
        let screen = UInputTouchscreen(width: 100, height: 50, device: UInputDevice(recording: "test touchscreen"))
        var seen = 0
        try screen.touch(slot: 0, x: 10, y: 20)
        try screen.sync()
        #expect(frames(screen.device, since: &seen) == [["ABS_MT_SLOT 0", "ABS_MT_TRACKING_ID 1", "ABS_MT_POSITION_X 42",
                                                         "ABS_MT_POSITION_Y 82", "BTN_TOUCH 1", "ABS_X 42", "ABS_Y 82", "SYN"]])
        try screen.touch(slot: 1, x: 500, y: -3)
        try screen.touch(slot: 0, x: 11, y: 20)
        try screen.sync()
        #expect(frames(screen.device, since: &seen) == [["ABS_MT_SLOT 1", "ABS_MT_TRACKING_ID 2", "ABS_MT_POSITION_X 398",
                                                         "ABS_MT_POSITION_Y 2", "ABS_MT_SLOT 0", "ABS_MT_POSITION_X 46",
                                                         "ABS_MT_POSITION_Y 82", "ABS_X 46", "ABS_Y 82", "SYN"]])
        try screen.lift(slot: 0)
        try screen.sync()
        try screen.liftAll()
        #expect(frames(screen.device, since: &seen) == [["ABS_MT_TRACKING_ID -1", "SYN"],
                                                        ["ABS_MT_SLOT 1", "ABS_MT_TRACKING_ID -1", "BTN_TOUCH 0", "SYN"]])
        // A slot out of range or a finger not down: nothing.
        try screen.touch(slot: 10, x: 1, y: 1)
        try screen.lift(slot: 3)
        try screen.sync()
        #expect(frames(screen.device, since: &seen) == [["SYN"]])
    }

    /// The touchpad says how many fingers touch with one `BTN_TOOL_*` at a time (the old one let go
    /// first), and `BTN_TOUCH` only when the first comes and the last goes; `liftAll` also lets the
    /// clickpad's button go.
    @Test func touchpadToolsCountTheFingers() throws {
        let pad = UInputTouchpad(widthMM: 100, heightMM: 60, unitsPerMM: 10, device: UInputDevice(recording: "test touchpad"))
        var seen = 0
        try pad.touch(slot: 0, x: 5000, y: 100)
        try pad.sync()
        try pad.touch(slot: 1, x: 200, y: 300)
        try pad.sync()
        #expect(frames(pad.device, since: &seen) == [
            ["ABS_MT_SLOT 0", "ABS_MT_TRACKING_ID 1", "ABS_MT_POSITION_X 1000", "ABS_MT_POSITION_Y 100", "ABS_X 1000", "ABS_Y 100",
             "BTN_TOOL_FINGER 1", "BTN_TOUCH 1", "SYN"],
            ["ABS_MT_SLOT 1", "ABS_MT_TRACKING_ID 2", "ABS_MT_POSITION_X 200", "ABS_MT_POSITION_Y 300",
             "BTN_TOOL_FINGER 0", "BTN_TOOL_DOUBLETAP 1", "SYN"],
        ])
        try pad.click(true)
        try pad.liftAll()
        #expect(frames(pad.device, since: &seen) == [
            ["BTN_LEFT 1", "ABS_MT_SLOT 0", "ABS_MT_TRACKING_ID -1", "ABS_MT_SLOT 1", "ABS_MT_TRACKING_ID -1", "BTN_LEFT 0",
             "BTN_TOOL_DOUBLETAP 0", "BTN_TOUCH 0", "SYN"],
        ])
    }

    /// The wheel: every hi-res step as it comes (120 a notch), and the legacy notch once a whole one has
    /// gathered, either way; no event for an axis that did not move.
    @Test func theWheelSendsHiResStepsAndWholeNotches() throws {
        let pointer = UInputPointer(device: UInputDevice(recording: "test pointer"))
        var seen = 0
        try pointer.scroll(vertical: 60, horizontal: 0)
        try pointer.sync()
        try pointer.scroll(vertical: 60, horizontal: -250)
        try pointer.sync()
        try pointer.scroll(vertical: -120, horizontal: 0)
        try pointer.move(dx: 0, dy: 3)
        try pointer.sync()
        #expect(frames(pointer.device, since: &seen) == [
            ["REL_WHEEL_HI_RES 60", "SYN"],
            ["REL_WHEEL_HI_RES 60", "REL_WHEEL 1", "REL_HWHEEL_HI_RES -250", "REL_HWHEEL -2", "SYN"],
            ["REL_WHEEL_HI_RES -120", "REL_WHEEL -1", "REL_Y 3", "SYN"],
        ])
    }

    /// Tracking ids go from 1 to 65535 and round to 1 again, never 0 or -1 (which ends a contact).
    @Test func trackingIDsWrapPastTheirMaximum() throws {
        let screen = UInputTouchscreen(width: 10, height: 10, device: UInputDevice(recording: "test touchscreen"))
        var seen = 0
        for _ in 0..<65535 {
            try screen.touch(slot: 0, x: 1, y: 1)
            try screen.lift(slot: 0)
        }
        try screen.sync()
        _ = frames(screen.device, since: &seen)
        try screen.touch(slot: 0, x: 1, y: 1)
        try screen.sync()
        let last = frames(screen.device, since: &seen)
        #expect(last.first?.contains("ABS_MT_TRACKING_ID 1") == true, "\(last)")
    }
}
