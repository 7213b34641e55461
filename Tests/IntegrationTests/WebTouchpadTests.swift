// The web touchpad end to end: the real daemon serves its page to a real headless Chromium (phone
// viewport, touch emulation); touches dispatched with Input.dispatchTouchEvent reach Xvfb as X events.
import Foundation
import Testing

/// A TCP port free on 127.0.0.1 now (bound to port 0, read back, closed), for --http-port (0 = off).
func freeTCPPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard ok else { throw RigError("bind(127.0.0.1:0): \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}

@Suite(.serialized, .timeLimit(.minutes(3)))
struct WebTouchpadTests {
    /// A rig in touchpad mode serving the web page, with a private state directory (its own secret).
    static func start() throws -> (rig: Rig, url: String, state: String) {
        let state = NSTemporaryDirectory() + "touchbridge-web-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let port = try freeTCPPort()
        let rig = try Rig.start(mode: "touchpad", extraArguments: ["--http-port", String(port)],
                                environment: ["XDG_STATE_HOME": state])
        let pattern = #/^listening http 127\.0\.0\.1:(\d+) \(phone: open (http://\S+)\)/#
        guard let line = try? rig.daemon.listeningLine("http"),
              let match = try? pattern.prefixMatch(in: line) else {
            rig.stop()
            throw RigError("no `listening http` line with the page's address\n" + rig.daemon.outputTail())
        }
        #expect(Int(match.1) == Int(port))
        return (rig, String(match.2), state)
    }

    @Test func twoFingersOnThePageScrollTheXDisplay() throws {
        let (rig, url, state) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        // The secret in the URL is the one kept in the state directory.
        let kept = try String(contentsOfFile: state + "/touchbridge/pairing-secret", encoding: .utf8)
        #expect(url.hasSuffix("/#k=" + kept.trimmingCharacters(in: .whitespacesAndNewlines)))

        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        try browser.wait(for: "window.tbReceived.includes('mode touchpad')", "page told the mode")
        #expect(try browser.evaluate("'ontouchstart' in window") as? Bool == true, "touch emulation is off")

        // The page as a phone shows it: a 390x844 viewport at 3x is a 1170x2532 PNG; the pad, both
        // buttons and the text field lie inside the viewport, the pad taking most of it.
        // TOUCHBRIDGE_UPDATE_SCREENSHOT=1 keeps it as docs/web-touchpad.png (shown in the README).
        let shot = state + "-page.png"
        try browser.screenshot(to: shot)
        defer { try? FileManager.default.removeItem(atPath: shot) }
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.count > 24 && png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
        if png.count > 24 {
            let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == 1170 && height == 2532, "screenshot is \(width)x\(height), not 390x844 at 3x")
        }
        let layout = try browser.evaluate("""
            (() => { const inside = id => { const r = document.getElementById(id).getBoundingClientRect();
              return r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight && r.width > 40 && r.height > 30; };
              const p = document.getElementById('pad').getBoundingClientRect();
              return innerWidth === 390 && innerHeight === 844 && ['pad', 'left', 'right', 'text'].every(inside)
                && p.width * p.height > 0.5 * innerWidth * innerHeight; })()
            """) as? Bool
        #expect(layout == true, "the page does not fit a 390x844 phone screen as designed")
        if ProcessInfo.processInfo.environment["TOUCHBRIDGE_UPDATE_SCREENSHOT"] == "1" {
            try? FileManager.default.removeItem(atPath: Binaries.packageRoot + "/docs/web-touchpad.png")
            try FileManager.default.copyItem(atPath: shot, toPath: Binaries.packageRoot + "/docs/web-touchpad.png")
        }

        // Two fingers side by side move down the pad together: a two-finger scroll, wheel down (5).
        let mark = rig.observer.mark
        var points = [(x: 150.0, y: 250.0, id: 0), (x: 240.0, y: 250.0, id: 1)]
        try browser.touch("touchStart", points)
        for _ in 0..<20 {
            points = points.map { (x: $0.x, y: $0.y + 12, id: $0.id) }
            try browser.touch("touchMove", points)
            usleep(16_000)
        }
        try browser.touch("touchEnd", [])
        let wheel = rig.observer.waitFor(from: mark, timeout: 5) { $0.isButton("press", 5) }
        #expect(wheel != nil, "two fingers moving down the page should scroll down (button 5)\n\(rig.context(since: mark))")
        let events = rig.observer.events(from: mark)
        #expect(!events.contains { $0.isButton("press", 4) || $0.isButton("press", 1) },
                "a two-finger scroll down pressed button 4 or 1\n\(rig.context(since: mark))")

        // The page's right-click button: button 3 pressed and released.
        let clickMark = rig.observer.mark
        _ = try browser.evaluate("document.getElementById('right').click()")
        try rig.waitForButton("release", 3, since: clickMark, "right-click button")
    }

    @Test func aPageWithoutTheSecretIsRefused() throws {
        let (rig, url, state) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let wrong = String(url.prefix(while: { $0 != "#" })) + "#k=" + String(repeating: "0", count: 32)
        let browser = try Browser(url: wrong)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'refused'", "page without the secret refused")
        try rig.daemon.waitForLog(containing: "wrong or missing pairing secret", "refusal logged")
        // Touches on the refused page do nothing.
        let mark = rig.observer.mark
        try browser.touch("touchStart", [(x: 150, y: 250, id: 0)])
        try browser.touch("touchMove", [(x: 250, y: 350, id: 0)])
        try browser.touch("touchEnd", [])
        usleep(300_000)
        #expect(rig.observer.events(from: mark).isEmpty, "a refused page moved the pointer\n\(rig.context(since: mark))")
    }
}
