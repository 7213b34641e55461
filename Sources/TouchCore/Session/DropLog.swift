// Counted, rate-limited log lines for things that can happen at packet rate.

/// Decides when to log a recurring event such as a dropped datagram: the first occurrence of each reason
/// at once, then at most once per `interval` with the number suppressed since the previous line. With a
/// `burst` above 1, the first `burst` occurrences of each interval are reported (a trace of transitions
/// reads whole while it is slow, and stays bounded when a peer makes it fast).
///
/// Reasons are numbered `0..<reasonCount` (an enum's raw value, for example). Pure and allocation-free:
/// the shell turns a `Report` into a log line.
public struct DropLog<let reasonCount: Int>: Sendable {
    /// "Log now".
    public struct Report: Hashable, Sendable {
        /// The reason being reported.
        public var reasonIndex: Int
        /// How many occurrences of this reason were not reported since the previous report (0 the first time).
        public var suppressed: UInt64
        /// How many occurrences of this reason in all, this one included.
        public var total: UInt64

        public init(reasonIndex: Int, suppressed: UInt64, total: UInt64) {
            self.reasonIndex = reasonIndex
            self.suppressed = suppressed
            self.total = total
        }

        /// What a log line adds after the reason: nothing the first time, else the counts
        /// (" (and 41 more since the last report; 57 in all)"). Built only when a line is logged.
        public var countsSuffix: String {
            suppressed > 0 ? " (and \(suppressed) more since the last report; \(total) in all)" : ""
        }
    }

    private struct Entry: Sendable {
        /// When this reason's interval began (its first report in it); nil before its first occurrence.
        var lastReport: Instant? = nil
        /// Reports in the interval that began at `lastReport`.
        var reported = 0
        var suppressed: UInt64 = 0
        var total: UInt64 = 0
    }

    /// The least time between two reports of one reason (beyond the burst). Default 10 s.
    public var interval: Interval
    /// How many reports of one reason an interval may have. Default 1.
    public let burst: Int
    private var entries: InlineArray<reasonCount, Entry>

    /// A log with no occurrences yet.
    public init(interval: Interval = .seconds(10), burst: Int = 1) {
        self.interval = interval
        self.burst = Swift.max(1, burst)
        entries = InlineArray(repeating: Entry())
    }

    /// Records one occurrence of `reasonIndex` at `now`; returns a report when it should be logged now.
    /// - Precondition: `0 <= reasonIndex < reasonCount`.
    public mutating func record(reasonIndex: Int, at now: Instant) -> Report? {
        precondition(reasonIndex >= 0 && reasonIndex < reasonCount, "DropLog reason out of range")
        var entry = entries[reasonIndex]
        entry.total &+= 1
        defer { entries[reasonIndex] = entry }
        if let last = entry.lastReport, now - last < interval {
            guard entry.reported < burst else {
                entry.suppressed &+= 1
                return nil
            }
            entry.reported += 1
        } else {
            entry.lastReport = now
            entry.reported = 1
        }
        let report = Report(reasonIndex: reasonIndex, suppressed: entry.suppressed, total: entry.total)
        entry.suppressed = 0
        return report
    }

    /// How many occurrences of `reasonIndex` are waiting to be reported (for a summary at shutdown).
    public func suppressedCount(reasonIndex: Int) -> UInt64 {
        entries[reasonIndex].suppressed
    }

    /// How many occurrences of `reasonIndex` were recorded in all.
    public func totalCount(reasonIndex: Int) -> UInt64 {
        entries[reasonIndex].total
    }
}
