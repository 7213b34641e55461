// The web page's keys drawer, Slides panel, live settings and ping, through the Bridge.
import Testing
import TouchCore
import TouchWire

private func keys(_ actions: [OutputAction]) -> [OutputAction] {
    actions.filter { if case .key = $0 { return true } else { return false } }
}
private func overlay(_ actions: [OutputAction]) -> [OverlayAction] {
    actions.compactMap { if case .overlay(let o) = $0 { return o } else { return nil } }
}
private func chord(_ text: String) -> KeyChord { KeyChord(parsing: text)! }
private func tapKey(_ k: KeySym) -> [OutputAction] { [.key(k, pressed: true), .key(k, pressed: false)] }

@Suite struct PageCommandTests {
    @Test func aChordIsPressedInOrderAndReleasedInReverse() {
        var h = Harness(mode: .touchpad)
        #expect(h.command(.key(chord("ctrl+c")), from: phone, at: 0).actions
                == [.key(.controlL, pressed: true), .key(KeySym(rawValue: 0x63), pressed: true),
                    .key(KeySym(rawValue: 0x63), pressed: false), .key(.controlL, pressed: false)])
        #expect(h.command(.key(chord("XF86AudioRaiseVolume")), from: phone, at: 1).actions
                == tapKey(KeySym(rawValue: 0x1008ff13)))
        #expect(h.command(.key(chord("F12")), from: phone, at: 2).actions == tapKey(KeySym(rawValue: 0xffc9)))
    }

    @Test func stickyModifiersWrapAClick() {
        var h = Harness(mode: .touchpad)
        #expect(h.command(.click(.left, modifiers: chord("ctrl+shift")), from: phone, at: 0).actions
                == [.key(.controlL, pressed: true), .key(.shiftL, pressed: true)] + click(.left)
                   + [.key(.shiftL, pressed: false), .key(.controlL, pressed: false)])
    }

    @Test func pingIsAnsweredWhoeverHoldsTheSessionAndHoldsNothing() {
        var h = Harness(mode: .touchpad)
        _ = h.send(down, from: tablet, at: 0)
        let e = h.command(.ping(42), from: phone, at: 10)
        #expect(e.reply == .pong(42), "answered, not refused busy")
        #expect(e.actions.isEmpty)
        #expect((h.bridge.sender?.address == tablet))
        // A ping is no sign of life: the sender's silence still lets the phone take over.
        _ = h.send(lift, from: tablet, at: 20)
        _ = h.command(.ping(43), from: tablet, at: 5_000)
        _ = h.command(.ping(44), from: tablet, at: 10_000)
        #expect(h.command(.click(.left), from: phone, at: 10_100).reply != .busy)
        #expect((h.bridge.sender?.address == phone))
    }

    @Test func slideKeysFollowTheBindingsInAnyMode() {
        var h = Harness(mode: .touchpad)
        #expect(h.command(.presenter(.next), from: phone, at: 0).actions == tapKey(.pageDown))
        #expect(h.command(.presenter(.previous), from: phone, at: 1).actions == tapKey(.pageUp))
        #expect(h.command(.presenter(.blank), from: phone, at: 2).actions == tapKey(KeySym(rawValue: 0x62)))
        #expect(h.command(.presenter(.start), from: phone, at: 3).actions == tapKey(KeySym(rawValue: 0xffc2)))
        #expect(h.command(.presenter(.end), from: phone, at: 4).actions == tapKey(.escape))
        // Rebound like the gestures' keys.
        var c = TouchPipeline.Configuration(screen: ScreenMapping(width: 1920, height: 1080), mode: .presenter)
        c.presenter.keys["start"] = chord("shift+F5")
        var b = Bridge(configuration: c)
        var fx = BridgeEffects()
        b.start(screen: Harness.screen, monitors: [], at: ms(0), into: &fx)
        fx.clear()
        b.command(.presenter(.start), from: phone, at: ms(1), into: &fx)
        #expect(keys(fx.actions) == [.key(.shiftL, pressed: true), .key(KeySym(rawValue: 0xffc2), pressed: true),
                                      .key(KeySym(rawValue: 0xffc2), pressed: false), .key(.shiftL, pressed: false)])
    }

    @Test func holdingLaserMovesTheDotWithTheFingerAndLettingGoHidesIt() {
        var h = Harness(mode: .presenter)
        _ = h.command(.surface(width: 390, height: 700), from: phone, at: 0)
        var e = h.command(.presenter(.laserOn), from: phone, at: 10)
        #expect(overlay(e.actions).isEmpty, "no finger on the pad yet: no dot")
        #expect(e.reply == .drawing(false))
        #expect(h.bridge.core.laserOn)
        e = h.send(down, from: phone, via: .web, at: 20)
        #expect(overlay(e.actions).contains(.laser(PixelPoint(x: 960, y: 540))), "\(e.actions)")
        let far = packet(at(0, 3000, 2047), state: state([0: .down(pt(3000, 2047))]))
        e = h.send(far, from: phone, via: .web, at: 60)
        #expect(overlay(e.actions).contains { if case .laser(let p) = $0 { return p.x > 960 } else { return false } },
                "the dot follows the finger: \(e.actions)")
        #expect(keys(e.actions).isEmpty, "pointing, not swiping")
        e = h.command(.presenter(.laserOff), from: phone, at: 100)
        #expect(overlay(e.actions) == [.laserOff])
        e = h.send(lift, from: phone, via: .web, at: 110)
        #expect(keys(e.actions).isEmpty, "lifting after pointing is no tap")
        #expect(!h.bridge.core.laserOn)
    }

    @Test func laserWhileAFingerRestsShowsTheDotThere() {
        var h = Harness(mode: .presenter)
        _ = h.send(down, from: phone, via: .web, at: 0)
        let e = h.command(.presenter(.laserOn), from: phone, at: 50)
        #expect(overlay(e.actions) == [.laser(PixelPoint(x: 960, y: 540))])
        let l = h.send(lift, from: phone, via: .web, at: 100)
        #expect(keys(l.actions).isEmpty, "a finger that pointed does not tap next")
    }

    @Test func drawTogglesAndReportsAndClearClears() {
        var h = Harness(mode: .presenter)
        _ = h.command(.presenter(.laserOn), from: phone, at: 0)
        var e = h.command(.presenter(.draw), from: phone, at: 10)
        #expect(e.reply == .drawing(true))
        #expect(overlay(e.actions) == [], "drawing turns the laser off; no dot was shown, so none is hidden")
        #expect(h.bridge.core.drawingOn && !h.bridge.core.laserOn)
        e = h.command(.presenter(.clear), from: phone, at: 20)
        #expect(overlay(e.actions) == [.clearDrawings])
        e = h.command(.presenter(.laserOn), from: phone, at: 30)
        #expect(e.reply == .drawing(false), "the laser turns drawing off, and the page hears it")
        e = h.command(.presenter(.draw), from: phone, at: 40)
        #expect(e.reply == .drawing(true))
        #expect(h.command(.presenter(.draw), from: phone, at: 50).reply == .drawing(false))
    }

    @Test func overlayButtonsDoNothingOutsidePresenterMode() {
        var h = Harness(mode: .touchpad)
        for b in [PresenterCommand.laserOn, .draw, .clear, .laserOff] {
            let e = h.command(.presenter(b), from: phone, at: 0)
            #expect(e.actions.isEmpty && e.reply == nil, "\(b)")
        }
    }

    /// The pointer motion of one finger moving 10 mm right in 100 ms.
    private func motion(_ h: inout Harness, from t0: UInt64) -> Int {
        var out: [OutputAction] = []
        out += h.send(packet(mm(0, 0, 0), state: state([0: .down(pt(rawX(0), rawY(0)))])), from: phone, via: .web, at: t0).actions
        for i in 1...10 {
            let x = Double(i)
            out += h.send(packet(mm(0, x, 0), state: state([0: .down(pt(rawX(x), rawY(0)))])), from: phone, via: .web,
                          at: t0 + UInt64(i) * 10).actions
        }
        out += h.send(packet(ended(0), state: state()), from: phone, via: .web, at: t0 + 110).actions
        return totalMotion(out).dx
    }

    @Test func tuningAppliesAtOnceForThatPageAndGoesWithIt() {
        var h = Harness(mode: .touchpad)
        _ = h.command(.surface(width: 409, height: 886), from: phone, at: 0)  // 65 × 141 mm, the default
        let normal = motion(&h, from: 1_000)
        _ = h.command(.tune(.speed(1)), from: phone, at: 2_000)
        #expect(h.bridge.core.configuration.touchpad.speed == 1)
        let fast = motion(&h, from: 3_000)
        #expect(fast > normal, "speed 1 moves farther: \(fast) vs \(normal)")
        _ = h.command(.tune(.tapToClick(false)), from: phone, at: 4_000)
        _ = h.send(down, from: phone, via: .web, at: 5_000)
        let tap = h.send(lift, from: phone, via: .web, at: 5_050)
        _ = h.timer(at: 5_500)
        #expect(clicks(tap.actions + h.effects.actions).isEmpty, "tap-to-click off: a tap clicks nothing")
        // A mode switch keeps the page's settings.
        _ = h.command(.mode(.presenter), from: phone, at: 6_000)
        _ = h.command(.mode(.touchpad), from: phone, at: 6_100)
        #expect(h.bridge.core.configuration.touchpad.speed == 1)
        // The page goes: the configured settings come back, for whoever is next.
        _ = h.gone(phone, at: 7_000)
        #expect(h.bridge.core.configuration.touchpad.speed == 0)
        #expect(h.bridge.core.configuration.touchpad.tapToClick)
        let again = motion(&h, from: 8_000)
        #expect(again == normal, "\(again) vs \(normal)")
    }

    @Test func aNewSenderGetsTheConfiguredSettings() {
        var h = Harness(mode: .touchpad)
        _ = h.command(.tune(.naturalScroll(true)), from: phone, at: 0)
        _ = h.command(.tune(.scrollSpeed(3)), from: phone, at: 1)
        #expect(h.bridge.core.configuration.touchpad.naturalScroll)
        _ = h.send(hello, from: tablet, at: 20_000)  // after the takeover silence
        #expect((h.bridge.sender?.address == tablet))
        #expect(!h.bridge.core.configuration.touchpad.naturalScroll)
        #expect(h.bridge.core.configuration.touchpad.scrollSpeed == 1)
    }
}
