import Testing
import TouchCore

@Suite struct SenderSessionTests {
    let phone = v4(192, 168, 1, 20, port: 50000)
    let tablet = v4(192, 168, 1, 30, port: 50000)

    @Test func firstSenderIsAcceptedAsNew() {
        var s = SenderSession()
        #expect(s.admit(phone, at: ms(0)) == .accepted(isNewSender: true))
        #expect(s.sender == phone)
        #expect(s.admit(phone, at: ms(16)) == .accepted(isNewSender: false))
        #expect(s.lastSeen == ms(16))
    }

    @Test func secondSenderIsRefusedWhileFirstIsLive() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        #expect(s.admit(tablet, at: ms(5)) == .busy(firstRefusal: true))
        #expect(s.admit(phone, at: ms(9_000)) == .accepted(isNewSender: false))
        #expect(s.admit(tablet, at: ms(18_999)) == .busy(firstRefusal: false))
        #expect(s.sender == phone)
    }

    @Test func secondSenderTakesOverAfterTenSecondsOfSilence() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(1_000))
        #expect(s.admit(tablet, at: ms(10_999)) == .busy(firstRefusal: true))
        #expect(s.admit(tablet, at: ms(11_000)) == .accepted(isNewSender: true))
        #expect(s.sender == tablet)
        // Now the old sender is the one refused.
        #expect(s.admit(phone, at: ms(11_001)) == .busy(firstRefusal: true))
    }

    @Test func refusalsDoNotKeepTheSenderAlive() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        for t in stride(from: UInt64(100), to: 10_000, by: 100) {
            #expect(s.admit(tablet, at: ms(t)) == .busy(firstRefusal: t == 100))
        }
        #expect(s.admit(tablet, at: ms(10_000)) == .accepted(isNewSender: true))
    }

    @Test func refusalIsReportedOnce() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        var firsts = 0
        for i in 0..<100 {
            _ = s.admit(phone, at: ms(UInt64(i)))
            if s.admit(tablet, at: ms(UInt64(i))) == .busy(firstRefusal: true) { firsts += 1 }
        }
        #expect(firsts == 1)
    }

    @Test func refusalIsReportedAgainInTheNextSendersSession() {
        var s = SenderSession()
        let laptop = v4(10, 0, 0, 5, port: 1)
        _ = s.admit(phone, at: ms(0))
        #expect(s.admit(laptop, at: ms(1)) == .busy(firstRefusal: true))
        _ = s.admit(tablet, at: ms(20_000))  // takes over from the silent phone
        #expect(s.admit(laptop, at: ms(20_001)) == .busy(firstRefusal: true))
        #expect(s.admit(laptop, at: ms(20_002)) == .busy(firstRefusal: false))
    }

    @Test func refusalRecordIsBounded() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        let others = (1...UInt16(SenderSession.refusalMemory + 1)).map { v4(10, 0, 0, 1, port: $0) }
        for o in others { #expect(s.admit(o, at: ms(1)) == .busy(firstRefusal: true)) }
        // The oldest was forgotten: reported again. The most recent ones are still remembered.
        #expect(s.admit(others[0], at: ms(2)) == .busy(firstRefusal: true))
        #expect(s.admit(others.last!, at: ms(2)) == .busy(firstRefusal: false))
    }

    @Test func sameAddressOnAnotherPortIsAnotherSender() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        #expect(s.admit(v4(192, 168, 1, 20, port: 50001), at: ms(1)) == .busy(firstRefusal: true))
    }

    @Test func mappedAndPlainIPv4AreTheSameSender() {
        var s = SenderSession()
        _ = s.admit(v4(192, 168, 1, 20, port: 7), at: ms(0))
        #expect(s.admit(v6("::ffff:192.168.1.20", port: 7), at: ms(1)) == .accepted(isNewSender: false))
    }

    @Test func endLetsTheNextSourceInAtOnce() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        s.end()
        #expect(s.sender == nil)
        #expect(s.admit(tablet, at: ms(1)) == .accepted(isNewSender: true))
        s.end()
        #expect(s.admit(tablet, at: ms(2)) == .accepted(isNewSender: true))
    }

    @Test func takeoverSilenceIsConfigurable() {
        var s = SenderSession(takeoverSilence: .seconds(2))
        _ = s.admit(phone, at: ms(0))
        #expect(s.admit(tablet, at: ms(1_999)) == .busy(firstRefusal: true))
        #expect(s.admit(tablet, at: ms(2_000)) == .accepted(isNewSender: true))
    }
}
