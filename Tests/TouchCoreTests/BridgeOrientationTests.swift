import Testing
import TouchCore

/// The `Orientation` field and `--orientation` through the whole core (tracker → orientation → mode).
@Suite struct BridgeOrientationTests {
    /// 2048 × 2048 at +100+50: raw 0 → first pixel, raw 2047 → +1024, raw 4094 → +2047.
    let target = PixelRect(x: 100, y: 50, width: 2048, height: 2048)

    func core(_ override: DeviceOrientation? = nil, fit: Fit = .stretch, multitouch: Bool = false) -> TouchPipeline {
        TouchPipeline(configuration: .init(mapping: AbsoluteMapping(target: target, fit: fit), orientationOverride: override, multitouch: multitouch))
    }

    @Test func landscapeLeftFromThePacketTurnsTouches() {
        var c = core()
        // Device top-right corner, held landscape left: the user's top-left.
        #expect(c.feed(packet(at(0, 4094, 0), orientation: .landscapeLeft), at: ms(0)) == [move(100, 50), press])
        // Device +Y is the user's right.
        #expect(c.feed(packet(at(0, 4094, 4094)), at: ms(16)) == [move(100 + 2047, 50)])
        #expect(c.effectiveOrientation == .landscapeLeft)
    }

    @Test func faceUpKeepsTheLastDefiniteOrientation() {
        var c = core()
        _ = c.feed(packet(orientation: .landscapeRight), at: ms(0))
        // Device bottom-left, landscape right: the user's top-left; face up keeps landscape right.
        #expect(c.feed(packet(at(0, 0, 4094), orientation: .faceUp), at: ms(16)) == [move(100, 50), press])
        #expect(c.effectiveOrientation == .landscapeRight)
    }

    @Test func unknownBeforeAnyOrientationIsPortrait() {
        var c = core()
        #expect(c.feed(packet(at(0, 4094, 0), orientation: .unknown), at: ms(0)) == [move(100 + 2047, 50), press])
    }

    @Test func overrideWinsOverThePackets() {
        var c = core(.portraitUpsideDown)
        #expect(c.feed(packet(at(0, 0, 0), orientation: .portrait), at: ms(0)) == [move(100 + 2047, 50 + 2047), press])
        #expect(c.orientation == .portrait)  // recorded, not used
        #expect(c.effectiveOrientation == .portraitUpsideDown)
    }

    @Test func containFollowsTheOrientation() {
        // 2048×2048 target, 19.5:9 phone: portrait is 945 wide (round(2048 × 9 / 19.5) = 945.2),
        // landscape 945 high.
        var c = core(fit: .contain)
        #expect(c.screenMapping == ScreenMapping(x: 100 + (2048 - 945) / 2, y: 50, width: 945, height: 2048))
        _ = c.feed(packet(orientation: .landscapeLeft), at: ms(0))
        #expect(c.screenMapping == ScreenMapping(x: 100, y: 50 + (2048 - 945) / 2, width: 2048, height: 945))
        c.setTarget(PixelRect(x: 0, y: 0, width: 1920, height: 1080))
        #expect(c.screenMapping == ScreenMapping(x: 0, y: 97, width: 1920, height: 886))
    }

    @Test func multitouchReachesTheMode() {
        var c = core(.landscapeLeft, multitouch: true)
        #expect(c.feed(packet(at(0, 4094, 0), at(1, 0, 4094)), at: ms(0)) == [
            move(100, 50), press,
            .extraPointerMove(FingerPointer(rawValue: 2), PixelPoint(x: 100 + 2047, y: 50 + 2047)),
            .extraPointerButton(FingerPointer(rawValue: 2), .left, pressed: true),
        ])
        #expect(c.releaseEverything() == [release, .extraPointerButton(FingerPointer(rawValue: 2), .left, pressed: false)])
    }

    @Test func silenceReleasesEveryFingersPointer() {
        var c = TouchPipeline(configuration: .init(
            mapping: AbsoluteMapping(target: target), multitouch: true, idleRelease: .milliseconds(100)))
        _ = c.feed(packet(at(0, 0, 0), at(1, 10, 10), at(2, 20, 20)), at: ms(0))
        #expect(c.tick(at: ms(99)) == [])
        #expect(c.tick(at: ms(100)) == [
            release,
            .extraPointerButton(FingerPointer(rawValue: 2), .left, pressed: false),
            .extraPointerButton(FingerPointer(rawValue: 3), .left, pressed: false),
        ])
        #expect(c.nextDeadline == nil)
    }
}
