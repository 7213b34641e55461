import Logging
import NIOCore
import TouchCore
import TouchWire

/// What every UDP listener checks before it decodes a datagram: the source is in `--allow`, and within
/// its per-source rate limits. Cheap and allocation-free once warm; each listener keeps its own gate,
/// so traffic to one listener does not spend a source's budget on another.
struct SourceGate {
    enum Refusal: Hashable, Sendable {
        case sourceNotAllowed
        case tooManyPackets
        case tooManyBytes
    }

    enum Admission {
        case admitted(SourceAddress)
        case refused(Refusal)
    }

    private let allowList: AllowList
    private var rateLimiter: SourceRateLimiter

    init(allowList: AllowList, rateLimits: SourceRateLimiter.Limits) {
        self.allowList = allowList
        self.rateLimiter = SourceRateLimiter(limits: rateLimits)
    }

    /// Admits a datagram of `bytes` bytes from `address` received at `now`, or says why not.
    /// `isSender` answers whether an allowed source is the live session's sender (address and port),
    /// which has a rate budget of its own; every other port shares its address's budget.
    mutating func admit(_ address: SocketAddress, bytes: Int, at now: Instant,
                        isSender: (SourceAddress) -> Bool) -> Admission {
        guard let source = SourceAddress(address), allowList.allows(source) else {
            return .refused(.sourceNotAllowed)
        }
        switch rateLimiter.admit(source, bytes: bytes, at: now, isSender: isSender(source)) {
        case .pass: return .admitted(source)
        case .tooManyPackets: return .refused(.tooManyPackets)
        case .tooManyBytes: return .refused(.tooManyBytes)
        }
    }
}

/// Why a datagram (or a TUIO frame) was dropped before reaching the Bridge: one list for every UDP
/// listener, so each reason has one name and one counter.
public enum DatagramDrop: Hashable, Sendable, CustomStringConvertible {
    case sourceNotAllowed
    /// The source sent more datagrams per second than `--max-packets-per-second`.
    case tooManyPackets
    /// The source sent more bytes per second than `--max-bytes-per-second`.
    case tooManyBytes
    /// The PoseAI decoder refused it.
    case undecodable(PoseAIDecodeError.Reason)
    /// Not well-formed OSC or TUIO.
    case malformed(OSCDropReason)
    /// A TUIO frame whose `fseq` is older than the last (as the reference client drops them).
    case lateFrame

    init(_ refusal: SourceGate.Refusal) {
        switch refusal {
        case .sourceNotAllowed: self = .sourceNotAllowed
        case .tooManyPackets: self = .tooManyPackets
        case .tooManyBytes: self = .tooManyBytes
        }
    }

    private static let poseAIReasons = PoseAIDecodeError.Reason.allCases.count

    /// A dense index for `DropLog`: the gate's three reasons, the late frame, then the PoseAI
    /// decoder's reasons, then OSC's.
    public var index: Int {
        switch self {
        case .sourceNotAllowed: return 0
        case .tooManyPackets: return 1
        case .tooManyBytes: return 2
        case .lateFrame: return 3
        case .undecodable(let reason): return 4 + Int(reason.rawValue)
        case .malformed(let reason): return 4 + Self.poseAIReasons + Int(reason.rawValue)
        }
    }

    /// Every drop, in `index` order.
    public static let all: [DatagramDrop] = [.sourceNotAllowed, .tooManyPackets, .tooManyBytes, .lateFrame]
        + PoseAIDecodeError.Reason.allCases.map { .undecodable($0) }
        + OSCDropReason.allCases.map { .malformed($0) }

    public var description: String {
        switch self {
        case .sourceNotAllowed: return "source outside --allow"
        case .tooManyPackets: return "rate limit: too many datagrams per second from this source (--max-packets-per-second)"
        case .tooManyBytes: return "rate limit: too many bytes per second from this source (--max-bytes-per-second)"
        case .lateFrame: return "late TUIO frame (fseq older than the last)"
        case .undecodable(let reason): return "\(reason)"
        case .malformed(let reason): return "\(reason)"
        }
    }
}

/// What every UDP listener does before and after its decoder: gate the source, count and log each
/// drop (at most one line per reason per 10 s, with counts), count what was delivered, and sum it all
/// up when the listener closes.
struct DatagramIntake {
    /// The listener's name in its summary (`poseai-udp`, `tuio-udp`).
    let name: String
    /// What it receives, in its drop lines (`datagram`, `TUIO datagram`).
    let what: String
    private var gate: SourceGate
    private let logger: Logger
    /// Dropped datagrams, by `DatagramDrop.index`.
    private(set) var drops = DropLog<64>()
    /// Datagrams (PoseAI) or frames (TUIO) that reached the sink.
    var delivered: UInt64 = 0

    init(name: String, what: String, allowList: AllowList, rateLimits: SourceRateLimiter.Limits, logger: Logger) {
        precondition(DatagramDrop.all.count <= 64, "DropLog<64> is too small for the drop reasons")
        self.name = name
        self.what = what
        self.gate = SourceGate(allowList: allowList, rateLimits: rateLimits)
        self.logger = logger
    }

    /// The source of a datagram when the gate lets it through; nil (logged) when not.
    mutating func admit(_ envelope: AddressedEnvelope<ByteBuffer>, sink: any TouchSink, at now: Instant) -> SourceAddress? {
        switch gate.admit(envelope.remoteAddress, bytes: envelope.data.readableBytes, at: now, isSender: sink.isSender) {
        case .admitted(let source):
            return source
        case .refused(let refusal):
            drop(DatagramDrop(refusal), from: envelope.remoteAddress, at: now)
            return nil
        }
    }

    mutating func drop(_ reason: DatagramDrop, from address: SocketAddress, at now: Instant, detail: String? = nil) {
        guard let report = drops.record(reasonIndex: reason.index, at: now) else { return }
        logger.warning("dropped a \(what) from \(address): \(detail ?? reason.description)\(report.countsSuffix)")
    }

    /// The counters, once, when the listener closes.
    func logSummary() {
        var parts: [String] = []
        for drop in DatagramDrop.all {
            let n = drops.totalCount(reasonIndex: drop.index)
            if n > 0 { parts.append("\(n) \(drop)") }
        }
        logger.info("\(name): \(delivered) \(what == "datagram" ? "datagrams" : "TUIO frames") delivered; dropped: \(parts.isEmpty ? "none" : parts.joined(separator: "; "))")
    }
}
