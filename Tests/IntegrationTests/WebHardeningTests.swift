// The web server's hardening, end to end against the real daemon on a private Xvfb: slow and
// half-open HTTP clients, the WebSocket's Origin, `touchbridge pair`, and stale input from a paired page.
// Clients are raw sockets on 127.0.0.0/8 (a minimal WebSocket client below: masked text frames).
import Foundation
import Glibc
import Testing

/// A blocking TCP client on loopback, from a chosen source address.
struct LoopbackSocket {
    let fd: Int32

    /// Connects to 127.0.0.1:`port` from `source` (any port), blocking, with `timeout` s for every call.
    /// `receiveBuffer`: the socket's SO_RCVBUF in bytes, set before the connection so that the window it
    /// offers is that small (a peer that reads nothing then holds the daemon's answer in the daemon's buffers).
    static func connect(port: UInt16, from source: String = "127.0.0.1", timeout: Int = 5, receiveBuffer: Int32? = nil) throws -> LoopbackSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if var bytes = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size)) }
        guard bindSource(fd, source), connectTo(fd, port) == 0 else {
            let why = String(cString: strerror(errno))
            _ = Glibc.close(fd)
            throw RigError("connect from \(source): \(why)")
        }
        return LoopbackSocket(fd: fd)
    }

    static func bindSource(_ fd: Int32, _ source: String) -> Bool {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(source)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    static func connectTo(_ fd: Int32, _ port: UInt16) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw RigError("send: \(String(cString: strerror(errno)))") }
            sent += n
        }
    }

    /// Reads until `done` says so, the peer closes, or the timeout; returns what was read.
    func receive(until done: ([UInt8]) -> Bool = { _ in false }) -> (bytes: [UInt8], closed: Bool) {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !done(all) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { return (all, true) }
            if n < 0 { return (all, errno == ECONNRESET) }
            all += buffer[0..<n]
        }
        return (all, false)
    }

    func close() { _ = Glibc.close(fd) }
}

/// Where the first CRLF CRLF in `bytes` starts.
func headEnd(in bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
        return i
    }
    return nil
}

/// A minimal WebSocket client: the upgrade, masked text frames out, unmasked text frames in.
struct WebSocketClient {
    let socket: LoopbackSocket
    /// Bytes read after the upgrade's head, not yet a whole frame (the first frame can come in the same
    /// segment as the 101: a test that reads the socket itself starts from these).
    private(set) var pending: [UInt8] = []

    /// Sends the upgrade for /ws?k=`key` (with `origin`, if any) and returns the status and, on 101, the client.
    static func open(port: UInt16, key: String, origin: String?, host: String? = nil, from source: String = "127.0.0.1",
                     timeout: Int = 5) throws -> (status: Int, client: WebSocketClient?) {
        let socket = try LoopbackSocket.connect(port: port, from: source, timeout: timeout)
        var request = "GET /ws?k=\(key) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        request += "\r\n"
        try socket.send(Array(request.utf8))
        let (bytes, _) = socket.receive { headEnd(in: $0) != nil }
        guard let headEnd = headEnd(in: bytes) else {
            socket.close()
            throw RigError("no HTTP answer to the upgrade: \(String(decoding: bytes, as: UTF8.self))")
        }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        guard status == 101 else {
            socket.close()
            return (status, nil)
        }
        var client = WebSocketClient(socket: socket)
        client.pending = Array(bytes[(headEnd + 4)...])
        return (101, client)
    }

    /// One masked text frame.
    static func frame(_ text: String) -> [UInt8] { frame(Array(text.utf8), opcode: 0x1) }

    /// One masked frame of `opcode` (0x1 text, 0xA pong).
    static func frame(_ payload: [UInt8], opcode: UInt8) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else {
            out.append(0x80 | 126)
            out += [UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        out += mask
        for (i, byte) in payload.enumerated() { out.append(byte ^ mask[i % 4]) }
        return out
    }

    func send(_ text: String) throws { try socket.send(Self.frame(text)) }

    /// The next text message, within the socket's timeout; nil when closed or none.
    mutating func receiveText() -> String? {
        while true {
            if pending.count >= 2 {
                let length = Int(pending[1] & 0x7f)
                var offset = 2
                var size = length
                if length == 126, pending.count >= 4 { size = Int(pending[2]) << 8 | Int(pending[3]); offset = 4 }
                if length < 126 || pending.count >= 4, pending.count >= offset + size {
                    let opcode = pending[0] & 0x0f
                    let payload = Array(pending[offset..<offset + size])
                    pending.removeFirst(offset + size)
                    if opcode == 1 { return String(decoding: payload, as: UTF8.self) }
                    if opcode == 8 { return nil }
                    // The server's ping (it closes a socket that leaves one unanswered for 30 s): a pong
                    // with the same payload.
                    if opcode == 9 { try? socket.send(Self.frame(payload, opcode: 0xA)) }
                    continue
                }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(socket.fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            pending += buffer[0..<n]
        }
    }

    func close() { socket.close() }
}

/// What /proc says about a process.
enum ProcStat {
    /// User + system CPU time in nanoseconds.
    static func cpuNs(_ pid: pid_t) -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based) → indices 11 and 12 here.
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return 0 }
        return (user + system) * 1_000_000_000 / UInt64(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident set size in bytes.
    static func rss(_ pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    static func openDescriptors(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}

func medianNs(_ values: [UInt64]) -> UInt64 {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebHardeningTests {
    /// A rig serving the page on a free port, with private state, config and home directories.
    static func start(mode: String = "touchscreen", extraArguments: [String] = []) throws -> (rig: Rig, port: UInt16, secret: String, home: String) {
        let home = NSTemporaryDirectory() + "touchbridge-webhard-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let port = try freeTCPPort()
        let rig = try Rig.start(mode: mode, extraArguments: ["--http-port", String(port)] + extraArguments,
                                environment: ["XDG_STATE_HOME": home + "/state", "XDG_CONFIG_HOME": home + "/config", "HOME": home])
        do {
            let line = try rig.daemon.listeningLine("http")
            #expect(!line.contains("#k="), "the listening line carries the secret: \(line)")
            let secret = try String(contentsOfFile: home + "/state/touchbridge/pairing-secret", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return (rig, port, secret, home)
        } catch {
            rig.stop()
            throw error
        }
    }

    /// The secret never reaches the service's output; `touchbridge pair` prints the page's address with
    /// it, and the QR code of that address.
    @Test func pairPrintsTheAddressAndTheLogDoesNot() throws {
        let (rig, port, secret, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let pair = try ChildProcess(
            name: "touchbridge pair", executable: try Binaries.touchbridge(),
            arguments: ["pair", "--bind", "127.0.0.1", "--http-port", String(port)],
            environment: ["XDG_STATE_HOME": home + "/state", "XDG_CONFIG_HOME": home + "/config", "HOME": home])
        defer { _ = pair.stop(timeout: 2) }
        let status = pair.waitForExit(timeout: 10)
        // The exit can come before the reader thread has read the whole pipe: the output is whole once
        // it is closed.
        #expect(pair.stdout.waitClosed(timeout: 10), "the output did not end")
        let lines = pair.stdout.snapshot().map(\.text)
        #expect(status == .exited(0), "touchbridge pair failed\n\(pair.outputTail())")
        #expect(lines.first == "http://127.0.0.1:\(port)/#k=\(secret)", "first line: \(lines.first ?? "none")")
        #expect(lines.contains("scan with the phone's camera to open http://127.0.0.1:\(port)/#k=\(secret):"))
        let rows = lines.filter { !$0.isEmpty && $0.allSatisfy { "█▀▄ ".contains($0) } }
        #expect(rows.count >= 16, "no QR code: \(rows.count) rows of half blocks")
        // The address it prints opens the socket.
        let (code, client) = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
        client?.close()
        #expect(code == 101)
        #expect(rig.daemon.logLines(containing: secret).isEmpty, "the secret is in the daemon's output")
    }

    /// The page's connection carries TCP keepalive (the kernel probes a silent peer after 30 s, so the
    /// daemon needs no ping timer of its own): in /proc/net/tcp the server's end of the connection has
    /// the keepalive timer running (`tr` 2) with at most 30 s to go, and the client's end, which sets no
    /// keepalive, has not (the control that shows the reading can tell the two apart).
    @Test func thePagesConnectionHasTCPKeepalive() throws {
        let (rig, port, secret, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let (code, client) = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
        defer { client?.close() }
        #expect(code == 101)
        // Rows of established connections (state 01) with `port` at the local or the remote end:
        // (local end is the server's, timer kind, ticks left).
        func rows() throws -> [(server: Bool, timer: Int, ticks: Int)] {
            // IPv4's table and IPv6's (a dual-stack socket's end of an IPv4 connection is listed there),
            // read to their end: `String(contentsOfFile:)` reads one page of a /proc file (4 KiB, about 27
            // rows), and with other tests' sockets about the connection's rows came later (two full suites
            // side by side saw neither end).
            func whole(_ path: String) throws -> String {
                guard let file = FileHandle(forReadingAtPath: path) else { return "" }
                defer { try? file.close() }
                return String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
            }
            let text = try whole("/proc/net/tcp") + whole("/proc/net/tcp6")
            let hexPort = String(format: "%04X", Int(port))
            return text.split(separator: "\n").compactMap { line in
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count > 5, f[0] != "sl", f[3] == "01" else { return nil }
                let local = f[1].hasSuffix(":" + hexPort), remote = f[2].hasSuffix(":" + hexPort)
                guard local || remote else { return nil }
                let timer = f[5].split(separator: ":")
                return (local, Int(timer[0], radix: 16) ?? -1, Int(timer.last ?? "", radix: 16) ?? -1)
            }
        }
        var seen = try rows()
        let deadline = Date().addingTimeInterval(10)
        // Read again until both ends are listed: /proc/net/tcp is made in pieces, and a row can be
        // missed while other sockets come and go.
        while !(seen.contains(where: { $0.server && $0.timer == 2 }) && seen.contains(where: { !$0.server })), Date() < deadline {
            usleep(50_000)
            seen = try rows()
        }
        let server = seen.filter(\.server), clientEnd = seen.filter { !$0.server }
        #expect(server.count == 1, "the connection's server end in /proc/net/tcp: \(seen)")
        #expect(clientEnd.count == 1, "the connection's client end in /proc/net/tcp: \(seen)")
        #expect(server.allSatisfy { $0.timer == 2 && $0.ticks <= 30 * 100 }, "the server's end has no 30 s keepalive timer: \(server)")
        #expect(clientEnd.allSatisfy { $0.timer != 2 }, "the client's end, with no keepalive, shows one: \(clientEnd)")
    }

    /// With the right secret, a page from another origin is refused (403) and nothing it sends is
    /// applied; the page's own origin (and a client that sends none) is accepted.
    @Test func aForeignOriginIsRefusedEvenWithTheSecret() throws {
        let (rig, port, secret, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let mark = rig.observer.mark
        let (status, evil) = try WebSocketClient.open(port: port, key: secret, origin: "http://evil.example")
        #expect(status == 403, "a foreign origin got \(status)")
        if let evil {
            // Were it open, this would click; it must not.
            try evil.send("click right")
            evil.close()
        }
        try rig.daemon.waitForLog(containing: "the page's Origin is not this server", "foreign origin logged")
        // The right origin, then a command that must apply: only its click is seen.
        let (good, client) = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
        #expect(good == 101)
        guard var client else { return }
        defer { client.close() }
        #expect(client.receiveText() == "hello touchbridge")
        try client.send("click middle")
        try rig.waitForButton("release", 2, since: mark, "the good page's click")
        #expect(!rig.observer.events(from: mark).contains { $0.isButton("press", 3) },
                "the foreign page's right click was applied\n\(rig.context(since: mark))")
        // No Origin at all: a non-browser client; it still needs the secret.
        let (bare, bareClient) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        bareClient?.close()
        #expect(bare == 101)
        let (wrong, _) = try WebSocketClient.open(port: port, key: String(repeating: "0", count: 32), origin: nil)
        #expect(wrong == 403)
    }

    /// A 1 MB header gets 431 and the connection is closed.
    @Test func anOversizedHeadGets431AndAClose() throws {
        let (rig, port, _, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let socket = try LoopbackSocket.connect(port: port)
        defer { socket.close() }
        var request = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ".utf8)
        request += [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        request += Array("\r\n\r\n".utf8)
        // The server stops parsing at 16 KiB but keeps reading (and discarding) briefly, so the whole
        // send normally completes; a reset part-way is fine too, as long as the 431 came first.
        try? socket.send(request)
        let (answer, closed) = socket.receive()
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 431 "), "answer: \(text.prefix(80))")
        #expect(closed, "the connection stayed open after the 431")
        try rig.daemon.waitForLog(containing: "request head larger than 16 KiB", "431 logged")
        // And the server still serves.
        let again = try LoopbackSocket.connect(port: port)
        defer { again.close() }
        try again.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        #expect(String(decoding: again.receive { String(decoding: $0, as: UTF8.self).hasSuffix("ok\n") }.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }

    /// Opens `count` connections from `source` without waiting on each (non-blocking connects), and
    /// sends each a request head without its end as soon as it is connected, for at most `seconds`.
    /// Returns the descriptors (the caller closes them) and how many got their bytes out.
    static func halfOpen(count: Int, from source: String, port: UInt16, seconds: Double) -> (fds: [Int32], sent: Int) {
        var fds: [Int32] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { break }
            guard LoopbackSocket.bindSource(fd, source) else { close(fd); break }
            _ = LoopbackSocket.connectTo(fd, port)
            fds.append(fd)
        }
        let partial = Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)
        var waiting = Set(fds.indices)
        var sent = 0
        let deadline = MonotonicClock.deadline(after: seconds)
        while !waiting.isEmpty && MonotonicClock.now() < deadline {
            var polls = waiting.map { pollfd(fd: fds[$0], events: Int16(POLLOUT), revents: 0) }
            guard poll(&polls, nfds_t(polls.count), 50) >= 0 else { break }
            for p in polls where p.revents != 0 {
                if let index = fds.firstIndex(of: p.fd) { waiting.remove(index) }
                if p.revents & Int16(POLLOUT) != 0,
                   partial.withUnsafeBytes({ Glibc.send(p.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 {
                    sent += 1
                }
            }
        }
        return (fds, sent)
    }

    /// Raises this process's descriptor limit (the daemon, started before, keeps its own).
    static func raiseDescriptorLimit(to wanted: rlim_t) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < wanted else { return }
        guard limit.rlim_max >= wanted else { throw RigError("RLIMIT_NOFILE hard limit \(limit.rlim_max) < \(wanted)") }
        limit.rlim_cur = wanted
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw RigError("setrlimit: \(String(cString: strerror(errno)))") }
    }

    /// The median of `n` UDP hello → HANDSHAKE round trips, in ns.
    static func medianRoundTrip(_ rig: Rig, _ n: Int = 9) throws -> UInt64 {
        var times: [UInt64] = []
        for _ in 0..<n {
            let start = MonotonicClock.now()
            guard try rig.sender.roundTrip(timeout: 20) else { throw RigError("no HANDSHAKE to a hello") }
            times.append(MonotonicClock.now() - start)
        }
        return medianNs(times)
    }

    /// 1,100 half-open connections from outside --allow and 200 from the allowed address: the paired
    /// page's socket still opens at once, the UDP phone is not slowed, the daemon stays nearly idle,
    /// and its memory comes back when the attack ends.
    @Test func halfOpenConnectionsDoNotStarveThePageOrThePhone() throws {
        let (rig, port, secret, home) = try Self.start(extraArguments: ["--allow", "127.0.0.1/32"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let pid = rig.daemon.pid
        // The daemon gets the descriptor limit a systemd user service has by default (soft 1024).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = min(1024, limit.rlim_max)
        // glibc's prlimit(2) wrapper is declared only under _GNU_SOURCE: looked up by name.
        typealias PrlimitFunction = @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prlimit") else { throw RigError("no prlimit in libc") }
        let setLimit = unsafeBitCast(symbol, to: PrlimitFunction.self)
        guard setLimit(pid, Int32(RLIMIT_NOFILE.rawValue), &limit, nil) == 0 else {
            throw RigError("prlimit: \(String(cString: strerror(errno)))")
        }
        // Warm up: the page's socket, a page load, UDP round trips; then the quiet figures.
        for _ in 0..<3 {
            let (code, client) = try WebSocketClient.open(port: port, key: secret, origin: nil)
            client?.close()
            #expect(code == 101)
        }
        let quietRTT = try Self.medianRoundTrip(rig)
        let baselineRSS = ProcStat.rss(pid)

        try Self.raiseDescriptorLimit(to: 4096)
        let cpuBefore = ProcStat.cpuNs(pid)
        let attackStart = MonotonicClock.now()
        let outside = Self.halfOpen(count: 1_100, from: "127.0.0.9", port: port, seconds: 3)
        let inside = Self.halfOpen(count: 200, from: "127.0.0.1", port: port, seconds: 3)
        var attackFds = outside.fds + inside.fds
        defer { for fd in attackFds { close(fd) } }
        #expect(outside.fds.count == 1_100 && inside.fds.count == 200, "could not open the attack's sockets")

        // Under attack: the page's socket opens within 2 s, the bound the paired page is promised (it took
        // 1.16 s once at load 8.5, two other test runs and a GNOME VM beside it).
        let openStart = MonotonicClock.now()
        let opened: (status: Int, client: WebSocketClient?)
        do {
            opened = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
        } catch {
            Issue.record("the page's WebSocket could not even connect under attack: \(error)")
            return
        }
        let (code, client) = opened
        let openNs = MonotonicClock.now() - openStart
        client?.close()
        #expect(code == 101, "the page's WebSocket did not open under attack (status \(code))")
        #expect(openNs < 2_000_000_000, "the page's WebSocket took \(openNs.ms) ms to open under attack")
        // The UDP phone: median round trip under 2x its quiet value, with a 10 ms floor: on a machine
        // another test run loads, loopback round trips wander by milliseconds (4.4 ms was seen against a
        // 100 µs quiet figure), which says nothing about the attack; the fault seen was 90 ms, and that
        // still fails. The quiet figures are in the output, the goal in the README.
        let loudRTT = try Self.medianRoundTrip(rig)
        #expect(loudRTT < 2 * max(quietRTT, 10_000_000), "UDP round trip \(loudRTT.ms) ms under attack, \(quietRTT.ms) ms quiet")
        // The attack holds its connections for 4 s (a slow client's whole point is to stay): the CPU
        // share is over that window, the accept burst included.
        MonotonicClock.sleep(until: attackStart + 4_000_000_000)
        let attackNs = MonotonicClock.now() - attackStart
        let cpuShare = Double(ProcStat.cpuNs(pid) - cpuBefore) / Double(attackNs)
        // Nearly idle, not a bound on speed: a daemon that spins on the half-open heads takes the whole core.
        // The accept burst of 1,300 connections in a debug build took 11.2–11.7% here on 2026-12-05, with
        // this round's code and with the code before it alike, over the 10% this said before.
        #expect(cpuShare < 0.25, "the daemon used \(Int(cpuShare * 100))% of a core over the \(attackNs.ms) ms attack")
        let descriptors = ProcStat.openDescriptors(pid)
        #expect(descriptors < 200, "the daemon holds \(descriptors) descriptors under attack")

        // The attack stops: memory back within 2 MB of the baseline (polled, at most 15 s).
        for fd in attackFds { close(fd) }
        attackFds = []
        var rss = ProcStat.rss(pid)
        let deadline = MonotonicClock.deadline(after: 15)
        while rss > baselineRSS + 2 << 20 && MonotonicClock.now() < deadline {
            usleep(100_000)
            rss = ProcStat.rss(pid)
        }
        #expect(rss <= baselineRSS + 2 << 20, "RSS \(rss >> 10) KiB after the attack, baseline \(baselineRSS >> 10) KiB")
        print("web hardening figures: page socket opened in \(openNs.ms) ms; UDP RTT quiet \(quietRTT.us) µs, under attack \(loudRTT.us) µs;"
              + " CPU \(String(format: "%.1f", cpuShare * 100))% over \(attackNs.ms) ms; \(descriptors) descriptors;"
              + " RSS baseline \(baselineRSS >> 10) KiB, after \(rss >> 10) KiB; sent \(outside.sent)+\(inside.sent) partial heads")
        #expect(rig.daemon.isRunning)
        try rig.daemon.waitForLog(containing: "not in --allow", "refusals at accept logged")
    }

    /// A page's blast, as a browser page sends: touchscreen moves back to back into the page's own
    /// buffer, which never makes the page wait (a browser's WebSocket buffers what TCP does not take
    /// yet), then one distinctive move, the blast's end. Whatever the daemon did not read by then is a
    /// backlog only reading faster can clear. The blast starts with 1,000 moves at once (100 KB, three
    /// times the daemon's receive buffer: its window closes, as in every blast), then 2,000 a second for
    /// 3 s: what this debug build reads with room to spare on a loaded 2-core machine (about 4,000 a
    /// second measured at load 9). The last move must arrive within 1 s of the blast's end. Before the
    /// fix the page's TCP sent nothing until its zero-window probe (a segment larger than the window
    /// could ever be, see `WebServer.Limits.maxSegmentBytes`): about 150 KB/s, 1,500 moves a second at
    /// most, so the backlog grew through the blast (17 to 53 s late at 15,000 a second). The promise
    /// itself (15,000 a second, within 100 ms, quiet machine, release build) is `make bench`'s "blast" row.
    @Test func aPagesBlastIsFollowedByItsLastMoveAtOnce() throws {
        let (rig, port, secret, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let (code, opened) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        guard code == 101, var client = opened else { Issue.record("no socket: \(code)"); return }
        defer { client.close() }
        #expect(client.receiveText() == "hello touchbridge")
        let fd = client.socket.fd
        // The segment size the daemon announced: a LAN's, not loopback's 64 KiB.
        var segment: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(fd, Int32(IPPROTO_TCP), TCP_MAXSEG, &segment, &size) == 0)
        #expect(segment > 0 && segment <= 1_448, "the daemon let the page send \(segment)-byte segments")
        func packet(_ touches: String, _ x: Int, _ y: Int) -> String {
            PoseAIText.packet(touches: touches, touchState: PoseAIText.touchState([0: .raw(x: x, y: y)]))
        }
        var mark = rig.observer.mark
        try client.send(packet(PoseAIText.touches([.raw(slot: 0, x: 200, y: 200)]), 200, 200))
        try rig.waitForButton("press", 1, since: mark, "finger down")

        var pending: [UInt8] = []
        pending.reserveCapacity(8 << 20)
        var head = 0
        /// Hands what the socket takes now to the kernel, without waiting.
        func flush() {
            while head < pending.count {
                let n = pending[head...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                guard n > 0 else { return }
                head += n
            }
            pending.removeAll(keepingCapacity: true)
            head = 0
        }
        func move(_ i: Int) -> [UInt8] {
            let x = 300 + i % 2_000, y = 300 + (i / 2_000) % 500
            return WebSocketClient.frame(packet(PoseAIText.touches([.raw(slot: 0, x: x, y: y)]), x, y))
        }
        let burst = 1_000, rate = 2_000.0, seconds = 3.0
        for i in 0..<burst { pending += move(i) }
        flush()
        let start = MonotonicClock.now()
        var made = burst
        while true {
            let elapsed = Double(MonotonicClock.now() - start) / 1e9
            if elapsed >= seconds { break }
            let due = burst + Int(elapsed * rate)
            while made < due {
                pending += move(made)
                made += 1
            }
            flush()
            usleep(500)
        }
        // The blast's end: the last, distinctive move, into the page's buffer like the rest.
        mark = rig.observer.mark
        let (fx, fy) = (3_500, 3_700)
        pending += WebSocketClient.frame(packet(PoseAIText.touches([.raw(slot: 0, x: fx, y: fy)]), fx, fy))
        let endedAt = MonotonicClock.now()
        let backlogBytes = pending.count - head
        while head < pending.count {
            flush()
            if head < pending.count { usleep(200) }
        }
        let target = (x: Rig.expectedPixel(raw: fx, size: rig.width), y: Rig.expectedPixel(raw: fy, size: rig.height))
        guard let arrived = rig.observer.waitFor(from: mark, timeout: 60, {
            $0.kind == "motion" && abs(($0.eventX ?? -9) - target.x) <= 1 && abs(($0.eventY ?? -9) - target.y) <= 1
        }) else {
            Issue.record("the last move did not arrive within 60 s of the blast's end (\(backlogBytes >> 10) KiB were still unread)")
            return
        }
        let lateNs = arrived.tNs > endedAt ? arrived.tNs - endedAt : 0
        print("blast figures: \(made) moves (\(burst) at once, then \(Int(rate))/s for \(Int(seconds * 1000)) ms); \(backlogBytes >> 10) KiB"
              + " not yet taken by the page's socket at the end; last motion \(lateNs.ms) ms after the blast's end; segment \(segment) bytes")
        // 1 s: 1 ms seen at load 8 on 2 cores, 16 ms with `stress --cpu 2` at load 12, 165 ms at load 12
        // (other builds and a VM beside); 2.0 s with the stall at load 8. With stress and a release build
        // on top of load 12 the daemon got 18% of a core, read 1,400 moves a second, and was 2.6 s late
        // (the blast test below missed its 500 ms then too).
        #expect(lateNs < 1_000_000_000, "the last move arrived \(lateNs.ms) ms after the blast ended (\(backlogBytes >> 10) KiB were still unread)")
        try client.send(PoseAIText.packet(touches: PoseAIText.touches([.ended(slot: 0)]), touchState: PoseAIText.touchState([:])))
        try rig.waitForButton("release", 1, since: arrived.index, "the lift after the blast")
    }

    /// Up to 100,000 moves (at most 8 s of them) blasted over a paired socket, then one distinctive move:
    /// the pointer is there within 500 ms of the send finishing, and no older position is applied after it.
    @Test func aBlastOfMovesIsNeverAppliedLate() throws {
        // --show-touches: every applied move also redraws the overlay, so applying costs more than reading
        // (as with a slow X server): without pacing and coalescing, a backlog builds.
        let (rig, port, secret, home) = try Self.start(extraArguments: ["--show-touches"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let (code, opened) = try WebSocketClient.open(port: port, key: secret, origin: nil)
        guard code == 101, var client = opened else { Issue.record("no socket: \(code)"); return }
        defer { client.close() }
        #expect(client.receiveText() == "hello touchbridge")
        func packet(_ touches: String, _ x: Int, _ y: Int) -> String {
            PoseAIText.packet(touches: touches, touchState: PoseAIText.touchState([0: .raw(x: x, y: y)]))
        }
        // A finger down.
        var mark = rig.observer.mark
        try client.send(packet(PoseAIText.touches([.raw(slot: 0, x: 200, y: 200)]), 200, 200))
        try rig.waitForButton("press", 1, since: mark, "finger down")

        // The blast: moves along a line, as fast as the socket takes them (in batches of about 64 KB).
        // The test's own send buffer is kept small, so "sent" means "handed to the daemon's side".
        var small: Int32 = 32_768
        setsockopt(client.socket.fd, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let count = 100_000
        let blastStart = MonotonicClock.now()
        let cpuBefore = ProcStat.cpuNs(rig.daemon.pid)
        var batch: [UInt8] = []
        // At most 8 s of sending (a loaded machine reads slower; the test client answers no pings, and
        // Hummingbird closes a socket that leaves its ping unanswered for 30 s).
        let blastDeadline = MonotonicClock.deadline(after: 8)
        var sent = 0
        while sent < count && MonotonicClock.now() < blastDeadline {
            for i in sent..<min(sent + 500, count) {
                let x = 300 + i % 2_000, y = 300 + (i / 2_000) % 500
                batch += WebSocketClient.frame(packet(PoseAIText.touches([.raw(slot: 0, x: x, y: y)]), x, y))
            }
            sent = min(sent + 500, count)
            try client.socket.send(batch)
            batch.removeAll(keepingCapacity: true)
        }
        // The last, distinctive move.
        mark = rig.observer.mark
        let (fx, fy) = (3_500, 3_700)
        try client.send(packet(PoseAIText.touches([.raw(slot: 0, x: fx, y: fy)]), fx, fy))
        let sentAt = MonotonicClock.now()
        let blastCPU = Double(ProcStat.cpuNs(rig.daemon.pid) - cpuBefore) / Double(sentAt - blastStart)
        let target = (x: Rig.expectedPixel(raw: fx, size: rig.width), y: Rig.expectedPixel(raw: fy, size: rig.height))
        // The event's own position (its raw valuators), not the pointer xobserve queried after it: under
        // a flood the query can be ahead of the event.
        func at(_ event: ObservedEvent, _ point: (x: Int, y: Int)) -> Bool {
            guard event.kind == "motion", let x = event.eventX, let y = event.eventY else { return false }
            return abs(x - point.x) <= 1 && abs(y - point.y) <= 1
        }
        let arrived = rig.observer.waitFor(from: mark, timeout: 10) { at($0, target) }
        guard let arrived else {
            Issue.record("the final move never arrived\n\(rig.context(since: mark))")
            return
        }
        let lateNs = arrived.tNs > sentAt ? arrived.tNs - sentAt : 0
        // 500 ms of a core: about 15 ms on a quiet machine, up to 420 ms seen with 3 CPU hogs on 2 cores;
        // without the queue and pacing, 0.7 to 2.2 s. The daemon works flat out through the blast, so its
        // share of a core then is what the machine gave it: on a machine that gives it less, the same work
        // takes longer, and the limit grows by that share, at most 4x (582 ms was seen with the daemon
        // given 35% of a core: another `make test`, a GNOME VM under TCG and a build beside it).
        let share = min(1, max(0.25, blastCPU))
        let limitNs = 500_000_000 / share
        #expect(Double(lateNs) < limitNs, "the final move was applied \(lateNs.ms) ms after the blast was sent, the daemon having \(Int(blastCPU * 100))% of a core (limit \(Int(limitNs / 1e6)) ms)")

        // Then a lift and a new finger elsewhere: once that arrives, nothing between it and the final
        // move may be an older position.
        let (sx, sy) = (1_000, 3_000)
        try client.send(PoseAIText.packet(touches: PoseAIText.touches([.ended(slot: 0)]), touchState: PoseAIText.touchState([:])))
        try client.send(PoseAIText.packet(touches: PoseAIText.touches([.raw(slot: 1, x: sx, y: sy)]), touchState: PoseAIText.touchState([1: .raw(x: sx, y: sy)])))
        let sentinel = (x: Rig.expectedPixel(raw: sx, size: rig.width), y: Rig.expectedPixel(raw: sy, size: rig.height))
        guard rig.observer.waitFor(from: arrived.index, timeout: 5, { at($0, sentinel) }) != nil else {
            Issue.record("the sentinel finger never arrived\n\(rig.context(since: mark))")
            return
        }
        let between = rig.observer.events(from: arrived.index + 1).prefix { !at($0, sentinel) }
        let stale = between.filter { $0.kind == "motion" && !at($0, target) }
        #expect(stale.isEmpty, "older positions applied after the final one: \(stale.prefix(5).map(\.text))")
        print("stale input figures: \(sent) moves sent in \((sentAt - blastStart).ms) ms, the daemon using"
              + " \(Int(blastCPU * 100))% of a core; final move applied \(lateNs.ms) ms after the send finished")
    }
}
