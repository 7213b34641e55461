import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchWire

/// Why a TUIO datagram (or frame) was dropped before reaching the core.
public enum TUIODrop: Hashable, Sendable, CustomStringConvertible {
    init(_ refusal: SourceGate.Refusal) {
        switch refusal {
        case .sourceNotAllowed: self = .sourceNotAllowed
        case .tooManyPackets: self = .tooManyPackets
        case .tooManyBytes: self = .tooManyBytes
        }
    }

    case sourceNotAllowed
    /// The source sent more datagrams per second than `--max-packets-per-second`.
    case tooManyPackets
    /// The source sent more bytes per second than `--max-bytes-per-second`.
    case tooManyBytes
    case malformed(OSCDropReason)
    /// A frame whose `fseq` is older than the last (as the reference client drops them).
    case lateFrame

    /// A dense index for `DropLog`.
    public var index: Int {
        switch self {
        case .sourceNotAllowed: return 0
        case .lateFrame: return 1
        case .tooManyPackets: return 2
        case .tooManyBytes: return 3
        case .malformed(let reason): return 4 + Int(reason.rawValue)
        }
    }

    public static let all: [TUIODrop] = [.sourceNotAllowed, .lateFrame, .tooManyPackets, .tooManyBytes]
        + OSCDropReason.allCases.map { .malformed($0) }

    public var description: String {
        switch self {
        case .sourceNotAllowed: return "source outside --allow"
        case .lateFrame: return "late TUIO frame (fseq older than the last)"
        case .tooManyPackets: return "rate limit: too many datagrams per second from this source (--max-packets-per-second)"
        case .tooManyBytes: return "rate limit: too many bytes per second from this source (--max-bytes-per-second)"
        case .malformed(let reason): return "\(reason)"
        }
    }
}

/// Receives TUIO 1.1 (OSC over UDP), decodes each datagram in place and hands every frame to the sink
/// on the same event loop, as the PoseAI listener does.
public final class TUIOUDPHandler: ChannelInboundHandler {
    public typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private var decoder = TUIODecoder()
    /// The source the decoder's touches belong to: another source starts from a clean decoder.
    private var decoderSource: SourceAddress?
    /// --allow and the per-source rate limits, checked before decoding.
    private var gate: SourceGate
    private let sink: any PoseAIPacketSink
    private let logger: Logger
    /// Dropped datagrams and frames, by `TUIODrop.index`.
    public private(set) var drops = DropLog<16>()
    /// Frames that reached the sink.
    public private(set) var delivered: UInt64 = 0

    public init(allowList: AllowList, rateLimits: SourceRateLimiter.Limits = .default, sink: any PoseAIPacketSink,
                logger: Logger) {
        self.gate = SourceGate(allowList: allowList, rateLimits: rateLimits)
        self.sink = sink
        self.logger = logger
        precondition(TUIODrop.all.count <= 16, "DropLog<16> is too small for the TUIO drop reasons")
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let now = Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds)
        let source: SourceAddress
        let sink = self.sink
        switch gate.admit(envelope.remoteAddress, bytes: envelope.data.readableBytes, at: now,
                          isSender: { sink.isSender($0) }) {
        case .admitted(let admitted):
            source = admitted
        case .refused(let refusal):
            drop(TUIODrop(refusal), from: envelope.remoteAddress, at: now)
            return
        }
        if decoderSource != source {
            decoder.reset()
            decoderSource = source
        }
        var delivered: UInt64 = 0
        let result = envelope.data.withUnsafeReadableBytes { bytes -> Result<TUIODecoder.Outcome, OSCDropReason> in
            do throws(OSCDropReason) {
                return .success(try decoder.decode(bytes) { packet in
                    delivered &+= 1
                    _ = sink.receive(packet, from: source, at: now)
                })
            } catch {
                return .failure(error)
            }
        }
        self.delivered &+= delivered
        switch result {
        case .failure(let reason):
            drop(.malformed(reason), from: envelope.remoteAddress, at: now)
        case .success(let outcome):
            if outcome.lateFrames > 0 { drop(.lateFrame, from: envelope.remoteAddress, at: now) }
        }
    }

    private func drop(_ reason: TUIODrop, from address: SocketAddress, at now: Instant) {
        guard let report = drops.record(reasonIndex: reason.index, at: now) else { return }
        let suffix = report.countsSuffix
        logger.warning("dropped a TUIO datagram from \(address): \(reason)\(suffix)")
    }

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
