import Logging
import NIOCore
import TouchCore
import TouchWire

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

/// What every UDP listener does before and after its decoder: gate the source (in `--allow`, and within
/// its per-source rate limits: cheap and allocation-free once warm; each listener keeps its own, so
/// traffic to one listener does not spend a source's budget on another), count and log each
/// drop (at most one line per reason per 10 s, with counts), count what was delivered, and sum it all
/// up when the listener closes.
struct DatagramIntake {
    /// The listener's name in its summary (`poseai-udp`, `tuio-udp`).
    let name: String
    /// What it receives, in its drop lines (`datagram`, `TUIO datagram`).
    let what: String
    private let allowList: AllowList
    private var rateLimiter: SourceRateLimiter
    /// The live session's sender (address and port), which has a rate budget of its own; every other
    /// port shares its address's budget. Handed over by the sink after every step that changes it
    /// (`TouchSink.watchSender`), on the same event loop as every datagram, so it is exact: the
    /// datagram after the one that made a new sender is already charged to the new sender's bucket.
    /// (Were it ever handed over late, one datagram would be charged to the other bucket: a token of
    /// a one-second burst, refilled within a second, which no drop could follow from.)
    private var sender: SourceAddress?
    /// Whether `sender` is in `--allow`: asked once, when the sender is handed over (the list does not
    /// change while the listener runs), so the sender's own datagrams, the stream, skip the list.
    private var senderAllowed = false
    private let logger: Logger
    /// Dropped datagrams, by `DatagramDrop.index`.
    private(set) var drops = DropLog<64>()
    /// Datagrams (PoseAI) or frames (TUIO) that reached the sink.
    var delivered: UInt64 = 0

    init(name: String, what: String, allowList: AllowList, rateLimits: SourceRateLimiter.Limits, logger: Logger) {
        precondition(DatagramDrop.all.count <= 64, "DropLog<64> is too small for the drop reasons")
        self.name = name
        self.what = what
        self.allowList = allowList
        self.rateLimiter = SourceRateLimiter(limits: rateLimits)
        self.logger = logger
    }

    /// The current sender, as the sink hands it over (`SenderWatcher`).
    mutating func senderChanged(to sender: SourceAddress?) {
        self.sender = sender
        senderAllowed = sender.map { allowList.allows($0) } ?? false
    }

    /// The gate, before a datagram is decoded: its source when it is in `--allow` and within its rate
    /// limits; nil (counted and logged) when not. The sender's answer from the list is the one kept when
    /// it was handed over.
    mutating func admit(_ datagram: DatagramSource, bytes: Int, at now: Instant) -> SourceAddress? {
        guard let source = datagram.address else {
            drop(.sourceNotAllowed, from: datagram, at: now)
            return nil
        }
        let isSender = source == sender
        guard isSender ? senderAllowed : allowList.allows(source) else {
            drop(.sourceNotAllowed, from: datagram, at: now)
            return nil
        }
        switch rateLimiter.admit(source, bytes: bytes, at: now, isSender: isSender) {
        case .pass:
            return source
        case .tooManyPackets:
            drop(.tooManyPackets, from: datagram, at: now)
        case .tooManyBytes:
            drop(.tooManyBytes, from: datagram, at: now)
        }
        return nil
    }

    /// Counts the drop; logs it (the source formatted only then) at most once per reason per 10 s.
    mutating func drop(_ reason: DatagramDrop, from source: DatagramSource, at now: Instant, detail: String? = nil) {
        guard let report = drops.record(reasonIndex: reason.index, at: now) else { return }
        logger.warning("dropped a \(what) from \(source): \(detail ?? reason.description)\(report.countsSuffix)")
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
