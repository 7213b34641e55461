// The UDP adapters in-process: NIO's EmbeddedChannel feeds datagrams to the real handlers, which gate,
// decode and hand them to the real Bridge (through TouchTestSupport's `RecordingSink`, which keeps its
// effects instead of performing them on X); what the handler writes back is read from the channel. No sockets, no X.
import Logging
import NIOCore
import NIOEmbedded
import Testing
import TouchCore
import TouchNet
import TouchTestSupport

let logger = Logger(label: "test")
let phoneAddress = try! SocketAddress(ipAddress: "192.168.1.20", port: 50000)
let outsider = try! SocketAddress(ipAddress: "203.0.113.7", port: 50000)

func datagram(_ text: String, from address: SocketAddress = phoneAddress) -> AddressedEnvelope<ByteBuffer> {
    AddressedEnvelope(remoteAddress: address, data: ByteBuffer(string: text))
}

func datagram(_ bytes: [UInt8], from address: SocketAddress = phoneAddress) -> AddressedEnvelope<ByteBuffer> {
    AddressedEnvelope(remoteAddress: address, data: ByteBuffer(bytes: bytes))
}

@Suite struct PoseAIHandlerTests {
    let sink = RecordingSink()
    let handler: PoseAIUDPHandler
    let channel: EmbeddedChannel

    init() throws {
        handler = PoseAIUDPHandler(allowList: .defaultPrivate, sink: sink, handshake: Array("HANDSHAKE".utf8), logger: logger)
        channel = EmbeddedChannel(handler: handler)
    }

    @Test func aHelloIsAnsweredToItsSender() throws {
        try channel.writeInbound(datagram(#"{"sessionUUID":"x","userName":"phone"}"#))
        let reply = try #require(try channel.readOutbound(as: AddressedEnvelope<ByteBuffer>.self))
        #expect(reply.remoteAddress == phoneAddress)
        #expect(String(buffer: reply.data) == "HANDSHAKE")
        #expect(handler.delivered == 1)
    }

    @Test func aTouchReachesTheBridgeAndNothingIsWrittenBack() throws {
        try channel.writeInbound(datagram(typicalPacket))
        #expect(try channel.readOutbound(as: AddressedEnvelope<ByteBuffer>.self) == nil)
        #expect(sink.transports == [.poseAI])
        #expect(sink.bridge.core.hasContacts)
        #expect(sink.actions.contains(.button(.left, pressed: true)), "\(sink.actions)")
    }

    @Test func aSourceOutsideTheAllowListIsDroppedBeforeDecoding() throws {
        try channel.writeInbound(datagram(#"{"sessionUUID":"x"}"#, from: outsider))
        #expect(try channel.readOutbound(as: AddressedEnvelope<ByteBuffer>.self) == nil)
        #expect(sink.transports.isEmpty)
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.sourceNotAllowed.index) == 1)
    }

    /// The gate asks the allow-list about the sender once, when it is handed over, and keeps the
    /// answer: a sender the list refuses (made the sender through another way in, here a command) stays
    /// refused, and a sender it allows passes with the answer kept.
    @Test func theSendersAnswerFromTheAllowListIsKept() throws {
        let outsiderSource = try #require(SourceAddress(outsider))
        // The embedded loop's clock stays at 0: every step here is at that instant.
        let now = Instant(nanoseconds: channel.eventLoop.now.uptimeNanoseconds)
        _ = sink.command(.release, from: outsiderSource, at: now)
        #expect(sink.bridge.isSender(outsiderSource))
        try channel.writeInbound(datagram(typicalPacket, from: outsider))
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.sourceNotAllowed.index) == 1)
        #expect(sink.transports.isEmpty)
        // The outsider's page goes; the allowed phone's first datagram is asked about as any source's,
        // the next ones by the answer kept.
        sink.sourceGone(outsiderSource, at: now)
        try channel.writeInbound(datagram(typicalPacket))
        try channel.writeInbound(datagram(typicalPacket))
        #expect(sink.transports == [.poseAI, .poseAI])
        #expect(sink.bridge.isSender(try #require(SourceAddress(phoneAddress))))
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.sourceNotAllowed.index) == 1)
    }

    @Test func anUndecodableDatagramIsCountedByItsReason() throws {
        try channel.writeInbound(datagram("{not json"))
        #expect(sink.transports.isEmpty)
        let counted = DatagramDrop.all.filter { handler.drops.totalCount(reasonIndex: $0.index) > 0 }
        #expect(counted.count == 1)
        guard case .undecodable? = counted.first else {
            Issue.record("counted as \(counted)")
            return
        }
    }

    @Test func aFloodFromOneSourceIsCutAtItsRateLimit() throws {
        let limited = PoseAIUDPHandler(allowList: .defaultPrivate,
                                       rateLimits: .init(packetsPerSecond: 50, bytesPerSecond: 0),
                                       sink: sink, handshake: [], logger: logger)
        let channel = EmbeddedChannel(handler: limited)
        for _ in 0..<200 { try channel.writeInbound(datagram(typicalPacket, from: try SocketAddress(ipAddress: "192.168.1.99", port: 4000))) }
        let passed = limited.delivered
        #expect(passed >= 50 && passed < 60, "a burst of one second's worth passes: \(passed)")
        #expect(limited.drops.totalCount(reasonIndex: DatagramDrop.tooManyPackets.index) == 200 - passed)
    }

    /// The gate keeps the sender the sink hands it after each step: the sender's datagrams are charged to
    /// a budget of its own while it is the sender, and to its host's shared one once another took over.
    @Test func aTakeoverReachesTheGate() throws {
        let limited = PoseAIUDPHandler(allowList: .defaultPrivate,
                                       rateLimits: .init(packetsPerSecond: 10, bytesPerSecond: 0),
                                       sink: sink, handshake: [], logger: logger)
        let channel = EmbeddedChannel(handler: limited)
        let phoneHostOtherPort = try SocketAddress(ipAddress: "192.168.1.20", port: 50001)
        let tablet = try SocketAddress(ipAddress: "192.168.1.30", port: 6000)
        let hello = #"{"sessionUUID":"x","userName":"phone"}"#
        func refused() -> UInt64 { limited.drops.totalCount(reasonIndex: DatagramDrop.tooManyPackets.index) }

        try channel.writeInbound(datagram(hello))
        #expect(sink.bridge.isSender(try #require(SourceAddress(phoneAddress))))
        // Another port on the phone's host spends the host's shared budget (a burst of 10)...
        for _ in 0..<20 { try channel.writeInbound(datagram("x", from: phoneHostOtherPort)) }
        let refusedWhileSender = refused()
        #expect(refusedWhileSender >= 10, "the shared budget is spent: \(refusedWhileSender)")
        // ...and the sender still passes, on its own.
        try channel.writeInbound(datagram(hello))
        #expect(refused() == refusedWhileSender)
        #expect(limited.delivered == 2)

        // After 10 s of silence the tablet takes over; the host's shared budget is spent again.
        channel.embeddedEventLoop.advanceTime(by: .seconds(11))
        try channel.writeInbound(datagram(hello, from: tablet))
        #expect(sink.bridge.isSender(try #require(SourceAddress(tablet))))
        for _ in 0..<20 { try channel.writeInbound(datagram("x", from: phoneHostOtherPort)) }
        let refusedAfterTakeover = refused()
        // The old sender now shares its host's spent budget: refused, while the new sender passes.
        try channel.writeInbound(datagram(hello))
        #expect(refused() == refusedAfterTakeover + 1, "the old sender kept a budget of its own")
        try channel.writeInbound(datagram(hello, from: tablet))
        #expect(refused() == refusedAfterTakeover + 1)
        #expect(limited.delivered == 4)
    }
}

@Suite struct TUIOHandlerTests {
    @Test func aFrameReachesTheBridgeAsATUIOPacket() throws {
        let sink = RecordingSink()
        let handler = TUIOUDPHandler(allowList: .defaultPrivate, sink: sink, logger: logger)
        let channel = EmbeddedChannel(handler: handler)
        try channel.writeInbound(datagram(OSCWrite.frame(fseq: 1, alive: [5], set: [(5, 0.5, 0.5)])))
        #expect(sink.transports == [.tuio])
        #expect(sink.bridge.core.hasContacts)
        try channel.writeInbound(datagram(OSCWrite.frame(fseq: 2, alive: [], set: [])))
        #expect(!sink.bridge.core.hasContacts, "the cursor left alive: the finger lifted")
        #expect(sink.actions.contains(.button(.left, pressed: false)))
    }

    @Test func aLateFrameAndMalformedOSCAreCountedNotApplied() throws {
        let sink = RecordingSink()
        let handler = TUIOUDPHandler(allowList: .defaultPrivate, sink: sink, logger: logger)
        let channel = EmbeddedChannel(handler: handler)
        try channel.writeInbound(datagram(OSCWrite.frame(fseq: 10, alive: [], set: [])))
        try channel.writeInbound(datagram(OSCWrite.frame(fseq: 9, alive: [5], set: [(5, 0.1, 0.1)])))
        try channel.writeInbound(datagram([0x2F, 0x78]))
        #expect(handler.delivered == 1)
        #expect(!sink.bridge.core.hasContacts)
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.lateFrame.index) == 1)
        let malformed = DatagramDrop.all.filter {
            if case .malformed = $0 { return handler.drops.totalCount(reasonIndex: $0.index) > 0 } else { return false }
        }
        #expect(malformed.count == 1)
    }
}
