// Touchpad mode end to end: the real binary in --mode touchpad on a private Xvfb, real datagrams,
// and xobserve reporting what X delivered: relative motion, buttons 1/2/3, a tap-and-drag, wheel
// buttons 4–7, Ctrl + wheel for a pinch, and a swipe's key chord. Taps are sent as back-to-back packets
// (well inside the 180 ms tap timeout); no other assertion depends on timing.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct TouchpadIntegrationTests {
    /// Keycodes of the test's X server, from `xmodmap -pke` (the keymap is the server's business).
    static func keycode(_ keysym: String, display: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/xmodmap")
        process.arguments = ["-display", display, "-pke"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        for line in text.split(separator: "\n") {
            // keycode  64 = Alt_L Meta_L Alt_L Meta_L
            let parts = line.split(separator: " ")
            guard parts.count >= 4, parts[0] == "keycode", let code = Int(parts[1]) else { continue }
            if parts.dropFirst(3).first.map(String.init) == keysym { return code }
        }
        throw RigError("xmodmap -pke on \(display) has no keycode for \(keysym)")
    }

    /// Sends one packet with these fingers (slot → position) down, with a matching TouchState.
    static func fingers(_ rig: Rig, _ points: [Int: (Double, Double)]) throws {
        try rig.sender.send(
            touches: points.sorted { $0.key < $1.key }.map { .at(slot: $0.key, x: $0.value.0, y: $0.value.1) },
            state: points.mapValues { .at(x: $0.0, y: $0.1) })
    }

    static func lift(_ rig: Rig, _ slots: [Int]) throws {
        try rig.sender.send(touches: slots.map { .ended(slot: $0) }, state: [:])
    }

    /// The button and key events observed from `mark` until now (after a sync barrier).
    static func clicks(_ rig: Rig, since mark: Int) throws -> [String] {
        try rig.observer.sync()
        return rig.observer.events(from: mark).compactMap { e in
            switch e.kind {
            case "press", "release": return "\(e.kind) \(e.button ?? -1)"
            case "keypress", "keyrelease": return "\(e.kind) \(e.fields["key"] ?? -1)"
            default: return nil
            }
        }
    }

    /// Waits until as many button and key events as `expected` has were observed (at most `timeout` s),
    /// then expects them to be `expected`.
    static func waitForClicks(_ rig: Rig, since mark: Int, _ expected: [String], timeout: Double = 20, _ what: String) throws {
        var count = 0
        // The predicate sees each line once, in order.
        _ = rig.observer.waitFor(from: mark, timeout: timeout) { e in
            if ["press", "release", "keypress", "keyrelease"].contains(e.kind) { count += 1 }
            return count >= expected.count
        }
        let seen = try clicks(rig, since: mark)
        #expect(seen == expected, "\(what)\n\(rig.context(since: mark))")
    }

    @Test func oneFingerMotionMovesThePointerRelatively() throws {
        let rig = try Rig.start(mode: "touchpad", extraArguments: ["--accel", "flat"])
        defer { rig.stop() }
        try rig.observer.warp(x: 500, y: 500)
        let start = rig.observer.mark
        // The finger lands far from the centre (no jump), then moves 0.2 of the half-width to the right:
        // 410 raw steps × 64.95 mm / 4094 = 6.5 mm × 12 px/mm (flat, speed 0) = 78 px.
        try Self.fingers(rig, [0: (0.6, -0.4)])
        for i in 1...4 { try Self.fingers(rig, [0: (0.6 + 0.05 * Double(i), -0.4)]) }
        try rig.waitForMotion(to: 578, 500, since: start, tolerance: 2, "relative motion of 6.5 mm")
        try Self.lift(rig, [0])
        // The lift is handled (and whatever it pressed is in X) before the barrier's handshake.
        try rig.barrier("after the lift")
        let p = try rig.observer.query()
        #expect(abs(p.x - 578) <= 2 && p.y == 500 && p.buttons == 0, "pointer after the stroke: \(p)")
        // Relative motion, no button: a moving finger is not a tap.
        #expect(try Self.clicks(rig, since: start) == [])
        #expect(rig.observer.events(from: start).filter { $0.kind == "motion" }.count >= 4)
    }

    @Test func orientationTurnsTheMotion() throws {
        // Held in landscape-left (home button on the right), the phone's +X points up: a stroke along the
        // device's +X moves the pointer up.
        let rig = try Rig.start(mode: "touchpad", extraArguments: ["--accel", "flat", "--orientation", "landscape-left"])
        defer { rig.stop() }
        try rig.observer.warp(x: 500, y: 500)
        let start = rig.observer.mark
        try Self.fingers(rig, [0: (0.6, -0.4)])
        for i in 1...4 { try Self.fingers(rig, [0: (0.6 + 0.05 * Double(i), -0.4)]) }
        try rig.waitForMotion(to: 500, 422, since: start, tolerance: 2, "a stroke along the device's +X, held landscape-left")
        try Self.lift(rig, [0])
    }

    @Test func oneTwoAndThreeFingerTapsClickButtonsOneThreeAndTwo() throws {
        let rig = try Rig.start(mode: "touchpad")
        defer { rig.stop() }
        for (fingers, button) in [(1, 1), (2, 3), (3, 2)] {
            let mark = rig.observer.mark
            let log = rig.daemon.logMark
            var points: [Int: (Double, Double)] = [:]
            for f in 0..<fingers { points[f] = (-0.3 + 0.3 * Double(f), 0.1) }
            try Self.fingers(rig, points)
            try Self.lift(rig, Array(0..<fingers))
            try Self.waitForClicks(rig, since: mark, ["press \(button)", "release \(button)"],
                                   "a \(fingers)-finger tap should click button \(button)")
            // The tap machine back in idle (a one-finger tap after the drag timeout), so the next tap is
            // not a double tap.
            try rig.daemon.waitForLog(containing: fingers == 1 ? "tap: tapped → timeout → idle" : "tap: touch → release → idle",
                                      since: log, "the \(fingers)-finger tap's machine back in idle")
        }
    }

    @Test func stateMachineTransitionsAreLoggedAtDebugLevel() throws {
        let rig = try Rig.start(mode: "touchpad")  // the rig runs the daemon at --log-level debug
        defer { rig.stop() }
        let mark = rig.observer.mark
        try Self.fingers(rig, [0: (0.1, 0.1)])
        try Self.lift(rig, [0])
        try Self.waitForClicks(rig, since: mark, ["press 1", "release 1"], "one-finger tap")
        // The daemon logs a transition before it injects; its stderr may still reach the test after xobserve's line.
        for transition in ["tap: idle → touch → touch", "tap: touch → release → tapped", "tap: tapped → timeout → idle"] {
            #expect((try? rig.daemon.waitForLog(containing: transition, timeout: 20, "transition logged")) != nil,
                    "the log lacks \(transition)\n\(rig.daemon.outputTail())")
        }
    }

    @Test func kineticScrollCoastsAfterAFlickAndStopsByItself() throws {
        let rig = try Rig.start(mode: "touchpad")
        defer { rig.stop() }
        let log = rig.daemon.logMark
        // A flick: 0.3 down (21 mm) in 8 packets 16 ms apart, lifted while moving.
        try Self.fingers(rig, [0: (-0.2, 0), 1: (0.2, 0)])
        for i in 1...8 {
            usleep(16_000)
            let y = 0.3 * Double(i) / 8
            try Self.fingers(rig, [0: (-0.2, y), 1: (0.2, y)])
        }
        try Self.lift(rig, [0, 1])
        let lifted = rig.observer.mark
        // It coasts: the lift starts it, and it stops by itself: a tick (not a touch) ends it.
        try rig.daemon.waitForLog(containing: "kinetic: idle → flick → coasting", since: log, "the flick starts coasting")
        try rig.daemon.waitForLog(containing: "kinetic: coasting → tick → idle", since: log, timeout: 10, "coasting stops by itself")
        // The daemon logs the last tick before it injects that tick's clicks; they are in X before the
        // barrier's handshake.
        let end = try rig.barrier("after the coast")
        var wheel = rig.inputEvents(from: lifted, before: end).map { "\($0.kind) \($0.button ?? -1)" }
        // The mark is taken while the flick's own clicks may still be on their way, so it can fall between
        // one click's press and its release (seen on a loaded machine): that release opens the window.
        if wheel.first == "release 5" { wheel.removeFirst() }
        let presses = wheel.filter { $0 == "press 5" }.count
        #expect(presses >= 1, "no wheel-down clicks while coasting after the flick\n\(rig.context(since: lifted))")
        #expect(wheel.allSatisfy { $0 == "press 5" || $0 == "release 5" } && wheel.filter { $0 == "release 5" }.count == presses,
                "coasting should click the wheel down, whole clicks only: \(wheel)")
    }

    @Test func doubleTapIsTwoClicks() throws {
        let rig = try Rig.start(mode: "touchpad")
        defer { rig.stop() }
        let mark = rig.observer.mark
        for _ in 0..<2 {
            try Self.fingers(rig, [0: (0.1, 0.1)])
            try Self.lift(rig, [0])
        }
        try Self.waitForClicks(rig, since: mark, ["press 1", "release 1", "press 1", "release 1"], "double tap")
    }

    @Test func tapAndDragHoldsButtonOneUntilTheLift() throws {
        let rig = try Rig.start(mode: "touchpad")
        defer { rig.stop() }
        try rig.observer.warp(x: 800, y: 400)
        let mark = rig.observer.mark
        try Self.fingers(rig, [0: (0.0, 0.0)])
        try Self.lift(rig, [0])
        try Self.fingers(rig, [0: (0.0, 0.0)])
        for i in 1...5 { try Self.fingers(rig, [0: (0.06 * Double(i), 0.02 * Double(i))]) }
        try rig.waitForButton("press", 1, since: mark, "tap-and-drag press")
        // The pointer moves with button 1 held and no release yet. The barrier's handshake follows the
        // moves out of the daemon, but X may run the observer's sync between the press and the moves
        // that came in the same write (its scheduler switches clients when a time slice ends, which a
        // loaded machine makes likely: seen with two suites side by side): wait for the motion itself.
        try rig.barrier("after the drag's moves")
        guard rig.observer.waitFor(from: mark, timeout: 20, { $0.kind == "motion" && ($0.x ?? 0) > 800 }) != nil else {
            Issue.record("no motion right of 800 while dragging\n\(rig.context(since: mark))")
            return
        }
        let p = try rig.observer.query()
        #expect(p.x > 800 && p.buttonOneHeld, "dragging: \(p)\n\(rig.context(since: mark))")
        #expect(try Self.clicks(rig, since: mark) == ["press 1"])
        let liftMark = rig.observer.mark
        try Self.lift(rig, [0])
        try rig.waitForButton("release", 1, since: liftMark, "lifting ends the drag")
        #expect(try rig.observer.query().buttons == 0)
    }

    @Test func twoFingerScrollClicksTheWheelButtons() throws {
        let rig = try Rig.start(mode: "touchpad", extraArguments: ["--no-kinetic-scroll"])
        defer { rig.stop() }
        // 0.2 down is 409 raw steps × 140.73 mm / 4094 = 14.1 mm; 0.4 across is 818 × 64.95 / 4094 = 13.0 mm:
        // three wheel clicks each at 4 mm per click.
        for (dx, dy, button) in [(0.0, 0.2, 5), (0.0, -0.2, 4), (0.4, 0.0, 7), (-0.4, 0.0, 6)] {
            let mark = rig.observer.mark
            try Self.fingers(rig, [0: (-0.2, 0), 1: (0.2, 0)])
            for i in 1...8 {
                let f = Double(i) / 8
                try Self.fingers(rig, [0: (-0.2 + dx * f, dy * f), 1: (0.2 + dx * f, dy * f)])
            }
            try Self.lift(rig, [0, 1])
            let expected = Array([[String]](repeating: ["press \(button)", "release \(button)"], count: 3).joined())
            try Self.waitForClicks(rig, since: mark, expected, "two fingers moving (\(dx), \(dy)) scroll with button \(button)")
            #expect(try rig.observer.query().buttons == 0)
        }
    }

    @Test func naturalScrollFromTheConfigFileReversesTheWheel() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tb-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("config.toml")
        try "natural-scroll = true\nkinetic-scroll = false\n".write(to: file, atomically: true, encoding: .utf8)
        let rig = try Rig.start(mode: "touchpad", extraArguments: ["--config", file.path])
        defer { rig.stop() }
        let mark = rig.observer.mark
        try Self.fingers(rig, [0: (-0.2, 0), 1: (0.2, 0)])
        for i in 1...8 {
            let f = Double(i) / 8
            try Self.fingers(rig, [0: (-0.2, 0.2 * f), 1: (0.2, 0.2 * f)])
        }
        try Self.lift(rig, [0, 1])
        let expected = Array([[String]](repeating: ["press 4", "release 4"], count: 3).joined())
        try Self.waitForClicks(rig, since: mark, expected, "natural scroll from the config file: fingers down scroll up")
    }

    @Test func pinchIsControlWithTheWheel() throws {
        let rig = try Rig.start(mode: "touchpad")
        defer { rig.stop() }
        let control = try Self.keycode("Control_L", display: rig.xvfb.display)
        let mark = rig.observer.mark
        // The fingers spread from 0.2 to 0.6 of the half-width apart: 13 mm, two zoom steps of 6 mm.
        try Self.fingers(rig, [0: (-0.1, 0), 1: (0.1, 0)])
        for i in 1...8 {
            let d = 0.1 + 0.2 * Double(i) / 8
            try Self.fingers(rig, [0: (-d, 0), 1: (d, 0)])
        }
        try Self.lift(rig, [0, 1])
        let step = ["keypress \(control)", "press 4", "release 4", "keyrelease \(control)"]
        try Self.waitForClicks(rig, since: mark, step + step, "spreading two fingers zooms in (Ctrl + wheel up)")
    }

    @Test func threeFingerSwipeSendsItsKeyChord() throws {
        let rig = try Rig.start(mode: "touchpad", extraArguments: ["--swipe", "4-up=ctrl+shift+Escape"])
        defer { rig.stop() }
        let alt = try Self.keycode("Alt_L", display: rig.xvfb.display)
        let right = try Self.keycode("Right", display: rig.xvfb.display)
        var mark = rig.observer.mark
        // Three fingers move left by 0.5 of the half-width (16 mm): the default chord alt+Right.
        try Self.fingers(rig, [0: (0.0, 0), 1: (0.2, 0), 2: (0.4, 0)])
        for i in 1...5 {
            let d = -0.1 * Double(i)
            try Self.fingers(rig, [0: (0.0 + d, 0), 1: (0.2 + d, 0), 2: (0.4 + d, 0)])
        }
        try Self.lift(rig, [0, 1, 2])
        try Self.waitForClicks(rig, since: mark, ["keypress \(alt)", "keypress \(right)", "keyrelease \(right)", "keyrelease \(alt)"],
                               "three fingers left: alt+Right, pressed and released in order")

        // A rebound four-finger swipe up.
        let ctrl = try Self.keycode("Control_L", display: rig.xvfb.display)
        let shift = try Self.keycode("Shift_L", display: rig.xvfb.display)
        let escape = try Self.keycode("Escape", display: rig.xvfb.display)
        mark = rig.observer.mark
        let xs = [-0.3, -0.1, 0.1, 0.3]
        try Self.fingers(rig, Dictionary(uniqueKeysWithValues: xs.enumerated().map { ($0.offset, ($0.element, 0.3)) }))
        for i in 1...5 {
            let y = 0.3 - 0.06 * Double(i)
            try Self.fingers(rig, Dictionary(uniqueKeysWithValues: xs.enumerated().map { ($0.offset, ($0.element, y)) }))
        }
        try Self.lift(rig, [0, 1, 2, 3])
        try Self.waitForClicks(rig, since: mark, ["keypress \(ctrl)", "keypress \(shift)", "keypress \(escape)",
                                                  "keyrelease \(escape)", "keyrelease \(shift)", "keyrelease \(ctrl)"],
                               "four fingers up, rebound with --swipe to ctrl+shift+Escape")
    }

    @Test func sigtermMidTapAndDragReleasesButtonOne() throws {
        let rig = try Rig.start(mode: "touchpad")
        defer { rig.stop() }
        let mark = rig.observer.mark
        try Self.fingers(rig, [0: (0.0, 0.0)])
        try Self.lift(rig, [0])
        try Self.fingers(rig, [0: (0.0, 0.0)])
        try Self.fingers(rig, [0: (0.2, 0.0)])
        try rig.waitForButton("press", 1, since: mark, "drag press")
        try rig.observer.sync()
        let status = rig.daemon.terminate(timeout: 5)
        #expect(status != nil, "touchbridge should exit on SIGTERM")
        try rig.waitForButton("release", 1, since: mark, "SIGTERM releases the drag's button")
        #expect(try rig.observer.query().buttons == 0)
    }
}
