// Two-finger scroll (natural, horizontal, speed, accumulation), kinetic coasting, pinch, swipes.
import Testing
import TouchCore
import TouchWire

/// Two fingers 16 mm apart side by side, moved together by (dx, dy) mm in `steps` packets 16 ms apart.
private func twoFingerScroll(_ pad: inout Pad, dx: Double, dy: Double, steps: Int = 10, lift: Bool = true) -> [OutputAction] {
    var out = pad.send(mm(0, -8, 0), mm(1, 8, 0))
    out += pad.multiStroke([(0, -8, 0), (1, 8, 0)], by: dx, dy, steps: steps)
    if lift { out += pad.send(ended(0), ended(1)) }
    return out
}

private func count(_ button: PointerButton, in actions: [OutputAction]) -> Int {
    actions.filter { $0 == .button(button, pressed: true) }.count
}

@Suite struct TouchpadScrollTests {
    static func noKinetic(_ s: inout TouchpadSettings) { s.kineticScroll = false }

    @Test func twoFingersMovingDownScrollDown() {
        var pad = Pad(Self.noKinetic)
        let out = twoFingerScroll(&pad, dx: 0, dy: 21)
        // 21 mm at 4 mm per click: 5 clicks of button 5, each a press/release pair; no motion, no tap.
        #expect(clicks(out) == Array(repeating: click(.wheelDown), count: 5).flatMap { $0 })
        #expect(totalMotion(out) == (0, 0))
        #expect(pad.wait(1_000) == [])
    }

    @Test func twoFingersMovingUpScrollUp() {
        var pad = Pad(Self.noKinetic)
        let out = twoFingerScroll(&pad, dx: 0, dy: -13)
        #expect(count(.wheelUp, in: out) == 3 && count(.wheelDown, in: out) == 0)
    }

    @Test func horizontalScrollUsesButtonsSixAndSeven() {
        var pad = Pad(Self.noKinetic)
        let right = twoFingerScroll(&pad, dx: 13, dy: 0)
        #expect(clicks(right) == Array(repeating: click(.wheelRight), count: 3).flatMap { $0 })
        _ = pad.wait(500)
        let left = twoFingerScroll(&pad, dx: -9, dy: 0)
        #expect(clicks(left) == Array(repeating: click(.wheelLeft), count: 2).flatMap { $0 })
    }

    @Test func naturalScrollInvertsBothAxes() {
        var pad = Pad { Self.noKinetic(&$0); $0.naturalScroll = true }
        let down = twoFingerScroll(&pad, dx: 0, dy: 13)
        #expect(count(.wheelUp, in: down) == 3 && count(.wheelDown, in: down) == 0)
        _ = pad.wait(500)
        let right = twoFingerScroll(&pad, dx: 13, dy: 0)
        #expect(count(.wheelLeft, in: right) == 3 && count(.wheelRight, in: right) == 0)
    }

    @Test func scrollSpeedScalesTheClicks() {
        var pad = Pad { Self.noKinetic(&$0); $0.scrollSpeed = 2 }
        #expect(count(.wheelDown, in: twoFingerScroll(&pad, dx: 0, dy: 13)) == 6)
    }

    @Test func smallDeltasAccumulateIntoClicks() {
        var pad = Pad(Self.noKinetic)
        // 13 mm in 60 steps of 0.22 mm: no single step makes a click, together they make three.
        #expect(count(.wheelDown, in: twoFingerScroll(&pad, dx: 0, dy: 13, steps: 60)) == 3)
    }

    @Test func scrollSnapsToTheDominantAxis() {
        var pad = Pad(Self.noKinetic)
        let out = twoFingerScroll(&pad, dx: 3, dy: 17)
        #expect(count(.wheelDown, in: out) == 4)
        #expect(count(.wheelRight, in: out) == 0)
    }

    @Test func scrollIsNotATapAndDoesNotMoveThePointerAfterwards() {
        var pad = Pad(Self.noKinetic)
        var out = twoFingerScroll(&pad, dx: 0, dy: 13, lift: false)
        // One finger lifts; the other keeps moving: the gesture is finished, no pointer motion.
        out += pad.send(ended(1))
        out += pad.stroke(from: -8, 12, by: 10, 0, steps: 5)
        out += pad.send(ended(0))
        out += pad.wait(1_000)
        #expect(totalMotion(out) == (0, 0))
        #expect(count(.right, in: out) == 0 && count(.left, in: out) == 0)
    }
}

@Suite struct KineticScrollTests {
    @Test func flickCoastsAndSlowsDown() {
        var pad = Pad()
        // 20 mm in 80 ms: 250 mm/s at the lift.
        let during = twoFingerScroll(&pad, dx: 0, dy: 21, steps: 5)
        #expect(count(.wheelDown, in: during) == 5)
        #expect(pad.core.nextDeadline == .milliseconds(pad.now + 16))
        // Coasting scrolls on: about 250 mm/s × 0.325 s ≈ 80 mm ≈ 20 clicks, more early than late.
        let first = pad.wait(160)
        let second = pad.wait(160)
        let rest = pad.wait(3_000)
        let a = count(.wheelDown, in: first), b = count(.wheelDown, in: second), c = count(.wheelDown, in: rest)
        #expect(a > b && b > 0)
        #expect(a + b + c >= 15 && a + b + c <= 25)
        #expect(count(.wheelUp, in: first + second + rest) == 0)
        // It stops by itself: no timer left.
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func newTouchStopsCoasting() {
        var pad = Pad()
        _ = twoFingerScroll(&pad, dx: 0, dy: 21, steps: 5)
        #expect(count(.wheelDown, in: pad.wait(50)) > 0)
        _ = pad.send(mm(0, 0, 0))
        // Only the tap timeout and the watchdog remain; no more wheel clicks.
        #expect(count(.wheelDown, in: pad.wait(1_000)) == 0)
    }

    @Test func slowScrollDoesNotCoast() {
        var pad = Pad()
        // 12 mm in 480 ms: 25 mm/s, under the 50 mm/s flick speed.
        _ = twoFingerScroll(&pad, dx: 0, dy: 13, steps: 30)
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func fingersThatStopBeforeLiftingDoNotCoast() {
        var pad = Pad()
        _ = twoFingerScroll(&pad, dx: 0, dy: 21, steps: 5, lift: false)
        _ = pad.wait(100)
        _ = pad.send(ended(0), ended(1))
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func kineticScrollingCanBeTurnedOff() {
        var pad = Pad { $0.kineticScroll = false }
        _ = twoFingerScroll(&pad, dx: 0, dy: 21, steps: 5)
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func releaseAllStopsCoasting() {
        var pad = Pad()
        _ = twoFingerScroll(&pad, dx: 0, dy: 21, steps: 5)
        _ = pad.core.releaseEverything()
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func gestureAndKineticTransitionsAreTraced() {
        var pad = Pad()
        pad.core.setTracing(true)
        _ = twoFingerScroll(&pad, dx: 0, dy: 21, steps: 5)
        _ = pad.wait(3_000)
        let lines = pad.core.trace.records.map { "\($0.machine): \($0.from) → \($0.event) → \($0.to)" }
        for expected in ["tap: idle → touch → touch", "gesture: none → fingers → undecided", "tap: touch → motion → hold",
                         "gesture: undecided → travel → scroll", "kinetic: idle → flick → coasting",
                         "gesture: scroll → fingers → finished", "gesture: finished → fingers → none", "tap: hold → release → idle", "kinetic: coasting → tick → idle"] {
            #expect(lines.contains(expected), "missing \(expected) in \(lines)")
        }
    }

    @Test func expNegativeIsAccurate() {
        // e^-0.05, e^-1, e^-3 to within 1e-6 relative.
        for (x, e) in [(0.05, 0.951229424500714), (1.0, 0.36787944117144233), (3.0, 0.049787068367863944)] {
            #expect(abs(KineticScroller.expNegative(x) / e - 1) < 1e-6)
        }
    }
}

@Suite struct PinchAndSwipeTests {
    @Test func spreadingTwoFingersIsCtrlWheelUp() {
        var pad = Pad()
        var out = pad.send(mm(0, -5, 0), mm(1, 5, 0))
        // Each finger moves 7.5 mm outwards: the distance grows by 15 mm, two zoom steps of 6 mm.
        for i in 1...10 {
            out += pad.wait(16)
            let d = 0.75 * Double(i)
            out += pad.send(mm(0, -5 - d, 0), mm(1, 5 + d, 0))
        }
        out += pad.send(ended(0), ended(1))
        out += pad.wait(1_000)
        let zoom = clicks(out)
        #expect(count(.wheelUp, in: zoom) == 2 && count(.wheelDown, in: zoom) == 0)
        #expect(zoom.first == .key(.controlL, pressed: true))
        #expect(balanced(out))
        #expect(count(.right, in: out) == 0)
    }

    @Test func closingTwoFingersIsCtrlWheelDown() {
        var pad = Pad()
        var out = pad.send(mm(0, -15, 0), mm(1, 15, 0))
        // One finger still, the other moves 13 mm towards it.
        out += pad.stroke(1, from: 15, 0, by: -13, 0, steps: 10)
        out += pad.send(ended(0), ended(1))
        #expect(count(.wheelDown, in: out) == 2 && count(.wheelUp, in: out) == 0)
        // Every zoom click is inside a Ctrl press/release of the same step.
        #expect(balanced(out))
        #expect(clicks(out) == [.key(.controlL, pressed: true)] + click(.wheelDown) + [.key(.controlL, pressed: false),
                                .key(.controlL, pressed: true)] + click(.wheelDown) + [.key(.controlL, pressed: false)])
    }

    @Test(arguments: [
        (3, SwipeDirection.left, -20.0, 0.0, [KeySym.altL, .right]),
        (3, .right, 20, 0, [.altL, .left]),
        (3, .up, 0, -20, [.superL]),
        (3, .down, 0, 20, [.escape]),
        (4, .left, -20, 0, [.controlL, .altL, .right]),
        (4, .right, 20, 0, [.controlL, .altL, .left]),
        (4, .up, 0, -20, [.controlL, .altL, .up]),
        (4, .down, 0, 20, [.controlL, .altL, .down]),
    ])
    func swipeSendsItsChordOnce(fingers: Int, direction: SwipeDirection, dx: Double, dy: Double, keys: [KeySym]) {
        var pad = Pad()
        let starts: [(UInt8, Double, Double)] = (0..<fingers).map { (UInt8($0), Double($0) * 8 - 12, 0) }
        var p = TouchPacket()
        for (s, x, y) in starts { p.events.append(mm(s, x, y)) }
        p.hasTouches = true
        var out: [OutputAction] = []
        pad.core.handle(p, at: .milliseconds(pad.now), into: &out)
        out += pad.multiStroke(starts, by: dx, dy, steps: 10)
        var lift = TouchPacket()
        for (s, _, _) in starts { lift.events.append(ended(s)) }
        lift.hasTouches = true
        pad.core.handle(lift, at: .milliseconds(pad.now), into: &out)
        out += pad.wait(1_000)
        let expected = keys.map { OutputAction.key($0, pressed: true) } + keys.reversed().map { .key($0, pressed: false) }
        #expect(out == expected)
    }

    @Test func swipesCanBeRebound() {
        var pad = Pad { $0.swipes.three[.left] = KeyChord(parsing: "ctrl+Page_Down")! }
        let starts: [(UInt8, Double, Double)] = [(0, -10, 0), (1, 0, 0), (2, 10, 0)]
        _ = pad.send(mm(0, -10, 0), mm(1, 0, 0), mm(2, 10, 0))
        let out = pad.multiStroke(starts, by: -20, 0, steps: 10)
        #expect(out == [.key(.controlL, pressed: true), .key(.pageDown, pressed: true),
                        .key(.pageDown, pressed: false), .key(.controlL, pressed: false)])
    }

    @Test func unboundSwipeDoesNothing() {
        var pad = Pad { $0.swipes.three[.up] = KeyChord.none }
        let starts: [(UInt8, Double, Double)] = [(0, -10, 0), (1, 0, 0), (2, 10, 0)]
        _ = pad.send(mm(0, -10, 0), mm(1, 0, 0), mm(2, 10, 0))
        #expect(pad.multiStroke(starts, by: 0, -20, steps: 10) == [])
    }
}

@Suite struct KeyChordTests {
    @Test func parsesModifiersAndKeyNames() {
        #expect(KeyChord(parsing: "ctrl+alt+Right") == KeyChord(.controlL, .altL, .right))
        #expect(KeyChord(parsing: "Super") == KeyChord(.superL))
        #expect(KeyChord(parsing: "CTRL + page_up") == KeyChord(.controlL, .pageUp))
        #expect(KeyChord(parsing: "ctrl+t") == KeyChord(.controlL, KeySym(rawValue: 0x74)))
        #expect(KeyChord(parsing: "0xff53") == KeyChord(.right))
        #expect(KeyChord(parsing: "none") == KeyChord.none)
    }

    @Test func rejectsUnknownNamesAndLongChords() {
        #expect(KeyChord(parsing: "ctrl+banana") == nil)
        #expect(KeyChord(parsing: "ctrl+alt+shift+super+a") == nil)
        #expect(KeyChord(parsing: "ctrl++") == nil)
    }

    @Test func printsWhatItParses() {
        for text in ["ctrl+alt+Right", "super", "alt+Left", "ctrl+Page_Down", "shift+F10", "ctrl+t", "none"] {
            #expect(KeyChord(parsing: text)?.description == text)
        }
    }

    @Test func emitsPressesInOrderAndReleasesInReverse() {
        var out: [OutputAction] = []
        KeyChord(.controlL, .altL, .right).emit(into: &out)
        #expect(out == [.key(.controlL, pressed: true), .key(.altL, pressed: true), .key(.right, pressed: true),
                        .key(.right, pressed: false), .key(.altL, pressed: false), .key(.controlL, pressed: false)])
    }
}
