// Presenter mode end to end: the real binary in --mode presenter on a private Xvfb, real datagrams,
// and xobserve reporting the key events X delivered for each gesture. Taps are back-to-back packets
// (well inside the 180 ms tap timeout); the long press waits for the daemon's own trace line.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct PresenterIntegrationTests {
    typealias T = TouchpadIntegrationTests

    /// The keypress and keyrelease of one key.
    static func stroke(_ code: Int) -> [String] { ["keypress \(code)", "keyrelease \(code)"] }

    @Test func eachGestureSendsItsDefaultKey() throws {
        let rig = try Rig.start(mode: "presenter", extraArguments: ["--log-level", "debug"])
        defer { rig.stop() }
        let display = rig.xvfb.display
        let pageDown = try T.keycode("Next", display: display)  // X's name for Page_Down
        let pageUp = try T.keycode("Prior", display: display)   // and Page_Up
        let b = try T.keycode("b", display: display)
        let pointer = try rig.observer.query()

        // One-finger tap: next (Page_Down).
        var mark = rig.observer.mark
        try T.fingers(rig, [0: (0.1, 0.1)])
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, Self.stroke(pageDown), "one-finger tap: Page_Down")

        // Swipe left by 0.6 of the half-width (19.5 mm ≥ 12 mm): next.
        mark = rig.observer.mark
        try T.fingers(rig, [0: (0.3, 0)])
        for i in 1...6 { try T.fingers(rig, [0: (0.3 - 0.1 * Double(i), 0)]) }
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, Self.stroke(pageDown), "swipe left: Page_Down")

        // Swipe right: previous (Page_Up).
        mark = rig.observer.mark
        try T.fingers(rig, [0: (-0.3, 0)])
        for i in 1...6 { try T.fingers(rig, [0: (-0.3 + 0.1 * Double(i), 0)]) }
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, Self.stroke(pageUp), "swipe right: Page_Up")

        // Two-finger tap: blank (b).
        mark = rig.observer.mark
        try T.fingers(rig, [0: (-0.2, 0), 1: (0.2, 0)])
        try T.lift(rig, [0, 1])
        try T.waitForClicks(rig, since: mark, Self.stroke(b), "two-finger tap: b")

        // Three-finger tap: clears drawings, no key.
        mark = rig.observer.mark
        var log = rig.daemon.logMark
        try T.fingers(rig, [0: (-0.3, 0), 1: (0, 0), 2: (0.3, 0)])
        try T.lift(rig, [0, 1, 2])
        try rig.daemon.waitForLog(containing: "presenter: touching → release → idle", since: log, "three-finger tap")
        // The barrier: a one-finger tap after it must send Page_Down, and nothing may come before that.
        try T.fingers(rig, [0: (0.1, 0.1)])
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, Self.stroke(pageDown), "a three-finger tap sends no key (then a tap: Page_Down)")

        // Long press: the laser comes on (the daemon's trace), no key, no click; then a horizontal drag
        // moves the laser, not the slides.
        mark = rig.observer.mark
        log = rig.daemon.logMark
        try T.fingers(rig, [0: (0, 0)])
        try rig.daemon.waitForLog(containing: "presenter: touching → longPress → pointing", since: log, "long press")
        for i in 1...6 { try T.fingers(rig, [0: (-0.1 * Double(i), 0)]) }
        try T.lift(rig, [0])
        // A second long press turns it off.
        log = rig.daemon.logMark
        try T.fingers(rig, [0: (0, 0)])
        try rig.daemon.waitForLog(containing: "presenter: touching → longPress → finished", since: log, "second long press")
        try T.lift(rig, [0])
        // The barrier again: a tap's Page_Down is the first key after the long presses and the drag.
        try T.fingers(rig, [0: (0.1, 0.1)])
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, Self.stroke(pageDown), "long presses and the laser drag send no key (then a tap: Page_Down)")

        // The real pointer never moved, and nothing is held.
        let after = try rig.observer.query()
        #expect(after.x == pointer.x && after.y == pointer.y && after.buttons == 0, "pointer: \(pointer) → \(after)")
        #expect(rig.observer.events(from: 0).filter { $0.kind == "motion" }.isEmpty, "\(rig.context(since: 0))")
    }

    @Test func keysRebindFromTheConfigFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tb-presenter-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("config.toml")
        try "[presenter-key]\nnext = \"Right\"\nprevious = \"shift+Left\"\nblank = \"period\"\n".write(to: file, atomically: true, encoding: .utf8)
        let rig = try Rig.start(mode: "presenter", extraArguments: ["--config", file.path])
        defer { rig.stop() }
        let display = rig.xvfb.display
        let right = try T.keycode("Right", display: display)
        let left = try T.keycode("Left", display: display)
        let shift = try T.keycode("Shift_L", display: display)
        let period = try T.keycode("period", display: display)

        var mark = rig.observer.mark
        try T.fingers(rig, [0: (0.1, 0.1)])
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, Self.stroke(right), "tap, next rebound in the config file to Right")

        mark = rig.observer.mark
        try T.fingers(rig, [0: (-0.3, 0)])
        for i in 1...6 { try T.fingers(rig, [0: (-0.3 + 0.1 * Double(i), 0)]) }
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, ["keypress \(shift)", "keypress \(left)", "keyrelease \(left)", "keyrelease \(shift)"],
                            "swipe right, previous rebound to shift+Left")

        mark = rig.observer.mark
        try T.fingers(rig, [0: (-0.2, 0), 1: (0.2, 0)])
        try T.lift(rig, [0, 1])
        try T.waitForClicks(rig, since: mark, Self.stroke(period), "two-finger tap, blank rebound to period")
    }
}
