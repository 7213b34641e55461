/// The keymap touchbridge's virtual keyboard (`zwp_virtual_keyboard_v1`) types with: the characters no
/// key of the compositor's keymap makes, each on a key of its own, up to `capacity` of them (the least
/// recently typed one gives its key to a new one). Pure: the keymap's text, and which key types what.
///
/// A character keeps its key while it stays in the keymap, so a client still translating an earlier
/// key by the previous keymap (Xwayland's X clients read the map when they get to the event) finds the
/// same character there.
struct TypingKeymap {
    /// How many characters the keymap holds at once.
    static let capacity = 32
    /// The name of every section of the keymap; a compositor writes it back into the keymap it sends
    /// its clients while the virtual keyboard is the seat's active one, which is how such a keymap is
    /// told from the desktop's own (`isTypingKeymap`).
    static let sectionName = "touchbridge-typing"

    /// The keysym on each key, by slot: slot i is evdev code `i + 1` (xkb keycode `i + 9`).
    private(set) var keysyms: [UInt32] = []
    /// When each slot was last typed (`clock` values).
    private var lastTyped: [UInt64] = []
    private var clock: UInt64 = 0

    /// The evdev code that types `keysym`, giving it a key when it has none (the least recently typed
    /// one's when all are taken). `changed`: the keymap is new and must be sent before the key.
    mutating func key(for keysym: UInt32) -> (evdevCode: UInt32, changed: Bool) {
        clock += 1
        if let i = keysyms.firstIndex(of: keysym) {
            lastTyped[i] = clock
            return (UInt32(i) + 1, false)
        }
        if keysyms.count < Self.capacity {
            keysyms.append(keysym)
            lastTyped.append(clock)
            return (UInt32(keysyms.count), true)
        }
        var oldest = 0
        for i in lastTyped.indices where lastTyped[i] < lastTyped[oldest] { oldest = i }
        keysyms[oldest] = keysym
        lastTyped[oldest] = clock
        return (UInt32(oldest) + 1, true)
    }

    /// Forgets every character (after the desktop's keymap was given back).
    mutating func clear() {
        keysyms.removeAll()
        lastTyped.removeAll()
    }

    /// The keymap in xkb's text format, NUL-terminated: one key per character, one level, no
    /// modifiers. Unicode keysyms are written by name (`U1F600`), others as numbers (`0xe9`): both
    /// forms libxkbcommon reads.
    var text: [CChar] {
        let name = "\"\(Self.sectionName)\""
        var s = "xkb_keymap {\nxkb_keycodes \(name) {\n  minimum = 8;\n  maximum = 255;\n"
        for i in keysyms.indices { s += "  <T\(i)> = \(i + 9);\n" }
        s += "};\nxkb_types \(name) {\n  type \"ONE_LEVEL\" {\n    modifiers = none;\n    level_name[Level1] = \"Any\";\n  };\n};\n"
        s += "xkb_compatibility \(name) {\n};\nxkb_symbols \(name) {\n"
        for (i, k) in keysyms.enumerated() { s += "  key <T\(i)> { [ \(Self.symbolName(k)) ] };\n" }
        s += "};\n};\n"
        return s.utf8CString.map { $0 }
    }

    /// `k` as the keymap writes it.
    static func symbolName(_ k: UInt32) -> String {
        if k >= 0x0100_0100 && k <= 0x0110_FFFF { return "U" + hex(k - 0x0100_0000, digits: 4) }
        return "0x" + hex(k, digits: 1)
    }

    private static func hex(_ v: UInt32, digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }

    /// Whether `text` (a keymap a compositor sent) is one of these keymaps, written back.
    static func isTypingKeymap(_ text: [CChar]) -> Bool {
        let needle = Array("xkb_keycodes \"\(sectionName)\"".utf8).map { CChar(bitPattern: $0) }
        guard text.count >= needle.count else { return false }
        // The keycodes section comes first, near the start.
        let end = min(text.count - needle.count, 4096)
        var i = 0
        while i <= end {
            if text[i] == needle[0], Array(text[i..<i + needle.count]) == needle { return true }
            i += 1
        }
        return false
    }
}
