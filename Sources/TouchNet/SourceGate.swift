import NIOCore
import TouchCore

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
