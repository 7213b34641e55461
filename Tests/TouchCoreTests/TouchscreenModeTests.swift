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

/// Touchscreen mode with real touches (the uinput backend): every finger is its own touch sequence.
@Suite struct TouchscreenRealTouchTests {
    var mode = TouchscreenMode(mapping: ScreenMapping(width: 2048, height: 2048), touches: true)

    private func touch(_ slot: UInt8, _ phase: TouchPhase, _ x: Int32, _ y: Int32) -> OutputAction {
        .touch(slot: slot, phase: phase, at: PixelPoint(x: x, y: y))
    }

    @Test mutating func everyFingerIsATouchAndNoPointerActs() {
        #expect(mode.feed(
            .began(slot: 0, at: pt(0, 0)), .began(slot: 1, at: .centre), .began(slot: 2, at: pt(4094, 4094)))
            == [touch(0, .began, 0, 0), touch(1, .began, 1024, 1024), touch(2, .began, 2047, 2047)])
        #expect(mode.isPressed)
        #expect(mode.primarySlot == nil)
        #expect(mode.feed(.moved(slot: 1, to: pt(2047, 0)), .moved(slot: 2, to: pt(4093, 4094)))
            == [touch(1, .moved, 1024, 0)])
        #expect(mode.feed(.ended(slot: 0), .cancelled(slot: 1))
            == [touch(0, .ended, 0, 0), touch(1, .cancelled, 1024, 0)])
    }

    @Test mutating func releaseAllCancelsEveryTouchOnce() {
        _ = mode.feed(.began(slot: 3, at: .centre), .began(slot: 7, at: pt(0, 0)))
        var actions: [OutputAction] = []
        mode.releaseAll(into: &actions)
        #expect(actions == [touch(3, .cancelled, 1024, 1024), touch(7, .cancelled, 0, 0)])
        #expect(!mode.isPressed)
        actions.removeAll()
        mode.releaseAll(into: &actions)
        #expect(actions.isEmpty)
        #expect(mode.feed(.moved(slot: 3, to: pt(0, 0)), .ended(slot: 7)) == [])
    }
}
