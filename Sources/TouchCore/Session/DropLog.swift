// Counted, rate-limited log lines for things that can happen at packet rate.

/// Decides when to log a recurring event such as a dropped datagram: the first occurrence of each reason
/// at once, then at most once per `interval` with the number suppressed since the previous line.
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
        /// When this reason was last reported; nil before its first occurrence.
        var lastReport: Instant? = nil
        var suppressed: UInt64 = 0
        var total: UInt64 = 0
    }

    /// The least time between two reports of one reason. Default 10 s.
    public var interval: Interval
    private var entries: InlineArray<reasonCount, Entry>

    /// A log with no occurrences yet.
    public init(interval: Interval = .seconds(10)) {
        self.interval = interval
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
            entry.suppressed &+= 1
            return nil
        }
        let report = Report(reasonIndex: reasonIndex, suppressed: entry.suppressed, total: entry.total)
        entry.lastReport = now
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
