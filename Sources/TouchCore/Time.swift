// Time in the core is a value passed in, never read from a clock here.

/// A point on a monotonic clock, in nanoseconds since an arbitrary origin.
/// The shell reads the clock; tests use a manual one.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: UInt64

    @inlinable public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    @inlinable public static func milliseconds(_ ms: UInt64) -> Instant {
        Instant(nanoseconds: ms &* 1_000_000)
    }

    @inlinable public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }

    @inlinable public static func + (a: Instant, d: Interval) -> Instant {
        Instant(nanoseconds: a.nanoseconds &+ d.nanoseconds)
    }

    /// The interval from `b` to `a`; zero when `b` is later.
    @inlinable public static func - (a: Instant, b: Instant) -> Interval {
        Interval(nanoseconds: a.nanoseconds >= b.nanoseconds ? a.nanoseconds - b.nanoseconds : 0)
    }

    public var description: String { "t=\(nanoseconds / 1_000_000)ms" }
}

/// A non-negative length of time, in nanoseconds. Thresholds carry their unit in their constructor:
/// `.milliseconds(500)`, `.seconds(10)`.
public struct Interval: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: UInt64

    @inlinable public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    @inlinable public static func milliseconds(_ ms: UInt64) -> Interval { Interval(nanoseconds: ms * 1_000_000) }
    @inlinable public static func seconds(_ s: UInt64) -> Interval { Interval(nanoseconds: s * 1_000_000_000) }
    @inlinable public static func < (a: Interval, b: Interval) -> Bool { a.nanoseconds < b.nanoseconds }

    @inlinable public var milliseconds: UInt64 { nanoseconds / 1_000_000 }

    public var description: String { "\(nanoseconds / 1_000_000)ms" }
}
