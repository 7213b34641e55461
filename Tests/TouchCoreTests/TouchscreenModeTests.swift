import Testing
import TouchCore

@Suite struct TouchscreenModeTests {
    /// 2048 × 2048 pixels: raw r maps to r * 2048 / 4094, so raw 2047 is pixel 1024 and raw 4094 is 2047.
    var mode = TouchscreenMode(mapping: ScreenMapping(width: 2048, height: 2048))

    @Test mutating func firstFingerMovesThenPressesButtonOne() {
        #expect(mode.feed(.began(slot: 0, at: .centre)) == [move(1024, 1024), press])
        #expect(mode.isPressed)
        #expect(mode.primarySlot == 0)
    }

    @Test mutating func dragHoldsButtonOne() {
        let actions = mode.feed(
            .began(slot: 0, at: pt(0, 0)),
            .moved(slot: 0, to: pt(2047, 0)),
            .moved(slot: 0, to: pt(4094, 4094)),
            .ended(slot: 0))
        #expect(actions == [move(0, 0), press, move(1024, 0), move(2047, 2047), release])
        #expect(!mode.isPressed)
    }

    @Test mutating func moveWithinTheSamePixelIsSuppressed() {
        // raw 1 and raw 0 both land on pixel 0.
        #expect(mode.feed(.began(slot: 0, at: pt(0, 0)), .moved(slot: 0, to: pt(1, 1))) == [move(0, 0), press])
    }

    @Test mutating func cancelReleasesWithoutClick() {
        _ = mode.feed(.began(slot: 0, at: .centre))
        // Only the release: no second press/release pair, no move.
        #expect(mode.feed(.cancelled(slot: 0)) == [release])
        #expect(!mode.isPressed)
    }

    @Test mutating func secondFingerIsIgnoredInTouchscreenMode() {
        _ = mode.feed(.began(slot: 0, at: .centre))
        #expect(mode.feed(
            .began(slot: 1, at: pt(0, 0)),
            .moved(slot: 1, to: pt(10, 10)),
            .ended(slot: 1),
            .cancelled(slot: 2)) == [])
        #expect(mode.primarySlot == 0)
    }

    @Test mutating func fingerAlreadyDownStaysIgnoredAfterPrimaryLifts() {
        _ = mode.feed(.began(slot: 0, at: .centre), .began(slot: 1, at: pt(0, 0)))
        #expect(mode.feed(.ended(slot: 0)) == [release])
        #expect(mode.feed(.moved(slot: 1, to: pt(4094, 4094)), .ended(slot: 1)) == [])
        #expect(!mode.isPressed)
    }

    @Test mutating func nextNewFingerBecomesPrimary() {
        _ = mode.feed(.began(slot: 0, at: .centre), .began(slot: 1, at: pt(0, 0)))
        _ = mode.feed(.ended(slot: 0))
        #expect(mode.feed(.began(slot: 2, at: pt(4094, 0))) == [move(2047, 0), press])
        #expect(mode.primarySlot == 2)
        #expect(mode.feed(.moved(slot: 1, to: .centre)) == [])
    }

    @Test mutating func releaseAllReleasesOnlyWhenPressed() {
        var out: [OutputAction] = []
        mode.releaseAll(into: &out)
        #expect(out == [])
        _ = mode.feed(.began(slot: 3, at: .centre))
        mode.releaseAll(into: &out)
        #expect(out == [release])
        // The forgotten primary's later changes are ignored.
        #expect(mode.feed(.moved(slot: 3, to: pt(0, 0)), .ended(slot: 3)) == [])
    }

    @Test mutating func setMappingAppliesToLaterMoves() {
        _ = mode.feed(.began(slot: 0, at: .centre))
        mode.setMapping(ScreenMapping(x: 100, y: 0, width: 10, height: 10))
        #expect(mode.feed(.moved(slot: 0, to: pt(0, 0))) == [move(100, 0)])
    }
}
