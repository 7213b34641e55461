import Logging
import TouchCore
import TouchWire

/// TUIO 1.1 (OSC over UDP), as `UDPListener` reads it on the Bridge's loop: gates the source, decodes
/// each datagram in place and hands every frame to the sink, as the PoseAI handler does.
public final class TUIOUDPHandler: DatagramHandler, SenderWatcher {
    private var decoder = TUIODecoder()
    /// The source the decoder's touches belong to: another source starts from a clean decoder.
    private var decoderSource: SourceAddress?
    private var intake: DatagramIntake
    private let sink: any TouchSink
    private var senderSocket = SenderSocketFollower()

    /// Dropped datagrams and frames, by `DatagramDrop.index`.
    public var drops: DropLog<64> { intake.drops }
    /// Frames that reached the sink.
    public var delivered: UInt64 { intake.delivered }

    public init(allowList: AllowList, rateLimits: SourceRateLimiter.Limits = .default, sink: any TouchSink,
                logger: Logger) {
        self.intake = DatagramIntake(name: "tuio-udp", what: "TUIO datagram", allowList: allowList,
                                     rateLimits: rateLimits, logger: logger)
        self.sink = sink
    }

    /// Asks the sink for the current sender, and for every change of it: on the Bridge's loop, where
    /// the sink is called for every datagram. A datagram that makes its source the sender gets it a
    /// socket of its own from `senderSockets`.
    public func attached(_ senderSockets: any SenderSockets) {
        senderSocket.attached(senderSockets)
        sink.watchSender(self)
    }

    public func datagram(_ bytes: UnsafeRawBufferPointer, from source: DatagramSource, at now: Instant) -> [UInt8]? {
        guard let address = intake.admit(source, bytes: bytes.count, at: now) else { return nil }
        if decoderSource != address {
            decoder.reset()
            decoderSource = address
        }
        var delivered: UInt64 = 0
        senderSocket.handing = source
        defer { senderSocket.handing = nil }
        let result: Result<TUIODecoder.Outcome, OSCDropReason>
        do throws(OSCDropReason) {
            result = .success(try decoder.decode(bytes) { packet in
                delivered &+= 1
                _ = sink.packet(packet, from: address, via: .tuio, at: now)
            })
        } catch {
            result = .failure(error)
        }
        intake.delivered &+= delivered
        switch result {
        case .failure(let reason):
            intake.drop(.malformed(reason), from: source, at: now)
        case .success(let outcome):
            if outcome.lateFrames > 0 { intake.drop(.lateFrame, from: source, at: now) }
        }
        return nil
    }

    /// The listener closed (shutdown): the counters, once.
    public func closed() { intake.logSummary() }

    /// The sink's new sender: the gate's rate budget of its own, and a socket of its own.
    public func senderChanged(to sender: SourceAddress?) {
        intake.senderChanged(to: sender)
        senderSocket.senderChanged(to: sender)
    }
}

/// Opens the TUIO UDP listener.
public enum TUIOUDPListener {
    /// Largest datagram read; bigger ones are cut and then refused by the decoder's limit.
    public static let receiveBufferBytes = TUIODecoder.maxPacketBytes + 1
    /// Datagrams read by one `recvmmsg` per wake-up of the loop, as the PoseAI listener.
    public static let datagramsPerRead = 4

    /// Listens on `host:port`, on `loop` (called there).
    public static func bind(loop: BridgeEventLoop, host: String, port: Int, handler: TUIOUDPHandler,
                            logger: Logger) throws -> UDPListener {
        try UDPListener(loop: loop, host: host, port: port, slotBytes: receiveBufferBytes,
                        datagramsPerRead: datagramsPerRead, handler: handler, logger: logger, name: "tuio-udp")
    }
}
