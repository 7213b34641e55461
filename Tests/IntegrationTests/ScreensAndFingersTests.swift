// Screens and fingers end to end: RandR monitors made with `xrandr --setmonitor` on one large Xvfb, every
// orientation and fit landing on exact pixels, `touchbridge monitors`, monitor changes picked up live,
// and every finger as its own XInput2 master pointer (seen by xobserve as XI2 events from distinct
// device ids), removed on SIGTERM/SIGINT and after a crash.
//
// The screen: 2880×1200. LEFT 960×1080+0+0 (made primary), RIGHT 1920×1080+960+120 (an offset in
// both axes). The expected pixels below are worked out by hand from the mapping's documentation
// (`AbsoluteMapping`), not computed with touchbridge's code.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct ScreensAndFingersTests {
    static let screenWidth = 2880, screenHeight = 1200

    struct Rect: CustomStringConvertible {
        var x: Int, y: Int, w: Int, h: Int
        var topLeft: (Int, Int) { (x, y) }
        var topRight: (Int, Int) { (x + w - 1, y) }
        var bottomLeft: (Int, Int) { (x, y + h - 1) }
        var bottomRight: (Int, Int) { (x + w - 1, y + h - 1) }
        /// Raw 2047 is pixel x0 + W / 2.
        var centre: (Int, Int) { (x + w / 2, y + h / 2) }
        var description: String { "\(w)x\(h)+\(x)+\(y)" }
    }

    static let left = Rect(x: 0, y: 0, w: 960, h: 1080)
    static let right = Rect(x: 960, y: 120, w: 1920, h: 1080)
    static let whole = Rect(x: 0, y: 0, w: screenWidth, h: screenHeight)

    /// `--fit contain` with the default 19.5:9 phone, worked out by hand:
    /// W = round(H × 9 / 19.5) or H = round(W × 9 / 19.5) (portrait), the other way in landscape, centred.
    static let contain: [String: (portrait: Rect, landscape: Rect)] = [
        // portrait: 1080 × 9 / 19.5 = 498.46 → 498 wide, x0 = 960 + (1920 − 498) / 2 = 1671;
        // landscape: 1920 × 9 / 19.5 = 886.15 → 886 high, y0 = 120 + (1080 − 886) / 2 = 217.
        "RIGHT": (Rect(x: 1671, y: 120, w: 498, h: 1080), Rect(x: 960, y: 217, w: 1920, h: 886)),
        // portrait: 498 wide, x0 = (960 − 498) / 2 = 231; landscape: 960 × 9 / 19.5 = 443.08 → 443
        // high, y0 = (1080 − 443) / 2 = 318.
        "LEFT": (Rect(x: 231, y: 0, w: 498, h: 1080), Rect(x: 0, y: 318, w: 960, h: 443)),
        // portrait: 1200 × 9 / 19.5 = 553.85 → 554 wide, x0 = (2880 − 554) / 2 = 1163; landscape:
        // 1200 × 19.5 / 9 = 2600 wide (pillarboxed: 2880 × 9 > 1200 × 19.5), x0 = 140.
        "all": (Rect(x: 1163, y: 0, w: 554, h: 1200), Rect(x: 140, y: 0, w: 2600, h: 1200)),
    ]

    /// The device's corners (raw, portrait frame) and centre.
    static let tl = (0, 0), tr = (4094, 0), bl = (0, 4094), br = (4094, 4094), mid = (2047, 2047)

    /// iOS `UIDeviceOrientation` values of the `Orientation` field.
    enum Orientation: Int, CaseIterable {
        case portrait = 1, upsideDown = 2, landscapeLeft = 3, landscapeRight = 4
        var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }
    }

    /// Where each device corner and the centre land, in the user's view (wire-format.md, Orientation):
    /// landscape left (home right): the device's top-right is the user's top-left, device +Y points
    /// right; landscape right: the device's bottom-left is the user's top-left; upside down: both flipped.
    static func expectations(_ o: Orientation, on r: Rect) -> [(device: (Int, Int), pixel: (Int, Int), what: String)] {
        switch o {
        case .portrait:
            return [(tl, r.topLeft, "top-left"), (tr, r.topRight, "top-right"), (bl, r.bottomLeft, "bottom-left"),
                    (br, r.bottomRight, "bottom-right"), (mid, r.centre, "centre")]
        case .upsideDown:
            return [(tl, r.bottomRight, "top-left"), (tr, r.bottomLeft, "top-right"), (bl, r.topRight, "bottom-left"),
                    (br, r.topLeft, "bottom-right"), (mid, r.centre, "centre")]
        case .landscapeLeft:
            return [(tl, r.bottomLeft, "top-left"), (tr, r.topLeft, "top-right"), (bl, r.bottomRight, "bottom-left"),
                    (br, r.topRight, "bottom-right"), (mid, r.centre, "centre")]
        case .landscapeRight:
            return [(tl, r.topRight, "top-left"), (tr, r.bottomRight, "top-right"), (bl, r.topLeft, "bottom-left"),
                    (br, r.bottomLeft, "bottom-right"), (mid, r.centre, "centre")]
        }
    }

    // MARK: helpers

    /// A PoseAI packet with an `Orientation` field.
    static func packet(touches: String?, touchState: String?, orientation: Int?) -> String {
        let json = PoseAIText.packet(touches: touches, touchState: touchState)
        guard let orientation else { return json }
        return "{\"Orientation\":\(orientation)," + json.dropFirst()
    }

    static func touches(_ events: [PoseAITouch]) -> String { PoseAIText.touches(events) }
    static func state(_ slots: [Int: PoseAISlot]) -> String { PoseAIText.touchState(slots) }

    /// The two monitors of this suite, LEFT primary.
    static func makeMonitors(_ x: XvfbServer) throws {
        try X.xrandr(x, "--setmonitor", "*LEFT", "960/254x1080/286+0+0", "none")
        try X.xrandr(x, "--setmonitor", "RIGHT", "1920/508x1080/286+960+120", "none")
    }

    static func startRig(_ arguments: [String], monitors: Bool = true) throws -> Rig {
        try Rig.start(width: screenWidth, height: screenHeight, extraArguments: arguments,
                      prepare: monitors ? makeMonitors : { _ in })
    }

    /// Finger in slot 0 down at a raw device point, held `orientation`; waits until X has the core
    /// pointer exactly at `pixel` with button 1 pressed, checks it with a query, lifts the finger and
    /// waits for the release.
    static func tap(_ rig: Rig, raw: (Int, Int), orientation: Int?, expect pixel: (Int, Int), _ what: String) throws {
        let observer = rig.observer
        // Start away from the target, so only the daemon can put the pointer there.
        let away = pixel.0 == 1500 ? (1400, 1150) : (1500, 1150)
        try observer.warp(x: away.0, y: away.1)
        let mark = observer.mark
        try rig.sender.send(packet(
            touches: touches([.raw(slot: 0, x: raw.0, y: raw.1)]), touchState: state([0: .raw(x: raw.0, y: raw.1)]),
            orientation: orientation))
        try rig.waitForMotion(to: pixel.0, pixel.1, since: mark, tolerance: 0, what)
        try rig.waitForButton("press", 1, since: mark, what)
        let p = try observer.query()
        #expect(p.x == pixel.0 && p.y == pixel.1 && p.buttonOneHeld,
                "\(what): the pointer should be at (\(pixel.0),\(pixel.1)) with button 1 held, it is at \(p)")
        let up = observer.mark
        try rig.sender.send(packet(touches: touches([.ended(slot: 0)]), touchState: state([:]), orientation: nil))
        try rig.waitForButton("release", 1, since: up, "\(what): lift")
    }

    /// Every orientation through the packets' `Orientation` field, the five points each; also face up
    /// (5) after landscape left, which must keep landscape left.
    static func checkEveryOrientation(_ rig: Rig, stretch: Rect?, contain name: String?, label: String) throws {
        for o in Orientation.allCases {
            let rect: Rect
            if let stretch { rect = stretch } else {
                let c = contain[name!]!
                rect = o.isLandscape ? c.landscape : c.portrait
            }
            for e in expectations(o, on: rect) {
                try tap(rig, raw: e.device, orientation: o.rawValue, expect: e.pixel,
                        "\(label), \(o), device \(e.what) → \(rect)")
            }
            if o == .landscapeLeft {
                let e = expectations(.landscapeLeft, on: rect)[1]
                try tap(rig, raw: e.device, orientation: 5, expect: e.pixel, "\(label), face up after landscape left keeps it")
            }
        }
    }

    // MARK: monitors and mapping

    @Test func monitorsCommandListsTheRandRMonitors() throws {
        let x = try XvfbServer.start(width: Self.screenWidth, height: Self.screenHeight)
        defer { x.stop() }
        try Self.makeMonitors(x)
        let (status, out) = try X.run(try Binaries.touchbridge(), ["monitors", "--display", x.display])
        #expect(status == .exited(0), "touchbridge monitors: \(String(describing: status))\n\(out)")
        #expect(out.contains("LEFT 960x1080+0+0 primary"), "\(out)")
        #expect(out.contains("RIGHT 1920x1080+960+120\n") || out.hasSuffix("RIGHT 1920x1080+960+120"), "\(out)")
    }

    @Test func stretchOntoANamedMonitorAtAnOffsetInEveryOrientation() throws {
        let rig = try Self.startRig(["--monitor", "RIGHT"])
        defer { rig.stop() }
        try rig.daemon.waitForLog(containing: "onto monitor RIGHT 1920x1080+960+120 stretch", "the log line onto monitor RIGHT 1920x1080+960+120 stretch")
        try Self.checkEveryOrientation(rig, stretch: Self.right, contain: nil, label: "RIGHT stretch")
    }

    @Test func containOntoANamedMonitorAtAnOffsetInEveryOrientation() throws {
        let rig = try Self.startRig(["--monitor", "RIGHT", "--fit", "contain"])
        defer { rig.stop() }
        try Self.checkEveryOrientation(rig, stretch: nil, contain: "RIGHT", label: "RIGHT contain")
    }

    @Test func primaryIsTheDefaultTargetInEveryOrientationAndFit() throws {
        do {
            let rig = try Self.startRig([])
            defer { rig.stop() }
            try Self.checkEveryOrientation(rig, stretch: Self.left, contain: nil, label: "primary (LEFT) stretch")
        }
        do {
            let rig = try Self.startRig(["--monitor", "primary", "--fit", "contain"])
            defer { rig.stop() }
            try Self.checkEveryOrientation(rig, stretch: nil, contain: "LEFT", label: "primary (LEFT) contain")
        }
    }

    @Test func allIsTheWholeScreenInEveryOrientationAndFit() throws {
        do {
            let rig = try Self.startRig(["--monitor", "all"])
            defer { rig.stop() }
            try Self.checkEveryOrientation(rig, stretch: Self.whole, contain: nil, label: "all stretch")
        }
        do {
            let rig = try Self.startRig(["--monitor", "all", "--fit", "contain"])
            defer { rig.stop() }
            try Self.checkEveryOrientation(rig, stretch: nil, contain: "all", label: "all contain")
        }
    }

    @Test func orientationOptionOverridesThePackets() throws {
        let rig = try Self.startRig(["--monitor", "RIGHT", "--orientation", "landscape-right"])
        defer { rig.stop() }
        // The packets say portrait; the option says landscape right.
        for e in Self.expectations(.landscapeRight, on: Self.right) {
            try Self.tap(rig, raw: e.device, orientation: Orientation.portrait.rawValue, expect: e.pixel,
                         "--orientation landscape-right, packet portrait, device \(e.what)")
        }
    }

    @Test func monitorChangesArePickedUpWithoutARestart() throws {
        // No monitors at start: RIGHT is missing, so the whole screen is used (with a warning).
        let rig = try Self.startRig(["--monitor", "RIGHT"], monitors: false)
        defer { rig.stop() }
        try rig.daemon.waitForLog(containing: "no monitor named \"RIGHT\"", "the missing monitor said")
        try Self.tap(rig, raw: Self.br, orientation: 1, expect: Self.whole.bottomRight, "no RIGHT yet: whole screen")

        var log = rig.daemon.logMark
        try X.xrandr(rig.xvfb, "--setmonitor", "RIGHT", "1920/508x1080/286+960+120", "none")
        try rig.daemon.waitForLog(containing: "mapping onto monitor RIGHT 1920x1080+960+120", since: log, "RIGHT made")
        try Self.tap(rig, raw: Self.tl, orientation: 1, expect: Self.right.topLeft, "RIGHT made: its top-left")
        try Self.tap(rig, raw: Self.br, orientation: 1, expect: Self.right.bottomRight, "RIGHT made: its bottom-right")

        // Moved (this Xvfb refuses --setmonitor of an existing name with BadValue: delete, then make).
        log = rig.daemon.logMark
        try X.xrandr(rig.xvfb, "--delmonitor", "RIGHT")
        try X.xrandr(rig.xvfb, "--setmonitor", "RIGHT", "1000/254x800/200+1500+300", "none")
        try rig.daemon.waitForLog(containing: "mapping onto monitor RIGHT 1000x800+1500+300", since: log, "RIGHT moved")
        try Self.tap(rig, raw: Self.br, orientation: 1, expect: (1500 + 999, 300 + 799), "RIGHT moved: its bottom-right")
        try Self.tap(rig, raw: Self.mid, orientation: 1, expect: (1500 + 500, 300 + 400), "RIGHT moved: its centre")

        log = rig.daemon.logMark
        try X.xrandr(rig.xvfb, "--delmonitor", "RIGHT")
        try rig.daemon.waitForLog(containing: "using the whole screen 2880x1200+0+0 until it appears", since: log, "RIGHT deleted")
        try Self.tap(rig, raw: Self.tl, orientation: 1, expect: Self.whole.topLeft, "RIGHT deleted: whole screen again")
        try Self.tap(rig, raw: Self.br, orientation: 1, expect: Self.whole.bottomRight, "RIGHT deleted: whole screen again")
    }

    // MARK: every finger

    /// The touchbridge masters in `xinput list`, by name.
    static func touchbridgeDevices(_ x: XvfbServer) throws -> [String] {
        let (status, out) = try X.run("/usr/bin/env", ["DISPLAY=\(x.display)", "xinput", "list", "--name-only"])
        guard status == .exited(0) else { throw RigError("xinput list: \(String(describing: status))\n\(out)") }
        return out.split(separator: "\n").map(String.init).filter { $0.contains("touchbridge") }
    }

    /// Waits for a press (or release) of button 1 from each of `count` distinct devices from `mark` on;
    /// returns their device ids in the order observed.
    static func waitForButtons(_ rig: Rig, _ kind: String, count: Int, since mark: Int, _ what: String) throws -> [Int] {
        // The predicate sees each line once, in order (and runs under the store's lock: no snapshots here).
        var devices: [Int] = []
        let found = rig.observer.waitFor(from: mark, timeout: 5) { e in
            if e.isButton(kind, 1), let dev = e.fields["dev"], !devices.contains(dev) { devices.append(dev) }
            return devices.count >= count
        }
        guard found != nil else {
            throw RigError("\(what): \(kind)es of button 1 from \(devices.count) devices, \(count) expected\n"
                + rig.context(since: mark))
        }
        return devices
    }

    /// The position and buttons of master pointer `dev` (xobserve `query <id>`).
    static func query(_ rig: Rig, device: Int) throws -> (x: Int, y: Int, buttons: Int) {
        let mark = rig.observer.mark
        try rig.observer.send("query \(device)")
        guard let line = rig.observer.waitFor(from: mark, timeout: 5, { $0.kind == "pointer" || $0.kind == "error" }),
              line.kind == "pointer", let x = line.x, let y = line.y, let b = line.fields["buttons"]
        else { throw RigError("xobserve: no position for device \(device)\n" + rig.context(since: mark)) }
        return (x, y, b)
    }

    @Test func threeFingersPressFromThreeDistinctDevicesAndSigtermRemovesTheMasters() throws {
        let rig = try Self.startRig(["--monitor", "RIGHT", "--multitouch"])
        defer { rig.stop() }
        #expect(try Self.touchbridgeDevices(rig.xvfb).isEmpty, "no masters before any finger")

        // Three fingers down in one packet, at three corners of RIGHT (portrait).
        let fingers: [(slot: Int, raw: (Int, Int), pixel: (Int, Int))] = [
            (0, Self.tl, Self.right.topLeft), (1, Self.br, Self.right.bottomRight), (2, Self.mid, Self.right.centre),
        ]
        var mark = rig.observer.mark
        try rig.sender.send(Self.packet(
            touches: Self.touches(fingers.map { .raw(slot: $0.slot, x: $0.raw.0, y: $0.raw.1) }),
            touchState: Self.state(Dictionary(uniqueKeysWithValues: fingers.map { ($0.slot, PoseAISlot.raw(x: $0.raw.0, y: $0.raw.1)) })),
            orientation: 1))
        let pressed = try Self.waitForButtons(rig, "press", count: 3, since: mark, "three fingers down")
        #expect(pressed.count == 3 && pressed.first == 2, "finger 1 is the core pointer (device 2): \(pressed)")
        // Each finger's own pointer is exactly where its finger is, with button 1 held.
        for (i, dev) in pressed.enumerated() {
            let p = try Self.query(rig, device: dev)
            let want = fingers[i].pixel
            #expect(p.x == want.0 && p.y == want.1 && p.buttons & 1 != 0,
                    "finger \(i + 1) (device \(dev)) should be at \(want) with button 1 held: \(p)")
        }
        let masters = try Self.touchbridgeDevices(rig.xvfb)
        #expect(masters.contains("touchbridge finger 2 pointer") && masters.contains("touchbridge finger 3 pointer"),
                "\(masters)")

        // Finger 2 moves: only its pointer moves, by XI2 motion from its device.
        mark = rig.observer.mark
        try rig.sender.send(Self.packet(touches: Self.touches([.raw(slot: 1, x: 2047, y: 0)]), touchState: nil, orientation: nil))
        guard let moved = rig.observer.waitFor(from: mark, timeout: 20, { $0.kind == "motion" && $0.fields["dev"] == pressed[1] }) else {
            throw RigError("finger 2 moved: no motion from device \(pressed[1])\n" + rig.context(since: mark))
        }
        _ = moved
        let p2 = try Self.query(rig, device: pressed[1])
        #expect(p2.x == Self.right.centre.0 && p2.y == Self.right.y, "finger 2 moved to the top centre of RIGHT: \(p2)")
        let core = try rig.observer.query()
        #expect(core.x == Self.right.topLeft.0 && core.y == Self.right.topLeft.1, "finger 1 stayed: \(core)")

        // All lift: three releases from the same three devices.
        mark = rig.observer.mark
        try rig.sender.send(Self.packet(touches: Self.touches([.ended(slot: 0), .ended(slot: 1), .ended(slot: 2)]),
                                        touchState: Self.state([:]), orientation: nil))
        let released = try Self.waitForButtons(rig, "release", count: 3, since: mark, "three fingers up")
        #expect(Set(released) == Set(pressed))

        // Down again: the masters are reused, not made again.
        mark = rig.observer.mark
        try rig.sender.send(Self.packet(touches: Self.touches([.raw(slot: 0, x: 100, y: 100), .raw(slot: 1, x: 200, y: 200)]),
                                        touchState: nil, orientation: nil))
        let again = try Self.waitForButtons(rig, "press", count: 2, since: mark, "two fingers down again")
        #expect(again == Array(pressed.prefix(2)), "the same devices again: \(again) vs \(pressed)")
        #expect(try Self.touchbridgeDevices(rig.xvfb) == masters)

        // SIGTERM with two fingers down: both released, exit 0, no master left.
        mark = rig.observer.mark
        let status = rig.daemon.terminate(timeout: 5)
        #expect(status == .exited(0), "exit on SIGTERM: \(String(describing: status))\n\(rig.daemon.outputTail())")
        let releasedAtExit = try Self.waitForButtons(rig, "release", count: 2, since: mark, "SIGTERM with two fingers down")
        #expect(Set(releasedAtExit) == Set(again))
        let left = try Self.touchbridgeDevices(rig.xvfb)
        #expect(left.isEmpty, "xinput list after SIGTERM: \(left)")
    }

    @Test func tenFingersDriveTenPointersFromTenDevices() throws {
        let rig = try Self.startRig(["--monitor", "all", "--multitouch"])
        defer { rig.stop() }
        // Ten fingers along the top edge, slot s at raw x = 400 s: pixel x = 400 s × 2880 / 4094.
        var events: [PoseAITouch] = []
        for s in 0..<10 { events.append(.raw(slot: s, x: 400 * s, y: 0)) }
        let mark = rig.observer.mark
        try rig.sender.send(Self.packet(touches: Self.touches(events), touchState: nil, orientation: 1))
        let pressed = try Self.waitForButtons(rig, "press", count: 10, since: mark, "ten fingers down")
        #expect(Set(pressed).count == 10)
        for (s, dev) in pressed.enumerated() where s > 0 {
            let p = try Self.query(rig, device: dev)
            #expect(p.x == 400 * s * 2880 / 4094 && p.y == 0, "finger \(s + 1) (device \(dev)): \(p)")
        }
        let masters = try Self.touchbridgeDevices(rig.xvfb).filter { $0.hasSuffix(" pointer") && !$0.contains("XTEST") }
        #expect(masters.count == 9, "fingers 2…10 have masters: \(masters)")
        let status = rig.daemon.terminate(timeout: 5)
        #expect(status == .exited(0))
        let left = try Self.touchbridgeDevices(rig.xvfb)
        #expect(left.isEmpty, "xinput list after SIGTERM: \(left)")
    }

    @Test func sigintRemovesTheMastersToo() throws {
        let rig = try Self.startRig(["--multitouch"])
        defer { rig.stop() }
        let mark = rig.observer.mark
        try rig.sender.send(Self.packet(touches: Self.touches([.raw(slot: 0, x: 10, y: 10), .raw(slot: 1, x: 3000, y: 3000)]),
                                        touchState: nil, orientation: 1))
        _ = try Self.waitForButtons(rig, "press", count: 2, since: mark, "two fingers down")
        #expect(try Self.touchbridgeDevices(rig.xvfb).count == 4, "finger 2's master pointer, keyboard and their XTEST slaves")
        let status = rig.daemon.interrupt(timeout: 5)
        #expect(status == .exited(0), "exit on SIGINT: \(String(describing: status))\n\(rig.daemon.outputTail())")
        #expect(try Self.touchbridgeDevices(rig.xvfb).isEmpty)
    }

    @Test func mastersLeftByACrashAreRemovedAtTheNextStart() throws {
        let x = try XvfbServer.start(width: 1920, height: 1080)
        defer { x.stop() }
        // What a killed run leaves: masters it made and never removed.
        for n in [2, 7] {
            let (status, out) = try X.run("/usr/bin/env", ["DISPLAY=\(x.display)", "xinput", "create-master", "touchbridge finger \(n)"])
            #expect(status == .exited(0), "\(out)")
        }
        #expect(try Self.touchbridgeDevices(x).count == 8, "two masters, each a pointer, a keyboard and two XTEST slaves")
        let daemon = try Daemon.start(display: x.display, idleReleaseMs: 10_000, extraArguments: [])
        defer { _ = daemon.terminate() }
        #expect(try Self.touchbridgeDevices(x).isEmpty, "leftovers removed before the daemon listens")
        try daemon.waitForLog(containing: "removed pointers left over by an earlier run: \"touchbridge finger 2\", \"touchbridge finger 7\"",
                              "the leftovers named")
    }
}

/// Small X tools run as child processes.
enum X {
    /// Runs a program to its end (at most `timeout` s) and returns its status and stdout + stderr.
    static func run(_ executable: String, _ arguments: [String], timeout: Double = 10) throws -> (ChildExit?, String) {
        let path = executable.hasPrefix("/") ? executable : (findInPath(executable) ?? executable)
        let child = try ChildProcess(name: URL(fileURLWithPath: path).lastPathComponent, executable: path, arguments: arguments)
        let status = child.waitForExit(timeout: timeout) ?? child.stop(timeout: 1)
        child.stdout.waitClosed(timeout: 2)
        child.stderr.waitClosed(timeout: 2)
        let text = (child.stdout.snapshot() + child.stderr.snapshot()).map(\.text).joined(separator: "\n")
        return (status, text)
    }

    /// `xrandr -display <display> <arguments…>`; throws unless it exits 0.
    static func xrandr(_ x: XvfbServer, _ arguments: String...) throws {
        guard let xrandr = findInPath("xrandr") else {
            throw RigError("xrandr is not installed (Debian: x11-xserver-utils); these tests need it and do not skip")
        }
        let (status, out) = try run(xrandr, ["-display", x.display] + arguments)
        guard status == .exited(0) else { throw RigError("xrandr \(arguments.joined(separator: " ")): \(String(describing: status))\n\(out)") }
    }
}
