// Per-source rate limits: packets/s and bytes/s per address, bounded memory, no allocation.
import Testing
import TouchCore

@Suite struct SourceRateLimiterTests {
    static let a = SourceAddress(ipv4: 0x7F00_0001, port: 5000)
    static let b = SourceAddress(ipv4: 0x7F00_0002, port: 5000)
    static let t0 = Instant(nanoseconds: 10_000_000_000)

    @Test func aBurstOfOneSecondPassesThenTheRateHolds() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 100, bytesPerSecond: 0))
        var passed = 0
        for _ in 0..<1000 where limiter.admit(Self.a, bytes: 100, at: Self.t0) == .pass { passed += 1 }
        #expect(passed == 100, "a burst of one second's worth: \(passed)")
        #expect(limiter.admit(Self.a, bytes: 100, at: Self.t0) == .tooManyPackets)
        // 10 ms later: one more packet's worth (100/s).
        #expect(limiter.admit(Self.a, bytes: 100, at: Self.t0 + .milliseconds(10)) == .pass)
        #expect(limiter.admit(Self.a, bytes: 100, at: Self.t0 + .milliseconds(10)) == .tooManyPackets)
        // A flood at 10x the rate for 10 s passes the rate, not the flood.
        passed = 0
        for i in 1...10_000 {
            let now = Self.t0 + .milliseconds(10) + .milliseconds(UInt64(i))
            if limiter.admit(Self.a, bytes: 100, at: now) == .pass { passed += 1 }
        }
        #expect((999...1001).contains(passed), "10 s at 1000/s against 100/s: \(passed) passed")
    }

    @Test func sourcesAreLimitedSeparatelyAndPortsDoNotMatter() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 10, bytesPerSecond: 0))
        for port in 0..<10 { #expect(limiter.admit(SourceAddress(ipv4: 0x7F00_0001, port: UInt16(port)), bytes: 1, at: Self.t0) == .pass) }
        #expect(limiter.admit(SourceAddress(ipv4: 0x7F00_0001, port: 9999), bytes: 1, at: Self.t0) == .tooManyPackets,
                "a new port is the same source")
        #expect(limiter.admit(Self.b, bytes: 1, at: Self.t0) == .pass, "another address has its own bucket")
    }

    @Test func bytesPerSecondIsAppliedToo() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 1000, bytesPerSecond: 100_000))
        #expect(limiter.admit(Self.a, bytes: 65_507, at: Self.t0) == .pass)
        #expect(limiter.admit(Self.a, bytes: 65_507, at: Self.t0) == .tooManyBytes)
        #expect(limiter.admit(Self.a, bytes: 30_000, at: Self.t0) == .pass)
        #expect(limiter.admit(Self.a, bytes: 65_507, at: Self.t0 + .milliseconds(700)) == .pass)
    }

    @Test func zeroMeansNoLimit() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 0, bytesPerSecond: 0))
        for _ in 0..<100_000 { #expect(limiter.admit(Self.a, bytes: 65_507, at: Self.t0) == .pass) }
    }

    @Test func manySourcesUseBoundedMemoryAndTheBusyOneKeepsItsBucket() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 5, bytesPerSecond: 0), capacity: 64)
        #expect(limiter.capacity == 64)
        var now = Self.t0
        for _ in 0..<5 { #expect(limiter.admit(Self.a, bytes: 1, at: now) == .pass) }
        // 100,000 other sources, one datagram each; `a` keeps sending (and being refused) in between.
        var aPassed = 0
        for i in 0..<100_000 {
            now = now + Interval(nanoseconds: 1000)
            _ = limiter.admit(SourceAddress(ipv4: 0x0A00_0000 | UInt32(i), port: 1), bytes: 1, at: now)
            if i % 4 == 0 && limiter.admit(Self.a, bytes: 1, at: now) == .pass { aPassed += 1 }
        }
        // 0.1 s passed: `a` earned half a datagram; the flood of new sources did not reset its bucket.
        #expect(aPassed == 0, "the flooding source got \(aPassed) datagrams through")
        #expect(limiter.evictions > 90_000)
        #expect(limiter.capacity == 64, "the table never grows")
    }

    @Test func admitAllocatesNothing() {
        var limiter = SourceRateLimiter(limits: .default)
        var now = Self.t0
        _ = limiter.admit(Self.a, bytes: 10, at: now)
        let n = allocations {
            for i in 0..<10_000 {
                now = now + Interval(nanoseconds: 100_000)
                _ = limiter.admit(SourceAddress(ipv4: UInt32(i), port: 1), bytes: 500, at: now)
            }
        }
        #expect(n == 0, "\(n) allocations in 10,000 admits")
    }

    @Test func clockGoingBackwardsDoesNotRefillOrTrap() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 2, bytesPerSecond: 0))
        #expect(limiter.admit(Self.a, bytes: 1, at: Self.t0) == .pass)
        #expect(limiter.admit(Self.a, bytes: 1, at: Self.t0) == .pass)
        #expect(limiter.admit(Self.a, bytes: 1, at: Instant(nanoseconds: 0)) == .tooManyPackets)
    }
}
