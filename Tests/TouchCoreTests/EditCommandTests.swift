// The page's text edits through the Bridge: BackSpace taps, then the characters.
import Testing
import TouchCore

/// Printable ASCII and nothing else (no BackSpace), and no borrowing: a Wayland compositor's lacking keymap.
private let asciiOnly = Keymap((0x20...0x7e).map { (KeySym(rawValue: UInt32($0)), KeyPosition(evdevCode: UInt16($0))) }, canBorrow: false)

/// The page's text edits through the Bridge: BackSpace taps, then the characters; a page gone
/// right after leaves no key held and no keycode borrowed.
@Suite struct EditCommandTests {
    @Test func anEditIsBackspacesThenCharacters() {
        var h = Harness(mode: .touchpad)
        let edit = h.command(.edit(backspaces: 2, text: "e\u{301}😀"), from: phone, at: 0)
        let bs = [OutputAction.key(.backSpace, pressed: true), .key(.backSpace, pressed: false)]
        #expect(edit.actions == bs + bs + [.type(KeySym(rawValue: 0x65)), .type(KeySym(rawValue: 0x100_0301)),
                                           .type(KeySym(rawValue: 0x101_f600))])
        #expect(edit.reply == nil)
        #expect(!h.bridge.held.holdsInput, "an edit leaves nothing pressed between two messages")
        let gone = h.gone(phone, at: 10)
        #expect(gone.actions == [.restoreKeymap], "\(gone.actions)")
        #expect(!h.bridge.held.typed)
    }

    /// A command made elsewhere than the parser (a test, a future adapter) is held to the same bounds.
    @Test func theBridgeHoldsAnEditToItsBounds() {
        var h = Harness(mode: .touchpad)
        let big = h.command(.edit(backspaces: 1_000, text: String(repeating: "x", count: 1_000)), from: phone, at: 0)
        #expect(big.actions.count == 2 * WebCommand.maxEditBackspaces + WebCommand.maxEditScalars)
        let negative = h.command(.edit(backspaces: -5, text: ""), from: phone, at: 10)
        #expect(negative.actions.isEmpty)
    }

    /// Without BackSpace on the keymap (and no borrowing), the edit is refused, and the page told.
    @Test func anEditOnAKeymapWithoutBackSpaceIsRefused() {
        var h = Harness(mode: .touchpad)
        h.bridge.keymapChanged(asciiOnly, at: ms(0), into: &h.effects)
        let refused = h.command(.edit(backspaces: 1, text: "a"), from: phone, at: 10)
        #expect(refused.actions == [.type(KeySym(rawValue: 0x61))])
        #expect(refused.reply == .refused(.backSpace))
    }
}
