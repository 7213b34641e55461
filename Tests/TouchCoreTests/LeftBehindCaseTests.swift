// The cases of "nothing left behind" that were seen on a release build, each as the Bridge
// sees it. The random-sequence test (NothingLeftBehindTests) covers their kind; these pin them down.
import Testing
import TouchCore

private func overlay(_ actions: [OutputAction]) -> [OverlayAction] {
    actions.compactMap { if case .overlay(let o) = $0 { return o } else { return nil } }
}
private func presses(_ actions: [OutputAction]) -> [OutputAction] {
    actions.filter {
        switch $0 {
        case .button(_, true), .key(_, true): return true
        default: return false
        }
    }
}
/// A keymap of the printable ASCII keys and the modifiers: keysym 0x1000041 is on no key.
private let usKeymap = Keymap(
    (0x20...0x7e).map { (KeySym(rawValue: UInt32($0)), KeyPosition(evdevCode: UInt16($0))) }
        + [(KeySym.controlL, KeyPosition(evdevCode: 29)), (KeySym.altL, KeyPosition(evdevCode: 56)),
           (KeySym.shiftL, KeyPosition(evdevCode: 42))],
    canBorrow: true)

/// Runs the timer at every deadline up to `until` ms, and returns every action.
private func runTimers(_ h: inout Harness, from start: UInt64, until: UInt64) -> [OutputAction] {
    var all: [OutputAction] = []
    var next = h.effects.deadline
    while let d = next, d <= ms(until) {
        let e = h.timer(at: UInt64(max(d.nanoseconds / 1_000_000, start)))
        all += e.actions
        next = e.deadline
    }
    return all
}

@Suite struct LeftBehindCaseTests {
    /// `key ctrl+alt+0x1000041`: a keysym no key carries. Refused whole before anything is pressed, the page
    /// told, the refusal logged with its count.
    @Test func aChordWithAKeyTheKeymapLacksIsRefusedBeforeAnythingIsPressed() {
        var h = Harness(mode: .touchpad)
        h.effects.clear()
        h.bridge.keymapChanged(usKeymap, at: ms(0), into: &h.effects)
        var chord = KeyChord(.controlL, .altL)
        chord.append(KeySym(rawValue: 0x100_0041))
        let e = h.command(.key(chord), from: phone, at: 10)
        #expect(e.actions.isEmpty, "nothing pressed: \(e.actions)")
        #expect(e.reply == .refused(KeySym(rawValue: 0x100_0041)))
        guard case .chordRefused(let k, let report)? = e.events.first(where: {
            if case .chordRefused = $0 { return true } else { return false }
        }) else { Issue.record("no log event: \(e.events)"); return }
        #expect(k.rawValue == 0x100_0041 && report.total == 1)
        // A second one is counted, not logged again within 10 s.
        let again = h.command(.key(chord), from: phone, at: 20)
        #expect(again.actions.isEmpty && !again.events.contains { if case .chordRefused = $0 { true } else { false } })
        // A click with such a sticky modifier is refused whole too: no bare click.
        let click = h.command(.click(.left, modifiers: KeyChord(KeySym(rawValue: 0x100_0041))), from: phone, at: 30)
        #expect(click.actions.isEmpty, "\(click.actions)")
        // A chord the keymap has still goes.
        #expect(presses(h.command(.key(KeyChord(.controlL, KeySym(rawValue: 0x7a))), from: phone, at: 40).actions).count == 2)
        #expect(!h.bridge.held.holdsInput)
    }

    /// The laser dot: a finger rests, the page's Laser button goes on, the finger lifts without moving, the
    /// page closes. The dot fades and goes; nothing else is drawn after.
    @Test func theLaserDotShownUnderARestingFingerFadesWhenThePageGoes() {
        var h = Harness(mode: .presenter)
        _ = h.send(down, from: phone, via: .web, at: 0)
        let on = h.command(.presenter(.laserOn), from: phone, at: 50)
        #expect(overlay(on.actions).contains { if case .laser = $0 { true } else { false } })
        let lifted = h.send(lift, from: phone, via: .web, at: 100)
        let gone = h.gone(phone, at: 150)
        let after = lifted.actions + gone.actions + runTimers(&h, from: 150, until: 2_150)
        #expect(overlay(after).last == .laserOff, "the dot goes: \(overlay(after))")
        #expect(!h.bridge.held.showsTransient)
        #expect(h.bridge.held.swept == 0, "the laser machine faded it itself")
        // The page's release and a later laser-off do the same without a page gone.
        var r = Harness(mode: .presenter)
        _ = r.send(down, from: phone, via: .web, at: 0)
        _ = r.command(.presenter(.laserOn), from: phone, at: 50)
        _ = r.send(lift, from: phone, via: .web, at: 100)
        let released = r.command(.release, from: phone, at: 150).actions + runTimers(&r, from: 150, until: 2_150)
        #expect(overlay(released).last == .laserOff, "\(overlay(released))")
        let off = r.command(.presenter(.laserOff), from: phone, at: 2_200)
        #expect(overlay(off.actions).isEmpty, "nothing shown, nothing to hide, no fade after: \(off.actions)")
        #expect(runTimers(&r, from: 2_200, until: 4_000).isEmpty)
    }

    /// A finger moves on the pad, the page changes a setting (or sends `release`), the finger moves on and
    /// lifts: no click. The rest of a cancelled touch stays cancelled.
    @Test(arguments: [WebCommand.tune(.speed(0.3)), .release, .mode(.touchscreen)])
    func aCommandInTheMiddleOfATouchNeverMakesTheRestOfItATap(command: WebCommand) {
        var h = Harness(mode: .touchpad)
        var all: [OutputAction] = []
        all += h.send(packet(at(0, 2000, 2000), state: state([0: .down(pt(2000, 2000))])), from: phone, via: .web, at: 0).actions
        all += h.send(packet(at(0, 2100, 2000), state: state([0: .down(pt(2100, 2000))])), from: phone, via: .web, at: 20).actions
        all += h.command(command, from: phone, at: 40).actions
        all += h.send(packet(at(0, 2105, 2000), state: state([0: .down(pt(2105, 2000))])), from: phone, via: .web, at: 60).actions
        all += h.send(packet(ended(0), state: state()), from: phone, via: .web, at: 80).actions
        all += runTimers(&h, from: 80, until: 2_000)
        #expect(presses(all).isEmpty, "nobody clicked: \(all)")
        // The next touch is a touch again: a tap clicks.
        if command != .mode(.touchscreen) {
            var tap: [OutputAction] = []
            tap += h.send(packet(at(0, 1000, 1000), state: state([0: .down(pt(1000, 1000))])), from: phone, via: .web, at: 3_000).actions
            tap += h.send(packet(ended(0), state: state()), from: phone, via: .web, at: 3_050).actions
            tap += runTimers(&h, from: 3_050, until: 4_000)
            #expect(presses(tap) == [.button(.left, pressed: true)], "\(tap)")
        }
    }

    /// A character typed on a borrowed keycode: the keycode is given back when the page goes, not at exit.
    @Test func aBorrowedKeycodeIsGivenBackWhenThePageGoes() {
        var h = Harness(mode: .touchpad)
        let typed = h.command(.text("€"), from: phone, at: 0)
        #expect(typed.actions == [.type(KeySym(rawValue: 0x100_20ac))])
        let gone = h.gone(phone, at: 10)
        #expect(gone.actions.contains(.restoreKeymap), "\(gone.actions)")
        #expect(!h.bridge.held.typed)
        // Without a keymap that can borrow, a character no key makes is refused instead.
        h.effects.clear()
        h.bridge.keymapChanged(Keymap(usKeymap.entriesForTest, canBorrow: false), at: ms(20), into: &h.effects)
        let refused = h.command(.text("a€"), from: phone, at: 30)
        #expect(refused.actions == [.type(KeySym(rawValue: 0x61))] && refused.reply == .cannotType(KeySym(rawValue: 0x100_20ac)))
    }

    /// The drawings keep within their bound, oldest strokes first; a stroke too long is cut.
    @Test func drawingsKeepWithinTheirBound() {
        var store = DrawingStore()
        var actions: [OutputAction] = []
        var dropped = 0
        for stroke in 0..<40 {
            let slot = stroke % 10
            store.begin(slot: slot, at: PixelPoint(x: 0, y: 0), into: &actions)
            for i in 1..<1_500 { store.extend(slot: slot, to: PixelPoint(x: Int32(i), y: Int32(stroke)), into: &actions) }
            store.end(slot: slot, into: &actions)
            #expect(store.totalPoints <= DrawingStore.maxPoints)
        }
        dropped = actions.filter { if case .overlay(.strokeGone) = $0 { true } else { false } }.count
        #expect(store.totalPoints <= DrawingStore.maxPoints && store.totalPoints > DrawingStore.maxPoints - 1_500)
        #expect(dropped == 40 - store.strokeCount, "each dropped stroke is one action")
        // One finger that never lifts: cut every maxStrokePoints, and bounded too.
        actions.removeAll()
        store.begin(slot: 0, at: PixelPoint(x: 0, y: 0), into: &actions)
        for i in 0..<(DrawingStore.maxPoints * 2) { store.extend(slot: 0, to: PixelPoint(x: Int32(i % 1000), y: Int32(i / 1000)), into: &actions) }
        #expect(store.totalPoints <= DrawingStore.maxPoints)
        #expect(actions.filter { if case .overlay(.strokeEnded) = $0 { true } else { false } }.count == DrawingStore.maxPoints * 2 / DrawingStore.maxStrokePoints)
    }
}

extension Keymap {
    /// The keymap's keysyms from `usKeymap`'s list (the test's own).
    var entriesForTest: [(KeySym, KeyPosition)] {
        (0x20...0x7e).compactMap { k in position(of: KeySym(rawValue: UInt32(k))).map { (KeySym(rawValue: UInt32(k)), $0) } }
            + [KeySym.controlL, .altL, .shiftL].compactMap { k in position(of: k).map { (k, $0) } }
    }
}
