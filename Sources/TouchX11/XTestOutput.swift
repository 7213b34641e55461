import TouchCore
import TouchOutput

/// The XTest input output: performs the Bridge's input actions on an X display through XTest, and with
/// `--multitouch` drives the extra fingers through their own XInput2 master pointers. It works on the
/// X11 desktop's connection and so lives no longer than it: made after the desktop, closed before it.
/// It remembers what it has pressed so that every exit path can release it.
///
/// One switch over the action list: each action goes straight to its `XDisplay` request (what is
/// pressed is recorded only once the server has been asked to press it), and the batch is flushed
/// once: a batch of pointer, button and key requests only through xcb (`XDisplay.flushXTest`, which
/// sends without reading the connection), any other through Xlib's `XFlush`. A request that fails does not stop the batch: every action is tried, so the releases after a
/// failed press (a chord's modifiers, a click's button) still reach the server, and the flush always
/// happens.
///
/// Keys by level: a `.key` or `.type` is pressed on the key that produces its keysym in the desktop's
/// keymap (`setKeymap`, the same reading of X's map the uinput keyboard presses by), with Shift and/or
/// AltGr held around it when its level needs them (`KeyPresses`), so `1` on fr is Shift and the `&`
/// key. A `.type` of a character no key produces goes to the typist (the X11 desktop borrows an empty
/// keycode for it, `KeycodeBorrower`, on this same connection, so the order of the batch is kept); so
/// does `.restoreKeymap`. A key press whose keysym no key carries presses nothing and is not recorded
/// as held. It performs no touch, touchpad contact, smooth scroll or pen (those are uinput's): each is
/// a counted failure.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public final class XTestOutput: InputOutput {
    /// The X server, as far as XTest input goes (`XDisplay`; a test's stand-in in TouchX11Tests).
    private let display: any XTestRequests
    /// The extra fingers' own pointers, when multi-pointer output is on (`extraPointerMove`/`extraPointerButton`
    /// actions need it; without it they fail).
    private let fingers: FingerPointers?
    /// Nil: the core XTest devices (person 1). Else a further person's own master's XTest slaves: this
    /// output is that person's, made by the main one (`perform(_:as:typist:)`).
    private let devices: PersonDevices?
    /// The further people's masters (nil: no XInput 2), and each present person's own output.
    private let personPointers: PersonPointers?
    private var persons: [Person: XTestOutput] = [:]
    private var closed = false
    /// The pointer buttons we hold down.
    public private(set) var pressedButtons = PressedButtons()
    /// The keys we hold down, by keycode (8...255), in press order.
    public private(set) var pressedKeys: [KeyCode] = []
    /// The keys held for the `.key` actions by keysym, with the Shift and AltGr their levels added
    /// (`KeyPresses`, by `keymap`); `pressedKeys` is what the server was asked to hold.
    private var keys = KeyPresses()
    /// The key events of one `.key` action (reused).
    private var keyEvents: [KeyPresses.Event] = []
    /// The desktop's keymap (X's core keyboard map, `XDisplay.keymap`), by which a `.key` is pressed on
    /// the key that produces its keysym with the modifiers its level needs. Nil until given: a key is
    /// then pressed on the first keycode that carries its keysym, at whatever level.
    private var keymap: Keymap?


    /// Works on `desktop`'s connection; with `multitouch`, gets ready to make the fingers' masters.
    public convenience init(desktop: X11Desktop, multitouch: Bool) throws(OutputError) {
        let fingers: FingerPointers?
        do throws(X11Error) {
            fingers = multitouch ? try FingerPointers(display: desktop.display) : nil
        } catch {
            throw error.output
        }
        self.init(display: desktop.display, fingers: fingers, people: try? PersonPointers(display: desktop.display))
    }

    /// Works on `display` (the benchmark's own connection, or a test's stand-in), with `fingers` when
    /// multi-pointer output is on.
    public init(display: any XTestRequests, fingers: FingerPointers? = nil, people: PersonPointers? = nil) {
        self.display = display
        self.fingers = fingers
        self.devices = nil
        self.personPointers = people
        keyEvents.reserveCapacity(8)
    }

    /// A further person's output, on their own devices.
    private init(display: any XTestRequests, devices: PersonDevices, keymap: Keymap?) {
        self.display = display
        self.fingers = nil
        self.devices = devices
        self.personPointers = nil
        self.keymap = keymap
        keyEvents.reserveCapacity(8)
    }

    public var name: String { "xtest" }

    public var keyboardName: String? { nil }

    public func setScreen(width: Int32, height: Int32) throws(OutputError) {}

    /// The desktop's keymap: where each keysym is and which modifiers its level needs.
    public func setKeymap(_ keymap: Keymap) {
        self.keymap = keymap
        for output in persons.values { output.setKeymap(keymap) }
    }

    public func perform(_ actions: [OutputAction], typist: any CharacterTypist) -> [OutputError] {
        var errors: [OutputError] = []
        guard !actions.isEmpty, !closed else { return errors }
        // Whether the batch asked for XTest input requests only (xcb's, see `XDisplay.flushXTest`): the
        // pointer, its buttons, keys. The typist's and the fingers' requests are Xlib's.
        var xtestOnly = devices == nil, requests = false
        for action in actions {
            switch action {
            case .moveTo, .moveBy, .button, .key: requests = true
            case .overlay: break
            default: xtestOnly = false
            }
            do throws(X11Error) {
                try perform(action, typist: typist, errors: &errors)
            } catch {
                errors.append(error.output)
            }
        }
        do throws(X11Error) {
            if xtestOnly && requests { try display.flushXTest() } else { try display.flush() }
        } catch {
            errors.append(error.output)
        }
        return errors
    }

    /// One action, not flushed; what it pressed is recorded only once the server has been asked to
    /// press it. The typist's failures go to `errors`.
    private func perform(_ action: OutputAction, typist: any CharacterTypist, errors: inout [OutputError]) throws(X11Error) {
        switch action {
        case .moveTo(let point):
            if let devices { try display.fakeDeviceMotion(devices.pointer, to: point) } else { try display.fakeMotion(to: point) }
        case .moveBy(let dx, let dy):
            if let devices { try display.fakeDeviceMotion(devices.pointer, dx: dx, dy: dy) } else { try display.fakeRelativeMotion(dx: dx, dy: dy) }
        case .button(let button, let pressed):
            // A release is recorded first: even if the request fails, nothing is left to release later.
            if !pressed { pressedButtons.record(button, pressed: false) }
            try pressButton(button, pressed: pressed)
            if pressed { pressedButtons.record(button, pressed: true) }
        case .key(let keysym, let pressed):
            if let keymap, pressed || keys.holds(keysym) {
                try key(keysym, pressed: pressed, keymap: keymap)
            } else {
                let code = try display.keyCode(for: keysym)
                if !pressed { pressedKeys.removeAll { $0 == code } }
                try pressKey(code, pressed: pressed)
                if pressed && !pressedKeys.contains(code) { pressedKeys.append(code) }
            }
        case .type(let keysym):
            if !(try typeOnItsKey(keysym)) {
                do throws(OutputError) { try typist.typeLacking(keysym) } catch { errors.append(error) }
            }
        case .restoreKeymap:
            // The borrowed keycodes are the desktop's (`KeycodeBorrower`).
            do throws(OutputError) { try typist.restoreKeymap() } catch { errors.append(error) }
        case .extraPointerMove(let finger, let point):
            guard let fingers else { throw .requestFailed("\(finger): multi-pointer output is off") }
            try fingers.move(finger, to: point)
        case .extraPointerButton(let finger, let button, let pressed):
            guard let fingers else { throw .requestFailed("\(finger): multi-pointer output is off") }
            try fingers.button(finger, button, pressed: pressed)
        case .overlay:
            break  // drawing, not input: the desktop's overlay
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

    /// A button of this output's pointer: the core one, or the person's master's.
    private func pressButton(_ button: PointerButton, pressed: Bool) throws(X11Error) {
        if let devices { try display.fakeDeviceButton(devices.pointer, button, pressed: pressed) } else { try display.fakeButton(button, pressed: pressed) }
    }

    /// A key of this output's keyboard: the core one, or the person's master's.
    private func pressKey(_ code: KeyCode, pressed: Bool) throws(X11Error) {
        if let devices { try display.fakeDeviceKey(devices.keyboard, code, pressed: pressed) } else { try display.fakeKey(code, pressed: pressed) }
    }

    /// Presses or releases `keysym` by `keymap` (`KeyPresses`): the key that produces it, with Shift
    /// and/or AltGr pressed just before when its level needs them and no key held holds them already
    /// (the chord's own `Shift_L`, the page's sticky modifiers), and let go after it. Every event is
    /// tried even if one fails (a release recorded before it is asked for, a press once asked), so
    /// that what was pressed is always in `pressedKeys` for `releaseAll`; the first failure is thrown.
    /// A keysym no key of `keymap` produces is refused: nothing is pressed.
    private func key(_ keysym: KeySym, pressed: Bool, keymap: Keymap) throws(X11Error) {
        keyEvents.removeAll(keepingCapacity: true)
        guard keys.key(keysym, pressed: pressed, keymap: keymap, into: &keyEvents) else {
            throw .requestFailed("no key makes \(keysym) on this keymap: nothing pressed")
        }
        var firstError: X11Error?
        for event in keyEvents {
            let code = KeyCode(rawValue: UInt8(clamping: Int(event.code) + 8))
            if !event.pressed { pressedKeys.removeAll { $0 == code } }
            do throws(X11Error) {
                try pressKey(code, pressed: event.pressed)
                if event.pressed && !pressedKeys.contains(code) { pressedKeys.append(code) }
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }

    /// Types one symbol as a press and a release on the key that produces it, by `keymap`, with the
    /// Shift and AltGr its level needs around it (released in the same call); false (nothing done)
    /// when no key produces it, or no keymap is known: the desktop's borrowed keycode types it then.
    /// Nothing stays pressed, even if a request fails midway.
    func typeOnItsKey(_ keysym: KeySym) throws(X11Error) -> Bool {
        guard let keymap, keymap.canPress(keysym), !keys.holds(keysym) else { return false }
        var firstError: X11Error?
        do throws(X11Error) { try key(keysym, pressed: true, keymap: keymap) } catch { firstError = error }
        do throws(X11Error) { try key(keysym, pressed: false, keymap: keymap) } catch { if firstError == nil { firstError = error } }
        if let firstError { throw firstError }
        return true
    }

    /// What is held down now (buttons, keys, the fingers' buttons), in words.
    public var held: [String] {
        var held: [String] = []
        for button in pressedButtons.all { held.append(button.description) }
        for code in pressedKeys { held.append("keycode \(code.rawValue)") }
        if fingers?.holdsAnything == true { held.append("the fingers' buttons") }
        for (person, output) in persons.sorted(by: { $0.key < $1.key }) { held += output.held.map { "\(person) \($0)" } }
        return held
    }

    // MARK: the further people

    public func perform(_ actions: [OutputAction], as person: Person, typist: any CharacterTypist) -> [OutputError] {
        guard !actions.isEmpty, !closed, !display.isLost else { return [] }
        if let output = persons[person] { return output.perform(actions, typist: typist) }
        guard let personPointers else {
            return [X11Error.missingExtension("XInputExtension 2 (a pointer for each person)").output]
        }
        do throws(X11Error) {
            let output = XTestOutput(display: display, devices: try personPointers.make(person), keymap: keymap)
            persons[person] = output
            return output.perform(actions, typist: typist)
        } catch {
            return [error.output]
        }
    }

    public func personLeft(_ person: Person) -> (removed: [String], errors: [OutputError]) {
        guard let output = persons.removeValue(forKey: person), let devices = output.devices, let personPointers else { return ([], []) }
        var errors = output.releaseAll().errors
        output.closed = true
        guard !display.isLost else {
            try? personPointers.remove(devices, masterGone: true)
            return ([], errors)
        }
        do throws(X11Error) {
            try personPointers.remove(devices)
            return (["\"\(person.masterName)\""], errors)
        } catch {
            errors.append(error.output)
            return ([], errors)
        }
    }

    public func devicesChanged() -> [String] {
        guard !persons.isEmpty, let personPointers, !closed, !display.isLost else { return [] }
        var notes: [String] = []
        for (person, output) in persons.sorted(by: { $0.key < $1.key }) {
            guard let devices = output.devices, (try? personPointers.exists(devices)) == false else { continue }
            persons[person] = nil
            output.closed = true
            try? personPointers.remove(devices, masterGone: true)
            notes.append("\(person)'s pointer \"\(person.masterName)\" was removed by someone else: a new one is made at their next touch")
        }
        return notes
    }

    /// Releases every button and key still held, and the fingers' buttons. On a lost connection
    /// nothing can be sent: nothing is released.
    public func releaseAll() -> (released: [String], errors: [OutputError]) {
        guard !closed, !display.isLost else { return ([], []) }
        do throws(X11Error) { return (try releaseHeld(), []) } catch { return ([], [error.output]) }
    }

    /// Releases every button and key we hold (keys last pressed first; then the extra fingers'
    /// buttons), and waits until the server has processed the releases. Called on every exit path
    /// before anything else. Returns what it released, for the log.
    ///
    /// Goes on past a failing request (a button that cannot be released does not keep the keys held),
    /// and throws the first failure at the end.
    private func releaseHeld() throws(X11Error) -> [String] {
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
        for button in pressedButtons.all {
            attempt(button.description) { () throws(X11Error) in try pressButton(button, pressed: false) }
        }
        pressedButtons.removeAll()
        for code in pressedKeys.reversed() {
            attempt("keycode \(code.rawValue)") { () throws(X11Error) in try pressKey(code, pressed: false) }
        }
        pressedKeys.removeAll()
        keyEvents.removeAll(keepingCapacity: true)
        keys.releaseAll(into: &keyEvents)  // what it held is in pressedKeys, released above
        keyEvents.removeAll(keepingCapacity: true)
        if let fingers {
            do throws(X11Error) { released += try fingers.releaseAll() } catch { if firstError == nil { firstError = error } }
        }
        for (person, output) in persons.sorted(by: { $0.key < $1.key }) {
            do throws(X11Error) { released += try output.releaseHeld().map { "\(person) \($0)" } } catch { if firstError == nil { firstError = error } }
        }
        do throws(X11Error) { try display.sync() } catch { if firstError == nil { firstError = error } }
        if let firstError { throw firstError }
        return released
    }

    /// Releases what is held and removes the fingers' masters. Safe to call twice.
    public func close() -> (removed: [String], errors: [OutputError]) {
        guard !closed else { return ([], []) }
        var errors = releaseAll().errors
        closed = true
        var removed: [String] = []
        if let fingers, !display.isLost {
            do throws(X11Error) { removed = try fingers.removeAll().map { "\"\($0)\"" } } catch { errors.append(error.output) }
        }
        for person in persons.keys.sorted() {
            let (gone, failed) = personLeft(person)
            removed += gone
            errors += failed
        }
        return (removed, errors)
    }

    /// What a run that could not clean up (killed, crashed) left behind on this X server, undone: the
    /// buttons and keys the core XTest devices ("Virtual core XTEST pointer" and "... keyboard", which
    /// touchbridge's XTest requests drive) still hold are released (the keycodes it borrowed are
    /// `KeycodeBorrower.recoverLeftovers`'). Returns what it did, for the log. Call at start,
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
        try display.sync()
        return done
    }
}
