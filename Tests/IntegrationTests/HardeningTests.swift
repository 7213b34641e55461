// Hostile input, end to end: hostile datagrams, unauthorised and second senders, rate limits, X errors.
// The real daemon on a private Xvfb, observed by xobserve; senders on 127.0.0.0/8 only.
import Foundation
import Glibc
import Synchronization
import Testing
import TouchTestSupport

/// The hostile corpus (Tests/Corpus/<name>/MANIFEST), as datagrams.
struct CorpusDatagram {
    var file: String
    var bytes: [UInt8]
    /// `reject <reason>` or `apply <events>`.
    var outcome: String
    var isReject: Bool { outcome.hasPrefix("reject") }

    static func load(_ name: String) throws -> [CorpusDatagram] {
        let dir = Binaries.packageRoot + "/Tests/Corpus/" + name
        let manifest = try String(contentsOfFile: dir + "/MANIFEST", encoding: .utf8)
        return try manifest.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, let data = FileManager.default.contents(atPath: dir + "/" + parts[0]) else {
                throw RigError("bad MANIFEST line or missing file: \(line)")
            }
            return CorpusDatagram(file: parts[0], bytes: [UInt8](data), outcome: parts[1])
        }
    }
}

/// The largest UDP/IPv4 payload: larger corpus files cannot be sent as one datagram.
let maxUDPPayload = 65_507

extension PoseAISender {
    /// Sends a hello and waits for the handshake: proves the daemon has handled every datagram this
    /// sender sent before (one socket, one loop, in order) and still answers.
    func roundTrip(timeout: Double = 3) throws -> Bool {
        try send(PoseAISender.hello())
        while let reply = receive(timeout: timeout) {
            if String(decoding: reply, as: UTF8.self).contains("HANDSHAKE") { return true }
        }
        return false
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct HardeningTests {
    static let allFree = PoseAIText.touchState([:])

    // MARK: no crash on any input, nothing stays pressed

    @Test func hostileCorpusAsDatagramsLeavesNothingPressedAndAGoodPacketStillWorks() throws {
        let corpus = try CorpusDatagram.load("poseai-hostile")
        #expect(corpus.count >= 60)
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 100, y: 100)
        #expect(try rig.sender.roundTrip(), "no handshake before the corpus\n\(rig.daemon.outputTail())")
        let start = observer.mark

        var sent = 0, unsendable: [String] = []
        var rejectReasons = Set<String>()
        for datagram in corpus {
            guard datagram.bytes.count <= maxUDPPayload else {
                // Cannot exist on the wire; the unit test replays it through the decoder.
                #expect(datagram.outcome == "reject tooLarge", "\(datagram.file) is too big to send but not expected tooLarge")
                unsendable.append(datagram.file)
                continue
            }
            try rig.sender.send(bytes: datagram.bytes)
            sent += 1
            if datagram.isReject { rejectReasons.insert(datagram.outcome) }
            let answered = try rig.sender.roundTrip()
            #expect(answered, "the daemon stopped answering after \(datagram.file)\n\(rig.daemon.outputTail())")
            if !answered { return }
        }
        print("hostile corpus: \(sent) datagrams sent, \(unsendable.count) larger than a UDP datagram (\(unsendable)), "
            + "\(rejectReasons.count) reject reasons")
        #expect(rig.daemon.isRunning, "the daemon died on the corpus\n\(rig.daemon.outputTail())")
        try observer.sync()
        let after = try observer.query()
        #expect(after.buttons == 0, "a button is held after the corpus: \(after)\n\(rig.context(since: start))")
        let events = observer.events(from: start)
        let presses = events.filter { $0.kind == "press" }.count, releases = events.filter { $0.kind == "release" }.count
        #expect(presses == releases, "presses \(presses) ≠ releases \(releases) over the corpus")
        // Each reason is logged at once the first time it happens (then rate-limited).
        let dropLines = rig.daemon.logLines(containing: "dropped a datagram")
        #expect(dropLines.count >= rejectReasons.count,
                "\(dropLines.count) drop lines for \(rejectReasons.count) reasons\n\(rig.daemon.outputTail())")

        let mark = observer.mark
        try rig.sender.send(touches: [.at(slot: 0, x: 0.5, y: 0.5)], state: [0: .at(x: 0.5, y: 0.5)])
        let target = rig.expectedPixel(x: 0.5, y: 0.5)
        try rig.waitForMotion(to: target.x, target.y, since: mark, "a good packet after the corpus")
        try rig.waitForButton("press", 1, since: mark, "a good press after the corpus")
        let end = observer.mark
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
        try rig.waitForButton("release", 1, since: end, "a good release after the corpus")
    }

    @Test func hostileTUIOCorpusAsDatagramsLeavesNothingPressedAndAGoodFrameStillWorks() throws {
        let corpus = try CorpusDatagram.load("tuio-hostile")
        #expect(corpus.count >= 50)
        let (rig, tuio) = try TUIOIntegrationTests.start()
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 100, y: 100)
        let start = observer.mark

        var sent = 0, unsendable: [String] = []
        var rejectReasons = Set<String>()
        for datagram in corpus {
            guard datagram.bytes.count <= maxUDPPayload else {
                #expect(datagram.outcome == "reject tooLarge", "\(datagram.file) is too big to send but not expected tooLarge")
                unsendable.append(datagram.file)
                continue
            }
            try tuio.send(bytes: datagram.bytes)
            sent += 1
            if datagram.isReject { rejectReasons.insert(datagram.outcome) }
            // TUIO has no handshake: pace the datagrams so the kernel's receive queue never overflows.
            MonotonicClock.sleep(until: MonotonicClock.deadline(after: 0.01))
            // Only to name the datagram that killed it; the proof it survived is the frame below.
            if !rig.daemon.isRunning {
                Issue.record("the daemon died after \(datagram.file)\n\(rig.daemon.outputTail())")
                return
            }
        }
        print("hostile TUIO corpus: \(sent) datagrams sent, \(unsendable.count) larger than a UDP datagram (\(unsendable)), "
            + "\(rejectReasons.count) reject reasons")
        // The barrier: a good frame on the same socket, handled after every corpus datagram. Its motion
        // marks the end of what the corpus did in X.
        let mark = observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 50, alive: [17], set: [(17, 0.5, 0.5)]))
        let marker = try rig.waitForMotion(to: 960, 540, since: mark, "a good TUIO frame after the corpus")
        let events = rig.inputEvents(from: start, before: marker.index)
        let presses = events.filter { $0.kind == "press" }.count, releases = events.filter { $0.kind == "release" }.count
        #expect(presses > 0, "the TUIO corpus's valid frames pressed nothing\n\(rig.context(since: start))")
        #expect(presses == releases,
                "presses \(presses) ≠ releases \(releases) over the TUIO corpus: a button is held after it\n\(rig.context(since: start))")
        // Each reason is logged at once the first time it happens (then rate-limited); late frames too.
        try rig.daemon.waitForLogCount(containing: "dropped a TUIO datagram", atLeast: rejectReasons.count + 1,
                                       "a drop line for each of \(rejectReasons.count) reasons and late frames")
        try rig.waitForButton("press", 1, since: mark, "a good TUIO press after the corpus")
        let end = observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 51, alive: [], set: []))
        try rig.waitForButton("release", 1, since: end, "a good TUIO release after the corpus")
    }

    // MARK: nobody let in

    @Test func sourcesOutsideAllowAreNeverApplied() throws {
        let rig = try Rig.start(extraArguments: ["--allow", "127.0.0.1"])
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 300, y: 300)
        let intruder = try PoseAISender(port: rig.daemon.port, host: rig.daemon.host, source: "127.0.0.2")
        let mark = observer.mark
        try intruder.send(PoseAISender.hello())
        for i in 0..<50 {
            let x = -0.8 + Double(i) * 0.01
            try intruder.send(touches: [.at(slot: 0, x: x, y: 0.8)], state: [0: .at(x: x, y: 0.8)])
        }
        // The legitimate sender, after the intruder: its packet is handled after theirs, so an answer
        // to the intruder's hello would already be waiting on its socket.
        let barrier = try rig.barrier("the allowed sender's hello")
        #expect(intruder.pending() == nil, "a source outside --allow got an answer")
        let input = rig.inputEvents(from: mark, before: barrier)
        #expect(input.isEmpty, "packets from outside --allow moved or clicked: \(input.map(\.text))")
        // The log comes through the daemon's stderr, read by a thread of its own: wait for the line.
        _ = try rig.daemon.waitForLog(containing: "kernel filter on", "the allow-list's IPv4 rules run in the kernel")
        #expect(rig.daemon.logLines(containing: "kernel filter on").count == 1,
                "the allow-list's IPv4 rules should run in the kernel\n\(rig.daemon.outputTail())")

        let good = observer.mark
        try rig.sender.send(touches: [.at(slot: 0, x: 0, y: 0)], state: [0: .at(x: 0, y: 0)])
        try rig.waitForMotion(to: rig.width / 2, rig.height / 2, since: good, "the allowed sender still works")
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
        // Counted: the kernel's drop counter, reported at exit (or userspace's line, without the filter).
        #expect(rig.daemon.terminate() == .exited(0))
        let kernel = rig.daemon.logLines(containing: "datagrams dropped by the kernel").last ?? ""
        let dropped = kernel.split(separator: " ").firstIndex(of: "datagrams").flatMap { i in
            Int(kernel.split(separator: " ")[kernel.split(separator: " ").index(before: i)]) } ?? 0
        let userspace = rig.daemon.logLines(containing: "source outside --allow").count
        print("outside --allow: \(dropped) datagrams dropped by the kernel, \(userspace) userspace log lines")
        #expect(dropped >= 51 || userspace > 0, "the refused datagrams were not counted\n\(rig.daemon.outputTail())")
    }

    /// The userspace check, which IPv6 sources reach (the kernel filter passes IPv6): a daemon on the
    /// dual-stack `::` with `--allow 127.0.0.1` refuses `[::1]` and counts it, and still takes IPv4
    /// `127.0.0.1` (IPv4-mapped, through the kernel filter).
    @Test func anIPv6SourceOutsideAllowIsRefusedInUserspaceAndCounted() throws {
        let rig = try Rig.start(extraArguments: ["--allow", "127.0.0.1", "--bind", "::"])
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 300, y: 300)
        let fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var target = sockaddr_in6()
        target.sin6_family = sa_family_t(AF_INET6)
        target.sin6_port = rig.daemon.port.bigEndian
        target.sin6_addr.__in6_u.__u6_addr8.15 = 1  // ::1
        let mark = observer.mark
        for i in 0..<20 {
            let x = -0.8 + Double(i) * 0.01
            let packet = Array(PoseAIText.packet(touches: PoseAIText.touches([.at(slot: 0, x: x, y: 0.8)]),
                                                   touchState: PoseAIText.touchState([0: .at(x: x, y: 0.8)])).utf8)
            let sent = packet.withUnsafeBytes { buf in
                withUnsafePointer(to: &target) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, buf.baseAddress, buf.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
            #expect(sent == packet.count, "sendto [::1]: \(String(cString: strerror(errno)))")
        }
        let v4 = try PoseAISender(port: rig.daemon.port, host: "127.0.0.1")
        #expect(try v4.roundTrip(), "the allowed IPv4 sender got no handshake on ::\n\(rig.daemon.outputTail())")
        try observer.sync()
        let input = observer.events(from: mark).filter { ["motion", "press", "release"].contains($0.kind) }
        #expect(input.isEmpty, "packets from [::1], outside --allow, moved or clicked: \(input.map(\.text))")
        // The log line comes on stderr, which may reach the test after the X events: wait for it.
        try rig.daemon.waitForLog(containing: "source outside --allow", "a log line for the refused IPv6 source")
        let good = observer.mark
        try v4.send(touches: [.at(slot: 0, x: 0, y: 0)], state: [0: .at(x: 0, y: 0)])
        try rig.waitForMotion(to: rig.width / 2, rig.height / 2, since: good, "the allowed IPv4 sender still works on ::")
        try v4.send(touches: [.ended(slot: 0)], state: [:])
        #expect(rig.daemon.terminate() == .exited(0))
        let summary = rig.daemon.logLines(containing: "datagrams delivered").last ?? ""
        print("ipv6 outside --allow: \(rig.daemon.logLines(containing: "source outside --allow").count) log line(s); \(summary)")
        #expect(summary.contains("20 source outside --allow"), "the 20 refused datagrams should be counted: \(summary)")
    }

    @Test func runningAsRootGetsAWarningThatSaysWhyItIsNotNeeded() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        if geteuid() == 0 {
            // Through the daemon's stderr, read by a thread of its own: wait for the line.
            _ = try rig.daemon.waitForLog(containing: "running as root, which touchbridge does not need", "the root warning")
        }
        let warning = rig.daemon.logLines(containing: "running as root, which touchbridge does not need")
        if geteuid() == 0 {
            #expect(warning.count == 1, "one root warning expected\n\(rig.daemon.outputTail())")
            #expect(warning.first?.contains("X display") == true && warning.first?.contains("UDP port above 1023") == true,
                    "the warning should say what is needed instead: \(warning)")
        } else {
            #expect(warning.isEmpty, "no root warning for a normal user: \(warning)")
        }
    }

    @Test func aSecondSenderCannotTakeOverALiveSession() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        try rig.fingerDown(x: -0.5, y: -0.5, "the first phone's finger down")
        // Another allowed sender (another address in --allow's default, loopback) tries everything:
        // hello, its own finger, lifting the first phone's finger, cancelling, all slots free.
        let other = try PoseAISender(port: rig.daemon.port, host: rig.daemon.host, source: "127.0.0.3")
        let mark = observer.mark
        try other.send(PoseAISender.hello())
        try other.send(touches: [.at(slot: 0, x: 0.6, y: 0.6)], state: [0: .at(x: 0.6, y: 0.6)])
        try other.send(touches: [.ended(slot: 0)], state: [:])
        try other.send(touches: [.cancelled(slot: 0)], state: nil)
        try other.send(PoseAIText.packet(touches: "", touchState: Self.allFree))
        // The first phone keeps streaming (as a phone does while a finger is held) and is still in charge.
        // Its hello is handled after the other's datagrams: a handshake to the other would be waiting now.
        let barrier = try rig.barrier("the first phone's hello")
        #expect(other.pending() == nil, "the second sender got a handshake during a live session")
        let input = rig.inputEvents(from: mark, before: barrier)
        #expect(input.isEmpty, "the second sender's packets reached X: \(input.map(\.text))")
        let held = try observer.query()
        #expect(held.buttonOneHeld, "the first phone's button was released by another sender: \(held)")
        try rig.daemon.waitForLog(containing: "another phone is connected", "the log line another phone is connected")

        let move = observer.mark
        try rig.sender.send(touches: [.at(slot: 0, x: 0.2, y: 0.1)], state: [0: .at(x: 0.2, y: 0.1)])
        let target = rig.expectedPixel(x: 0.2, y: 0.1)
        try rig.waitForMotion(to: target.x, target.y, since: move, "the first phone still drives")
        let end = observer.mark
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
        try rig.waitForButton("release", 1, since: end, "the first phone lifts")
    }

    /// The barrier after a flood from a rate-limited source: `send(attempt)` again every 50 ms until X
    /// shows the motion to `target` it makes (the limiter lets one through once a token refills). The
    /// flood was queued on the same socket before it, so the X events before that motion are all the flood's.
    static func markerThroughTheLimiter(_ rig: Rig, to target: (x: Int, y: Int), tolerance: Int = 1, _ what: String,
                                        send: (Int) throws -> Void) throws -> ObservedEvent {
        let mark = rig.observer.mark
        for attempt in 0..<80 {
            try send(attempt)
            if let motion = rig.observer.waitFor(from: mark, timeout: 0.05, {
                $0.isMotion(near: target.x, target.y, tolerance: tolerance)
            }) { return motion }
        }
        throw RigError("\(what): 80 tries in 4 s, no motion to \(target) got through the rate limit\n" + rig.context(since: mark))
    }

    @Test func aFloodFromOneSourceIsRateLimitedAndCounted() throws {
        let rig = try Rig.start(extraArguments: ["--max-packets-per-second", "50", "--max-bytes-per-second", "200000"])
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 10, y: 10)
        let mark = observer.mark
        // 500 distinct moves at once: a burst of one second's worth (50) passes, the rest is dropped.
        for i in 0..<500 {
            try rig.sender.send(touches: [.raw(slot: 0, x: 400 + i * 6, y: 2047)], state: [0: .raw(x: 400 + i * 6, y: 2047)])
        }
        // Then a move off the flood's row, repeated until one passes: the flood's motions are the ones before it.
        let marker = try Self.markerThroughTheLimiter(rig, to: (Rig.expectedPixel(raw: 1000, size: rig.width), Rig.expectedPixel(raw: 500, size: rig.height)),
                                                      "a move after the flood") { _ in
            try rig.sender.send(touches: [.raw(slot: 0, x: 1000, y: 500)], state: [0: .raw(x: 1000, y: 500)])
        }
        let motions = rig.inputEvents(from: mark, before: marker.index).filter { $0.kind == "motion" }.count
        print("rate limit: 500 datagrams at once against 50/s: \(motions) motions reached X")
        // Fewer than the burst can move (39 seen once, on a machine running two test suites). Not measured
        // why; a candidate: once the sender has a socket of its own (UDPListener), its newer frames can be
        // read there before older ones still queued on the listening socket, and the decoder drops those as late.
        #expect(motions >= 25 && motions <= 100, "expected about 50 motions (one second's burst, plus what refills while 500 are sent, less late frames), got \(motions)")
        try rig.daemon.waitForLog(containing: "too many datagrams per second", "the packet rate limit's log line")
        // Bytes: 200,000 B/s; three 60 kB datagrams pass, the next ones are dropped. A precondition, not
        // a wait for an outcome: the limiter's buckets refill only with time (here the packet bucket,
        // which the flood emptied, so the six datagrams and hellos below are judged on bytes alone).
        MonotonicClock.sleep(until: MonotonicClock.deadline(after: 1.1))
        var big = Array("{\"pad\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 60_000) + Array("\"}".utf8)
        // One at a time (a hello after each), so the kernel's receive buffer does not drop them first.
        for _ in 0..<6 {
            try rig.sender.send(bytes: big)
            _ = try rig.sender.roundTrip(timeout: 0.5)
        }
        big.removeAll()
        try rig.daemon.waitForLog(containing: "too many bytes per second", "the byte rate limit's log line")
        // After a second, the source is welcome again: what is tested is that time refills the buckets,
        // so the second must elapse.
        MonotonicClock.sleep(until: MonotonicClock.deadline(after: 1.1))
        #expect(try rig.sender.roundTrip(), "no handshake after the flood\n\(rig.daemon.outputTail())")
        let good = observer.mark
        try rig.sender.send(touches: [.at(slot: 0, x: -0.5, y: 0.5)], state: [0: .at(x: -0.5, y: 0.5)])
        let target = rig.expectedPixel(x: -0.5, y: 0.5)
        try rig.waitForMotion(to: target.x, target.y, since: good, "a good packet after the flood")
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
    }

    /// Two flooders on the phone's own address (other ports, no hello) at 10× the
    /// per-source rate do not spend the phone's budget: a 60 Hz drag during the flood arrives whole, and
    /// the silence watchdog never releases the finger mid-drag.
    @Test func floodersOnThePhonesOwnHostDoNotStarveItsDrag() throws {
        let rig = try Rig.start(idleReleaseMs: 400, extraArguments: ["--max-packets-per-second", "200"])
        defer { rig.stop() }
        let observer = rig.observer
        #expect(try rig.sender.roundTrip(), "no handshake\n\(rig.daemon.outputTail())")
        try rig.fingerDown(x: -0.8, y: 0.2, "the phone's finger down")
        let y = Rig.expectedPixel(raw: Rig.raw(0.2), size: rig.height)
        func raw(_ i: Int) -> Int { Rig.raw(-0.8) + 20 + i * 20 }
        /// The phone streams while its finger rests, as a real one does (`TouchState` at 60 Hz).
        func rest(seconds: Double) throws {
            let end = MonotonicClock.deadline(after: seconds)
            while MonotonicClock.now() < end {
                try rig.sender.send(touches: [], state: [0: .at(x: -0.8, y: 0.2)])
                MonotonicClock.sleep(until: MonotonicClock.deadline(after: 0.016))
            }
        }

        // Two flooders on 127.0.0.1, each at 1,000 datagrams/s (valid touch packets, refused as busy
        // once they pass the rate limit), until the drag is over; bounded in time and count.
        let junk = Array(PoseAIText.packet(touches: PoseAIText.touches([.raw(slot: 0, x: 100, y: 100)]),
                                             touchState: PoseAIText.touchState([0: .raw(x: 100, y: 100)])).utf8)
        let port = rig.daemon.port
        let deadline = MonotonicClock.deadline(after: 6)
        let stop = Mutex<Bool>(false)
        let results = Mutex<[FloodResult]>([])
        var threads: [Thread] = []
        for _ in 0..<2 {
            threads.append(Thread {
                var total = FloodResult()
                // Slices of 100 ms, so the flood stops soon after the drag.
                while !stop.withLock({ $0 }) && MonotonicClock.now() < deadline {
                    let r = flood(source: "127.0.0.1", port: port, datagrams: [junk], rate: 1000,
                                  deadline: MonotonicClock.deadline(after: 0.1), limit: 100)
                    total.sent += r.sent
                    total.failed += r.failed
                }
                results.withLock { $0.append(total) }
            })
        }
        for t in threads { t.start() }
        defer { stop.withLock { $0 = true } }
        // Let the flood spend 127.0.0.1's shared bucket first, the finger resting.
        try rest(seconds: 0.5)

        // The drag: 90 moves at 60 Hz, each to its own pixel column.
        let count = 90
        let mark = observer.mark
        let period: UInt64 = 1_000_000_000 / 60
        let t0 = MonotonicClock.now()
        for i in 0..<count {
            MonotonicClock.sleep(until: t0 + UInt64(i) * period)
            try rig.sender.send(touches: [.raw(slot: 0, x: raw(i), y: Rig.raw(0.2))], state: [0: .raw(x: raw(i), y: Rig.raw(0.2))])
        }
        let lift = observer.mark
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
        let release = try rig.waitForButton("release", 1, since: lift, timeout: 5, "the phone lifts")
        stop.withLock { $0 = true }
        for _ in 0..<300 where results.withLock({ $0.count }) < 2 {
            MonotonicClock.sleep(until: MonotonicClock.deadline(after: 0.01))
        }
        let sent = results.withLock { $0.reduce(0) { $0 + $1.sent } }
        print("same-host flood: \(sent) datagrams from two ports of 127.0.0.1 against --max-packets-per-second 200")
        #expect(sent > 1500, "the flood was too weak to test anything: \(sent) datagrams")

        // Every move arrived, in order, before the one release (the lift's).
        let events = observer.events(from: mark)
        let releases = events.filter { $0.isButton("release", 1) }
        #expect(releases.count == 1, "the finger was released \(releases.count) times during the drag\n\(rig.context(since: mark))")
        var cursor = 0, missing: [Int] = []
        for i in 0..<count {
            let x = Rig.expectedPixel(raw: raw(i), size: rig.width)
            if let j = events[cursor...].firstIndex(where: { $0.isMotion(near: x, y, tolerance: 1) && $0.tNs <= release.tNs }) {
                cursor = j + 1
            } else {
                missing.append(i)
            }
        }
        #expect(rig.daemon.logLines(containing: "phone silent").isEmpty, "the watchdog released the phone\n\(rig.daemon.outputTail())")
        if !missing.isEmpty {
            // On a loaded machine the daemon can stall for a few hundred ms (seen: 214 ms); the flood then
            // overflows the socket's receive queue and the kernel drops datagrams of every sender alike,
            // before the rate limiter this test is about sees them. The daemon says at stop how many the
            // kernel dropped: moves may go missing only if it dropped some.
            let context = rig.context(since: mark)
            _ = rig.daemon.terminate()
            let kernelDrops = rig.daemon.logLines(containing: "datagrams dropped by the kernel").compactMap { line in
                line.firstMatch(of: /poseai-udp: (\d+) datagrams dropped by the kernel/).flatMap { Int($0.1) }
            }.first ?? 0
            print("same-host flood: \(missing.count) moves missing, \(kernelDrops) datagrams dropped by the kernel (a full receive queue)")
            #expect(kernelDrops > 0, "\(missing.count) of \(count) moves never reached X, and the kernel dropped none: \(missing.prefix(20))\n\(context)")
        }
    }

    @Test func aTUIOFloodFromOneSourceIsRateLimitedAndCounted() throws {
        let (rig, tuio) = try TUIOIntegrationTests.start(extraArguments: ["--max-packets-per-second", "50", "--max-bytes-per-second", "200000"])
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 10, y: 10)
        let mark = observer.mark
        // 500 TUIO frames at once, each moving the touch elsewhere: one second's burst (50) passes.
        for i in 0..<500 {
            try tuio.send(bytes: OSCWrite.frame(fseq: Int32(i + 1), alive: [7], set: [(7, 0.1 + Float(i) * 0.0015, 0.5)]))
        }
        // Then a frame moving the touch off the flood's row, repeated (each a later fseq) until one passes.
        let marker = try Self.markerThroughTheLimiter(rig, to: (960, 216), tolerance: 2, "a TUIO frame after the flood") { attempt in
            try tuio.send(bytes: OSCWrite.frame(fseq: Int32(501 + attempt), alive: [7], set: [(7, 0.5, 0.2)]))
        }
        let motions = rig.inputEvents(from: mark, before: marker.index).filter { $0.kind == "motion" }.count
        print("rate limit: 500 TUIO frames at once against 50/s: \(motions) motions reached X")
        // Fewer than the burst can move (39 seen once, on a machine running two test suites). Not measured
        // why; a candidate: once the sender has a socket of its own (UDPListener), its newer frames can be
        // read there before older ones still queued on the listening socket, and the decoder drops those as late.
        #expect(motions >= 25 && motions <= 100, "expected about 50 motions (one second's burst, plus what refills while 500 are sent, less late frames), got \(motions)")
        try rig.daemon.waitForLog(containing: "too many datagrams per second", "the TUIO packet rate limit's log line")
        // Bytes: 200,000 B/s; three 60 kB datagrams pass, the next ones are dropped. A precondition: the
        // packet bucket, emptied by the flood, refills only with time.
        MonotonicClock.sleep(until: MonotonicClock.deadline(after: 1.1))
        let big = OSCWrite.bundle([OSCWrite.message("/pad", [.s(String(repeating: "x", count: 60_000))]),
                                     OSCWrite.message("/tuio/2Dcur", [.s("fseq"), .i(600)])])
        for _ in 0..<6 {
            try tuio.send(bytes: big)
            // Pacing (TUIO has no handshake to wait for): the kernel's receive buffer must not drop them first.
            MonotonicClock.sleep(until: MonotonicClock.deadline(after: 0.05))
        }
        try rig.daemon.waitForLog(containing: "too many bytes per second", "the TUIO byte rate limit's log line")
        // After a second, the source is welcome again: a frame moves the pointer, and lifting releases.
        // The second must elapse: what is tested is that time refills the buckets.
        MonotonicClock.sleep(until: MonotonicClock.deadline(after: 1.1))
        let good = observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 700, alive: [7], set: [(7, 0.5, 0.5)]))
        try rig.waitForMotion(to: 960, 540, since: good, "a good TUIO frame after the flood")
        let lift = observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 701, alive: [], set: []))
        try rig.waitForButton("release", 1, since: lift, "the TUIO touch lifted after the flood")
    }

    // MARK: X errors are logged and survived

    @Test func xErrorsFromInjectedRequestsAreLoggedAndSurvivedAndNothingStaysPressed() throws {
        // Every second applied packet also sends a request the X server rejects (BadValue).
        let rig = try Rig.start(extraArguments: ["--debug-x-error-every", "2"])
        defer { rig.stop() }
        let observer = rig.observer
        let start = observer.mark
        try rig.fingerDown(x: -0.6, y: -0.6, "finger down")
        for i in 0..<20 {
            let v = -0.6 + Double(i + 1) * 0.05
            let mark = observer.mark
            try rig.sender.send(touches: [.at(slot: 0, x: v, y: v)], state: [0: .at(x: v, y: v)])
            let target = rig.expectedPixel(x: v, y: v)
            try rig.waitForMotion(to: target.x, target.y, since: mark, "move \(i + 1) among X errors")
        }
        // The server answers the rejected requests asynchronously, and the log line comes on stderr:
        // wait for the first one.
        try rig.daemon.waitForLog(containing: "X11: X error", "an X error logged")
        let errors = rig.daemon.logLines(containing: "X11: X error")
        print("x errors: \(errors.count) log line(s), first: \(errors.first ?? "none")")
        #expect(!errors.isEmpty, "no X error was logged\n\(rig.daemon.outputTail())")
        #expect(errors.first?.contains("BadValue") == true, "the X error line should name the error: \(errors)")
        // Counted and rate-limited: ten errors, one line (the rest are counted into the next report).
        #expect(errors.count <= 2, "X errors are not rate-limited: \(errors.count) lines")
        #expect(rig.daemon.isRunning, "the daemon did not survive X errors\n\(rig.daemon.outputTail())")
        let held = try observer.query()
        #expect(held.buttonOneHeld, "the drag should still hold button 1: \(held)")

        // A path that ends the session, after the errors: SIGTERM releases and exits 0.
        let mark = observer.mark
        let status = rig.daemon.terminate(timeout: 5, signal: SIGTERM)
        #expect(status == .exited(0), "exit after X errors: \(String(describing: status))\n\(rig.daemon.outputTail())")
        try rig.waitForButton("release", 1, since: mark, "SIGTERM after X errors")
        #expect(try observer.query().buttons == 0)
        try observer.sync()
        let keys = observer.events(from: start).filter { $0.kind.hasPrefix("key") }
        #expect(keys.isEmpty, "the rejected requests must not reach X as key events: \(keys.map(\.text))")
    }
}
