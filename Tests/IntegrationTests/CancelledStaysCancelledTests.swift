// Cancelled stays cancelled, on a real daemon, a real Xvfb and a real WebSocket: a finger or pen the daemon
// cancelled while it was down stays cancelled through mode round trips until it ends, and a new page's
// pen starts from nothing. Absence is shown by a later middle click that must arrive: nothing the
// cancelled contact could have made may come before it.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct CancelledStaysCancelledTests {
    typealias H = WebHardeningTests

    /// A connected page on the rig's daemon: the WebSocket, its hello read.
    struct Page {
        var socket: WebSocketClient

        static func open(_ port: UInt16, _ secret: String) throws -> Page {
            let (status, opened) = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
            guard status == 101, var socket = opened else { throw RigError("upgrade answered \(status)") }
            _ = socket.receiveText()  // hello
            return Page(socket: socket)
        }

        /// Sends `line` and reads the replies until one is `answer`.
        mutating func send(_ line: String, awaiting answer: String) throws {
            try socket.send(line)
            for _ in 0..<20 {
                guard let got = socket.receiveText() else { break }
                if got == answer { return }
            }
            throw RigError("no '\(answer)' after '\(line)'")
        }

        /// The page's touch packet: slot 0 at (fx, fy) of the pad (nil: lifted), with the full state.
        func finger(_ f: (Double, Double)?) throws {
            func enc(_ v: Double) -> String {
                let b64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                let r = max(0, min(4095, Int((v * 4094).rounded())))
                return String([b64[r >> 6], b64[r & 63]])
            }
            let at = f.map { enc($0.0) + enc($0.1) } ?? "===="
            let state = at + String(repeating: "====", count: 9)
            try socket.send("{\"Touches\":\"0\(at)\",\"TouchState\":\"\(state)\",\"Orientation\":1}")
        }

        func close() { socket.close() }
    }

    /// Sends `click middle` and waits until X has seen its release: whatever was sent before it was
    /// handled. Returns the events from `mark` up to that click.
    static func marker(_ rig: Rig, _ page: Page, since mark: Int) throws -> [ObservedEvent] {
        let before = rig.observer.mark
        try page.socket.send("click middle")
        let release = try rig.waitForButton("release", 2, since: before, "the middle click sent last")
        let events = rig.observer.events(from: mark)
        return Array(events.prefix { $0.index != release.index }).filter { !$0.isButton("press", 2) }
    }

    /// A pad fraction as the page writes it (four decimals).
    static func f(_ v: Double) -> String { String(format: "%.4f", v) }

    static func presses(_ events: [ObservedEvent]) -> [ObservedEvent] {
        events.filter { $0.kind == "keypress" || $0.kind == "press" }
    }

    /// A finger down in touchscreen mode, then away to `via` and back; the same finger moves on
    /// and lifts. Nothing is pressed: it was cancelled by the first switch and has not ended.
    @Test(arguments: ["pen", "touchpad"])
    func aFingerCancelledByAModeRoundTripStaysCancelled(via: String) throws {
        let (rig, port, secret, home) = try H.start(mode: "touchscreen")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        defer { page.close() }
        var mark = rig.observer.mark
        try page.finger((0.3, 0.3))
        try rig.waitForButton("press", 1, since: mark, "the finger presses button 1")
        mark = rig.observer.mark
        try page.send("mode \(via)", awaiting: "mode \(via)")
        try rig.waitForButton("release", 1, since: mark, "the switch releases button 1")
        try page.send("mode touchscreen", awaiting: "mode touchscreen")
        mark = rig.observer.mark
        for i in 1...5 { try page.finger((0.3 + Double(i) * 0.05, 0.3)) }
        try page.finger(nil)
        let events = try Self.marker(rig, page, since: mark)
        #expect(Self.presses(events).isEmpty, "the cancelled finger pressed after touchscreen → \(via) → touchscreen\n\(rig.context(since: mark))")
        // A new touch works.
        mark = rig.observer.mark
        try page.finger((0.5, 0.5))
        try rig.waitForButton("press", 1, since: mark, "a new finger presses button 1")
        try page.finger(nil)
    }

    /// Presenter → pen → presenter with a swipe in progress; the swipe goes on and lifts: no key.
    @Test func aSwipeCancelledByAModeRoundTripSendsNoKey() throws {
        let (rig, port, secret, home) = try H.start(mode: "presenter")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        defer { page.close() }
        try page.send("surface 390 844", awaiting: "mode presenter")
        let mark = rig.observer.mark
        try page.finger((0.9, 0.5))
        try page.finger((0.8, 0.5))
        try page.send("mode pen", awaiting: "mode pen")
        try page.send("mode presenter", awaiting: "mode presenter")
        for i in 1...6 { try page.finger((0.8 - Double(i) * 0.1, 0.5)) }
        try page.finger(nil)
        let events = try Self.marker(rig, page, since: mark)
        #expect(Self.presses(events).isEmpty, "the cancelled swipe pressed after presenter → pen → presenter\n\(rig.context(since: mark))")
        // A new swipe changes the slide (what the swipe above would have done).
        let again = rig.observer.mark
        for i in 0...7 { try page.finger((0.9 - Double(i) * 0.1, 0.5)) }
        try page.finger(nil)
        #expect(rig.observer.waitFor(from: again, timeout: 20) { $0.kind == "keypress" } != nil,
                "a new swipe sent no key\n\(rig.context(since: again))")
    }

    /// The pen drawing in presenter mode, then `mode pen`: the tip still on the glass presses
    /// nothing until it is lifted; lifted to hover and down again, it presses button 1.
    @Test func aPenCancelledBySwitchingToPenModeStaysCancelledUntilLifted() throws {
        let (rig, port, secret, home) = try H.start(mode: "presenter")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        defer { page.close() }
        try page.socket.send("pen hover 0.2000 0.5000 0 0 0 0 -")
        for i in 0...4 { try page.socket.send("pen touch \(Self.f(0.2 + Double(i) * 0.05)) 0.5000 0.500 0 0 0 -") }
        try page.send("mode pen", awaiting: "mode pen")
        let mark = rig.observer.mark
        for i in 0...4 { try page.socket.send("pen touch \(Self.f(0.5 + Double(i) * 0.05)) 0.5000 0.500 0 0 0 -") }
        let events = try Self.marker(rig, page, since: mark)
        #expect(!events.contains { $0.isButton("press", 1) }, "the cancelled pen pressed button 1 in pen mode\n\(rig.context(since: mark))")
        let lifted = rig.observer.mark
        try page.socket.send("pen hover 0.7000 0.5000 0 0 0 0 -")
        try page.socket.send("pen touch 0.7000 0.5000 0.500 0 0 0 -")
        try rig.waitForButton("press", 1, since: lifted, "the pen lifted and down again")
        try page.socket.send("pen away")
        try rig.waitForButton("release", 1, since: lifted, "the pen away")
    }

    /// The pen touching in pen mode, then `mode presenter`: the tip still on the glass draws
    /// nothing; a stroke after it lifts is drawn (what must happen, and would show the first).
    @Test func aPenCancelledBySwitchingToPresenterDrawsNothingUntilLifted() throws {
        let (rig, port, secret, home) = try H.start(mode: "pen")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        defer { page.close() }
        let mark = rig.observer.mark
        try page.socket.send("pen hover 0.1000 0.3000 0 0 0 0 -")
        try page.socket.send("pen touch 0.1000 0.3000 1.000 0 0 0 -")
        try rig.waitForButton("press", 1, since: mark, "the pen presses button 1")
        try page.send("mode presenter", awaiting: "mode presenter")
        for i in 0...16 { try page.socket.send("pen touch \(Self.f(0.1 + Double(i) * 0.05)) 0.3000 1.000 0 0 0 -") }
        // Lifted, a stroke lower down is drawn.
        try page.socket.send("pen hover 0.1000 0.6000 0 0 0 0 -")
        for i in 0...16 { try page.socket.send("pen touch \(Self.f(0.1 + Double(i) * 0.05)) 0.6000 1.000 0 0 0 -") }
        try page.socket.send("pen away")
        let blue = (31, 120, 242)
        let (x, y1, y2) = (rig.width / 2, WebPenTests.pixel(0.3, size: rig.height), WebPenTests.pixel(0.6, size: rig.height))
        let shot = try Screenshot.waitFor(display: rig.xvfb.display, "the stroke after the lift drawn") {
            $0.count(near: x, y2, radius: 20, blue, tolerance: 40) > 10
        }
        #expect(shot.count(near: x, y1, radius: 20, blue, tolerance: 40) == 0,
                "the pen cancelled by the switch drew in presenter mode")
    }

    /// A page leaves with its pen down; a new page's pen starts with `touch` (no hover): it
    /// presses button 1 at once (pen mode). The new sender starts from nothing.
    @Test func aNewPagesPenStartsFresh() throws {
        let (rig, port, secret, home) = try H.start(mode: "pen")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var first = try Page.open(port, secret)
        var mark = rig.observer.mark
        try first.socket.send("pen hover 0.3000 0.3000 0 0 0 0 -")
        try first.socket.send("pen touch 0.3000 0.3000 0.500 0 0 0 -")
        try rig.waitForButton("press", 1, since: mark, "the first page's pen presses button 1")
        let log = rig.daemon.logMark
        mark = rig.observer.mark
        first.close()
        try rig.daemon.waitForLog(containing: "gone: released everything", since: log, "the first page gone")
        try rig.waitForButton("release", 1, since: mark, "the first page's pen released")
        var second = try Page.open(port, secret)
        defer { second.close() }
        mark = rig.observer.mark
        try second.socket.send("pen touch 0.6000 0.6000 0.500 0 0 0 -")
        try rig.waitForButton("press", 1, since: mark, "the new page's first pen touch presses button 1")
        try second.socket.send("pen away")
        try rig.waitForButton("release", 1, since: mark, "the new page's pen away")
        try second.send("ping 1", awaiting: "pong 1")
    }
}
