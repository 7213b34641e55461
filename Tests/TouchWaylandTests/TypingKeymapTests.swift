// The virtual keyboard's keymap (TypingKeymap), compiled by the real libxkbcommon, and a compositor
// without the virtual keyboard protocol (weston 10, as GNOME's Mutter: none for programs) refusing a
// character no key makes with a clear reason. Typing through the protocol is tested against sway in the
// VM (Tests/VM/guest/typingtest.py: foot reads what was typed).
import Foundation
import Testing
import TouchCore
import TouchOutput
@testable import TouchWayland

@Suite struct TypingKeymapTests {
    static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Each character's key gives it, through libxkbcommon: Unicode keysyms outside Latin-1 (an emoji,
    /// CJK), a Latin-1 one and a named one (EuroSign) alike; the keymap as a compositor writes it back
    /// to its clients is told from another.
    @Test func eachCharacterIsOnItsKey() throws {
        var typing = TypingKeymap()
        let syms: [UInt32] = [0x101F600, 0x1004E2D, 0xe9, 0x20ac, 0x1000301]
        var codes: [UInt32] = []
        for k in syms {
            let (code, changed) = typing.key(for: k)
            #expect(changed, "a new character needs the keymap sent")
            codes.append(code)
        }
        #expect(codes == [1, 2, 3, 4, 5])
        let compiled = try XKBKeymap(text: typing.text)
        for (k, code) in zip(syms, codes) {
            #expect(compiled.keysyms(of: code + 8, level: 0) == [k], "key \(code) of \(Self.string(typing.text))")
        }
        let writtenBack = compiled.text
        #expect(TypingKeymap.isTypingKeymap(writtenBack), "the keymap libxkbcommon writes out: \(Self.string(writtenBack).prefix(200))")
        let other = Array("xkb_keymap {\nxkb_keycodes \"evdev+aliases(azerty)\" {\n".utf8CString)
        #expect(!TypingKeymap.isTypingKeymap(other))
        // Typed again: same key, no new keymap needed.
        let again = typing.key(for: 0xe9)
        #expect(again.evdevCode == 3 && !again.changed)
    }

    /// Past `capacity` characters the least recently typed one gives its key; the others keep theirs.
    @Test func theLeastRecentlyTypedGivesItsKey() throws {
        var typing = TypingKeymap()
        for i in 0..<UInt32(TypingKeymap.capacity) { _ = typing.key(for: 0x1002600 + i) }
        _ = typing.key(for: 0x1002600)  // the first one typed again: no longer the oldest
        let (code, changed) = typing.key(for: 0x101F600)
        #expect(changed && code == 2, "the second character's key (least recently typed) goes to the new one")
        let first = typing.key(for: 0x1002600)
        #expect(first.evdevCode == 1 && !first.changed)
        let compiled = try XKBKeymap(text: typing.text)
        #expect(compiled.keysyms(of: 2 + 8, level: 0) == [0x101F600])
        #expect(typing.keysyms.count == TypingKeymap.capacity)
    }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct WaylandTypingRefusalTests {
    /// weston offers no virtual keyboard protocol: the keymap says nothing can be borrowed (so the Bridge
    /// refuses such a character before it reaches the output, and the page is told), and the desktop
    /// itself refuses one with the reason, leaving the connection usable.
    @Test func aCompositorWithoutTheProtocolRefusesWithTheReason() throws {
        let session = try WestonSession(layout: "fr")
        defer { session.stop() }
        let desktop = try WaylandDesktop(name: session.socketPath)
        defer { _ = desktop.close() }
        #expect(!desktop.canTypeLacking)
        let keymap = try #require(try desktop.keymap(keyboardNamed: nil))
        #expect(!keymap.keymap.canBorrow)
        #expect(keymap.keymap.position(of: KeySym(rawValue: 0x7a))?.evdevCode == 17)
        // Typed text names € by its Unicode keysym; fr has it (EuroSign) on AltGr+E.
        #expect(keymap.keymap.position(of: KeySym(rawValue: 0x10020ac)) == KeyPosition(evdevCode: 18, levelThree: true))
        var refusal: OutputError?
        do throws(OutputError) {
            try desktop.typeLacking(KeySym(rawValue: 0x101F600))
        } catch {
            refusal = error
        }
        #expect(refusal?.description.contains("offers no virtual keyboard (zwp_virtual_keyboard_v1") == true, "\(String(describing: refusal))")
        #expect(!desktop.isLost)
        // The compositor's own keymap text is kept for giving it back, and is not taken for the virtual one.
        let text = try #require(desktop.compositorKeymapText)
        #expect(!TypingKeymap.isTypingKeymap(text))
    }
}
