// The desktop's keyboard map, as pure data: which key (and which modifiers) produces each keysym.

/// Where a keysym is on the desktop's keyboard: the key that produces it and the modifiers its shift
/// level needs.
public struct KeyPosition: Hashable, Sendable {
    /// The key's evdev code (an X keycode minus 8; xkbcommon's keycodes are X's).
    public var evdevCode: UInt16
    /// Whether Shift must be held (shift level 2 or 4).
    public var shift: Bool
    /// Whether the third-level shift (AltGr, `ISO_Level3_Shift`) must be held (level 3 or 4).
    public var levelThree: Bool

    public init(evdevCode: UInt16, shift: Bool = false, levelThree: Bool = false) {
        self.evdevCode = evdevCode
        self.shift = shift
        self.levelThree = levelThree
    }
}

/// The desktop's current keymap (first group): for each keysym, the position of the first key that
/// produces it at the lowest shift level. Read by the desktop adapter (the X server's map, or the one a
/// Wayland compositor sends its clients) and handed to the Bridge (which refuses a chord whose keys the
/// keymap lacks) and to the uinput keyboard (which presses the key that produces the keysym).
public struct Keymap: Hashable, Sendable {
    /// Sorted by keysym, one entry per keysym.
    private var entries: [(keysym: UInt32, position: KeyPosition)]
    /// Whether a keysym no key produces can still be typed (`OutputAction.type`) by mapping a spare
    /// key to it for the moment (X's borrowed keycode); a Wayland compositor's keymap cannot be changed.
    public var canBorrow: Bool

    /// `keys` in order of preference: the first position given for a keysym is kept (give lower shift
    /// levels and lower keycodes first).
    public init(_ keys: [(KeySym, KeyPosition)], canBorrow: Bool) {
        var seen: [UInt32: KeyPosition] = [:]
        for (k, p) in keys where k.rawValue != 0 && seen[k.rawValue] == nil { seen[k.rawValue] = p }
        entries = seen.map { ($0.key, $0.value) }.sorted { $0.keysym < $1.keysym }
        self.canBorrow = canBorrow
    }

    /// The position of the key that produces `keysym`, or nil when no key does.
    public func position(of keysym: KeySym) -> KeyPosition? {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].keysym < keysym.rawValue { lo = mid + 1 } else { hi = mid }
        }
        return lo < entries.count && entries[lo].keysym == keysym.rawValue ? entries[lo].position : nil
    }

    /// Whether some key produces `keysym` (so it can be pressed and held in a chord).
    public func canPress(_ keysym: KeySym) -> Bool { position(of: keysym) != nil }

    /// How many keysyms the keymap produces.
    public var count: Int { entries.count }

    public static func == (a: Keymap, b: Keymap) -> Bool {
        a.canBorrow == b.canBorrow && a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.keysym == $1.keysym && $0.position == $1.position }
    }

    public func hash(into h: inout Hasher) {
        h.combine(canBorrow)
        for e in entries { h.combine(e.keysym); h.combine(e.position) }
    }
}
