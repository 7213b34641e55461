// A borrowed keycode given back, and a start after a crash: typing "€" from the web page maps
// a spare keycode; the page's going gives it back (and so does SIGTERM), and after a SIGKILL (button 1
// held, keycode remapped) the next start releases the button and restores the keycode. The keymap is read with `xmodmap -pke`; the
// button with xobserve. Real daemon, real Chromium, private Xvfb.
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct KeymapRestoreTests {
    typealias W = WebTouchpadTests

    /// Types `text` into the page's text field and waits until X has seen `releases` key releases.
    static func type(_ text: String, on browser: Browser, rig: Rig, releases: Int) throws {
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        let mark = rig.observer.mark
        _ = try browser.evaluate("""
            (() => { const t = document.getElementById('text'); t.value = '\(text)';
              t.dispatchEvent(new InputEvent('input', {inputType: 'insertText', data: '\(text)'})); return true; })()
            """)
        let deadline = Date().addingTimeInterval(5)
        while rig.observer.events(from: mark).filter({ $0.kind == "keyrelease" }).count < releases && Date() < deadline {
            usleep(20_000)
        }
        let seen = rig.observer.events(from: mark).filter { $0.kind == "keyrelease" }.count
        if seen < releases { throw RigError("typing \(text): \(seen) key releases, not \(releases)\n" + rig.context(since: mark)) }
    }

    /// The keycodes whose keysyms differ between two `xmodmap -pke` maps, as "code: before → after".
    static func differences(_ a: [Int: [String]], _ b: [Int: [String]]) -> [String] {
        Set(a.keys).union(b.keys).sorted().compactMap { code in
            a[code] == b[code] ? nil : "\(code): \(a[code] ?? []) → \(b[code] ?? [])"
        }
    }

    @Test func thePagesGoingGivesBackTheKeycodeItsTypingBorrowed() throws {
        let (rig, url, state) = try W.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let display = rig.xvfb.display
        let before = try W.keymap(display: display)
        let browser = try Browser(url: url)
        try Self.type("€", on: browser, rig: rig, releases: 1)
        let typed = Self.differences(before, try W.keymap(display: display))
        #expect(typed.count == 1 && typed.first?.contains("U20AC") == true, "typing € remapped: \(typed)")
        // The page goes: what its typing borrowed is given back at once, not at exit.
        let log = rig.daemon.logMark
        browser.close()
        try rig.daemon.waitForLog(containing: "gone: released everything", since: log, "the page gone")
        try rig.observer.sync()
        let whenGone = Self.differences(before, try W.keymap(display: display))
        #expect(whenGone.isEmpty, "the keycode is still borrowed once the page is gone: \(whenGone)")

        let status = rig.daemon.terminate(timeout: 10, signal: SIGTERM)
        #expect(status != nil, "no exit on SIGTERM\n\(rig.daemon.outputTail())")
        let after = Self.differences(before, try W.keymap(display: display))
        #expect(after.isEmpty, "the keymap after SIGTERM differs from before: \(after)\n\(rig.daemon.outputTail())")
    }

    @Test func afterSIGKILLTheNextStartReleasesButtonOneAndRestoresTheKeycode() throws {
        let (rig, url, state) = try W.start(mode: "touchscreen")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let display = rig.xvfb.display
        let before = try W.keymap(display: display)
        // The page types "€", then a finger rests on its pad (a touchscreen finger: button 1 down).
        let browser = try Browser(url: url)
        defer { browser.close() }
        try Self.type("€", on: browser, rig: rig, releases: 1)
        guard let pad = try browser.evaluate("""
            (() => { const r = document.getElementById('pad').getBoundingClientRect();
              return [r.left + r.width / 2, r.top + r.height / 2]; })()
            """) as? [Double], pad.count == 2 else {
            Issue.record("no pad on the page")
            return
        }
        let pressed = rig.observer.mark
        try browser.touch("touchStart", [(x: pad[0], y: pad[1], id: 0)])
        try rig.waitForButton("press", 1, since: pressed, "the page's finger presses button 1")

        // SIGKILL: nothing can clean up; the button stays held and the keycode mapped.
        _ = rig.daemon.terminate(timeout: 5, signal: SIGKILL)
        try rig.observer.sync()
        #expect(try rig.observer.query().buttonOneHeld, "button 1 was not held after SIGKILL: nothing to test")
        let left = Self.differences(before, try W.keymap(display: display))
        #expect(left.count == 1, "the keycode was not left remapped after SIGKILL: \(left)")

        // A fresh start on the same X server undoes both before it listens.
        let mark = rig.observer.mark
        let home = state + "/home"
        let second = try Daemon.start(
            display: display, idleReleaseMs: 10_000, mode: "touchscreen",
            environment: ["XDG_STATE_HOME": state, "XDG_CONFIG_HOME": home + "/.config", "HOME": home])
        defer { _ = second.terminate() }
        try rig.waitForButton("release", 1, since: mark, timeout: 10, "the next start releases button 1")
        try rig.observer.sync()
        #expect(try rig.observer.query().buttons == 0)
        let after = Self.differences(before, try W.keymap(display: display))
        #expect(after.isEmpty, "the keymap after the next start differs from before: \(after)\n\(second.outputTail())")
        try second.waitForLog(containing: "undid what an earlier run left", "the log line undid what an earlier run left")
        // And it still works: a finger down presses button 1 again.
        let sender = try PoseAISender(port: second.port, host: second.host)
        let again = rig.observer.mark
        try sender.send(touches: [.at(slot: 0, x: 0.2, y: 0.2)], state: [0: .at(x: 0.2, y: 0.2)])
        try rig.waitForButton("press", 1, since: again, "a finger down after the recovery")
        try sender.send(touches: [.ended(slot: 0)], state: [:])
        try rig.waitForButton("release", 1, since: again, "its lift")
    }
}
