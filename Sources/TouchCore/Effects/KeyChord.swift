// Key chords and the names of keys: the core's values for what a gesture, a binding or the page presses.
// Their grammar (text into a chord: `KeyChord(parsing:)`) is the page's and the command line's, in
// TouchWire/WebMessage.swift; the names table is here because the core's events and the host's log lines
// word keys by it (`description`, `KeyNames.name(of:)`).

/// Up to four keys pressed in order and released in reverse order, e.g. Ctrl+Alt+Right.
///
/// Stored inline (no array) so emitting one allocates nothing.
public struct KeyChord: Hashable, Sendable, CustomStringConvertible {
    public static let maxKeys = 4
    private var k0 = KeySym(rawValue: 0), k1 = KeySym(rawValue: 0), k2 = KeySym(rawValue: 0), k3 = KeySym(rawValue: 0)
    public private(set) var count: Int = 0

    /// The empty chord: a gesture bound to it does nothing.
    public static let none = KeyChord()

    public init() {}

    /// - Precondition: at most four keys.
    public init(_ keys: KeySym...) {
        precondition(keys.count <= Self.maxKeys, "a chord has at most \(Self.maxKeys) keys")
        for k in keys { append(k) }
    }

    public mutating func append(_ key: KeySym) {
        precondition(count < Self.maxKeys)
        switch count {
        case 0: k0 = key
        case 1: k1 = key
        case 2: k2 = key
        default: k3 = key
        }
        count += 1
    }

    public subscript(i: Int) -> KeySym {
        switch i {
        case 0: return k0
        case 1: return k1
        case 2: return k2
        default: return k3
        }
    }

    /// Presses every key in order, then releases them in reverse order: a whole chord in one step, so a
    /// chord is never left pressed.
    public func emit(into actions: inout [OutputAction]) {
        var i = 0
        while i < count { actions.append(.key(self[i], pressed: true)); i += 1 }
        while i > 0 { i -= 1; actions.append(.key(self[i], pressed: false)) }
    }

    /// The chord as `ctrl+alt+Right` (modifier names in lower case, other keys by their X keysym name).
    public var description: String {
        if count == 0 { return "none" }
        var s = ""
        for i in 0..<count {
            if i > 0 { s += "+" }
            s += KeyNames.name(of: self[i])
        }
        return s
    }
}

/// Names of keys for chords, as in X's keysym names (`Page_Up`) with a few friendly aliases.
public enum KeyNames {
    static let table: [(String, UInt32)] = [
        ("ctrl", 0xffe3), ("alt", 0xffe9), ("shift", 0xffe1), ("super", 0xffeb),
        ("Left", 0xff51), ("Up", 0xff52), ("Right", 0xff53), ("Down", 0xff54),
        ("Page_Up", 0xff55), ("Page_Down", 0xff56), ("Home", 0xff50), ("End", 0xff57),
        ("Escape", 0xff1b), ("Tab", 0xff09), ("Return", 0xff0d), ("BackSpace", 0xff08),
        ("Delete", 0xffff), ("Insert", 0xff63), ("space", 0x20), ("Print", 0xff61),
        ("F1", 0xffbe), ("F2", 0xffbf), ("F3", 0xffc0), ("F4", 0xffc1), ("F5", 0xffc2), ("F6", 0xffc3),
        ("F7", 0xffc4), ("F8", 0xffc5), ("F9", 0xffc6), ("F10", 0xffc7), ("F11", 0xffc8), ("F12", 0xffc9),
        ("minus", 0x2d), ("plus", 0x2b), ("equal", 0x3d), ("period", 0x2e), ("comma", 0x2c),
        ("XF86Back", 0x1008ff26), ("XF86Forward", 0x1008ff27),
        // Media keys (the XF86 keysyms).
        ("XF86AudioLowerVolume", 0x1008ff11), ("XF86AudioMute", 0x1008ff12), ("XF86AudioRaiseVolume", 0x1008ff13),
        ("XF86AudioPlay", 0x1008ff14), ("XF86AudioPrev", 0x1008ff16), ("XF86AudioNext", 0x1008ff17),
    ]
    static let aliases: [(String, UInt32)] = [
        ("control", 0xffe3), ("meta", 0xffeb), ("win", 0xffeb), ("logo", 0xffeb),
        ("pageup", 0xff55), ("pagedown", 0xff56), ("esc", 0xff1b), ("enter", 0xff0d),
    ]

    /// The keysym called `name` (case-insensitive), a single printable ASCII character, or `0x…`.
    public static func keySym(named name: String) -> KeySym? {
        let lower = name.lowercased()
        for (n, v) in table where n.lowercased() == lower { return KeySym(rawValue: v) }
        for (n, v) in aliases where n == lower { return KeySym(rawValue: v) }
        if lower.hasPrefix("0x"), let v = UInt32(lower.dropFirst(2), radix: 16) { return KeySym(rawValue: v) }
        let scalars = Array(lower.unicodeScalars)
        if scalars.count == 1, scalars[0].value > 0x20, scalars[0].value < 0x7f {
            return KeySym(rawValue: scalars[0].value)
        }
        return nil
    }

    /// The name `keySym(named:)` reads back.
    public static func name(of key: KeySym) -> String {
        for (n, v) in table where v == key.rawValue { return n }
        if key.rawValue > 0x20 && key.rawValue < 0x7f {
            return String(Character(Unicode.Scalar(UInt8(key.rawValue))))
        }
        return "0x" + String(key.rawValue, radix: 16)
    }
}
