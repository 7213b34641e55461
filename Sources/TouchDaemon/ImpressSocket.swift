#if canImport(Glibc)
import Glibc
#endif

/// The socket calls of the Impress client (`ImpressLink`), one place each: a TCP connection to a port
/// of 127.0.0.1, read and written without waiting. On failure they return -1 with `errno` set.
enum ImpressSocket {
    /// The outcome of starting a connection.
    enum Connecting {
        /// Connected already (the loopback often connects at once).
        case connected
        /// Under way: the socket becomes writable when it is done (`finishConnect` says how).
        case inProgress
        /// Refused or failed: the socket is to be closed; `errno`'s words.
        case failed(String)
    }

    /// A non-blocking, close-on-exec TCP socket. The corresponding C function is `socket`.
    static func open() -> Int32 {
        Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    }

    /// Starts connecting `fd` to 127.0.0.1:`port`. The corresponding C function is `connect`.
    static func connect(_ fd: Int32, loopbackPort port: UInt16) -> Connecting {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result == 0 { return .connected }
        if errno == EINPROGRESS { return .inProgress }
        return .failed(words(errno))
    }

    /// How a connection under way ended: nil when it is connected, else the error's words. The
    /// corresponding C function is `getsockopt` (`SO_ERROR`).
    static func finishConnect(_ fd: Int32) -> String? {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return words(errno) }
        return error == 0 ? nil : words(error)
    }

    /// Reads up to `count` bytes into `buffer`: their number, 0 at the end, -1 with `errno`. The
    /// corresponding C function is `read`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        Glibc.read(fd, buffer, count)
    }

    /// Writes `bytes`: how many went, or -1 with `errno`. The corresponding C function is `send`
    /// (with `MSG_NOSIGNAL`: a closed peer is an error, not a SIGPIPE).
    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The corresponding C function is `close`.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Closes `fd` with a reset instead of a FIN (`SO_LINGER` on, 0 s), for a connection Impress closed
    /// first. Its end of it then goes at once: with a FIN it would wait 60 s in TIME_WAIT, and Impress
    /// (which binds port 1599 without `SO_REUSEADDR`) could not listen again until then, so an Impress
    /// restarted after a crash or a quit would find its remote control dead for a minute. The
    /// corresponding C function is `setsockopt`.
    static func reset(_ fd: Int32) {
        var abort = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }

    /// `code`'s words. The corresponding C function is `strerror`.
    static func words(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
