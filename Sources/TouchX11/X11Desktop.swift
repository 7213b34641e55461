import TouchCore
import TouchOutput

/// The X11 desktop: one X display's screen and RandR monitors, its XKB keymap, the overlay window, and an
/// empty keycode borrowed to type a character the keymap lacks (`KeycodeBorrower`). It owns the connection (`XDisplay`); the
/// XTest input output (`XTestOutput`), when it is the one chosen, works on that same connection and is
/// closed before it.
///
/// `close()` gives back the borrowed keycodes, removes the overlay and closes the connection, in that
/// order, whatever the reason; `deinit` asserts it ran.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public final class X11Desktop: Desktop {
    public let display: XDisplay
    /// Types on a borrowed keycode what no key produces (`typeLacking`), and gives the keycodes back. It
    /// presses nothing else.
    private let borrower: KeycodeBorrower
    private let overlayWindow: X11Overlay
    /// The live view's capture, on a connection of its own; nil with the view off (`--no-view`) or when
    /// the server lacks MIT-SHM or XDamage (`viewProblem` says why).
    public private(set) var capture: ScreenCapture?
    /// Why there is no capture when the view was asked for (for the log), else nil.
    public private(set) var viewProblem: String?
    private var closed = false
    /// Further people's own pointers for devices Xorg reads itself (uinput); nil without XInput 2.
    private lazy var personSeats: XInputSeats? = try? XInputSeats(display: display)

    /// What was found left over from an earlier run and cleaned up at `open`.
    public struct Leftovers {
        /// Master pointers named `touchbridge finger N`, removed.
        public var masters: [String]
        /// Buttons and keys the core XTest devices still held, released, and keycodes put back.
        public var undone: [String]
    }

    /// The names of the server's enabled input devices (XInput 2), nil when it cannot be asked.
    public func enabledDeviceNames() -> [String]? {
        try? display.queryDevices().filter(\.enabled).map(\.name)
    }

    /// Opens `name` (nil: `$DISPLAY`), removes what an earlier run that crashed left behind on this X
    /// server (its fingers' masters, what its XTest devices held, the keycodes it borrowed), and asks
    /// for screen, monitor and keymap changes.
    public static func open(name: String?) throws(X11Error) -> (X11Desktop, Leftovers) {
        let display = try XDisplay(name: name)
        do {
            // What a run that crashed or was killed left behind goes first: its masters (so `xinput
            // list` is as before), what its XTest devices still hold, the keycodes it remapped.
            let masters = try FingerPointers.removeLeftovers(on: display) + PersonPointers.removeLeftovers(on: display)
            let undone = try XTestOutput.recoverLeftovers(on: display) + KeycodeBorrower.recoverLeftovers(on: display)
            try display.selectScreenChangeInput()
            try display.selectKeymapChangeInput()
            return (X11Desktop(display: display), Leftovers(masters: masters, undone: undone))
        } catch {
            display.close()
            throw error
        }
    }

    private init(display: XDisplay) {
        self.display = display
        borrower = KeycodeBorrower(display: display)
        overlayWindow = X11Overlay(display: display)
    }

    /// Opens the live view's capture (`ScreenCapture`), a second connection to the same server, before
    /// the desktop's descriptors are watched; a server without MIT-SHM or XDamage gives no picture
    /// (`viewProblem` says why), the rest works as before.
    public func openView() {
        guard capture == nil, !closed else { return }
        do throws(X11Error) {
            capture = try ScreenCapture.open(name: display.name)
            viewProblem = nil
        } catch {
            viewProblem = "\(error)"
        }
    }

    deinit {
        assert(closed, "X11Desktop was not closed: call close() on every exit path")
    }

    public var description: String { "X display \(display.name)" }

    /// A master pointer and keyboard for each further person's uinput devices (XInput 2).
    public var seats: (any PersonSeats)? { closed ? nil : personSeats }

    public func screen() throws(OutputError) -> (screen: PixelRect, monitors: [Monitor]) {
        do throws(X11Error) {
            let size = try display.screenSize()
            return (PixelRect(x: 0, y: 0, width: size.width, height: size.height), try display.monitors())
        } catch {
            throw error.output
        }
    }

    /// The keyboard map now, by XKB: where each keysym is, for input outputs that press keys by evdev
    /// code. It is the map of the keyboard named `keyboardNamed` once X has it (X translates that
    /// keyboard's keys by its own map, which is the core keyboard's only if the desktop gave it the
    /// layout), else the core keyboard's. The keycodes borrowed for typing are left out while they are
    /// borrowed (they carry a typed symbol only for the moment); a keycode the user maps is in it. `canBorrow`: a keysym no key carries can be typed on a spare
    /// keycode (`typeLacking`).
    public func keymap(keyboardNamed name: String?) throws(OutputError) -> DesktopKeymap? {
        do throws(X11Error) {
            // A borrowed keycode the user mapped meanwhile is theirs, and in the keymap.
            try borrower.forgetTheUsers()
            let borrowed = borrower.codes
            var device: XInputDeviceInfo?
            if let name, let version = try display.xinputVersion(), version.major >= 2 {
                // The newest one, should another touchbridge's keyboard have the same name.
                device = try display.queryDevices().filter { $0.use == .slaveKeyboard && $0.enabled && $0.name == name }
                    .max { $0.id.rawValue < $1.id.rawValue }
            }
            let keymap = try display.keymap(of: device?.id, excluding: borrowed)
            return DesktopKeymap(keymap: keymap, source: device.map { "X device \($0.id) \"\($0.name)\"" } ?? "the core keyboard",
                                 ofNamedKeyboard: device != nil)
        } catch {
            throw error.output
        }
    }

    /// The connection's descriptor; none once closed (the one way `XConnectionNumber`'s wrapper fails).
    public var descriptors: [Int32] {
        do throws(X11Error) {
            return closed ? [] : [try display.connectionFileDescriptor()] + (capture?.descriptor.map { [$0] } ?? [])
        } catch {
            return []
        }
    }

    /// What the X server sent since the last call (the connection's descriptor was readable, or Xlib
    /// queued events while waiting for a reply). The overlay goes back on top of windows mapped above
    /// it, and draws again what it lost.
    public func readIncoming() -> DesktopChanges {
        var changes = DesktopChanges()
        guard !closed else { return changes }
        do throws(X11Error) {
            // Reading the monitors waits for replies, during which Xlib may queue further events (a
            // `--delmonitor` then `--setmonitor` comes as two): go on until none is left.
            repeat {
                let incoming = try display.drainIncoming()
                if incoming.windowsRestacked { try overlayWindow.window?.raiseIfShown() }
                if !incoming.overlayExposed.isEmpty { try overlayWindow.window?.exposed(incoming.overlayExposed) }
                if incoming.screenChanged { changes.screenChanged = true }
                if incoming.keymapChanged { changes.keymapChanged = true }
                if incoming.devicesChanged { changes.devicesChanged = true }
            } while display.hasQueuedEvents() && !display.isLost
        } catch {
            changes.errors.append(error.output)
        }
        if let capture {
            let (damaged, errors) = capture.readIncoming()
            changes.viewDamaged = damaged
            changes.errors += errors
        }
        return changes
    }

    public var overlay: (any OverlayOutput)? { overlayWindow }
    public var view: (any ViewCapture)? { capture }
    public var isLost: Bool { display.isLost }
    /// The view's connection too: a capture waits for replies (`XShmGetImage`), during which Xlib may
    /// queue its damage events, which will not make its descriptor readable again.
    public var hasQueuedEvents: Bool { !closed && (display.hasQueuedEvents() || capture?.display.hasQueuedEvents() == true) }

    public func takeErrors() -> (errors: [OutputError], dropped: Int) {
        let (errors, dropped) = display.takeErrors()
        return (errors.map { X11Error.protocolError($0).output }, dropped)
    }

    public func provokeError() throws(OutputError) {
        do throws(X11Error) {
            try display.fakeRejectedRequest()
            try display.flush()
        } catch {
            throw error.output
        }
    }

    /// Types `keysym` on an empty keycode borrowed and mapped to it for the moment (any Unicode
    /// character: keysym 0x01000000 + code point; see `KeycodeBorrower`); the keycode stays borrowed
    /// until `restoreKeymap` (the Bridge sends it when the source that typed goes) or `close`, unless
    /// the user maps it meanwhile. Nothing stays pressed.
    public func typeLacking(_ keysym: KeySym) throws(OutputError) {
        do throws(X11Error) { try borrower.type(keysym) } catch { throw error.output }
    }

    public func restoreKeymap() throws(OutputError) {
        do throws(X11Error) { try borrower.restore() } catch { throw error.output }
    }

    /// Gives back the borrowed keycodes, destroys the overlay and closes the connection, in that order.
    /// On a lost connection nothing can be sent: it only frees this side. Safe to call twice.
    public func close() -> [OutputError] {
        guard !closed else { return [] }
        closed = true
        var errors: [OutputError] = []
        if !display.isLost {
            do throws(X11Error) {
                try borrower.restore()
                try display.sync()
            } catch {
                errors.append(error.output)
            }
        }
        overlayWindow.destroy()
        capture?.close()
        capture = nil
        display.close()
        return errors
    }
}

/// The X11 desktop's overlay: the `Overlay` window, made on the first person's `.cover` and removed when
/// the last person who wanted it says `.remove` (each person's Bridge makes and removes it for its own
/// needs: with several people, one person's `.remove` takes away only what they show).
public final class X11Overlay: OverlayOutput {
    private let display: XDisplay
    /// The window while a Bridge wants one.
    public private(set) var window: Overlay?
    /// Who wants the window (their `.cover` came, their `.remove` not yet), a bit per person.
    private var wanted: UInt32 = 0

    init(display: XDisplay) {
        self.display = display
    }

    public var look: OverlayLook? { window.map { $0.composited ? .translucent : .shaped } }

    /// The window is made or moved first, then drawn (a circle is on screen before the click under it,
    /// which passes through); it goes last if asked and no one else wants it. A drawing that fails does
    /// not keep the rest from being drawn.
    public func perform(_ actions: [OutputAction], as person: Person) -> (errors: [OutputError], lookChanged: Bool) {
        var errors: [OutputError] = []
        var lookChanged = false
        var remove = false
        // Persons are numbered from 1 (People); one past 32 shares the last bit, and a 0, never made, the first.
        let bit = UInt32(1) << UInt32(min(max(Int(person.rawValue), 1), 32) - 1)
        for action in actions {
            guard case .overlay(let o) = action else { continue }
            if case .cover(let rect) = o {
                wanted |= bit
                remove = false
                do throws(X11Error) {
                    if let window {
                        try window.setRect(rect)
                    } else {
                        window = try Overlay(display: display, rect: rect)
                        lookChanged = true
                    }
                } catch {
                    errors.append(error.output)
                }
            } else if case .remove = o {
                remove = true
            }
        }
        if let window {
            let before = window.composited
            do throws(X11Error) { try window.perform(actions, as: person) } catch { errors.append(error.output) }
            if window.composited != before { lookChanged = true }
        }
        if remove {
            wanted &= ~bit
            if wanted == 0 {
                destroy()
            } else if let window {
                do throws(X11Error) { try window.forget(person) } catch { errors.append(error.output) }
            }
        }
        return (errors, lookChanged)
    }

    func destroy() {
        window?.destroy()
        window = nil
        wanted = 0
    }
}

extension X11Error {
    /// The error as the outputs report it: "X11: …", counted by kind.
    public var output: OutputError { OutputError(origin: "X11", message: description, kind: kindIndex) }
}
