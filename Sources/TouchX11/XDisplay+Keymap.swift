import CX11
import TouchCore

/// The keyboard map as the X server has it (XKB's client map of the core keyboard), and the events
/// that say it changed.
extension XDisplay {
    /// `XkbUseCoreKbd`: the core keyboard, whose map the server gives every keyboard `setxkbmap`
    /// (or a desktop's layout switch) changes.
    static let coreKeyboard: UInt32 = 0x0100

    /// Asks for the events that say the keyboard map changed: XKB's new-keyboard and map notifies for
    /// the core keyboard (`setxkbmap`, a layout switch, `xmodmap`; the core `MappingNotify` comes
    /// unasked), and XInput's hierarchy events on the root window (a keyboard came or went: touchbridge's
    /// own uinput keyboard appears some time after it is made). `drainIncoming` reports them as
    /// `keymapChanged` and `devicesChanged`.
    ///
    /// The corresponding C functions are `XkbQueryExtension`, `XkbSelectEvents`, `XISelectEvents` and
    /// the shim's `tb_xi_mask_len` and `tb_xi_set_mask`.
    public func selectKeymapChangeInput() throws(X11Error) {
        let dpy = try display()
        var opcode: Int32 = 0, event: Int32 = 0, error: Int32 = 0
        var major = Int32(XkbMajorVersion), minor = Int32(XkbMinorVersion)
        guard XkbQueryExtension(dpy, &opcode, &event, &error, &major, &minor) != 0 else {
            throw .missingExtension("XKEYBOARD")
        }
        xkbEventBase = event
        let mask = UInt32(XkbNewKeyboardNotifyMask | XkbMapNotifyMask)
        guard XkbSelectEvents(dpy, Self.coreKeyboard, mask, mask) != 0 else {
            throw .requestFailed("XkbSelectEvents")
        }
        guard let version = try xinputVersion(), version.major >= 2 else { return }
        var bits = [UInt8](repeating: 0, count: Int(tb_xi_mask_len(XI_HierarchyChanged)))
        tb_xi_set_mask(&bits, XI_HierarchyChanged)
        let root = try rootWindow().rawValue
        let status = bits.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var selection = XIEventMask(deviceid: XIAllDevices, mask_len: Int32(buffer.count), mask: buffer.baseAddress)
            return XISelectEvents(dpy, root, &selection, 1)
        }
        guard status == Success else { throw .requestFailed("XISelectEvents(XI_HierarchyChanged)") }
    }

    /// Whether `event` is XInput's hierarchy event (a device came, went, or was enabled or disabled).
    func isHierarchyChange(_ event: inout XEvent) -> Bool {
        xinputOpcode >= 0 && event.type == GenericEvent && event.xcookie.extension == xinputOpcode
            && event.xcookie.evtype == XI_HierarchyChanged
    }

    /// Whether `event` is XKB's new-keyboard or map notify (see `selectKeymapChangeInput`).
    func isKeymapChange(_ event: inout XEvent) -> Bool {
        guard xkbEventBase >= 0, event.type == xkbEventBase else { return false }
        let kind = withUnsafePointer(to: &event) {
            $0.withMemoryRebound(to: XkbAnyEvent.self, capacity: 1) { $0.pointee.xkb_type }
        }
        return kind == XkbNewKeyboardNotify || kind == XkbMapNotify
    }

    /// Tells Xlib that the core keyboard map changed (a `MappingNotify` of the keyboard), so that its
    /// cached copy (behind `XKeysymToKeycode`) is read again.
    ///
    /// The corresponding C function is `XRefreshKeyboardMapping`.
    func refreshKeyboardMapping(_ event: inout XEvent) {
        XRefreshKeyboardMapping(&event.xmapping)
    }

    /// The map of keyboard `device` (nil: the core keyboard's) now, from XKB's client map: for each
    /// keysym on the first group, the key
    /// that produces it (evdev code = X keycode − 8) at its lowest shift level that Shift and/or the
    /// third-level shift select, lower levels and keycodes first. A level only other modifiers select
    /// (Ctrl+Alt's `XF86Switch_VT_1`, NumLock's keypad digits) is left out; keycodes in `excluding`
    /// (those borrowed for typing, while they are) too. `canBorrow`: a keycode is borrowed, or an empty
    /// one exists now.
    ///
    /// The corresponding C functions are `XkbGetMap` and `XkbFreeKeyboard`.
    public func keymap(of device: DeviceID? = nil, excluding: Set<KeyCode>) throws(X11Error) -> Keymap {
        let dpy = try display()
        let which = UInt32(XkbKeyTypesMask | XkbKeySymsMask | XkbModifierMapMask)
        let spec = device.map { UInt32(bitPattern: $0.rawValue) } ?? Self.coreKeyboard
        guard let desc = XkbGetMap(dpy, which, spec) else { throw .requestFailed("XkbGetMap(device \(spec))") }
        defer { XkbFreeKeyboard(desc, 0, 1) }
        guard let map = desc.pointee.map, let symMaps = map.pointee.key_sym_map, let syms = map.pointee.syms,
              let types = map.pointee.types else {
            throw .requestFailed("XkbGetMap: no client map")
        }
        let minCode = Int(desc.pointee.min_key_code), maxCode = Int(desc.pointee.max_key_code)
        /// (keycode, level, keysym) of group 1, every level.
        var levels: [(code: Int, level: Int, keysym: UInt)] = []
        for code in max(minCode, 9)...max(minCode, maxCode, 9) where !excluding.contains(KeyCode(rawValue: UInt8(code))) {
            let m = symMaps[code]
            guard m.group_info & 0x0f > 0, m.width > 0 else { continue }
            let type = types[Int(m.kt_index.0)]
            for level in 0..<min(Int(type.num_levels), Int(m.width)) {
                let sym = syms[Int(m.offset) + level]
                if sym != 0 { levels.append((code, level, sym)) }
            }
        }
        // The real modifier the third-level shift sets: the modifier map of the keys that produce
        // `ISO_Level3_Shift` (Mod5 in xkeyboard-config's maps, also when only a `<LVL3>` key carries it).
        var levelThreeMask: UInt8 = 0
        if let modmap = map.pointee.modmap {
            for l in levels where l.level == 0 && l.keysym == UInt(KeySym.isoLevel3Shift.rawValue) { levelThreeMask |= modmap[l.code] }
        }
        if levelThreeMask == 0 { levelThreeMask = UInt8(Mod5Mask) }
        let shiftMask = UInt8(ShiftMask)
        /// The modifiers (shift, level three) that select `level` of `code`'s group-1 type; nil when only
        /// other modifiers do.
        func modifiers(code: Int, level: Int) -> (shift: Bool, levelThree: Bool)? {
            if level == 0 { return (false, false) }
            let type = types[Int(symMaps[code].kt_index.0)]
            guard let entries = type.map else { return nil }
            var best: (shift: Bool, levelThree: Bool)?
            for i in 0..<Int(type.map_count) {
                let e = entries[i]
                guard e.active != 0, Int(e.level) == level else { continue }
                let mask = e.mods.mask
                guard mask != 0, mask & ~(shiftMask | levelThreeMask) == 0 else { continue }
                let found = (shift: mask & shiftMask != 0, levelThree: mask & levelThreeMask != 0)
                if best == nil || (best!.shift && best!.levelThree && !(found.shift && found.levelThree)) { best = found }
            }
            return best
        }
        var keys: [(TouchCore.KeySym, KeyPosition)] = []
        // AltGr itself: the real right Alt key when it is the third-level shift (as on a keyboard), ahead of
        // the `<LVL3>` key xkeyboard-config also maps to it.
        let rightAlt = 108
        if levels.contains(where: { $0.code == rightAlt && $0.level == 0 && $0.keysym == UInt(KeySym.isoLevel3Shift.rawValue) }) {
            keys.append((.isoLevel3Shift, KeyPosition(evdevCode: UInt16(rightAlt - 8))))
        }
        // Lower levels first, then lower keycodes: `Keymap` keeps the first position of each keysym.
        for l in levels.sorted(by: { ($0.level, $0.code) < ($1.level, $1.code) }) {
            guard let mods = modifiers(code: l.code, level: l.level), l.keysym <= UInt(UInt32.max) else { continue }
            keys.append((TouchCore.KeySym(rawValue: UInt32(l.keysym)),
                         KeyPosition(evdevCode: UInt16(l.code - 8), shift: mods.shift, levelThree: mods.levelThree)))
        }
        let canBorrow = try excluding.isEmpty ? emptyKeyCode() != nil : true
        return Keymap(keys, canBorrow: canBorrow)
    }
}
