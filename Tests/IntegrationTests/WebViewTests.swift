// The live view in a real headless Chromium (browser_driver.py) on a real Xvfb: a screen of known
// colours and windows (xsetroot's red root, xev's white window, xlogo painted solid blue) is on the
// page's canvas where it is on the screen; a tap on xev's picture reaches xev at that point; a change
// appears; a still screen sends nothing (the screen changed once more, then exactly one new frame); a
// page that leaves leaves no shared memory segment behind; `--no-view` gives no picture, and says so.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebViewTests {
    /// xev's window and xlogo's, in the screen's pixels.
    static let xevRect = (x: 200, y: 300, w: 600, h: 400)
    static let logoRect = (x: 1300, y: 600, w: 400, h: 300)

    /// Runs an X client on the rig's display until the test ends (`stop` it).
    static func client(_ program: String, _ arguments: [String], display: String, ready: String? = nil) throws -> ChildProcess {
        guard let path = findInPath(program) else { throw RigError("\(program) is not installed (Debian: x11-utils, x11-apps)") }
        let child = try ChildProcess(name: program, executable: path, arguments: ["-display", display] + arguments)
        if let ready, child.stdout.waitFor(timeout: 10, { $0.text.contains(ready) }) == nil {
            _ = child.stop()
            throw RigError("\(program) did not say \(ready)\n\(child.outputTail())")
        }
        return child
    }

    /// Runs `xsetroot -solid colour` to its end.
    static func root(_ colour: String, display: String) throws {
        let child = try client("xsetroot", ["-solid", colour], display: display)
        guard child.waitForExit(timeout: 10) == .exited(0) else { throw RigError("xsetroot failed\n\(child.outputTail())") }
    }

    /// The canvas's colour (RGB) at the screen's pixel (`x`, `y`), as JavaScript that yields [r, g, b]
    /// or null before the first frame.
    static func sample(_ x: Int, _ y: Int) -> String {
        """
        (() => { const c = document.getElementById('view'); const v = window.tbView;
          if (!c || !v || v.frames < 1) return null;
          const px = Math.floor(\(x) * v.picture[0] / v.monitor[0]), py = Math.floor(\(y) * v.picture[1] / v.monitor[1]);
          const d = c.getContext('2d').getImageData(px, py, 1, 1).data; return [d[0], d[1], d[2]]; })()
        """
    }

    /// JavaScript: whether the canvas at (`x`, `y`) is within 48 of `rgb` on each channel (JPEG).
    static func shows(_ x: Int, _ y: Int, _ rgb: (Int, Int, Int)) -> String {
        "(() => { const s = \(sample(x, y)); return !!s && Math.abs(s[0] - \(rgb.0)) < 48 && Math.abs(s[1] - \(rgb.1)) < 48 && Math.abs(s[2] - \(rgb.2)) < 48; })()"
    }

    /// Where the screen's pixel (`x`, `y`) is on the page, in CSS pixels (the canvas's rectangle).
    static func onPage(_ browser: Browser, _ x: Int, _ y: Int) throws -> (x: Double, y: Double) {
        try onPage(browser.evaluate(pictureRect), x, y)
    }

    /// The same in WebKit.
    static func onPage(_ page: WebKitPage, _ x: Int, _ y: Int) throws -> (x: Double, y: Double) {
        try onPage(page.evaluate(pictureRect), x, y)
    }

    /// JavaScript: the canvas's rectangle (CSS px) and the monitor's size.
    static let pictureRect = """
        (() => { const r = document.getElementById('view').getBoundingClientRect(); const v = window.tbView;
          return [r.left, r.top, r.width, r.height, v.monitor[0], v.monitor[1]]; })()
        """

    private static func onPage(_ rect: Any?, _ x: Int, _ y: Int) throws -> (x: Double, y: Double) {
        guard let r = rect as? [Double], r.count == 6, r[4] > 0, r[5] > 0 else {
            throw RigError("no picture on the page: \(String(describing: rect))")
        }
        return (r[0] + (Double(x) + 0.5) * r[2] / r[4], r[1] + (Double(y) + 0.5) * r[3] / r[5])
    }

    /// The last frame number the daemon logged (`view: frame N`), 0 for none.
    static func framesSent(_ rig: Rig) -> Int {
        rig.daemon.logLines(containing: "view: frame ").compactMap { line -> Int? in
            guard let r = line.range(of: "view: frame ") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }.max() ?? 0
    }

    @Test func thePictureShowsTheScreenWhereItIsAndATapLandsWhereItShows() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", extraArguments: ["--log-level", "debug"], view: true)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let d = rig.xvfb.display
        try Self.root("#ff0000", display: d)
        let x = Self.xevRect, l = Self.logoRect
        let xev = try Self.client("xev", ["-geometry", "\(x.w)x\(x.h)+\(x.x)+\(x.y)", "-event", "button", "-event", "structure"],
                                  display: d, ready: "MapNotify")
        defer { _ = xev.stop() }
        let logo = try Self.client("xlogo", ["-bg", "#0000ff", "-fg", "#0000ff", "-geometry", "\(l.w)x\(l.h)+\(l.x)+\(l.y)"], display: d)
        defer { _ = logo.stop() }

        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        try browser.wait(for: "window.tbReceived.includes('mode touchscreen')", "page told the mode")
        try rig.daemon.waitForLog(containing: "is viewing", "the log says the screen is viewed")
        // The picture: the monitor's shape, the root red, xev's window white (away from its little
        // inner window), xlogo's blue, each where it is on the screen.
        try browser.wait(for: "window.tbView.frames >= 1 && window.tbView.monitor[0] === \(rig.width) && window.tbView.monitor[1] === \(rig.height)",
                         timeout: 20, "a frame of the whole 1920x1080 monitor")
        try browser.wait(for: Self.shows(100, 100, (255, 0, 0)), timeout: 20, "the red root at (100, 100)")
        try browser.wait(for: Self.shows(x.x + 400, x.y + 250, (255, 255, 255)), timeout: 20, "xev's white window")
        try browser.wait(for: Self.shows(l.x + 200, l.y + 150, (0, 0, 255)), timeout: 20, "xlogo's blue window")
        try browser.wait(for: Self.shows(1000, 950, (255, 0, 0)), timeout: 20, "the red root below the windows")
        let picture = try browser.evaluate("window.tbView.picture") as? [Int] ?? []
        #expect(picture.count == 2 && abs(picture[0] * rig.height - picture[1] * rig.width) <= rig.width, "the picture \(picture) has the monitor's shape")
        let pageShot = ProcessInfo.processInfo.environment["TOUCHBRIDGE_UPDATE_SCREENSHOT"] != nil
        if pageShot { try browser.screenshot(to: Binaries.packageRoot + "/docs/web-view.png") }

        // A tap on xev's picture, at (500, 420) of the screen: xev gets the press there.
        let target = (x: x.x + 300, y: x.y + 120)
        let p = try Self.onPage(browser, target.x, target.y)
        let mark = xev.stdout.count
        try browser.touch("touchStart", [(x: p.x, y: p.y, id: 0)])
        try browser.touch("touchEnd", [])
        // xev: "ButtonPress event, …", then "    root 0x…, subw 0x0, time …, (X,Y), root:(X,Y),".
        guard let press = xev.stdout.waitFor(from: mark, timeout: 20, { $0.text.contains("root:(") }) else {
            Issue.record("xev got no ButtonPress\n\(xev.outputTail())\n\(rig.daemon.outputTail())")
            return
        }
        // "root:(X,Y)": where on the screen. A CSS pixel of the picture is 1920/390 ≈ 5 screen pixels.
        let numbers = press.text.split(separator: "root:(").last?.prefix { $0 != ")" }.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? []
        #expect(numbers.count == 2 && abs(numbers[0] - target.x) <= 6 && abs(numbers[1] - target.y) <= 6,
                "the tap landed at \(numbers), not near \(target)\n\(xev.outputTail())")
    }

    @Test func aStillScreenSendsNothingAndAChangeSendsOneFrame() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", extraArguments: ["--log-level", "debug"], view: true)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let d = rig.xvfb.display
        try Self.root("#ff0000", display: d)
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        try browser.wait(for: Self.shows(700, 300, (255, 0, 0)), timeout: 20, "the red screen")
        // Settled: a ping after the page's ask (two animation frames after its last frame was drawn);
        // its pong comes after any frame that ask made (one socket, in order).
        try Self.marker(browser, 900_001)
        let receivedBefore = try browser.evaluate("window.tbView.received") as? Int ?? -1
        let bytesBefore = try browser.evaluate("window.tbView.bytes") as? Int ?? -1
        // The daemon logs a frame after sending it, and its log reaches this process through a pipe: the
        // page can hold a frame whose line is still on its way. Wait for that line, then count.
        if receivedBefore >= 1 { try rig.daemon.waitForLog(containing: "view: frame \(receivedBefore) ", "the log of the page's last frame") }
        let sent = Self.framesSent(rig)
        #expect(receivedBefore == sent && sent >= 1, "the page received \(receivedBefore) frames, the daemon sent \(sent)")
        // The screen changes once: exactly one new frame, so nothing was sent while it was still.
        let mark = rig.daemon.logMark
        try Self.root("#00ff00", display: d)
        try browser.wait(for: Self.shows(700, 300, (0, 255, 0)), timeout: 20, "the green screen")
        try rig.daemon.waitForLog(containing: "view: frame \(sent + 1) ", since: mark, "the daemon's next frame")
        try Self.marker(browser, 900_002)
        #expect(Self.framesSent(rig) == sent + 1, "frames sent: \(Self.framesSent(rig)), expected \(sent + 1)")
        #expect(try browser.evaluate("window.tbView.received") as? Int == receivedBefore + 1)
        let bytes = try browser.evaluate("window.tbView.bytes") as? Int ?? -1
        #expect(bytes > bytesBefore)
    }

    /// A screen that keeps changing keeps the frames coming, each ask answered: the damage events Xlib
    /// queues while a capture waits for its image are read then, not left until something else wakes
    /// the loop (a page that asks at once after each frame, as a raw socket does, met that stall: 40
    /// frames in 120 s). Each frame is waited for with the socket's 5 s timeout.
    @Test func aChangingScreenAnswersEveryAsk() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let (code, opened) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        guard code == 101, let client = opened else { Issue.record("no socket: \(code)"); return }
        defer { client.close() }
        var pending = client.pending
        _ = WebSocketOnBridgeLoopTests.frame(from: client.socket, pending: &pending)  // hello
        try client.socket.send(WebSocketClient.frame(Array("surface 390 600".utf8), opcode: 0x1))
        _ = WebSocketOnBridgeLoopTests.frame(from: client.socket, pending: &pending)  // mode
        // The root changes colour again and again (a shell loop of xsetroot, stopped at the end).
        let loop = (0..<2000).map { "xsetroot -display \(rig.xvfb.display) -solid '#\($0 % 2 == 0 ? "ff0000" : "0000ff")'" }
        let changer = try ChildProcess(name: "changer", executable: "/bin/sh", arguments: ["-c", loop.joined(separator: "; ")])
        defer { _ = changer.stop() }
        for i in 1...150 {
            try client.socket.send(WebSocketClient.frame(Array("view 480 270".utf8), opcode: 0x1))
            var frame = WebSocketOnBridgeLoopTests.frame(from: client.socket, pending: &pending)
            while let f = frame, f.opcode != 0x2 { frame = WebSocketOnBridgeLoopTests.frame(from: client.socket, pending: &pending) }
            guard let frame else {
                Issue.record("ask \(i) of a changing screen got no frame within 5 s\n\(rig.daemon.outputTail())")
                return
            }
            #expect(frame.payload.first == 0x56)
        }
    }

    @Test func aPageThatLeavesLeavesNoSharedMemoryBehind() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", view: true)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let browser = try Browser(url: url)
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        try browser.wait(for: "window.tbView.frames >= 1", timeout: 20, "a frame")
        #expect(Self.segments(of: rig.daemon.pid) == 1, "the view's one segment while viewing:\n\(Self.ipcs())")
        #expect(try Self.markShown(rig), "the viewing mark is not on the screen")
        let mark = rig.daemon.logMark
        browser.close()
        try rig.daemon.waitForLog(containing: "viewing stopped", since: mark, "the view stops with the page")
        #expect(Self.segments(of: rig.daemon.pid) == 0, "a segment left behind:\n\(Self.ipcs())")
        #expect(try !Self.markShown(rig), "the viewing mark stayed")
    }

    /// Whether the viewing mark's window is on the screen (`xwininfo -root -tree`).
    static func markShown(_ rig: Rig) throws -> Bool {
        guard let path = findInPath("xwininfo") else { throw RigError("xwininfo is not installed (Debian: x11-utils)") }
        let child = try ChildProcess(name: "xwininfo", executable: path, arguments: ["-display", rig.xvfb.display, "-root", "-tree"])
        guard child.waitForExit(timeout: 10) == .exited(0) else { throw RigError("xwininfo failed\n\(child.outputTail())") }
        return child.stdout.snapshot().contains { $0.text.contains("\"touchbridge view mark\"") }
    }

    @Test func thePictureAndTheTouchesFollowTheMonitorWhenItChangesShape() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", extraArguments: ["--monitor", "RIGHT"], view: true)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let log = rig.daemon.logMark
        try X.xrandr(rig.xvfb, "--setmonitor", "RIGHT", "1000/250x600/150+900+100", "none")
        try rig.daemon.waitForLog(containing: "mapping onto monitor RIGHT 1000x600+900+100", since: log, "RIGHT made")
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "window.tbView.monitor[0] === 1000 && window.tbView.monitor[1] === 600", timeout: 20, "RIGHT's picture")
        // RIGHT turns tall (a monitor rotated to portrait): the next frame has its shape, the page's
        // picture and its touches follow.
        try X.xrandr(rig.xvfb, "--delmonitor", "RIGHT")
        try X.xrandr(rig.xvfb, "--setmonitor", "RIGHT", "600/150x900/225+1200+100", "none")
        try browser.wait(for: "window.tbView.monitor[0] === 600 && window.tbView.monitor[1] === 900", timeout: 20, "the tall RIGHT's picture")
        let picture = try browser.evaluate("window.tbView.picture") as? [Int] ?? []
        #expect(picture.count == 2 && picture[1] > picture[0], "the picture \(picture) is not tall")
        try browser.wait(for: "(() => { const r = document.getElementById('view').getBoundingClientRect(); return r.height > r.width; })()",
                         "the canvas laid out tall")
        let p = try Self.onPage(browser, 450, 300)
        let mark = rig.observer.mark
        try browser.touch("touchStart", [(x: p.x, y: p.y, id: 0)])
        try rig.waitForMotion(to: 1200 + 450, 100 + 300, since: mark, tolerance: 4, "the touch on the tall picture lands where it shows")
        try browser.touch("touchEnd", [])
    }

    @Test func zoomModeZoomsWithoutTouchingTheDesktopAndTheZoomedPictureIsTouchedWhereItShows() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", view: true)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "window.tbView.frames >= 1 && !document.getElementById('zoom').hidden", timeout: 20, "the picture and its Zoom button")
        let mark = rig.observer.mark
        _ = try browser.evaluate("(document.getElementById('zoom').click(), true)")
        try browser.wait(for: "document.getElementById('zoom').getAttribute('aria-pressed') === 'true'", "zoom mode on")
        // A pinch outwards about the picture's middle, then a one-finger move: the picture zooms and moves.
        let c = try Self.onPage(browser, 960, 540)
        try browser.touch("touchStart", [(x: c.x - 20, y: c.y, id: 0), (x: c.x + 20, y: c.y, id: 1)])
        for i in 1...10 {
            let d = 20 + Double(i) * 8
            try browser.touch("touchMove", [(x: c.x - d, y: c.y, id: 0), (x: c.x + d, y: c.y, id: 1)])
        }
        try browser.touch("touchEnd", [])
        try browser.touch("touchStart", [(x: c.x, y: c.y, id: 2)])
        try browser.touch("touchMove", [(x: c.x - 10, y: c.y - 5, id: 2)])
        try browser.touch("touchEnd", [])
        guard let zoom = try browser.evaluate("window.tbView.zoom") as? [Double], zoom.count == 3, zoom[0] > 2 else {
            throw RigError("the pinch did not zoom: \(String(describing: try? browser.evaluate("window.tbView.zoom")))")
        }
        _ = try browser.evaluate("(document.getElementById('zoom').click(), true)")
        try browser.wait(for: "document.getElementById('zoom').getAttribute('aria-pressed') === 'false'", "zoom mode off")
        // What must come: a tap at the middle of the part shown lands there; nothing before it did.
        let target = (x: Int((zoom[1] + 0.5 / zoom[0]) * 1920), y: Int((zoom[2] + 0.5 / zoom[0]) * 1080))
        try browser.wait(for: "(() => { const r = document.getElementById('view').getBoundingClientRect(); return r.width > 1.5 * document.getElementById('pad').getBoundingClientRect().width; })()",
                         "the zoomed canvas laid out")
        let p = try Self.onPage(browser, target.x, target.y)
        try browser.touch("touchStart", [(x: p.x, y: p.y, id: 3)])
        try rig.waitForButton("press", 1, since: mark, "the tap after zoom mode")
        try rig.waitForMotion(to: target.x, target.y, since: mark, tolerance: 3, "the tap lands where the zoomed picture shows it")
        try browser.touch("touchEnd", [])
        let presses = rig.observer.events(from: mark).filter { $0.isButton("press", 1) }
        #expect(presses.count == 1, "zoom mode's touches reached the desktop: \(presses.count) presses\n\(rig.context(since: mark))")
    }

    @Test func aPageOverTLSSeesTheScreenToo() throws {
        let fixtures = Binaries.packageRoot + "/Tests/IntegrationTests/Fixtures"
        let (rig, url, state) = try WebTouchpadTests.start(
            mode: "touchscreen", extraArguments: ["--tls-cert", fixtures + "/tls-cert.pem", "--tls-key", fixtures + "/tls-key.pem"], view: true)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        try Self.root("#ff0000", display: rig.xvfb.display)
        let browser = try Browser(url: url, flags: ["--ignore-certificate-errors"])
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected' && location.protocol === 'https:'", "page over HTTPS, socket over WSS")
        try browser.wait(for: Self.shows(700, 300, (255, 0, 0)), timeout: 20, "the red screen over WSS")
        // A change comes through too (the page pulls the next frame over the same socket).
        try Self.root("#00ff00", display: rig.xvfb.display)
        try browser.wait(for: Self.shows(700, 300, (0, 255, 0)), timeout: 20, "the green screen over WSS")
    }

    @Test func noViewGivesNoPictureAndSaysSo() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", view: false)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        try browser.wait(for: "window.tbView.none.startsWith('disabled')", "the page told there is no picture")
        #expect(try browser.evaluate("window.tbView.frames") as? Int == 0)
        #expect(try browser.evaluate("document.getElementById('viewNote').hidden") as? Bool == false, "the page says why")
        // The plain pad: a touch in its middle lands in the screen's middle.
        let pad = try WebPenTests.pad(browser)
        let m = rig.observer.mark
        try browser.touch("touchStart", [(x: pad.x + pad.width / 2, y: pad.y + pad.height / 2, id: 0)])
        try rig.waitForMotion(to: rig.width / 2, rig.height / 2, since: m, tolerance: 2, "the pad's middle is the screen's")
        try browser.touch("touchEnd", [])
    }

    /// Sends `ping n` two animation frames after now (after the ask that follows a drawn frame) and
    /// waits for its pong.
    static func marker(_ browser: Browser, _ n: Int) throws {
        _ = try browser.evaluate("(requestAnimationFrame(() => requestAnimationFrame(() => window.tb.send('ping \(n)'))), true)")
        try browser.wait(for: "window.tbReceived.includes('pong \(n)')", "the marker's pong \(n)")
    }

    /// `ipcs -m -p`: the shared memory segments whose creator is `pid`.
    static func segments(of pid: pid_t) -> Int {
        ipcs().split(separator: "\n").filter { line in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            return f.count >= 4 && Int(f[0]) != nil && f[2] == "\(pid)"
        }.count
    }

    static func ipcs() -> String {
        guard let path = findInPath("ipcs"), let child = try? ChildProcess(name: "ipcs", executable: path, arguments: ["-m", "-p"]),
              child.waitForExit(timeout: 10) != nil else { return "" }
        return child.stdout.snapshot().map(\.text).joined(separator: "\n")
    }
}
