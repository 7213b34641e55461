// Chords are refused where they are emitted: a machine's (the presenter's tap), the Slides panel's, and a
// command's; whole, before anything is pressed, each refusal logged and counted.
import Testing
import TouchCore

/// Printable ASCII and Shift only: no Page_Down, no Ctrl.
private let asciiKeymap = Keymap(
    (0x20...0x7e).map { (KeySym(rawValue: UInt32($0)), KeyPosition(evdevCode: UInt16($0))) }
        + [(KeySym.shiftL, KeyPosition(evdevCode: 42))],
    canBorrow: true)
/// The same with Page_Down.
private let withPageDown = Keymap(
    (0x20...0x7e).map { (KeySym(rawValue: UInt32($0)), KeyPosition(evdevCode: UInt16($0))) }
        + [(KeySym.shiftL, KeyPosition(evdevCode: 42)), (KeySym(rawValue: 0xff56), KeyPosition(evdevCode: 109))],
    canBorrow: true)
private let pageDown = KeySym(rawValue: 0xff56)

private func keys(_ actions: [OutputAction]) -> [OutputAction] {
    actions.filter { if case .key = $0 { true } else { false } }
}
private func refusals(_ e: BridgeEffects) -> [(KeySym, UInt64)] {
    e.events.compactMap { if case .chordRefused(let k, let r) = $0 { (k, r.total) } else { nil } }
}

@Suite struct ChordRefusalTests {
    /// A one-finger tap in presenter mode is Next (Page_Down): with no Page_Down on the keymap the presenter
    /// machine emits no key at all, and the refusal is logged; a datagram gets no reply.
    @Test func thePresentersTapIsRefusedByItsMachineWhenTheKeymapLacksTheKey() {
        var h = Harness(mode: .presenter, idleRelease: .seconds(2))
        h.effects.clear()
        h.bridge.keymapChanged(asciiKeymap, at: ms(0), into: &h.effects)
        _ = h.send(down, from: phone, at: 10)
        let e = h.send(lift, from: phone, at: 60)
        #expect(keys(e.actions).isEmpty, "\(e.actions)")
        #expect(refusals(e).map(\.0) == [pageDown], "\(e.events)")
        #expect(e.reply == nil)
        #expect(!h.bridge.held.holdsInput)
        // The keymap gains Page_Down: the same tap presses and releases it.
        h.effects.clear()
        h.bridge.keymapChanged(withPageDown, at: ms(100), into: &h.effects)
        _ = h.send(down, from: phone, at: 110)
        let next = h.send(lift, from: phone, at: 160)
        #expect(keys(next.actions) == [.key(pageDown, pressed: true), .key(pageDown, pressed: false)], "\(next.actions)")
        #expect(refusals(next).isEmpty)
    }

    /// The Slides panel's Next in touchpad mode: the pipeline refuses the chord, the page is told.
    @Test func theSlidesPanelsKeyIsRefusedAndThePageTold() {
        var h = Harness(mode: .touchpad)
        h.effects.clear()
        h.bridge.keymapChanged(asciiKeymap, at: ms(0), into: &h.effects)
        let e = h.command(.presenter(.next), from: phone, at: 10)
        #expect(keys(e.actions).isEmpty, "\(e.actions)")
        #expect(e.reply == .refused(pageDown))
        #expect(refusals(e).map(\.0) == [pageDown])
        // Counted, not logged again within 10 s; and after the keymap is unknown again, tried.
        let again = h.command(.presenter(.next), from: phone, at: 20)
        #expect(keys(again.actions).isEmpty && refusals(again).isEmpty && again.reply == .refused(pageDown))
        h.effects.clear()
        h.bridge.keymapChanged(nil, at: ms(30), into: &h.effects)
        let unknown = h.command(.presenter(.next), from: phone, at: 40)
        #expect(keys(unknown.actions).count == 2 && unknown.reply == nil)
    }
}
