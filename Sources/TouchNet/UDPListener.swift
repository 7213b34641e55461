#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Logging
import NIOCore
import TouchCore

/// The source of one datagram: the raw address `recvmmsg` gave (the handshake is sent back to it), and
/// the core's pure address value made from it without formatting anything. `description` formats it,
/// for a log line.
public struct DatagramSource: CustomStringConvertible {
    public let raw: sockaddr_storage
    public let length: socklen_t
    /// Nil for an address family other than IPv4 and IPv6.
    public let address: SourceAddress?

    public init(raw: sockaddr_storage, length: socklen_t) {
        self.raw = raw
        self.length = length
        address = withUnsafeBytes(of: raw) { Self.sourceAddress($0) }
    }

    /// The same source as a NIO address (tests give datagrams from made-up addresses with it).
    public init(_ address: SocketAddress) {
        var storage = sockaddr_storage()
        let length = address.withSockAddr { pointer, length in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: length)) }
            return socklen_t(length)
        }
        self.init(raw: storage, length: length)
    }

    private static func sourceAddress(_ bytes: UnsafeRawBufferPointer) -> SourceAddress? {
        switch Int32(bytes.load(as: sa_family_t.self)) {
        case AF_INET:
            let v4 = bytes.load(as: sockaddr_in.self)
            return SourceAddress(ipv4: UInt32(bigEndian: v4.sin_addr.s_addr), port: UInt16(bigEndian: v4.sin_port))
        case AF_INET6:
            let v6 = bytes.load(as: sockaddr_in6.self)
            return withUnsafeBytes(of: v6.sin6_addr) { SourceAddress(bytes: $0, port: UInt16(bigEndian: v6.sin6_port)) }
        default:
            return nil
        }
    }

    private static func text(_ cString: [CChar]) -> String {
        String(decoding: cString.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// As NIO writes an address (`[IPv4]192.168.1.20/192.168.1.20:50000`): for the drop lines.
    public var description: String {
        guard let address else { return "an address of family \(raw.ss_family)" }
        let bytes = withUnsafeBytes(of: (address.high.bigEndian, address.low.bigEndian)) { Array($0) }
        let (family, ip) = Int32(raw.ss_family) == AF_INET ? (AF_INET, Array(bytes[12...])) : (AF_INET6, bytes)
        var host = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(family, ip, &host, socklen_t(host.count)) != nil,
              let nio = try? SocketAddress(ipAddress: Self.text(host), port: Int(address.port))
        else { return "an address of family \(raw.ss_family)" }
        return "\(nio)"
    }
}

/// What a UDP listener hands each datagram to, on the Bridge's loop.
public protocol DatagramHandler: AnyObject {
    /// Reading starts: on the loop, before the first datagram.
    func attached()
    /// One datagram (`bytes` only valid during the call) from `source`, read at `now`. Returns what to
    /// send back to `source`, if anything.
    func datagram(_ bytes: UnsafeRawBufferPointer, from source: DatagramSource, at now: Instant) -> [UInt8]?
    /// The listener closed (shutdown).
    func closed()
}

/// A UDP socket read on the Bridge's own loop (`BridgeEventLoop`): each time it is readable, one
/// `recvmmsg` of up to `datagramsPerRead` datagrams into buffers made once, each handed to the handler
/// with its raw source; what the handler answers goes back with one `sendto`. Nothing is allocated per
/// datagram. On the loop only, from `open` to `close`.
public final class UDPListener {
    /// The socket (the listener closes it).
    public let socket: Int32
    /// The port the socket is bound to (the system's choice when asked for 0).
    public let port: Int
    private let loop: BridgeEventLoop
    private let handler: any DatagramHandler
    private let logger: Logger
    private let datagramsPerRead: Int
    private let slotBytes: Int
    private let buffers: UnsafeMutableRawPointer
    private let vectors: UnsafeMutablePointer<iovec>
    private let sources: UnsafeMutablePointer<sockaddr_storage>
    private let messages: UnsafeMutablePointer<tb_mmsghdr>
    private var open = true

    /// Creates the socket on `host:port` (port 0: the system picks a free one), gives it to `prepare`
    /// before it is bound (the kernel's source filter), binds it, and reads it on `loop`. On the loop.
    /// - Parameters:
    ///   - slotBytes: the largest datagram read whole; a bigger one is cut to this size (a decoder with a
    ///     limit one byte below it then refuses it).
    ///   - datagramsPerRead: datagrams read by one `recvmmsg` per wake-up: the phone's one datagram in one
    ///     call, and a flood drained as fast as NIO's four reads per wake-up did.
    public init(loop: BridgeEventLoop, host: String, port: Int, slotBytes: Int, datagramsPerRead: Int,
                handler: any DatagramHandler, logger: Logger, prepare: (Int32) -> Void = { _ in }) throws {
        loop.preconditionInEventLoop()
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let fd = Glibc.socket(address.protocol.rawValue, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        prepare(fd)
        // No SO_REUSEADDR: for UDP on Linux it would let a second daemon bind the same port and
        // silently share the phone's datagrams; a port in use must be an error.
        let rc = address.withSockAddr { Glibc.bind(fd, $0, socklen_t($1)) }
        guard rc == 0 else {
            let error = IOError(errnoCode: errno, reason: "bind(\(address))")
            Glibc.close(fd)
            throw error
        }
        var bound = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &boundLength) }
        }
        self.port = DatagramSource(raw: bound, length: boundLength).address.map { Int($0.port) } ?? port
        socket = fd
        self.loop = loop
        self.handler = handler
        self.logger = logger
        self.datagramsPerRead = datagramsPerRead
        self.slotBytes = slotBytes
        buffers = UnsafeMutableRawPointer.allocate(byteCount: slotBytes * datagramsPerRead, alignment: 16)
        vectors = UnsafeMutablePointer<iovec>.allocate(capacity: datagramsPerRead)
        sources = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: datagramsPerRead)
        messages = UnsafeMutablePointer<tb_mmsghdr>.allocate(capacity: datagramsPerRead)
        for i in 0..<datagramsPerRead {
            vectors[i] = iovec(iov_base: buffers + i * slotBytes, iov_len: slotBytes)
        }
        handler.attached()
        do {
            try loop.watch(fd) { [unowned self] in self.readable() }
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit {
        buffers.deallocate()
        vectors.deallocate()
        sources.deallocate()
        messages.deallocate()
    }

    /// One `recvmmsg`; level-triggered, so what is left makes the loop call again.
    private func readable() {
        guard open else { return }
        for i in 0..<datagramsPerRead {
            var header = msghdr()
            header.msg_name = UnsafeMutableRawPointer(sources + i)
            header.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            header.msg_iov = vectors + i
            header.msg_iovlen = 1
            messages[i] = tb_mmsghdr(msg_hdr: header, msg_len: 0)
        }
        let count = tb_recvmmsg(socket, messages, UInt32(datagramsPerRead), Int32(MSG_DONTWAIT))
        guard count > 0 else {
            // EAGAIN: another wake-up took it. A UDP socket reports ICMP errors (the phone's port
            // closed) as read errors: not fatal.
            if count < 0, errno != EAGAIN, errno != EINTR { logger.debug("UDP socket error: \(String(cString: strerror(errno)))") }
            return
        }
        let now = Instant(nanoseconds: LoopState.monotonicNow())
        for i in 0..<Int(count) {
            let source = DatagramSource(raw: sources[i], length: messages[i].msg_hdr.msg_namelen)
            let bytes = UnsafeRawBufferPointer(start: buffers + i * slotBytes, count: Int(messages[i].msg_len))
            guard let reply = handler.datagram(bytes, from: source, at: now), open else { continue }
            send(reply, to: source)
        }
    }

    private func send(_ reply: [UInt8], to source: DatagramSource) {
        var raw = source.raw
        let sent = reply.withUnsafeBytes { bytes in
            withUnsafePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(socket, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, source.length)
                }
            }
        }
        if sent < 0 { logger.debug("UDP socket error on sending: \(String(cString: strerror(errno)))") }
    }

    /// Stops reading, tells the handler (its summary) and closes the socket. On the loop; once.
    public func close() {
        loop.preconditionInEventLoop()
        guard open else { return }
        open = false
        loop.unwatch(socket)
        handler.closed()
        Glibc.close(socket)
    }
}

extension SourceAddress {
    /// A NIO address (a WebSocket's peer), as the core's pure address value.
    public init?(_ address: SocketAddress) {
        guard let source = DatagramSource(address).address else { return nil }
        self = source
    }
}
