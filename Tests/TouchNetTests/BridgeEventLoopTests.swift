// The Bridge's own event loop (`BridgeEventLoop`) on its real thread, and a `UDPListener` on it with a
// real socket on 127.0.0.1. Nothing here waits by sleeping: every test waits on a future or on a
// datagram, with a time-out.
#if canImport(Glibc)
import Glibc
#endif
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

    /// The next datagram, or nil after 10 s.
    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n < 0 ? nil : Array(buffer.prefix(n))
    }

    func close() { _ = Glibc.close(fd) }
}
