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

    @Test func theSenderHasABudgetOfItsOwnThatOtherPortsOnItsHostCannotSpend() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 100, bytesPerSecond: 0))
        let phone = SourceAddress(ipv4: 0x7F00_0001, port: 5000)
        let flooders = [SourceAddress(ipv4: 0x7F00_0001, port: 6000), SourceAddress(ipv4: 0x7F00_0001, port: 6001)]
        // 2 s: two flooders at 1,000/s each, the phone at 60/s; every phone datagram passes.
        var phonePassed = 0, phoneSent = 0, floodPassed = 0
        for ms in 0..<2000 {
            let now = Self.t0 + .milliseconds(UInt64(ms))
            for f in flooders where limiter.admit(f, bytes: 100, at: now, isSender: false) == .pass { floodPassed += 1 }
            if ms % 16 == 0 {
                phoneSent += 1
                if limiter.admit(phone, bytes: 100, at: now, isSender: true) == .pass { phonePassed += 1 }
            }
        }
        #expect(phonePassed == phoneSent, "the phone got \(phonePassed) of \(phoneSent) through")
        // The flooders share 127.0.0.1's bucket: one second's burst plus 100/s, not 100/s each.
        #expect((290...302).contains(floodPassed), "the flooders together got \(floodPassed) through")
    }

    @Test func theSendersBucketIsKeyedByPortAndANewSenderStartsFull() {
        var limiter = SourceRateLimiter(limits: .init(packetsPerSecond: 10, bytesPerSecond: 0))
        let phone = SourceAddress(ipv4: 0x7F00_0001, port: 5000)
        let other = SourceAddress(ipv4: 0x7F00_0001, port: 5001)
        for _ in 0..<10 { #expect(limiter.admit(phone, bytes: 1, at: Self.t0, isSender: true) == .pass) }
        #expect(limiter.admit(phone, bytes: 1, at: Self.t0, isSender: true) == .tooManyPackets,
                "the sender's own bucket is limited too")
        // The shared bucket of 127.0.0.1 was not touched by the sender.
        for _ in 0..<10 { #expect(limiter.admit(other, bytes: 1, at: Self.t0) == .pass) }
        #expect(limiter.admit(other, bytes: 1, at: Self.t0) == .tooManyPackets)
        // The phone, no longer the sender, is charged to its address's (spent) bucket.
        #expect(limiter.admit(phone, bytes: 1, at: Self.t0, isSender: false) == .tooManyPackets)
        // `other` becomes the sender: a bucket of its own, full.
        for _ in 0..<10 { #expect(limiter.admit(other, bytes: 1, at: Self.t0, isSender: true) == .pass) }
        #expect(limiter.admit(other, bytes: 1, at: Self.t0, isSender: true) == .tooManyPackets)
        // 100 ms later: one datagram's worth for the sender.
        #expect(limiter.admit(other, bytes: 1, at: Self.t0 + .milliseconds(100), isSender: true) == .pass)
        #expect(limiter.admit(other, bytes: 1, at: Self.t0 + .milliseconds(100), isSender: true) == .tooManyPackets)
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
                _ = limiter.admit(SourceAddress(ipv4: 7, port: UInt16(i & 1)), bytes: 500, at: now, isSender: true)
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
