import CWayland
import Glibc

// libxkbcommon: the keymap the compositor sent, compiled and read level by level. Its C calls are here,
// one Swift function per C function, as WaylandDisplay.swift's are.

/// A keymap compiled by libxkbcommon, read level by level. Freed on deinit.
final class XKBKeymap {
    private let context: OpaquePointer
    private let keymap: OpaquePointer

    /// Compiles the keymap text a compositor sent (format `XKB_KEYMAP_FORMAT_TEXT_V1`).
    ///
    /// The corresponding C functions are `xkb_context_new` and `xkb_keymap_new_from_string`.
    init(text: [CChar]) throws(WaylandError) {
        guard let c = xkb_context_new(XKB_CONTEXT_NO_FLAGS) else { throw .keymap("xkb_context_new failed") }
        guard let k = text.withUnsafeBufferPointer({ xkb_keymap_new_from_string(c, $0.baseAddress, XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS) }) else {
            Self.release(context: c)
            throw .keymap("libxkbcommon cannot compile the keymap the compositor sent")
        }
        context = c
        keymap = k
    }

    /// The corresponding C function is `xkb_keymap_unref`.
    deinit {
        xkb_keymap_unref(keymap)
        Self.release(context: context)
    }

    /// The corresponding C function is `xkb_context_unref`.
    private static func release(context: OpaquePointer) { xkb_context_unref(context) }

    /// The keymap as libxkbcommon writes it out (what a compositor sends its clients), NUL-terminated.
    ///
    /// The corresponding C functions are `xkb_keymap_get_as_string` and `free`.
    var text: [CChar] {
        guard let s = xkb_keymap_get_as_string(keymap, XKB_KEYMAP_FORMAT_TEXT_V1) else { return [0] }
        defer { free(s) }
        return Array(UnsafeBufferPointer(start: s, count: strlen(s) + 1))
    }

    /// The Unicode code point `keysym` stands for (0 when none).
    ///
    /// The corresponding C function is `xkb_keysym_to_utf32`.
    static func unicode(of keysym: UInt32) -> UInt32 { xkb_keysym_to_utf32(keysym) }

    /// The keycodes (X keycodes: evdev code + 8) the keymap defines.
    ///
    /// The corresponding C functions are `xkb_keymap_min_keycode` and `xkb_keymap_max_keycode`.
    var keycodes: ClosedRange<UInt32> {
        let lo = xkb_keymap_min_keycode(keymap), hi = xkb_keymap_max_keycode(keymap)
        return lo <= hi ? lo...hi : lo...lo
    }

    /// How many layouts (groups) `key` has.
    ///
    /// The corresponding C function is `xkb_keymap_num_layouts_for_key`.
    func layouts(of key: UInt32) -> UInt32 { xkb_keymap_num_layouts_for_key(keymap, key) }

    /// How many shift levels `key` has in its first layout.
    ///
    /// The corresponding C function is `xkb_keymap_num_levels_for_key`.
    func levels(of key: UInt32) -> UInt32 { xkb_keymap_num_levels_for_key(keymap, key, 0) }

    /// The keysyms of `key` at `level` of its first layout (usually one).
    ///
    /// The corresponding C function is `xkb_keymap_key_get_syms_by_level`.
    func keysyms(of key: UInt32, level: UInt32) -> [UInt32] {
        var syms: UnsafePointer<xkb_keysym_t>?
        let n = xkb_keymap_key_get_syms_by_level(keymap, key, 0, level, &syms)
        guard n > 0, let syms else { return [] }
        return Array(UnsafeBufferPointer(start: syms, count: Int(n)))
    }

    /// The modifier masks (of the keymap's modifier indices) that select `level` of `key`'s first layout.
    ///
    /// The corresponding C function is `xkb_keymap_key_get_mods_for_level`.
    func modifierMasks(of key: UInt32, level: UInt32) -> [UInt32] {
        var masks = [xkb_mod_mask_t](repeating: 0, count: 16)
        let n = xkb_keymap_key_get_mods_for_level(keymap, key, 0, level, &masks, masks.count)
        return Array(masks.prefix(max(0, n)))
    }

    /// The mask of the modifier named `name` (`XKB_MOD_NAME_SHIFT` is "Shift"), 0 when the keymap lacks it.
    ///
    /// The corresponding C function is `xkb_keymap_mod_get_index`.
    func modifierMask(named name: String) -> UInt32 {
        let i = xkb_keymap_mod_get_index(keymap, name)
        return i == XKB_MOD_INVALID || i >= 32 ? 0 : 1 << i
    }

    /// The modifiers `key` sets while it alone is held (what `ISO_Level3_Shift`'s key sets: Mod5 in
    /// xkeyboard-config's maps).
    ///
    /// The corresponding C functions are `xkb_state_new`, `xkb_state_update_key`,
    /// `xkb_state_serialize_mods` and `xkb_state_unref`.
    func modifiersSet(by key: UInt32) -> UInt32 {
        guard let state = xkb_state_new(keymap) else { return 0 }
        defer { xkb_state_unref(state) }
        _ = xkb_state_update_key(state, key, XKB_KEY_DOWN)
        return xkb_state_serialize_mods(state, XKB_STATE_MODS_DEPRESSED)
    }
}
