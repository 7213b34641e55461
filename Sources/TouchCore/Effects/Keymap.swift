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
    ///
    /// A position whose level needs Shift is dropped when no key produces `Shift_L` or `Shift_R` unshifted,
    /// and one whose level needs the third-level shift when none produces `ISO_Level3_Shift` (nothing
    /// could select that level): `canPress` is then exact.
    public init(_ keys: [(KeySym, KeyPosition)], canBorrow: Bool) {
        var seen: [UInt32: KeyPosition] = [:]
        for (k, p) in keys where k.rawValue != 0 && seen[k.rawValue] == nil { seen[k.rawValue] = p }
        func plain(_ k: KeySym) -> UInt16? {
            guard let p = seen[k.rawValue], !p.shift, !p.levelThree else { return nil }
            return p.evdevCode
        }
        let shift = plain(.shiftL) ?? plain(.shiftR)
        let levelThree = plain(.isoLevel3Shift)
        entries = seen.filter { (_, p) in (!p.shift || shift != nil) && (!p.levelThree || levelThree != nil) }
            .map { ($0.key, $0.value) }.sorted { $0.keysym < $1.keysym }
        shiftKey = shift
        levelThreeKey = levelThree
        self.canBorrow = canBorrow
    }

    /// The evdev code of the key that produces `Shift_L` (else `Shift_R`) on its first level: what a
    /// keyboard holds for a keysym on level 2 or 4. Nil when no key does.
    public let shiftKey: UInt16?
    /// The evdev code of the key that produces `ISO_Level3_Shift` (AltGr) on its first level: what a
    /// keyboard holds for a keysym on level 3 or 4. Nil when no key does.
    public let levelThreeKey: UInt16?

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
        a.canBorrow == b.canBorrow && a.shiftKey == b.shiftKey && a.levelThreeKey == b.levelThreeKey
            && a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.keysym == $1.keysym && $0.position == $1.position }
    }

    public func hash(into h: inout Hasher) {
        h.combine(canBorrow)
        for e in entries { h.combine(e.keysym); h.combine(e.position) }
    }
}

extension KeySym {
    public static let shiftR = KeySym(rawValue: 0xffe2)
    /// AltGr on most layouts: selects levels 3 and 4.
    public static let isoLevel3Shift = KeySym(rawValue: 0xfe03)
}

extension Keymap {
    /// A US keyboard's map (pc105, `us`), for a keyboard whose desktop keymap is not known: the keys
    /// touchbridge names (letters, digits, space, punctuation, function, navigation, modifier and media
    /// keys) at their US positions, capitals on level 2. Right only on a US layout: the uinput backend
    /// says so at start when it has to use it.
    public static let usFallback: Keymap = {
        var keys: [(KeySym, KeyPosition)] = []
        // KEY_A... in a...z order.
        let letters: [UInt16] = [30, 48, 46, 32, 18, 33, 34, 35, 23, 36, 37, 38, 50, 49, 24, 25, 16, 19,
                                 31, 20, 22, 47, 17, 45, 21, 44]
        for (i, code) in letters.enumerated() {
            keys.append((KeySym(rawValue: 0x61 + UInt32(i)), KeyPosition(evdevCode: code)))
            keys.append((KeySym(rawValue: 0x41 + UInt32(i)), KeyPosition(evdevCode: code, shift: true)))
        }
        for d in UInt32(1)...9 { keys.append((KeySym(rawValue: 0x30 + d), KeyPosition(evdevCode: UInt16(1 + d)))) }
        keys.append((KeySym(rawValue: 0x30), KeyPosition(evdevCode: 11)))
        for f in UInt32(0)..<10 { keys.append((KeySym(rawValue: 0xffbe + f), KeyPosition(evdevCode: UInt16(59 + f)))) }
        let named: [(UInt32, UInt16)] = [
            (0x20, 57),        // space → KEY_SPACE
            (0xffc8, 87),      // F11
            (0xffc9, 88),      // F12
            (0xff08, 14),      // BackSpace → KEY_BACKSPACE
            (0xff09, 15),      // Tab → KEY_TAB
            (0xff0d, 28),      // Return → KEY_ENTER
            (0xff1b, 1),       // Escape → KEY_ESC
            (0xff50, 102),     // Home → KEY_HOME
            (0xff51, 105),     // Left → KEY_LEFT
            (0xff52, 103),     // Up → KEY_UP
            (0xff53, 106),     // Right → KEY_RIGHT
            (0xff54, 108),     // Down → KEY_DOWN
            (0xff55, 104),     // Prior → KEY_PAGEUP
            (0xff56, 109),     // Next → KEY_PAGEDOWN
            (0xff57, 107),     // End → KEY_END
            (0xffff, 111),     // Delete → KEY_DELETE
            (0xffe1, 42),      // Shift_L → KEY_LEFTSHIFT
            (0xffe3, 29),      // Control_L → KEY_LEFTCTRL
            (0xffe9, 56),      // Alt_L → KEY_LEFTALT
            (0xffeb, 125),     // Super_L → KEY_LEFTMETA
            (0x2e, 52),        // period → KEY_DOT
            (0x2c, 51),        // comma → KEY_COMMA
            (0x2f, 53),        // slash → KEY_SLASH
            (0x2d, 12),        // minus → KEY_MINUS
            (0x3d, 13),        // equal → KEY_EQUAL
            (0xff63, 110),     // Insert → KEY_INSERT
            (0xff61, 99),      // Print → KEY_SYSRQ
            (0xff67, 127),     // Menu → KEY_COMPOSE
            (0xffe5, 58),      // Caps_Lock → KEY_CAPSLOCK
            (0xffe2, 54),      // Shift_R → KEY_RIGHTSHIFT
            (0xffe4, 97),      // Control_R → KEY_RIGHTCTRL
            (0xffea, 100),     // Alt_R → KEY_RIGHTALT
            (0xffec, 126),     // Super_R → KEY_RIGHTMETA
            (0x1008ff11, 114), // XF86AudioLowerVolume → KEY_VOLUMEDOWN
            (0x1008ff12, 113), // XF86AudioMute → KEY_MUTE
            (0x1008ff13, 115), // XF86AudioRaiseVolume → KEY_VOLUMEUP
            (0x1008ff14, 164), // XF86AudioPlay → KEY_PLAYPAUSE
            (0x1008ff15, 166), // XF86AudioStop → KEY_STOPCD
            (0x1008ff16, 165), // XF86AudioPrev → KEY_PREVIOUSSONG
            (0x1008ff17, 163), // XF86AudioNext → KEY_NEXTSONG
            (0x1008ff26, 158), // XF86Back → KEY_BACK
            (0x1008ff27, 159), // XF86Forward → KEY_FORWARD
        ]
        for (k, code) in named { keys.append((KeySym(rawValue: k), KeyPosition(evdevCode: code))) }
        return Keymap(keys, canBorrow: false)
    }()
}
