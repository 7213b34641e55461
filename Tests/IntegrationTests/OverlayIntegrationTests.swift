// The overlay on a real Xvfb (no compositor, so the bounding-shape path): screenshots taken with xwd show
// a circle of the slot's colour under each finger and nothing there once it lifts or goes silent; a click
// under a circle reaches the window below (xev); presenter mode's laser dot appears and goes.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct OverlayIntegrationTests {
    typealias T = TouchpadIntegrationTests

    /// The slot colours of `Overlay.slotColours` in 8-bit RGB (drawn opaque without a compositor).
    static let slot0 = (31, 120, 242)
    static let slot1 = (242, 140, 26)
    static let laserRed = (255, 0, 0)

    static func circle(_ shot: Screenshot, at p: (x: Int, y: Int), _ colour: (Int, Int, Int)) -> Int {
        shot.count(near: p.x, p.y, radius: 10, colour)
    }

    @Test func aCircleOfTheSlotColourUnderEachFingerGoneAfterLift() throws {
        let rig = try Rig.start(mode: "touchscreen", extraArguments: ["--show-touches"])
        defer { rig.stop() }
        let d = rig.xvfb.display
        let p0 = rig.expectedPixel(x: -0.5, y: -0.5), p1 = rig.expectedPixel(x: 0.5, y: 0.5)
        let elsewhere = rig.expectedPixel(x: 0.5, y: -0.5)
        try T.fingers(rig, [0: (-0.5, -0.5), 1: (0.5, 0.5)])
        let shot = try Screenshot.waitFor(display: d, "a circle under each finger") {
            Self.circle($0, at: p0, Self.slot0) >= 300 && Self.circle($0, at: p1, Self.slot1) >= 300
        }
        // The centre pixel is the slot's colour; nothing of either colour where no finger is.
        #expect(shot.isColour(p0.x, p0.y, Self.slot0), "centre of finger 1: \(shot.rgb(p0.x, p0.y))")
        #expect(shot.isColour(p1.x, p1.y, Self.slot1), "centre of finger 2: \(shot.rgb(p1.x, p1.y))")
        #expect(Self.circle(shot, at: elsewhere, Self.slot0) == 0 && Self.circle(shot, at: elsewhere, Self.slot1) == 0)
        // Antialiased edge: some pixels between the colour and the background.
        #expect(shot.count(near: p0.x, p0.y, radius: 40, Self.slot0) < 81 * 81)

        // The first finger lifts: its circle fades out and is gone; the second stays.
        try T.fingers(rig, [1: (0.5, 0.5)])
        try Screenshot.waitFor(display: d, "the lifted finger's circle gone") {
            $0.count(near: p0.x, p0.y, radius: 40, Self.slot0) == 0 && Self.circle($0, at: p1, Self.slot1) >= 300
        }
        try T.lift(rig, [1])
        try Screenshot.waitFor(display: d, "every circle gone") {
            $0.count(near: p1.x, p1.y, radius: 40, Self.slot1) == 0
        }
    }

    @Test func aSilentFingersCircleGoes() throws {
        let rig = try Rig.start(idleReleaseMs: 300, mode: "touchpad", extraArguments: ["--show-touches"])
        defer { rig.stop() }
        let p = rig.expectedPixel(x: 0.2, y: 0.2)
        var log = rig.daemon.logMark
        try T.fingers(rig, [0: (0.2, 0.2)])
        // The circle lives only as long as the watchdog (300 ms) and the fade (300 ms), and on a loaded
        // machine one screenshot can take longer: the finger is kept alive (a packet per screenshot)
        // until its circle is seen.
        try Screenshot.waitFor(display: rig.xvfb.display, "a circle under the finger") { shot in
            log = rig.daemon.logMark
            try? T.fingers(rig, [0: (0.2, 0.2)])
            return Self.circle(shot, at: p, Self.slot0) >= 300
        }
        // No more packets: the watchdog cancels the finger and its circle goes.
        try rig.daemon.waitForLog(containing: "phone silent", since: log, "the silence watchdog")
        try Screenshot.waitFor(display: rig.xvfb.display, "the silent finger's circle gone") {
            $0.count(near: p.x, p.y, radius: 40, Self.slot0) == 0
        }
    }

    @Test func aClickUnderACircleReachesTheWindowBelow() throws {
        var xev: ChildProcess?
        let rig = try Rig.start(mode: "touchscreen", extraArguments: ["--show-touches"], prepare: { xvfb in
            guard let path = findInPath("xev") else { throw RigError("xev is not installed (Debian: x11-utils)") }
            let child = try ChildProcess(name: "xev", executable: path,
                                         arguments: ["-display", xvfb.display, "-geometry", "600x400+0+0", "-event", "button", "-event", "structure"])
            xev = child
            guard child.stdout.waitFor(timeout: 10, { $0.text.contains("MapNotify") || $0.text.contains("ConfigureNotify") }) != nil else {
                _ = child.stop()
                throw RigError("xev did not map its window\n\(child.outputTail())")
            }
        })
        defer {
            rig.stop()
            _ = xev?.stop()
        }
        guard let xev else { return }
        // A finger at a point inside xev's window (0,0 to 600x400): the circle is drawn there first,
        // then button 1 is pressed under it.
        let p = rig.expectedPixel(x: -0.8, y: -0.8)
        #expect(p.x < 600 && p.y < 400)
        let mark = xev.stdout.count
        try rig.fingerDown(x: -0.8, y: -0.8)
        try Screenshot.waitFor(display: rig.xvfb.display, "the circle over xev's window") { Self.circle($0, at: p, Self.slot0) >= 300 }
        let press = xev.stdout.waitFor(from: mark, timeout: 20) { $0.text.contains("ButtonPress") }
        #expect(press != nil, "xev, below the overlay, got no ButtonPress\n\(xev.outputTail())")
        try T.lift(rig, [0])
        let release = xev.stdout.waitFor(from: mark, timeout: 20) { $0.text.contains("ButtonRelease") }
        #expect(release != nil, "xev got no ButtonRelease\n\(xev.outputTail())")
    }

    @Test func theLaserDotFollowsTheFingerWithoutMovingThePointer() throws {
        let rig = try Rig.start(mode: "presenter")
        defer { rig.stop() }
        let d = rig.xvfb.display
        let pointer = try rig.observer.query()
        let p = rig.expectedPixel(x: -0.4, y: 0.3)
        try T.fingers(rig, [0: (-0.4, 0.3)])
        // A long press (500 ms): the red dot appears under the finger.
        try Screenshot.waitFor(display: d, "the laser dot") { Self.circle($0, at: p, Self.laserRed) >= 100 }
        // It follows the finger with a short trail (the last 8 positions), so the start is clear again
        // after 16 moves; all of it goes when the laser is turned off.
        let q = rig.expectedPixel(x: 0.0, y: 0.3)
        for i in 1...16 { try T.fingers(rig, [0: (-0.4 + 0.025 * Double(i), 0.3)]) }
        try Screenshot.waitFor(display: d, "the laser dot moved") {
            Self.circle($0, at: q, Self.laserRed) >= 100 && $0.count(near: p.x, p.y, radius: 12, Self.laserRed) == 0
        }
        try T.lift(rig, [0])
        try T.fingers(rig, [0: (0.0, 0.3)])
        try Screenshot.waitFor(display: d, "the laser off after a second long press") {
            $0.count(near: q.x, q.y, radius: 200, Self.laserRed) == 0
        }
        try T.lift(rig, [0])
        // Whatever the lift did is in X before the barrier's handshake.
        let end = try rig.barrier("after the lift")
        let after = try rig.observer.query()
        #expect(after.x == pointer.x && after.y == pointer.y && after.buttons == 0)
        let input = rig.inputEvents(from: 0, before: end)
        #expect(input.isEmpty, "the laser moved or clicked the real pointer: \(input.map(\.text))")
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct DrawingIntegrationTests {
    typealias T = TouchpadIntegrationTests
    typealias O = OverlayIntegrationTests

    /// A stroke in progress: the slot colour halfway to white.
    static func lighter(_ c: (Int, Int, Int)) -> (Int, Int, Int) { ((c.0 + 255) / 2, (c.1 + 255) / 2, (c.2 + 255) / 2) }

    /// Points along a path, in pixels, of the wire positions (x, y) from `a` to `b`.
    static func along(_ rig: Rig, from a: (Double, Double), to b: (Double, Double), count: Int) -> [(x: Int, y: Int)] {
        (0...count).map { i in
            let f = Double(i) / Double(count)
            return rig.expectedPixel(x: a.0 + (b.0 - a.0) * f, y: a.1 + (b.1 - a.1) * f)
        }
    }

    @Test func twoFingersDrawAtOnceTheStrokesStayUntilCleared() throws {
        let rig = try Rig.start(mode: "presenter", extraArguments: ["--draw", "--show-touches"])
        defer { rig.stop() }
        let d = rig.xvfb.display
        // Two fingers draw at once: finger 1 a wave across the top half, finger 2 a diagonal below.
        let steps = 24
        func path0(_ f: Double) -> (Double, Double) { (-0.7 + 1.4 * f, -0.4 + 0.2 * sin(f * 2 * .pi)) }
        func path1(_ f: Double) -> (Double, Double) { (-0.6 + 1.0 * f, 0.2 + 0.5 * f) }
        let mark = rig.observer.mark
        for i in 0...steps {
            let f = Double(i) / Double(steps)
            try T.fingers(rig, [0: path0(f), 1: path1(f)])
        }
        // In progress: the strokes are lighter than the finished ones will be.
        let mid0 = rig.expectedPixel(x: path0(0.25).0, y: path0(0.25).1)
        let mid1 = rig.expectedPixel(x: path1(0.5).0, y: path1(0.5).1)
        try Screenshot.waitFor(display: d, "both strokes, lighter while in progress") {
            $0.count(near: mid0.x, mid0.y, radius: 4, Self.lighter(O.slot0)) >= 4
                && $0.count(near: mid1.x, mid1.y, radius: 4, Self.lighter(O.slot1)) >= 4
        }
        try T.lift(rig, [0, 1])
        // Finished: each path is covered by its slot's colour from end to end, and stays.
        let points0 = (0...steps).map { i in rig.expectedPixel(x: path0(Double(i) / Double(steps)).0, y: path0(Double(i) / Double(steps)).1) }
        let points1 = Self.along(rig, from: path1(0), to: path1(1), count: steps)
        let shot = try Screenshot.waitFor(display: d, "both strokes finished, in full colour") { shot in
            points0.allSatisfy { shot.count(near: $0.x, $0.y, radius: 2, O.slot0) >= 3 }
                && points1.allSatisfy { shot.count(near: $0.x, $0.y, radius: 2, O.slot1) >= 3 }
        }
        // Nothing drawn away from the paths (the finger circles have faded by then).
        let away = rig.expectedPixel(x: 0.6, y: -0.8)
        #expect(shot.count(near: away.x, away.y, radius: 30, O.slot0) == 0)
        #expect(try T.clicks(rig, since: mark) == [], "drawing sends no key")
        if let dir = ProcessInfo.processInfo.environment["TOUCHBRIDGE_SCREENSHOT_DIR"] {
            try shot.xwd.write(to: URL(fileURLWithPath: dir).appendingPathComponent("drawing.xwd"))
        }
        // Still there once the finger circles have faded out: wait for that (each lifted finger's circle,
        // drawn opaque without a compositor, shrinks from 28 to 14 px radius and then goes), looking at a
        // point 9 px to the side of each stroke's end, inside the circle and off the 6 px stroke.
        let end0 = points0.last!, end1 = points1.last!
        let side0 = (x: end0.x - 4, y: end0.y + 8), side1 = (x: end1.x - 2, y: end1.y + 9)
        let later = try Screenshot.waitFor(display: d, "the finger circles faded out") {
            $0.count(near: side0.x, side0.y, radius: 1, O.slot0) == 0 && $0.count(near: side1.x, side1.y, radius: 1, O.slot1) == 0
        }
        #expect(points0.allSatisfy { later.count(near: $0.x, $0.y, radius: 2, O.slot0) >= 3 }
                    && points1.allSatisfy { later.count(near: $0.x, $0.y, radius: 2, O.slot1) >= 3 },
                "the strokes should stay after the circles' fade")
        // Then a three-finger tap clears everything.
        try T.fingers(rig, [0: (-0.9, 0.9), 1: (-0.8, 0.9), 2: (-0.7, 0.9)])
        try T.lift(rig, [0, 1, 2])
        try Screenshot.waitFor(display: d, "the drawings cleared") { shot in
            points0.allSatisfy { shot.count(near: $0.x, $0.y, radius: 3, O.slot0) == 0 }
                && points1.allSatisfy { shot.count(near: $0.x, $0.y, radius: 3, O.slot1) == 0 }
        }
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct OverlayStackingTests {
    typealias T = TouchpadIntegrationTests
    typealias O = OverlayIntegrationTests

    @Test func theOverlayStaysAboveAWindowMappedAfterIt() throws {
        let rig = try Rig.start(mode: "presenter", extraArguments: ["--draw"])
        defer { rig.stop() }
        let d = rig.xvfb.display
        // A horizontal stroke through the centre of the screen.
        for i in 0...10 { try T.fingers(rig, [0: (-0.5 + 0.1 * Double(i), 0)]) }
        try T.lift(rig, [0])
        let centre = rig.expectedPixel(x: 0, y: 0)
        try Screenshot.waitFor(display: d, "the stroke") { $0.count(near: centre.x, centre.y, radius: 3, O.slot0) >= 5 }
        // A new window over the centre (xev, white): the stroke must still be seen on top of it.
        guard let path = findInPath("xev") else { throw RigError("xev is not installed (Debian: x11-utils)") }
        let xev = try ChildProcess(name: "xev", executable: path, arguments: [
            "-display", d, "-geometry", "600x300+\(centre.x - 300)+\(centre.y - 150)", "-event", "structure"])
        defer { _ = xev.stop() }
        #expect(xev.stdout.waitFor(timeout: 10) { $0.text.contains("MapNotify") } != nil, "xev did not map\n\(xev.outputTail())")
        let inside = (x: centre.x, y: centre.y - 100)  // in xev's window, off the stroke
        try Screenshot.waitFor(display: d, "xev's window mapped, the stroke above it") {
            $0.isColour(inside.x, inside.y, (255, 255, 255)) && $0.count(near: centre.x, centre.y, radius: 3, O.slot0) >= 5
        }
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct OverlayMonitorTests {
    typealias T = TouchpadIntegrationTests
    typealias O = OverlayIntegrationTests

    @Test func theOverlayFollowsTheMappedMonitor() throws {
        let rig = try Rig.start(width: 2880, height: 1200, mode: "touchscreen",
                                extraArguments: ["--monitor", "RIGHT", "--show-touches"],
                                prepare: { try X.xrandr($0, "--setmonitor", "RIGHT", "1920/508x1080/286+960+120", "none") })
        defer { rig.stop() }
        let d = rig.xvfb.display
        // The phone's centre is RIGHT's centre.
        try T.fingers(rig, [0: (0, 0)])
        try Screenshot.waitFor(display: d, "the circle at RIGHT's centre") { $0.count(near: 1920, 660, radius: 10, O.slot0) >= 300 }
        try T.lift(rig, [0])
        try Screenshot.waitFor(display: d, "the circle gone") { $0.count(near: 1920, 660, radius: 40, O.slot0) == 0 }
        // RIGHT moves to the top-left corner, outside where the overlay was: the overlay goes with it.
        let log = rig.daemon.logMark
        try X.xrandr(rig.xvfb, "--delmonitor", "RIGHT")
        try X.xrandr(rig.xvfb, "--setmonitor", "RIGHT", "800/200x600/150+0+0", "none")
        try rig.daemon.waitForLog(containing: "mapping onto monitor RIGHT 800x600+0+0", since: log, "RIGHT moved")
        try T.fingers(rig, [0: (0, 0)])
        try Screenshot.waitFor(display: d, "the circle at the moved RIGHT's centre") { $0.count(near: 400, 300, radius: 10, O.slot0) >= 300 }
        try T.lift(rig, [0])
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct OverlayCompositorTests {
    typealias T = TouchpadIntegrationTests
    typealias O = OverlayIntegrationTests

    @Test func withACompositorTheCirclesAreTranslucentAndClicksPassThrough() throws {
        var compositor: ChildProcess?
        var xev: ChildProcess?
        let rig = try Rig.start(mode: "touchscreen", extraArguments: ["--show-touches"], prepare: { xvfb in
            guard let path = findInPath("xcompmgr") else { throw RigError("xcompmgr is not installed (Debian: xcompmgr)") }
            compositor = try ChildProcess(name: "xcompmgr", executable: path, arguments: ["-d", xvfb.display, "-n"])
            // A window under the whole-monitor overlay, away from where the circle is measured.
            guard let xevPath = findInPath("xev") else { throw RigError("xev is not installed (Debian: x11-utils)") }
            let child = try ChildProcess(name: "xev", executable: xevPath,
                                         arguments: ["-display", xvfb.display, "-geometry", "400x300+0+0", "-event", "button", "-event", "structure"])
            xev = child
            guard child.stdout.waitFor(timeout: 10, { $0.text.contains("MapNotify") }) != nil else {
                throw RigError("xev did not map its window\n\(child.outputTail())")
            }
        })
        defer {
            rig.stop()
            _ = xev?.stop()
            _ = compositor?.stop()
        }
        let d = rig.xvfb.display
        let p = rig.expectedPixel(x: 0.3, y: -0.3)
        let background = try Screenshot.waitFor(display: d, "the desktop before") { _ in true }.rgb(p.x, p.y)
        // The overlay looks for a compositor when it maps (and every 60th redraw): move a finger until it
        // has seen xcompmgr.
        let deadline = Date().addingTimeInterval(10)
        var step = 0
        while rig.daemon.logLines(containing: "a compositor is running").isEmpty {
            guard Date() < deadline else { throw RigError("the overlay never saw xcompmgr\n\(rig.daemon.outputTail())") }
            step += 1
            try T.fingers(rig, [0: (0.3 + 0.001 * Double(step % 2), -0.3)])
            usleep(10_000)  // pacing the moves (the log line is waited for by the loop)
        }
        try T.lift(rig, [0])
        try Screenshot.waitFor(display: d, "the circle gone") { $0.isColour(p.x, p.y, background, tolerance: 4) }
        let mark = rig.observer.mark
        try T.fingers(rig, [0: (0.3, -0.3)])
        // The centre is the slot colour at 45 % over what was there: blended, not opaque.
        let expected = (Int(Double(O.slot0.0) * 0.45 + Double(background.0) * 0.55),
                        Int(Double(O.slot0.1) * 0.45 + Double(background.1) * 0.55),
                        Int(Double(O.slot0.2) * 0.45 + Double(background.2) * 0.55))
        let shot = try Screenshot.waitFor(display: d, "a translucent circle \(expected) over \(background)") {
            $0.isColour(p.x, p.y, expected, tolerance: 12)
        }
        #expect(!shot.isColour(p.x, p.y, O.slot0))
        try rig.waitForButton("press", 1, since: mark, "the finger's press")
        // With a compositor the overlay covers the whole monitor: a click on xev's window, while the
        // overlay is mapped, must still reach xev.
        guard let xev else { return }
        let xevMark = xev.stdout.count
        try T.fingers(rig, [0: (0.3, -0.3), 1: (-0.9, -0.9)])  // the overlay stays mapped
        try T.lift(rig, [0, 1])
        try rig.fingerDown(x: -0.9, y: -0.9, "a press over xev's window")
        #expect(xev.stdout.waitFor(from: xevMark, timeout: 20) { $0.text.contains("ButtonPress") } != nil,
                "xev, below the translucent overlay, got no ButtonPress\n\(xev.outputTail())")
        try T.lift(rig, [0])
        try Screenshot.waitFor(display: d, "the circle gone again") { $0.isColour(p.x, p.y, background, tolerance: 4) }
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct OverlayIdleTests {
    typealias T = TouchpadIntegrationTests
    typealias O = OverlayIntegrationTests

    @Test func anIdleOverlayCostsNoCPU() throws {
        let rig = try Rig.start(mode: "presenter", extraArguments: ["--show-touches", "--draw"])
        defer { rig.stop() }
        let d = rig.xvfb.display
        // A drawing that stays, and circles that fade away.
        for i in 0...10 { try T.fingers(rig, [0: (-0.5 + 0.1 * Double(i), 0.2), 1: (-0.5 + 0.1 * Double(i), 0.5)]) }
        try T.lift(rig, [0, 1])
        let end = rig.expectedPixel(x: 0.5, y: 0.5)
        // The circles gone (the stroke is 6 px wide; a circle is 28 px): only the drawing is left.
        try Screenshot.waitFor(display: d, "the circles faded") { $0.count(near: end.x + 20, end.y, radius: 3, O.slot1) == 0 }
        // The measurement window stays a sleep: what is measured is CPU time over wall time, and there is
        // no event to wait for (an idle daemon produces none). Clock ticks are 10 ms: a quiet window of 1.5 s
        // has at most one tick of noise; a redraw loop or a polling timer would use many in every window.
        // Up to three windows are measured: a last one-off timer (the release's sweep, 1 s after the lift)
        // or a loaded machine can spoil one window, but a daemon that polls is never quiet.
        var windows: [Int] = []
        for _ in 0..<3 {
            guard let before = cpuTicks(rig.daemon.pid) else { throw RigError("no /proc/\(rig.daemon.pid)/stat") }
            usleep(1_500_000)
            let after = cpuTicks(rig.daemon.pid) ?? Int.max
            windows.append(after - before)
            if after - before <= 1 { break }
        }
        // Idle, not stuck: the daemon still answers at once after the window (read after the ticks, so
        // the hello's own handling is not counted).
        try rig.barrier("after the idle window")
        #expect(windows.last.map { $0 <= 1 } ?? false, "CPU ticks in each 1.5 s window while idle with a drawing on screen: \(windows)")
    }
}
