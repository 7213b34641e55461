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
    /// The keycodes `type` remapped, with the keysyms each carried before (in remapping order), to be
    /// put back by `releaseAll`. Also kept on the root window (`remappedProperty`), so that the next
    /// start on that X server can put them back after a crash.
    public private(set) var remapped: [(code: KeyCode, keysyms: [UInt])] = []
    /// Which spare keycode `type` borrows next.
    private var nextSpare = 0

    /// The root window property where the remapped keycodes are kept while they are remapped: for each,
    /// its keycode, the number of its original keysyms, then those keysyms (CARDINAL, format 32).
    /// Written before the first remapping, deleted once restored.
    public static let remappedProperty = "_TOUCHBRIDGE_REMAPPED"

    /// The extra fingers' own pointers, when multi-pointer output is on (`fingerMoveTo`/`fingerButton`
    /// actions need it; without it they fail).
    public let fingers: FingerPointers?

    public init(display: XDisplay, fingers: FingerPointers? = nil) {
        self.display = display
        self.fingers = fingers
    }

    /// Performs `actions` in order, then flushes once. A request that fails does not stop the batch:
    /// every action is tried, so the releases after a failed press (a chord's modifiers, a click's
    /// button) still reach the server, and the flush always happens. Returns the failures, in order.
    ///
    /// A key press whose keysym no key carries presses nothing and is not recorded as held; the Bridge
    /// refuses such chords before they get here when it knows the keymap (`Keymap`), this is the output's
    /// own guard.
    public func perform(_ actions: [OutputAction]) -> [X11Error] {
        var errors: [X11Error] = []
        guard !actions.isEmpty else { return errors }
        for action in actions {
            do throws(X11Error) {
                try perform(action)
            } catch {
                errors.append(error)
            }
        }
        do { try display.flush() } catch { errors.append(error) }
        return errors
    }

    /// One action, not flushed; what it pressed is recorded only once the server has been asked to
    /// press it.
    public func perform(_ action: OutputAction) throws(X11Error) {
        switch action {
        case .moveTo(let point):
            try display.fakeMotion(to: point)
        case .moveBy(let dx, let dy):
            try display.fakeRelativeMotion(dx: dx, dy: dy)
        case .button(let button, let pressed):
            let bit = UInt32(1) << UInt32(button.rawValue & 31)
            // A release is recorded first: even if the request fails, nothing is left to release later.
            if !pressed { pressedButtons &= ~bit }
            try display.fakeButton(button, pressed: pressed)
            if pressed { pressedButtons |= bit }
        case .key(let keysym, let pressed):
            let code = try display.keyCode(for: keysym)
            if !pressed { pressedKeys.removeAll { $0 == code } }
            try display.fakeKey(code, pressed: pressed)
            if pressed && !pressedKeys.contains(code) { pressedKeys.append(code) }
        case .type(let keysym):
            try type(keysym)
        case .restoreKeymap:
            try restoreKeymap()
        case .fingerMoveTo(let finger, let point):
            guard let fingers else { throw .requestFailed("\(finger): multi-pointer output is off") }
            try fingers.move(finger, to: point)
        case .fingerButton(let finger, let button, let pressed):
            guard let fingers else { throw .requestFailed("\(finger): multi-pointer output is off") }
            try fingers.button(finger, button, pressed: pressed)
        case .overlay:
            // Drawing, not input: the host hands these to the desktop's overlay.
            break
        case .touch:
            throw .requestFailed("XTest cannot make touch events: real touches need the uinput backend")
        case .padContact:
            throw .requestFailed("XTest has no touchpad device: the native touchpad needs the uinput backend")
        case .smoothScroll:
            throw .requestFailed("XTest cannot scroll by less than a click: smooth scrolling needs the uinput backend")
        case .pen:
            throw .requestFailed("XTest has no tablet: the pen tablet needs the uinput backend (without it pen mode drives the pointer)")
        }
    }

    /// Gives back every keycode `type` borrowed: each gets the keysyms it carried before, and the note on
    /// the root window goes. Nothing when none is borrowed.
    public func restoreKeymap() throws(X11Error) {
        guard !remapped.isEmpty else { return }
        // Past a failing one: what could not be put back stays noted (here and on the root window, for
        // the next start), the rest is given back.
        var firstError: X11Error?
        var left: [(code: KeyCode, keysyms: [UInt])] = []
        for entry in remapped {
            do throws(X11Error) { try display.setKeysyms(entry.keysyms, of: entry.code) } catch {
                if firstError == nil { firstError = error }
                left.append(entry)
            }
        }
        remapped = left
        if let firstError { throw firstError }
        try display.deleteRootProperty(try display.atom(Self.remappedProperty))
    }

    /// Types one symbol as a press and a release on its own key when the keymap has it unshifted;
    /// false (nothing done) when it has not.
    public func typeOnItsKey(_ keysym: KeySym) throws(X11Error) -> Bool {
        guard let code = try display.unshiftedKeyCode(for: keysym) else { return false }
        try display.fakeKey(code, pressed: true)
        try display.fakeKey(code, pressed: false)
        return true
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
        // The spares in turn, the one typed on longest ago first (see `XDisplay.spareKeyCodes`).
        let spares = try display.spareKeyCodes()
        guard !spares.isEmpty else {
            throw .requestFailed("no spare keycode to type \(keysym)")
        }
        let spare = spares[nextSpare % spares.count]
        nextSpare = (nextSpare + 1) % spares.count
        if !remapped.contains(where: { $0.code == spare }) {
            // What it carries now, noted here and on the root window before it changes (the server
            // handles this connection's requests in order, so the note is there before the change).
            remapped.append((spare, try display.keysyms(of: spare)))
            try display.setRootCardinals(try display.atom(Self.remappedProperty), Self.encode(remapped))
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
    ///
    /// Goes on past a failing request (a button that cannot be released does not keep the keys held),
    /// and throws the first failure at the end.
    public func releaseAll() throws(X11Error) -> [String] {
        var released: [String] = []
        var firstError: X11Error?
        func attempt(_ what: String, _ body: () throws(X11Error) -> Void) {
            do throws(X11Error) {
                try body()
                released.append(what)
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        for n in UInt8(1)...31 where pressedButtons & (UInt32(1) << UInt32(n)) != 0 {
            let button = PointerButton(rawValue: n)
            attempt(button.description) { () throws(X11Error) in try display.fakeButton(button, pressed: false) }
        }
        pressedButtons = 0
        for code in pressedKeys.reversed() {
            attempt("keycode \(code.rawValue)") { () throws(X11Error) in try display.fakeKey(code, pressed: false) }
        }
        pressedKeys.removeAll()
        if let fingers {
            do throws(X11Error) { released += try fingers.releaseAll() } catch { if firstError == nil { firstError = error } }
        }
        if !remapped.isEmpty {
            let restored = remapped.map { "keycode \($0.code.rawValue) restored" }
            do throws(X11Error) {
                try restoreKeymap()
                released += restored
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        do throws(X11Error) { try display.sync() } catch { if firstError == nil { firstError = error } }
        if let firstError { throw firstError }
        return released
    }

    /// The property's values for `entries`.
    static func encode(_ entries: [(code: KeyCode, keysyms: [UInt])]) -> [UInt32] {
        var values: [UInt32] = []
        for (code, keysyms) in entries {
            values.append(UInt32(code.rawValue))
            values.append(UInt32(keysyms.count))
            values += keysyms.map { UInt32(truncatingIfNeeded: $0) }
        }
        return values
    }

    /// The entries in the property's `values`; stops at the first malformed one.
    static func decode(_ values: [UInt32]) -> [(code: KeyCode, keysyms: [UInt])] {
        var entries: [(code: KeyCode, keysyms: [UInt])] = []
        var i = 0
        while i + 1 < values.count {
            let code = values[i], n = Int(values[i + 1])
            guard (8...255).contains(code), n <= 64, i + 2 + n <= values.count else { break }
            entries.append((KeyCode(rawValue: UInt8(code)), values[(i + 2)..<(i + 2 + n)].map { UInt($0) }))
            i += 2 + n
        }
        return entries
    }

    /// What a run that could not clean up (killed, crashed) left behind on this X server, undone: the
    /// buttons and keys the core XTest devices ("Virtual core XTEST pointer" and "... keyboard", which
    /// touchbridge's XTest requests drive) still hold are released, and the keycodes noted in
    /// `remappedProperty` get their keysyms back. Returns what it did, for the log. Call at start,
    /// before anything is pressed, beside `FingerPointers.removeLeftovers`.
    ///
    /// Only what the XTest devices themselves hold is released (their own device state, not the
    /// master's), so a key the user holds on a real keyboard is left alone. Note: like
    /// `removeLeftovers`, it would also release what another XTest client (another touchbridge,
    /// xdotool) holds at that moment.
    @discardableResult
    public static func recoverLeftovers(on display: XDisplay) throws(X11Error) -> [String] {
        var done: [String] = []
        if let version = try display.xinputVersion(), version.major >= 2 {
            let devices = try display.queryDevices()
            let xtest = devices.filter {
                ($0.use == .slavePointer || $0.use == .slaveKeyboard) && $0.name.hasPrefix("Virtual core XTEST ")
            }
            for info in xtest {
                let device = try display.openDevice(info.id)
                let held: (buttons: [UInt8], keys: [KeyCode])
                do { held = try display.heldDown(device) } catch { display.closeDevice(device); throw error }
                display.closeDevice(device)
                for n in held.buttons {
                    let button = PointerButton(rawValue: n)
                    try display.fakeButton(button, pressed: false)
                    done.append(button.description)
                }
                for code in held.keys {
                    try display.fakeKey(code, pressed: false)
                    done.append("keycode \(code.rawValue)")
                }
            }
        }
        let atom = try display.atom(remappedProperty)
        if let values = try display.rootCardinals(atom) {
            for (code, keysyms) in decode(values) {
                try display.setKeysyms(keysyms, of: code)
                done.append("keycode \(code.rawValue) restored")
            }
            try display.deleteRootProperty(atom)
        }
        try display.sync()
        return done
    }
}
