// The LibreOffice Impress client end to end with a server of the test's own on 127.0.0.1 (the real
// daemon on a private Xvfb, a raw WebSocket page, `--debug-impress-port`): what Impress's remote server
// says, byte for byte, is what the test writes, so every path is reached on demand (pairing, the PIN
// dialog, a show, Impress gone and back, a server that is not Impress). The tests with a real soffice
// are ImpressTests.
import Foundation
import Glibc
import Testing

/// A TCP server on 127.0.0.1 playing Impress's remote server: accepts one client at a time, blocking,
/// every call within `timeout` seconds.
final class FakeImpressServer {
    let fd: Int32
    let port: UInt16

    init(timeout: Int = 10) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else {
            _ = Glibc.close(fd)
            throw RigError("bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// The next client (the daemon), within the timeout.
    func accept() throws -> LoopbackSocket {
        let client = Glibc.accept(fd, nil, nil)
        guard client >= 0 else { throw RigError("no connection to the fake Impress: \(String(cString: strerror(errno)))") }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return LoopbackSocket(fd: client)
    }

    func close() { _ = Glibc.close(fd) }
}

extension LoopbackSocket {
    /// Reads one message of Impress's protocol (lines up to an empty line), as its lines.
    func readMessage(_ pending: inout [UInt8]) throws -> [String] {
        while true {
            if let end = (0..<max(0, pending.count - 1)).first(where: { pending[$0] == 10 && pending[$0 + 1] == 10 }) {
                let text = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 2)
                return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { throw RigError("the daemon sent no whole message (\(n == 0 ? "closed" : String(cString: strerror(errno))))") }
            pending += buffer[0..<n]
        }
    }

    func sendLines(_ lines: String...) throws { try send(Array((lines.joined(separator: "\n") + "\n\n").utf8)) }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct ImpressLinkTests {
    typealias H = WebHardeningTests
    typealias Page = CancelledStaysCancelledTests.Page

    /// A PNG's signature and a few bytes, in base64 (the daemon checks the signature, not the image).
    static let pngBase64 = "iVBORw0KGgoAAAANSUhEUg=="

    /// Reads the page's messages until one satisfies `match` (within `timeout` s: Impress under load may
    /// take seconds to start a show); the ones before it are returned too.
    static func read(_ page: inout Page, timeout: Double = 60, until match: (String) -> Bool, _ what: String) throws -> [String] {
        var seen: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, seen.count < 500 {
            // Nil: the socket's own time-out (5 s) passed, or it closed (then the deadline ends the wait). A
            // ping then keeps the page from being closed as silent (10 s without a frame) on a slow machine.
            guard let got = page.socket.receiveText() else {
                try? page.socket.send("ping 0")
                continue
            }
            seen.append(got)
            if match(got) { return seen }
        }
        throw RigError("the page never got \(what); it got \(seen.map { $0.prefix(80) })")
    }

    static func start(_ server: FakeImpressServer, pin: String = "0427") throws -> (Rig, UInt16, String, String) {
        try H.start(mode: "touchpad", extraArguments: ["--debug-impress-port", String(server.port), "--impress-pin", pin])
    }

    /// A page in presenter mode pairs touchbridge with Impress; the show, its pictures and notes reach the
    /// page; Next, Previous, Start show and the list go to Impress, not as keys; Impress closing puts
    /// the buttons back on keys at once.
    @Test func thePresenterPanelDrivesImpressAndFallsBackToKeysWhenItGoes() throws {
        let server = try FakeImpressServer()
        defer { server.close() }
        let (rig, port, secret, home) = try Self.start(server)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        try page.send("surface 390 700", awaiting: "mode touchpad")
        // Not in presenter mode: the daemon does not look for Impress. The page's first message of
        // presenter mode is `impress off` (nothing there yet: the attempt comes with the switch).
        try page.send("mode presenter", awaiting: "mode presenter")

        let impress = try server.accept()
        var pending: [UInt8] = []
        #expect(try impress.readMessage(&pending) == ["LO_SERVER_CLIENT_PAIR", "touchbridge", "0427"])
        try impress.sendLines("LO_SERVER_SERVER_PAIRED")
        try impress.sendLines("LO_SERVER_INFO", "7.4.7.2")
        _ = try Self.read(&page, until: { $0 == "impress on" }, "impress on")

        // Start show goes to Impress as presentation_start.
        try page.socket.send("slide start")
        #expect(try impress.readMessage(&pending) == ["presentation_start"])
        try impress.sendLines("slideshow_started", "3", "0")
        try impress.sendLines("slide_preview", "0", Self.pngBase64)
        try impress.sendLines("slide_notes", "0", "<html><body>Hello <b>there</b><br/>second &amp; last<script>x</script></body></html>")
        try impress.sendLines("slide_preview", "1", Self.pngBase64)
        let shown = try Self.read(&page, until: { $0.hasPrefix("impress preview 1 ") }, "slide 1's preview")
        #expect(shown.contains("impress show 3 0"))
        #expect(shown.contains("impress preview 0 \(Self.pngBase64)"))
        #expect(shown.contains("impress notes 0 Hello there\nsecond & lastx"))

        // Next and Previous go as transitions; the list's slide as goto_slide.
        try page.socket.send("slide next")
        #expect(try impress.readMessage(&pending) == ["transition_next"])
        try impress.sendLines("slide_updated", "1")
        _ = try Self.read(&page, until: { $0 == "impress show 3 1" }, "slide 2 of 3")
        try page.socket.send("slide previous")
        #expect(try impress.readMessage(&pending) == ["transition_previous"])
        try page.socket.send("slide goto 2")
        #expect(try impress.readMessage(&pending) == ["goto_slide", "2"])

        // Impress closes: the page hears `impress off`, and Next is a key again (Page_Down on X).
        impress.close()
        _ = try Self.read(&page, until: { $0 == "impress off" }, "impress off")
        let pageDown = try TouchpadIntegrationTests.keycode("Next", display: rig.xvfb.display)
        let mark = rig.observer.mark
        try page.socket.send("slide next")
        try TouchpadIntegrationTests.waitForClicks(rig, since: mark, PresenterIntegrationTests.stroke(pageDown), "Next as a key once Impress is gone")

        // Impress comes back: touchbridge connects again by itself (a second after its last attempt).
        let again = try server.accept()
        var pending2: [UInt8] = []
        #expect(try again.readMessage(&pending2) == ["LO_SERVER_CLIENT_PAIR", "touchbridge", "0427"])
        try again.sendLines("LO_SERVER_SERVER_PAIRED")
        _ = try Self.read(&page, until: { $0 == "impress on" }, "impress on again")
        try page.socket.send("slide next")
        #expect(try again.readMessage(&pending2) == ["transition_next"])

        // The page leaves presenter mode: the connection is closed (nothing kept open for no one).
        try page.send("mode touchpad", awaiting: "mode touchpad")
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(recv(again.fd, &buffer, buffer.count, 0) == 0, "the daemon kept the connection to Impress")
        again.close()
        page.close()
    }

    /// Impress asks for the PIN (its dialog): the page is told the PIN; once paired, it drives Impress.
    @Test func thePageShowsThePinWhileImpressWaitsForIt() throws {
        let server = try FakeImpressServer()
        defer { server.close() }
        let (rig, port, secret, home) = try Self.start(server, pin: "0042")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        try page.send("mode presenter", awaiting: "mode presenter")
        let impress = try server.accept()
        defer { impress.close() }
        var pending: [UInt8] = []
        #expect(try impress.readMessage(&pending) == ["LO_SERVER_CLIENT_PAIR", "touchbridge", "0042"])
        try impress.sendLines("LO_SERVER_VALIDATING_PIN")
        _ = try Self.read(&page, until: { $0 == "impress pin 0042" }, "the PIN")
        try impress.sendLines("LO_SERVER_SERVER_PAIRED")
        _ = try Self.read(&page, until: { $0 == "impress on" }, "impress on")
        page.close()
    }

    /// A server on the port that is not Impress is closed at its first answer, and nothing goes to it;
    /// the page's buttons stay keys.
    @Test func aServerThatIsNotImpressIsClosed() throws {
        let server = try FakeImpressServer()
        defer { server.close() }
        let (rig, port, secret, home) = try Self.start(server)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var page = try Page.open(port, secret)
        try page.send("mode presenter", awaiting: "mode presenter")
        let other = try server.accept()
        defer { other.close() }
        var pending: [UInt8] = []
        _ = try other.readMessage(&pending)
        let log = rig.daemon.logMark
        try other.send(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n\n".utf8))
        _ = try rig.daemon.waitForLog(containing: "is not LibreOffice Impress", since: log, "the refusal")
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(recv(other.fd, &buffer, buffer.count, 0) == 0, "the daemon kept the connection to a server that is not Impress")
        let pageDown = try TouchpadIntegrationTests.keycode("Next", display: rig.xvfb.display)
        let mark = rig.observer.mark
        try page.socket.send("slide next")
        try TouchpadIntegrationTests.waitForClicks(rig, since: mark, PresenterIntegrationTests.stroke(pageDown), "Next as a key")
        page.close()
    }
}

/// The page's presenter view in a real headless Chromium (the page's own JavaScript), with the test's
/// Impress server: the slide number, the pictures, the notes as text, the buttons and the list through
/// the protocol, and the fall back when Impress goes.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ImpressPageTests {
    typealias L = ImpressLinkTests

    @Test func thePresenterViewShowsImpressAndItsButtonsDriveIt() throws {
        let server = try FakeImpressServer()
        defer { server.close() }
        let (rig, browser, state, _) = try WebRemoteTests.open(
            mode: "touchpad", extraArguments: ["--debug-impress-port", String(server.port), "--impress-pin", "0427"], view: true)
        defer { browser.close(); rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        try WebRemoteTests.press(browser, "[data-mode=presenter]")
        let impress = try server.accept()
        defer { impress.close() }
        var pending: [UInt8] = []
        _ = try impress.readMessage(&pending)
        try browser.wait(for: "document.getElementById('impressNote').textContent.includes('no preview without LibreOffice Impress')", "the page says why there is no preview")
        // A phone's screen, the screen's picture shown on the pad before the slides come.
        try browser.viewport(width: 390, height: 844)
        try browser.wait(for: "window.tbView.frames > 0", "the screen's picture on the pad")
        try impress.sendLines("LO_SERVER_SERVER_PAIRED")
        try impress.sendLines("slideshow_started", "3", "0")
        try impress.sendLines("slide_preview", "0", L.pngBase64)
        try impress.sendLines("slide_preview", "1", L.pngBase64)
        try impress.sendLines("slide_notes", "0", "<html><body>Say <b>hello</b> &amp; smile<br/><img src=x onerror=\"document.title='owned'\">next</body></html>")
        try browser.wait(for: "document.getElementById('slideCount').textContent === '1 of 3'", "1 of 3")
        try browser.wait(for: "document.getElementById('slideNow').src.startsWith('data:image/png;base64,') && document.getElementById('slideNext').src.startsWith('data:image/png;base64,')", "the current and next pictures")
        try browser.wait(for: "document.getElementById('notes').textContent === 'Say hello & smile\\nnext'", "the notes as text")
        #expect(try browser.evaluate("document.getElementById('notes').children.length") as? Int == 0, "markup in the notes")
        // The pad, which shows the screen in Slides mode, shrank as the slides and notes came: the picture
        // follows it (placed where touches map: the monitor's shape, as large as fits, centred).
        try browser.wait(for: """
            (() => { const p = document.getElementById('pad').getBoundingClientRect(), c = document.getElementById('view').getBoundingClientRect();
              const [mw, mh] = window.tbView.monitor, k = Math.min(p.width / mw, p.height / mh);
              return Math.abs(c.width - mw * k) < 2 && Math.abs(c.height - mh * k) < 2
                && Math.abs(c.left - (p.left + (p.width - mw * k) / 2)) < 2 && Math.abs(c.top - (p.top + (p.height - mh * k) / 2)) < 2; })()
            """, "the picture placed in the pad as it is now")
        #expect(try browser.evaluate("document.title") as? String != "owned")
        #expect(try browser.evaluate("document.querySelectorAll('#slideList button').length") as? Int == 3)

        try WebRemoteTests.press(browser, "#next")
        #expect(try impress.readMessage(&pending) == ["transition_next"])
        try WebRemoteTests.press(browser, "#slideList button[data-slide='2']")
        #expect(try impress.readMessage(&pending) == ["goto_slide", "2"])
        try impress.sendLines("slide_updated", "2")
        try browser.wait(for: "document.getElementById('slideCount').textContent === '3 of 3'", "3 of 3")
        try browser.viewport(width: 390, height: 844)
        try? browser.screenshot(to: NSTemporaryDirectory() + "touchbridge-presenter-portrait.png")

        // Impress goes: the view says why it is empty, and Next presses the key again.
        impress.close()
        try browser.wait(for: "document.getElementById('impressNote').textContent.includes('no preview without LibreOffice Impress') && document.getElementById('slideCount').textContent === ''", "the view emptied")
        let pageDown = try TouchpadIntegrationTests.keycode("Next", display: rig.xvfb.display)
        let mark = rig.observer.mark
        try WebRemoteTests.press(browser, "#next")
        try TouchpadIntegrationTests.waitForClicks(rig, since: mark, PresenterIntegrationTests.stroke(pageDown), "Next as a key once Impress is gone")
    }
}
