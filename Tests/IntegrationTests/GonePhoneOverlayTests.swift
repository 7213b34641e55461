// What a gone phone leaves on screen: the presenter's laser dot shows while a finger
// points and fades out after the lift (the laser stays on); on silence the laser is turned off and every
// dot and circle fades; only the drawings stay. Screenshots (xwd) of a private Xvfb, polled with a
// timeout; what must be gone is checked in a screenshot where something that must be there is seen.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct GonePhoneOverlayTests {
    typealias T = TouchpadIntegrationTests
    typealias O = OverlayIntegrationTests

    /// Red pixels of the laser (dot and trail) within 200 px of `p`.
    static func red(_ shot: Screenshot, near p: (x: Int, y: Int)) -> Int {
        shot.count(near: p.x, p.y, radius: 200, O.laserRed)
    }

    /// A long press at (x, y) turns the laser on (the daemon's trace), then a short drag to the right
    /// makes it point; returns where the dot is.
    static func point(_ rig: Rig, x: Double, y: Double) throws -> (x: Int, y: Int) {
        let log = rig.daemon.logMark
        try T.fingers(rig, [0: (x, y)])
        try rig.daemon.waitForLog(containing: "presenter: touching → longPress → pointing", since: log, "long press")
        for i in 1...4 { try T.fingers(rig, [0: (x + 0.01 * Double(i), y)]) }
        return rig.expectedPixel(x: x + 0.04, y: y)
    }

    @Test func theLaserDotShowsWhilePointingAndFadesAfterTheLift() throws {
        let rig = try Rig.start(mode: "presenter", extraArguments: ["--log-level", "debug"])
        defer { rig.stop() }
        let d = rig.xvfb.display
        let p = try Self.point(rig, x: -0.4, y: 0.3)
        try Screenshot.waitFor(display: d, "the laser dot while the finger points") { O.circle($0, at: p, O.laserRed) >= 100 }
        try T.lift(rig, [0])
        // Gone within its fade (300 ms), polled: no red left around it.
        try Screenshot.waitFor(display: d, timeout: 10, "the dot and its trail gone after the lift") { Self.red($0, near: p) == 0 }
        // The laser is still on: a finger that lands and moves shows the dot at once (no long press),
        // and the drag sends no key (with the laser off it would be a swipe: Page_Down).
        let mark = rig.observer.mark
        try T.fingers(rig, [0: (0.3, -0.2)])
        for i in 1...6 { try T.fingers(rig, [0: (0.3 - 0.1 * Double(i), -0.2)]) }
        let q = rig.expectedPixel(x: -0.3, y: -0.2)
        try Screenshot.waitFor(display: d, "the dot under the next finger") { O.circle($0, at: q, O.laserRed) >= 100 }
        try T.lift(rig, [0])
        try Screenshot.waitFor(display: d, timeout: 10, "the dot gone after the second lift") { Self.red($0, near: q) == 0 }
        #expect(try T.clicks(rig, since: mark) == [], "the laser was off after the lift: the drag was a swipe")
    }

    @Test func silenceTurnsTheLaserOffAndEveryDotAndCircleGoes() throws {
        let rig = try Rig.start(idleReleaseMs: 1500, mode: "presenter", extraArguments: ["--log-level", "debug", "--show-touches"])
        defer { rig.stop() }
        let d = rig.xvfb.display
        let pageDown = try T.keycode("Next", display: d)
        let log = rig.daemon.logMark
        let p = try Self.point(rig, x: 0.2, y: 0.1)
        try Screenshot.waitFor(display: d, "the laser dot and the finger's circle") {
            O.circle($0, at: p, O.laserRed) >= 100 && $0.count(near: p.x, p.y, radius: 40, O.slot0) >= 300
        }
        // The phone goes silent with the finger down: the watchdog releases it; dot and circle go.
        try rig.daemon.waitForLog(containing: "phone silent", since: log, "the silence watchdog")
        try Screenshot.waitFor(display: d, timeout: 10, "the dot and the circle gone after silence") {
            Self.red($0, near: p) == 0 && $0.count(near: p.x, p.y, radius: 40, O.slot0) == 0
        }
        // Laser mode ended: the phone comes back and a drag is a swipe again (Page_Down).
        let mark = rig.observer.mark
        try T.fingers(rig, [0: (0.3, 0)])
        for i in 1...6 { try T.fingers(rig, [0: (0.3 - 0.1 * Double(i), 0)]) }
        try T.lift(rig, [0])
        try T.waitForClicks(rig, since: mark, PresenterIntegrationTests.stroke(pageDown), "a swipe after silence: the laser is off")
    }

    @Test func aDrawingStaysAfterSilence() throws {
        // Silence after 5 s: the first screenshot must see the finger's circle before the watchdog ends it,
        // and on a loaded machine taking it (xwd, then reading the picture) took longer than 1.5 s once.
        let rig = try Rig.start(idleReleaseMs: 5000, mode: "presenter", extraArguments: ["--draw", "--show-touches"])
        defer { rig.stop() }
        let d = rig.xvfb.display
        let log = rig.daemon.logMark
        // One finger draws a horizontal line and rests at its end; then the phone goes silent.
        let steps = 20
        for i in 0...steps { try T.fingers(rig, [0: (-0.6 + 0.06 * Double(i), -0.5)]) }
        let points = DrawingIntegrationTests.along(rig, from: (-0.55, -0.5), to: (0.5, -0.5), count: 10)
        let end = rig.expectedPixel(x: 0.6, y: -0.5)
        try Screenshot.waitFor(display: d, "the stroke in progress and the finger's circle") { shot in
            points.allSatisfy { shot.count(near: $0.x, $0.y, radius: 3, DrawingIntegrationTests.lighter(O.slot0)) >= 3 }
                && shot.count(near: end.x, end.y - 18, radius: 6, O.slot0) >= 100
        }
        try rig.daemon.waitForLog(containing: "phone silent", since: log, "the silence watchdog")
        // The circle fades and goes; in that same screenshot the line is there, finished (full colour).
        let shot = try Screenshot.waitFor(display: d, timeout: 10, "the circle gone after silence") { shot in
            // Above the line's end: inside the circle, outside the 6 px stroke.
            shot.count(near: end.x, end.y - 18, radius: 6, O.slot0) == 0
                && points.allSatisfy { shot.count(near: $0.x, $0.y, radius: 3, DrawingIntegrationTests.lighter(O.slot0)) == 0 }
        }
        let missing = points.filter { shot.count(near: $0.x, $0.y, radius: 2, O.slot0) < 3 }
        #expect(missing.isEmpty, "the drawing did not survive the silence: no stroke at \(missing)")
    }
}
