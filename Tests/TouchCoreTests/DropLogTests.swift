import Testing
import TouchCore

@Suite struct DropLogTests {
    typealias Log = DropLog<3>

    @Test func firstOccurrenceIsReportedAtOnce() {
        var log = Log()
        #expect(log.record(reasonIndex: 1, at: ms(5)) == Log.Report(reasonIndex: 1, suppressed: 0, total: 1))
    }

    @Test func repeatsWithinTheIntervalAreCountedNotReported() {
        var log = Log()
        _ = log.record(reasonIndex: 0, at: ms(0))
        for t in 1...50 { #expect(log.record(reasonIndex: 0, at: ms(UInt64(t) * 100)) == nil) }
        #expect(log.suppressedCount(reasonIndex: 0) == 50)
        #expect(log.totalCount(reasonIndex: 0) == 51)
    }

    @Test func reportAfterTheIntervalCarriesTheSuppressedCount() {
        var log = Log()
        _ = log.record(reasonIndex: 2, at: ms(0))
        _ = log.record(reasonIndex: 2, at: ms(1))
        _ = log.record(reasonIndex: 2, at: ms(9_999))
        #expect(log.record(reasonIndex: 2, at: ms(10_000)) == Log.Report(reasonIndex: 2, suppressed: 2, total: 4))
        #expect(log.suppressedCount(reasonIndex: 2) == 0)
        #expect(log.record(reasonIndex: 2, at: ms(10_001)) == nil)
    }

    @Test func reasonsAreIndependent() {
        var log = Log(interval: .seconds(1))
        #expect(log.record(reasonIndex: 0, at: ms(0)) != nil)
        #expect(log.record(reasonIndex: 1, at: ms(1)) != nil)
        #expect(log.record(reasonIndex: 0, at: ms(2)) == nil)
        #expect(log.record(reasonIndex: 1, at: ms(1_001)) == Log.Report(reasonIndex: 1, suppressed: 0, total: 2))
    }
}
