// Whether touchbridge could listen on a port now, and whether a touchbridge already answers there: for
// `touchbridge doctor`. The C calls (socket, setsockopt, bind, connect, send, recv, close, inet_pton) are
// each made here only.
import Glibc

enum PortProbe {
    enum Outcome: Equatable {
        case free
        case inUse
        case refused(String)
    }

    /// Binds a socket of `port`'s transport to `address`:`port`, as the daemon would (TCP with
    /// SO_REUSEADDR), and closes it at once.
    static func bind(_ port: ListeningPort, address: String) -> Outcome {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(port.transport == .tcp ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .refused(String(cString: strerror(errno))) }
        defer { close(fd) }
        var one: Int32 = 1
        if port.transport == .tcp { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let r = withAddress(address, port.number) { Glibc.bind(fd, $0, $1) }
        if r == 0 { return .free }
        return errno == EADDRINUSE ? .inUse : .refused(String(cString: strerror(errno)))
    }

    /// Whether a touchbridge's page answers `GET /healthz` with "ok" on 127.0.0.1:`port` within a second.
    static func touchbridgeAnswers(tcpPort: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var tv = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard withAddress("127.0.0.1", tcpPort, { connect(fd, $0, $1) }) == 0 else { return false }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return false }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while answer.count < 4096 {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            answer += buffer[..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        return text.hasPrefix("HTTP/1.1 200") && text.hasSuffix("\r\n\r\nok\n")
    }

    /// Calls `body` with `address`:`port` as a socket address (IPv4 or IPv6).
    private static func withAddress(_ address: String, _ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        if address.contains(":") {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = UInt16(clamping: port).bigEndian
            guard inet_pton(AF_INET6, address, &a.sin6_addr) == 1 else { errno = EINVAL; return -1 }
            return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(clamping: port).bigEndian
        guard inet_pton(AF_INET, address, &a.sin_addr) == 1 else { errno = EINVAL; return -1 }
        return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
}
