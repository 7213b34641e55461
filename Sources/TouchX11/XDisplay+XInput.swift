import CX11
import TouchCore

#if canImport(Glibc)
import Glibc
#endif

/// An XInput device id (2 is the virtual core pointer, 3 the virtual core keyboard).
public struct DeviceID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }
}

/// What `XIQueryDevice` says about one device.
public struct XInputDeviceInfo: Hashable, Sendable, CustomStringConvertible {
    /// The device's role in the hierarchy (`XIDeviceInfo.use`).
    public enum Use: Hashable, Sendable {
        case masterPointer, masterKeyboard, slavePointer, slaveKeyboard, floatingSlave
        case other(Int32)
    }

    public var id: DeviceID
    public var name: String
    public var use: Use
    /// For a master, its paired master; for an attached slave, its master.
    public var attachment: DeviceID
    public var enabled: Bool

    public var description: String { "\(name) (id \(id))" }
}

/// A device opened with the XInput 1 `XOpenDevice`, which `XTestFakeDevice*` needs. Close it with
/// `XDisplay.closeDevice(_:)` before closing the display.
public final class OpenedDevice {
    public let id: DeviceID
    fileprivate var handle: UnsafeMutablePointer<XDevice>?

    fileprivate init(id: DeviceID, handle: UnsafeMutablePointer<XDevice>) {
        self.id = id
        self.handle = handle
    }

    deinit {
        assert(handle == nil, "device \(id) was not closed: call XDisplay.closeDevice on every exit path")
    }
}

// XInput 2: the device hierarchy (multi-pointer masters) and XTest on a given device.
extension XDisplay {
    /// Announces that touchbridge speaks XInput `major.minor` and returns the version the server
    /// supports, or nil when it has no XInputExtension.
    ///
    /// The corresponding C functions are `XQueryExtension` ("XInputExtension") and `XIQueryVersion`.
    public func xinputVersion(major: Int32 = 2, minor: Int32 = 2) throws(X11Error) -> (major: Int32, minor: Int32)? {
        let dpy = try display()
        var opcode: Int32 = 0, event: Int32 = 0, error: Int32 = 0
        guard XQueryExtension(dpy, "XInputExtension", &opcode, &event, &error) != 0 else { return nil }
        xinputOpcode = opcode
        var major = major, minor = minor
        guard XIQueryVersion(dpy, &major, &minor) == Success else { return nil }
        return (major, minor)
    }

    /// Every input device of the server.
    ///
    /// The corresponding C functions are `XIQueryDevice` (`XIAllDevices`) and `XIFreeDeviceInfo`.
    public func queryDevices() throws(X11Error) -> [XInputDeviceInfo] {
        let dpy = try display()
        var count: Int32 = 0
        guard let list = XIQueryDevice(dpy, XIAllDevices, &count) else {
            throw .requestFailed("XIQueryDevice")
        }
        defer { XIFreeDeviceInfo(list) }
        var devices: [XInputDeviceInfo] = []
        devices.reserveCapacity(Int(count))
        for i in 0..<Int(max(0, count)) {
            let d = list[i]
            let use: XInputDeviceInfo.Use = switch d.use {
            case XIMasterPointer: .masterPointer
            case XIMasterKeyboard: .masterKeyboard
            case XISlavePointer: .slavePointer
            case XISlaveKeyboard: .slaveKeyboard
            case XIFloatingSlave: .floatingSlave
            default: .other(d.use)
            }
            devices.append(XInputDeviceInfo(
                id: DeviceID(rawValue: d.deviceid), name: d.name.map { String(cString: $0) } ?? "",
                use: use, attachment: DeviceID(rawValue: d.attachment), enabled: d.enabled != 0))
        }
        return devices
    }

    /// Creates a master pointer/keyboard pair named `name`: the server makes "`name` pointer",
    /// "`name` keyboard" and their XTest slaves "`name` XTEST pointer" and "`name` XTEST keyboard".
    /// Masters outlive the client that made them. The request is asynchronous: `sync()` and
    /// `queryDevices()` to find the new devices.
    ///
    /// The corresponding C function is `XIChangeHierarchy` with an `XIAddMasterInfo`.
    public func addMaster(named name: String) throws(X11Error) {
        let dpy = try display()
        guard let cName = strdup(name) else { throw .requestFailed("XIChangeHierarchy(add master): out of memory") }
        defer { free(cName) }
        var change = XIAnyHierarchyChangeInfo(add: XIAddMasterInfo(type: XIAddMaster, name: cName, send_core: 1, enable: 1))
        guard changeHierarchy(dpy, &change) else {
            throw .requestFailed("XIChangeHierarchy(add master \"\(name)\")")
        }
    }

    /// Creates the master pair named `name` (`addMaster`), waits for the server, and returns the newest
    /// master pointer of that name with the server's devices afterwards.
    public func addMasterAndFind(named name: String) throws(X11Error) -> (master: XInputDeviceInfo, devices: [XInputDeviceInfo]) {
        try addMaster(named: name)
        try sync()
        let devices = try queryDevices()
        // The newest master of that name (ids are not reused at once).
        guard let master = devices.filter({ $0.use == .masterPointer && $0.name == name + " pointer" })
            .max(by: { $0.id.rawValue < $1.id.rawValue })
        else {
            throw .requestFailed("XIChangeHierarchy(add master \"\(name)\"): no master \"\(name) pointer\" afterwards")
        }
        return (master, devices)
    }

    /// Removes a master pointer and its paired keyboard (their XTest slaves go with them); any other
    /// slave attached to them is attached to `returnPointer`/`returnKeyboard`. Asynchronous like
    /// `addMaster`.
    ///
    /// The corresponding C function is `XIChangeHierarchy` with an `XIRemoveMasterInfo`
    /// (`XIAttachToMaster`).
    public func removeMaster(_ master: DeviceID, returnPointer: DeviceID, returnKeyboard: DeviceID) throws(X11Error) {
        let dpy = try display()
        var change = XIAnyHierarchyChangeInfo(remove: XIRemoveMasterInfo(
            type: XIRemoveMaster, deviceid: master.rawValue, return_mode: XIAttachToMaster,
            return_pointer: returnPointer.rawValue, return_keyboard: returnKeyboard.rawValue))
        guard changeHierarchy(dpy, &change) else {
            throw .requestFailed("XIChangeHierarchy(remove master \(master))")
        }
    }

    /// Attaches the slave `device` (a pointer or a keyboard) to the master `master` (a pointer or a
    /// keyboard, as the slave is). Asynchronous like `addMaster`.
    ///
    /// The corresponding C function is `XIChangeHierarchy` with an `XIAttachSlaveInfo`.
    public func attachSlave(_ device: DeviceID, to master: DeviceID) throws(X11Error) {
        let dpy = try display()
        var change = XIAnyHierarchyChangeInfo(attach: XIAttachSlaveInfo(type: XIAttachSlave, deviceid: device.rawValue,
                                                                       new_master: master.rawValue))
        guard changeHierarchy(dpy, &change) else {
            throw .requestFailed("XIChangeHierarchy(attach \(device) to \(master))")
        }
    }

    /// Sends one change of the device hierarchy; false when Xlib could not send it.
    ///
    /// The corresponding C function is `XIChangeHierarchy`.
    private func changeHierarchy(_ dpy: OpaquePointer, _ change: inout XIAnyHierarchyChangeInfo) -> Bool {
        XIChangeHierarchy(dpy, &change, 1) == Success
    }

    /// Opens a device for `fakeDeviceMotion`/`fakeDeviceButton` (an XTest slave such as
    /// "touchbridge finger 2 XTEST pointer").
    ///
    /// The corresponding C function is `XOpenDevice`.
    public func openDevice(_ id: DeviceID) throws(X11Error) -> OpenedDevice {
        guard let handle = XOpenDevice(try display(), XID(UInt32(bitPattern: id.rawValue))) else {
            throw .requestFailed("XOpenDevice(\(id))")
        }
        return OpenedDevice(id: id, handle: handle)
    }

    /// Closes a device opened with `openDevice`. Safe to call twice.
    ///
    /// The corresponding C function is `XCloseDevice`.
    public func closeDevice(_ device: OpenedDevice) {
        guard let handle = device.handle else { return }
        device.handle = nil
        if let dpy = try? display() { XCloseDevice(dpy, handle) }
    }

    /// The buttons (1...255) and keycodes (8...255) `device` itself holds down now: for a slave, only
    /// what that slave pressed (the master's state is the union of its slaves').
    ///
    /// The corresponding C functions are `XQueryDeviceState` and `XFreeDeviceState`.
    public func heldDown(_ device: OpenedDevice) throws(X11Error) -> (buttons: [UInt8], keys: [KeyCode]) {
        let dpy = try display()
        guard let handle = device.handle else { throw .requestFailed("XQueryDeviceState: device \(device.id) is closed") }
        guard let state = XQueryDeviceState(dpy, handle) else { throw .requestFailed("XQueryDeviceState(\(device.id))") }
        defer { XFreeDeviceState(state) }
        var buttons: [UInt8] = [], keys: [KeyCode] = []
        guard var cursor = state.pointee.data.map({ UnsafeRawPointer($0) }) else { return ([], []) }
        // Each class starts with its class and its length in bytes (XInputClass); XKeyState and
        // XButtonState then have a 16-bit count and a 32-byte bit mask at offset 4.
        for _ in 0..<Int(max(0, state.pointee.num_classes)) {
            let kind = cursor.load(as: UInt8.self), length = Int(cursor.load(fromByteOffset: 1, as: UInt8.self))
            if kind == UInt8(KeyClass) || kind == UInt8(ButtonClass) {
                for n in 1..<256 where cursor.load(fromByteOffset: 4 + n / 8, as: UInt8.self) & (1 << UInt8(n % 8)) != 0 {
                    if kind == UInt8(KeyClass) { if n >= 8 { keys.append(KeyCode(rawValue: UInt8(n))) } } else { buttons.append(UInt8(n)) }
                }
            }
            guard length > 0 else { break }
            cursor += length
        }
        return (buttons, keys)
    }

    /// Moves the master of `device` (an XTest slave) to an absolute position in screen pixels.
    ///
    /// Through `deviceMotion` (`XTestFakeDeviceMotionEvent`, absolute, axes 0 and 1). The XTest slave's
    /// axes have no range, so the server takes their values as screen coordinates.
    public func fakeDeviceMotion(_ device: OpenedDevice, to point: PixelPoint) throws(X11Error) {
        try deviceMotion(device, relative: false, point.x, point.y)
    }

    /// Moves the master of `device` (an XTest slave) by whole pixels.
    ///
    /// Through `deviceMotion` (`XTestFakeDeviceMotionEvent`, relative, axes 0 and 1).
    public func fakeDeviceMotion(_ device: OpenedDevice, dx: Int32, dy: Int32) throws(X11Error) {
        try deviceMotion(device, relative: true, dx, dy)
    }

    /// One motion of `device`'s axes 0 and 1, absolute or relative.
    ///
    /// The corresponding C function is `XTestFakeDeviceMotionEvent`.
    private func deviceMotion(_ device: OpenedDevice, relative: Bool, _ x: Int32, _ y: Int32) throws(X11Error) {
        let dpy = try display()
        guard let handle = device.handle else { throw .requestFailed("XTestFakeDeviceMotionEvent: device \(device.id) is closed") }
        var axes = (x, y)
        let ok = withUnsafeMutablePointer(to: &axes) { tuple in
            tuple.withMemoryRebound(to: Int32.self, capacity: 2) { XTestFakeDeviceMotionEvent(dpy, handle, relative ? 1 : 0, 0, $0, 2, 0) }
        }
        guard ok != 0 else { throw .requestFailed("XTestFakeDeviceMotionEvent") }
    }

    /// Presses or releases key `code` of the master keyboard of `device` (an XTest keyboard slave): the
    /// key goes to that master's focus.
    ///
    /// The corresponding C function is `XTestFakeDeviceKeyEvent` (no axes).
    public func fakeDeviceKey(_ device: OpenedDevice, _ code: KeyCode, pressed: Bool) throws(X11Error) {
        let dpy = try display()
        guard let handle = device.handle else { throw .requestFailed("XTestFakeDeviceKeyEvent: device \(device.id) is closed") }
        guard XTestFakeDeviceKeyEvent(dpy, handle, UInt32(code.rawValue), pressed ? 1 : 0, nil, 0, 0) != 0 else {
            throw .requestFailed("XTestFakeDeviceKeyEvent")
        }
    }

    /// Presses or releases a button of the master of `device` (an XTest slave), where its pointer is.
    ///
    /// The corresponding C function is `XTestFakeDeviceButtonEvent` (no axes).
    public func fakeDeviceButton(_ device: OpenedDevice, _ button: PointerButton, pressed: Bool) throws(X11Error) {
        let dpy = try display()
        guard let handle = device.handle else { throw .requestFailed("XTestFakeDeviceButtonEvent: device \(device.id) is closed") }
        guard XTestFakeDeviceButtonEvent(dpy, handle, UInt32(button.rawValue), pressed ? 1 : 0, nil, 0, 0) != 0 else {
            throw .requestFailed("XTestFakeDeviceButtonEvent")
        }
    }
}

extension XDisplay {
    /// Removes every master pointer whose name starts with `prefix` (and its keyboard), their slaves
    /// returned to the core pointer and keyboard, and waits until the server has done it. Returns their
    /// names without " pointer". Does nothing on a server without XInput 2. The stale masters of a run that
    /// could not clean up: the fingers' (`--multitouch`) and the people's.
    public func removeMasters(named prefix: String) throws(X11Error) -> [String] {
        guard let version = try xinputVersion(), version.major >= 2 else { return [] }
        let devices = try queryDevices()
        let core = devices.first { $0.use == .masterPointer && $0.name == "Virtual core pointer" }
        let corePointer = core?.id ?? DeviceID(rawValue: 2)
        let coreKeyboard = core?.attachment ?? DeviceID(rawValue: 3)
        var removed: [String] = []
        for d in devices where d.use == .masterPointer && d.name.hasPrefix(prefix) {
            try removeMaster(d.id, returnPointer: corePointer, returnKeyboard: coreKeyboard)
            removed.append(d.name.hasSuffix(" pointer") ? String(d.name.dropLast(" pointer".count)) : d.name)
        }
        if !removed.isEmpty { try sync() }
        return removed
    }
}
