import TouchCore

/// One shift level of one key in a keymap's first layout, as libxkbcommon describes it: the keysym it
/// produces and the modifier masks that select it.
struct KeyLevel: Equatable {
    /// The xkb keycode (an X keycode: evdev code + 8).
    var code: UInt32
    /// The shift level (0 = plain).
    var level: UInt32
    var keysym: UInt32
    /// The modifier masks (of the keymap's modifier indices) that select the level; empty or [0] for
    /// level 0.
    var masks: [UInt32]
}

extension Keymap {
    /// The `Keymap` of a compositor's keymap (`canBorrow` false: a Wayland client cannot change it): for
    /// each keysym of the first layout, the key that produces it at its lowest level that Shift
    /// (`shiftMask`) and/or the third-level shift (`levelThreeMask`, what the `ISO_Level3_Shift` key
    /// sets) select, lower levels and keycodes first. A level only other modifiers select (Ctrl+Alt's
    /// `XF86Switch_VT_1`, NumLock's keypad digits) is left out; so are keycodes below 9 (no evdev code)
    /// and above 256 (evdev codes past 248, `KEY_MICMUTE`: touchbridge's uinput keyboard has no such key,
    /// and X keycodes end at 255; xkeyboard-config puts a second `EuroSign` on evdev 435).
    /// The right Alt key (X keycode 108) is AltGr's position when it produces `ISO_Level3_Shift`, as on
    /// a keyboard, ahead of the `<LVL3>` key xkeyboard-config also maps to it. The same rules as X's
    /// map (`XDisplay.keymap`), so both desktops press the same keys.
    static func compositors(_ levels: [KeyLevel], shiftMask: UInt32, levelThreeMask: UInt32) -> Keymap {
        let wanted = shiftMask | levelThreeMask
        /// (shift, levelThree) that select `l`, nil when only other modifiers do.
        func modifiers(_ l: KeyLevel) -> (shift: Bool, levelThree: Bool)? {
            if l.level == 0 { return (false, false) }
            var best: (shift: Bool, levelThree: Bool)?
            for mask in l.masks where mask != 0 && mask & ~wanted == 0 {
                let found = (shift: mask & shiftMask != 0, levelThree: mask & levelThreeMask != 0)
                if best == nil || (best!.shift && best!.levelThree && !(found.shift && found.levelThree)) { best = found }
            }
            return best
        }
        var keys: [(KeySym, KeyPosition)] = []
        let rightAlt: UInt32 = 108
        if levels.contains(where: { $0.code == rightAlt && $0.level == 0 && $0.keysym == KeySym.isoLevel3Shift.rawValue }) {
            keys.append((.isoLevel3Shift, KeyPosition(evdevCode: UInt16(rightAlt - 8))))
        }
        for l in levels.sorted(by: { ($0.level, $0.code) < ($1.level, $1.code) }) where l.code >= 9 && l.code - 8 <= 248 {
            guard l.keysym != 0, let mods = modifiers(l) else { continue }
            keys.append((KeySym(rawValue: l.keysym),
                         KeyPosition(evdevCode: UInt16(l.code - 8), shift: mods.shift, levelThree: mods.levelThree)))
        }
        return Keymap(keys, canBorrow: false)
    }
}

extension XKBKeymap {
    /// Every level of every key's first layout that produces exactly one keysym. A keysym that stands for
    /// a character beyond Latin-1 under a name of its own (`EuroSign`, `Cyrillic_a`) comes a second time
    /// as that character's Unicode keysym (0x01000000 + code point), which is how typed text names it:
    /// fr's € is then typed with AltGr+E, not on the virtual keyboard.
    var levels: [KeyLevel] {
        var out: [KeyLevel] = []
        for code in keycodes where layouts(of: code) > 0 {
            for level in 0..<levels(of: code) {
                let syms = keysyms(of: code, level: level)
                guard syms.count == 1 else { continue }
                let l = KeyLevel(code: code, level: level, keysym: syms[0], masks: modifierMasks(of: code, level: level))
                out.append(l)
                let u = XKBKeymap.unicode(of: syms[0])
                if u >= 0x100, syms[0] != 0x0100_0000 + u {
                    var alias = l
                    alias.keysym = 0x0100_0000 + u
                    out.append(alias)
                }
            }
        }
        return out
    }

    /// This keymap as touchbridge's `Keymap`: Shift is the modifier named "Shift"; the third-level shift
    /// is what the keys producing `ISO_Level3_Shift` set when held (Mod5 when none does).
    var touchKeymap: Keymap {
        let all = levels
        var levelThree: UInt32 = 0
        for l in all where l.level == 0 && l.keysym == KeySym.isoLevel3Shift.rawValue { levelThree |= modifiersSet(by: l.code) }
        if levelThree == 0 { levelThree = modifierMask(named: "Mod5") }
        return Keymap.compositors(all, shiftMask: modifierMask(named: "Shift"), levelThreeMask: levelThree)
    }
}
