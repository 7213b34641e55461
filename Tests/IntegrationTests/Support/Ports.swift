// Free ports on 127.0.0.1, for listeners whose option takes 0 to mean "off" (TUIO, web) or that must
// keep one fixed port across a restart.
import Foundation
import Glibc

/// A port of `type` (SOCK_DGRAM or SOCK_STREAM) free on 127.0.0.1 now: bound to port 0, read back,
/// closed. Another process taking it meanwhile makes the daemon fail loudly at bind (exit 71).
func freePort(_ type: __socket_type) throws -> UInt16 {
    let fd = socket(AF_INET, Int32(type.rawValue), 0)
    guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard ok else { throw RigError("bind(127.0.0.1:0): \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}

func freeUDPPort() throws -> UInt16 { try freePort(SOCK_DGRAM) }
func freeTCPPort() throws -> UInt16 { try freePort(SOCK_STREAM) }
