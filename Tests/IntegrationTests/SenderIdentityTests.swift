// Who a sender is, and what holds the session, end to end on a real daemon, a real Xvfb and a real
// WebSocket: a datagram from the page's own TCP port number is not the page; datagrams that change
// nothing do not keep a waiting page out; a page's commands in their thousands make a bounded log.
import Foundation
import Glibc
import Testing
import TouchTestSupport

/// A UDP socket bound to 127.0.0.1:`sourcePort` (any free UDP port number, a TCP connection's included:
/// the two spaces are apart), sending to 127.0.0.1.
struct BoundUDPSocket {
    let fd: Int32

    init(sourcePort: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = sourcePort.bigEndian
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let why = String(cString: strerror(errno))
            _ = Glibc.close(fd)
            throw RigError("bind(127.0.0.1:\(sourcePort)) for UDP: \(why)")
        }
    }

    func send(_ bytes: [UInt8], to port: UInt16) throws {
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = inet_addr("127.0.0.1")
        let n = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard n == bytes.count else { throw RigError("sendto: \(String(cString: strerror(errno)))") }
    }

    func close() { _ = Glibc.close(fd) }
}

/// The local (client's) port of a connected TCP socket.
func localPort(of fd: Int32) throws -> UInt16 {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let r = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard r == 0 else { throw RigError("getsockname: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct SenderIdentityTests {
    typealias H = WebHardeningTests
    typealias Page = CancelledStaysCancelledTests.Page

    /// A PoseAI packet with slot 0 down at (fx, fy) of the pad, with the full state.
    static func poseAIDown(_ fx: Double, _ fy: Double) -> [UInt8] {
        func enc(_ v: Double) -> String {
            let b64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            let r = max(0, min(4095, Int((v * 4094).rounded())))
            return String([b64[r >> 6], b64[r & 63]])
        }
        let at = enc(fx) + enc(fy)
        return Array("{\"Touches\":\"0\(at)\",\"TouchState\":\"\(at + String(repeating: "====", count: 9))\",\"Orientation\":1}".utf8)
    }

    /// The empty PoseAI packet: no touch, every slot free.
    static let poseAIEmpty = Array("{\"Touches\":\"\",\"TouchState\":\"\(String(repeating: "====", count: 10))\"}".utf8)

    /// While a paired page holds the session (and has just acted), a PoseAI or a TUIO datagram sent
    /// from UDP with the page's TCP source port number is refused as another phone: no motion, no
    /// button, before the page's own click that follows; and the page's own finger still works after.
    @Test(arguments: ["PoseAI", "TUIO"])
    func aDatagramFromThePagesPortIsNotThePage(transport: String) throws {
        // The rig's daemon has no TUIO listener (--tuio-port 0): this one has.
        let (rig, port, secret, home) = try H.start(mode: "touchscreen", extraArguments: ["--tuio-port", String(try freeUDPPort())])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let tuioPort = try rig.daemon.listeningPort("tuio-udp")
        var page = try Page.open(port, secret)
        defer { page.close() }
        // The page holds the session: its surface (a change) and a click, seen by X.
        try page.send("surface 390 844", awaiting: "mode touchscreen")
        _ = try CancelledStaysCancelledTests.marker(rig, page, since: rig.observer.mark)
        try rig.observer.warp(x: 100, y: 100)

        let pagePort = try localPort(of: page.socket.socket.fd)
        let spoof = try BoundUDPSocket(sourcePort: pagePort)
        defer { spoof.close() }
        let mark = rig.observer.mark
        let log = rig.daemon.logMark
        // Slot 0 down at (0.9, 0.9): in touchscreen mode, a move there and button 1 pressed, were it the page.
        if transport == "PoseAI" {
            try spoof.send(Self.poseAIDown(0.9, 0.9), to: rig.daemon.port)
        } else {
            try spoof.send(OSCWrite.frame(fseq: 1, alive: [5], set: [(5, 0.9, 0.9)]), to: tuioPort)
        }
        // The datagram was handled when the daemon says it refused it (or, were it taken for the page,
        // when X sees its press).
        let refusal = "ignoring 127.0.0.1:\(pagePort) (\(transport))"
        let deadline = MonotonicClock.deadline(after: 20)
        while rig.daemon.logLines(containing: refusal).isEmpty, rig.observer.events(from: mark).first(where: { $0.isButton("press", 1) }) == nil,
              MonotonicClock.now() < deadline {
            _ = try? rig.daemon.waitForLog(containing: refusal, since: log, timeout: 0.1, "the refusal")
        }
        let events = try CancelledStaysCancelledTests.marker(rig, page, since: mark)
        #expect(events.isEmpty, "a \(transport) datagram from the page's port \(pagePort) acted as the page\n\(rig.context(since: mark))")
        #expect(!rig.daemon.logLines(containing: refusal).isEmpty,
                "no refusal of the datagram from the page's port in the log\n\(rig.daemon.outputTail())")

        // The page's own input still works.
        let after = rig.observer.mark
        try page.finger((0.3, 0.3))
        try rig.waitForButton("press", 1, since: after, "the page's own finger presses")
        try page.finger(nil)
        try rig.waitForButton("release", 1, since: after, "the page's own finger lifts")
    }

    /// An empty PoseAI datagram every 8 s from another source (no touch, every
    /// slot free) holds the session only as its first arrival made it the sender: a paired page that
    /// asks meanwhile gets the session once the takeover silence (10 s) has passed since then, before
    /// the third empty datagram (16 s). On the old daemon every empty datagram renewed the session.
    @Test func emptyDatagramsDoNotKeepAWaitingPageOut() throws {
        let (rig, port, secret, home) = try H.start(mode: "touchscreen")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let squatter = try PoseAISender(port: rig.daemon.port, source: "127.0.0.2")
        try squatter.send(bytes: Self.poseAIEmpty)
        try rig.daemon.waitForLog(containing: "phone connected from 127.0.0.2", "the empty datagram made a sender")
        var sent = 1
        var lastSent = MonotonicClock.now()
        var page = try Page.open(port, secret)
        defer { page.close() }
        var answer = ""
        // The page asks about once a second (a busy page asks again with its surface); the squatter
        // sends every 8 s, up to a fourth datagram (24 s), or until the page is in.
        while sent <= 4 {
            try page.socket.send("surface 390 844")
            answer = ""
            while answer != "busy" && !answer.hasPrefix("mode ") {
                guard let line = page.socket.receiveText() else { throw RigError("the page's socket closed") }
                answer = line
            }
            if answer.hasPrefix("mode ") { break }
            usleep(1_000_000)
            if MonotonicClock.now() - lastSent >= 8_000_000_000 {
                try squatter.send(bytes: Self.poseAIEmpty)
                sent += 1
                lastSent = MonotonicClock.now()
            }
        }
        #expect(answer == "mode touchscreen", "the page never got the session from empty datagrams")
        #expect(sent <= 2, "the page got the session only after \(sent) empty datagrams (every 8 s): they held it")
        // The page is the sender: its finger acts.
        let mark = rig.observer.mark
        try page.finger((0.5, 0.5))
        try rig.waitForButton("press", 1, since: mark, "the page's finger presses")
        try page.finger(nil)
    }

    /// 1,800 page commands that log a line each on the old daemon (the surface, the mode back and
    /// forth), then a click that must arrive: each kind of line is logged at most once a second (with
    /// the counts), so the log holds a few lines, not thousands. At debug level too: the machines'
    /// transitions of 500 taps are bounded (100 a second).
    @Test(arguments: ["info", "debug"])
    func manyPageCommandsMakeABoundedLog(level: String) throws {
        let (rig, port, secret, home) = try H.start(mode: "touchpad", extraArguments: ["--log-level", level])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let page = try Page.open(port, secret)
        defer { page.close() }
        let started = MonotonicClock.now()
        for i in 0..<600 {
            try page.socket.send("surface \(400 + i % 2) 800")
            try page.socket.send(i % 2 == 0 ? "mode touchscreen" : "mode touchpad")
            try page.socket.send("surface 400 800")
        }
        if level == "debug" {
            // The last switch was to touchpad mode: each tap is a few transitions of its machines.
            for _ in 0..<500 {
                try page.finger((0.5, 0.5))
                try page.finger(nil)
            }
        }
        _ = try CancelledStaysCancelledTests.marker(rig, page, since: rig.observer.mark)
        let seconds = Int((MonotonicClock.now() - started) / 1_000_000_000) + 1
        let surfaces = rig.daemon.logLines(containing: "web page surface").count
        let modes = rig.daemon.logLines(containing: "mode (from").count
        // At most 10 lines of a kind in 10 s (Bridge.sessionLogBurst).
        let bound = 10 * (seconds / 10 + 1)
        #expect(surfaces >= 1 && surfaces <= bound, "\(surfaces) surface lines in \(seconds) s")
        #expect(modes >= 1 && modes <= bound, "\(modes) mode lines in \(seconds) s")
        // The counts come with the next line of a kind once its 10 s have passed: a surface that changes,
        // sent until its line (with the counts of the ones left out) is there.
        let deadline = MonotonicClock.deadline(after: 20)
        var width = 500
        while rig.daemon.logLines(containing: "more since the last report").isEmpty && MonotonicClock.now() < deadline {
            try page.socket.send("surface \(width) 800")
            width += 1
            usleep(200_000)
        }
        #expect(rig.daemon.logLines(containing: "more since the last report").count >= 1, "no line carries the counts")
        if level == "debug" {
            let transitions = rig.daemon.logLines(containing: " → ").count
            #expect(transitions >= 1 && transitions <= 100 * (seconds + 1), "\(transitions) transition lines in \(seconds) s")
        }
    }
}
