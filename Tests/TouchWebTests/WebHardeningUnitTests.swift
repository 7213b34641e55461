// The web server's guards without a network: the head guard on an EmbeddedChannel (time moved by the
// test), the connection table's admission and eviction, and the input queue's coalescing.
import Glibc
import NIOCore
import NIOEmbedded
import Testing
import TouchCore
import TouchTestSupport
@testable import TouchWeb

/// A page packet: `Touches` events (slot, raw x, raw y; nil x = ended) and the fingers down after it.
func pagePacket(_ events: [(slot: Int, x: Int?, y: Int)], down: [Int: (Int, Int)]) -> ByteBuffer {
    let touches = PoseAIText.touches(events.map { e in e.x.map { .raw(slot: e.slot, x: $0, y: e.y) } ?? .ended(slot: e.slot) })
    let state = PoseAIText.touchState(down.mapValues { .raw(x: $0.0, y: $0.1) })
    return ByteBuffer(string: "{\"Touches\":\"\(touches)\",\"TouchState\":\"\(state)\",\"Orientation\":1}")
}

@Suite struct InputQueueTests {
    @Test func movesOfFingersAlreadyDownAreMovesEverythingElseIsKept() {
        var classifier = MoveClassifier()
        #expect(classifier.classify(pagePacket([(0, 100, 100)], down: [0: (100, 100)])) == .keep, "a begin")
        #expect(classifier.classify(pagePacket([(0, 110, 100)], down: [0: (110, 100)])) == .move(slots: 0b1))
        #expect(classifier.classify(pagePacket([(1, 500, 500)], down: [0: (110, 100), 1: (500, 500)])) == .keep, "a second finger begins")
        #expect(classifier.classify(pagePacket([(0, 120, 100), (1, 510, 500)], down: [0: (120, 100), 1: (510, 500)])) == .move(slots: 0b11))
        #expect(classifier.classify(pagePacket([(1, nil, 0)], down: [0: (120, 100)])) == .keep, "an end")
        #expect(classifier.classify(ByteBuffer(string: "{\"TouchState\":\"" + String(repeating: "====", count: 10) + "\"}")) == .keep, "a heartbeat")
        #expect(classifier.classify(ByteBuffer(string: "click right")) == .keep)
        #expect(classifier.classify(ByteBuffer(string: "{not json")) == .keep)
    }

    @Test func queuedMovesCoalesceBeginsEndsAndCommandsStay() {
        let queue = InputQueue(capacity: 8)
        let t = Instant(nanoseconds: 1_000_000_000)
        func item(_ kind: QueuedKind, _ text: String) -> InputQueue.Item { .init(buffer: ByteBuffer(string: text), kind: kind, received: t) }
        #expect(queue.append(item(.keep, "begin")) == .queued(scheduleDrain: true))
        #expect(queue.append(item(.move(slots: 0b1), "m1")) == .queued(scheduleDrain: false))
        #expect(queue.append(item(.move(slots: 0b1), "m2")) == .queued(scheduleDrain: false))
        #expect(queue.append(item(.move(slots: 0b11), "m3")) == .queued(scheduleDrain: false), "covers slot 0: replaces m2")
        #expect(queue.append(item(.move(slots: 0b10), "m4")) == .queued(scheduleDrain: false), "does not cover slot 0: stays behind m3")
        #expect(queue.append(item(.keep, "click right")) == .queued(scheduleDrain: false))
        #expect(queue.append(item(.move(slots: 0b10), "m5")) == .queued(scheduleDrain: false), "never merged across a command")
        #expect(queue.append(item(.keep, "end")) == .queued(scheduleDrain: false))
        var items: [InputQueue.Item] = []
        queue.take(into: &items)
        #expect(items.map { String(buffer: $0.buffer) } == ["begin", "m3", "m4", "click right", "m5", "end"])
        #expect(queue.coalescedCount == 2)
        #expect(queue.append(item(.move(slots: 1), "m6")) == .queued(scheduleDrain: true), "a drain was taken: the next append schedules one")
    }

    @Test func aFullQueueDropsItsOldestMoveAndOtherwiseMakesTheReaderWait() async {
        let queue = InputQueue(capacity: 3)
        let t = Instant(nanoseconds: 1_000_000_000)
        func item(_ kind: QueuedKind, _ text: String) -> InputQueue.Item { .init(buffer: ByteBuffer(string: text), kind: kind, received: t) }
        _ = queue.append(item(.move(slots: 0b1), "m1"))
        _ = queue.append(item(.keep, "k1"))
        _ = queue.append(item(.keep, "k2"))
        #expect(queue.append(item(.keep, "k3")) != .full, "room made by dropping m1")
        #expect(queue.append(item(.keep, "k4")) == .full, "nothing left that may be dropped")
        async let waited: Void = queue.waitForDrain()
        var items: [InputQueue.Item] = []
        queue.take(into: &items)
        await waited
        #expect(items.map { String(buffer: $0.buffer) } == ["k1", "k2", "k3"])
    }

    @Test func onlyMovesGoStale() {
        let received = Instant(nanoseconds: 1_000_000_000)
        let move = InputQueue.Item(buffer: ByteBuffer(), kind: .move(slots: 1), received: received)
        let keep = InputQueue.Item(buffer: ByteBuffer(), kind: .keep, received: received)
        #expect(!InputQueue.isStale(move, at: received + .milliseconds(50)))
        #expect(InputQueue.isStale(move, at: received + .milliseconds(51)))
        #expect(!InputQueue.isStale(keep, at: received + .seconds(10)))
    }
}

@Suite struct HeadGuardTests {
    @Test func theEndOfAHeadIsFoundAcrossReads() {
        var scanner = HeadEndScanner()
        let text = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let ends = text.indices.filter { scanner.feed(text[$0]) }
        #expect(ends == [text.count - 1])
        var bare = HeadEndScanner()
        #expect(Array("GET / HTTP/1.1\nHost: x\n\n".utf8).filter { bare.feed($0) }.count == 1)
        var none = HeadEndScanner()
        #expect(Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8).filter { none.feed($0) }.isEmpty)
    }

    /// An EmbeddedChannel with the head guard, connected, its table holding it.
    static func guarded() throws -> (EmbeddedChannel, ConnectionTable) {
        let table = ConnectionTable(logger: .init(label: "test"))
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        guard case .admit = table.admit(channel, from: SourceAddress(ipv4: 0x7f00_0001, port: 9)) else {
            throw CancellationError()
        }
        try channel.pipeline.syncOperations.addHandler(HTTPHeadGuard(table: table))
        return (channel, table)
    }

    @Test func aHeadNotWholeWithinFiveSecondsIsClosed() throws {
        let (channel, _) = try Self.guarded()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive, "a half-open request still open after 5 s")
    }

    @Test func aWholeHeadIsPassedOnAndAnIdleKeepAliveIsClosedAfterThirtySeconds() throws {
        let (channel, _) = try Self.guarded()
        let request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
        try channel.writeInbound(ByteBuffer(string: request))
        #expect(try channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == request)
        try channel.writeOutbound(IOData.byteBuffer(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")))
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "an idle keep-alive connection still open after 30 s")
    }

    @Test func anUpgradedConnectionHasNoDeadline() throws {
        let (channel, table) = try Self.guarded()
        try channel.writeInbound(ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n"))
        _ = try channel.readInbound(as: ByteBuffer.self)
        try channel.writeOutbound(IOData.byteBuffer(ByteBuffer(string: "HTTP/1.1 101 Switching Protocols\r\n\r\n")))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
        // WebSocket bytes (anything, \r\n\r\n included) pass untouched and unlimited.
        let frames = ByteBuffer(repeating: 0x0d, count: 100_000)
        try channel.writeInbound(frames)
        #expect(try channel.readInbound(as: ByteBuffer.self)?.readableBytes == 100_000)
        #expect(channel.isActive)
        _ = table
    }

    @Test func anOversizedHeadIsAnswered431AndClosed() throws {
        let (channel, _) = try Self.guarded()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 20_000)))
        let answer = try channel.readOutbound(as: IOData.self)
        guard case .byteBuffer(let buffer) = answer else {
            Issue.record("no answer written")
            return
        }
        #expect(String(buffer: buffer).hasPrefix("HTTP/1.1 431 "))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil, "the oversized head reached the HTTP parser")
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(!channel.isActive)
    }
}

@Suite struct ConnectionTableTests {
    static func connected(_ ip: String, port: Int) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: ip, port: port)).wait()
        return channel
    }

    @Test func theOldestUnfinishedConnectionOfAnAddressMakesRoomForANewOne() throws {
        let table = ConnectionTable(perAddress: 3, total: 10, logger: .init(label: "test"))
        let source = SourceAddress(ipv4: 0x7f00_0001, port: 1)
        let channels = try (0..<4).map { try Self.connected("127.0.0.1", port: 1000 + $0) }
        for channel in channels.prefix(3) {
            guard case .admit(nil) = table.admit(channel, from: source) else { Issue.record("refused under the cap"); return }
        }
        // The first is answering a request (not evictable): the second, oldest unfinished, goes.
        table.setEvictable(channels[0], false)
        guard case .admit(let evicted?) = table.admit(channels[3], from: source) else { Issue.record("no eviction"); return }
        #expect(evicted === channels[1])
        #expect(table.count == 3)
        // None evictable: the new one is refused.
        for channel in channels { table.setEvictable(channel, false) }
        let extra = try Self.connected("127.0.0.1", port: 2000)
        guard case .refuse(.tooManyFromAddress) = table.admit(extra, from: source) else { Issue.record("not refused"); return }
        // Another address is not affected by this one's cap.
        guard case .admit(nil) = table.admit(extra, from: SourceAddress(ipv4: 0x7f00_0002, port: 1)) else { Issue.record("refused"); return }
        table.release(channels[0])
        #expect(table.count == 3)
    }

    @Test func theTotalIsCappedToo() throws {
        let table = ConnectionTable(perAddress: 16, total: 4, logger: .init(label: "test"))
        var channels: [EmbeddedChannel] = []
        for i in 0..<4 {
            let channel = try Self.connected("10.0.0.\(i + 1)", port: 1)
            channels.append(channel)
            guard case .admit(nil) = table.admit(channel, from: SourceAddress(ipv4: 0x0a00_0001 + UInt32(i), port: 1)) else {
                Issue.record("refused under the cap"); return
            }
            table.setEvictable(channel, false)
        }
        let fifth = try Self.connected("10.0.0.9", port: 1)
        guard case .refuse(.tooMany) = table.admit(fifth, from: SourceAddress(ipv4: 0x0a00_0009, port: 1)) else { Issue.record("not refused"); return }
        table.setEvictable(channels[2], true)
        guard case .admit(let evicted?) = table.admit(fifth, from: SourceAddress(ipv4: 0x0a00_0009, port: 1)) else { Issue.record("no eviction"); return }
        #expect(evicted === channels[2])
    }
}

@Suite struct WebDrainTests {
    /// The drain on an EmbeddedEventLoop (its scheduled tasks run when the test advances time; the
    /// pacing itself reads the real clock, so the test waits the 4 ms out for real between steps).
    @Test func movesArePacedCoalescedAndNeverStaleBeginsEndsAndCommandsAlwaysApply() throws {
        let loop = EmbeddedEventLoop()
        let sink = RecordingSink()
        let input = NIOLoopBound(WebInput(sink: sink, logger: .init(label: "test")), eventLoop: loop)
        let queue = InputQueue()
        let (_, replies) = AsyncStream.makeStream(of: String.self)
        let source = SourceAddress(ipv4: 0x7f00_0001, port: 5)
        let drain = WebDrain(queue: queue, source: source, input: input, replies: replies)
        var classifier = MoveClassifier()
        func send(_ buffer: ByteBuffer, receivedAgo: UInt64 = 0) {
            let now = Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds - receivedAgo)
            let result = queue.append(.init(buffer: buffer, kind: classifier.classify(buffer), received: now))
            if case .queued(true) = result { loop.execute { drain.run() } }
        }
        send(pagePacket([(0, 100, 100)], down: [0: (100, 100)]))
        send(pagePacket([(0, 110, 100)], down: [0: (110, 100)]))
        send(pagePacket([(0, 120, 100)], down: [0: (120, 100)]))
        loop.run()
        #expect(sink.applied == ["0@(100,100)", "0@(120,100)"], "the begin, then only the newest of two queued moves")

        // A move right after: held for the pacing; a newer one replaces it while it waits.
        send(pagePacket([(0, 130, 100)], down: [0: (130, 100)]))
        loop.run()
        send(pagePacket([(0, 140, 100)], down: [0: (140, 100)]))
        #expect(sink.applied.count == 2, "a move applied within 4 ms of the last: \(sink.applied)")
        for _ in 0..<100 where sink.applied.count == 2 {
            usleep(5_000)
            loop.advanceTime(by: .milliseconds(5))
        }
        #expect(sink.applied.last == "0@(140,100)" && sink.applied.count == 3, "\(sink.applied)")

        // A move received 60 ms ago is stale: dropped; the command behind it is applied.
        usleep(5_000)
        send(pagePacket([(0, 150, 100)], down: [0: (150, 100)]), receivedAgo: 60_000_000)
        send(ByteBuffer(string: "click right"))
        loop.run()
        #expect(sink.applied.last?.hasPrefix("command click") == true, "\(sink.applied)")
        #expect(!sink.applied.contains("0@(150,100)"), "a stale move was applied")
        #expect(input.value.drops.totalCount(reasonIndex: WebDrop.staleMove.rawValue) == 1)

        // The socket's end: what is queued is applied at once (no pacing), then the release.
        send(pagePacket([(0, 160, 100)], down: [0: (160, 100)]))
        send(pagePacket([(0, nil, 0)], down: [:]))
        drain.run(final: true)
        input.value.disconnected(source, at: Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds))
        #expect(Array(sink.applied.suffix(3)) == ["0@(160,100)", "0 ended", "disconnected"], "\(sink.applied)")
        try loop.syncShutdownGracefully()
    }
}
