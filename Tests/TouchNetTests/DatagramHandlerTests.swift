// The UDP handlers in-process: datagrams from made-up addresses go straight to the real handlers, which
// gate, decode and hand them to the real Bridge (through TouchTestSupport's `RecordingSink`, which keeps
// its effects instead of performing them on X); what a handler answers is its return value. Time is a
// manual clock. No sockets, no X (the socket and the loop: BridgeEventLoopTests).
import Logging
import NIOCore
import Testing
import TouchCore
import TouchNet
import TouchTestSupport

let logger = Logger(label: "test")
let phoneAddress = try! SocketAddress(ipAddress: "192.168.1.20", port: 50000)
let outsider = try! SocketAddress(ipAddress: "203.0.113.7", port: 50000)
let start = Instant(nanoseconds: 0)

/// Hands `text` to `handler` as one datagram from `address`, read at `now`; what it answers.
@discardableResult
func deliver(_ text: String, to handler: any DatagramHandler, from address: SocketAddress = phoneAddress, at now: Instant = start) -> [UInt8]? {
    deliver(Array(text.utf8), to: handler, from: address, at: now)
}

@discardableResult
func deliver(_ bytes: [UInt8], to handler: any DatagramHandler, from address: SocketAddress = phoneAddress, at now: Instant = start) -> [UInt8]? {
    bytes.withUnsafeBytes { handler.datagram($0, from: DatagramSource(address), at: now) }
}

/// What a handler asked of its listener's sender socket, in order: `open <source>`, `close`.
final class RecordingSenderSockets: SenderSockets {
    private(set) var asked: [String] = []
    func openSenderSocket(for source: DatagramSource) { asked.append("open \(source.address.map { "\($0)" } ?? "?")") }
    func closeSenderSocket() { asked.append("close") }
}

/// A handler attached, as its listener attaches it before the first datagram (to `sockets`, which the
/// handler holds weakly: the caller keeps it).
func attached<H: DatagramHandler>(_ handler: H, sockets: RecordingSenderSockets = unusedSockets) -> H {
    handler.attached(sockets)
    return handler
}

/// The sender sockets of the tests that do not look at them.
nonisolated(unsafe) let unusedSockets = RecordingSenderSockets()

@Suite struct PoseAIHandlerTests {
    let sink = RecordingSink()
    let handler: PoseAIUDPHandler

    init() throws {
        handler = attached(PoseAIUDPHandler(allowList: .defaultPrivate, sink: sink, handshake: Array("HANDSHAKE".utf8), logger: logger))
    }

    @Test func aHelloIsAnsweredWithTheHandshake() throws {
        let reply = try #require(deliver(#"{"sessionUUID":"x","userName":"phone"}"#, to: handler))
        #expect(String(decoding: reply, as: UTF8.self) == "HANDSHAKE")
        #expect(handler.delivered == 1)
    }

    @Test func aTouchReachesTheBridgeAndNothingIsWrittenBack() throws {
        #expect(deliver(typicalPacket, to: handler) == nil)
        #expect(sink.transports == [.poseAI])
        #expect(sink.bridge.core.hasContacts)
        #expect(sink.actions.contains(.button(.left, pressed: true)), "\(sink.actions)")
    }

    @Test func aSourceOutsideTheAllowListIsDroppedBeforeDecoding() throws {
        #expect(deliver(#"{"sessionUUID":"x"}"#, to: handler, from: outsider) == nil)
        #expect(sink.transports.isEmpty)
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.sourceNotAllowed.index) == 1)
    }

    /// The gate asks the allow-list about the sender once, when it is handed over, and keeps the
    /// answer: a sender the list refuses (made the sender through another way in, here a command) stays
    /// refused, and a sender it allows passes with the answer kept.
    @Test func theSendersAnswerFromTheAllowListIsKept() throws {
        let outsiderSource = try #require(SourceAddress(outsider))
        // Every step here is at the same instant.
        let now = start
        _ = sink.command(.release, from: outsiderSource, at: now)
        #expect(sink.bridge.isSender(Sender(outsiderSource, via: .web)))
        deliver(typicalPacket, to: handler, from: outsider)
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.sourceNotAllowed.index) == 1)
        #expect(sink.transports.isEmpty)
        // The outsider's page goes; the allowed phone's first datagram is asked about as any source's,
        // the next ones by the answer kept.
        sink.sourceGone(outsiderSource, at: now)
        deliver(typicalPacket, to: handler)
        deliver(typicalPacket, to: handler)
        #expect(sink.transports == [.poseAI, .poseAI])
        #expect(sink.bridge.isSender(Sender(try #require(SourceAddress(phoneAddress)), via: .poseAI)))
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.sourceNotAllowed.index) == 1)
    }

    @Test func anUndecodableDatagramIsCountedByItsReason() throws {
        deliver("{not json", to: handler)
        #expect(sink.transports.isEmpty)
        let counted = DatagramDrop.all.filter { handler.drops.totalCount(reasonIndex: $0.index) > 0 }
        #expect(counted.count == 1)
        guard case .undecodable? = counted.first else {
            Issue.record("counted as \(counted)")
            return
        }
    }

    @Test func aFloodFromOneSourceIsCutAtItsRateLimit() throws {
        let limited = attached(PoseAIUDPHandler(allowList: .defaultPrivate,
                                                rateLimits: .init(packetsPerSecond: 50, bytesPerSecond: 0),
                                                sink: sink, handshake: [], logger: logger))
        let flooder = try SocketAddress(ipAddress: "192.168.1.99", port: 4000)
        for _ in 0..<200 { deliver(typicalPacket, to: limited, from: flooder) }
        let passed = limited.delivered
        #expect(passed >= 50 && passed < 60, "a burst of one second's worth passes: \(passed)")
        #expect(limited.drops.totalCount(reasonIndex: DatagramDrop.tooManyPackets.index) == 200 - passed)
    }

    /// The gate keeps the sender the sink hands it after each step: the sender's datagrams are charged to
    /// a budget of its own while it is the sender, and to its host's shared one once another took over.
    @Test func aTakeoverReachesTheGate() throws {
        let limited = attached(PoseAIUDPHandler(allowList: .defaultPrivate,
                                                rateLimits: .init(packetsPerSecond: 10, bytesPerSecond: 0),
                                                sink: sink, handshake: [], logger: logger))
        let phoneHostOtherPort = try SocketAddress(ipAddress: "192.168.1.20", port: 50001)
        let tablet = try SocketAddress(ipAddress: "192.168.1.30", port: 6000)
        let hello = #"{"sessionUUID":"x","userName":"phone"}"#
        func refused() -> UInt64 { limited.drops.totalCount(reasonIndex: DatagramDrop.tooManyPackets.index) }

        deliver(hello, to: limited)
        #expect(sink.bridge.isSender(Sender(try #require(SourceAddress(phoneAddress)), via: .poseAI)))
        // Another port on the phone's host spends the host's shared budget (a burst of 10)...
        for _ in 0..<20 { deliver("x", to: limited, from: phoneHostOtherPort) }
        let refusedWhileSender = refused()
        #expect(refusedWhileSender >= 10, "the shared budget is spent: \(refusedWhileSender)")
        // ...and the sender still passes, on its own.
        deliver(hello, to: limited)
        #expect(refused() == refusedWhileSender)
        #expect(limited.delivered == 2)

        // After 10 s of silence the tablet takes over; the host's shared budget is spent again.
        let later = Instant(nanoseconds: 11_000_000_000)
        deliver(hello, to: limited, from: tablet, at: later)
        #expect(sink.bridge.isSender(Sender(try #require(SourceAddress(tablet)), via: .poseAI)))
        for _ in 0..<20 { deliver("x", to: limited, from: phoneHostOtherPort, at: later) }
        let refusedAfterTakeover = refused()
        // The old sender now shares its host's spent budget: refused, while the new sender passes.
        deliver(hello, to: limited, at: later)
        #expect(refused() == refusedAfterTakeover + 1, "the old sender kept a budget of its own")
        deliver(hello, to: limited, from: tablet, at: later)
        #expect(refused() == refusedAfterTakeover + 1)
        #expect(limited.delivered == 4)
    }
}

/// The sender's socket of its own (`SenderSockets`): asked for by the datagram that makes its source the
/// sender, on the listener it came in through only, and given back when another sender takes over,
/// however that one came in.
@Suite struct SenderSocketTests {
    let sink = RecordingSink()
    let sockets = RecordingSenderSockets()
    let tablet = try! SocketAddress(ipAddress: "192.168.1.30", port: 6000)
    let later = Instant(nanoseconds: 11_000_000_000)

    @Test func theDatagramThatMakesTheSenderAsksForItsSocketOnce() throws {
        let handler = attached(PoseAIUDPHandler(allowList: .defaultPrivate, sink: sink, handshake: [], logger: logger), sockets: sockets)
        let phone = try #require(SourceAddress(phoneAddress))
        deliver(typicalPacket, to: handler)
        deliver(typicalPacket, to: handler)
        deliver(typicalPacket, to: handler, from: tablet)  // refused: the phone is live
        #expect(sockets.asked == ["open \(phone)"])
        // After the phone's silence the tablet takes over: the phone's socket goes, the tablet gets one.
        deliver(typicalPacket, to: handler, from: tablet, at: later)
        let tabletSource = try #require(SourceAddress(tablet))
        #expect(sockets.asked == ["open \(phone)", "open \(tabletSource)"])
    }

    @Test func aSenderThatCameInAnotherWayGetsNoSocketHereAndTheOldOneCloses() throws {
        let poseAI = attached(PoseAIUDPHandler(allowList: .defaultPrivate, sink: sink, handshake: [], logger: logger), sockets: sockets)
        let tuioSockets = RecordingSenderSockets()
        let tuio = attached(TUIOUDPHandler(allowList: .defaultPrivate, sink: sink, logger: logger), sockets: tuioSockets)
        let phone = try #require(SourceAddress(phoneAddress))
        let tabletSource = try #require(SourceAddress(tablet))
        deliver(typicalPacket, to: poseAI)
        #expect(sockets.asked == ["open \(phone)"])
        #expect(tuioSockets.asked.isEmpty, "the TUIO listener was told of a sender that is not its own")
        // A TUIO app takes over: its socket on the TUIO listener, the PoseAI one closed.
        deliver(OSCWrite.frame(fseq: 1, alive: [5], set: [(5, 0.5, 0.5)]), to: tuio, from: tablet, at: later)
        #expect(sockets.asked == ["open \(phone)", "close"])
        #expect(tuioSockets.asked == ["open \(tabletSource)"])
        // A page's command after the TUIO app's silence: no UDP listener has a sender socket.
        let page = SourceAddress(ipv4: 0xC0A8_0128, port: 40000)
        _ = sink.command(.release, from: page, at: Instant(nanoseconds: 22_000_000_000))
        #expect(sink.bridge.isSender(Sender(page, via: .web)))
        #expect(sockets.asked == ["open \(phone)", "close"])
        #expect(tuioSockets.asked == ["open \(tabletSource)", "close"])
    }
}

@Suite struct TUIOHandlerTests {
    @Test func aFrameReachesTheBridgeAsATUIOPacket() throws {
        let sink = RecordingSink()
        let handler = attached(TUIOUDPHandler(allowList: .defaultPrivate, sink: sink, logger: logger))
        deliver(OSCWrite.frame(fseq: 1, alive: [5], set: [(5, 0.5, 0.5)]), to: handler)
        #expect(sink.transports == [.tuio])
        #expect(sink.bridge.core.hasContacts)
        deliver(OSCWrite.frame(fseq: 2, alive: [], set: []), to: handler)
        #expect(!sink.bridge.core.hasContacts, "the cursor left alive: the finger lifted")
        #expect(sink.actions.contains(.button(.left, pressed: false)))
    }

    @Test func aLateFrameAndMalformedOSCAreCountedNotApplied() throws {
        let sink = RecordingSink()
        let handler = attached(TUIOUDPHandler(allowList: .defaultPrivate, sink: sink, logger: logger))
        deliver(OSCWrite.frame(fseq: 10, alive: [], set: []), to: handler)
        deliver(OSCWrite.frame(fseq: 9, alive: [5], set: [(5, 0.1, 0.1)]), to: handler)
        deliver([0x2F, 0x78], to: handler)
        #expect(handler.delivered == 1)
        #expect(!sink.bridge.core.hasContacts)
        #expect(handler.drops.totalCount(reasonIndex: DatagramDrop.lateFrame.index) == 1)
        let malformed = DatagramDrop.all.filter {
            if case .malformed = $0 { return handler.drops.totalCount(reasonIndex: $0.index) > 0 } else { return false }
        }
        #expect(malformed.count == 1)
    }
}

@Suite struct DatagramSourceTests {
    /// What `recvmmsg` gives becomes the core's address without formatting, and NIO's text in a log line.
    @Test func aSourceIsTheCoresAddressAndNIOsText() throws {
        let v4 = try SocketAddress(ipAddress: "192.168.1.20", port: 50000)
        #expect(DatagramSource(v4).address == SourceAddress(ipv4: 0xC0A8_0114, port: 50000))
        #expect(DatagramSource(v4).description == "\(v4)")
        let v6 = try SocketAddress(ipAddress: "fe80::1", port: 7)
        let bytes: [UInt8] = [0xFE, 0x80] + Array(repeating: 0, count: 13) + [1]
        #expect(DatagramSource(v6).address == SourceAddress(bytes: bytes, port: 7))
        #expect(DatagramSource(v6).description == "\(v6)")
        #expect(DatagramSource(try SocketAddress(unixDomainSocketPath: "/tmp/x")).address == nil)
    }
}
