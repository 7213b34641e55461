// The page's text into keys: an edit's BackSpace taps and characters, and a character's keysym.

extension Bridge {
    /// The page's text field changed (`WebCommand.edit`): BackSpace taps, then the characters, each a
    /// press and a release, so nothing stays held between two edits; a character no key makes borrows a
    /// keycode, which `held` gives back on every end path. The parser bounds both counts; a command made
    /// elsewhere is held to the same bounds here.
    mutating func edit(backspaces: Int, text: String, into effects: inout BridgeEffects) {
        for _ in 0..<max(0, min(backspaces, WebCommand.maxEditBackspaces)) {
            core.gate.emit(Self.backSpaceTap, into: &effects.actions)
        }
        for scalar in text.unicodeScalars.prefix(WebCommand.maxEditScalars) where !WebCommand.isControl(scalar) {
            core.gate.type(Self.keysym(for: scalar), into: &effects.actions)
        }
    }

    /// One BackSpace, pressed and released.
    static let backSpaceTap = KeyChord(.backSpace)

    /// The keysym of a character: Latin-1 is its own keysym; any other code point is 0x01000000 + it.
    public static func keysym(for scalar: Unicode.Scalar) -> KeySym {
        switch scalar.value {
        case 0x0A, 0x0D: return .returnKey
        case 0x09: return .tab
        case 0x20...0x7E, 0xA0...0xFF: return KeySym(rawValue: scalar.value)
        default: return KeySym(rawValue: 0x0100_0000 + scalar.value)
        }
    }
}
