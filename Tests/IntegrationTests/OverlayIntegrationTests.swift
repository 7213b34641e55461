// The overlay on a real Xvfb (no compositor, so the bounding-shape path): screenshots taken with xwd show
// a circle of the slot's colour under each finger and nothing there once it lifts or goes silent; a click
// under a circle reaches the window below (xev); presenter mode's laser dot appears and goes.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(3)))
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
        let log = rig.daemon.logMark
        try T.fingers(rig, [0: (0.2, 0.2)])
        try Screenshot.waitFor(display: rig.xvfb.display, "a circle under the finger") { Self.circle($0, at: p, Self.slot0) >= 300 }
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
        let press = xev.stdout.waitFor(from: mark, timeout: 3) { $0.text.contains("ButtonPress") }
        #expect(press != nil, "xev, below the overlay, got no ButtonPress\n\(xev.outputTail())")
        try T.lift(rig, [0])
        let release = xev.stdout.waitFor(from: mark, timeout: 3) { $0.text.contains("ButtonRelease") }
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
        // It follows the finger, leaving a short trail that goes when the laser is turned off.
        let q = rig.expectedPixel(x: 0.0, y: 0.3)
        for i in 1...8 { try T.fingers(rig, [0: (-0.4 + 0.05 * Double(i), 0.3)]) }
        try Screenshot.waitFor(display: d, "the laser dot moved") {
            Self.circle($0, at: q, Self.laserRed) >= 100 && $0.count(near: p.x, p.y, radius: 12, Self.laserRed) == 0
        }
        try T.lift(rig, [0])
        try T.fingers(rig, [0: (0.0, 0.3)])
        try Screenshot.waitFor(display: d, "the laser off after a second long press") {
            $0.count(near: q.x, q.y, radius: 200, Self.laserRed) == 0
        }
        try T.lift(rig, [0])
        let after = try rig.observer.query()
        #expect(after.x == pointer.x && after.y == pointer.y && after.buttons == 0)
    }
}
