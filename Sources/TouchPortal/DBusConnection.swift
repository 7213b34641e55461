// The one owner of sd-bus (libsystemd): typed wrappers over every sd_bus_* call TouchPortal makes, each
// the only call site of its C function, with the C name in its doc comment. Only non-variadic calls.
// They go through CPortal's tb_sd_bus_* functions, which call libsystemd.so.0 once `loadLibrary` has
// loaded it (dlopen): a daemon on another backend never maps libsystemd.
import CPortal
import Glibc

/// A D-Bus failure, in words: the call and sd-bus's error (name and message, or errno's text).
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The D-Bus error name when the peer replied with one ("org.freedesktop.DBus.Error.ServiceUnknown").
    public var name: String?
    public var message: String
    public var description: String { message }
}

/// An argument of a method call, as D-Bus marshals it. A dictionary is `a{sv}`: each value in a variant.
public indirect enum DBusArgument: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case uint32(UInt32)
    case bool(Bool)
    case vardict([(String, DBusArgument)])

    public static func == (a: DBusArgument, b: DBusArgument) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)), (.objectPath(let x), .objectPath(let y)): return x == y
        case (.uint32(let x), .uint32(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.vardict(let x), .vardict(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Its D-Bus signature ("s", "o", "u", "b", "a{sv}").
    var signature: String {
        switch self {
        case .string: return "s"
        case .objectPath: return "o"
        case .uint32: return "u"
        case .bool: return "b"
        case .vardict: return "a{sv}"
        }
    }
}

/// One D-Bus message (a call being built, or a reply or signal being read). Owns one reference.
public final class DBusMessage {
    fileprivate let pointer: OpaquePointer

    fileprivate init(taking pointer: OpaquePointer) { self.pointer = pointer }

    /// Takes another reference (`tb_sd_bus_message_ref`), for a message sd-bus lends to a callback.
    fileprivate convenience init(referencing pointer: OpaquePointer) {
        self.init(taking: tb_sd_bus_message_ref(pointer))
    }

    /// Drops the reference (`tb_sd_bus_message_unref`).
    deinit { _ = tb_sd_bus_message_unref(pointer) }

    private static func check(_ r: Int32, _ what: String) throws(DBusError) {
        if r < 0 { throw DBusError(name: nil, message: "\(what): \(String(cString: strerror(-r)))") }
    }

    /// Appends one basic value (`tb_sd_bus_message_append_basic`); `type` its D-Bus type code. Returns its
    /// result (negative: an errno).
    private func appendBasic(_ type: UInt8, _ value: UnsafeRawPointer) -> Int32 {
        tb_sd_bus_message_append_basic(pointer, CChar(bitPattern: type), value)
    }

    /// Opens a container (`tb_sd_bus_message_open_container`): 'a', 'e', 'v' with its contents' signature.
    private func open(_ type: UInt8, _ contents: String) throws(DBusError) {
        try Self.check(tb_sd_bus_message_open_container(pointer, CChar(bitPattern: type), contents), "sd_bus_message_open_container")
    }

    /// Closes the container opened last (`tb_sd_bus_message_close_container`).
    private func close() throws(DBusError) {
        try Self.check(tb_sd_bus_message_close_container(pointer), "sd_bus_message_close_container")
    }

    /// Appends `argument`, marshalled by its type.
    public func append(_ argument: DBusArgument) throws(DBusError) {
        switch argument {
        case .string(let s):
            try Self.check(s.withCString { appendBasic(UInt8(ascii: "s"), $0) }, "sd_bus_message_append_basic s")
        case .objectPath(let s):
            try Self.check(s.withCString { appendBasic(UInt8(ascii: "o"), $0) }, "sd_bus_message_append_basic o")
        case .uint32(var u):
            try Self.check(withUnsafePointer(to: &u) { appendBasic(UInt8(ascii: "u"), $0) }, "sd_bus_message_append_basic u")
        case .bool(let b):
            var v: Int32 = b ? 1 : 0  // D-Bus booleans are 32 bits
            try Self.check(withUnsafePointer(to: &v) { appendBasic(UInt8(ascii: "b"), $0) }, "sd_bus_message_append_basic b")
        case .vardict(let entries):
            try open(UInt8(ascii: "a"), "{sv}")
            for (key, value) in entries {
                try open(UInt8(ascii: "e"), "sv")
                try append(.string(key))
                try open(UInt8(ascii: "v"), value.signature)
                try append(value)
                try close()
                try close()
            }
            try close()
        }
    }

    /// Reads one basic value (`tb_sd_bus_message_read_basic`) into `into`; false at the end of a container.
    private func readBasic(_ type: UInt8, _ into: UnsafeMutableRawPointer) throws(DBusError) -> Bool {
        let r = tb_sd_bus_message_read_basic(pointer, CChar(bitPattern: type), into)
        try Self.check(r, "sd_bus_message_read_basic")
        return r > 0
    }

    /// The type of what comes next (`tb_sd_bus_message_peek_type`), and a container's contents; nil at
    /// the end of the current container.
    private func peek() throws(DBusError) -> (type: UInt8, contents: String?)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let r = tb_sd_bus_message_peek_type(pointer, &type, &contents)
        try Self.check(r, "sd_bus_message_peek_type")
        guard r > 0 else { return nil }
        return (UInt8(bitPattern: type), contents.map { String(cString: $0) })
    }

    /// Enters a container (`tb_sd_bus_message_enter_container`); false at the end of the enclosing one.
    private func enter(_ type: UInt8, _ contents: String?) throws(DBusError) -> Bool {
        let r = tb_sd_bus_message_enter_container(pointer, CChar(bitPattern: type), contents)
        try Self.check(r, "sd_bus_message_enter_container")
        return r > 0
    }

    /// Leaves the container entered last (`tb_sd_bus_message_exit_container`).
    private func exit() throws(DBusError) {
        try Self.check(tb_sd_bus_message_exit_container(pointer), "sd_bus_message_exit_container")
    }

    /// Skips one value of signature `types` (`tb_sd_bus_message_skip`).
    private func skip(_ types: String) throws(DBusError) {
        try Self.check(tb_sd_bus_message_skip(pointer, types), "sd_bus_message_skip")
    }

    /// Seals a message built here (`tb_sd_bus_message_seal`) and rewinds it to its start
    /// (`tb_sd_bus_message_rewind`), so it can be read: what a peer would read of it. Test use.
    public func sealAndRewind() throws(DBusError) {
        try Self.check(tb_sd_bus_message_seal(pointer, 1, 0), "sd_bus_message_seal")
        try Self.check(tb_sd_bus_message_rewind(pointer, 1), "sd_bus_message_rewind")
    }

    /// Reads a string or object path.
    public func readString() throws(DBusError) -> String {
        guard let (type, _) = try peek(), type == UInt8(ascii: "s") || type == UInt8(ascii: "o") else {
            throw DBusError(name: nil, message: "expected a string or an object path")
        }
        var p: UnsafePointer<CChar>?
        _ = try readBasic(type, &p)
        return p.map { String(cString: $0) } ?? ""
    }

    /// Reads a uint32.
    public func readUInt32() throws(DBusError) -> UInt32 {
        var u: UInt32 = 0
        guard try readBasic(UInt8(ascii: "u"), &u) else { throw DBusError(name: nil, message: "expected a uint32") }
        return u
    }

    /// Reads a UNIX descriptor ('h') and returns a duplicate the caller owns (the message's own closes
    /// with it).
    public func readDescriptor() throws(DBusError) -> Int32 {
        var fd: Int32 = -1
        guard try readBasic(UInt8(ascii: "h"), &fd), fd >= 0 else { throw DBusError(name: nil, message: "expected a file descriptor") }
        let own = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard own >= 0 else { throw DBusError(name: nil, message: "dup of the received descriptor: \(String(cString: strerror(errno)))") }
        return own
    }

    /// Reads a variant ('v'): a string, object path, uint32 or boolean as such, anything else as
    /// `.other` with its signature.
    public func readVariant() throws(DBusError) -> DBusValue {
        guard let (type, contents) = try peek(), type == UInt8(ascii: "v"), let contents, try enter(UInt8(ascii: "v"), contents) else {
            throw DBusError(name: nil, message: "expected a variant")
        }
        let value: DBusValue
        switch contents {
        case "s": value = .string(try readString())
        case "o": value = .objectPath(try readString())
        case "u": value = .uint32(try readUInt32())
        case "b":
            var v: Int32 = 0
            _ = try readBasic(UInt8(ascii: "b"), &v)
            value = .bool(v != 0)
        case "(ii)":
            guard try enter(UInt8(ascii: "r"), "ii") else { throw DBusError(name: nil, message: "expected (ii)") }
            value = .pair(try readInt32(), try readInt32())
            try exit()
        case "a(ua{sv})":
            value = .streams(try readStreams())
        default:
            try skip(contents)
            value = .other(signature: contents)
        }
        try exit()
        return value
    }

    /// Reads an int32.
    public func readInt32() throws(DBusError) -> Int32 {
        var i: Int32 = 0
        guard try readBasic(UInt8(ascii: "i"), &i) else { throw DBusError(name: nil, message: "expected an int32") }
        return i
    }

    /// Reads the ScreenCast portal's streams (`a(ua{sv})`): each one's PipeWire node, and where the
    /// monitor it shows lies (`position`, `size`: `(ii)`) when said.
    func readStreams() throws(DBusError) -> [PortalStream] {
        var out: [PortalStream] = []
        guard try enter(UInt8(ascii: "a"), "(ua{sv})") else { throw DBusError(name: nil, message: "expected a(ua{sv})") }
        while try enter(UInt8(ascii: "r"), "ua{sv}") {
            let node = try readUInt32()
            let properties = try readVardict()
            try exit()
            var stream = PortalStream(node: node)
            if case .pair(let x, let y)? = properties["position"] { stream.position = (x, y) }
            if case .pair(let w, let h)? = properties["size"] { stream.size = (w, h) }
            out.append(stream)
        }
        try exit()
        return out
    }

    /// Reads an `a{sv}`: string, object path, uint32 and boolean values as such, anything else as
    /// `.other` with its signature.
    public func readVardict() throws(DBusError) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        guard try enter(UInt8(ascii: "a"), "{sv}") else { throw DBusError(name: nil, message: "expected a{sv}") }
        while try enter(UInt8(ascii: "e"), "sv") {
            let key = try readString()
            out[key] = try readVariant()
            try exit()  // the entry
        }
        try exit()  // the array
        return out
    }
}

/// A connection to a message bus. Synchronous: calls wait for their replies, `waitForSignal` for a signal.
/// Not thread-safe: used by one thread at a time.
public final class DBusConnection {
    private var bus: OpaquePointer?

    /// Connects to the session bus: DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus, else
    /// /run/user/UID/bus (`init(address:)`).
    public convenience init() throws(DBusError) {
        let env = { (name: String) in getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        let runtime = env("XDG_RUNTIME_DIR") ?? "/run/user/\(getuid())"
        let address = env("DBUS_SESSION_BUS_ADDRESS") ?? "unix:path=\(runtime)/bus"
        try Self.loadLibrary()
        do throws(DBusError) { try self.init(address: address) } catch {
            throw DBusError(name: nil, message: "cannot connect to the session bus (\(error.message)): is this a desktop session (DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR)?")
        }
    }

    /// Loads libsystemd.so.0 and finds every sd-bus function used here (`tb_sd_bus_load`); later calls
    /// return at once. Throws why not, in words (a missing library, or one without a function).
    static func loadLibrary() throws(DBusError) {
        if let error = tb_sd_bus_load() { throw DBusError(name: nil, message: String(cString: error)) }
    }

    /// Connects to the bus at `address` ("unix:path=…"), as a bus client (`loadLibrary`, `tb_sd_bus_new`,
    /// `tb_sd_bus_set_address`, `tb_sd_bus_set_bus_client`, `tb_sd_bus_start`; `tb_sd_bus_unref` when one fails).
    public init(address: String) throws(DBusError) {
        try Self.loadLibrary()
        var b: OpaquePointer?
        guard tb_sd_bus_new(&b) >= 0, let b else { throw DBusError(name: nil, message: "sd_bus_new failed") }
        var r = tb_sd_bus_set_address(b, address)
        if r >= 0 { r = tb_sd_bus_set_bus_client(b, 1) }
        if r >= 0 { r = tb_sd_bus_start(b) }
        guard r >= 0 else {
            _ = tb_sd_bus_unref(b)
            throw DBusError(name: nil, message: "cannot connect to the bus at \(address): \(String(cString: strerror(-r)))")
        }
        bus = b
    }

    /// Flushes and closes the connection (`tb_sd_bus_flush_close_unref`). Idempotent.
    public func close() {
        if let bus { _ = tb_sd_bus_flush_close_unref(bus) }
        bus = nil
    }

    deinit { close() }

    private var open: OpaquePointer {
        get throws(DBusError) {
            guard let bus else { throw DBusError(name: nil, message: "the bus connection is closed") }
            return bus
        }
    }

    /// The unique name as sd-bus has it now (`tb_sd_bus_get_unique_name`): its result (negative: an errno).
    private func readUniqueName(_ name: inout UnsafePointer<CChar>?) throws(DBusError) -> Int32 {
        tb_sd_bus_get_unique_name(try open, &name)
    }

    /// This connection's unique name, ":1.42".
    /// The bus gives it in its reply to Hello, which the connection sends on its own once connected:
    /// until that reply is read, it waits (up to 25 s).
    public func uniqueName() throws(DBusError) -> String {
        var name: UnsafePointer<CChar>?
        var r = try readUniqueName(&name)
        var waited = 0
        while r == -ENOTCONN || r == -ENXIO, waited < 250 {
            while try process() {}
            try wait(microseconds: 100_000)
            waited += 1
            r = try readUniqueName(&name)
        }
        guard r >= 0, let name else { throw DBusError(name: nil, message: "sd_bus_get_unique_name: \(String(cString: strerror(-r)))") }
        return String(cString: name)
    }

    /// A method call to fill with `append` (`tb_sd_bus_message_new_method_call`).
    public func methodCall(destination: String, path: String, interface: String, member: String) throws(DBusError) -> DBusMessage {
        var m: OpaquePointer?
        let r = tb_sd_bus_message_new_method_call(try open, &m, destination, path, interface, member)
        guard r >= 0, let m else { throw DBusError(name: nil, message: "sd_bus_message_new_method_call \(member): \(String(cString: strerror(-r)))") }
        return DBusMessage(taking: m)
    }

    /// Sends `call` and waits up to `timeoutSeconds` for its reply (`tb_sd_bus_call`); an error reply
    /// throws its name and message (freed with `tb_sd_bus_error_free`).
    public func call(_ call: DBusMessage, timeoutSeconds: UInt64 = 25) throws(DBusError) -> DBusMessage {
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { tb_sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let r = tb_sd_bus_call(try open, call.pointer, timeoutSeconds * 1_000_000, &error, &reply)
        guard r >= 0, let reply else {
            let name = error.name.map { String(cString: $0) }
            let text = error.message.map { String(cString: $0) } ?? String(cString: strerror(-r))
            throw DBusError(name: name, message: name.map { "\($0): \(text)" } ?? text)
        }
        return DBusMessage(taking: reply)
    }

    /// Subscribes to a signal (`tb_sd_bus_match_signal`); the signals that match are kept, in order, for
    /// `waitForSignal`. The subscription lasts as long as the returned value.
    public func subscribe(sender: String?, path: String?, interface: String, member: String) throws(DBusError) -> DBusSubscription {
        let inbox = DBusSubscription.Inbox()
        var slot: OpaquePointer?
        let r = tb_sd_bus_match_signal(try open, &slot, sender, path, interface, member, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<DBusSubscription.Inbox>.fromOpaque(userdata).takeUnretainedValue().received.append(DBusMessage(referencing: message))
            return 0
        }, Unmanaged.passUnretained(inbox).toOpaque())
        guard r >= 0, let slot else { throw DBusError(name: nil, message: "sd_bus_match_signal \(member): \(String(cString: strerror(-r)))") }
        return DBusSubscription(slot: slot, inbox: inbox)
    }

    /// Handles what has arrived (`tb_sd_bus_process`); true when it did something (call it again).
    private func process() throws(DBusError) -> Bool {
        let r = tb_sd_bus_process(try open, nil)
        if r < 0 { throw DBusError(name: nil, message: "the session bus went away (sd_bus_process: \(String(cString: strerror(-r))))") }
        return r > 0
    }

    /// Sleeps until the bus has something, at most `microseconds` (`tb_sd_bus_wait`).
    private func wait(microseconds: UInt64) throws(DBusError) {
        let r = tb_sd_bus_wait(try open, microseconds)
        if r < 0, r != -EINTR { throw DBusError(name: nil, message: "sd_bus_wait: \(String(cString: strerror(-r)))") }
    }

    /// Waits until `subscription` has a signal and returns the oldest; nil when `stop` says to give up
    /// (asked at least every `checkEverySeconds`) or `timeoutSeconds` passed (nil: no limit).
    public func waitForSignal(_ subscription: DBusSubscription, timeoutSeconds: Double? = nil, checkEverySeconds: Double = 1,
                              stop: () -> Bool = { false }) throws(DBusError) -> DBusMessage? {
        var waited = 0.0
        while true {
            while subscription.inbox.received.isEmpty, try process() {}
            if !subscription.inbox.received.isEmpty { return subscription.inbox.received.removeFirst() }
            if stop() { return nil }
            if let timeoutSeconds, waited >= timeoutSeconds { return nil }
            try wait(microseconds: UInt64(checkEverySeconds * 1_000_000))
            waited += checkEverySeconds
        }
    }
}

/// A signal subscription: ends (`tb_sd_bus_slot_unref`) when released.
public final class DBusSubscription {
    final class Inbox { var received: [DBusMessage] = [] }
    private let slot: OpaquePointer
    fileprivate let inbox: Inbox

    fileprivate init(slot: OpaquePointer, inbox: Inbox) {
        self.slot = slot
        self.inbox = inbox
    }

    /// Ends the subscription (`tb_sd_bus_slot_unref`).
    deinit { _ = tb_sd_bus_slot_unref(slot) }
}
