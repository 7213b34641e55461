import Testing
import TouchCore

@Suite struct TouchPipelineTests {
    /// 2048 × 2048: raw 2047 → pixel 1024, raw 4094 → 2047.
    var core = TouchPipeline(configuration: .init(screen: ScreenMapping(width: 2048, height: 2048)))

    @Test mutating func dragHoldsButtonOne() {
        #expect(core.feed(packet(at(0, 0, 0)), at: ms(0)) == [move(0, 0), press])
        #expect(core.feed(packet(at(0, 2047, 2047)), at: ms(16)) == [move(1024, 1024)])
        #expect(core.feed(packet(at(0, 4094, 2047), ended(0)), at: ms(33)) == [move(2047, 1024), release])
        #expect(!core.hasContacts)
    }

    @Test mutating func switchingModeReleasesWhatTheOldModeHeld() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        var out: [OutputAction] = []
        core.setMode(.touchpad, into: &out)
        #expect(out == [release])
        #expect(!core.hasContacts && core.configuration.mode == .touchpad)
        out = []
        core.setMode(.touchpad, into: &out)
        #expect(out == [])
        // Touchpad now: a finger moves the pointer by relative motion, never an absolute move.
        let moved = core.feed(packet(at(0, 1000, 1000)), at: ms(100)) + core.feed(packet(at(0, 1400, 1000)), at: ms(116))
        #expect(!moved.contains { if case .moveTo = $0 { true } else { false } })
    }

    @Test mutating func actionsAreAppendedToTheCallersBuffer() {
        var out: [OutputAction] = [release]
        core.handle(packet(at(0, 0, 0)), at: ms(0), into: &out)
        #expect(out == [release, move(0, 0), press])
    }

    @Test mutating func secondFingerIsIgnoredInTouchscreenMode() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        #expect(core.feed(packet(at(1, 100, 100), at(1, 200, 200)), at: ms(16)) == [])
        #expect(core.feed(packet(ended(1)), at: ms(33)) == [])
        #expect(core.feed(packet(ended(0)), at: ms(50)) == [release])
    }

    @Test mutating func lostEndedIsReleasedByTouchState() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        #expect(core.feed(packet(state: state()), at: ms(50)) == [release])
        #expect(core.nextDeadline == nil)
    }

    @Test mutating func noDeadlineWithoutContacts() {
        #expect(core.nextDeadline == nil)
        _ = core.feed(packet(state: state()), at: ms(0))
        #expect(core.nextDeadline == nil)
        _ = core.feed(packet(at(0, 0, 0), ended(0)), at: ms(10))
        #expect(core.nextDeadline == nil)
        #expect(core.tick(at: ms(100_000)) == [])
    }

    @Test mutating func deadlineFollowsTheLastPacket() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(1_000))
        #expect(core.nextDeadline == ms(1_500))
        _ = core.feed(packet(state: state([0: .down(pt(0, 0))])), at: ms(1_033))
        #expect(core.nextDeadline == ms(1_533))
    }

    @Test mutating func watchdogReleasesAfterSilence() {
        _ = core.feed(packet(at(0, 0, 0), at(3, 5, 5)), at: ms(0))
        #expect(core.tick(at: ms(499)) == [])
        #expect(core.tick(at: ms(500)) == [release])
        #expect(!core.hasContacts)
        #expect(core.nextDeadline == nil)
        #expect(core.tick(at: ms(1_000)) == [])
    }

    @Test mutating func earlyTimerDoesNothingAndKeepsTheDeadline() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        #expect(core.tick(at: ms(100)) == [])
        #expect(core.nextDeadline == ms(500))
        #expect(core.hasContacts)
    }

    @Test mutating func watchdogDoesNothingWhileStreaming() {
        _ = core.feed(packet(at(0, 0, 0), state: state([0: .down(pt(0, 0))])), at: ms(0))
        // A finger held still: packets keep coming (with the state only), for ten seconds.
        var now: UInt64 = 0
        while now < 10_000 {
            now += 33
            #expect(core.feed(packet(state: state([0: .down(pt(0, 0))])), at: ms(now)) == [])
            if let deadline = core.nextDeadline, deadline <= ms(now + 16) {
                Issue.record("deadline \(deadline) too close at \(now)")
            }
            #expect(core.tick(at: ms(now + 16)) == [])
        }
        #expect(core.hasContacts)
    }

    @Test mutating func idleReleaseIsConfigurable() {
        var c = TouchPipeline(configuration: .init(screen: ScreenMapping(width: 10, height: 10), idleRelease: .milliseconds(100)))
        _ = c.feed(packet(at(0, 0, 0)), at: ms(0))
        #expect(c.nextDeadline == ms(100))
        #expect(c.tick(at: ms(100)) == [release])
    }

    @Test mutating func fingerStillDownAfterWatchdogBeginsAgainFromState() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        _ = core.tick(at: ms(600))
        // The stream comes back and the finger is still there.
        #expect(core.feed(packet(state: state([0: .down(pt(2047, 2047))])), at: ms(700)) == [move(1024, 1024), press])
    }

    @Test mutating func releaseAllAfterDragReleasesButton() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        _ = core.feed(packet(at(0, 100, 100), at(1, 5, 5)), at: ms(16))
        #expect(core.releaseEverything() == [release])
        #expect(!core.hasContacts)
        #expect(core.nextDeadline == nil)
        #expect(core.releaseEverything() == [])
    }

    @Test mutating func releaseAllWithoutContactsDoesNothing() {
        #expect(core.releaseEverything() == [])
    }

    @Test mutating func setTargetMapsLaterMoves() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        core.setTarget(PixelRect(x: 1920, y: 0, width: 1280, height: 1024))
        #expect(core.configuration.mapping.target == PixelRect(x: 1920, y: 0, width: 1280, height: 1024))
        #expect(core.screenMapping.origin == PixelPoint(x: 1920, y: 0))
        #expect(core.feed(packet(at(0, 4095, 4095)), at: ms(16)) == [move(1920 + 1279, 1023)])
    }

    @Test mutating func orientationKeepsTheLastDefiniteValue() {
        #expect(core.orientation == .unknown)
        _ = core.feed(packet(orientation: .faceUp), at: ms(0))
        #expect(core.orientation == .unknown)
        _ = core.feed(packet(orientation: .landscapeLeft), at: ms(1))
        #expect(core.orientation == .landscapeLeft)
        for o in [DeviceOrientation.faceUp, .faceDown, .unknown] {
            _ = core.feed(packet(orientation: o), at: ms(2))
            #expect(core.orientation == .landscapeLeft)
        }
        _ = core.feed(packet(), at: ms(3))
        #expect(core.orientation == .landscapeLeft)
        _ = core.feed(packet(orientation: .portraitUpsideDown), at: ms(4))
        #expect(core.orientation == .portraitUpsideDown)
    }

    @Test mutating func cancelledTouchReleasesWithoutClick() {
        _ = core.feed(packet(at(0, 0, 0)), at: ms(0))
        #expect(core.feed(packet(cancelled(0)), at: ms(16)) == [release])
    }
}

/// Touchpad mode with `nativeTouchpad` (the uinput backend's touchpad device): every finger goes out as
/// a `padContact`, nothing is recognised here, and releaseAll cancels what is down.
@Suite struct NativeTouchpadCoreTests {
    var core: TouchPipeline = {
        var c = TouchPipeline.Configuration(screen: ScreenMapping(width: 1920, height: 1080), mode: .touchpad)
        c.nativeTouchpad = true
        return TouchPipeline(configuration: c)
    }()

    @Test mutating func fingersAreContactsAndReleaseAllCancelsThem() {
        #expect(core.feed(packet(at(0, 100, 200), at(1, 300, 400)), at: ms(0))
            == [.padContact(.began(slot: 0, at: pt(100, 200))), .padContact(.began(slot: 1, at: pt(300, 400)))])
        #expect(core.feed(packet(at(0, 110, 200), ended(1)), at: ms(16))
            == [.padContact(.moved(slot: 0, to: pt(110, 200))), .padContact(.ended(slot: 1))])
        #expect(core.releaseEverything() == [.padContact(.cancelled(slot: 0))])
        #expect(!core.hasContacts)
    }
}
