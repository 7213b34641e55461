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
        #expect(s.admit(tablet, at: ms(5)) == .busy)
        #expect(s.admit(phone, at: ms(9_000)) == .accepted(isNewSender: false))
        #expect(s.admit(tablet, at: ms(18_999)) == .busy)
        #expect(s.sender == phone)
    }

    @Test func secondSenderTakesOverAfterTenSecondsOfSilence() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(1_000))
        #expect(s.admit(tablet, at: ms(10_999)) == .busy)
        #expect(s.admit(tablet, at: ms(11_000)) == .accepted(isNewSender: true))
        #expect(s.sender == tablet)
        // Now the old sender is the one refused.
        #expect(s.admit(phone, at: ms(11_001)) == .busy)
    }

    @Test func refusalsDoNotKeepTheSenderAlive() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        for t in stride(from: UInt64(100), to: 10_000, by: 100) {
            #expect(s.admit(tablet, at: ms(t)) == .busy)
        }
        #expect(s.admit(tablet, at: ms(10_000)) == .accepted(isNewSender: true))
    }

    @Test func sameAddressOnAnotherPortIsAnotherSender() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        #expect(s.admit(v4(192, 168, 1, 20, port: 50001), at: ms(1)) == .busy)
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
        #expect(s.admit(tablet, at: ms(1_999)) == .busy)
        #expect(s.admit(tablet, at: ms(2_000)) == .accepted(isNewSender: true))
    }
}
