// Per-source rate limits, checked before a datagram is decoded.

/// Token buckets per source address: at most `packetsPerSecond` datagrams and `bytesPerSecond` bytes per
/// second from one address, with bursts of one second's worth. A datagram over either limit is dropped
/// before it is decoded, so a flooding source costs one table lookup per datagram.
///
/// A source is an address without the port (a sender that changes port is still the same source),
/// with one exception: the live session's sender (address *and* port) has a bucket of its own, so other
/// ports on the phone's own host, which share their address's bucket, cannot spend the phone's budget.
/// The caller says which datagram comes from the sender (`isSender`); only one sender has its own bucket
/// at a time, and a new sender starts with full buckets.
/// The table has a fixed number of entries, allocated once at `init`: memory stays bounded whatever the
/// number of sources. Entries are found by hashing the address into a set of `ways` entries; when a set
/// is full, the entry seen longest ago is reused. A forgotten source starts again with full buckets, so
/// more sources than the table holds (only possible from inside `--allow`) can each send a burst:
/// the per-source limit bounds what one address can do, not the sum.
///
/// Pure and allocation-free per call (checked by `AllocationTests`).
public struct SourceRateLimiter: Sendable {
    /// The limits, per source. Zero means no limit of that kind.
    public struct Limits: Hashable, Sendable {
        public var packetsPerSecond: UInt64
        public var bytesPerSecond: UInt64

        public init(packetsPerSecond: UInt64, bytesPerSecond: UInt64) {
            self.packetsPerSecond = packetsPerSecond
            self.bytesPerSecond = bytesPerSecond
        }

        /// 1,000 datagrams/s and 2 MiB/s per source: a phone sends 30–120 small packets per second.
        public static let `default` = Limits(packetsPerSecond: 1000, bytesPerSecond: 2 << 20)
    }

    /// The answer for one datagram.
    public enum Verdict: Hashable, Sendable {
        case pass
        case tooManyPackets
        case tooManyBytes
    }

    private struct Entry: Sendable {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var used = false
        /// Tokens scaled by 1e9 (token-nanoseconds), so refilling is integer arithmetic.
        var packetTokens: UInt64 = 0
        var byteTokens: UInt64 = 0
        var lastSeen = Instant(nanoseconds: 0)
    }

    public let limits: Limits
    /// How many sources the table remembers at once.
    public let capacity: Int
    public static let ways = 4
    private var table: [Entry]
    private let setMask: Int
    /// How many times a source was forgotten to make room for another.
    public private(set) var evictions: UInt64 = 0
    /// The live sender's own bucket (address and port); `used` is false until a sender is seen.
    private var senderEntry = Entry()
    private var senderPort: UInt16 = 0

    /// A limiter remembering up to `capacity` sources (rounded up to a power of two, at least `ways`).
    public init(limits: Limits, capacity: Int = 1024) {
        var sets = 1
        while sets * Self.ways < capacity { sets <<= 1 }
        self.limits = limits
        self.capacity = sets * Self.ways
        self.setMask = sets - 1
        table = [Entry](repeating: Entry(), count: sets * Self.ways)
    }

    private static let scale: UInt64 = 1_000_000_000

    /// Decides about one datagram of `bytes` bytes from `source` at `now`, and charges it if it passes.
    /// `isSender`: the datagram comes from the live session's sender (address and port), which is charged
    /// to a bucket of its own instead of its address's shared one.
    public mutating func admit(_ source: SourceAddress, bytes: Int, at now: Instant, isSender: Bool = false) -> Verdict {
        if limits.packetsPerSecond == 0 && limits.bytesPerSecond == 0 { return .pass }
        if isSender {
            var entry = senderEntry
            if entry.used && entry.high == source.high && entry.low == source.low && senderPort == source.port {
                refill(&entry, at: now)
            } else {
                entry = fresh(source)
                senderPort = source.port
            }
            let verdict = charge(&entry, bytes: bytes, at: now)
            senderEntry = entry
            return verdict
        }
        var h = source.high &* 0x9E37_79B9_7F4A_7C15 ^ source.low
        h ^= h >> 29
        h = h &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        let base = (Int(truncatingIfNeeded: h) & setMask) * Self.ways
        var slot = -1
        var victim = base
        for i in base..<(base + Self.ways) {
            let e = table[i]
            if e.used && e.high == source.high && e.low == source.low {
                slot = i
                break
            }
            // A free entry first, else the one seen longest ago.
            let v = table[victim]
            if (!e.used && v.used) || (e.used == v.used && e.lastSeen < v.lastSeen) { victim = i }
        }
        var entry: Entry
        if slot >= 0 {
            entry = table[slot]
            refill(&entry, at: now)
        } else {
            slot = victim
            if table[slot].used { evictions &+= 1 }
            entry = fresh(source)
        }
        let verdict = charge(&entry, bytes: bytes, at: now)
        table[slot] = entry
        return verdict
    }

    /// An entry for `source` with full buckets (one second's worth).
    private func fresh(_ source: SourceAddress) -> Entry {
        Entry(high: source.high, low: source.low, used: true,
              packetTokens: Self.full(limits.packetsPerSecond), byteTokens: Self.full(limits.bytesPerSecond))
    }

    /// Adds the tokens earned since the entry was last seen.
    private func refill(_ entry: inout Entry, at now: Instant) {
        let elapsed = now < entry.lastSeen ? 0 : (now - entry.lastSeen).nanoseconds
        entry.packetTokens = Self.refill(entry.packetTokens, rate: limits.packetsPerSecond, elapsed: elapsed)
        entry.byteTokens = Self.refill(entry.byteTokens, rate: limits.bytesPerSecond, elapsed: elapsed)
    }

    /// Decides about one datagram against `entry`'s buckets and takes its cost if it passes.
    private func charge(_ entry: inout Entry, bytes: Int, at now: Instant) -> Verdict {
        entry.lastSeen = now
        let packetCost = Self.scale
        let byteCost = UInt64(max(bytes, 0)).multipliedReportingOverflow(by: Self.scale)
        if limits.packetsPerSecond > 0 && entry.packetTokens < packetCost { return .tooManyPackets }
        if limits.bytesPerSecond > 0 && (byteCost.overflow || entry.byteTokens < byteCost.partialValue) { return .tooManyBytes }
        if limits.packetsPerSecond > 0 { entry.packetTokens -= packetCost }
        if limits.bytesPerSecond > 0 { entry.byteTokens -= byteCost.partialValue }
        return .pass
    }

    /// One second's worth of tokens (the burst), scaled.
    private static func full(_ rate: UInt64) -> UInt64 {
        let (v, o) = rate.multipliedReportingOverflow(by: scale)
        return o ? .max : v
    }

    private static func refill(_ tokens: UInt64, rate: UInt64, elapsed: UInt64) -> UInt64 {
        // rate per second × elapsed ns = scaled tokens; capped at one second's worth.
        let (added, o1) = rate.multipliedReportingOverflow(by: elapsed)
        let (sum, o2) = tokens.addingReportingOverflow(added)
        let cap = full(rate)
        return o1 || o2 || sum > cap ? cap : sum
    }
}
