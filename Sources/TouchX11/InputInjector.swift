import TouchCore

/// Performs the core's `OutputAction`s on an `XDisplay` through XTest, and remembers what it has
/// pressed so that every exit path can release it.
///
/// Not thread-safe: owned by the same single thread as the `XDisplay`.
public final class InputInjector {
    public let display: XDisplay
    /// Bit `n` set = pointer button `n` is held down by us.
    public private(set) var pressedButtons: UInt32 = 0
    /// The keys we hold down, by keycode (8...255), in press order.
    public private(set) var pressedKeys: [KeyCode] = []

    /// The extra fingers' own pointers, when multi-pointer output is on (`fingerMoveTo`/`fingerButton`
    /// actions need it; without it they fail).
    public let fingers: FingerPointers?

    public init(display: XDisplay, fingers: FingerPointers? = nil) {
        self.display = display
        self.fingers = fingers
    }

    /// Whether any button we pressed is still down.
    public var holdsAnything: Bool { pressedButtons != 0 || !pressedKeys.isEmpty || (fingers?.holdsAnything ?? false) }

    /// Performs `actions` in order, then flushes once. Stops at the first failing request.
    public func perform(_ actions: [OutputAction]) throws(X11Error) {
        guard !actions.isEmpty else { return }
        for action in actions {
            switch action {
            case .moveTo(let point):
                try display.fakeMotion(to: point)
            case .moveBy(let dx, let dy):
                try display.fakeRelativeMotion(dx: dx, dy: dy)
            case .button(let button, let pressed):
                try display.fakeButton(button, pressed: pressed)
                let bit = UInt32(1) << UInt32(button.rawValue & 31)
                if pressed { pressedButtons |= bit } else { pressedButtons &= ~bit }
            case .key(let keysym, let pressed):
                let code = try display.keyCode(for: keysym)
                try display.fakeKey(code, pressed: pressed)
                if pressed {
                    if !pressedKeys.contains(code) { pressedKeys.append(code) }
                } else {
                    pressedKeys.removeAll { $0 == code }
                }
            case .fingerMoveTo(let finger, let point):
                guard let fingers else { throw .requestFailed("\(finger): multi-pointer output is off") }
                try fingers.move(finger, to: point)
            case .fingerButton(let finger, let button, let pressed):
                guard let fingers else { throw .requestFailed("\(finger): multi-pointer output is off") }
                try fingers.button(finger, button, pressed: pressed)
            case .overlay:
                // Drawing, not input: the engine hands these to the overlay.
                break
            case .touch:
                throw .requestFailed("XTest cannot make touch events: real touches need the uinput backend")
            case .padContact:
                throw .requestFailed("XTest has no touchpad device: the native touchpad needs the uinput backend")
            case .smoothScroll:
                throw .requestFailed("XTest cannot scroll by less than a click: smooth scrolling needs the uinput backend")
            }
        }
        try display.flush()
    }

    /// Types one symbol as a press and a release: on its own key when the keymap has it unshifted, else on
    /// a spare keycode mapped to it just before (so any Unicode character can be typed: keysym
    /// 0x01000000 + code point). Nothing stays pressed.
    public func type(_ keysym: KeySym) throws(X11Error) {
        if let code = try display.unshiftedKeyCode(for: keysym) {
            try display.fakeKey(code, pressed: true)
            try display.fakeKey(code, pressed: false)
            try display.flush()
            return
        }
        guard let spare = try display.spareKeyCode() else {
            throw .requestFailed("no spare keycode to type \(keysym)")
        }
        try display.mapKeysym(keysym, onto: spare)
        try display.fakeKey(spare, pressed: true)
        try display.fakeKey(spare, pressed: false)
        // The next symbol may remap the spare: the server must have handled these events first.
        try display.sync()
    }

    /// Releases every button and key we hold (keys last pressed first; then the extra fingers'
    /// buttons), and waits until the server has processed the releases. Called on every exit path before anything else. Returns what it
    /// released, for the log.
    @discardableResult
    public func releaseAll() throws(X11Error) -> [String] {
        var released: [String] = []
        for n in UInt8(1)...31 where pressedButtons & (UInt32(1) << UInt32(n)) != 0 {
            let button = PointerButton(rawValue: n)
            try display.fakeButton(button, pressed: false)
            released.append(button.description)
        }
        pressedButtons = 0
        for code in pressedKeys.reversed() {
            try display.fakeKey(code, pressed: false)
            released.append("keycode \(code.rawValue)")
        }
        pressedKeys.removeAll()
        if let fingers { released += try fingers.releaseAll() }
        try display.sync()
        return released
    }
}
