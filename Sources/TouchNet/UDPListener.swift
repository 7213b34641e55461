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
    /// Reading starts: on the loop, before the first datagram. `senderSockets` (the listener, held
    /// weakly) gives the sender a socket of its own when the handler asks.
    func attached(_ senderSockets: any SenderSockets)
    /// One datagram (`bytes` only valid during the call) from `source`, read at `now`. Returns what to
    /// send back to `source`, if anything.
    func datagram(_ bytes: UnsafeRawBufferPointer, from source: DatagramSource, at now: Instant) -> [UInt8]?
    /// The listener closed (shutdown).
    func closed()
}

/// A listener's socket of the sender's own: asked for by its handler when a datagram the handler
/// passed on made its source the sender, closed when the sender changes or goes. On the loop.
public protocol SenderSockets: AnyObject {
    /// From now on `source`'s datagrams to the listener's port queue on a socket of their own, read
    /// as the listening socket's are (any previous sender's socket is closed first).
    func openSenderSocket(for source: DatagramSource)
    /// The sender's socket, if any, is closed: its datagrams queue on the listening socket again.
    func closeSenderSocket()
}

/// A UDP socket read on the Bridge's own loop (`BridgeEventLoop`): each time it is readable, one
/// `recvmmsg` of up to `datagramsPerRead` datagrams into buffers made once, each handed to the handler
/// with its raw source; what the handler answers goes back with one `sendto`. Nothing is allocated per
/// datagram. On the loop only, from `open` to `close`.
///
/// Once a sender holds the session, its datagrams get a socket of their own (`openSenderSocket`): a
/// second socket bound to the same address and port and `connect`ed to the sender. The kernel gives a
/// connected socket the datagrams of its 4-tuple and the listening socket everyone else's, so a flood
/// from other ports and addresses fills the listening socket's receive queue, not the sender's, and the
/// loop reads both (each readable socket once a turn; the first time the sender's socket is read, the
/// listening socket's backlog before it, so that the sender's datagrams keep their order). To bind the
/// second socket, `SO_REUSEPORT` is set on both sockets for the `bind` and cleared at once after the
/// `connect`: a second daemon binding the port is still refused (`EADDRINUSE`), and no unconnected
/// socket joins the group to take a share of the listening socket's datagrams. Replies go out from the listening socket (the same port).
public final class UDPListener: SenderSockets {
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
    /// The address the listening socket is bound to (the port the system's when asked for 0): the
    /// sender's socket is bound to the same.
    private let bound: sockaddr_storage
    private let boundLength: socklen_t
    /// The sender's own socket, connected to it, while a sender holds the session.
    private var senderSocket: (fd: Int32, peer: SourceAddress)?
    /// The sender's socket is new and not read yet: the listening socket may hold the sender's datagrams
    /// from before its `connect` (`readable` reads them first).
    private var senderBacklog = false
    /// Datagrams the kernel dropped on the sender sockets closed so far (`SO_MEMINFO`).
    private var closedSenderSocketDrops: UInt64 = 0
    /// The listener's name in its log lines (`poseai-udp`, `tuio-udp`).
    private let name: String

    /// Creates the socket on `host:port` (port 0: the system picks a free one), gives it to `prepare`
    /// before it is bound (the kernel's source filter), binds it, and reads it on `loop`. On the loop.
    /// - Parameters:
    ///   - slotBytes: the largest datagram read whole; a bigger one is cut to this size (a decoder with a
    ///     limit one byte below it then refuses it).
    ///   - datagramsPerRead: datagrams read by one `recvmmsg` per wake-up: the phone's one datagram in one
    ///     call, and a flood drained as fast as NIO's four reads per wake-up did.
    ///   - name: the listener's name in its log lines (`poseai-udp`, `tuio-udp`).
    public init(loop: BridgeEventLoop, host: String, port: Int, slotBytes: Int, datagramsPerRead: Int,
                handler: any DatagramHandler, logger: Logger, name: String = "udp",
                prepare: (Int32) -> Void = { _ in }) throws {
        loop.preconditionInEventLoop()
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        var requested = sockaddr_storage()
        let requestedLength = address.withSockAddr { pointer, length in
            withUnsafeMutableBytes(of: &requested) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: length)) }
            return socklen_t(length)
        }
        let fd = UDPSocket.open(family: address.protocol.rawValue)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        prepare(fd)
        // No SO_REUSEADDR, and SO_REUSEPORT only while the sender's socket is bound: either would let a
        // second daemon bind the same port and silently share the phone's datagrams; a port in use
        // must be an error.
        guard UDPSocket.bind(fd, to: requested, length: requestedLength) == 0 else {
            let error = IOError(errnoCode: errno, reason: "bind(\(address))")
            UDPSocket.close(fd)
            throw error
        }
        var bound = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &boundLength) }
        }
        self.bound = bound
        self.boundLength = boundLength
        self.name = name
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
        handler.attached(self)
        do {
            try loop.watch(fd) { [unowned self] in self.readable(fd) }
        } catch {
            UDPSocket.close(fd)
            throw error
        }
    }

    deinit {
        buffers.deallocate()
        vectors.deallocate()
        sources.deallocate()
        messages.deallocate()
    }

    /// `fd` (the listening socket or the sender's) is readable: one `recvmmsg`; level-triggered, so what
    /// is left makes the loop call again. The first time the sender's new socket is read, the listening
    /// socket is read before it (`senderBacklog`): the sender's datagrams that came before the `connect`
    /// wait there, older than any on its own socket, and the Bridge gets them in the order they were sent
    /// (read in turns, a loaded daemon handed a phone's moves out of order: a scroll went back and forth).
    private func readable(_ fd: Int32) {
        guard open else { return }
        if senderBacklog, let own = senderSocket, own.fd == fd {
            senderBacklog = false
            var batches = 0
            while open, batches < Self.backlogBatches, read(socket) == datagramsPerRead { batches += 1 }
            // The handler may have given the socket to someone else meanwhile.
            guard open, senderSocket?.fd == fd else { return }
        }
        _ = read(fd)
    }

    /// At most this many reads of the listening socket for the sender's backlog before its own socket is
    /// read: a flood that keeps the listening socket full does not hold the sender's datagrams back.
    static let backlogBatches = 64

    /// One `recvmmsg` from `fd`, each datagram handed to the handler; how many were read (0: none, or an
    /// error). The handler may open or close the sender's socket meanwhile: the datagrams already read
    /// are all handed on (the buffers are the listener's).
    private func read(_ fd: Int32) -> Int {
        guard open else { return 0 }
        for i in 0..<datagramsPerRead {
            var header = msghdr()
            header.msg_name = UnsafeMutableRawPointer(sources + i)
            header.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            header.msg_iov = vectors + i
            header.msg_iovlen = 1
            messages[i] = tb_mmsghdr(msg_hdr: header, msg_len: 0)
        }
        let count = tb_recvmmsg(fd, messages, UInt32(datagramsPerRead), Int32(MSG_DONTWAIT))
        guard count > 0 else {
            // EAGAIN: another wake-up took it. A UDP socket reports ICMP errors (the phone's port
            // closed) as read errors: not fatal. The sender's socket, connected, gets its sender's.
            if count < 0, errno != EAGAIN, errno != EINTR { logger.debug("UDP socket error: \(String(cString: strerror(errno)))") }
            return 0
        }
        let now = Instant(nanoseconds: LoopState.monotonicNow())
        for i in 0..<Int(count) {
            let source = DatagramSource(raw: sources[i], length: messages[i].msg_hdr.msg_namelen)
            let bytes = UnsafeRawBufferPointer(start: buffers + i * slotBytes, count: Int(messages[i].msg_len))
            guard let reply = handler.datagram(bytes, from: source, at: now), open else { continue }
            send(reply, to: source)
        }
        return Int(count)
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

    // MARK: the sender's socket

    /// The sender the listener has a socket of its own for, if any (the tests, the log).
    public var senderSocketPeer: SourceAddress? { senderSocket?.peer }

    /// Datagrams the kernel dropped on the sender's sockets, those closed and the one open (`SO_MEMINFO`):
    /// a full receive queue of the sender's own.
    public var senderSocketDrops: UInt64 {
        closedSenderSocketDrops + UInt64(senderSocket.flatMap { KernelSourceFilter.kernelDrops($0.fd) } ?? 0)
    }

    public func openSenderSocket(for source: DatagramSource) {
        loop.preconditionInEventLoop()
        guard open, let peer = source.address else { return }
        if senderSocket?.peer == peer { return }
        closeSenderSocket()
        let fd = UDPSocket.open(family: Int32(bound.ss_family))
        guard fd >= 0 else { return refused("socket", errno, peer) }
        // SO_REUSEPORT on both for the bind, off again after the connect (see the type's comment).
        var failure: (call: String, errno: Int32)?
        if UDPSocket.setReusePort(socket, true) != 0 {
            failure = ("setsockopt(SO_REUSEPORT)", errno)
        } else if UDPSocket.setReusePort(fd, true) != 0 {
            failure = ("setsockopt(SO_REUSEPORT)", errno)
        } else if UDPSocket.bind(fd, to: bound, length: boundLength) != 0 {
            failure = ("bind", errno)
        } else if UDPSocket.connect(fd, to: source.raw, length: source.length) != 0 {
            failure = ("connect", errno)
        }
        _ = UDPSocket.setReusePort(fd, false)
        _ = UDPSocket.setReusePort(socket, false)
        if let failure {
            UDPSocket.close(fd)
            return refused(failure.call, failure.errno, peer)
        }
        do throws(IOError) {
            try loop.watch(fd) { [unowned self] in self.readable(fd) }
        } catch {
            UDPSocket.close(fd)
            return refused("epoll_ctl", error.errnoCode, peer)
        }
        senderSocket = (fd, peer)
        senderBacklog = true
        logger.debug("\(name): the sender \(source) has a socket of its own")
    }

    public func closeSenderSocket() {
        loop.preconditionInEventLoop()
        guard let own = senderSocket else { return }
        let (fd, peer) = (own.fd, own.peer)
        senderSocket = nil
        senderBacklog = false
        closedSenderSocketDrops += UInt64(KernelSourceFilter.kernelDrops(fd) ?? 0)
        loop.unwatch(fd)
        UDPSocket.close(fd)
        logger.debug("\(name): the socket of the sender \(peer) closed")
    }

    /// The sender's socket could not be made: its datagrams stay on the listening socket, as before.
    /// At most once per sender (a new sender needs a takeover).
    private func refused(_ call: String, _ code: Int32, _ peer: SourceAddress) {
        logger.warning("\(name): no socket of its own for the sender \(peer) (\(call): \(String(cString: strerror(code)))): its datagrams share the listening socket's queue")
    }

    /// Stops reading, tells the handler (its summary) and closes the sockets. On the loop; once.
    public func close() {
        loop.preconditionInEventLoop()
        guard open else { return }
        closeSenderSocket()
        open = false
        loop.unwatch(socket)
        handler.closed()
        UDPSocket.close(socket)
    }
}

/// The socket calls of the UDP listeners, one place each. On failure they return -1 with `errno` set.
enum UDPSocket {
    /// A non-blocking, close-on-exec datagram socket of `family`. The corresponding C function is `socket`.
    static func open(family: Int32) -> Int32 {
        Glibc.socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    }

    /// The corresponding C function is `bind`.
    static func bind(_ fd: Int32, to address: sockaddr_storage, length: socklen_t) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
    }

    /// The corresponding C function is `connect`.
    static func connect(_ fd: Int32, to address: sockaddr_storage, length: socklen_t) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
    }

    /// `SO_REUSEPORT` on or off. The corresponding C function is `setsockopt`.
    static func setReusePort(_ fd: Int32, _ on: Bool) -> Int32 {
        var value: Int32 = on ? 1 : 0
        return setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The corresponding C function is `close`.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}

extension SourceAddress {
    /// A NIO address (a WebSocket's peer), as the core's pure address value.
    public init?(_ address: SocketAddress) {
        guard let source = DatagramSource(address).address else { return nil }
        self = source
    }
}
