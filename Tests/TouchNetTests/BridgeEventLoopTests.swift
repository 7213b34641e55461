// The Bridge's own event loop (`BridgeEventLoop`) on its real thread, and a `UDPListener` on it with a
// real socket on 127.0.0.1. Nothing here waits by sleeping: every test waits on a future or on a
// datagram, with a time-out.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NIOCore
import Testing
import TouchCore
@testable import TouchNet
import TouchTestSupport

@Suite struct BridgeEventLoopTests {
    let loop: BridgeEventLoop

    init() throws {
        loop = try #require(BridgeEventLoop(name: "test-loop"))
    }

    @Test func jobsFromAnotherThreadRunOnTheLoopInTheirOrder() async throws {
        #expect(!loop.inEventLoop)
        let seen = try await loop.submit { NIOLoopBoundBox([Int](), eventLoop: self.loop) }.get()
        for i in 0..<1000 { loop.execute { seen.value.append(i) } }
        let (order, onLoop) = try await loop.submit { (seen.value, self.loop.inEventLoop) }.get()
        #expect(onLoop)
        #expect(order == Array(0..<1000))
        loop.shutdown()
    }

    /// Jobs the loop gives itself run after the one that gave them, in order.
    @Test func jobsFromTheLoopItselfRunAfterIt() async throws {
        let order = try await loop.submit { () -> EventLoopFuture<[String]> in
            let seen = NIOLoopBoundBox(["first"], eventLoop: self.loop)
            let done = self.loop.makePromise(of: [String].self)
            self.loop.execute { seen.value.append("second") }
            self.loop.execute { seen.value.append("third"); done.succeed(seen.value) }
            seen.value.append("still first")
            return done.futureResult
        }.get().get()
        #expect(order == ["first", "still first", "second", "third"])
        loop.shutdown()
    }

    /// The loop never reads its `eventfd`, whose count grows by one a wake-up: at the count's limit a
    /// job from another thread still wakes it (the write that says `EAGAIN` is made again after a read).
    /// Each job writes a byte to a pipe, which the test waits for with `poll(2)`, up to 10 s.
    @Test func aJobWakesTheLoopWhenTheWakeUpCountIsFull() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let writeEnd = ends[1]
        func ran(_ value: UInt8) -> Bool {
            loop.execute {
                var byte = value
                _ = write(writeEnd, &byte, 1)
            }
            var ready = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 10_000) == 1 else { return false }
            var byte: UInt8 = 0
            return read(ends[0], &byte, 1) == 1 && byte == value
        }
        #expect(ran(1))
        loop.fillWakeCount()
        // The fill is a wake-up of its own, which may run the first job given after it; the next one needs
        // a wake-up of its own.
        #expect(ran(2), "a job woke the loop with its wake-up count full")
        #expect(ran(3), "a job woke the loop with its wake-up count full")
        loop.shutdown()
    }

    @Test func timersFireInTheirDeadlinesOrderAndACancelledOneNever() async throws {
        let fired = try await loop.submit { NIOLoopBoundBox([String](), eventLoop: self.loop) }.get()
        let now = NIODeadline.now()
        let late = loop.scheduleTask(deadline: now + .milliseconds(30)) { fired.value.append("30 ms") }
        let early = loop.scheduleTask(deadline: now + .milliseconds(10)) { fired.value.append("10 ms") }
        let cancelled = loop.scheduleTask(deadline: now + .milliseconds(20)) { fired.value.append("20 ms") }
        let last = loop.scheduleTask(deadline: now + .milliseconds(40)) { fired.value.append("40 ms") }
        cancelled.cancel()
        try await last.futureResult.get()
        try await early.futureResult.get()
        try await late.futureResult.get()
        await #expect(throws: EventLoopError.cancelled) { try await cancelled.futureResult.get() }
        #expect(try await loop.submit { fired.value }.get() == ["10 ms", "30 ms", "40 ms"])
        #expect(NIODeadline.now() >= now + .milliseconds(40), "the last timer fired at its deadline, not before")
        loop.shutdown()
    }

    /// The Bridge arms and cancels its timer on the loop (`BridgeHost.arm`).
    @Test func aTimerArmedAndCancelledOnTheLoopNeverFires() async throws {
        let fired = try await loop.submit { () -> EventLoopFuture<[String]> in
            let fired = NIOLoopBoundBox([String](), eventLoop: self.loop)
            let now = NIODeadline.now()
            self.loop.assumeIsolated().scheduleTask(deadline: now + .milliseconds(5)) { fired.value.append("cancelled") }.cancel()
            return self.loop.assumeIsolated().scheduleTask(deadline: now + .milliseconds(10)) { fired.value.append("kept"); return fired.value }.futureResult
        }.get().get()
        #expect(fired == ["kept"])
        loop.shutdown()
    }

    /// As NIO's loops, a loop that has ended takes no more jobs (a future's callback included): the
    /// callback is given before the end.
    @Test func theEndFailsTheTimersLeft() async throws {
        let pending = loop.scheduleTask(in: .hours(1)) { () -> Void in Issue.record("an hour passed") }
        let (ended, outcome) = AsyncStream.makeStream(of: Result<Void, any Error>.self)
        pending.futureResult.whenComplete { outcome.yield($0) }
        loop.shutdown()
        var results = ended.makeAsyncIterator()
        let result = try #require(await results.next())
        #expect(throws: EventLoopError.shutdown) { try result.get() }
    }

    /// A phone's hello on a real socket is answered with the handshake, to the port it came from; a touch
    /// behind it reaches the Bridge from the same address, before the next hello's answer.
    /// A watched socket with room to write calls its `onWritable` (and not its `onReadable`) until
    /// `stopWritable`; what the other end sends then calls `onReadable` (a page's socket,
    /// `BridgeWebSocket`).
    @Test func aWatchedSocketIsCalledForRoomToWriteAndForWhatCameIn() async throws {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let (ours, theirs) = (ends[0], ends[1])
        let (writable, readable) = try await loop.submit { () -> (EventLoopFuture<Int>, EventLoopFuture<Int>) in
            let wrote = self.loop.makePromise(of: Int.self), read = self.loop.makePromise(of: Int.self)
            let calls = NIOLoopBoundBox((writable: 0, readable: 0), eventLoop: self.loop)
            try self.loop.watch(ours) {
                calls.value.readable += 1
                var byte: UInt8 = 0
                if Glibc.read(ours, &byte, 1) == 1 { read.succeed(calls.value.writable) }
            }
            try self.loop.watchWritable(ours) {
                calls.value.writable += 1
                self.loop.stopWritable(ours)
                // Only now has the other end something to send.
                var byte: UInt8 = 7
                _ = Glibc.write(theirs, &byte, 1)
                wrote.succeed(calls.value.readable)
            }
            return (wrote.futureResult, read.futureResult)
        }.get()
        #expect(try await writable.get() == 0, "the room to write also called onReadable")
        #expect(try await readable.get() == 1, "onWritable was called again after stopWritable")
        try await loop.submit { self.loop.unwatch(ours) }.get()
        loop.shutdown()
    }

    @Test func aListenerReadsARealSocketAndAnswersTheSource() async throws {
        let handshake = Array("HANDSHAKE".utf8)
        let (sink, listener) = try await loop.submit {
            let sink = RecordingSink()
            let handler = PoseAIUDPHandler(allowList: .defaultPrivate, sink: sink, handshake: handshake, logger: logger)
            let listener = try PoseAIUDPListener.bind(loop: self.loop, host: "127.0.0.1", port: 0, allowList: .defaultPrivate,
                                                      handler: handler, logger: logger).listener
            return (NIOLoopBound(sink, eventLoop: self.loop), NIOLoopBound(listener, eventLoop: self.loop))
        }.get()
        let port = try await loop.submit { listener.value.port }.get()
        #expect(port != 0, "the system's port, as the socket is bound")
        let phone = try Phone(to: port)
        defer { phone.close() }

        let hello = #"{"sessionUUID":"x","userName":"phone"}"#
        phone.send(Array(hello.utf8))
        #expect(phone.receive() == handshake)
        phone.send(Array(typicalPacket.utf8))
        phone.send(Array(hello.utf8))
        #expect(phone.receive() == handshake)

        let (transports, sender, contacts) = try await loop.submit {
            (sink.value.transports, sink.value.bridge.isSender(Sender(SourceAddress(ipv4: 0x7F00_0001, port: phone.port), via: .poseAI)), sink.value.bridge.core.hasContacts)
        }.get()
        #expect(transports == [.poseAI, .poseAI, .poseAI])
        #expect(sender, "the datagrams' source is the phone's address and port")
        #expect(contacts)
        try await loop.submit { listener.value.close() }.get()
        loop.shutdown()
    }
}

extension BridgeEventLoopTests {
    /// The sender's socket of its own, on the real loop with real sockets: made when the phone's
    /// datagram makes it the sender (the port still refused to a second bind), moved to a second phone
    /// that takes over, closed when a page takes over. While the loop is held, a flood of garbage from
    /// other ports of the phone's host and from 127.0.0.2-5 fills the listening socket's receive queue far
    /// beyond its room, with the phone's 50 packets sent among it: all 50 reach the Bridge once the loop
    /// runs again. (With one socket for everyone, the kernel drops the phone's packets with the flood's.)
    @Test func aFloodFromOthersLeavesTheSendersDatagramsFlowing() async throws {
        let (sink, listener) = try await loop.submit {
            let sink = RecordingSink()
            // Takeover at once: the second phone and the page need not wait out the first's silence.
            sink.bridge = Bridge(configuration: .init(screen: ScreenMapping(width: 1920, height: 1080)), takeoverSilence: .seconds(0))
            sink.bridge.start(screen: PixelRect(x: 0, y: 0, width: 1920, height: 1080), monitors: [], at: Instant(nanoseconds: 0), into: &sink.effects)
            let handler = PoseAIUDPHandler(allowList: .defaultPrivate, sink: sink, handshake: Array("HANDSHAKE".utf8), logger: logger)
            let listener = try PoseAIUDPListener.bind(loop: self.loop, host: "127.0.0.1", port: 0, allowList: .defaultPrivate,
                                                      handler: handler, logger: logger).listener
            return (NIOLoopBound(sink, eventLoop: self.loop), NIOLoopBound(listener, eventLoop: self.loop))
        }.get()
        let port = try await loop.submit { listener.value.port }.get()
        func peer() async throws -> SourceAddress? { try await loop.submit { listener.value.senderSocketPeer }.get() }
        func applied() async throws -> Int { try await loop.submit { sink.value.transports.count }.get() }
        let hello = Array(#"{"sessionUUID":"x","userName":"phone"}"#.utf8)
        let phone = try Phone(to: port)
        defer { phone.close() }
        let phoneSource = SourceAddress(ipv4: 0x7F00_0001, port: phone.port)

        #expect(try await peer() == nil)
        phone.send(Array(typicalPacket.utf8))
        phone.send(hello)
        #expect(phone.receive() == Array("HANDSHAKE".utf8))
        #expect(try await peer() == phoneSource, "the sender has no socket of its own")
        #expect(UDPProbe.bindError(port: port, reusePort: true) == EADDRINUSE, "the port is open to a second bind")

        // The flood, while the loop is held: garbage (refused by the decoder, never reaching the sink).
        let before = try await applied()
        let entered = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        loop.execute {
            entered.signal()
            resume.wait()
        }
        entered.wait()
        let flooders = (1...5).compactMap { UDPProbe(from: "127.0.0.\($0)") }
        defer { for f in flooders { f.close() } }
        #expect(flooders.count == 5)
        let garbage = [UInt8](repeating: 0x7B, count: 120)
        let phonePackets = 50
        for i in 0..<(phonePackets * 100) {
            flooders[i % flooders.count].send(garbage, to: port)
            if i % 100 == 99 { phone.send(Array(typicalPacket.utf8)) }
        }
        resume.signal()
        // Then the phone's hello: its answer comes after everything the phone sent before it.
        var answered = 0
        for _ in 0..<5 where answered == 0 {
            phone.send(hello)
            if phone.receive(timeout: 2) == Array("HANDSHAKE".utf8) { answered += 1 }
        }
        #expect(answered == 1, "no handshake after the flood")
        let arrived = try await applied() - before - answered
        #expect(arrived == phonePackets, "\(arrived) of the phone's \(phonePackets) packets reached the Bridge under the flood")
        let drops = try await loop.submit { (KernelSourceFilter.kernelDrops(listener.value.socket), listener.value.senderSocketDrops) }.get()
        print("flood: \(arrived) of \(phonePackets) of the phone's packets arrived; the kernel dropped \(drops.0.map { "\($0)" } ?? "?") on the listening socket, \(drops.1) on the sender's")

        // A second phone takes over: the socket moves to it. It sends to the listening socket, whose queue may
        // still be full of the flood's tail when it starts (the kernel drops what finds it full): like any new
        // sender during a flood it says hello again until it is answered.
        let second = try Phone(to: port)
        defer { second.close() }
        var secondAnswered = false
        for _ in 0..<5 where !secondAnswered {
            second.send(Array(typicalPacket.utf8))
            second.send(hello)
            secondAnswered = second.receive(timeout: 2) == Array("HANDSHAKE".utf8)
        }
        #expect(secondAnswered, "the second phone's hello was never answered after the flood")
        #expect(try await peer() == SourceAddress(ipv4: 0x7F00_0001, port: second.port), "the sender's socket did not move to the second phone")
        // A page takes over: no UDP sender, no sender socket; the listening socket takes the phones again.
        try await loop.submit {
            _ = sink.value.command(.release, from: SourceAddress(ipv4: 0x7F00_0001, port: 1), at: Instant(nanoseconds: LoopState.monotonicNow()))
        }.get()
        #expect(try await peer() == nil, "the sender's socket outlived its sender")
        phone.send(hello)
        #expect(phone.receive() == Array("HANDSHAKE".utf8))
        try await loop.submit { listener.value.close() }.get()
        loop.shutdown()
    }
}

extension BridgeEventLoopTests {
    /// The sender's datagrams reach the Bridge in the order they were sent across the making of its own
    /// socket. While the loop is held the phone sends 12 moves: the first makes it the sender, the others
    /// wait on the listening socket. Once its socket is made (during the first move's packet call) it sends
    /// 12 more and a hello, which the kernel puts on its own socket. The Bridge gets the 24 moves in order,
    /// then the hello (read in turns, the two sockets' datagrams came interleaved).
    @Test func theSendersDatagramsKeepTheirOrderWhenItsSocketIsMade() async throws {
        let (sink, listener) = try await loop.submit {
            let sink = RecordingSink()
            let handler = PoseAIUDPHandler(allowList: .defaultPrivate, sink: sink, handshake: Array("HANDSHAKE".utf8), logger: logger)
            let listener = try PoseAIUDPListener.bind(loop: self.loop, host: "127.0.0.1", port: 0, allowList: .defaultPrivate,
                                                      handler: handler, logger: logger).listener
            return (NIOLoopBound(sink, eventLoop: self.loop), NIOLoopBound(listener, eventLoop: self.loop))
        }.get()
        let port = try await loop.submit { listener.value.port }.get()
        let phone = try Phone(to: port)
        defer { phone.close() }
        let moves = (0..<24).map { i -> [UInt8] in
            let x = -0.9 + 0.05 * Double(i)
            return Array(PoseAIText.packet(touches: PoseAIText.touches([.at(slot: 0, x: x, y: 0)]),
                                           touchState: PoseAIText.touchState([0: .at(x: x, y: 0)]), timestamp: Double(i) / 120).utf8)
        }
        let hello = Array(#"{"sessionUUID":"x","userName":"phone"}"#.utf8)
        try await loop.submit {
            sink.value.afterPacket = { sink in
                guard sink.transports.count == 1 else { return }
                for move in moves[12...] { phone.send(move) }
                phone.send(hello)
            }
        }.get()
        let entered = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        loop.execute {
            entered.signal()
            resume.wait()
        }
        entered.wait()
        for move in moves[..<12] { phone.send(move) }
        resume.signal()
        #expect(phone.receive() == Array("HANDSHAKE".utf8), "no answer to the hello")
        let (applied, peer) = try await loop.submit { (sink.value.applied, listener.value.senderSocketPeer) }.get()
        #expect(peer == SourceAddress(ipv4: 0x7F00_0001, port: phone.port), "the sender has no socket of its own")
        // Each move's x as the Bridge got it ("0@(x,y)"), in the order it got them.
        let xs = applied.compactMap { line -> Int? in
            guard line.hasPrefix("0@(") else { return nil }
            return Int(line.dropFirst(3).prefix { $0 != "," })
        }
        #expect(xs.count == 24, "\(xs.count) of 24 moves reached the Bridge before the hello: \(applied)")
        #expect(xs == xs.sorted() && Set(xs).count == xs.count, "the moves reached the Bridge out of order: \(xs)")
        try await loop.submit { listener.value.close() }.get()
        loop.shutdown()
    }
}

/// A plain UDP socket for the tests: a flooder bound to an address of its own, or a probe of a port.
struct UDPProbe {
    let fd: Int32

    /// A non-blocking socket bound to `address` (any port), or nil.
    init?(from address: String) {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(address)
        guard withUnsafePointer(to: &local, {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }) == 0 else {
            Glibc.close(fd)
            return nil
        }
    }

    /// Sends `bytes` to 127.0.0.1:`port`; a full buffer drops it.
    func send(_ bytes: [UInt8], to port: Int) {
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = UInt16(port).bigEndian
        target.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    func close() { _ = Glibc.close(fd) }

    /// The errno of binding a new socket (with `SO_REUSEPORT` when `reusePort`) to 127.0.0.1:`port`; 0
    /// when it binds.
    static func bindError(port: Int, reusePort: Bool) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var on: Int32 = 1
        if reusePort { _ = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, socklen_t(MemoryLayout<Int32>.size)) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = UInt16(port).bigEndian
        local.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return rc == 0 ? 0 : errno
    }
}

/// A phone's UDP socket on 127.0.0.1: blocking, with a receive time-out of 10 s.
struct Phone: Sendable {
    let fd: Int32
    let port: UInt16

    init(to port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.port = UInt16(bigEndian: local.sin_port)
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
    }

    /// The next datagram, or nil after `timeout` seconds (the socket's 10 s when nil).
    func receive(timeout: Int? = nil) -> [UInt8]? {
        if let timeout {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(timeout * 1000)) == 1 else { return nil }
        }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n < 0 ? nil : Array(buffer.prefix(n))
    }

    func close() { _ = Glibc.close(fd) }
}
