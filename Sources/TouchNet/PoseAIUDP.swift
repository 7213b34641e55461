#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchWire

/// What the owner of the core state does with a decoded packet. Called on the channel's event loop.
public protocol PoseAIPacketSink: AnyObject {
    /// Handles one decoded packet from an allowed source. The packet is only valid during the call.
    func receive(_ packet: TouchPacket, from source: SourceAddress, at now: Instant) -> PacketVerdict
    /// Whether `source` (address and port) is the live session's sender: the listeners give it a rate
    /// budget of its own, apart from other ports on its address.
    func isSender(_ source: SourceAddress) -> Bool
}

/// What the sink decided about a packet.
public enum PacketVerdict: Sendable {
    /// Applied (or ignored as harmless); nothing to send back.
    case applied
    /// A hello from the sender in session: answer with the handshake.
    case answerHello
    /// Another sender is in session; the packet was ignored.
    case refusedBusy
}

/// Why a datagram was dropped before reaching the core.
public enum DatagramDrop: Hashable, Sendable, CustomStringConvertible {
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
    case undecodable(PoseAIDecodeError.Reason)

    /// A dense index for `DropLog`: 0 for a refused source, 1 and 2 for the rate limits, 3 + the
    /// decoder's reason after them.
    public var index: Int {
        switch self {
        case .sourceNotAllowed: return 0
        case .tooManyPackets: return 1
        case .tooManyBytes: return 2
        case .undecodable(let reason): return 3 + Int(reason.rawValue)
        }
    }

    /// Every drop, in `index` order.
    public static let all: [DatagramDrop] = [.sourceNotAllowed, .tooManyPackets, .tooManyBytes]
        + PoseAIDecodeError.Reason.allCases.map { .undecodable($0) }

    public var description: String {
        switch self {
        case .sourceNotAllowed: return "source outside --allow"
        case .tooManyPackets: return "rate limit: too many datagrams per second from this source (--max-packets-per-second)"
        case .tooManyBytes: return "rate limit: too many bytes per second from this source (--max-bytes-per-second)"
        case .undecodable(let reason): return "\(reason)"
        }
    }
}

/// Receives the PoseAI stream on a UDP socket, decodes each datagram in place and hands the packet
/// to the sink on the same event loop. Answers hellos with the handshake.
public final class PoseAIUDPHandler: ChannelInboundHandler {
    public typealias InboundIn = AddressedEnvelope<ByteBuffer>
    public typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private var decoder = PoseAIDecoder()
    /// --allow and the per-source rate limits, checked before decoding.
    private var gate: SourceGate
    private let sink: any PoseAIPacketSink
    private let handshake: [UInt8]
    private let logger: Logger
    /// Dropped datagrams, by `DatagramDrop.index`.
    public private(set) var drops = DropLog<32>()
    /// Datagrams that reached the sink.
    public private(set) var delivered: UInt64 = 0

    public init(allowList: AllowList, rateLimits: SourceRateLimiter.Limits = .default, sink: any PoseAIPacketSink,
                handshake: [UInt8], logger: Logger) {
        self.gate = SourceGate(allowList: allowList, rateLimits: rateLimits)
        self.sink = sink
        self.handshake = handshake
        self.logger = logger
        precondition(DatagramDrop.all.count <= 32, "DropLog<32> is too small for the decoder's reasons")
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
            drop(DatagramDrop(refusal), from: envelope.remoteAddress, at: now)
            return
        }
        let failure = envelope.data.withUnsafeReadableBytes { bytes -> PoseAIDecodeError? in
            do throws(PoseAIDecodeError) {
                try decoder.decode(bytes)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            drop(.undecodable(failure.reason), from: envelope.remoteAddress, at: now, detail: failure.description)
            return
        }
        delivered &+= 1
        switch sink.receive(decoder.packet, from: source, at: now) {
        case .applied, .refusedBusy:
            break
        case .answerHello:
            var reply = context.channel.allocator.buffer(capacity: handshake.count)
            reply.writeBytes(handshake)
            let envelope = AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: reply)
            context.writeAndFlush(wrapOutboundOut(envelope), promise: nil)
        }
    }

    private func drop(_ reason: DatagramDrop, from address: SocketAddress, at now: Instant, detail: String? = nil) {
        guard let report = drops.record(reasonIndex: reason.index, at: now) else { return }
        let suffix = report.countsSuffix
        logger.warning("dropped a datagram from \(address): \(detail ?? reason.description)\(suffix)")
    }

    /// The listener closed (shutdown): the counters, once.
    public func channelInactive(context: ChannelHandlerContext) {
        var parts: [String] = []
        for drop in DatagramDrop.all {
            let n = drops.totalCount(reasonIndex: drop.index)
            if n > 0 { parts.append("\(n) \(drop)") }
        }
        logger.info("poseai-udp: \(delivered) datagrams delivered; dropped: \(parts.isEmpty ? "none" : parts.joined(separator: "; "))")
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A UDP socket reports ICMP errors (e.g. the phone's port closed) as read errors: not fatal.
        logger.debug("UDP socket error: \(error)")
    }
}

extension SourceAddress {
    /// The source of a datagram, as the core's pure address value.
    public init?(_ address: SocketAddress) {
        switch address {
        case .v4(let v4):
            let ip = UInt32(bigEndian: v4.address.sin_addr.s_addr)
            self.init(ipv4: ip, port: UInt16(bigEndian: v4.address.sin_port))
        case .v6(let v6):
            let bytes = v6.address.sin6_addr
            let port = UInt16(bigEndian: v6.address.sin6_port)
            guard let address = withUnsafeBytes(of: bytes, { SourceAddress(bytes: $0, port: port) }) else { return nil }
            self = address
        case .unixDomainSocket:
            return nil
        }
    }
}

/// Opens a PoseAI UDP listener on `host:port` (port 0: the system picks a free one).
public enum PoseAIUDPListener {
    /// Largest datagram read; bigger ones are cut and then refused by the decoder's 64 KiB limit.
    public static let receiveBufferBytes = PoseAIDecoder.maxPacketBytes + 1

    /// An open listener.
    public struct Bound {
        public let channel: any Channel
        /// The socket, for `KernelSourceFilter.kernelDrops` (owned by the channel: read it before closing).
        public let socket: Int32
        /// How the kernel filters sources, for the log.
        public let kernelFilter: String
    }

    /// Creates, filters and binds the socket itself (so the allow-list's IPv4 rules run in the kernel,
    /// see `KernelSourceFilter`), then hands it to NIO.
    public static func bind(
        group: any EventLoopGroup, host: String, port: Int, allowList: AllowList,
        makeHandler: @escaping @Sendable () -> PoseAIUDPHandler
    ) async throws -> Bound {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let fd = socket(address.protocol.rawValue, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        var kernelFilter = "off (a rule allows every IPv4 address, or too many rules)"
        if let program = KernelSourceFilter.program(for: allowList) {
            let error = KernelSourceFilter.attach(program, to: fd)
            kernelFilter = error == 0 ? "on (\(program.count) instructions)" : "off (SO_ATTACH_FILTER: \(String(cString: strerror(error))))"
        }
        // No SO_REUSEADDR: for UDP on Linux it would let a second daemon bind the same port and
        // silently share the phone's datagrams; a port in use must be an error.
        let rc = address.withSockAddr { Glibc.bind(fd, $0, socklen_t($1)) }
        guard rc == 0 else {
            let error = IOError(errnoCode: errno, reason: "bind(\(address))")
            close(fd)
            throw error
        }
        do {
            let channel = try await DatagramBootstrap(group: group)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: receiveBufferBytes))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(makeHandler())
                    }
                }
                .withBoundSocket(fd)
                .get()
            return Bound(channel: channel, socket: fd, kernelFilter: kernelFilter)
        } catch {
            close(fd)
            throw error
        }
    }
}
