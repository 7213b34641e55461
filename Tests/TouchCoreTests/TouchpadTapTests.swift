// Taps: 1/2/3 fingers, timeouts, move threshold, double tap, tap-and-drag, drag lock, release paths.
import Testing
import TouchCore

@Suite struct TouchpadTapTests {
    var pad = Pad()

    @Test mutating func oneFingerTapIsLeftClick() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(80)
        // Pressed at the lift, held through the drag timeout (180 ms), then released.
        #expect(pad.send(ended(0)) == [leftPress])
        #expect(pad.core.nextDeadline == .milliseconds(pad.now + 180))
        #expect(pad.wait(179) == [])
        #expect(pad.wait(1) == [leftRelease])
        #expect(pad.core.nextDeadline == nil)
    }

    @Test mutating func twoFingerTapIsRightClick() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(20)
        _ = pad.send(mm(1, 15, 5))
        _ = pad.wait(60)
        #expect(pad.send(ended(1)) == [])
        _ = pad.wait(20)
        #expect(pad.send(ended(0)) == click(.right))
        #expect(pad.core.nextDeadline == nil)
    }

    @Test mutating func twoFingersLandingAndLiftingTogetherIsRightClick() {
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 5))
        _ = pad.wait(100)
        #expect(pad.send(ended(0), ended(1)) == click(.right))
    }

    @Test mutating func threeFingerTapIsMiddleClick() {
        _ = pad.send(mm(0, -15, 0), mm(1, 0, 0))
        _ = pad.wait(16)
        _ = pad.send(mm(2, 15, 0))
        _ = pad.wait(90)
        #expect(pad.send(ended(0), ended(1), ended(2)) == click(.middle))
    }

    @Test mutating func fourFingerTapDoesNothing() {
        _ = pad.send(mm(0, -15, 0), mm(1, -5, 0), mm(2, 5, 0), mm(3, 15, 0))
        _ = pad.wait(90)
        #expect(pad.send(ended(0), ended(1), ended(2), ended(3)) == [])
    }

    @Test mutating func touchLongerThanTapTimeoutIsNotATap() {
        _ = pad.send(mm(0, 0, 0))
        #expect(pad.wait(181) == [])
        #expect(pad.send(ended(0)) == [])
        #expect(pad.wait(1_000) == [])
    }

    @Test mutating func touchJustUnderTapTimeoutIsATap() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(179)
        #expect(pad.send(ended(0)) == [leftPress])
    }

    @Test mutating func restingFingerThatMovesIsNotATap() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(400)
        // It moves a little (under the move threshold) and lifts quickly after moving: still no tap.
        _ = pad.send(mm(0, 1, 0))
        _ = pad.wait(30)
        #expect(clicks(pad.send(ended(0))) == [])
        #expect(pad.wait(1_000) == [])
    }

    @Test mutating func fingerThatMovesBeyondTheThresholdIsNotATap() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(30)
        _ = pad.send(mm(0, 1.7, 0))
        _ = pad.wait(30)
        #expect(clicks(pad.send(ended(0))) == [])
    }

    @Test mutating func wobbleWithinTheThresholdIsStillATap() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(30)
        _ = pad.send(mm(0, 1.0, 1.0))
        _ = pad.wait(30)
        _ = pad.send(mm(0, 0.3, -0.5))
        _ = pad.wait(30)
        #expect(clicks(pad.send(ended(0))) == [leftPress])
    }

    @Test mutating func doubleTapIsDoubleClick() {
        var out: [OutputAction] = []
        out += pad.send(mm(0, 0, 0))
        out += pad.wait(70)
        out += pad.send(ended(0))
        out += pad.wait(100)
        out += pad.send(mm(0, 0.5, 0.5))
        out += pad.wait(70)
        out += pad.send(ended(0))
        out += pad.wait(500)
        #expect(clicks(out) == [leftPress, leftRelease, leftPress, leftRelease])
        #expect(pad.core.nextDeadline == nil)
    }

    @Test mutating func tapThenTouchWithinDragTimeoutDrags() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(70)
        #expect(pad.send(ended(0)) == [leftPress])
        _ = pad.wait(120)
        #expect(pad.send(mm(0, 0, 0)) == [])
        // Moving drags with button 1 held: motion, no release.
        let moved = pad.stroke(from: 0, 0, by: 20, 0, steps: 10)
        #expect(clicks(moved) == [])
        #expect(totalMotion(moved).dx > 200)
        #expect(pad.core.nextDeadline == .milliseconds(pad.now + 10_000))  // only the watchdog
        // Lifting releases.
        #expect(pad.send(ended(0)) == [leftRelease])
        #expect(pad.wait(1_000) == [])
    }

    @Test mutating func holdingAfterTapDragsEvenWithoutMotion() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(70)
        _ = pad.send(ended(0))
        _ = pad.wait(100)
        _ = pad.send(mm(0, 0, 0))
        #expect(pad.wait(500) == [])  // the tap timeout passes: dragging, button still held
        #expect(pad.send(ended(0)) == [leftRelease])
    }

    @Test mutating func touchAfterDragTimeoutIsNotADrag() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(70)
        _ = pad.send(ended(0))
        #expect(pad.wait(200) == [leftRelease])
        _ = pad.send(mm(0, 0, 0))
        let moved = pad.stroke(from: 0, 0, by: 20, 0, steps: 10)
        #expect(clicks(moved) == [])
        #expect(pad.send(ended(0)) == [])
    }

    @Test mutating func dragLockKeepsTheButtonAcrossALiftUntilItsTimeout() {
        pad = Pad { $0.dragLock = true }
        _ = pad.send(mm(0, 0, 0)); _ = pad.wait(70); _ = pad.send(ended(0)); _ = pad.wait(100)
        _ = pad.send(mm(0, 0, 0))
        _ = pad.stroke(from: 0, 0, by: 20, 0, steps: 5)
        #expect(pad.send(ended(0)) == [])
        // Touch again within 300 ms and move: the same drag goes on.
        _ = pad.wait(200)
        _ = pad.send(mm(0, 20, 0))
        #expect(clicks(pad.stroke(from: 20, 0, by: -10, 0, steps: 5)) == [])
        #expect(pad.send(ended(0)) == [])
        #expect(pad.wait(299) == [])
        #expect(pad.wait(1) == [leftRelease])
    }

    @Test mutating func tapEndsADragLock() {
        pad = Pad { $0.dragLock = true }
        _ = pad.send(mm(0, 0, 0)); _ = pad.wait(70); _ = pad.send(ended(0)); _ = pad.wait(100)
        _ = pad.send(mm(0, 0, 0))
        _ = pad.stroke(from: 0, 0, by: 20, 0, steps: 5)
        _ = pad.send(ended(0))
        _ = pad.wait(100)
        _ = pad.send(mm(0, 20, 0))
        _ = pad.wait(60)
        #expect(pad.send(ended(0)) == [leftRelease])
        #expect(pad.core.nextDeadline == nil)
    }

    @Test mutating func cancelledDragReleasesTheButtonWithoutAClick() {
        _ = pad.send(mm(0, 0, 0)); _ = pad.wait(70); _ = pad.send(ended(0)); _ = pad.wait(100)
        _ = pad.send(mm(0, 0, 0))
        _ = pad.stroke(from: 0, 0, by: 10, 0, steps: 5)
        #expect(pad.send(cancelled(0)) == [leftRelease])
    }

    @Test mutating func cancelledTouchIsNotATap() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(50)
        #expect(pad.send(cancelled(0)) == [])
        #expect(pad.wait(1_000) == [])
    }

    @Test mutating func silentPhoneDuringADragReleasesTheButton() {
        pad = Pad()
        pad.core = TouchPipeline(configuration: .init(
            screen: ScreenMapping(width: 1920, height: 1080), idleRelease: .milliseconds(500), mode: .touchpad))
        _ = pad.send(mm(0, 0, 0)); _ = pad.wait(70); _ = pad.send(ended(0)); _ = pad.wait(100)
        _ = pad.send(mm(0, 0, 0))
        _ = pad.stroke(from: 0, 0, by: 10, 0, steps: 5)
        #expect(pad.wait(499) == [])
        #expect(pad.wait(1) == [leftRelease])
        #expect(!pad.core.hasContacts)
        #expect(pad.core.nextDeadline == nil)
    }

    @Test mutating func releaseAllReleasesTheButtonOfATap() {
        _ = pad.send(mm(0, 0, 0)); _ = pad.wait(70)
        #expect(pad.send(ended(0)) == [leftPress])
        #expect(pad.core.releaseEverything() == [leftRelease])
        #expect(pad.core.nextDeadline == nil)
        #expect(pad.wait(1_000) == [])
    }

    @Test mutating func tapToClickCanBeTurnedOff() {
        pad = Pad { $0.tapToClick = false }
        _ = pad.send(mm(0, 0, 0)); _ = pad.wait(70)
        #expect(pad.send(ended(0)) == [])
        _ = pad.send(mm(0, 0, 0), mm(1, 10, 0)); _ = pad.wait(70)
        #expect(pad.send(ended(0), ended(1)) == [])
        #expect(pad.core.nextDeadline == nil)
    }

    @Test mutating func transitionsAreTracedOnlyWhenEnabled() {
        _ = pad.send(mm(0, 0, 0)); _ = pad.wait(70); _ = pad.send(ended(0))
        #expect(pad.core.trace.records.isEmpty)
        pad.core.setTracing(true)
        _ = pad.wait(500)
        let lines = pad.core.trace.records.map(\.description)
        #expect(lines == ["tap: tapped → timeout → idle (t=1250ms)"])
        pad.core.clearTrace()
        #expect(pad.core.trace.records.isEmpty)
    }
}
