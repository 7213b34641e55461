#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchWire

/// Receives the PoseAI stream on a UDP socket: gates the source, decodes each datagram in place, hands
/// the packet to the sink on the same event loop and writes back what it answers (the handshake).
public final class PoseAIUDPHandler: ChannelInboundHandler, SenderWatcher {
    public typealias InboundIn = AddressedEnvelope<ByteBuffer>
    public typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private var decoder = PoseAIDecoder()
    private var intake: DatagramIntake
    private let sink: any TouchSink
    private let handshake: [UInt8]
    private let logger: Logger

    /// Dropped datagrams, by `DatagramDrop.index`.
    public var drops: DropLog<64> { intake.drops }
    /// Datagrams that reached the sink.
    public var delivered: UInt64 { intake.delivered }

    public init(allowList: AllowList, rateLimits: SourceRateLimiter.Limits = .default, sink: any TouchSink,
                handshake: [UInt8], logger: Logger) {
        self.intake = DatagramIntake(name: "poseai-udp", what: "datagram", allowList: allowList,
                                     rateLimits: rateLimits, logger: logger)
        self.sink = sink
        self.handshake = handshake
        self.logger = logger
    }

    /// Asks the sink for the current sender, and for every change of it: on the Bridge's loop, which
    /// is this channel's (the sink is called on it for every datagram).
    public func handlerAdded(context: ChannelHandlerContext) { sink.watchSender(self) }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let now = Instant(nanoseconds: context.eventLoop.now.uptimeNanoseconds)
        guard let source = intake.admit(envelope, at: now) else { return }
        let failure = envelope.data.withUnsafeReadableBytes { bytes -> PoseAIDecodeError? in
            do throws(PoseAIDecodeError) {
                try decoder.decode(bytes)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            intake.drop(.undecodable(failure.reason), from: envelope.remoteAddress, at: now, detail: failure.description)
            return
        }
        intake.delivered &+= 1
        guard sink.packet(decoder.packet, from: source, via: .poseAI, at: now) == .handshake else { return }
        var reply = context.channel.allocator.buffer(capacity: handshake.count)
        reply.writeBytes(handshake)
        context.writeAndFlush(wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: reply)), promise: nil)
    }

    /// The listener closed (shutdown): the counters, once.
    public func channelInactive(context: ChannelHandlerContext) {
        intake.logSummary()
        context.fireChannelInactive()
    }

    /// The sink's new sender: the gate's rate budget of its own.
    public func senderChanged(to sender: SourceAddress?) { intake.senderChanged(to: sender) }

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
    /// Datagrams read by one `recvmmsg` per wake-up of the loop, each into a slot of
    /// `receiveBufferBytes`: the phone's one datagram in one call (a `recvmsg` loop makes a second that
    /// ends in EAGAIN), and a flood drained as fast as four `recvmsg` per wake-up did.
    public static let datagramsPerRead = 4

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
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: receiveBufferBytes * datagramsPerRead))
                .channelOption(.datagramVectorReadMessageCount, value: datagramsPerRead)
                .channelOption(.maxMessagesPerRead, value: 1)
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
