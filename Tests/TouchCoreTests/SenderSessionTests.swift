import Testing
import TouchCore

@Suite struct SenderSessionTests {
    let phone = Sender(v4(192, 168, 1, 20, port: 50000), via: .poseAI)
    let tablet = Sender(v4(192, 168, 1, 30, port: 50000), via: .poseAI)

    @Test func firstSenderIsAcceptedAsNew() {
        var s = SenderSession()
        #expect(s.admit(phone, at: ms(0)) == .accepted(isNewSender: true))
        #expect(s.sender == phone)
        #expect(s.lastActive == ms(0), "becoming the sender counts as activity")
        #expect(s.admit(phone, at: ms(16)) == .accepted(isNewSender: false))
        #expect(s.lastActive == ms(0), "admitted, not yet activity")
        s.renew(at: ms(16))
        #expect(s.lastActive == ms(16))
    }

    @Test func secondSenderIsRefusedWhileFirstIsLive() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        #expect(s.admit(tablet, at: ms(5)) == .busy)
        #expect(s.admit(phone, at: ms(9_000)) == .accepted(isNewSender: false))
        s.renew(at: ms(9_000))
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

    /// A sender that sends but changes nothing (the Bridge never renews it) holds the session for
    /// `takeoverSilence` after its last activity, however often it sends.
    @Test func inputThatIsNoActivityDoesNotHoldTheSession() {
        var s = SenderSession()
        _ = s.admit(phone, at: ms(0))
        s.renew(at: ms(2_000))
        for t in stride(from: UInt64(2_100), to: 12_000, by: 100) {
            #expect(s.admit(phone, at: ms(t)) == .accepted(isNewSender: false))
            #expect(s.admit(tablet, at: ms(t)) == .busy)
        }
        #expect(s.admit(tablet, at: ms(12_000)) == .accepted(isNewSender: true))
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
        #expect(s.admit(Sender(v4(192, 168, 1, 20, port: 50001), via: .poseAI), at: ms(1)) == .busy)
    }

    /// The page's WebSocket and a datagram from its address and port number are two senders, whichever
    /// holds the session; so are PoseAI and TUIO from one port.
    @Test func sameAddressAndPortOnAnotherTransportIsAnotherSender() {
        let address = v4(127, 0, 0, 1, port: 40_123)
        for (holder, other) in [(Transport.web, Transport.poseAI), (.web, .tuio), (.poseAI, .web), (.poseAI, .tuio), (.tuio, .web)] {
            var s = SenderSession()
            _ = s.admit(Sender(address, via: holder), at: ms(0))
            #expect(s.admit(Sender(address, via: other), at: ms(1)) == .busy, "\(other) taken for \(holder)")
            #expect(s.sender == Sender(address, via: holder))
        }
    }

    @Test func mappedAndPlainIPv4AreTheSameSender() {
        var s = SenderSession()
        _ = s.admit(Sender(v4(192, 168, 1, 20, port: 7), via: .tuio), at: ms(0))
        #expect(s.admit(Sender(v6("::ffff:192.168.1.20", port: 7), via: .tuio), at: ms(1)) == .accepted(isNewSender: false))
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

    /// The UDP gates are told the sender's address only when its input comes in datagrams.
    @Test func theGatesAreToldOnlyADatagramSender() {
        let address = v4(127, 0, 0, 1, port: 40_123)
        #expect(SenderWatchers.gateSender(Sender(address, via: .web)) == nil)
        #expect(SenderWatchers.gateSender(Sender(address, via: .poseAI)) == address)
        #expect(SenderWatchers.gateSender(Sender(address, via: .tuio)) == address)
        #expect(SenderWatchers.gateSender(nil) == nil)
    }
}
