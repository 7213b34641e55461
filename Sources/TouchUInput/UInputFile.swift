// The one owner of the C calls on /dev/uinput: open, ioctl, write, close. Every C function has one call
// site, in a typed wrapper below; the kernel structures are laid out by hand in byte buffers (the
// uinput header does not import into Swift), with the sizes checked against <linux/uinput.h>.
import Glibc

/// An error from a uinput call: the C function, what it was for, and errno.
public struct UInputError: Error, CustomStringConvertible, Sendable {
    public let function: String
    public let detail: String
    public let errno: Int32

    public var description: String {
        "\(function)(\(detail)): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The ioctl requests of <linux/uinput.h>, computed as the kernel's `_IOC` macro does
/// (direction << 30 | size << 16 | type << 8 | number, type 'U').
enum UInputRequest {
    private static func ioc(write: Bool, read: Bool = false, number: UInt, size: UInt) -> UInt {
        let direction: UInt = (write ? 1 : 0) | (read ? 2 : 0)
        return direction << 30 | size << 16 | UInt(UInt8(ascii: "U")) << 8 | number
    }

    /// `UI_DEV_CREATE` = `_IO('U', 1)`.
    static let devCreate = ioc(write: false, number: 1, size: 0)
    /// `UI_DEV_DESTROY` = `_IO('U', 2)`.
    static let devDestroy = ioc(write: false, number: 2, size: 0)
    /// `UI_DEV_SETUP` = `_IOW('U', 3, struct uinput_setup)`.
    static let devSetup = ioc(write: true, number: 3, size: UInt(UInputSetup.size))
    /// `UI_ABS_SETUP` = `_IOW('U', 4, struct uinput_abs_setup)`.
    static let absSetup = ioc(write: true, number: 4, size: UInt(AbsSetup.size))
    /// `UI_SET_EVBIT` = `_IOW('U', 100, int)`.
    static let setEvBit = ioc(write: true, number: 100, size: 4)
    /// `UI_SET_KEYBIT` = `_IOW('U', 101, int)`.
    static let setKeyBit = ioc(write: true, number: 101, size: 4)
    /// `UI_SET_RELBIT` = `_IOW('U', 102, int)`.
    static let setRelBit = ioc(write: true, number: 102, size: 4)
    /// `UI_SET_ABSBIT` = `_IOW('U', 103, int)`.
    static let setAbsBit = ioc(write: true, number: 103, size: 4)
    /// `UI_SET_PROPBIT` = `_IOW('U', 110, int)`.
    static let setPropBit = ioc(write: true, number: 110, size: 4)
    /// `UI_GET_SYSNAME(64)` = `_IOC(_IOC_READ, 'U', 44, 64)`.
    static let getSysname64 = ioc(write: false, read: true, number: 44, size: 64)
}

/// `struct uinput_setup` (92 bytes): `struct input_id { u16 bustype, vendor, product, version }`,
/// `char name[80]`, `u32 ff_effects_max`.
struct UInputSetup {
    static let size = 92
    var bytes = [UInt8](repeating: 0, count: size)

    init(name: String, bus: UInt16, vendor: UInt16, product: UInt16, version: UInt16) {
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: bus, toByteOffset: 0, as: UInt16.self)
            raw.storeBytes(of: vendor, toByteOffset: 2, as: UInt16.self)
            raw.storeBytes(of: product, toByteOffset: 4, as: UInt16.self)
            raw.storeBytes(of: version, toByteOffset: 6, as: UInt16.self)
        }
        for (i, byte) in name.utf8.prefix(79).enumerated() { bytes[8 + i] = byte }
    }
}

/// `struct uinput_abs_setup` (28 bytes): `u16 code`, two bytes of padding, `struct input_absinfo
/// { s32 value, minimum, maximum, fuzz, flat, resolution }`.
struct AbsSetup {
    static let size = 28
    var bytes = [UInt8](repeating: 0, count: size)

    init(code: UInt16, minimum: Int32, maximum: Int32, resolution: Int32) {
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: code, toByteOffset: 0, as: UInt16.self)
            raw.storeBytes(of: minimum, toByteOffset: 8, as: Int32.self)
            raw.storeBytes(of: maximum, toByteOffset: 12, as: Int32.self)
            raw.storeBytes(of: resolution, toByteOffset: 24, as: Int32.self)
        }
    }
}

/// `struct input_event` on 64-bit Linux (24 bytes): `struct timeval` (ignored by uinput: the kernel
/// stamps the event), `u16 type`, `u16 code`, `s32 value`.
public struct InputEvent: Sendable {
    var seconds: Int = 0
    var microseconds: Int = 0
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    @inlinable public init(type: UInt16, code: UInt16, value: Int32) {
        self.type = type
        self.code = code
        self.value = value
    }
}

/// An open `/dev/uinput` descriptor. Closing it (deinit) makes the kernel destroy the device it
/// created, so even a killed process leaves no device and nothing pressed behind.
final class UInputFile {
    let fd: Int32

    /// `open(2)` of `path` write-only, non-blocking, close-on-exec.
    init(path: String) throws(UInputError) {
        precondition(MemoryLayout<InputEvent>.stride == 24, "struct input_event is 24 bytes on 64-bit Linux")
        let fd = Glibc.open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw UInputError(function: "open", detail: path, errno: Glibc.errno) }
        self.fd = fd
    }

    deinit { _ = Glibc.close(fd) }

    private enum Argument {
        case none
        case value(Int32)
        case buffer(UnsafeMutableRawPointer)
    }

    /// `ioctl(2)`: the one call site, for all three argument shapes. Returns its result.
    private func ioctlCall(_ request: UInt, _ argument: Argument) -> Int32 {
        switch argument {
        case .none: return Glibc.ioctl(fd, request)
        case .value(let v): return Glibc.ioctl(fd, request, v)
        case .buffer(let p): return Glibc.ioctl(fd, request, p)
        }
    }

    private func check(_ result: Int32, _ what: @autoclosure () -> String) throws(UInputError) {
        guard result >= 0 else { throw UInputError(function: "ioctl", detail: what(), errno: Glibc.errno) }
    }

    private func control(_ request: UInt, bytes: inout [UInt8], _ what: @autoclosure () -> String) throws(UInputError) {
        let result = bytes.withUnsafeMutableBytes { ioctlCall(request, .buffer($0.baseAddress!)) }
        try check(result, what())
    }

    /// `UI_SET_EVBIT`, `UI_SET_KEYBIT`, `UI_SET_RELBIT`, `UI_SET_ABSBIT`, `UI_SET_PROPBIT` (ioctl).
    func enable(_ request: UInt, _ code: UInt16, _ name: StaticString) throws(UInputError) {
        try check(ioctlCall(request, .value(Int32(code))), "\(name) \(code)")
    }

    /// `UI_DEV_SETUP` (ioctl).
    func setup(_ setup: UInputSetup) throws(UInputError) {
        var bytes = setup.bytes
        try control(UInputRequest.devSetup, bytes: &bytes, "UI_DEV_SETUP")
    }

    /// `UI_ABS_SETUP` (ioctl).
    func setup(_ axis: AbsSetup) throws(UInputError) {
        var bytes = axis.bytes
        try control(UInputRequest.absSetup, bytes: &bytes, "UI_ABS_SETUP")
    }

    /// `UI_DEV_CREATE` (ioctl).
    func create() throws(UInputError) { try check(ioctlCall(UInputRequest.devCreate, .none), "UI_DEV_CREATE") }

    /// `UI_DEV_DESTROY` (ioctl).
    func destroy() throws(UInputError) { try check(ioctlCall(UInputRequest.devDestroy, .none), "UI_DEV_DESTROY") }

    /// `UI_GET_SYSNAME` (ioctl): the device's name under /sys/devices/virtual/input/ (`input12`).
    func sysname() throws(UInputError) -> String {
        var buffer = [UInt8](repeating: 0, count: 64)
        try control(UInputRequest.getSysname64, bytes: &buffer, "UI_GET_SYSNAME")
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// `write(2)` of `count` events from `events` in one call (one frame, SYN_REPORT included).
    func write(_ events: UnsafePointer<InputEvent>, count: Int) throws(UInputError) {
        let bytes = count * MemoryLayout<InputEvent>.stride
        let written = Glibc.write(fd, events, bytes)
        guard written == bytes else {
            throw UInputError(function: "write", detail: "\(count) input events", errno: written < 0 ? Glibc.errno : EIO)
        }
    }
}
