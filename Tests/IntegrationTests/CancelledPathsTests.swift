// Two cancelled contacts that once still acted, on a real daemon, a real Xvfb and a real
// WebSocket: a setting mid-swipe in presenter mode, and a pen held through the switch to presenter mode
// whose next report comes after a pause. Absence is shown by what must come after.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct CancelledPathsTests {
    typealias H = WebHardeningTests
    typealias Page = CancelledStaysCancelledTests.Page

    /// Presenter mode, a finger down and moving; the page sends `set speed 0.3` (a setting that changes
    /// a value: an end path in every mode); the finger moves on and lifts: no key. A new swipe then
    /// changes the slide (what the first would have done).
    @Test func aSettingMidSwipeInPresenterModeSendsNoKey() throws {
        let (rig, port, secret, home) = try H.start(mode: "presenter")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        defer { page.close() }
        try page.send("surface 390 844", awaiting: "mode presenter")
        let mark = rig.observer.mark
        try page.finger((0.9, 0.5))
        try page.finger((0.8, 0.5))
        try page.socket.send("set speed 0.3")
        for i in 1...6 { try page.finger((0.8 - Double(i) * 0.1, 0.5)) }
        try page.finger(nil)
        let events = try CancelledStaysCancelledTests.marker(rig, page, since: mark)
        #expect(CancelledStaysCancelledTests.presses(events).isEmpty,
                "the swipe cancelled by the setting pressed a key\n\(rig.context(since: mark))")
        let again = rig.observer.mark
        for i in 0...7 { try page.finger((0.9 - Double(i) * 0.1, 0.5)) }
        try page.finger(nil)
        #expect(rig.observer.waitFor(from: again, timeout: 20) { $0.kind == "keypress" } != nil,
                "a new swipe sent no key\n\(rig.context(since: again))")
    }

    /// Pen mode, the pen touching; `mode presenter`; the pen's next report comes 700 ms later (more than
    /// `--idle-release-ms`, as when the daemon is busy making the overlay window), still touching, and
    /// goes on touching with no `away`: it draws nothing. Lifted, a stroke lower down is drawn.
    @Test func aPenHeldThroughTheSwitchToPresenterDrawsNothingAfterAPause() throws {
        let (rig, port, secret, home) = try H.start(mode: "pen", extraArguments: ["--idle-release-ms", "500"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        defer { page.close() }
        let mark = rig.observer.mark
        try page.socket.send("pen hover 0.1000 0.3000 0 0 0 0 -")
        try page.socket.send("pen touch 0.1000 0.3000 1.000 0 0 0 -")
        try rig.waitForButton("press", 1, since: mark, "the pen presses button 1")
        try page.send("mode presenter", awaiting: "mode presenter")
        usleep(700_000)  // the pause: the held pen's next report comes after it
        for i in 0...16 { try page.socket.send("pen touch \(CancelledStaysCancelledTests.f(0.1 + Double(i) * 0.05)) 0.3000 1.000 0 0 0 -") }
        try page.socket.send("pen hover 0.1000 0.6000 0 0 0 0 -")
        for i in 0...16 { try page.socket.send("pen touch \(CancelledStaysCancelledTests.f(0.1 + Double(i) * 0.05)) 0.6000 1.000 0 0 0 -") }
        try page.socket.send("pen away")
        let blue = (31, 120, 242)
        let (x, y1, y2) = (rig.width / 2, WebPenTests.pixel(0.3, size: rig.height), WebPenTests.pixel(0.6, size: rig.height))
        let shot = try Screenshot.waitFor(display: rig.xvfb.display, "the stroke after the lift drawn") {
            $0.count(near: x, y2, radius: 20, blue, tolerance: 40) > 10
        }
        #expect(shot.count(near: x, y1, radius: 20, blue, tolerance: 40) == 0,
                "the pen held through the switch drew in presenter mode after a pause")
    }
}
