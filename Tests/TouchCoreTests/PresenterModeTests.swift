// Presenter mode: each gesture's keys and overlay actions, thresholds shared with the touchpad, the
// laser pointer, cancellation, rebinding, and no timer when idle.
import Testing
import TouchCore
import TouchWire

private func chord(_ keys: KeySym...) -> [OutputAction] {
    keys.map { .key($0, pressed: true) } + keys.reversed().map { .key($0, pressed: false) }
}
private let next = chord(.pageDown)
private let previous = chord(.pageUp)
private let blank = chord(KeySym(rawValue: 0x62))

/// The laser actions in `actions`.
private func lasers(_ actions: [OutputAction]) -> [OutputAction] {
    actions.filter { if case .overlay = $0 { return true } else { return false } }
}

@Suite struct PresenterModeTests {
    var pad = Pad(mode: .presenter)

    @Test mutating func oneFingerTapIsNext() {
        #expect(pad.send(mm(0, 0, 0)) == [])
        _ = pad.wait(80)
        #expect(pad.send(ended(0)) == next)
        #expect(pad.core.nextDeadline == nil)
        #expect(pad.wait(1_000) == [])
    }

    @Test mutating func swipeLeftIsNext() {
        _ = pad.send(mm(0, 10, 0))
        // 12 mm is the touchpad's swipe distance: nothing before it, the key as it is crossed.
        let before = pad.stroke(from: 10, 0, by: -11.5, 0, steps: 5)
        #expect(before == [])
        #expect(pad.stroke(from: -1.5, 0, by: -1, 0, steps: 1) == next)
        // One swipe, one key: the rest of the motion and the lift do nothing.
        #expect(pad.stroke(from: -2.5, 0, by: -20, 0, steps: 5) == [])
        #expect(pad.send(ended(0)) == [])
    }

    @Test mutating func swipeRightIsPrevious() {
        _ = pad.send(mm(0, -10, 0))
        #expect(pad.stroke(from: -10, 0, by: 20, 2, steps: 8) == previous)
        #expect(pad.send(ended(0)) == [])
    }

    @Test mutating func verticalSwipeDoesNothing() {
        _ = pad.send(mm(0, 0, -10))
        #expect(pad.stroke(from: 0, -10, by: 2, 30, steps: 8) == [])
        #expect(pad.send(ended(0)) == [])
    }

    @Test mutating func swipeFollowsOrientation() {
        // Held landscape-left: the user's left is the device's +y or -y; a swipe the user sees as
        // leftwards must still be next.
        pad.orientation = .landscapeLeft
        _ = pad.send(mm(0, 0, 0))
        let user = DeviceOrientation.landscapeLeft.toUserView(dx: 0, dy: 20)
        let out = pad.stroke(from: 0, 0, by: 0, 20, steps: 8)
        #expect(out == (user.dx < 0 ? next : previous))
    }

    @Test mutating func twoFingerTapIsBlank() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(30)
        _ = pad.send(mm(1, 15, 5))
        _ = pad.wait(60)
        #expect(pad.send(ended(1)) == [])
        #expect(pad.send(ended(0)) == blank)
    }

    @Test mutating func threeFingerTapClearsDrawings() {
        _ = pad.send(mm(0, -15, 0), mm(1, 0, 0), mm(2, 15, 0))
        _ = pad.wait(90)
        #expect(pad.send(ended(0), ended(1), ended(2)) == [.overlay(.clearDrawings)])
    }

    @Test mutating func slowTapIsNothing() {
        _ = pad.send(mm(0, 0, 0))
        #expect(pad.wait(181) == [])
        #expect(pad.send(ended(0)) == [])
    }

    @Test mutating func slowTwoFingerTapIsNothing() {
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 0))
        #expect(pad.wait(300) == [])
        #expect(pad.send(ended(0), ended(1)) == [])
    }

    @Test mutating func movedTapIsNotATap() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.send(mm(0, 2, 0))  // beyond the touchpad's 1.6 mm tap threshold, short of a swipe
        #expect(pad.send(ended(0)) == [])
    }

    @Test mutating func longPressTogglesTheLaser() {
        _ = pad.send(mm(0, 0, 0))
        #expect(!pad.core.laserOn)
        // 500 ms of rest: the laser comes on, at the finger (the centre of the 1920x1080 screen).
        #expect(pad.wait(499) == [])
        let on = pad.wait(1)
        #expect(pad.core.laserOn)
        #expect(on.count == 1)
        guard case .overlay(.laser(let p))? = on.first else { Issue.record("no laser: \(on)"); return }
        #expect(abs(Int(p.x) - 960) <= 1 && abs(Int(p.y) - 540) <= 1)
        // It follows the finger, and a long horizontal drag is not a swipe while it is on.
        let moved = pad.stroke(from: 0, 0, by: 30, 0, steps: 10)
        #expect(moved.count == 10)
        #expect(lasers(moved) == moved)
        #expect(pad.send(ended(0)) == [])
        // The trail (the last 8 places) fades: 250 ms after each point was left, it is trimmed away; the
        // dot fades out over 300 ms after the lift, then goes. The laser stays on.
        let fade = pad.wait(300)
        #expect(lasers(fade) == fade)
        let trims = fade.filter { if case .overlay(.laserTrim) = $0 { return true } else { return false } }
        #expect(trims.first == .overlay(.laserTrim(keep: 7)) && trims.last == .overlay(.laserTrim(keep: 0)), "\(fade)")
        #expect(fade.last == .overlay(.laserOff), "the dot is gone 300 ms after the lift: \(fade)")
        #expect(pad.core.laserOn, "the laser stays on until toggled")
        #expect(pad.core.nextDeadline == nil, "no timer once the trail and the dot have faded")
        // Next touch: the dot jumps under it (its trail has faded: nothing to trim); a tap still goes to
        // the next slide.
        let down = pad.send(mm(0, -20, 0))
        #expect(down.count == 1, "\(down)")
        guard case .overlay(.laser)? = down.first else { Issue.record("\(down)"); return }
        #expect(pad.send(ended(0)) == next)
        // Another long press turns it off.
        _ = pad.send(mm(0, 0, 0))
        #expect(pad.wait(500) == [.overlay(.laserOff)])
        #expect(!pad.core.laserOn)
        #expect(pad.send(ended(0)) == [])
    }

    /// The laser on and pointing: a long press, then a short drag.
    private mutating func pointLaser() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(500)
        _ = pad.stroke(from: 0, 0, by: 10, 0, steps: 4)
    }

    /// The opacities of the `laserAlpha` actions in `actions`.
    private static func alphas(_ actions: [OutputAction]) -> [UInt8] {
        actions.compactMap { if case .overlay(.laserAlpha(let a)) = $0 { return a } else { return nil } }
    }

    @Test mutating func theDotFadesOutAfterTheLiftAndComesBackWithTheNextFinger() {
        pointLaser()
        #expect(pad.core.laserOn)
        #expect(pad.send(ended(0)) == [])
        // Fading: opacity steps every 33 ms, falling, none at full; nothing else shown or hidden yet.
        let early = pad.wait(150)
        let a = Self.alphas(early)
        #expect(a.count == 4 && a == a.sorted(by: >) && a.allSatisfy { $0 < 255 && $0 > 0 }, "\(early)")
        #expect(!early.contains(.overlay(.laserOff)))
        // A finger lands mid-fade: the dot is back at full strength under it, and stays while it rests.
        let down = pad.send(mm(0, -20, 0))
        guard case .overlay(.laser)? = down.first else { Issue.record("\(down)"); return }
        let resting = pad.wait(400)
        #expect(Self.alphas(resting).isEmpty && !resting.contains(.overlay(.laserOff)), "\(resting)")
        // It lifts (a slow tap: no key): the dot fades again and is gone after 300 ms.
        #expect(pad.send(ended(0)) == [])
        let fade = pad.wait(300)
        #expect(fade.last == .overlay(.laserOff), "\(fade)")
        #expect(pad.core.laserOn && pad.core.nextDeadline == nil)
    }

    @Test mutating func releaseAllTurnsTheLaserOffAndFadesTheDot() {
        pointLaser()
        var out: [OutputAction] = []
        pad.core.releaseAll(into: &out)
        #expect(!pad.core.laserOn, "silence, the page gone or another sender end laser mode")
        #expect(!out.contains { if case .key = $0 { return true } else { return false } })
        let fade = pad.wait(300)
        #expect(!Self.alphas(fade).isEmpty && fade.last == .overlay(.laserOff), "\(fade)")
        #expect(pad.core.nextDeadline == nil)
        // The next finger shows no dot, and a tap is the next slide again.
        #expect(pad.send(mm(0, 0, 0)) == [])
        #expect(pad.send(ended(0)) == next)
    }

    @Test func theSilenceWatchdogTurnsTheLaserOffAndFadesTheDot() {
        var p = Pad(mode: .presenter)
        _ = p.send(mm(0, 0, 0))
        _ = p.wait(500)
        #expect(p.core.laserOn)
        // The phone goes silent with the finger down: 10 s (the Pad's idle release) later, released.
        let silent = p.wait(10_000) + p.wait(300)
        #expect(!p.core.laserOn)
        // The dot fades (opacity steps), then goes.
        #expect(!Self.alphas(silent).isEmpty && silent.last == .overlay(.laserOff), "\(silent)")
        #expect(p.core.nextDeadline == nil)
    }

    @Test mutating func releaseAllKeepsTheDrawings() {
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 0))
        _ = pad.wait(500)
        #expect(pad.core.drawingOn)
        #expect(pad.send(ended(0), ended(1)) == [])
        let began = strokesBegun(pad.send(mm(0, -10, 0)))
        _ = pad.stroke(from: -10, 0, by: 20, 0, steps: 4)
        var out: [OutputAction] = []
        pad.core.releaseAll(into: &out)
        // The stroke in progress ends and stays: no clear, no laser action.
        #expect(began.count == 1 && out == began.map { .overlay(.strokeEnded($0.id)) })
        #expect(pad.wait(1_000) == [])
    }

    @Test mutating func theDotGoesWithASwitchAwayFromPresenterMode() {
        pointLaser()
        var out: [OutputAction] = []
        pad.core.setMode(.touchpad, into: &out)
        #expect(out.last == .overlay(.laserOff), "the presenter's machine is gone, and its dot with it: \(out)")
        #expect(pad.core.nextDeadline == nil, "nothing left to fade")
    }

    @Test mutating func threeFingersRestingIsNothing() {
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 0), mm(2, -15, 0))
        #expect(pad.wait(2_000) == [])
        #expect(!pad.core.laserOn && !pad.core.drawingOn)
    }

    @Test mutating func twoFingerLongPressTogglesDrawingAndFingersDraw() {
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 0))
        #expect(pad.wait(499) == [])
        #expect(pad.wait(1) == [])
        #expect(pad.core.drawingOn && !pad.core.laserOn)
        #expect(pad.send(ended(0), ended(1)) == [])
        // Two fingers draw at once: each its own stroke, begun, continued, ended; no key, no swipe.
        let began = pad.send(mm(0, -10, 0), mm(1, 10, 20))
        #expect(began.count == 2)
        let strokes = strokesBegun(began)
        guard strokes.map(\.slot) == [0, 1] else { Issue.record("\(began)"); return }
        let drawn = pad.multiStroke([(0, -10, 0), (1, 10, 20)], by: -20, 0, steps: 6)
        #expect(drawn.count == 12)
        #expect(drawn.allSatisfy { if case .overlay(.strokeTo) = $0 { return true } else { return false } })
        #expect(pad.send(ended(0), ended(1)) == strokes.map { .overlay(.strokeEnded($0.id)) })
        // A one-finger tap is a dot, not the next slide; a three-finger tap still clears.
        let dot = pad.send(mm(0, 0, 0)) + pad.send(ended(0))
        #expect(dot.count == 2 && !dot.contains { if case .key = $0 { return true } else { return false } })
        let clear = pad.send(mm(0, -15, 0), mm(1, 0, 0), mm(2, 15, 0)) + pad.send(ended(0), ended(1), ended(2))
        #expect(clear.last == .overlay(.clearDrawings))
        // Another two-finger long press turns drawing off (its own two dots end there).
        let dots = strokesBegun(pad.send(mm(0, 0, 0), mm(1, 15, 0)))
        let off = pad.wait(500)
        #expect(dots.map(\.slot) == [0, 1] && off == dots.map { .overlay(.strokeEnded($0.id)) })
        #expect(!pad.core.drawingOn)
        #expect(pad.send(ended(0), ended(1)) == [])
    }

    @Test mutating func drawingTurnsTheLaserOff() {
        _ = pad.send(mm(0, 0, 0))
        _ = pad.wait(500)
        #expect(pad.core.laserOn)
        _ = pad.send(ended(0))
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 0))
        #expect(pad.wait(500) == [.overlay(.laserOff)])
        #expect(pad.core.drawingOn && !pad.core.laserOn)
    }

    @Test func drawingCanBeOnFromTheStart() {
        var settings = PresenterSettings()
        settings.drawing = true
        var p = Pad(mode: .presenter, presenter: settings)
        #expect(p.core.drawingOn)
        let out = p.send(mm(0, 0, 0))
        let began = strokesBegun(out)
        #expect(began.map(\.slot) == [0], "\(out)")
        // Silence ends the stroke (it stays drawn), never a key.
        var released: [OutputAction] = []
        p.core.releaseAll(into: &released)
        #expect(released == began.map { .overlay(.strokeEnded($0.id)) })
    }

    @Test mutating func cancelledTouchIsNeverAKey() {
        _ = pad.send(mm(0, 0, 0))
        #expect(pad.send(cancelled(0)) == [])
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 0))
        #expect(pad.send(cancelled(0), cancelled(1)) == [])
    }

    @Test mutating func silenceReleasesWithoutAKey() {
        var p = Pad(mode: .presenter)
        _ = p.send(mm(0, 0, 0))
        var out: [OutputAction] = []
        p.core.releaseAll(into: &out)
        #expect(out == [])
        #expect(p.core.nextDeadline == nil)
    }

    @Test func keysAreRebindable() {
        var settings = PresenterSettings()
        settings.keys.next = KeyChord(.right)
        settings.keys.blank = KeyChord(parsing: "period")  ?? KeyChord(KeySym(rawValue: 0x2e))
        var p = Pad(mode: .presenter, presenter: settings)
        _ = p.send(mm(0, 0, 0))
        #expect(p.send(ended(0)) == chord(.right))
        _ = p.send(mm(0, 0, 0), mm(1, 10, 0))
        #expect(p.send(ended(0), ended(1)) == chord(KeySym(rawValue: 0x2e)))
    }

    @Test func everyKeyIsReleased() {
        var p = Pad(mode: .presenter)
        var all: [OutputAction] = []
        for i in 0..<20 {
            all += p.send(mm(0, 0, 0))
            if i % 3 == 0 { all += p.stroke(from: 0, 0, by: i % 2 == 0 ? -15 : 15, 0, steps: 4) }
            if i % 4 == 1 { all += p.send(mm(1, 10, 0)) ; all += p.send(ended(1)) }
            all += p.wait(UInt64(40 * (i % 5)))
            all += p.send(ended(0))
            all += p.wait(200)
        }
        #expect(balanced(all))
        #expect(!all.filter { if case .key = $0 { return true } else { return false } }.isEmpty)
    }
}

/// The strokes these actions begin: each one's identity and slot.
func strokesBegun(_ actions: [OutputAction]) -> [(id: StrokeID, slot: UInt8)] {
    actions.compactMap { if case .overlay(.strokeBegan(let id, let slot, _)) = $0 { (id, slot) } else { nil } }
}
