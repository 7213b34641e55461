// Admission: who may connect to the web server, and how many, decided at accept, before TLS and the
// HTTP handlers exist (`AdmittedChannel`). The server's limits (`WebServer.Limits`) are here too.
//
// A source outside --allow is closed at once: this is the one allow-list check of a connection (the
// routes, the upgrade gate and the WebSocket never see a peer that was not admitted). Connections are
// capped per address (an IPv6 /64 counts as one address) and in total. When a cap is reached, the
// oldest connection that has not yet sent a whole request head (or sits idle between requests) is
// closed to make room; a connection that is answering a request or carries the page's WebSocket is
// never evicted; if none can go, the new one is refused. A half-open flood from an allowed address
// therefore cannot lock out the paired page: the page's connection is the newest and finishes its
// head at once. How long a head may take and how large it may be: HTTPHeadGuard.swift.
//
// The table belongs to the server's one event loop (every child channel is on it): no lock, the loop
// is the only thread that touches it (`NIOLoopBoundBox` checks that in debug builds).
import Logging
import NIOCore
import HummingbirdCore
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
        /// Each connection's receive window at most (TCP_WINDOW_CLAMP): what a page sends faster than it
        /// is read waits in the page's own socket, not in ours, so nothing read is old (16 KiB: about 80
        /// moves, 5 ms of a 15,000-a-second blast). The page sends about 12 KB/s; a head is at most 16 KiB.
        public static let receiveWindowBytes = 16 * 1024
        /// Each connection's socket receive buffer (SO_RCVBUF; the kernel doubles it): the memory the
        /// window's bytes take in the kernel. A page sends a segment per message, a few hundred bytes each,
        /// and each costs the kernel about a KiB: when this was the bound on the window too (16 KiB),
        /// a burst of 300 moves over loopback outgrew it, the kernel dropped segments it had already
        /// let in (TcpExtRcvPruned, TCPRcvQDrop) and the page's TCP resent them only after its 200 ms
        /// timeout: 3 bursts in 10 stalled 214 ms, against none of 30 with this buffer and the window
        /// above. (8 KiB was tried before: loopback TCP stalled for hundreds of milliseconds at a time
        /// under a blast; 16 KiB stalled too, until `maxSegmentBytes`.)
        public static let receiveBufferBytes = 64 * 1024
        /// The largest TCP segment a peer may send us (TCP_MAXSEG on the listening socket, announced in
        /// every SYN-ACK): Ethernet's and Wi-Fi's, what a phone sends anyway. Over loopback (MTU 64 KiB) a
        /// peer's segment (32,768 bytes: half the first window it saw) was larger than the largest window
        /// the buffer above ever opens (31,744 bytes): Linux's sender then sends nothing until its
        /// zero-window probe timer fires (200 ms and up), so a page's blast was read at about 150 KB/s and
        /// its backlog grew in the page's own socket. Segments that fit the window many
        /// times over go out as soon as a read reopens it.
        public static let maxSegmentBytes = 1448
        /// How long a TLS connection the server closes waits for the peer's close_notify. NIOSSL keeps the
        /// whole connection (its pipeline, the TLS state, the buffers: tens of KB) until this has passed
        /// even when the peer has already gone (its timer is not cancelled when the socket closes), and
        /// those connections are no longer counted by the limits above: at NIOSSL's default of 5 s, a
        /// flood of handshakes from an allowed address held hundreds of MB.
        public static let tlsShutdownTimeout: TimeAmount = .milliseconds(100)
        /// TCP keepalive on every connection (SO_KEEPALIVE): after 30 s without traffic the kernel probes the
        /// peer every 10 s, and closes the connection after 3 unanswered probes, so a phone that vanished
        /// (Wi-Fi gone, no FIN) frees its connection within a minute, as the WebSocket auto-ping did (a ping
        /// every 30 s, closed when the next found no pong). Kernel timers: the daemon itself never wakes for it.
        public static let keepAlive = (idleSeconds: 30, intervalSeconds: 10, probes: 3)
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

/// Every open connection of the server, by address; decides admission and eviction. Used on the
/// server's loop only.
final class ConnectionTable {
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
    private var state = State()
    let logger: Logger

    init(perAddress: Int = WebServer.Limits.connectionsPerAddress, total: Int = WebServer.Limits.connections, logger: Logger) {
        self.perAddress = perAddress
        self.total = total
        self.logger = logger
    }

    var count: Int { state.entries.count }

    /// Admits `channel` from `source` (allowed) or says why not; at most one older connection is
    /// named to close (the caller closes it).
    func admit(_ channel: any Channel, from source: SourceAddress) -> Decision {
        let key = HostKey(source)
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

    private static func oldestEvictable(in entries: [ObjectIdentifier: Entry], key: HostKey?) -> ObjectIdentifier? {
        var best: (id: ObjectIdentifier, serial: UInt64)?
        for (id, entry) in entries where entry.evictable && (key == nil || entry.key == key) {
            if best == nil || entry.serial < best!.serial { best = (id, entry.serial) }
        }
        return best?.id
    }

    func setEvictable(_ channel: any Channel, _ evictable: Bool) {
        state.entries[ObjectIdentifier(channel)]?.evictable = evictable
    }

    func release(_ channel: any Channel) {
        release(ObjectIdentifier(channel))
    }

    /// The channel's place goes to `token`, never evicted, until `release(token)`: its socket was handed
    /// to the Bridge's loop (BridgeWebSocket.swift), and the channel's close gives back nothing.
    func handOver(_ channel: any Channel, to token: AnyObject) {
        guard var entry = state.entries.removeValue(forKey: ObjectIdentifier(channel)) else { return }
        entry.evictable = false
        state.entries[ObjectIdentifier(token)] = entry
    }

    /// The end of a handed-over socket (`handOver`).
    func release(_ token: AnyObject) {
        release(ObjectIdentifier(token))
    }

    private func release(_ id: ObjectIdentifier) {
        guard let entry = state.entries.removeValue(forKey: id) else { return }
        state.perKey[entry.key, default: 1] -= 1
        if state.perKey[entry.key] == 0 { state.perKey[entry.key] = nil }
    }

    /// One line per reason per 10 s, with counts; `now` is the loop's (`EventLoop.now`).
    func log(_ reason: ConnectionRefusal, _ peer: String, at now: NIODeadline) {
        guard let report = state.log.record(reasonIndex: reason.rawValue, at: Instant(nanoseconds: now.uptimeNanoseconds)) else { return }
        logger.warning("closed an HTTP connection from \(peer): \(reason)\(report.countsSuffix)")
    }
}

/// The admission check in front of the whole child channel (TLS included): the allow-list, then the
/// table's caps. Its setup runs on the server's loop, the table's owner.
struct AdmittedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let allowList: AllowList
    let table: NIOLoopBoundBox<ConnectionTable>

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let connections = table.value
        let now = channel.eventLoop.now
        guard let remote = channel.remoteAddress, let source = SourceAddress(remote), allowList.allows(source) else {
            channel.close(mode: .all, promise: nil)
            connections.log(.outsideAllowList, channel.remoteAddress?.ipAddress ?? "?", at: now)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        switch connections.admit(channel, from: source) {
        case .refuse(let reason):
            channel.close(mode: .all, promise: nil)
            connections.log(reason, source.addressDescription, at: now)
            return channel.eventLoop.makeFailedFuture(Refused())
        case .admit(let evicting):
            if let evicting {
                evicting.close(mode: .all, promise: nil)
                connections.log(.evicted, evicting.remoteAddress?.ipAddress ?? "?", at: now)
            }
        }
        let table = self.table
        channel.closeFuture.whenComplete { _ in table.value.release(channel) }
        try? channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_rcvbuf), value: WebServer.Limits.receiveBufferBytes)
        try? channel.syncOptions?.setOption(WebServer.windowClampOption, value: WebServer.Limits.receiveWindowBytes)
        try? channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
        for (option, value) in WebServer.keepAliveOptions {
            try? channel.syncOptions?.setOption(option, value: value)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
