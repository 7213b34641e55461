// CLOCK_MONOTONIC in nanoseconds: the same clock xobserve stamps its lines with, so a test's send
// times and xobserve's event times are directly comparable.
import Glibc

enum MonotonicClock {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Sleeps until the monotonic clock reads `deadline` (absolute, so pacing does not drift).
    static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// A deadline `seconds` from now.
    static func deadline(after seconds: Double) -> UInt64 {
        now() + UInt64(max(0, seconds) * 1e9)
    }
}

extension UInt64 {
    /// Nanoseconds as milliseconds, for messages.
    var ms: Double { Double(self) / 1e6 }
    /// Nanoseconds as microseconds.
    var us: Double { Double(self) / 1e3 }
}
