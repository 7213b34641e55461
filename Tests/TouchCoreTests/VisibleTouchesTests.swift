// Visible touches: a circle per finger at its pixel, fading out after the lift in ticks, gone after the
// fade; no timer when nothing fades; cancelled and silent fingers fade too; presenter mode and the
// visible touches allocate nothing once warm.
import AllocationCounter
import Testing
import TouchCore

private func overlays(_ actions: [OutputAction]) -> [OverlayAction] {
    actions.compactMap { if case .overlay(let o) = $0 { return o } else { return nil } }
}

@Suite struct VisibleTouchesTests {
    static func pad(_ mode: TouchMode = .touchscreen, drawing: Bool = false) -> Pad {
        var presenter = PresenterSettings()
        presenter.drawing = drawing
        var p = Pad(mode: mode, presenter: presenter)
        var c = p.core.configuration
        c.showTouches = true
        p.core = TouchPipeline(configuration: c)
        return p
    }

    @Test func aCircleFollowsTheFingerAndFadesOutAfterTheLift() {
        var pad = Self.pad()
        // Raw 2047 is the centre of the 1920x1080 screen.
        let down = overlays(pad.send(at(0, 2047, 2047)))
        #expect(down.count == 1)
        guard case .touch(0, let p, 255)? = down.first else { Issue.record("\(down)"); return }
        #expect(abs(Int(p.x) - 960) <= 1 && abs(Int(p.y) - 540) <= 1)
        #expect(overlays(pad.send(at(0, 3000, 2047))).count == 1)
        // Still finger: nothing new to draw.
        #expect(overlays(pad.send(at(0, 3000, 2047))) == [])
        _ = pad.send(ended(0))
        // Fades in 33 ms ticks over 300 ms, with falling opacity, then goes.
        var alphas: [UInt8] = []
        var gone = false
        for _ in 0..<12 {
            for o in overlays(pad.wait(33)) {
                switch o {
                case .touch(0, _, let a): alphas.append(a)
                case .touchGone(0): gone = true
                default: Issue.record("unexpected \(o)")
                }
            }
        }
        #expect(gone)
        #expect(alphas.count >= 7 && alphas.count <= 9, "\(alphas)")
        #expect(alphas == alphas.sorted(by: >) && alphas.allSatisfy { $0 < 255 })
        #expect(pad.core.nextDeadline == nil, "no timer once nothing fades")
    }

    @Test func noCirclesWithoutTheOption() {
        var pad = Pad(mode: .touchscreen)
        #expect(overlays(pad.send(at(0, 2047, 2047))) == [])
        _ = pad.send(ended(0))
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func aCancelledOrSilentFingersCircleGoes() {
        var pad = Self.pad(.touchpad)
        _ = pad.send(at(0, 1000, 1000), at(1, 3000, 3000))
        _ = pad.send(cancelled(0))
        var out = pad.wait(400)
        #expect(overlays(out).contains(.touchGone(slot: 0)))
        #expect(!overlays(out).contains(.touchGone(slot: 1)))
        // Slot 1 goes silent: the watchdog (10 s here) cancels it, and its circle fades out.
        out = pad.wait(10_400)
        #expect(overlays(out).contains(.touchGone(slot: 1)))
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func aFingerLandingAgainDuringTheFadeIsShownAgain() {
        var pad = Self.pad()
        _ = pad.send(at(0, 2047, 2047))
        _ = pad.send(ended(0))
        _ = pad.wait(100)
        let again = overlays(pad.send(at(0, 2047, 2047)))
        #expect(again.count == 1)
        if case .touch(0, _, 255)? = again.first {} else { Issue.record("\(again)") }
        #expect(overlays(pad.wait(1_000)) == [], "no fade while the finger is down")
    }

    @Test(arguments: [false, true])
    func presenterAndVisibleTouchesAllocateNothingOnceWarm(drawing: Bool) {
        var pad = Self.pad(.presenter, drawing: drawing)
        var actions: [OutputAction] = []
        actions.reserveCapacity(64)
        var packet = TouchPacket()
        var now: UInt64 = 0
        func round(_ i: Int) {
            packet.reset()
            now += 16
            switch i % 40 {
            case 39: packet.events.append(TouchEvent(slot: 0, update: .ended))
            case 38: packet.events.append(TouchEvent(slot: 1, update: .ended))
            default:
                let x = UInt16(1000 + (i % 40) * 60), y = UInt16(2047)
                packet.events.append(TouchEvent(slot: 0, update: .position(DevicePoint(rawX: x, rawY: y))))
                if i % 80 < 20 { packet.events.append(TouchEvent(slot: 1, update: .position(DevicePoint(rawX: y, rawY: x)))) }
            }
            packet.hasTouches = true
            actions.removeAll(keepingCapacity: true)
            pad.core.handle(packet, at: .milliseconds(now), into: &actions)
            while let d = pad.core.nextDeadline, d <= .milliseconds(now) {
                pad.core.handleTimer(at: d, into: &actions)
            }
            if i % 200 == 150 {
                // A long press now and then: the laser on and off.
                now += 600
                pad.core.handleTimer(at: .milliseconds(now), into: &actions)
            }
        }
        for i in 0..<400 { round(i) }
        let n = allocations { for i in 400..<4_000 { round(i) } }
        #expect(n == 0)
    }
}
