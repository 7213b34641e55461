// Nothing left behind, on a real daemon, a real Xvfb and a real WebSocket: a key chord with a keysym no key carries
// leaves no modifier held, and the laser dot a page showed goes with the page.
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct LeftBehindTests {
    typealias H = WebHardeningTests

    /// The keycodes pressed but not released in `events`.
    static func held(_ events: [ObservedEvent]) -> [Int: Int] {
        var held: [Int: Int] = [:]
        for e in events {
            guard let key = e.fields["key"] else { continue }
            if e.kind == "keypress" { held[key, default: 0] += 1 }
            if e.kind == "keyrelease" { held[key, default: 0] -= 1 }
        }
        return held.filter { $0.value != 0 }
    }

    /// `key ctrl+alt+0x1000041`, then the page closes: no key stays held (Ctrl and Alt were left held
    /// for the daemon's life). The page is told the chord was refused; the next chord arrives alone.
    @Test func aChordWithAKeysymNoKeyCarriesLeavesNoModifierHeld() throws {
        let (rig, port, secret, home) = try H.start(mode: "touchpad")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let mark = rig.observer.mark
        let (status, opened) = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
        guard status == 101, var page = opened else { Issue.record("upgrade answered \(status)"); return }
        _ = page.receiveText()  // hello
        try page.send("key ctrl+alt+0x1000041")
        var answer: String?
        for _ in 0..<5 {
            guard let line = page.receiveText() else { break }
            if line.hasPrefix("error ") { answer = line; break }
        }
        #expect(answer?.contains("nothing was pressed") == true, "the page hears of the refusal: \(answer ?? "nothing")")
        let log = rig.daemon.logMark
        page.close()
        try rig.daemon.waitForLog(containing: "gone: released everything", since: log, "the page gone")
        // What must happen next: a second page's plain chord arrives, pressed and released on its own.
        let (status2, opened2) = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
        guard status2 == 101, var second = opened2 else { Issue.record("second upgrade answered \(status2)"); return }
        _ = second.receiveText()
        let before = rig.observer.mark
        try second.send("key ctrl+c")
        guard rig.observer.waitFor(from: before, timeout: 5, { $0.kind == "keyrelease" && $0.fields["key"] == 37 }) != nil else {
            Issue.record("ctrl+c never arrived\n\(rig.context(since: before))")
            return
        }
        second.close()
        try rig.observer.sync()
        let events = rig.observer.events(from: mark)
        #expect(Self.held(events).isEmpty, "keys left held: \(Self.held(events))\n\(rig.context(since: mark))")
        let chordPresses = rig.observer.events(from: before).filter { $0.kind == "keypress" }.compactMap { $0.fields["key"] }
        #expect(chordPresses == [37, 54], "ctrl+c is Control and c alone (keycodes 37, 54): \(chordPresses)")
        #expect(rig.daemon.logLines(containing: "refused a key chord").count == 1, "\(rig.daemon.outputTail())")
    }
}
