// The web server's guards without a network: the head guard on an EmbeddedChannel (time moved by the
// test), the connection table's admission and eviction, and the input queue's coalescing. Time is the
// embedded loop's throughout: nothing here sleeps.
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing
import TouchCore
import TouchNet
import TouchTestSupport
import TouchWire
@testable import TouchWeb

/// A page packet: `Touches` events (slot, raw x, raw y; nil x = ended) and the fingers down after it.
func pagePacket(_ events: [(slot: Int, x: Int?, y: Int)], down: [Int: (Int, Int)]) -> ByteBuffer {
    let touches = PoseAIText.touches(events.map { e in e.x.map { .raw(slot: e.slot, x: $0, y: e.y) } ?? .ended(slot: e.slot) })
    let state = PoseAIText.touchState(down.mapValues { .raw(x: $0.0, y: $0.1) })
    return ByteBuffer(string: "{\"Touches\":\"\(touches)\",\"TouchState\":\"\(state)\",\"Orientation\":1}")
}

/// Whether `InputQueue.whenDrained` called back.
private final class Told: Sendable {
    let raised = Mutex(false)
}

/// The label a test gave a queued item (as `text` commands).
private func label(_ item: InputQueue.Item) -> String {
    if case .command(.text(let text)) = item.input { return text }
    return "?"
}

@Suite struct InputQueueTests {
    @Test func movesOfFingersAlreadyDownAreMovesEverythingElseIsKept() {
        var reader = MessageReader()
        let t = Instant(nanoseconds: 1_000_000_000)
        func kind(_ buffer: ByteBuffer) -> QueuedKind { reader.read(buffer, received: t).kind }
        #expect(kind(pagePacket([(0, 100, 100)], down: [0: (100, 100)])) == .keep, "a begin")
        #expect(kind(pagePacket([(0, 110, 100)], down: [0: (110, 100)])) == .move(slots: 0b1))
        #expect(kind(pagePacket([(1, 500, 500)], down: [0: (110, 100), 1: (500, 500)])) == .keep, "a second finger begins")
        #expect(kind(pagePacket([(0, 120, 100), (1, 510, 500)], down: [0: (120, 100), 1: (510, 500)])) == .move(slots: 0b11))
        #expect(kind(pagePacket([(1, nil, 0)], down: [0: (120, 100)])) == .keep, "an end")
        #expect(kind(ByteBuffer(string: "{\"TouchState\":\"" + String(repeating: "====", count: 10) + "\"}")) == .keep, "a heartbeat")
        #expect(kind(ByteBuffer(string: "click right")) == .keep)
        #expect(kind(ByteBuffer(string: "{not json")) == .dropped)
        #expect(kind(ByteBuffer(string: "jump")) == .dropped)
    }

    /// Each message is decoded once, by its reader: what is queued is the decoded packet or command.
    @Test func theReaderQueuesWhatItDecoded() {
        var reader = MessageReader()
        let t = Instant(nanoseconds: 1_000_000_000)
        guard case .packet(let packet) = reader.read(pagePacket([(0, 100, 100)], down: [0: (100, 100)]), received: t).input else {
            Issue.record("a packet was not decoded"); return
        }
        #expect(packet.events.map(\.description) == ["0@(100,100)"])
        guard case .command(.click(let button, _)) = reader.read(ByteBuffer(string: "click right"), received: t).input else {
            Issue.record("a command was not parsed"); return
        }
        #expect(button.rawValue == 3)
        guard case .dropped(.undecodablePacket, let detail?) = reader.read(ByteBuffer(string: "{not json"), received: t).input else {
            Issue.record("a refused packet was not dropped with its reason"); return
        }
        #expect(!detail.isEmpty)
        let large = ByteBuffer(repeating: UInt8(ascii: "{"), count: PoseAIDecoder.maxPacketBytes + 1)
        guard case .dropped(.tooLarge, _) = reader.read(large, received: t).input else { Issue.record("too large, not dropped"); return }
    }

    @Test func queuedMovesCoalesceBeginsEndsAndCommandsStay() {
        let queue = InputQueue(capacity: 8)
        let t = Instant(nanoseconds: 1_000_000_000)
        func item(_ kind: QueuedKind, _ text: String) -> InputQueue.Item { .init(input: .command(.text(text)), kind: kind, received: t) }
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
        #expect(items.map(label) == ["begin", "m3", "m4", "click right", "m5", "end"])
        #expect(queue.coalescedCount == 2)
        #expect(queue.append(item(.move(slots: 1), "m6")) == .queued(scheduleDrain: true), "a drain was taken: the next append schedules one")
    }

    @Test func aFullQueueDropsItsOldestMoveAndOtherwiseMakesTheReaderWait() {
        let queue = InputQueue(capacity: 3)
        let t = Instant(nanoseconds: 1_000_000_000)
        func item(_ kind: QueuedKind, _ text: String) -> InputQueue.Item { .init(input: .command(.text(text)), kind: kind, received: t) }
        _ = queue.append(item(.move(slots: 0b1), "m1"))
        _ = queue.append(item(.keep, "k1"))
        _ = queue.append(item(.keep, "k2"))
        #expect(queue.append(item(.keep, "k3")) != .full, "room made by dropping m1")
        #expect(queue.append(item(.keep, "k4")) == .full, "nothing left that may be dropped")
        let told = Told()
        queue.whenDrained { told.raised.withLock { $0 = true } }
        #expect(told.raised.withLock { $0 } == false, "told of a drain before it")
        var items: [InputQueue.Item] = []
        queue.take(into: &items)
        #expect(told.raised.withLock { $0 }, "the drain did not tell the waiting reader")
        #expect(items.map(label) == ["k1", "k2", "k3"])
        let toldAtOnce = Told()
        queue.whenDrained { toldAtOnce.raised.withLock { $0 = true } }
        #expect(toldAtOnce.raised.withLock { $0 }, "room already: told at once")
    }

    @Test func onlyMovesGoStale() {
        let received = Instant(nanoseconds: 1_000_000_000)
        let move = InputQueue.Item(input: .command(.release), kind: .move(slots: 1), received: received)
        let keep = InputQueue.Item(input: .command(.release), kind: .keep, received: received)
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
        let channel = EmbeddedChannel()
        let table = ConnectionTable(loop: channel.embeddedEventLoop, logger: .init(label: "test"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        guard case .admit = table.admit(channel, from: SourceAddress(ipv4: 0x7f00_0001, port: 9), now: channel.embeddedEventLoop.now) else {
            throw CancellationError()
        }
        try channel.pipeline.syncOperations.addHandler(HTTPHeadGuard(table: table))
        return (channel, table)
    }

    /// `guarded()` with NIO's HTTP parser and encoder behind the guard and the upgrade gate behind
    /// them, as the server has it; an upgrade request written in.
    static func gated(mayUpgrade: Bool) throws -> EmbeddedChannel {
        let (channel, _) = try guarded()
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
        try pipeline.addHandler(HTTPResponseEncoder())
        try pipeline.addHandler(UpgradeGate(mayUpgrade: { _, _, _ in mayUpgrade }))
        try channel.writeInbound(ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"))
        return channel
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

    /// The gate lets an upgrade through (as for the paired page) and takes the head guard with it: no
    /// deadline after that, and WebSocket bytes (anything, \r\n\r\n included) pass untouched.
    @Test func anUpgradedConnectionHasNoDeadline() throws {
        let channel = try Self.gated(mayUpgrade: true)
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("the upgrade request did not pass the gate"); return
        }
        #expect(head.uri == "/ws")
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == .end(nil))
        #expect(throws: (any Error).self, "the head guard stayed after the upgrade") {
            try channel.pipeline.syncOperations.handler(type: HTTPHeadGuard.self)
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
        // What the upgrader does next (HTTP handlers out, WebSocket handlers in) is NIO's; here, with
        // the decoder taken out as the upgrader would, frames reach the end of the pipeline whole.
        let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
        channel.pipeline.syncOperations.removeHandler(context: decoder, promise: nil)
        channel.embeddedEventLoop.run()
        try channel.writeInbound(ByteBuffer(repeating: 0x0d, count: 100_000))
        #expect(try channel.readInbound(as: ByteBuffer.self)?.readableBytes == 100_000)
        #expect(channel.isActive)
    }

    /// A refused upgrade gets 403 and a close, and goes no further.
    @Test func aRefusedUpgradeIsAnswered403() throws {
        let channel = try Self.gated(mayUpgrade: false)
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil, "a refused upgrade went on")
        var answer = ""
        while let part = try channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = part { answer += String(buffer: buffer) }
        }
        #expect(answer.hasPrefix("HTTP/1.1 403 "), "\(answer)")
        #expect(!channel.isActive)
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
        let loop = EmbeddedEventLoop()
        let table = ConnectionTable(perAddress: 3, total: 10, loop: loop, logger: .init(label: "test"))
        let source = SourceAddress(ipv4: 0x7f00_0001, port: 1)
        let channels = try (0..<4).map { try Self.connected("127.0.0.1", port: 1000 + $0) }
        for channel in channels.prefix(3) {
            guard case .admit(nil) = table.admit(channel, from: source, now: loop.now) else { Issue.record("refused under the cap"); return }
        }
        // The first is answering a request (not evictable): the second, oldest unfinished, goes.
        table.setEvictable(channels[0], false)
        guard case .admit(let evicted?) = table.admit(channels[3], from: source, now: loop.now) else { Issue.record("no eviction"); return }
        #expect(ObjectIdentifier(evicted) == ObjectIdentifier(channels[1]))
        #expect(!channels[1].isActive, "the evicted connection is still open")
        #expect(table.count == 3)
        // None evictable: the oldest answering one goes (it is not a page).
        for channel in channels { table.setEvictable(channel, false) }
        let extra = try Self.connected("127.0.0.1", port: 2000)
        guard case .admit(let answering?) = table.admit(extra, from: source, now: loop.now) else { Issue.record("no eviction"); return }
        #expect(ObjectIdentifier(answering) == ObjectIdentifier(channels[0]))
        // Another address is not affected by this one's cap.
        let other = try Self.connected("127.0.0.2", port: 2000)
        guard case .admit(nil) = table.admit(other, from: SourceAddress(ipv4: 0x7f00_0002, port: 1), now: loop.now) else { Issue.record("refused"); return }
        table.release(channels[2])
        #expect(table.count == 3)
    }

    @Test func theTotalIsCappedToo() throws {
        let loop = EmbeddedEventLoop()
        let table = ConnectionTable(perAddress: 16, total: 4, loop: loop, logger: .init(label: "test"))
        var channels: [EmbeddedChannel] = []
        for i in 0..<4 {
            let channel = try Self.connected("10.0.0.\(i + 1)", port: 1)
            channels.append(channel)
            guard case .admit(nil) = table.admit(channel, from: SourceAddress(ipv4: 0x0a00_0001 + UInt32(i), port: 1), now: loop.now) else {
                Issue.record("refused under the cap"); return
            }
            table.setEvictable(channel, false)
        }
        table.setEvictable(channels[2], true)
        let fifth = try Self.connected("10.0.0.9", port: 1)
        guard case .admit(let evicted?) = table.admit(fifth, from: SourceAddress(ipv4: 0x0a00_0009, port: 1), now: loop.now) else { Issue.record("no eviction"); return }
        #expect(ObjectIdentifier(evicted) == ObjectIdentifier(channels[2]), "the one that may go goes first, though older ones are answering")
    }
}

/// Admission at accept, the one allow-list check of a connection: a peer outside --allow is closed
/// before any handler sees a byte; an allowed one goes on to the channel behind.
@Suite struct AdmissionTests {
    /// The channel behind admission: records that its setup ran.
    struct Behind: ServerChildChannel {
        struct Value: ServerChildChannelValue { let channel: any Channel }
        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
            channel.eventLoop.makeSucceededFuture(Value(channel: channel))
        }
        func handle(value: Value, logger: Logger) async {}
    }

    @Test func aPeerOutsideTheAllowListIsClosedAtAcceptAndAnAllowedOneGoesOn() throws {
        let loop = EmbeddedEventLoop()
        let table = NIOLoopBoundBox.makeBoxSendingValue(ConnectionTable(loop: loop, logger: .init(label: "test")), eventLoop: loop)
        let admission = AdmittedChannel(base: Behind(), allowList: AllowList([CIDR(parsing: "10.0.0.0/8")!]), table: table)
        let outside = EmbeddedChannel(loop: loop)
        try outside.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        #expect(throws: (any Error).self, "127.0.0.1 admitted outside 10.0.0.0/8") {
            try admission.setup(channel: outside, logger: .init(label: "test")).wait()
        }
        #expect(!outside.isActive)
        #expect(table.value.count == 0)
        let inside = EmbeddedChannel(loop: loop)
        try inside.connect(to: SocketAddress(ipAddress: "10.1.2.3", port: 9)).wait()
        #expect(try admission.setup(channel: inside, logger: .init(label: "test")).wait().channel === inside)
        #expect(inside.isActive)
        #expect(table.value.count == 1)
        _ = try inside.close().wait()
        loop.run()
        #expect(table.value.count == 0, "a closed connection still counted")
    }
}

@Suite struct WebDrainTests {
    /// The drain on an EmbeddedEventLoop: its clock is the reader's stamps' and the drain's, and its
    /// scheduled tasks (the paced drain) run when the test moves it.
    @Test func movesArePacedCoalescedAndNeverStaleBeginsEndsAndCommandsAlwaysApply() throws {
        let loop = EmbeddedEventLoop()
        loop.advanceTime(by: .seconds(1))
        let sink = RecordingSink()
        let input = NIOLoopBound(WebInput(sink: sink, logger: .init(label: "test")), eventLoop: loop)
        let queue = InputQueue()
        let (_, replies) = AsyncStream.makeStream(of: String.self)
        let source = SourceAddress(ipv4: 0x7f00_0001, port: 5)
        let drain = WebDrain(queue: queue, source: source, input: input, replies: replies, frames: AsyncStream.makeStream(of: [UInt8].self).continuation)
        var reader = MessageReader()
        func send(_ buffer: ByteBuffer, receivedAgo: UInt64 = 0) {
            let now = Instant(nanoseconds: loop.now.uptimeNanoseconds - receivedAgo)
            let result = queue.append(reader.read(buffer, received: now))
            if case .queued(true) = result { loop.execute { drain.run() } }
        }
        send(pagePacket([(0, 100, 100)], down: [0: (100, 100)]))
        send(pagePacket([(0, 110, 100)], down: [0: (110, 100)]))
        send(pagePacket([(0, 120, 100)], down: [0: (120, 100)]))
        loop.run()
        #expect(sink.applied == ["0@(100,100)", "0@(120,100)"], "the begin, then only the newest of two queued moves")

        // A move right after: held for the pacing; a newer one replaces it while it waits, and it is
        // applied 4 ms after the last move, not before.
        send(pagePacket([(0, 130, 100)], down: [0: (130, 100)]))
        loop.run()
        send(pagePacket([(0, 140, 100)], down: [0: (140, 100)]))
        loop.advanceTime(by: .microseconds(3_900))
        #expect(sink.applied.count == 2, "a move applied within 4 ms of the last: \(sink.applied)")
        loop.advanceTime(by: .microseconds(100))
        #expect(sink.applied.last == "0@(140,100)" && sink.applied.count == 3, "\(sink.applied)")

        // A move received 60 ms ago is stale: dropped; the command behind it is applied.
        loop.advanceTime(by: .milliseconds(5))
        send(pagePacket([(0, 150, 100)], down: [0: (150, 100)]), receivedAgo: 60_000_000)
        send(ByteBuffer(string: "click right"))
        loop.run()
        #expect(sink.applied.last?.hasPrefix("command click") == true, "\(sink.applied)")
        #expect(!sink.applied.contains("0@(150,100)"), "a stale move was applied")
        #expect(input.value.drops.totalCount(reasonIndex: WebDrop.staleMove.rawValue) == 1)

        // A move received 50 ms ago is not stale yet.
        loop.advanceTime(by: .milliseconds(5))
        send(pagePacket([(0, 155, 100)], down: [0: (155, 100)]), receivedAgo: 50_000_000)
        loop.run()
        #expect(sink.applied.last == "0@(155,100)", "\(sink.applied)")

        // The socket's end: what is queued is applied at once (no pacing), then the release.
        send(pagePacket([(0, 160, 100)], down: [0: (160, 100)]))
        send(pagePacket([(0, nil, 0)], down: [:]))
        drain.run(final: true)
        input.value.disconnected(source, at: Instant(nanoseconds: loop.now.uptimeNanoseconds))
        #expect(Array(sink.applied.suffix(3)) == ["0@(160,100)", "0 ended", "disconnected"], "\(sink.applied)")
        try loop.syncShutdownGracefully()
    }
}

/// What a connection blocked on its peer's reading is: idle, as far as making room goes.
@Suite struct UnreadAnswerTests {
    /// A request whose answer waits for a peer that does not read (the channel unwritable: more than
    /// NIO's high-water mark waits) may be closed to make room, and is closed once it has waited 30 s; a
    /// peer that reads again makes it an answering connection again.
    @Test func aConnectionWhoseAnswerIsNotReadMayGoAndIsClosedAfterThirtySeconds() throws {
        let (channel, table) = try HeadGuardTests.guarded()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(table.isEvictable(channel) == false, "a connection answering a request to a peer that reads may go")
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(table.isEvictable(channel) == true, "a connection whose answer its peer does not read may not go")
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(table.isEvictable(channel) == false)
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "an answer unread for 30 s, its connection still open")
    }

    /// A connection answering a peer that reads is closed only by the idle rule after its answer.
    @Test func anAnswerThePeerReadsKeepsItsConnection() throws {
        let (channel, _) = try HeadGuardTests.guarded()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(31))
        #expect(channel.isActive, "a connection whose answer is being made was closed")
    }
}

/// Paired WebSockets (pages) in the connection table: a few per address, closed when silent, closed to
/// make room only when quiet and only when nothing else can go.
@Suite struct PageRoomTests {
    static let source = SourceAddress(ipv4: 0x7f00_0001, port: 1)

    /// `count` connections from 127.0.0.1 admitted, made pages at the loop's `now`.
    static func pages(_ count: Int, table: ConnectionTable, loop: EmbeddedEventLoop) throws -> [EmbeddedChannel] {
        try (0..<count).map { i in
            let channel = try ConnectionTableTests.connected("127.0.0.1", port: 3000 + i)
            guard case .admit = table.admit(channel, from: source, now: loop.now) else { throw CancellationError() }
            guard table.admitPage(channel, now: loop.now) != nil else { throw CancellationError() }
            return channel
        }
    }

    @Test func anAddressHoldsFourPagesAndAFifthClosesTheQuietestOrIsRefused() throws {
        let loop = EmbeddedEventLoop()
        let table = ConnectionTable(loop: loop, logger: .init(label: "test"))
        let pages = try Self.pages(4, table: table, loop: loop)
        // All four heard from within 5 s: a fifth is refused.
        loop.advanceTime(by: .seconds(4))
        for page in pages.dropFirst() { table.activity(of: page)?.heard(atUptimeNanoseconds: loop.now.uptimeNanoseconds) }
        let fifth = try ConnectionTableTests.connected("127.0.0.1", port: 4000)
        guard case .admit = table.admit(fifth, from: Self.source, now: loop.now) else { Issue.record("refused at accept"); return }
        #expect(table.admitPage(fifth, now: loop.now) == nil, "a fifth page while the four are heard from")
        #expect(pages.allSatisfy { $0.isActive })
        // The first has been quiet for 5 s: it makes room.
        loop.advanceTime(by: .seconds(1))
        #expect(table.admitPage(fifth, now: loop.now) != nil, "no room made by the page quiet for 5 s")
        #expect(!pages[0].isActive, "the quiet page is still open")
        #expect(pages.dropFirst().allSatisfy { $0.isActive }, "a page heard from was closed")
        #expect(table.pageCount == 4)
        // Another address has its own four.
        let elsewhere = try ConnectionTableTests.connected("127.0.0.2", port: 4000)
        guard case .admit = table.admit(elsewhere, from: SourceAddress(ipv4: 0x7f00_0002, port: 1), now: loop.now) else { Issue.record("refused"); return }
        #expect(table.admitPage(elsewhere, now: loop.now) != nil)
    }

    @Test func aPageThatSendsNothingForTenSecondsIsClosed() throws {
        let loop = EmbeddedEventLoop()
        let table = ConnectionTable(loop: loop, logger: .init(label: "test"))
        let pages = try Self.pages(2, table: table, loop: loop)
        // The second pings every 2 s (as the page does); the first says nothing.
        for _ in 0..<5 {
            loop.advanceTime(by: .seconds(2))
            table.activity(of: pages[1])?.heard(atUptimeNanoseconds: loop.now.uptimeNanoseconds)
        }
        #expect(!pages[0].isActive, "a page silent for 10 s is still open")
        for _ in 0..<10 {
            loop.advanceTime(by: .seconds(2))
            table.activity(of: pages[1])?.heard(atUptimeNanoseconds: loop.now.uptimeNanoseconds)
        }
        #expect(pages[1].isActive, "a page that pings every 2 s was closed")
        // It stops: closed 10 s after its last frame, not before.
        loop.advanceTime(by: .milliseconds(9_900))
        #expect(pages[1].isActive)
        loop.advanceTime(by: .milliseconds(200))
        #expect(!pages[1].isActive, "silent for 10 s, still open")
    }

    /// The table full of pages: a new connection closes the quietest page if it is quiet, else it is
    /// refused; with any connection that is not a page there, that one goes, however quiet the pages.
    @Test func pagesMakeRoomOnlyWhenQuietAndWhenNothingElseCanGo() throws {
        let loop = EmbeddedEventLoop()
        let table = ConnectionTable(perAddress: 16, total: 5, loop: loop, logger: .init(label: "test"))
        let pages = try Self.pages(4, table: table, loop: loop)
        let answering = try ConnectionTableTests.connected("127.0.0.1", port: 5000)
        guard case .admit = table.admit(answering, from: Self.source, now: loop.now) else { Issue.record("refused"); return }
        table.setEvictable(answering, false)
        loop.advanceTime(by: .seconds(6))
        let newcomer = try ConnectionTableTests.connected("127.0.0.9", port: 5000)
        guard case .admit(let first?) = table.admit(newcomer, from: SourceAddress(ipv4: 0x7f00_0009, port: 1), now: loop.now) else {
            Issue.record("no room made"); return
        }
        #expect(ObjectIdentifier(first) == ObjectIdentifier(answering), "a page went before a connection that is not one")
        #expect(pages.allSatisfy { $0.isActive })
        // Now pages and the newcomer, which is answering too: it goes first.
        table.setEvictable(newcomer, false)
        let next = try ConnectionTableTests.connected("127.0.0.10", port: 5000)
        guard case .admit(let second?) = table.admit(next, from: SourceAddress(ipv4: 0x7f00_000a, port: 1), now: loop.now) else {
            Issue.record("no room made"); return
        }
        #expect(ObjectIdentifier(second) == ObjectIdentifier(newcomer))
        guard table.admitPage(next, now: loop.now) != nil else { Issue.record("no page"); return }
        // Five pages: the quietest (the first four, all 6 s quiet; the oldest of them) makes room.
        for page in pages.dropFirst() { table.activity(of: page)?.heard(atUptimeNanoseconds: loop.now.uptimeNanoseconds) }
        let last = try ConnectionTableTests.connected("127.0.0.11", port: 5000)
        guard case .admit(let third?) = table.admit(last, from: SourceAddress(ipv4: 0x7f00_000b, port: 1), now: loop.now) else {
            Issue.record("no room made for a page"); return
        }
        #expect(ObjectIdentifier(third) == ObjectIdentifier(pages[0]), "not the quiet page")
        // Every page heard from within 5 s: refused.
        guard table.admitPage(last, now: loop.now) != nil else { Issue.record("no page"); return }
        let refused = try ConnectionTableTests.connected("127.0.0.12", port: 5000)
        guard case .refuse(.tooMany) = table.admit(refused, from: SourceAddress(ipv4: 0x7f00_000c, port: 1), now: loop.now) else {
            Issue.record("a page heard from within 5 s was closed to make room"); return
        }
    }
}

@Suite struct BoundedLogHandlerTests {
    /// A line that records what it was given.
    final class Lines: @unchecked Sendable {
        var lines: [String] = []
    }
    struct Recording: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.lines.append(event.message.description) }
    }

    /// A library's line from one call site, 1,000 times: one line, the next one 10 s later with the counts.
    @Test func oneLineACallSitePerTenSeconds() {
        let lines = Lines()
        let handler = BoundedLogHandler(base: Recording(lines: lines), interval: 10_000_000_000)
        var logger = Logger(label: "test")
        logger.handler = handler
        for _ in 0..<1_000 { logger.debug("Websocket upgrade failed") }
        logger.debug("another call site")
        #expect(lines.lines == ["Websocket upgrade failed", "another call site"])
        let shared = BoundedLogHandler(base: Recording(lines: lines), interval: 0)
        logger.handler = shared
        for _ in 0..<3 { logger.debug("again") }
        #expect(lines.lines.suffix(3) == ["again", "again", "again"], "with no interval every line is logged")
    }
}
