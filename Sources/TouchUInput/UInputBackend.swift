// The uinput output backend: performs the core's OutputAction values on kernel input devices, so the
// display server's own input stack (libinput under Xorg or a Wayland compositor) sees real devices.
import TouchCore
import TouchOutput

/// The uinput input output: performs the Bridge's input actions on kernel input devices and
/// remembers what they hold, so every exit path can release it (and the kernel releases everything
/// anyway when the descriptors close, even after SIGKILL). The devices need no display server: they
/// outlive a lost X display under `--reconnect`, and run under Wayland or with no desktop at all.
///
/// - `moveBy`, `button`, `smoothScroll`: a relative pointer with hi-res wheels (buttons 4–7 become
///   one wheel notch each).
/// - `touch`: the touchscreen (made by `setScreen`, spanning the desktop's screen pixel for pixel), one
///   contact per finger: XI 2.2 touch sequences on X.
/// - `padContact`: the native touchpad, one contact per finger: libinput's taps, scrolling, gestures.
/// - `pen`: the pen tablet (made by `setScreen` with the touchscreen, spanning the desktop's screen pixel
///   for pixel): proximity with the pen or eraser tool, the tip, the barrel button, pressure and tilt.
/// - `key`, `type`: a keyboard: the key that produces the keysym in the desktop's keymap (`setKeymap`;
///   a US keyboard until then), with Shift and AltGr around it when its level needs them
///   (`KeyPresses`). A `type` of a keysym no key produces goes to the typist (the desktop: X borrows a
///   keycode, Wayland refuses), after this batch's key events so far are sent; so does
///   `restoreKeymap`. A `key` no key produces presses nothing and is a failure (the Bridge refuses
///   such chords before they get here).
/// - not performed, each a failure: `moveTo`, `extraPointerMove`, `extraPointerButton` (an absolute pointer and
///   XTest's MPX fingers: made only with real touches off, which the uinput backend never is).
///   Overlay actions are not input: skipped.
///
/// Further people (`perform(_:as:typist:)`): each gets devices of their own (`DeviceNames.person`: a
/// pointer, a keyboard, a touchscreen and the native touchpad when there is one), which the desktop's
/// `PersonSeats` puts on a pointer and keyboard of that person's own (an X master, a sway seat). Their
/// input waits until the server has them there, and is dropped meanwhile (a counted line): sent earlier
/// it would move everyone's pointer.
/// Not thread-safe: owned by one thread.
public final class UInputBackend: InputOutput {
    public let pointer: UInputPointer
    public let keyboard: UInputKeyboard
    /// The direct touch device (touchscreen mode with real touches), made by `setScreen`.
    public private(set) var touchscreen: UInputTouchscreen?
    /// The pen tablet (pen mode), made by `setScreen` with the touchscreen.
    public private(set) var penTablet: UInputPenTablet?
    /// The long side of the pen's glass, in mm (see `init`).
    private let penSurfaceMM: Double?
    /// Whether `setScreen` makes a touchscreen and a pen tablet.
    let wantsTouchscreen: Bool
    /// The native touchpad (touchpad mode with `nativeTouchpad`), when made.
    public let touchpad: UInputTouchpad?
    let path: String
    /// The devices' names (the main set's, or a further person's).
    public let names: DeviceNames
    /// Where further people's devices get a pointer of their own (`useSeats`, from the desktop); nil:
    /// one pointer for everyone.
    var seats: (any PersonSeats)?
    /// Each present further person's own devices.
    var persons: [Person: UInputBackend] = [:]
    /// Further people whose seat or devices could not be made: refused until they leave.
    var refused: Set<Person> = []
    /// The native touchpad's size in mm, when there is one (a further person's devices have one too).
    let touchpadMM: (width: Double, height: Double)?
    /// The screen the touchscreens span (`setScreen`), for a further person's made later.
    private(set) var screenSize: (width: Int32, height: Int32)?
    /// Touchpad slots with a contact down (bit = slot).
    public private(set) var padTouching: UInt16 = 0
    /// The pointer buttons held by us.
    public private(set) var pressedButtons = PressedButtons()
    /// The keys held by us, by keysym, with the modifiers added for them.
    public private(set) var keys = KeyPresses()
    /// Evdev key codes held by us (keys and the modifiers added for them), in press order.
    public var pressedKeys: [UInt16] { keys.codes }
    /// The desktop's keymap (`setKeymap`); nil until given: then a US keyboard (`Keymap.usFallback`).
    public private(set) var keymap: Keymap?
    /// The key events of one action, kept warm.
    private var keyEvents: [KeyPresses.Event] = []
    /// Touchscreen slots with a contact down (bit = slot).
    public private(set) var touching: UInt16 = 0

    public var name: String { "uinput" }

    /// Creates the pointer and keyboard; with `touchscreen`, a touchscreen once `setScreen` gives the
    /// screen's size; with `touchpadMM` (width, height of the phone's surface), a native touchpad of
    /// that size.
    /// `penSurfaceMM`: the long side, in mm, of the glass the pen draws on (the phone's or tablet's
    /// surface, `--surface-diagonal-mm` and `--surface-aspect`), which the pen tablet's axes span: their
    /// resolution (units per mm) is then the glass's, as libinput expects of a tablet. Nil: 4 pixels a mm.
    public init(touchscreen: Bool, touchpadMM: (width: Double, height: Double)?, penSurfaceMM: Double? = nil,
                path: String = uinputPath, names: DeviceNames = .main) throws(UInputError) {
        self.path = path
        self.names = names
        self.touchpadMM = touchpadMM
        self.penSurfaceMM = penSurfaceMM
        wantsTouchscreen = touchscreen
        pointer = try UInputPointer(name: names.pointer, path: path)
        keyboard = try UInputKeyboard(name: names.keyboard, path: path)
        if let mm = touchpadMM {
            touchpad = try UInputTouchpad(name: names.touchpad, widthMM: max(10, Int32(mm.width.rounded())),
                                          heightMM: max(10, Int32(mm.height.rounded())), path: path)
        } else {
            touchpad = nil
        }
        keyEvents.reserveCapacity(8)
    }

    deinit { _ = close() }

    public func setKeymap(_ keymap: Keymap) {
        self.keymap = keymap
        for output in persons.values { output.setKeymap(keymap) }
    }

    public var keyboardName: String? { keyboard.device.name }

    /// The keymap keys are pressed by now.
    private var currentKeymap: Keymap { keymap ?? Keymap.usFallback }

    public func setScreen(width: Int32, height: Int32) throws(OutputError) {
        guard wantsTouchscreen, width > 0, height > 0 else { return }
        screenSize = (width, height)
        var failure: OutputError?
        for output in persons.values {
            do throws(OutputError) { try output.setScreen(width: width, height: height) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
        if let t = touchscreen, t.width == width, t.height == height, penTablet != nil { return }
        // A new size needs new devices (the axes are fixed at creation): the old ones go, and with them
        // any touch or pen they held (the kernel ends them); later moves begin anew on the new devices.
        touchscreen?.device.close()
        touchscreen = nil
        touching = 0
        penTablet?.device.close()
        penTablet = nil
        do {
            touchscreen = try UInputTouchscreen(name: names.touchscreen, width: width, height: height, path: path)
            // A further person's devices have no pen tablet: its tools would reach X as devices of their
            // own at first proximity, on everyone's pointer.
            guard names.person == nil else { return }
            // The screen's long side spans the glass's long side (the monitor the pen maps onto is the
            // screen, or within it: the resolution is then the glass's or a little coarser).
            let perMM = penSurfaceMM.map { Int32((Double(max(width, height)) / max(10, $0)).rounded()) } ?? 4
            penTablet = try UInputPenTablet(name: names.pen, width: width, height: height, pixelsPerMM: max(1, perMM), path: path)
        } catch { throw error.output }
    }

    /// Performs every action, even after one fails (a press is never left without its release because
    /// an earlier call of the batch failed), then ends each changed device's frame, each even when
    /// another's fails. Returns the failures.
    public func perform(_ actions: [OutputAction], typist: any CharacterTypist) -> [OutputError] {
        var errors: [OutputError] = []
        performOnDevices(actions, typist: typist, errors: &errors)
        return errors
    }

    /// Performs `actions` in order; each device that changed ends its frame once, at the end. A failing
    /// call is noted in `errors` and the rest goes on.
    private func performOnDevices(_ actions: [OutputAction], typist: any CharacterTypist, errors: inout [OutputError]) {
        guard !actions.isEmpty else { return }
        func attempt(_ body: () throws(UInputError) -> Void) {
            do { try body() } catch { errors.append(error.output) }
        }
        func refuse(_ what: String) {
            errors.append(OutputError(origin: "uinput", message: what, kind: 5))
        }
        var pointerDirty = false, keyboardDirty = false, touchDirty = false, padDirty = false
        for action in actions {
            switch action {
            case .moveBy(let dx, let dy):
                attempt { () throws(UInputError) in try pointer.move(dx: dx, dy: dy) }
                pointerDirty = true
            case .button(let button, let pressed):
                attempt { () throws(UInputError) in try performButton(button, pressed: pressed) }
                pointerDirty = true
            case .key(let keysym, let pressed):
                keyEvents.removeAll(keepingCapacity: true)
                guard keys.key(keysym, pressed: pressed, keymap: currentKeymap, into: &keyEvents) else {
                    if pressed { refuse("no key on the keymap makes \(KeyNames.name(of: keysym)): not pressed") }
                    continue
                }
                for e in keyEvents {
                    attempt { () throws(UInputError) in try keyboard.key(e.code, pressed: e.pressed) }
                }
                keyboardDirty = true
            case .type(let keysym):
                keyEvents.removeAll(keepingCapacity: true)
                if !keys.holds(keysym), keys.key(keysym, pressed: true, keymap: currentKeymap, into: &keyEvents) {
                    _ = keys.key(keysym, pressed: false, keymap: currentKeymap, into: &keyEvents)
                    for e in keyEvents {
                        attempt { () throws(UInputError) in try keyboard.key(e.code, pressed: e.pressed) }
                    }
                    keyboardDirty = true
                } else {
                    // No key makes it (or its key is held down now, which a tap would release): the
                    // desktop types it (X borrows a keycode), after what this batch pressed so far.
                    if keyboardDirty {
                        attempt { () throws(UInputError) in try keyboard.sync() }
                        keyboardDirty = false
                    }
                    do throws(OutputError) { try typist.typeLacking(keysym) } catch { errors.append(error) }
                }
            case .restoreKeymap:
                do throws(OutputError) { try typist.restoreKeymap() } catch { errors.append(error) }
            case .touch(let slot, let phase, let at):
                guard let touchscreen, slot < 10 else { continue }
                let bit = UInt16(1) << UInt16(slot)
                switch phase {
                case .began, .moved:
                    attempt { () throws(UInputError) in try touchscreen.touch(slot: Int(slot), x: at.x, y: at.y) }
                    touching |= bit
                case .ended, .cancelled:
                    attempt { () throws(UInputError) in try touchscreen.lift(slot: Int(slot)) }
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
                    attempt { () throws(UInputError) in try touchpad.touch(slot: Int(slot), x: x, y: y) }
                    padTouching |= bit
                case .ended(let slot), .cancelled(let slot):
                    attempt { () throws(UInputError) in try touchpad.lift(slot: Int(slot)) }
                    padTouching &= ~bit
                }
                padDirty = true
            case .smoothScroll(let dx, let dy):
                // The kernel counts up and right as positive; the action counts down like button 5.
                attempt { () throws(UInputError) in try pointer.scroll(vertical: -dy, horizontal: dx) }
                pointerDirty = true
            case .pen(let output):
                guard let penTablet else {
                    if names.person != nil, case .at = output { refuse("\(names.pointer): a further person's pen has no tablet: not performed") }
                    continue
                }
                switch output {
                case .at(let frame): attempt { () throws(UInputError) in try penTablet.set(frame) }
                case .away: attempt { () throws(UInputError) in try penTablet.leave() }
                }
            case .overlay:
                continue  // drawing, not input: the desktop's overlay
            case .moveTo, .extraPointerMove, .extraPointerButton:
                refuse("no absolute pointer and no extra X pointers on the uinput backend: \(action) not performed")
            }
        }
        // Each frame is ended even when another device's write failed: its presses and releases go out.
        if pointerDirty { attempt { () throws(UInputError) in try pointer.sync() } }
        if keyboardDirty { attempt { () throws(UInputError) in try keyboard.sync() } }
        if touchDirty, let touchscreen { attempt { () throws(UInputError) in try touchscreen.sync() } }
        if padDirty, let touchpad { attempt { () throws(UInputError) in try touchpad.sync() } }
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
        pressedButtons.record(button, pressed: pressed)
    }

    public var held: [String] {
        var held: [String] = []
        if touching != 0 { held.append("touches 0x\(String(touching, radix: 16))") }
        if let pen = penTablet?.current { held.append("the pen (\(pen))") }
        if padTouching != 0 { held.append("touchpad contacts 0x\(String(padTouching, radix: 16))") }
        for button in pressedButtons.all { held.append(button.description) }
        for code in pressedKeys { held.append("evdev key \(code)") }
        return held
    }

    /// Releases everything, each device on its own: one that fails does not keep the others from
    /// releasing. Throws the first failure, once all is done.
    public func releaseAll() -> (released: [String], errors: [OutputError]) {
        var first: UInputError?
        let released = releaseEverything(firstError: &first)
        return (released, first.map { [$0.output] } ?? [])
    }

    /// Lifts every touch, releases every button and key we hold. Returns what it released; the first
    /// failing call is noted in `firstError` and the rest goes on. What failed to be released is
    /// forgotten all the same: the device is broken, and destroying it (`close`) lets the kernel
    /// release what it holds.
    private func releaseEverything(firstError: inout UInputError?) -> [String] {
        func attempt(_ body: () throws(UInputError) -> Void) {
            do { try body() } catch { if firstError == nil { firstError = error } }
        }
        let released = held
        if touching != 0, let touchscreen {
            attempt { () throws(UInputError) in try touchscreen.liftAll() }
            touching = 0
        }
        if padTouching != 0, let touchpad {
            attempt { () throws(UInputError) in try touchpad.liftAll() }
            padTouching = 0
        }
        if let penTablet, penTablet.current != nil {
            attempt { () throws(UInputError) in try penTablet.leave() }
        }
        if !pressedButtons.isEmpty {
            for button in pressedButtons.all {
                attempt { () throws(UInputError) in try performButton(button, pressed: false) }
            }
            pressedButtons.removeAll()
            attempt { () throws(UInputError) in try pointer.sync() }
        }
        if !keys.held.isEmpty {
            keyEvents.removeAll(keepingCapacity: true)
            keys.releaseAll(into: &keyEvents)
            for e in keyEvents { attempt { () throws(UInputError) in try keyboard.key(e.code, pressed: e.pressed) } }
            attempt { () throws(UInputError) in try keyboard.sync() }
        }
        return released
    }

    /// Releases what is held, then destroys every device (`UI_DEV_DESTROY`); the kernel releases
    /// whatever they still held. Idempotent.
    public func close() -> (removed: [String], errors: [OutputError]) {
        guard !closed else { return ([], []) }
        var (people, errors) = peopleLeave()
        errors += releaseAll().errors
        closed = true
        var removed: [String] = []
        if let touchscreen { removed.append(touchscreen.device.name) }
        if let penTablet { removed.append(penTablet.device.name) }
        if let touchpad { removed.append(touchpad.device.name) }
        removed += [pointer.device.name, keyboard.device.name]
        touchscreen?.device.close()
        penTablet?.device.close()
        touchpad?.device.close()
        pointer.device.close()
        keyboard.device.close()
        return (people + removed.map { "\"\($0)\"" }, errors)
    }
    private(set) var closed = false
}

extension UInputError {
    /// The error as the outputs report it: "uinput: …", one bounded log reason.
    public var output: OutputError { OutputError(origin: "uinput", message: description, kind: 5) }
}
