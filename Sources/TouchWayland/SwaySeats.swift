import Glibc
import TouchCore
import TouchOutput

/// Further people's own seats under sway: each person's uinput devices go on a seat of their own
/// (`touchbridge-person-N`), with its own cursor and keyboard focus, through sway's IPC (`seat <name>
/// attach <identifier>`). sway keeps the rule and applies it to a device whenever it comes, so a person is
/// ready once sway has said yes. A seat stays in sway, empty, after its devices are gone (sway has no
/// command to remove one); the same person's next devices go on it again.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public final class SwaySeats: PersonSeats {
    /// sway's IPC socket (`SWAYSOCK`).
    public let socketPath: String
    private var ready: Set<Person> = []

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// The seat's name for `person`.
    public static func seatName(_ person: Person) -> String { "touchbridge-person-\(person.rawValue)" }

    /// sway's identifier of a device: `vendor:product:name`, decimal, the name's spaces and unprintable
    /// characters as `_`.
    public static func identifier(_ device: SeatDevice) -> String {
        let name = String(device.name.unicodeScalars.map { $0 == " " || $0.value < 0x20 || $0.value >= 0x7f ? "_" : Character($0) })
        return "\(device.vendor):\(device.product):\(name)"
    }

    public func make(_ person: Person, devices: [SeatDevice]) throws(OutputError) {
        let seat = Self.seatName(person)
        let command = devices.map { "seat \(seat) attach \"\(Self.identifier($0))\"" }.joined(separator: "; ")
        let reply: String
        do throws(SwayIPCError) {
            reply = try SwayIPC.runCommand(command, socketPath: socketPath)
        } catch {
            throw OutputError(origin: "sway", message: "\(person)'s seat: \(error)", kind: 7)
        }
        guard !reply.contains("\"success\": false"), !reply.contains("\"success\":false"), reply.contains("true") else {
            throw OutputError(origin: "sway", message: "\(person)'s seat: sway said \(reply.prefix(200))", kind: 7)
        }
        ready.insert(person)
    }

    public func settle() -> [String] { [] }

    public func isReady(_ person: Person) -> Bool { ready.contains(person) }

    public func remove(_ person: Person) throws(OutputError) -> [String] {
        ready.remove(person) == nil ? [] : ["their devices from seat \(Self.seatName(person))"]
    }
}

/// What went wrong talking to sway's IPC socket.
public enum SwayIPCError: Error, CustomStringConvertible {
    case socket(String, Int32)
    case tooLong
    case noReply
    case badReply

    public var description: String {
        switch self {
        case .socket(let what, let code): "sway's IPC socket: \(what): \(String(cString: strerror(code)))"
        case .tooLong: "sway's IPC: the command is too long"
        case .noReply: "sway's IPC: no reply within 2 s"
        case .badReply: "sway's IPC: a reply that is not i3-ipc"
        }
    }
}

/// sway's IPC (i3's): a message is `i3-ipc`, the payload's length and the message type (32-bit, the host's
/// byte order), then the payload. One connection per command, closed after the reply; each wait bounded.
enum SwayIPC {
    static let magic = Array("i3-ipc".utf8)
    static let runCommandType: UInt32 = 0
    /// The longest reply read (a command's reply is a short JSON array).
    static let replyLimit = 64 * 1024

    /// Runs `command` (`RUN_COMMAND`) and returns sway's JSON reply.
    static func runCommand(_ command: String, socketPath: String) throws(SwayIPCError) -> String {
        let payload = Array(command.utf8)
        guard payload.count < 1 << 20 else { throw .tooLong }
        let fd = try connect(socketPath)
        defer { close(fd) }
        var message = magic
        withUnsafeBytes(of: UInt32(payload.count)) { message += $0 }
        withUnsafeBytes(of: runCommandType) { message += $0 }
        message += payload
        try writeAll(fd, message)
        let header = try read(fd, count: magic.count + 8)
        guard Array(header.prefix(magic.count)) == magic else { throw .badReply }
        let length = header[magic.count..<magic.count + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        guard length <= replyLimit else { throw .badReply }
        return String(decoding: try read(fd, count: Int(length)), as: UTF8.self)
    }

    /// A connected stream socket to `path`.
    private static func connect(_ path: String) throws(SwayIPCError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket("socket", errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .socket("connect \(path)", ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let code = errno
            close(fd)
            throw .socket("connect \(path)", code)
        }
        return fd
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SwayIPCError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .socket("send", errno)
            }
            sent += n
        }
    }

    /// Exactly `count` bytes, each wait at most 2 s.
    private static func read(_ fd: Int32, count: Int) throws(SwayIPCError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, 2000)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .socket("poll", errno)
            }
            guard ready > 0 else { throw .noReply }
            let n = buffer[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .socket("recv", errno)
            }
            guard n > 0 else { throw .noReply }
            got += n
        }
        return buffer
    }
}
