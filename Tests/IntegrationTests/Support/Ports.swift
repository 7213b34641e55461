// Free ports on 127.0.0.1, for listeners whose option takes 0 to mean "off" (TUIO, web) or that must
// keep one fixed port across a restart.
import Foundation
import Glibc

/// A port of `type` (SOCK_DGRAM or SOCK_STREAM) free on 127.0.0.1 now, below the kernel's ephemeral
/// range (`ip_local_port_range`): a port handed out by binding port 0 is the next `bind(0)` anywhere's to
/// take as soon as it is closed, and the daemon under test binds its own UDP listener to port 0 first
/// (CI once had its PoseAI listener take the TUIO port picked for it). Candidates from 20000 up, at
/// random, each checked by binding it; the range's start is read once. Another process taking the port
/// meanwhile still makes the daemon fail loudly at bind (exit 71).
func freePort(_ type: __socket_type) throws -> UInt16 {
    let low = ephemeralPortsStart
    guard low > 20_001 else { return try boundPort(type, 0) }
    for _ in 0..<200 {
        if let port = try? boundPort(type, UInt16.random(in: 20_000..<low)) { return port }
    }
    throw RigError("no free port on 127.0.0.1 among 200 tried from 20000 to \(low - 1)")
}

/// The first port of the kernel's ephemeral range (32768 when it cannot be read: the kernel's default).
private let ephemeralPortsStart: UInt16 = {
    guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
          let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
          let port = UInt16(first)
    else { return 32_768 }
    return port
}()

/// `port` (0: one the kernel picks) bound on 127.0.0.1 and read back, then closed.
private func boundPort(_ type: __socket_type, _ port: UInt16) throws -> UInt16 {
    let fd = socket(AF_INET, Int32(type.rawValue), 0)
    guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard ok else { throw RigError("bind(127.0.0.1:\(port)): \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}

func freeUDPPort() throws -> UInt16 { try freePort(SOCK_DGRAM) }
func freeTCPPort() throws -> UInt16 { try freePort(SOCK_STREAM) }

/// Throws unless TCP `port` can be bound on 127.0.0.1 now as a server that sets no `SO_REUSEADDR` binds
/// it (LibreOffice Impress's remote server on 1599): a connection of that port left in TIME_WAIT stops it.
func bindTCPPortWithoutReuse(_ port: UInt16) throws {
    _ = try boundPort(SOCK_STREAM, port)
}
