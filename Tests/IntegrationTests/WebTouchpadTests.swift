// The web touchpad end to end: the real daemon serves its page to a real headless Chromium (phone
// viewport, touch emulation); touches dispatched with Input.dispatchTouchEvent reach Xvfb as X events.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebTouchpadTests {
    /// A rig in touchpad mode serving the web page, with private state, config and home directories (its
    /// own secret). The page's address with the secret is not in the daemon's output (`touchbridge pair`
    /// prints it); the test reads the secret from the state directory, as `pair` does.
    /// Without `view`, the page shows no picture (`--no-view`): the whole pad is the screen, as the
    /// tests that map the pad's fractions onto the screen expect (WebViewTests turns it on).
    static func start(mode: String = "touchpad", extraArguments: [String] = [], view: Bool = false,
                      binary: String? = nil) throws -> (rig: Rig, url: String, state: String) {
        let extraArguments = extraArguments + (view ? [] : ["--no-view"])
        let home = NSTemporaryDirectory() + "touchbridge-web-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let state = home + "/state"
        let port = try freeTCPPort()
        let rig = try Rig.start(mode: mode, extraArguments: ["--http-port", String(port)] + extraArguments,
                                environment: ["XDG_STATE_HOME": state, "XDG_CONFIG_HOME": home + "/config", "HOME": home],
                                binary: binary)
        let pattern = #/^listening http 127\.0\.0\.1:(\d+) \(phone: 'touchbridge pair' prints the page's address and QR code\)$/#
        guard let line = try? rig.daemon.listeningLine("http"),
              let match = try? pattern.wholeMatch(in: line),
              let secret = try? String(contentsOfFile: state + "/touchbridge/pairing-secret", encoding: .utf8) else {
            rig.stop()
            throw RigError("no `listening http` line, or no pairing secret kept\n" + rig.daemon.outputTail())
        }
        #expect(Int(match.1) == Int(port))
        let scheme = extraArguments.contains("--tls-cert") ? "https" : "http"
        return (rig, "\(scheme)://127.0.0.1:\(port)/#k=" + secret.trimmingCharacters(in: .whitespacesAndNewlines), home)
    }

    @Test func twoFingersOnThePageScrollTheXDisplay() throws {
        let (rig, url, state) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }

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

        // The mode switch: each button asks, the daemon answers with the mode now in use.
        for (button, mode) in [("touchscreen", "touchscreen"), ("presenter", "presenter"), ("touchpad", "touchpad")] {
            _ = try browser.evaluate("window.tbReceived.length = 0; document.querySelector('[data-mode=\(button)]').click(); true")
            try browser.wait(for: "window.tbReceived.includes('mode \(mode)') && document.querySelector('[data-mode=\(button)]').getAttribute('aria-pressed') === 'true'",
                             "mode switch to \(mode)")
            try rig.daemon.waitForLog(containing: "web page: \(mode) mode", "mode switch logged")
        }
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
        // The barrier: then the same page opens a socket with the right secret and clicks right. That
        // click must reach X, and nothing before it.
        let secret = url.components(separatedBy: "#k=").last ?? ""
        _ = try browser.evaluate("(() => { const s = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws?k=\(secret)'); s.onopen = () => s.send('click right'); return true; })()")
        let marker = try rig.waitForButton("press", 3, since: mark, "a paired socket's click after the refused page's touches")
        #expect(rig.inputEvents(from: mark, before: marker.index).isEmpty, "a refused page moved the pointer\n\(rig.context(since: mark))")
    }

    @Test func blurAndAClosedSocketReleaseWhatThePageHeld() throws {
        let (rig, url, state) = try Self.start(mode: "touchscreen")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        var browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")

        // A finger down holds button 1; the page losing focus releases it (the idle release is 10 s).
        var mark = rig.observer.mark
        try browser.touch("touchStart", [(x: 195, y: 300, id: 0)])
        try rig.waitForButton("press", 1, since: mark, "finger down on the page")
        mark = rig.observer.mark
        _ = try browser.evaluate("window.dispatchEvent(new Event('blur'))")
        try rig.waitForButton("release", 1, since: mark, "page lost focus")

        // Down again; then the browser goes away with the finger still down: the socket's end releases.
        try browser.touch("touchEnd", [])
        mark = rig.observer.mark
        try browser.touch("touchStart", [(x: 100, y: 200, id: 0)])
        try rig.waitForButton("press", 1, since: mark, "finger down again")
        mark = rig.observer.mark
        browser.close()
        try rig.waitForButton("release", 1, since: mark, "socket closed")
        try rig.daemon.waitForLog(containing: "gone: released everything", "disconnect logged")

        // Malformed messages on a connected socket: dropped, counted in the log, no X event.
        browser = try Browser(url: url)
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected again")
        mark = rig.observer.mark
        let logMark = rig.daemon.logMark
        _ = try browser.evaluate("(s => { s.send('{\"Touches\":\"0AA\"}'); s.send('{not json'); s.send('jump 3'); s.send('surface -1 x'); return true; })(tb.socket())")
        try rig.daemon.waitForLog(containing: "dropped a WebSocket message", since: logMark, "malformed messages logged")
        // The barrier: a right click on the same socket, handled after them, must reach X; nothing before it.
        _ = try browser.evaluate("tb.socket().send('click right'); true")
        let marker = try rig.waitForButton("press", 3, since: mark, "a click after the malformed messages")
        #expect(rig.inputEvents(from: mark, before: marker.index).isEmpty, "malformed messages caused X events\n\(rig.context(since: mark))")
        #expect(try browser.evaluate("document.body.dataset.state") as? String == "connected", "the socket was closed")
        #expect(rig.daemon.isRunning)
    }

    @Test func typedTextArrivesAsKeysEvenWithoutAKeyForIt() throws {
        let (rig, url, state) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        let mark = rig.observer.mark
        // "a" is on a key of the default map; "€" is on none: it goes through a spare keycode.
        _ = try browser.evaluate("""
            (() => { const t = document.getElementById('text'); t.value = 'a€';
              t.dispatchEvent(new InputEvent('input', {inputType: 'insertText', data: 'a€'})); return true; })()
            """)
        // Two presses and two releases (the observer's lock is held during a wait: count afterwards).
        let deadline = Date().addingTimeInterval(5)
        while rig.observer.events(from: mark).filter({ $0.kind == "keyrelease" }).count < 2 && Date() < deadline {
            usleep(20_000)
        }
        let keys = rig.observer.events(from: mark).filter { $0.kind == "keypress" }.compactMap { $0.fields["key"] }
        let map = try Self.keymap(display: rig.xvfb.display)
        #expect(keys.count == 2, "expected two key presses, got \(keys)")
        if keys.count == 2 {
            #expect(map[keys[0]]?.first == "a", "first key \(keys[0]) is \(map[keys[0]] ?? []), not a")
            #expect(map[keys[1]]?.first == "U20AC", "second key \(keys[1]) is \(map[keys[1]] ?? []), not U20AC (€, keysym 0x10020ac)")
        }
    }

    /// keycode → its keysym names, from `xmodmap -pke`.
    static func keymap(display: String) throws -> [Int: [String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: findInPath("xmodmap") ?? "/usr/bin/xmodmap")
        process.arguments = ["-display", display, "-pke"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var map: [Int: [String]] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let code = Int(parts[0].split(separator: " ").last ?? "") else { continue }
            map[code] = parts[1].split(separator: " ").map(String.init)
        }
        return map
    }

    @Test func wrongSecretsAreRateLimitedPerAddress() throws {
        let (rig, url, state) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let port = UInt16(url.split(separator: ":")[2].prefix(while: { $0.isNumber }))!
        let secret = String(url.split(separator: "=").last!)
        #expect(try Self.upgradeStatus(port: port, key: secret) == 101, "the right secret should open the socket")
        for _ in 0..<6 { #expect(try Self.upgradeStatus(port: port, key: "0123") != 101) }
        try rig.daemon.waitForLog(containing: "too many wrong pairing secrets", "rate limit logged")
        // The count never refuses the right secret: anyone who can reach the port could lock the owner out.
        #expect(try Self.upgradeStatus(port: port, key: secret) == 101,
                "after 6 wrong secrets in a minute, the right one is refused")
    }

    /// The HTTP status of a WebSocket upgrade request to /ws?k=<key> on 127.0.0.1:<port>.
    static func upgradeStatus(port: UInt16, key: String) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RigError("connect: \(String(cString: strerror(errno)))") }
        let request = "GET /ws?k=\(key) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 12 else { throw RigError("no HTTP answer to the upgrade") }
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        return Int(text.split(separator: " ")[1]) ?? 0
    }

    @Test func withACertificateThePageIsServedOverHTTPSAndWSS() throws {
        let fixtures = Binaries.packageRoot + "/Tests/IntegrationTests/Fixtures"
        let (rig, url, state) = try Self.start(
            mode: "touchscreen", extraArguments: ["--tls-cert", fixtures + "/tls-cert.pem", "--tls-key", fixtures + "/tls-key.pem"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        #expect(url.hasPrefix("https://127.0.0.1:"))
        // The test certificate is self-signed: Chromium is told to accept it.
        let browser = try Browser(url: url, flags: ["--ignore-certificate-errors"])
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected' && location.protocol === 'https:'", "page over HTTPS, socket over WSS")
        let mark = rig.observer.mark
        try browser.touch("touchStart", [(x: 195, y: 300, id: 0)])
        try rig.waitForButton("press", 1, since: mark, "finger down over WSS")
        try browser.touch("touchEnd", [])
        try rig.waitForButton("release", 1, since: mark, "finger up over WSS")
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct PairingQRCodeTests {
    /// In a terminal (util-linux `script` gives it one), the page's address is also printed as a QR code:
    /// a square of half-block characters; on a pipe it is not.
    @Test func theQRCodeIsPrintedOnlyToATerminal() throws {
        let xvfb = try XvfbServer.start(width: 640, height: 480)
        defer { xvfb.stop() }
        let state = NSTemporaryDirectory() + "touchbridge-qr-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let port = try freeTCPPort()
        let binary = try Binaries.touchbridge()
        let command: String = "exec '\(binary)' serve --display \(xvfb.display) --udp-port 0 --tuio-port 0"
            + " --bind 127.0.0.1 --http-port \(port) --log-level error"
        let scriptPath: String = findInPath("script") ?? "/usr/bin/script"
        let inTerminal = try ChildProcess(name: "touchbridge in script", executable: scriptPath,
                                          arguments: ["-qec", command, "/dev/null"], environment: ["XDG_STATE_HOME": state])
        defer { _ = inTerminal.stop(timeout: 3) }
        guard inTerminal.stdout.waitFor(timeout: 15, { $0.text.hasPrefix("scan with the phone's camera to open http://127.0.0.1:\(port)/#k=") }) != nil else {
            Issue.record("no QR code heading in a terminal\n\(inTerminal.outputTail())")
            return
        }
        // A version 3 or 4 code (29 or 33 modules) plus a 2-module quiet zone: rows of 33 or 37 characters.
        let deadline = Date().addingTimeInterval(5)
        var rows: [String] = []
        repeat {
            rows = inTerminal.stdout.snapshot().map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines.subtracting(.init(charactersIn: " "))) }
                .filter { !$0.isEmpty && $0.allSatisfy { "█▀▄ ".contains($0) } }
            usleep(50_000)
        } while rows.count < 17 && Date() < deadline
        let width = rows.first?.count ?? 0
        #expect(rows.count >= 16 && rows.allSatisfy { $0.count == width } && abs(width - 2 * rows.count) <= 2,
                "the QR code is not a square of half blocks: \(rows.count) rows of \(rows.map(\.count))")
        #expect(rows.first.map { $0.allSatisfy { $0 == "█" } } == true, "the quiet zone is missing")

        // On a pipe (the rig's daemons, a service's journal): no QR code.
        let rig = try Rig.start(extraArguments: ["--http-port", String(try freeTCPPort())], environment: ["XDG_STATE_HOME": state])
        defer { rig.stop() }
        _ = try rig.daemon.listeningLine("http")
        #expect(rig.daemon.logLines(containing: "scan with").isEmpty && rig.daemon.logLines(containing: "█").isEmpty)
    }
}
