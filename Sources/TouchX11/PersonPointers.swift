import TouchCore

extension Person {
    /// What every person's master's name starts with; a master so named that is left over from an
    /// earlier run (a crash) is removed at the next start.
    public static let masterNamePrefix = "touchbridge person "

    /// The name of its XInput2 master (`touchbridge person N`); X adds ` pointer` and ` keyboard`.
    public var masterName: String { Self.masterNamePrefix + String(rawValue) }
}

/// A further person's own X devices: a master pointer and keyboard (`touchbridge person N`), driven
/// through the master's XTest slaves, so that the person's cursor moves, clicks and scrolls at their own
/// position and their keys go to their own focus.
public final class PersonDevices {
    public let person: Person
    /// The master pointer (its paired keyboard goes with it).
    public let master: DeviceID
    /// The master's XTest slaves, opened for `XTestFakeDevice*`.
    public let pointer: OpenedDevice
    public let keyboard: OpenedDevice

    init(person: Person, master: DeviceID, pointer: OpenedDevice, keyboard: OpenedDevice) {
        self.person = person
        self.master = master
        self.pointer = pointer
        self.keyboard = keyboard
    }
}

/// Makes and removes the people's X masters (`XIChangeHierarchy`), on the desktop's connection.
///
/// Not thread-safe: owned by the same single thread as the `XDisplay`.
public final class PersonPointers {
    public let display: XDisplay
    /// Where slaves of a removed master are returned: the virtual core pointer and keyboard.
    private let corePointer: DeviceID
    private let coreKeyboard: DeviceID

    /// The people's masters on `display`; throws when the server does not speak XInput 2.
    public init(display: XDisplay) throws(X11Error) {
        guard let version = try display.xinputVersion(), version.major >= 2 else {
            throw .missingExtension("XInputExtension 2 (a pointer for each person)")
        }
        self.display = display
        let devices = try display.queryDevices()
        let core = devices.first { $0.use == .masterPointer && $0.name == "Virtual core pointer" }
        corePointer = core?.id ?? DeviceID(rawValue: 2)
        coreKeyboard = core?.attachment ?? DeviceID(rawValue: 3)
    }

    /// `person`'s master pointer and keyboard, made now: add the master, wait for the server, find it and
    /// its two XTest slaves by name, open them. A master of that name left by someone is removed first.
    public func make(_ person: Person) throws(X11Error) -> PersonDevices {
        let name = person.masterName
        let (master, devices) = try makeMaster(person)
        let slaves = devices.filter { $0.name == name + " XTEST pointer" || $0.name == name + " XTEST keyboard" }
        guard let pointerSlave = slaves.first(where: { $0.use == .slavePointer && $0.attachment == master.id }),
              let keyboardSlave = slaves.first(where: { $0.use == .slaveKeyboard && $0.attachment == master.attachment })
        else {
            try? display.removeMaster(master.id, returnPointer: corePointer, returnKeyboard: coreKeyboard)
            throw .requestFailed("XIChangeHierarchy(add master \"\(name)\"): no XTEST slaves")
        }
        let pointer: OpenedDevice
        do {
            pointer = try display.openDevice(pointerSlave.id)
        } catch {
            try? display.removeMaster(master.id, returnPointer: corePointer, returnKeyboard: coreKeyboard)
            throw error
        }
        let keyboard: OpenedDevice
        do {
            keyboard = try display.openDevice(keyboardSlave.id)
        } catch {
            display.closeDevice(pointer)
            try? display.removeMaster(master.id, returnPointer: corePointer, returnKeyboard: coreKeyboard)
            throw error
        }
        return PersonDevices(person: person, master: master.id, pointer: pointer, keyboard: keyboard)
    }

    /// `person`'s master pointer (its keyboard is its `attachment`), made now, and the server's devices
    /// afterwards: add the master, wait for the server, find it by name. A master of that name left by
    /// someone is removed first.
    public func makeMaster(_ person: Person) throws(X11Error) -> (master: XInputDeviceInfo, devices: [XInputDeviceInfo]) {
        let name = person.masterName
        for d in try display.queryDevices() where d.use == .masterPointer && d.name == name + " pointer" {
            try display.removeMaster(d.id, returnPointer: corePointer, returnKeyboard: coreKeyboard)
        }
        return try display.addMasterAndFind(named: name)
    }

    /// Removes `person`'s master `master` (its slaves go back to the core pointer and keyboard) and waits
    /// until the server has done it.
    public func removeMaster(_ master: DeviceID) throws(X11Error) {
        try display.removeMaster(master, returnPointer: corePointer, returnKeyboard: coreKeyboard)
        try display.sync()
    }

    /// Whether `devices`' master is still there (`xinput remove-master` by someone else takes it away).
    public func exists(_ devices: PersonDevices) throws(X11Error) -> Bool {
        let name = devices.person.masterName + " pointer"
        return try display.queryDevices().contains { $0.id == devices.master && $0.use == .masterPointer && $0.name == name }
    }

    /// Closes `devices`' slaves and removes the master (unless `masterGone`), and waits until the server
    /// has done it.
    public func remove(_ devices: PersonDevices, masterGone: Bool = false) throws(X11Error) {
        display.closeDevice(devices.pointer)
        display.closeDevice(devices.keyboard)
        guard !masterGone else { return }
        try display.removeMaster(devices.master, returnPointer: corePointer, returnKeyboard: coreKeyboard)
        try display.sync()
    }

    /// Removes every master pointer whose name starts with `touchbridge person ` — left over by a run that
    /// could not clean up — and waits until the server has done it. Returns their names. Call at start.
    /// Does nothing on a server without XInput 2.
    @discardableResult
    public static func removeLeftovers(on display: XDisplay) throws(X11Error) -> [String] {
        try display.removeMasters(named: Person.masterNamePrefix)
    }
}
