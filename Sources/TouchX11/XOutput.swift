import TouchCore

/// The XTest output backend: performs the Bridge's actions on one X display.
///
/// It owns, and so orders, every X resource touchbridge makes: what is pressed (`InputInjector`), the
/// extra fingers' master pointers (`FingerPointers`), the overlay window (`Overlay`, made and removed
/// as the Bridge asks with `.overlay(.cover)` and `.overlay(.remove)`) and the connection
/// (`XDisplay`). `close()` releases them in that order, whatever the reason; `deinit` asserts it ran.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public final class XOutput {
    public let display: XDisplay
    private let injector: InputInjector
    private let fingers: FingerPointers?
    private var overlay: Overlay?
    private var closed = false
    /// The backend's input devices when they are not XTest (`--backend uinput`): they take the input
    /// actions they can perform, XTest the rest (see `InputDevices`). Not owned: they outlive a lost
    /// display under `--reconnect`; `close()` releases what they hold, their owner destroys them.
    public var devices: (any InputDevices)?
    /// The actions of one `perform` for the devices and for XTest, kept warm (no allocation per packet).
    private var forDevices: [OutputAction] = []
    private var forXTest: [OutputAction] = []

    /// What `perform` and `readIncoming` report besides their effects.
    public struct Report {
        /// Requests that failed (performing went on with the next action).
        public var errors: [X11Error] = []
        /// Calls on the backend's input devices that failed (`devices`), with the backend's name.
        public var deviceErrors: [String] = []
        /// The overlay was made, or a compositor started or stopped: its look changed (see `overlayLook`).
        public var overlayLookChanged = false
        /// The keyboard map changed (`readIncoming`): read it again with `keymap()`.
        public var keymapChanged = false
        /// A device came, went, or was enabled or disabled (`readIncoming`): the keyboard `keymap()`
        /// looks for may be there now.
        public var devicesChanged = false
    }

    /// What was found left over from an earlier run and cleaned up at `open`.
    public struct Leftovers {
        /// Master pointers named `touchbridge finger N`, removed.
        public var masters: [String]
        /// Buttons and keys the core XTest devices still held, released, and keycodes put back.
        public var undone: [String]
    }

    /// Opens `name` (nil: `$DISPLAY`), removes what an earlier run that crashed left behind, asks for
    /// screen and monitor changes, and with `multitouch` gets ready to make the fingers' masters.
    public static func open(name: String?, multitouch: Bool) throws(X11Error) -> (XOutput, Leftovers) {
        let display = try XDisplay(name: name)
        do {
            // What a run that crashed or was killed left behind goes first: its masters (so `xinput
            // list` is as before), what its XTest devices still hold, the keycodes it remapped.
            let masters = try FingerPointers.removeLeftovers(on: display)
            let undone = try InputInjector.recoverLeftovers(on: display)
            try display.selectScreenChangeInput()
            try display.selectKeymapChangeInput()
            let fingers = multitouch ? try FingerPointers(display: display) : nil
            return (XOutput(display: display, fingers: fingers), Leftovers(masters: masters, undone: undone))
        } catch {
            display.close()
            throw error
        }
    }

    private init(display: XDisplay, fingers: FingerPointers?) {
        self.display = display
        self.fingers = fingers
        self.injector = InputInjector(display: display, fingers: fingers)
    }

    deinit {
        assert(closed, "XOutput was not closed: call close() on every exit path")
    }

    /// The screen's rectangle and its RandR monitors, now.
    public func screen() throws(X11Error) -> (screen: PixelRect, monitors: [Monitor]) {
        let size = try display.screenSize()
        return (PixelRect(x: 0, y: 0, width: size.width, height: size.height), try display.monitors())
    }

    /// Whether the connection to the X server broke (the server went away). Nothing more can be done
    /// on it; `close()` still frees what is left on this side.
    public var isLost: Bool { display.isLost }

    /// What is held down now (buttons, keys, the fingers' buttons, the devices' touches), in words.
    public var held: [String] {
        var held: [String] = devices?.held ?? []
        for n in UInt8(1)...31 where injector.pressedButtons & (UInt32(1) << UInt32(n)) != 0 {
            held.append(PointerButton(rawValue: n).description)
        }
        for code in injector.pressedKeys { held.append("keycode \(code.rawValue)") }
        if fingers?.holdsAnything == true { held.append("the fingers' buttons") }
        return held
    }

    /// How the overlay draws, when there is one: translucent with a compositor, cut to shape without.
    public var overlayLook: Overlay.Look? { overlay.map { $0.composited ? .translucent : .shaped } }

    /// Performs `actions` in order: the overlay window is made or moved first, then drawn (a circle is
    /// on screen before the click under it, which passes through), then the input is injected and
    /// flushed; the overlay goes last if asked. A drawing that fails does not keep the input from X.
    public func perform(_ actions: [OutputAction]) -> Report {
        var report = Report()
        guard !actions.isEmpty, !closed else { return report }
        var remove = false
        for action in actions {
            guard case .overlay(let o) = action else { continue }
            if case .cover(let rect) = o {
                do {
                    if let overlay {
                        try overlay.setRect(rect)
                    } else {
                        overlay = try Overlay(display: display, rect: rect)
                        report.overlayLookChanged = true
                    }
                } catch {
                    report.errors.append(error)
                }
            } else if case .remove = o {
                remove = true
            }
        }
        if let overlay {
            let before = overlay.composited
            do { try overlay.perform(actions) } catch { report.errors.append(error) }
            if overlay.composited != before { report.overlayLookChanged = true }
        }
        if let devices {
            // Each device ends its frame once and XTest flushes once; the two reach the server by
            // different paths, so only each one's own order is kept (no mode mixes them in one packet
            // but keys the devices lack, which go to XTest).
            forDevices.removeAll(keepingCapacity: true)
            forXTest.removeAll(keepingCapacity: true)
            for action in actions {
                if case .overlay = action { continue }
                if devices.takes(action) { forDevices.append(action) } else { forXTest.append(action) }
            }
            do { try devices.perform(forDevices) } catch { report.deviceErrors.append("\(devices.name): \(error)") }
            if !forXTest.isEmpty { report.errors += injector.perform(forXTest) }
        } else {
            report.errors += injector.perform(actions)
        }
        if remove {
            overlay?.destroy()
            overlay = nil
        }
        return report
    }

    /// What the X server sent since the last call (the connection's descriptor was readable, or Xlib
    /// queued events while waiting for a reply): whether the screen or its monitors changed. The overlay
    /// goes back on top of windows mapped above it. A change of the keyboard map, or of the devices, is
    /// in the report (`keymapChanged`, `devicesChanged`).
    public func readIncoming() -> (screenChanged: Bool, report: Report) {
        var report = Report()
        var changed = false
        do {
            // Reading the monitors waits for replies, during which Xlib may queue further events (a
            // `--delmonitor` then `--setmonitor` comes as two): go on until none is left.
            repeat {
                let incoming = try display.drainIncoming()
                if incoming.windowsRestacked { try overlay?.raiseIfShown() }
                if !incoming.overlayExposed.isEmpty { try overlay?.exposed(incoming.overlayExposed) }
                changed = changed || incoming.screenChanged
                if incoming.keymapChanged { report.keymapChanged = true }
                if incoming.devicesChanged { report.devicesChanged = true }
            } while display.hasQueuedEvents() && !display.isLost
        } catch {
            report.errors.append(error)
        }
        return (changed, report)
    }

    /// The keyboard map now, by XKB: where each keysym is, for input devices that press keys by evdev
    /// code. It is the map of the keyboard named `keyboardNamed` once X has it (X translates that
    /// keyboard's keys by its own map, which is the core keyboard's only if the desktop gave it the
    /// layout), else the core keyboard's; `device` says which. The keycodes borrowed for typing are
    /// left out (they carry a typed symbol only for the moment). `canBorrow`: a keysym no key carries
    /// can be typed on a spare keycode.
    public func keymap(keyboardNamed name: String? = nil) throws(X11Error) -> (keymap: Keymap, device: XInputDeviceInfo?) {
        var borrowed = Set(injector.remapped.map(\.code))
        if let spare = try display.spareKeyCode() { borrowed.insert(spare) }
        var device: XInputDeviceInfo?
        if let name, let version = try display.xinputVersion(), version.major >= 2 {
            // The newest one, should another touchbridge's keyboard have the same name.
            device = try display.queryDevices().filter { $0.use == .slaveKeyboard && $0.enabled && $0.name == name }
                .max { $0.id.rawValue < $1.id.rawValue }
        }
        return (try display.keymap(of: device?.id, excluding: borrowed), device)
    }

    /// Whether Xlib holds events nobody has read (see `XDisplay.hasQueuedEvents`).
    public var hasQueuedEvents: Bool { display.hasQueuedEvents() }

    /// Protocol errors the server reported since the last call.
    public func takeErrors() -> (errors: [XProtocolError], dropped: Int) { display.takeErrors() }

    /// What `close` did, for the log.
    public struct Closing {
        public var released: [String] = []
        public var removedMasters: [String] = []
        public var errors: [X11Error] = []
        public var deviceErrors: [String] = []
    }

    /// Releases every button and key still held, removes the fingers' masters, destroys the overlay
    /// and closes the connection, in that order. On a lost connection nothing can be sent: it only
    /// frees this side. Safe to call twice.
    public func close() -> Closing {
        var closing = Closing()
        guard !closed else { return closing }
        closed = true
        if let devices {
            // Not on X: released even when the display is lost.
            do { closing.released = try devices.releaseAll() } catch { closing.deviceErrors.append("\(devices.name): \(error)") }
        }
        if !display.isLost {
            do { closing.released += try injector.releaseAll() } catch { closing.errors.append(error) }
            if let fingers {
                do { closing.removedMasters = try fingers.removeAll() } catch { closing.errors.append(error) }
            }
        }
        overlay?.destroy()
        overlay = nil
        display.close()
        return closing
    }
}

extension Overlay {
    /// How the overlay draws.
    public enum Look: Sendable {
        /// A compositor blends it: translucent drawing.
        case translucent
        /// No compositor: the window is cut to what it draws.
        case shaped
    }
}
