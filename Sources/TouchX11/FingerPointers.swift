import TouchCore

extension FingerPointer {
    /// What every touchbridge master's name starts with; a master so named that is left over from an
    /// earlier run (a crash) is removed at the next start.
    public static let masterNamePrefix = "touchbridge finger "

    /// The name of its XInput2 master (`touchbridge finger N`); X adds ` pointer` and ` keyboard`.
    public var masterName: String { Self.masterNamePrefix + String(rawValue) }
}

/// The extra fingers' X pointers for multi-pointer output: one XInput2 master pointer per finger 2...10,
/// named `touchbridge finger N`, driven through its XTest slave.
///
/// Why masters: XTest cannot make XI 2.2 touch events (the server's XTest takes only core and XI 1
/// key/button/motion events), so each extra finger becomes a pointer of its own, and its presses and
/// moves reach clients as XI2 events from its own device id (the master, with the master's XTest slave
/// as source).
///
/// Lifecycle: a finger's master is created the first time that finger is used, then kept and reused;
/// `removeAll()` removes every one (on every exit path: masters outlive the client that made them);
/// `removeLeftovers(on:)` at start removes masters of that name a crashed run left behind.
///
/// Not thread-safe: owned by the same single thread as the `XDisplay`.
public final class FingerPointers {
    public let display: XDisplay

    private struct Finger {
        /// The master pointer (its paired keyboard goes with it).
        let master: DeviceID
        /// The master's XTest slave, opened for `XTestFakeDevice*`.
        let slave: OpenedDevice
        /// The buttons held down by us on this pointer.
        var pressedButtons = PressedButtons()
    }

    /// Index = finger number (2...10); entries 0 and 1 stay nil. Allocated once.
    private var fingers: [Finger?] = Array(repeating: nil, count: Int(FingerPointer.last.rawValue) + 1)
    /// Where slaves of a removed master are returned: the virtual core pointer and keyboard.
    private let corePointer: DeviceID
    private let coreKeyboard: DeviceID

    /// Multi-pointer output on `display`. Checks that the server speaks XInput 2.
    ///
    /// The corresponding C functions are those of `XDisplay.xinputVersion` and `XDisplay.queryDevices`.
    public init(display: XDisplay) throws(X11Error) {
        guard let version = try display.xinputVersion(), version.major >= 2 else {
            throw .missingExtension("XInputExtension 2 (multi-pointer)")
        }
        self.display = display
        let devices = try display.queryDevices()
        let core = devices.first { $0.use == .masterPointer && $0.name == "Virtual core pointer" }
        corePointer = core?.id ?? DeviceID(rawValue: 2)
        coreKeyboard = core?.attachment ?? DeviceID(rawValue: 3)
    }

    /// How many masters exist now.
    public var count: Int { fingers.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// Whether any button is held on any finger's pointer.
    public var holdsAnything: Bool {
        for finger in fingers where finger?.pressedButtons.isEmpty == false { return true }
        return false
    }

    /// The device ids (master, XTest slave) of a finger's pointer, if it exists.
    public func deviceIDs(of finger: FingerPointer) -> (master: DeviceID, slave: DeviceID)? {
        guard let f = fingers[Int(finger.rawValue)] else { return nil }
        return (f.master, f.slave.id)
    }

    /// Moves `finger`'s pointer to an absolute pixel, creating its master first if needed.
    public func move(_ finger: FingerPointer, to point: PixelPoint) throws(X11Error) {
        let f = try ensure(finger)
        try display.fakeDeviceMotion(f.slave, to: point)
    }

    /// Presses or releases a button of `finger`'s pointer, creating its master first if needed.
    public func button(_ finger: FingerPointer, _ button: PointerButton, pressed: Bool) throws(X11Error) {
        let i = Int(finger.rawValue)
        let f = try ensure(finger)
        try display.fakeDeviceButton(f.slave, button, pressed: pressed)
        fingers[i]!.pressedButtons.record(button, pressed: pressed)
    }

    /// Releases every button held on every finger's pointer (the masters stay). Returns what it
    /// released, for the log. The caller syncs.
    @discardableResult
    public func releaseAll() throws(X11Error) -> [String] {
        var released: [String] = []
        var firstError: X11Error?
        for i in fingers.indices {
            guard let f = fingers[i], !f.pressedButtons.isEmpty else { continue }
            for button in f.pressedButtons.all {
                // Past a failing release: the other buttons are still released.
                do throws(X11Error) {
                    try display.fakeDeviceButton(f.slave, button, pressed: false)
                    released.append("finger \(i) button \(button.rawValue)")
                } catch {
                    if firstError == nil { firstError = error }
                }
            }
            fingers[i]!.pressedButtons.removeAll()
        }
        if let firstError { throw firstError }
        return released
    }

    /// Releases what is held, then removes every master this run created, and waits until the server
    /// has done it. Returns the names of the removed masters. Goes on past a failing master, and throws
    /// the first error at the end.
    @discardableResult
    public func removeAll() throws(X11Error) -> [String] {
        var firstError: X11Error?
        do { try releaseAll() } catch { firstError = error }
        var removed: [String] = []
        for i in fingers.indices {
            guard let f = fingers[i] else { continue }
            fingers[i] = nil
            display.closeDevice(f.slave)
            do {
                try display.removeMaster(f.master, returnPointer: corePointer, returnKeyboard: coreKeyboard)
                removed.append(FingerPointer(rawValue: UInt8(i)).masterName)
            } catch {
                firstError = firstError ?? error
            }
        }
        do { try display.sync() } catch { firstError = firstError ?? error }
        if let firstError { throw firstError }
        return removed
    }

    /// Removes every master pointer whose name starts with `touchbridge finger ` — left over by a run
    /// that could not clean up (killed, crashed) — and waits until the server has done it. Returns their
    /// names. Call at start, before creating any. Does nothing on a server without XInput 2.
    ///
    /// Note: it would also remove the masters of another touchbridge running on the same display.
    @discardableResult
    public static func removeLeftovers(on display: XDisplay) throws(X11Error) -> [String] {
        try display.removeMasters(named: FingerPointer.masterNamePrefix)
    }

    /// The finger's pointer, created on first use: add the master, wait for the server, find the new
    /// master and its XTest slave by name, open the slave.
    private func ensure(_ finger: FingerPointer) throws(X11Error) -> Finger {
        let i = Int(finger.rawValue)
        precondition(i >= Int(FingerPointer.first.rawValue) && i < fingers.count, "no such finger pointer: \(finger)")
        if let f = fingers[i] { return f }
        let name = finger.masterName
        // Leftovers of that name were removed at start.
        let (master, devices) = try display.addMasterAndFind(named: name)
        guard let slave = devices.first(where: {
            $0.use == .slavePointer && $0.attachment == master.id && $0.name == name + " XTEST pointer"
        }) else {
            try? display.removeMaster(master.id, returnPointer: corePointer, returnKeyboard: coreKeyboard)
            throw .requestFailed("XIChangeHierarchy(add master \"\(name)\"): no \"\(name) XTEST pointer\" slave")
        }
        let opened: OpenedDevice
        do {
            opened = try display.openDevice(slave.id)
        } catch {
            try? display.removeMaster(master.id, returnPointer: corePointer, returnKeyboard: coreKeyboard)
            throw error
        }
        let f = Finger(master: master.id, slave: opened)
        fingers[i] = f
        return f
    }
}
