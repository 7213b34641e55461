import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchWire

/// Receives TUIO 1.1 (OSC over UDP): gates the source, decodes each datagram in place and hands every
/// frame to the sink on the same event loop, as the PoseAI listener does.
public final class TUIOUDPHandler: ChannelInboundHandler, SenderWatcher {
    public typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private var decoder = TUIODecoder()
    /// The source the decoder's touches belong to: another source starts from a clean decoder.
    private var decoderSource: SourceAddress?
    private var intake: DatagramIntake
    private let sink: any TouchSink
    private let logger: Logger

    /// Dropped datagrams and frames, by `DatagramDrop.index`.
    public var drops: DropLog<64> { intake.drops }
    /// Frames that reached the sink.
    public var delivered: UInt64 { intake.delivered }

    public init(allowList: AllowList, rateLimits: SourceRateLimiter.Limits = .default, sink: any TouchSink,
                logger: Logger) {
        self.intake = DatagramIntake(name: "tuio-udp", what: "TUIO datagram", allowList: allowList,
                                     rateLimits: rateLimits, logger: logger)
        self.sink = sink
        self.logger = logger
    }

    /// Asks the sink for the current sender, and for every change of it: on the Bridge's loop, which
    /// is this channel's (the sink is called on it for every datagram).
    public func handlerAdded(context: ChannelHandlerContext) { sink.watchSender(self) }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let now = Instant(nanoseconds: context.eventLoop.now.uptimeNanoseconds)
        guard let source = intake.admit(envelope, at: now) else { return }
        if decoderSource != source {
            decoder.reset()
            decoderSource = source
        }
        var delivered: UInt64 = 0
        let result = envelope.data.withUnsafeReadableBytes { bytes -> Result<TUIODecoder.Outcome, OSCDropReason> in
            do throws(OSCDropReason) {
                return .success(try decoder.decode(bytes) { packet in
                    delivered &+= 1
                    _ = sink.packet(packet, from: source, via: .tuio, at: now)
                })
            } catch {
                return .failure(error)
            }
        }
        intake.delivered &+= delivered
        switch result {
        case .failure(let reason):
            intake.drop(.malformed(reason), from: envelope.remoteAddress, at: now)
        case .success(let outcome):
            if outcome.lateFrames > 0 { intake.drop(.lateFrame, from: envelope.remoteAddress, at: now) }
        }
    }

    /// The listener closed (shutdown): the counters, once.
    public func channelInactive(context: ChannelHandlerContext) {
        intake.logSummary()
        context.fireChannelInactive()
    }

    /// The sink's new sender: the gate's rate budget of its own.
    public func senderChanged(to sender: SourceAddress?) { intake.senderChanged(to: sender) }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("TUIO UDP socket error: \(error)")
    }
}

/// Opens a TUIO UDP listener on `host:port`.
public enum TUIOUDPListener {
    public static func bind(
        group: any EventLoopGroup, host: String, port: Int,
        makeHandler: @escaping @Sendable () -> TUIOUDPHandler
    ) async throws -> any Channel {
        // No SO_REUSEADDR, as for the PoseAI listener: a port in use must be an error.
        try await DatagramBootstrap(group: group)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: TUIODecoder.maxPacketBytes + 1))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(makeHandler())
                }
            }
            .bind(host: host, port: port)
            .get()
    }
}
