// A plain page's WebSocket, read and written on the Bridge's own loop once upgraded
// (BridgeWebSocket.swift), against the real daemon on Xvfb: its messages wake no NIO thread, it answers
// as RFC 6455 says, a broken frame ends it and releases what it held, and it keeps its place in the
// connection table until it ends.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(5)))
struct WebSocketOnBridgeLoopTests {
    /// Context switches of the daemon's threads whose name starts with `prefix`, summed.
    static func switches(_ pid: pid_t, threadsNamed prefix: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var total = 0
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8),
                  name.hasPrefix(prefix),
                  let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
                total += Int(line.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? 0
            }
        }
        return total
    }

    static func move(_ x: Int, _ y: Int) -> String {
        PoseAIText.packet(touches: PoseAIText.touches([.raw(slot: 0, x: x, y: y)]), touchState: PoseAIText.touchState([0: .raw(x: x, y: y)]))
    }

    /// The next frame the server sends (opcode, payload), within the socket's time-out; nil when closed.
    static func frame(from socket: LoopbackSocket, pending: inout [UInt8]) -> (opcode: UInt8, payload: [UInt8])? {
        while true {
            if pending.count >= 2 {
                var size = Int(pending[1] & 0x7f), offset = 2
                if size == 126, pending.count >= 4 { size = Int(pending[2]) << 8 | Int(pending[3]); offset = 4 }
                if (pending[1] & 0x7f) < 126 || pending.count >= 4, pending.count >= offset + size {
                    let frame = (pending[0] & 0x0f, Array(pending[offset..<offset + size]))
                    pending.removeFirst(offset + size)
                    return frame
                }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(socket.fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            pending += buffer[0..<n]
        }
    }

    /// A page's moves, each waited for at X, wake the daemon's NIO threads (the web server's loop and
    /// Swift concurrency's) less than once in ten: the Bridge's loop reads them. Read on the server's
    /// loop, as before, every message woke it.
    @Test func aPlainPagesMessagesWakeNoNIOThread() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let (code, opened) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        guard code == 101, var client = opened else { Issue.record("no socket: \(code)"); return }
        defer { client.close() }
        #expect(client.receiveText() == "hello touchbridge")
        var mark = rig.observer.mark
        try client.send(Self.move(200, 200))
        try rig.waitForButton("press", 1, since: mark, "finger down")
        let before = Self.switches(rig.daemon.pid, threadsNamed: "NIO-")
        let moves = 100
        for i in 1...moves {
            let (x, y) = (300 + 17 * i, 400 + 9 * i)
            mark = rig.observer.mark
            try client.send(Self.move(x, y))
            try rig.waitForMotion(to: Rig.expectedPixel(raw: x, size: rig.width), Rig.expectedPixel(raw: y, size: rig.height),
                                  since: mark, "move \(i)")
            usleep(5_000)  // past the page's move pacing (4 ms)
        }
        let woken = Self.switches(rig.daemon.pid, threadsNamed: "NIO-") - before
        print("NIO threads' wake-ups over \(moves) page messages: \(woken)")
        #expect(woken < moves / 10, "the NIO threads woke \(woken) times for \(moves) messages")
        mark = rig.observer.mark
        try client.send(PoseAIText.packet(touches: PoseAIText.touches([.ended(slot: 0)]), touchState: PoseAIText.touchState([:])))
        try rig.waitForButton("release", 1, since: mark, "the lift")
    }

    /// A ping gets its pong, a page's close its close (the code echoed); a fragmented message is dropped
    /// and counted; a frame with a reserved bit gets close 1002, a counted log line, and the finger it held is lifted; a frame over 64 KiB gets
    /// close 1009 and a line that says the socket was closed.
    @Test func aPlainPageIsAnsweredAsRFC6455Says() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }

        let (code, opened) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        guard code == 101, let client = opened else { Issue.record("no socket: \(code)"); return }
        defer { client.close() }
        var pending = client.pending
        #expect(Self.frame(from: client.socket, pending: &pending).map { String(decoding: $0.payload, as: UTF8.self) } == "hello touchbridge")
        try client.socket.send(WebSocketClient.frame(Array("abc".utf8), opcode: 0x9))
        let pong = Self.frame(from: client.socket, pending: &pending)
        #expect(pong?.opcode == 0xA && pong?.payload == Array("abc".utf8), "no pong for the ping: \(String(describing: pong))")
        try client.socket.send(WebSocketClient.frame([0x0F, 0xA0], opcode: 0x8))  // close, code 4000
        let close = Self.frame(from: client.socket, pending: &pending)
        #expect(close?.opcode == 0x8 && close?.payload == [0x0F, 0xA0], "no close echoed: \(String(describing: close))")
        #expect(Self.frame(from: client.socket, pending: &pending) == nil, "the socket stayed open after the close")
        _ = try rig.daemon.waitForLog(containing: "web page disconnected", "the page's end after its close")

        let (code2, opened2) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        guard code2 == 101, let second = opened2 else { Issue.record("no second socket: \(code2)"); return }
        defer { second.close() }
        pending = []
        _ = Self.frame(from: second.socket, pending: &pending)  // the greeting
        let mark = rig.observer.mark
        let fragmentMark = rig.daemon.logMark
        // A fragmented message (a text frame without FIN, then its continuation): dropped and counted.
        var fragment = WebSocketClient.frame("text a")
        fragment[0] &= 0x7F
        try second.socket.send(fragment + WebSocketClient.frame(Array("b".utf8), opcode: 0x0))
        try second.send(Self.move(500, 500))
        try rig.waitForButton("press", 1, since: mark, "finger down")
        let fragmentLine = try rig.daemon.waitForLog(containing: "a fragmented message", since: fragmentMark, "the fragment's log line")
        #expect(fragmentLine.contains("dropped a WebSocket message"), "\(fragmentLine)")
        let logMark = rig.daemon.logMark
        var bad = WebSocketClient.frame(Self.move(600, 600))
        bad[0] |= 0x40  // RSV1, with no extension agreed
        try second.socket.send(bad)
        let refused = Self.frame(from: second.socket, pending: &pending)
        #expect(refused?.opcode == 0x8 && refused?.payload == [0x03, 0xEA], "no close 1002: \(String(describing: refused))")
        try rig.waitForButton("release", 1, since: mark, "the finger held by the refused page, released")
        let line = try rig.daemon.waitForLog(containing: "dropped a WebSocket message", since: logMark, "the refusal's log line")
        #expect(line.contains("reserved bits"), "the log line does not say why: \(line)")

        // A frame announced larger than 64 KiB: close 1009 before its payload, and the line says so.
        let (code3, opened3) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        guard code3 == 101, let third = opened3 else { Issue.record("no third socket: \(code3)"); return }
        defer { third.close() }
        pending = []
        _ = Self.frame(from: third.socket, pending: &pending)  // the greeting
        let bigMark = rig.daemon.logMark
        try third.socket.send([0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70, 1, 2, 3, 4])  // 70,000 bytes
        let tooBig = Self.frame(from: third.socket, pending: &pending)
        #expect(tooBig?.opcode == 0x8 && tooBig?.payload == [0x03, 0xF1], "no close 1009: \(String(describing: tooBig))")
        let bigLine = try rig.daemon.waitForLog(containing: "larger than 64 KiB (the socket was closed)", since: bigMark, "the oversized frame's log line")
        #expect(bigLine.contains("dropped a WebSocket message"), "\(bigLine)")
    }

    /// A TLS page's socket gets the same answers from the same reader, driven in the channel's pipeline:
    /// a pong, the close echoed, a fragmented message dropped and counted, a frame with a reserved bit
    /// close 1002 (and the finger it held released), a frame over 64 KiB close 1009 (Python's `ssl`
    /// speaks the frames, Support/wss_rfc6455.py).
    @Test func aTLSPageIsAnsweredAsAPlainOneIs() throws {
        let fixtures = Binaries.packageRoot + "/Tests/IntegrationTests/Fixtures"
        let (rig, port, secret, home) = try WebHardeningTests.start(
            extraArguments: ["--tls-cert", fixtures + "/tls-cert.pem", "--tls-key", fixtures + "/tls-key.pem"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let mark = rig.observer.mark, logMark = rig.daemon.logMark
        let client = try ChildProcess(name: "wss_rfc6455.py", executable: "/usr/bin/python3",
                                      arguments: [Binaries.packageRoot + "/Tests/IntegrationTests/Support/wss_rfc6455.py",
                                                  String(port), secret, Self.move(500, 500)])
        defer { _ = client.stop() }
        guard client.stdout.waitFor(timeout: 30, { $0.text == "done" }) != nil else {
            Issue.record("the TLS client did not finish: \(client.outputTail())")
            return
        }
        let answers = client.stdout.snapshot().map(\.text)
        #expect(answers == ["pong 10 616263", "close 8 0fa0", "after-close none", "refused 8 03ea", "too-big 8 03f1", "done"],
                "\(answers)")
        try rig.waitForButton("press", 1, since: mark, "the move before the refused frame")
        try rig.waitForButton("release", 1, since: mark, "the finger held by the refused page, released")
        for (words, what) in [("a fragmented message", "the fragment"), ("reserved bits", "the reserved bit"),
                              ("larger than 64 KiB (the socket was closed)", "the oversized frame")] {
            let line = try rig.daemon.waitForLog(containing: words, since: logMark, what)
            #expect(line.contains("dropped a WebSocket message"), "\(line)")
        }
    }

    /// A page read on the Bridge's loop keeps its place in the connection table until its socket ends:
    /// four pages from one address are its most, so a fifth is refused (403) while they are heard from;
    /// when one page goes, a new page gets in.
    @Test func aPlainPageKeepsItsPlaceInTheConnectionTable() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var pages: [WebSocketClient] = []
        defer { for page in pages { page.close() } }
        for i in 0..<4 {
            let (code, opened) = try WebSocketClient.open(port: port, key: secret, origin: nil)
            guard code == 101, var page = opened else { Issue.record("page \(i): \(code)"); return }
            #expect(page.receiveText() == "hello touchbridge", "page \(i)")
            pages.append(page)
        }
        let (full, refused) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        refused?.close()
        #expect(full == 403, "a fifth page from the address got \(full)")
        try rig.daemon.waitForLog(containing: "4 pages from that address already", "the refusal's log line")
        pages.removeFirst().close()
        let deadline = Date().addingTimeInterval(10)
        var code = 0
        while code != 101, Date() < deadline {
            let (status, client) = try WebSocketClient.open(port: port, key: secret, origin: nil)
            client?.close()
            code = status
            if code != 101 { usleep(50_000) }
        }
        #expect(code == 101, "no page got in after a page went")
    }

    /// A page whose message waits unread while the Bridge's loop is held past the page silence (10 s), as
    /// when people leaving keep a slow machine's loop busy, is not closed as silent: that loop reads what
    /// waits before it closes anything, and the page goes on. A page that sent nothing is still closed.
    /// Before, the server's loop measured the silence from what the Bridge's loop had read, and closed
    /// the page that had sent (the VM's people storm under load).
    @Test func aPageWhoseMessageTheBridgesLoopHasNotReadIsNotSilent() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let (code, opened) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        let (muteCode, muteOpened) = try WebSocketClient.open(port: port, key: secret, origin: nil, from: "127.0.7.1")
        guard code == 101, var page = opened, muteCode == 101, var mute = muteOpened else {
            Issue.record("no sockets: \(code), \(muteCode)")
            return
        }
        defer { page.close(); mute.close() }
        #expect(page.receiveText() == "hello touchbridge" && mute.receiveText() == "hello touchbridge")
        try page.send("ping 1")
        #expect(page.receiveText() == "pong 1")
        let logMark = rig.daemon.logMark
        let hold = try ChildProcess(name: "hold_thread.py", executable: "/usr/bin/python3",
                                    arguments: [Binaries.packageRoot + "/Tests/IntegrationTests/Support/hold_thread.py",
                                                String(rig.daemon.pid), "bridge-loop", "13"])
        defer { _ = hold.stop() }
        guard hold.stdout.waitFor(timeout: 10, { $0.text.hasPrefix("held") }) != nil else {
            Issue.record("the Bridge's loop was not held: \(hold.outputTail())")
            return
        }
        try page.send("ping 2")
        guard hold.stdout.waitFor(timeout: 30, { $0.text == "released" }) != nil else {
            Issue.record("the Bridge's loop was not let go: \(hold.outputTail())")
            return
        }
        #expect(page.receiveText() == "pong 2")
        try page.send("ping 3")
        #expect(page.receiveText() == "pong 3", "the page that sent was closed\n\(rig.daemon.outputTail(8))")
        #expect(mute.socket.receive().closed, "the page that sent nothing is open")
        let line = try rig.daemon.waitForLog(containing: "nothing received for 10 s", since: logMark, "the silent page's close")
        #expect(line.contains("127.0.7.1"), "\(line)")
    }
}
