// Plain sockets on 127.0.0.1 for the lifecycle tests: the phone's side, a port someone else holds, and the
// check that a port is free again.
#if canImport(Glibc)
import Glibc
#endif

struct SocketError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// A socket, closed when it goes.
final class Socket {
    enum Kind: Sendable { case udp, tcp }

    let fd: Int32

    init(_ kind: Kind) throws {
        fd = socket(AF_INET, Int32(kind == .udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
    }

    deinit { close(fd) }

    private static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    /// Binds 127.0.0.1:`port` (0: any free one), and listens when asked (TCP).
    func bind(_ port: Int, listen: Bool = false) throws {
        var address = Self.loopback(port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw SocketError(call: "bind \(port)", code: errno) }
        if listen, Glibc.listen(fd, 1) != 0 { throw SocketError(call: "listen", code: errno) }
    }

    /// The port it is bound to.
    var port: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Sends `text` as one datagram to 127.0.0.1:`port`.
    func send(_ text: String, to port: Int) throws {
        var address = Self.loopback(port)
        let bytes = Array(text.utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == bytes.count else { throw SocketError(call: "sendto", code: errno) }
    }

    /// A port free now on 127.0.0.1 (the system's pick, released at once).
    static func freePort(_ kind: Kind) throws -> Int {
        let socket = try Socket(kind)
        try socket.bind(0)
        return socket.port
    }
}
