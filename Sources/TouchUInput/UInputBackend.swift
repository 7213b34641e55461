// The uinput output backend: performs the core's OutputAction values on kernel input devices, so the
// display server's own input stack (libinput under Xorg or a Wayland compositor) sees real devices.
import TouchCore

/// The uinput backend's devices: performs the Bridge's input actions on kernel input devices and
/// remembers what they hold, so every exit path can release it (and the kernel releases everything
/// anyway when the descriptors close, even after SIGKILL).
///
/// - `moveBy`, `button`, `smoothScroll`: a relative pointer with hi-res wheels (buttons 4–7 become
///   one wheel notch each).
/// - `touch`: the touchscreen (made by `setScreen`, spanning the X screen pixel for pixel), one
///   contact per finger: XI 2.2 touch sequences.
/// - `padContact`: the native touchpad, one contact per finger: libinput's taps, scrolling, gestures.
/// - `key`: a keyboard, for the keys `KeyCodes` has; the X output types the rest through its keymap.
/// - not taken: `moveTo` (absolute; only touchscreen mode without real touches makes it), `type`
///   (typed text, the X keymap path), `fingerMoveTo`/`fingerButton` (XTest's MPX fingers) and the
///   overlay.
/// Not thread-safe: owned by one thread.
public final class UInputBackend: InputDevices {
    public let pointer: UInputPointer
    public let keyboard: UInputKeyboard
    /// The direct touch device (touchscreen mode with real touches), made by `setScreen`.
    public private(set) var touchscreen: UInputTouchscreen?
    /// Whether `setScreen` makes a touchscreen.
    private let wantsTouchscreen: Bool
    /// The native touchpad (touchpad mode with `nativeTouchpad`), when made.
    public let touchpad: UInputTouchpad?
    private let path: String
    /// Touchpad slots with a contact down (bit = slot).
    public private(set) var padTouching: UInt16 = 0
    /// Bit n set = pointer button n held by us.
    public private(set) var pressedButtons: UInt32 = 0
    /// Evdev key codes held by us, in press order.
    public private(set) var pressedKeys: [UInt16] = []
    /// Touchscreen slots with a contact down (bit = slot).
    public private(set) var touching: UInt16 = 0

    public var name: String { "uinput" }

    /// Creates the pointer and keyboard; with `touchscreen`, a touchscreen once `setScreen` gives the
    /// screen's size; with `touchpadMM` (width, height of the phone's surface), a native touchpad of
    /// that size.
    public init(touchscreen: Bool, touchpadMM: (width: Double, height: Double)?, path: String = uinputPath) throws(UInputError) {
        self.path = path
        wantsTouchscreen = touchscreen
        pointer = try UInputPointer(path: path)
        keyboard = try UInputKeyboard(path: path)
        if let mm = touchpadMM {
            touchpad = try UInputTouchpad(widthMM: max(10, Int32(mm.width.rounded())), heightMM: max(10, Int32(mm.height.rounded())),
                                          path: path)
        } else {
            touchpad = nil
        }
        pressedKeys.reserveCapacity(16)
    }

    deinit { close() }

    public var holdsAnything: Bool { pressedButtons != 0 || !pressedKeys.isEmpty || touching != 0 || padTouching != 0 }

    public func setScreen(width: Int32, height: Int32) throws(InputDeviceError) {
        guard wantsTouchscreen, width > 0, height > 0 else { return }
        if let t = touchscreen, t.width == width, t.height == height { return }
        // A new size needs a new device (the axes are fixed at creation): the old one goes, and with it
        // any touch it held (the kernel ends them); later moves begin new touches on the new device.
        touchscreen?.device.close()
        touchscreen = nil
        touching = 0
        do { touchscreen = try UInputTouchscreen(width: width, height: height, path: path) } catch { throw InputDeviceError(error.description) }
    }

    public func takes(_ action: OutputAction) -> Bool {
        switch action {
        case .moveBy, .button, .smoothScroll, .touch, .padContact: return true
        case .key(let keysym, _): return KeyCodes.evdevCode(for: keysym) != nil
        case .moveTo, .type, .restoreKeymap, .fingerMoveTo, .fingerButton, .overlay: return false
        }
    }

    public func perform(_ actions: [OutputAction]) throws(InputDeviceError) {
        do { try performOnDevices(actions) } catch { throw InputDeviceError(error.description) }
    }

    /// Performs `actions` in order; each device that changed ends its frame once, at the end.
    private func performOnDevices(_ actions: [OutputAction]) throws(UInputError) {
        guard !actions.isEmpty else { return }
        var pointerDirty = false, keyboardDirty = false, touchDirty = false, padDirty = false
        for action in actions {
            switch action {
            case .moveBy(let dx, let dy):
                try pointer.move(dx: dx, dy: dy)
                pointerDirty = true
            case .button(let button, let pressed):
                try performButton(button, pressed: pressed)
                pointerDirty = true
            case .key(let keysym, let pressed):
                guard let code = KeyCodes.evdevCode(for: keysym) else { continue }
                try keyboard.key(code, pressed: pressed)
                if pressed {
                    if !pressedKeys.contains(code) { pressedKeys.append(code) }
                } else {
                    pressedKeys.removeAll { $0 == code }
                }
                keyboardDirty = true
            case .touch(let slot, let phase, let at):
                guard let touchscreen, slot < 10 else { continue }
                let bit = UInt16(1) << UInt16(slot)
                switch phase {
                case .began, .moved:
                    try touchscreen.touch(slot: Int(slot), x: at.x, y: at.y)
                    touching |= bit
                case .ended, .cancelled:
                    try touchscreen.lift(slot: Int(slot))
                    touching &= ~bit
                }
                touchDirty = true
            case .padContact(let change):
                guard let touchpad, change.slot < 10 else { continue }
                let bit = UInt16(1) << UInt16(change.slot)
                switch change {
                case .began(let slot, let p), .moved(let slot, let p):
                    // Device points (0...4094 each way) onto the pad's units.
                    let x = Int32(Int64(p.rawX) * Int64(touchpad.maxX) / ScreenMapping.rawSpan)
                    let y = Int32(Int64(p.rawY) * Int64(touchpad.maxY) / ScreenMapping.rawSpan)
                    try touchpad.touch(slot: Int(slot), x: x, y: y)
                    padTouching |= bit
                case .ended(let slot), .cancelled(let slot):
                    try touchpad.lift(slot: Int(slot))
                    padTouching &= ~bit
                }
                padDirty = true
            case .smoothScroll(let dx, let dy):
                // The kernel counts up and right as positive; the action counts down like button 5.
                try pointer.scroll(vertical: -dy, horizontal: dx)
                pointerDirty = true
            case .moveTo, .type, .restoreKeymap, .fingerMoveTo, .fingerButton, .overlay:
                continue  // not taken (see `takes`)
            }
        }
        if pointerDirty { try pointer.sync() }
        if keyboardDirty { try keyboard.sync() }
        if touchDirty { try touchscreen?.sync() }
        if padDirty { try touchpad?.sync() }
    }

    private func performButton(_ button: PointerButton, pressed: Bool) throws(UInputError) {
        let code: UInt16
        switch button.rawValue {
        case 1: code = BTN.left
        case 2: code = BTN.middle
        case 3: code = BTN.right
        case 4, 5, 6, 7:
            // A wheel click: one notch on the press; the release has no wheel meaning.
            guard pressed else { return }
            let notch = hiResUnitsPerNotch
            switch button.rawValue {
            case 4: try pointer.scroll(vertical: notch, horizontal: 0)
            case 5: try pointer.scroll(vertical: -notch, horizontal: 0)
            case 6: try pointer.scroll(vertical: 0, horizontal: -notch)
            default: try pointer.scroll(vertical: 0, horizontal: notch)
            }
            return
        case 8: code = BTN.side
        case 9: code = BTN.extra
        default:
            return  // no evdev button: X has buttons up to 255, a mouse far fewer
        }
        try pointer.button(code, pressed: pressed)
        let bit = UInt32(1) << UInt32(button.rawValue & 31)
        if pressed { pressedButtons |= bit } else { pressedButtons &= ~bit }
    }

    public var held: [String] {
        var held: [String] = []
        if touching != 0 { held.append("touches 0x\(String(touching, radix: 16))") }
        if padTouching != 0 { held.append("touchpad contacts 0x\(String(padTouching, radix: 16))") }
        for n in UInt8(1)...9 where pressedButtons & (UInt32(1) << UInt32(n)) != 0 {
            held.append(PointerButton(rawValue: n).description)
        }
        for code in pressedKeys { held.append("evdev key \(code)") }
        return held
    }

    public func releaseAll() throws(InputDeviceError) -> [String] {
        do { return try releaseEverything() } catch { throw InputDeviceError(error.description) }
    }

    /// Lifts every touch, releases every button and key we hold. Returns what it released.
    private func releaseEverything() throws(UInputError) -> [String] {
        let released = held
        if touching != 0, let touchscreen {
            try touchscreen.liftAll()
            touching = 0
        }
        if padTouching != 0, let touchpad {
            try touchpad.liftAll()
            padTouching = 0
        }
        if pressedButtons != 0 {
            for n in UInt8(1)...9 where pressedButtons & (UInt32(1) << UInt32(n)) != 0 {
                try performButton(PointerButton(rawValue: n), pressed: false)
            }
            pressedButtons = 0
            try pointer.sync()
        }
        if !pressedKeys.isEmpty {
            for code in pressedKeys.reversed() { try keyboard.key(code, pressed: false) }
            pressedKeys.removeAll(keepingCapacity: true)
            try keyboard.sync()
        }
        return released
    }

    /// Destroys every device (`UI_DEV_DESTROY`); the kernel releases whatever they still held.
    public func close() {
        touchscreen?.device.close()
        touchpad?.device.close()
        pointer.device.close()
        keyboard.device.close()
    }
}

/// X keysyms → evdev key codes (<linux/input-event-codes.h>) for the keys touchbridge presses: the
/// core's named keys, letters, digits, function keys. Typed text (any Unicode) stays on the X keymap
/// path; keys this table lacks are left to XTest (`UInputBackend.takes`).
public enum KeyCodes {
    public static func evdevCode(for keysym: KeySym) -> UInt16? {
        let k = keysym.rawValue
        switch k {
        case 0x61...0x7a: return letters[Int(k - 0x61)]          // a...z
        case 0x41...0x5a: return letters[Int(k - 0x41)]          // A...Z (the shift is the caller's)
        case 0x31...0x39: return UInt16(2 + (k - 0x31))          // 1...9 → KEY_1...KEY_9
        case 0x30: return 11                                     // KEY_0
        case 0x20: return 57                                     // KEY_SPACE
        case 0xffbe...0xffc7: return UInt16(59 + (k - 0xffbe))   // F1...F10
        case 0xffc8: return 87                                   // F11
        case 0xffc9: return 88                                   // F12
        default: return named[k]
        }
    }

    /// KEY_A... in a...z order.
    private static let letters: [UInt16] = [30, 48, 46, 32, 18, 33, 34, 35, 23, 36, 37, 38, 50, 49, 24, 25, 16, 19,
                                            31, 20, 22, 47, 17, 45, 21, 44]
    private static let named: [UInt32: UInt16] = [
        0xff08: 14,   // BackSpace → KEY_BACKSPACE
        0xff09: 15,   // Tab → KEY_TAB
        0xff0d: 28,   // Return → KEY_ENTER
        0xff1b: 1,    // Escape → KEY_ESC
        0xff50: 102,  // Home → KEY_HOME
        0xff51: 105,  // Left → KEY_LEFT
        0xff52: 103,  // Up → KEY_UP
        0xff53: 106,  // Right → KEY_RIGHT
        0xff54: 108,  // Down → KEY_DOWN
        0xff55: 104,  // Prior → KEY_PAGEUP
        0xff56: 109,  // Next → KEY_PAGEDOWN
        0xff57: 107,  // End → KEY_END
        0xffff: 111,  // Delete → KEY_DELETE
        0xffe1: 42,   // Shift_L → KEY_LEFTSHIFT
        0xffe3: 29,   // Control_L → KEY_LEFTCTRL
        0xffe9: 56,   // Alt_L → KEY_LEFTALT
        0xffeb: 125,  // Super_L → KEY_LEFTMETA
        0x2e: 52,     // period → KEY_DOT
        0x2c: 51,     // comma → KEY_COMMA
        0x2f: 53,     // slash → KEY_SLASH
        0x2d: 12,     // minus → KEY_MINUS
        0x3d: 13,     // equal → KEY_EQUAL
        0xff63: 110,  // Insert → KEY_INSERT
        0xff61: 99,   // Print → KEY_SYSRQ
        0xff67: 127,  // Menu → KEY_COMPOSE
        0xffe5: 58,   // Caps_Lock → KEY_CAPSLOCK
        0xffe2: 54,   // Shift_R → KEY_RIGHTSHIFT
        0xffe4: 97,   // Control_R → KEY_RIGHTCTRL
        0xffea: 100,  // Alt_R → KEY_RIGHTALT
        0xffec: 126,  // Super_R → KEY_RIGHTMETA
        0x1008ff11: 114,  // XF86AudioLowerVolume → KEY_VOLUMEDOWN
        0x1008ff12: 113,  // XF86AudioMute → KEY_MUTE
        0x1008ff13: 115,  // XF86AudioRaiseVolume → KEY_VOLUMEUP
        0x1008ff14: 164,  // XF86AudioPlay → KEY_PLAYPAUSE
        0x1008ff15: 166,  // XF86AudioStop → KEY_STOPCD
        0x1008ff16: 165,  // XF86AudioPrev → KEY_PREVIOUSSONG
        0x1008ff17: 163,  // XF86AudioNext → KEY_NEXTSONG
        0x1008ff26: 158,  // XF86Back → KEY_BACK
        0x1008ff27: 159,  // XF86Forward → KEY_FORWARD
    ]
}
