// What the web server does before any HTTP parsing: who may connect, how many, and how long a
// request head may take.
//
// Admission (`AdmittedChannel`, at accept, before TLS and HTTP handlers exist): a source outside
// --allow is closed at once; connections are capped per address (an IPv6 /64 counts as one address)
// and in total. When a cap is reached, the oldest connection that has not yet sent a whole request
// head (or sits idle between requests) is closed to make room; a connection that is answering a
// request or carries the page's WebSocket is never evicted; if none can go, the new one is refused.
// A half-open flood from an allowed address therefore cannot lock out the paired page: the page's
// connection is the newest and finishes its head at once.
//
// The head guard (`HTTPHeadGuard`, first handler after TLS, sees plaintext bytes): a request head must
// be whole within `Limits.headTimeout` of its first byte (the first head: of the accept); a connection
// idle between requests is closed after `Limits.idleTimeout`; a head larger than `Limits.maxHeadBytes`
// gets 431 and a close. After a 101 (WebSocket upgrade) it steps aside: the WebSocket has its own ping.
//
// Everything here runs on the server's one event loop; the table has its own lock only because
// Hummingbird's setup closures are `Sendable`.
import Logging
import NIOCore
import HummingbirdCore
import NIOHTTP1
import Synchronization
import TouchCore
import TouchNet

extension WebServer {
    /// The web server's fixed limits on connections (see the README's security section).
    public enum Limits {
        /// Connections from one address (an IPv6 /64 counts as one address).
        public static let connectionsPerAddress = 16
        /// Connections from all addresses together.
        public static let connections = 256
        /// Time from accept (or a request's first byte) to the end of its head.
        public static let headTimeout: TimeAmount = .seconds(5)
        /// Time a keep-alive connection may sit between requests.
        public static let idleTimeout: TimeAmount = .seconds(30)
        /// The largest request head (request line and headers).
        public static let maxHeadBytes = 16 * 1024
        /// Each connection's socket receive buffer (SO_RCVBUF; the kernel doubles it): what a page sends
        /// faster than it is read waits in the page's own socket, not in ours, so nothing read is old.
        /// The page sends about 12 KB/s; a head is at most 16 KiB. (8 KiB was tried:
        /// loopback TCP then stalled for hundreds of milliseconds at a time under a blast.)
        public static let receiveBufferBytes = 16 * 1024
        /// How long a TLS connection the server closes waits for the peer's close_notify. NIOSSL keeps the
        /// whole connection (its pipeline, the TLS state, the buffers: tens of KB) until this has passed
        /// even when the peer has already gone (its timer is not cancelled when the socket closes), and
        /// those connections are no longer counted by the limits above: at NIOSSL's default of 5 s, a
        /// flood of handshakes from an allowed address held hundreds of MB.
        public static let tlsShutdownTimeout: TimeAmount = .milliseconds(100)
    }
}

/// An address as the limits count it: IPv4 whole, IPv6 by its /64 (one host usually has a whole /64).
public struct HostKey: Hashable, Sendable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(_ source: SourceAddress) {
        high = source.high
        low = source.isIPv4 ? source.low : 0
    }

    public var description: String {
        low == 0 && high != 0 ? SourceAddress(high: high, low: 0, port: 0).addressDescription + "/64"
            : SourceAddress(high: high, low: low, port: 0).addressDescription
    }
}

/// Why a connection was closed by the guard, for the rate-limited log.
enum ConnectionRefusal: Int, CaseIterable, CustomStringConvertible {
    case outsideAllowList, tooManyFromAddress, tooMany, evicted, headTimeout, headTooLarge

    var description: String {
        switch self {
        case .outsideAllowList: return "not in --allow"
        case .tooManyFromAddress: return "\(WebServer.Limits.connectionsPerAddress) connections from that address already, none idle"
        case .tooMany: return "\(WebServer.Limits.connections) connections already, none idle"
        case .evicted: return "closed an idle or unfinished connection to make room for a new one"
        case .headTimeout: return "no whole request head within \(WebServer.Limits.headTimeout.nanoseconds / 1_000_000_000) s"
        case .headTooLarge: return "request head larger than \(WebServer.Limits.maxHeadBytes / 1024) KiB (answered 431)"
        }
    }
}

/// Every open connection of the server, by address; decides admission and eviction.
final class ConnectionTable: Sendable {
    struct Entry {
        let channel: any Channel
        let key: HostKey
        let serial: UInt64
        /// Whether it may be closed to make room: no head yet, or idle between requests.
        var evictable = true
    }
    struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var perKey: [HostKey: Int] = [:]
        var serial: UInt64 = 0
        var log = DropLog<6>()
    }
    enum Decision {
        case admit(evicting: (any Channel)?)
        case refuse(ConnectionRefusal)
    }

    let perAddress: Int
    let total: Int
    private let state = Mutex(State())
    let logger: Logger

    init(perAddress: Int = WebServer.Limits.connectionsPerAddress, total: Int = WebServer.Limits.connections, logger: Logger) {
        self.perAddress = perAddress
        self.total = total
        self.logger = logger
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// Admits `channel` from `source` (allowed) or says why not; at most one older connection is
    /// named to close (the caller closes it, outside the lock).
    func admit(_ channel: any Channel, from source: SourceAddress) -> Decision {
        let key = HostKey(source)
        return state.withLock { state -> Decision in
            var evict: ObjectIdentifier?
            if state.perKey[key, default: 0] >= perAddress {
                guard let victim = Self.oldestEvictable(in: state.entries, key: key) else { return .refuse(.tooManyFromAddress) }
                evict = victim
            } else if state.entries.count >= total {
                guard let victim = Self.oldestEvictable(in: state.entries, key: nil) else { return .refuse(.tooMany) }
                evict = victim
            }
            var evicted: (any Channel)?
            if let evict, let entry = state.entries.removeValue(forKey: evict) {
                state.perKey[entry.key, default: 1] -= 1
                if state.perKey[entry.key] == 0 { state.perKey[entry.key] = nil }
                evicted = entry.channel
            }
            state.serial &+= 1
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, key: key, serial: state.serial)
            state.perKey[key, default: 0] += 1
            return .admit(evicting: evicted)
        }
    }

    private static func oldestEvictable(in entries: [ObjectIdentifier: Entry], key: HostKey?) -> ObjectIdentifier? {
        var best: (id: ObjectIdentifier, serial: UInt64)?
        for (id, entry) in entries where entry.evictable && (key == nil || entry.key == key) {
            if best == nil || entry.serial < best!.serial { best = (id, entry.serial) }
        }
        return best?.id
    }

    func setEvictable(_ channel: any Channel, _ evictable: Bool) {
        state.withLock { state in
            state.entries[ObjectIdentifier(channel)]?.evictable = evictable
        }
    }

    func release(_ channel: any Channel) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: ObjectIdentifier(channel)) else { return }
            state.perKey[entry.key, default: 1] -= 1
            if state.perKey[entry.key] == 0 { state.perKey[entry.key] = nil }
        }
    }

    /// One line per reason per 10 s, with counts.
    func log(_ reason: ConnectionRefusal, _ peer: String) {
        let now = Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds)
        guard let report = state.withLock({ $0.log.record(reasonIndex: reason.rawValue, at: now) }) else { return }
        logger.warning("closed an HTTP connection from \(peer): \(reason)\(report.countsSuffix)")
    }
}

/// The admission check in front of the whole child channel (TLS included).
struct AdmittedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let allowList: AllowList
    let table: ConnectionTable

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard let remote = channel.remoteAddress, let source = SourceAddress(remote), allowList.allows(source) else {
            channel.close(mode: .all, promise: nil)
            table.log(.outsideAllowList, channel.remoteAddress?.ipAddress ?? "?")
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        switch table.admit(channel, from: source) {
        case .refuse(let reason):
            channel.close(mode: .all, promise: nil)
            table.log(reason, source.addressDescription)
            return channel.eventLoop.makeFailedFuture(Refused())
        case .admit(let evicting):
            if let evicting {
                evicting.close(mode: .all, promise: nil)
                table.log(.evicted, evicting.remoteAddress?.ipAddress ?? "?")
            }
        }
        let table = self.table
        channel.closeFuture.whenComplete { _ in table.release(channel) }
        try? channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_rcvbuf), value: WebServer.Limits.receiveBufferBytes)
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Adds the head guard in front of the HTTP handlers of `Base` (after TLS when there is TLS), and the
/// upgrade gate right after the HTTP request decoder (before the WebSocket upgrader).
struct HeadGuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let table: ConnectionTable
    /// Whether a WebSocket upgrade request may go on to the upgrader; refused ones get 403.
    let mayUpgrade: @Sendable (HTTPRequestHead, SocketAddress?) -> Bool

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(HTTPHeadGuard(table: table))
        } catch {
            channel.close(mode: .all, promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
        let mayUpgrade = self.mayUpgrade
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(UpgradeGate(mayUpgrade: mayUpgrade), position: .after(decoder.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Answers a refused WebSocket upgrade with 403 and a close (Hummingbird's own answer would be 400);
/// steps out of the pipeline once it lets an upgrade through (the WebSocket replaces HTTP).
final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let mayUpgrade: @Sendable (HTTPRequestHead, SocketAddress?) -> Bool
    private var refusing = false

    init(mayUpgrade: @escaping @Sendable (HTTPRequestHead, SocketAddress?) -> Bool) {
        self.mayUpgrade = mayUpgrade
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        guard case .head(let head) = unwrapInboundIn(data), head.headers.contains(name: "upgrade") else {
            context.fireChannelRead(data)
            return
        }
        if mayUpgrade(head, context.channel.remoteAddress) {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        refusing = true
        let body = context.channel.allocator.buffer(string: "refused: pairing secret or origin\n")
        let headers = HTTPHeaders([("Connection", "close"), ("Content-Type", "text/plain"), ("Content-Length", String(body.readableBytes))])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .forbidden, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

/// Finds the end of an HTTP head in a byte stream: CRLF CRLF (a bare LF LF too, as the parser takes it).
struct HeadEndScanner {
    /// 0: inside a line; 1: just after a line's LF; 2: after LF then CR.
    private var state: UInt8 = 0

    /// Feeds one byte; true when it ends the head.
    mutating func feed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\n"):
            if state != 0 { state = 0; return true }
            state = 1
        case UInt8(ascii: "\r"):
            state = state == 1 ? 2 : (state == 2 ? 0 : state)
        default:
            state = 0
        }
        return false
    }

    mutating func reset() { state = 0 }
}

/// Deadlines and size limit for request heads; steps aside after a WebSocket upgrade.
final class HTTPHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Where the connection is.
    enum Phase {
        /// Reading a request head: `Limits.headTimeout` from its start.
        case head
        /// A whole head was read; the answer is not written yet.
        case request
        /// Answered; waiting for the next request: `Limits.idleTimeout`.
        case idle
        /// Answered 431; discarding input until the peer goes or the timer fires.
        case rejected
        /// Switched to WebSocket: no more deadlines here.
        case upgraded
    }

    private let table: ConnectionTable
    private(set) var phase = Phase.head
    private var headBytes = 0
    private var scanner = HeadEndScanner()
    private var timer: Scheduled<Void>?

    init(table: ConnectionTable) {
        self.table = table
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(WebServer.Limits.headTimeout, context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if timer == nil, phase == .head { arm(WebServer.Limits.headTimeout, context: context) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch phase {
        case .upgraded:
            context.fireChannelRead(data)
            return
        case .rejected:
            return
        case .idle:
            // The first byte of the next request: its head has `headTimeout` from now.
            phase = .head
            headBytes = 0
            arm(WebServer.Limits.headTimeout, context: context)
        case .head, .request:
            break
        }
        let buffer = unwrapInboundIn(data)
        var completedHead = false
        var tooLarge = false
        buffer.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                headBytes += 1
                if scanner.feed(byte) {
                    completedHead = true
                    headBytes = 0
                } else if headBytes > WebServer.Limits.maxHeadBytes {
                    tooLarge = true
                    break
                }
            }
        }
        if tooLarge {
            reject(context: context)
            return
        }
        if completedHead, phase == .head {
            phase = .request
            table.setEvictable(context.channel, false)
            // A safety net only: answers are immediate.
            arm(WebServer.Limits.idleTimeout, context: context)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if phase == .request || phase == .idle {
            if case .byteBuffer(let buffer) = unwrapOutboundIn(data), phase == .request,
               buffer.readableBytesView.starts(with: "HTTP/1.1 101 ".utf8) {
                phase = .upgraded
                timer?.cancel()
                timer = nil
            } else if phase == .request {
                phase = .idle
                table.setEvictable(context.channel, true)
                arm(WebServer.Limits.idleTimeout, context: context)
            }
        }
        context.write(data, promise: promise)
    }

    /// 431, then no more reading: the output is shut so the answer is read before the close.
    private func reject(context: ChannelHandlerContext) {
        phase = .rejected
        table.log(.headTooLarge, context.channel.remoteAddress?.ipAddress ?? "?")
        let text = "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        let answer = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(answer))).assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
        }
        arm(.seconds(2), context: context)
    }

    private func arm(_ delay: TimeAmount, context: ChannelHandlerContext) {
        timer?.cancel()
        let loopContext = context.loopBound
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            self.timer = nil
            let context = loopContext.value
            switch phase {
            case .head:
                table.log(.headTimeout, context.channel.remoteAddress?.ipAddress ?? "?")
                context.close(promise: nil)
            case .idle, .rejected:
                context.close(promise: nil)
            case .request:
                arm(WebServer.Limits.idleTimeout, context: context)
            case .upgraded:
                break
            }
        }
    }
}
