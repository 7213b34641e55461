import Testing
import TouchCore
import TouchX11

/// `TouchscreenMode` with multi-pointer output: every finger drives its own pointer (an X master of its own through TouchX11's `FingerPointers`).
@Suite struct MultitouchModeTests {
    /// 2048 × 2048 pixels: raw 2047 is pixel 1024, raw 4094 is 2047.
    var mode = TouchscreenMode(mapping: ScreenMapping(width: 2048, height: 2048), multitouch: true)

    func f(_ n: UInt8) -> FingerPointer { FingerPointer(rawValue: n) }
    func fmove(_ n: UInt8, _ x: Int32, _ y: Int32) -> OutputAction { .extraPointerMove(f(n), PixelPoint(x: x, y: y)) }
    func fpress(_ n: UInt8) -> OutputAction { .extraPointerButton(f(n), .left, pressed: true) }
    func frelease(_ n: UInt8) -> OutputAction { .extraPointerButton(f(n), .left, pressed: false) }

    @Test mutating func firstFingerIsTheCorePointer() {
        #expect(mode.feed(.began(slot: 0, at: .centre)) == [move(1024, 1024), press])
        #expect(mode.primarySlot == 0)
    }

    @Test mutating func threeFingersDriveThreePointers() {
        let actions = mode.feed(
            .began(slot: 0, at: pt(0, 0)),
            .began(slot: 1, at: pt(2047, 2047)),
            .began(slot: 2, at: pt(4094, 4094)))
        #expect(actions == [move(0, 0), press, fmove(2, 1024, 1024), fpress(2), fmove(3, 2047, 2047), fpress(3)])
        #expect(mode.feed(.moved(slot: 1, to: pt(0, 2047)), .moved(slot: 2, to: pt(4094, 4094))) == [fmove(2, 0, 1024)])
        #expect(mode.feed(.ended(slot: 1), .cancelled(slot: 2), .ended(slot: 0)) == [frelease(2), frelease(3), release])
        #expect(!mode.isPressed)
    }

    @Test mutating func aNewFingerTakesTheLowestIdlePointer() {
        _ = mode.feed(.began(slot: 0, at: .centre), .began(slot: 1, at: .centre), .began(slot: 2, at: .centre))
        // The core pointer's finger lifts; the others keep their pointers.
        #expect(mode.feed(.ended(slot: 0)) == [release])
        #expect(mode.slot(onPointer: 2) == 1)
        // The next new finger (here in slot 5) takes the core pointer again, then pointer 4.
        #expect(mode.feed(.began(slot: 5, at: pt(0, 0))) == [move(0, 0), press])
        #expect(mode.feed(.began(slot: 0, at: pt(0, 0))) == [fmove(4, 0, 0), fpress(4)])
        #expect(mode.primarySlot == 5)
        #expect(mode.slot(onPointer: 4) == 0)
    }

    @Test mutating func tenFingersUseTenPointersAndReleaseAllReleasesEach() {
        var actions: [OutputAction] = []
        for s in UInt8(0)..<10 { mode.handle(.began(slot: s, at: .centre), at: ms(0), into: &actions) }
        #expect(actions.count == 20)
        #expect(actions[18] == fmove(10, 1024, 1024))
        for n in 1...10 { #expect(mode.slot(onPointer: n) == UInt8(n - 1)) }
        var released: [OutputAction] = []
        mode.releaseAll(into: &released)
        #expect(released == [release] + (2...10).map { frelease(UInt8($0)) })
        // Later moves of the forgotten fingers are ignored.
        #expect(mode.feed(.moved(slot: 3, to: pt(0, 0)), .ended(slot: 3)) == [])
    }

    @Test mutating func withoutMultitouchOnlyTheCorePointerIsUsed() {
        var single = TouchscreenMode(mapping: ScreenMapping(width: 2048, height: 2048))
        #expect(!single.multitouch)
        #expect(single.feed(.began(slot: 0, at: .centre), .began(slot: 1, at: pt(0, 0)), .moved(slot: 1, to: pt(9, 9))) == [move(1024, 1024), press])
        #expect(single.slot(onPointer: 2) == nil)
        #expect(single.feed(.ended(slot: 0), .moved(slot: 1, to: pt(0, 0)), .ended(slot: 1)) == [release])
    }

    @Test func fingerPointerNames() {
        #expect(FingerPointer.first.masterName == "touchbridge finger 2")
        #expect(FingerPointer.last.masterName == "touchbridge finger 10")
        #expect(FingerPointer.first.masterName.hasPrefix(FingerPointer.masterNamePrefix))
    }
}
