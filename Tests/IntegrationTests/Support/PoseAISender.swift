// The phone side: PoseAI touch packets (JSON over UDP) to the daemon, from a socket bound to
// 127.0.0.1 (or another loopback address, to play a second or unauthorised sender) so the daemon's
// answers (the handshake) come back to it.
import Glibc
import TouchTestSupport

// The packets' text is TouchTestSupport's (`PoseAIText`), named here for the whole test module.
typealias PoseAITouch = TouchTestSupport.PoseAITouch
typealias PoseAISlot = TouchTestSupport.PoseAISlot
typealias PoseAIText = TouchTestSupport.PoseAIText

final class PoseAISender {
    let fd: Int32
    let port: UInt16
    private var target: sockaddr_in

    /// The address the socket is bound to (a 127.0.0.0/8 address).
    let source: String

    init(port: UInt16, host: String = "127.0.0.1", source: String = "127.0.0.1") throws {
        self.source = source
        self.port = port
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
        self.fd = fd
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = 0
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw RigError("bind(\(source):0): \(String(cString: strerror(errno)))")
        }
        var bufferSize: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = inet_addr(host == "0.0.0.0" ? "127.0.0.1" : host)
        self.target = target
    }

    deinit { close(fd) }

    /// The phone's hello.
    static func hello(session: String = "3F2504E0-4F89-11D3-9A0C-0305E82C3301", userName: String = "test") -> String {
        "{\"sessionUUID\":\"\(session)\",\"version\":\"1\",\"userName\":\"\(userName)\",\"deviceName\":\"rig\"}"
    }

    // MARK: Sending and receiving

    /// Sends one datagram; returns the CLOCK_MONOTONIC stamp (ns) taken just before `sendto`.
    @discardableResult
    func send(_ json: String) throws -> UInt64 { try send(bytes: Array(json.utf8)) }

    @discardableResult
    func send(bytes: [UInt8]) throws -> UInt64 {
        let stamp = MonotonicClock.now()
        let sent = bytes.withUnsafeBytes { buf in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buf.baseAddress, buf.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == bytes.count else {
            throw RigError("sendto(127.0.0.1:\(port), \(bytes.count) bytes): "
                + (sent < 0 ? String(cString: strerror(errno)) : "sent only \(sent)"))
        }
        return stamp
    }

    /// A packet with these touch events and this state.
    @discardableResult
    func send(touches: [PoseAITouch], state: [Int: PoseAISlot]?) throws -> UInt64 {
        try send(PoseAIText.packet(touches: PoseAIText.touches(touches), touchState: state.map(PoseAIText.touchState)))
    }

    /// The next datagram that arrives within `timeout` s, or nil.
    func receive(timeout: Double) -> [UInt8]? {
        let deadline = MonotonicClock.deadline(after: timeout)
        while true {
            let now = MonotonicClock.now()
            if now >= deadline { return nil }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&pfd, 1, Int32(max(1, (deadline - now) / 1_000_000)))
            if r < 0 && errno == EINTR { continue }
            if r <= 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 { return Array(buffer[0..<n]) }
            if errno == EINTR || errno == EAGAIN { continue }
            return nil
        }
    }
}
