// Who gets into the web server while others hold it, against the real daemon on 127.0.0.0/8 (every
// 127.x.y.z is this machine's, so each test plays many addresses): connections holding unread answers,
// pages with the secret that never send, a storm of wrong secrets, a secret with something after it,
// and the log lines all of it writes. The clients are raw sockets (WebHardeningTests.swift's).
import Foundation
import Glibc
import Testing

/// What /proc/PID/status says a process holds in memory.
enum ProcStatus {
    /// VmRSS in bytes.
    static func residentBytes(_ pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return 0 }
        return kB * 1024
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebAdmissionTests {
    /// A plain HTTP GET of `path` from `source`: the status (0 when the connection was closed unanswered)
    /// and the body.
    static func get(_ path: String, port: UInt16, from source: String = "127.0.0.1") throws -> (status: Int, body: String) {
        let socket = try LoopbackSocket.connect(port: port, from: source)
        defer { socket.close() }
        try? socket.send(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8))
        let (bytes, _) = socket.receive()
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 "), let end = headEnd(in: bytes) else { return (0, text) }
        return (Int(text.dropFirst(9).prefix(3)) ?? 0, String(decoding: bytes[(end + 4)...], as: UTF8.self))
    }

    /// Polls `condition` every 50 ms for at most `seconds`; whether it came true.
    static func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.deadline(after: seconds)
        while !condition() {
            if MonotonicClock.now() >= deadline { return false }
            usleep(50_000)
        }
        return true
    }

    /// The paired page opens from `source` and is greeted, within `seconds`: the time it took, or nil.
    static func pageOpens(port: UInt16, secret: String, from source: String, within seconds: Double) -> (ns: UInt64, client: WebSocketClient)? {
        let start = MonotonicClock.now()
        guard let (code, opened) = try? WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)", from: source,
                                                          timeout: Int(seconds.rounded(.up))),
              code == 101, var client = opened, client.receiveText() == "hello touchbridge" else { return nil }
        let ns = MonotonicClock.now() - start
        return ns <= UInt64(seconds * 1e9) ? (ns, client) : nil
    }

    /// 16 addresses × 16 connections, each with 4 pipelined `GET /` it never reads, fill the connection
    /// table (256). The paired page from a fresh address still connects within 2 s, `/healthz` answers (a
    /// fresh address and an attacking one), and the daemon's memory stays within 8 MB of what it was
    /// before. Each attacking socket offers a receive window of 2 KiB (SO_RCVBUF before it connects), so
    /// its answers stay in the daemon's buffers, as behind a slow or hostile peer. The report saw every new
    /// connection refused ("256 connections already, none idle") and 45 MB more; this debug build on
    /// loopback does not reproduce it, with default buffers or these (the code before passes too: page in
    /// 165 ms, 5.9 MB more), so the unit test `UnreadAnswerTests` is what shows the rule.
    @Test func thePageGetsInPastConnectionsHoldingUnreadAnswers() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let pid = rig.daemon.pid
        // Warm up what the attack uses (the page, a page load, /healthz), then the figures before.
        for _ in 0..<3 {
            let (code, client) = try WebSocketClient.open(port: port, key: secret, origin: nil)
            client?.close()
            #expect(code == 101)
            #expect(try Self.get("/", port: port).status == 200)
        }
        let descriptorsBefore = ProcStat.openDescriptors(pid)
        let before = ProcStatus.residentBytes(pid)

        var attack: [LoopbackSocket] = []
        defer { for socket in attack { socket.close() } }
        let requests = Array(String(repeating: "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 4).utf8)
        for address in 1...16 {
            for _ in 0..<16 {
                let socket = try LoopbackSocket.connect(port: port, from: "127.0.2.\(address)", receiveBuffer: 2048)
                try socket.send(requests)
                attack.append(socket)
            }
        }
        // The daemon has taken all 256 (its descriptors), and answered what their peers let it.
        // (All but an address's worth: a connection the daemon closed to make room is not counted.)
        #expect(Self.eventually(within: 20) { ProcStat.openDescriptors(pid) >= descriptorsBefore + 240 },
                "the daemon holds \(ProcStat.openDescriptors(pid) - descriptorsBefore) descriptors more than before the attack's 256 connections")
        let held = ProcStat.openDescriptors(pid) - descriptorsBefore
        var peak = ProcStatus.residentBytes(pid)

        let page = Self.pageOpens(port: port, secret: secret, from: "127.0.3.1", within: 2)
        #expect(page != nil, "the paired page did not open within 2 s past 256 connections holding unread answers\n\(rig.daemon.outputTail(5))")
        defer { page?.client.close() }
        let fresh = try Self.get("/healthz", port: port, from: "127.0.3.2")
        #expect(fresh.status == 200 && fresh.body == "ok\n", "/healthz from a fresh address: \(fresh)")
        let attacker = try Self.get("/healthz", port: port, from: "127.0.2.1")
        #expect(attacker.status == 200, "/healthz from an address holding 16 connections: \(attacker)")
        // Memory under the attack: sampled for a second, every answer the peers let through written.
        let sampleEnd = MonotonicClock.deadline(after: 1)
        while MonotonicClock.now() < sampleEnd {
            peak = max(peak, ProcStatus.residentBytes(pid))
            usleep(20_000)
        }
        #expect(peak <= before + 8 << 20, "VmRSS \(peak >> 10) KiB under the attack, \(before >> 10) KiB before")
        // And the page that got in works.
        if var client = page?.client {
            try client.send("ping 7")
            #expect(client.receiveText() == "pong 7")
        }
        print("held table figures: \(held) descriptors held; page opened in \((page?.ns ?? 0).ms) ms; VmRSS \(before >> 10) KiB before, \(peak >> 10) KiB at most under the attack")
        try rig.daemon.waitForLog(containing: "to make room for a new one", "the eviction logged")
    }

    /// 16 addresses × 16 pages with the secret that never send a frame: an address holds at most 4 (the
    /// others are refused), a page from a fresh address connects within 2 s and `GET /` answers while they
    /// are there, and every silent page is closed within 10 s of its last frame (15 s allowed), while the
    /// page that pings stays. On the code before, all 256 were let in, every new connection was refused,
    /// and all 256 were still open after 40 s.
    @Test func silentPagesAreClosedAndThePageThatActsGetsIn() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        var silent: [WebSocketClient] = []
        defer { for page in silent { page.close() } }
        var refused = 0
        for address in 1...16 {
            var held = 0
            for _ in 0..<16 {
                let (code, client) = try WebSocketClient.open(port: port, key: secret, origin: nil, from: "127.0.5.\(address)")
                if code == 101, let client {
                    silent.append(client)
                    held += 1
                } else {
                    refused += 1
                }
            }
            #expect(held <= 4, "127.0.5.\(address) holds \(held) pages")
        }
        // Their greetings read: from now on a silent page's socket is readable only when it is closed.
        for i in silent.indices { #expect(silent[i].receiveText() == "hello touchbridge") }
        let openedAt = MonotonicClock.now()
        guard let (ns, first) = Self.pageOpens(port: port, secret: secret, from: "127.0.6.1", within: 2) else {
            Issue.record("the page that acts did not open within 2 s past \(silent.count) silent pages\n\(rig.daemon.outputTail(5))")
            return
        }
        var page = first
        defer { page.close() }
        let root = try Self.get("/", port: port, from: "127.0.6.2")
        #expect(root.status == 200 && root.body.contains("<html"), "GET / past the silent pages: \(root.status)")
        #expect(try Self.get("/", port: port, from: "127.0.5.1").status == 200, "GET / from an address holding pages")

        // Every silent page ends (a close frame, then the end) within 15 s; the acting page pings every 2 s
        // meanwhile, as the page does, and is answered.
        var ended = 0
        var n = 0
        let deadline = MonotonicClock.deadline(after: 15)
        var waiting = silent
        while !waiting.isEmpty, MonotonicClock.now() < deadline {
            n += 1
            try page.send("ping \(n)")
            #expect(page.receiveText() == "pong \(n)", "the acting page lost its socket")
            let pollEnd = MonotonicClock.deadline(after: 2)
            while !waiting.isEmpty, MonotonicClock.now() < pollEnd {
                var polls = waiting.map { pollfd(fd: $0.socket.fd, events: Int16(POLLIN), revents: 0) }
                _ = poll(&polls, nfds_t(polls.count), 100)
                var still: [WebSocketClient] = []
                for (client, polled) in zip(waiting, polls) {
                    if polled.revents != 0, client.socket.receive().closed { ended += 1 } else { still.append(client) }
                }
                waiting = still
            }
        }
        let endedNs = MonotonicClock.now() - openedAt
        #expect(waiting.isEmpty, "\(waiting.count) of \(silent.count) silent pages still open 15 s on")
        n += 1
        try page.send("ping \(n)")
        #expect(page.receiveText() == "pong \(n)", "the acting page was closed with the silent ones")
        print("silent pages figures: \(silent.count) let in, \(refused) refused; the acting page opened in \(ns.ms) ms;"
              + " the silent ones closed \(endedNs.ms) ms after it")
        try rig.daemon.waitForLog(containing: "nothing received for 10 s", "the silent pages' close logged")
    }

    /// 180 wrong secrets from 30 addresses in about 0.2 s; then the right secret opens the page from a fresh
    /// address, from 127.0.0.1 and from an address of the storm, and `/pairing` says "ok" to it there, while
    /// a wrong one from that address is "too many tries". On the code before, the storm spent one budget
    /// shared by all addresses and the right secret got 403 everywhere.
    @Test func theRightSecretPairsAfterAStormOfWrongOnes() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let wrong = String(repeating: "0", count: 32)
        let request = Array("GET /ws?k=\(wrong) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".utf8)
        // Six connections from each address, all sent before any answer is read.
        var storm: [LoopbackSocket] = []
        defer { for socket in storm { socket.close() } }
        let start = MonotonicClock.now()
        for i in 0..<180 {
            let socket = try LoopbackSocket.connect(port: port, from: "127.0.4.\(i % 30 + 1)")
            try socket.send(request)
            storm.append(socket)
        }
        let sentNs = MonotonicClock.now() - start
        let statuses = storm.map { socket -> Int in
            let (bytes, _) = socket.receive { headEnd(in: $0) != nil }
            return Int(String(decoding: bytes, as: UTF8.self).dropFirst(9).prefix(3)) ?? 0
        }
        #expect(statuses.allSatisfy { $0 == 403 }, "the storm's answers: \(Set(statuses))")
        for source in ["127.0.4.200", "127.0.0.1", "127.0.4.1"] {
            let (code, client) = try WebSocketClient.open(port: port, key: secret, origin: nil, from: source)
            client?.close()
            #expect(code == 101, "the right secret from \(source) after the storm got \(code)")
        }
        let right = try Self.get("/pairing?k=\(secret)", port: port, from: "127.0.4.1")
        #expect(right.status == 200 && right.body == "ok\n", "/pairing with the right secret: \(right)")
        let another = try Self.get("/pairing?k=\(wrong)", port: port, from: "127.0.4.1")
        #expect(another.status == 429 && another.body == "too many tries\n", "/pairing with a wrong secret: \(another)")
        print("wrong-secret storm figures: 180 wrong secrets sent in \(sentNs.ms) ms")
        try rig.daemon.waitForLog(containing: "too many wrong pairing secrets", "the refusal logged")
    }

    /// The secret followed by 256 `%00` (and by other things) is not the secret: `/pairing` says "wrong
    /// secret" (403). On the code before, the comparison cut the lengths' difference to one byte (256 → 0)
    /// and answered 200 ok.
    @Test func theSecretWithAnythingAfterItIsRefused() throws {
        let (rig, port, secret, home) = try WebHardeningTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        for tail in [String(repeating: "%00", count: 256), "%00", "0", String(repeating: "a", count: 224)] {
            let answer = try Self.get("/pairing?k=\(secret)\(tail)", port: port)
            #expect(answer.status == 403 && answer.body == "wrong secret\n", "the secret and \(tail.prefix(12))… (\(tail.count) characters): \(answer)")
        }
        let padded = try Self.get("/pairing?k=" + String(repeating: "%00", count: 256) + secret, port: port)
        #expect(padded.status == 403)
        let right = try Self.get("/pairing?k=\(secret)", port: port)
        #expect(right.status == 200 && right.body == "ok\n", "the secret itself: \(right)")
    }

    /// At --log-level debug, 200 refused upgrades (a wrong secret) write a bounded number of lines: one
    /// per reason and call site per 10 s. The end is a refusal for another reason (a foreign Origin), whose
    /// first line is written at once: the lines counted are those before it. On the code before, every
    /// refused upgrade wrote a line of Hummingbird's at debug.
    @Test func refusedUpgradesWriteBoundedLinesAtDebug() throws {
        let (rig, port, _, home) = try WebHardeningTests.start(extraArguments: ["--log-level", "debug"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let mark = rig.daemon.logMark
        for _ in 0..<200 {
            let (code, client) = try WebSocketClient.open(port: port, key: "0123", origin: nil)
            client?.close()
            #expect(code == 403)
        }
        // Past the wrong-secret count, and from another address: the same lines.
        for i in 0..<50 {
            let (code, _) = try WebSocketClient.open(port: port, key: "0123", origin: nil, from: "127.0.7.\(i % 5 + 1)")
            #expect(code == 403)
        }
        let (code, _) = try WebSocketClient.open(port: port, key: "0123", origin: "http://evil.example")
        #expect(code == 403)
        try rig.daemon.waitForLog(containing: "the page's Origin is not this server", since: mark, "the end's line")
        let lines = rig.daemon.logMark - mark
        #expect(lines <= 20, "250 refused upgrades wrote \(lines) lines at debug:\n\(rig.daemon.outputTail(12))")
        print("debug log figures: 250 refused upgrades, \(lines) lines")
    }
}
