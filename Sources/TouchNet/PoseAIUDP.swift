#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import TouchCore
import TouchWire

/// The PoseAI stream's datagrams, as `UDPListener` reads them on the Bridge's loop: gates the source,
/// decodes each datagram in place, hands the packet to the sink and answers the handshake.
public final class PoseAIUDPHandler: DatagramHandler, SenderWatcher {
    private var decoder = PoseAIDecoder()
    private var intake: DatagramIntake
    private let sink: any TouchSink
    private let handshake: [UInt8]
    private var senderSocket = SenderSocketFollower()

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
        do throws(PoseAIDecodeError) {
            try decoder.decode(bytes)
        } catch {
            intake.drop(.undecodable(error.reason), from: source, at: now, detail: error.description)
            return nil
        }
        intake.delivered &+= 1
        senderSocket.handing = source
        let reply = sink.packet(decoder.packet, from: address, via: .poseAI, at: now)
        senderSocket.handing = nil
        return reply == .handshake ? handshake : nil
    }

    /// The listener closed (shutdown): the counters, once.
    public func closed() { intake.logSummary() }

    /// The sink's new sender: the gate's rate budget of its own, and a socket of its own.
    public func senderChanged(to sender: SourceAddress?) {
        intake.senderChanged(to: sender)
        senderSocket.senderChanged(to: sender)
    }
}

/// Opens the PoseAI UDP listener.
public enum PoseAIUDPListener {
    /// Largest datagram read; bigger ones are cut and then refused by the decoder's 64 KiB limit.
    public static let receiveBufferBytes = PoseAIDecoder.maxPacketBytes + 1
    /// Datagrams read by one `recvmmsg` per wake-up of the loop, each into a slot of
    /// `receiveBufferBytes`: the phone's one datagram in one call (a `recvmsg` loop makes a second that
    /// ends in EAGAIN), and a flood drained as fast as four `recvmsg` per wake-up did.
    public static let datagramsPerRead = 4

    /// An open listener.
    public struct Bound {
        public let listener: UDPListener
        /// How the kernel filters sources, for the log.
        public let kernelFilter: String
    }

    /// Listens on `host:port` (port 0: the system picks a free one), on `loop` (called there). The
    /// allow-list's IPv4 rules also run in the kernel (see `KernelSourceFilter`), attached before the
    /// socket is bound.
    public static func bind(loop: BridgeEventLoop, host: String, port: Int, allowList: AllowList,
                            handler: PoseAIUDPHandler, logger: Logger) throws -> Bound {
        var kernelFilter = "off (a rule allows every IPv4 address, or too many rules)"
        let listener = try UDPListener(loop: loop, host: host, port: port, slotBytes: receiveBufferBytes,
                                       datagramsPerRead: datagramsPerRead, handler: handler, logger: logger,
                                       name: "poseai-udp") { fd in
            guard let program = KernelSourceFilter.program(for: allowList) else { return }
            let error = KernelSourceFilter.attach(program, to: fd)
            kernelFilter = error == 0 ? "on (\(program.count) instructions)" : "off (SO_ATTACH_FILTER: \(String(cString: strerror(error))))"
        }
        return Bound(listener: listener, kernelFilter: kernelFilter)
    }
}
