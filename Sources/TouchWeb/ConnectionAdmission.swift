// Admission: who may connect to the web server, and how many, decided at accept, before TLS and the
// HTTP handlers exist (`AdmittedChannel`). The server's limits (`WebServer.Limits`) are here too.
//
// A source outside --allow is closed at once: this is the one allow-list check of a connection (the
// routes, the upgrade gate and the WebSocket never see a peer that was not admitted). Connections are
// capped per address (an IPv6 /64 counts as one address) and in total. When a cap is reached, another
// connection is closed to make room, in this order: the oldest that has not sent a whole request head,
// sits idle between requests, or waits for its peer to read an answer (`HTTPHeadGuard`); else the
// oldest other connection that is not a paired WebSocket; else the paired WebSocket (a page) heard from
// longest ago, if that was `Limits.pageQuiet` or longer ago; if none can go, the new one is refused.
// Whatever an unpaired peer holds (unread answers, half-open sockets, slow heads, many addresses),
// the paired page's connection is therefore let in, and so is `/healthz`.
//
// Pages are bounded too: one address holds at most `Limits.pagesPerAddress` (a new one closes that
// address's page heard from longest ago, if `Limits.pageQuiet` ago or more, or is refused with 403), and a
// page from which no frame comes for `Limits.pageSilence` is closed (the page sends a `ping` every 2 s
// while it is visible). So pages that never send, with the secret, hold nothing for long, and the page
// that acts always gets a place. How long a head may take and how large it may be: HTTPHeadGuard.swift.
//
// The table belongs to the server's one event loop (every child channel is on it): no lock, the loop
// is the only thread that touches it (`NIOLoopBoundBox` checks that in debug builds). A page's last
// frame is an atomic (`PageActivity`): a plain page is read on the Bridge's loop.
import Logging
import Synchronization
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
        /// Time a keep-alive connection may sit between requests, and an answer may wait for its peer to
        /// read it (the connection may be closed to make room meanwhile).
        public static let idleTimeout: TimeAmount = .seconds(30)
        /// The largest request head (request line and headers).
        public static let maxHeadBytes = 16 * 1024
        /// Paired WebSockets (pages) from one address at most (an IPv6 /64 counts as one address): a phone
        /// has one page open; a few allow a tablet or a reload whose old socket has not ended yet.
        public static let pagesPerAddress = 4
        /// A page from which no whole frame (a message, a `ping`, anything) came for this long is closed.
        /// The page sends `ping` every 2 s while it is visible (WebPage.swift): 10 s is four missed pings
        /// and more; a hidden page stops pinging and reconnects when it is shown again.
        public static let pageSilence: TimeAmount = .seconds(10)
        /// How long a page's tab (`t=` in its WebSocket's address, ConnectionTable.admitPage) may be.
        public static let tabCharacters = 8...64
        /// A page not heard from for this long (two missed pings and more) may be closed to make room:
        /// for a new page from its address, or for any connection when every other one is a page.
        public static let pageQuiet: TimeAmount = .seconds(5)
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

/// Why a connection was closed or refused by the guard, for the rate-limited log.
enum ConnectionRefusal: Int, CaseIterable, CustomStringConvertible {
    case outsideAllowList, tooManyFromAddress, tooMany, evicted, headTimeout, headTooLarge, answerUnread
    case tooManyPagesFromAddress, quietPageClosed, silentPage, tlsFailed, pageReconnected, badTab

    /// What the line says was done.
    var action: String {
        switch self {
        case .tooManyPagesFromAddress: return "refused a WebSocket"
        case .quietPageClosed, .silentPage, .pageReconnected: return "closed a WebSocket"
        case .badTab: return "ignored a WebSocket's tab"
        default: return "closed an HTTP connection"
        }
    }

    var description: String {
        typealias L = WebServer.Limits
        switch self {
        case .outsideAllowList: return "not in --allow"
        case .tooManyFromAddress: return "\(L.connectionsPerAddress) connections from that address already, all of them pages heard from within \(L.pageQuiet.seconds) s"
        case .tooMany: return "\(L.connections) connections already, all of them pages heard from within \(L.pageQuiet.seconds) s"
        case .evicted: return "closed an idle, unfinished or unread connection to make room for a new one"
        case .headTimeout: return "no whole request head within \(L.headTimeout.seconds) s"
        case .headTooLarge: return "request head larger than \(L.maxHeadBytes / 1024) KiB (answered 431)"
        case .answerUnread: return "its answer unread for \(L.idleTimeout.seconds) s"
        case .tooManyPagesFromAddress: return "\(L.pagesPerAddress) pages from that address already, all heard from within \(L.pageQuiet.seconds) s"
        case .quietPageClosed: return "not heard from for \(L.pageQuiet.seconds) s, closed to make room for a new connection"
        case .silentPage: return "nothing received for \(L.pageSilence.seconds) s"
        case .pageReconnected: return "its page connected again (the same tab), so it is gone"
        case .badTab: return "not \(L.tabCharacters.lowerBound) to \(L.tabCharacters.upperBound) letters, digits, '-' or '_'"
        case .tlsFailed: return "its TLS failed (not TLS, a version before 1.2, a certificate the phone refused, or a broken record)"
        }
    }
}

extension TimeAmount {
    /// Whole seconds, for the log's words.
    var seconds: Int64 { nanoseconds / 1_000_000_000 }
}

/// When a paired WebSocket last sent a whole frame (a message, a ping, anything): written by the loop
/// that reads it (the Bridge's for a plain page, the server's for a TLS one), read by the server's loop
/// when it looks for a silent page or for one to close to make room. One relaxed atomic store per read.
final class PageActivity: Sendable {
    private let lastFrame: Atomic<UInt64>

    init(now: NIODeadline) {
        lastFrame = Atomic(now.uptimeNanoseconds)
    }

    /// A whole frame came at `now` (a loop's time: `EventLoop.now`, CLOCK_MONOTONIC on every loop).
    func heard(atUptimeNanoseconds now: UInt64) {
        lastFrame.store(now, ordering: .relaxed)
    }

    var lastHeard: NIODeadline { .uptimeNanoseconds(lastFrame.load(ordering: .relaxed)) }
}

/// Every open connection of the server, by address; decides admission and eviction, and closes what
/// it evicts. Used on the server's loop only.
///
/// A paired WebSocket (a page) keeps its place until its socket ends; it is never closed for a
/// connection that is not a page unless every other connection is a page and it has not been heard from
/// for `Limits.pageQuiet` (the page pings every 2 s while it is visible). One address holds at most
/// `Limits.pagesPerAddress` pages; a page from which nothing comes for `Limits.pageSilence` is closed.
final class ConnectionTable {
    struct Entry {
        let key: HostKey
        let serial: UInt64
        let peer: String
        /// The connection's channel; a page whose socket went to the Bridge's loop: its token.
        var channel: (any Channel)?
        var token: HandOverToken?
        /// Whether it may be closed to make room: no head yet, idle between requests, or its answer
        /// waiting for the peer to read it (a page: never, unless quiet).
        var evictable = true
        /// Set once the WebSocket upgrade was let through with the secret.
        var page: PageActivity?
        /// The page's tab, when its address said one (`admitPage`); a copy, not a slice of the request's head.
        var tab: String?
        /// The page's silence check.
        var silenceCheck: Scheduled<Void>?

        func close() {
            if let token { token.close(code: WebServer.policyViolation) } else { channel?.close(mode: .all, promise: nil) }
        }
    }
    struct State {
        /// By serial (stable across a hand-over).
        var entries: [UInt64: Entry] = [:]
        /// A channel's or a token's serial.
        var serials: [ObjectIdentifier: UInt64] = [:]
        var perKey: [HostKey: Int] = [:]
        var serial: UInt64 = 0
        /// One count per `ConnectionRefusal` (13 cases; a case added needs one more here: `log` traps otherwise).
        var log = DropLog<13>()
    }
    enum Decision {
        /// Admitted; `evicted` is the channel (or token) closed to make room, if any.
        case admit(evicted: AnyObject?)
        case refuse(ConnectionRefusal)
    }

    let perAddress: Int
    let total: Int
    let pagesPerAddress: Int
    let loop: any EventLoop
    private var state = State()
    let logger: Logger

    init(perAddress: Int = WebServer.Limits.connectionsPerAddress, total: Int = WebServer.Limits.connections,
         pagesPerAddress: Int = WebServer.Limits.pagesPerAddress, loop: any EventLoop, logger: Logger) {
        self.perAddress = perAddress
        self.total = total
        self.pagesPerAddress = pagesPerAddress
        self.loop = loop
        self.logger = logger
    }

    var count: Int { state.entries.count }
    var pageCount: Int { state.entries.values.count(where: { $0.page != nil }) }

    /// Admits `channel` from `source` (allowed) or says why not. When a cap is reached, one other
    /// connection is closed to make room (`victim`); none: refused.
    func admit(_ channel: any Channel, from source: SourceAddress, now: NIODeadline) -> Decision {
        let key = HostKey(source)
        var evicted: AnyObject?
        if state.perKey[key, default: 0] >= perAddress {
            guard let victim = victim(key: key, now: now) else { return .refuse(.tooManyFromAddress) }
            evicted = evict(victim, now: now)
        } else if state.entries.count >= total {
            guard let victim = victim(key: nil, now: now) else { return .refuse(.tooMany) }
            evicted = evict(victim, now: now)
        }
        state.serial &+= 1
        let serial = state.serial
        state.entries[serial] = Entry(key: key, serial: serial, peer: source.addressDescription, channel: channel)
        state.serials[ObjectIdentifier(channel)] = serial
        state.perKey[key, default: 0] += 1
        return .admit(evicted: evicted)
    }

    /// Which connection (of `key`, or of all) goes to make room: the oldest that may go (no head yet,
    /// idle, or its answer unread); else the oldest that is not a page (it is answering a request); else
    /// the page heard from longest ago, if that is `Limits.pageQuiet` or longer; else none.
    private func victim(key: HostKey?, now: NIODeadline) -> UInt64? {
        var idle: UInt64?
        var busy: UInt64?
        var quiet: (serial: UInt64, heard: NIODeadline)?
        for (serial, entry) in state.entries where key == nil || entry.key == key {
            if let page = entry.page {
                let heard = page.lastHeard
                if now - heard >= WebServer.Limits.pageQuiet, quiet == nil || heard < quiet!.heard { quiet = (serial, heard) }
            } else if entry.evictable {
                idle = min(idle ?? serial, serial)
            } else {
                busy = min(busy ?? serial, serial)
            }
        }
        return idle ?? busy ?? quiet?.serial
    }

    /// Closes and forgets `serial`'s connection, with its log line; returns its channel or token.
    private func evict(_ serial: UInt64, now: NIODeadline) -> AnyObject? {
        guard let entry = remove(serial) else { return nil }
        entry.close()
        log(entry.page == nil ? .evicted : .quietPageClosed, entry.peer, at: now)
        if let token = entry.token { return token }
        return entry.channel
    }

    /// Whether `channel`'s WebSocket upgrade (its secret right) may go on: one more page from its address
    /// is within `pagesPerAddress`, or the page of that address heard from longest ago, `Limits.pageQuiet`
    /// or longer ago, is closed to make room. When it may, the connection is a page from now on (never
    /// evicted, unless quiet) and its activity is returned.
    ///
    /// `tab` is the page's own name for its browser tab (`t=`, random, kept across its reconnections:
    /// web/connection.js). A page still open with the same tab is the same page's old connection, which
    /// the phone left without a close (Wi-Fi lost and back): it is closed first, so that its person's place
    /// is free for the new one at once, rather than after `Limits.pageSilence` and the takeover's silence,
    /// with a further person (or busy) meanwhile.
    func admitPage(_ channel: any Channel, tab named: Substring? = nil, now: NIODeadline) -> PageActivity? {
        guard let serial = state.serials[ObjectIdentifier(channel)], let entry = state.entries[serial] else { return nil }
        if let page = entry.page { return page }
        var tab: String?
        if let given = named {
            if Self.isTab(given) { tab = String(given) } else { log(.badTab, entry.peer, at: now) }
        }
        if let tab, let old = state.entries.first(where: { $0.key != serial && $0.value.page != nil && $0.value.tab == tab }) {
            remove(old.key)?.close()
            log(.pageReconnected, old.value.peer, at: now)
        }
        var pages = 0
        var quiet: (serial: UInt64, heard: NIODeadline)?
        for (other, candidate) in state.entries where candidate.key == entry.key {
            guard let page = candidate.page else { continue }
            pages += 1
            let heard = page.lastHeard
            if now - heard >= WebServer.Limits.pageQuiet, quiet == nil || heard < quiet!.heard { quiet = (other, heard) }
        }
        if pages >= pagesPerAddress {
            guard let quiet else {
                log(.tooManyPagesFromAddress, entry.peer, at: now)
                return nil
            }
            _ = evict(quiet.serial, now: now)
        }
        let activity = PageActivity(now: now)
        state.entries[serial]?.page = activity
        state.entries[serial]?.tab = tab
        state.entries[serial]?.evictable = false
        scheduleSilenceCheck(serial, at: now + WebServer.Limits.pageSilence)
        return activity
    }

    /// Whether `tab` may name a page's tab: `Limits.tabCharacters` of [A-Za-z0-9_-].
    static func isTab(_ tab: Substring) -> Bool {
        WebServer.Limits.tabCharacters.contains(tab.utf8.count)
            && tab.utf8.allSatisfy { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7a || $0 >= 0x30 && $0 <= 0x39 || $0 == 0x2d || $0 == 0x5f }
    }

    /// The page's activity, when `channel` is one (`admitPage`).
    func activity(of channel: any Channel) -> PageActivity? {
        state.serials[ObjectIdentifier(channel)].flatMap { state.entries[$0]?.page }
    }

    /// At `deadline`: a page not heard from for `Limits.pageSilence` is closed; else the check comes again
    /// when it would be. A page read on the Bridge's loop is closed by that loop, which first reads what
    /// waits in its socket (`BridgeWebSocket.closeIfSilent`): when that loop is behind (people leaving on
    /// a slow machine), a page that did send is not silent; the check comes again until the socket ends.
    private func scheduleSilenceCheck(_ serial: UInt64, at deadline: NIODeadline) {
        let check = loop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            guard let entry = state.entries[serial], let page = entry.page else { return }
            let heard = page.lastHeard
            let now = loop.now
            if now - heard >= WebServer.Limits.pageSilence, let token = entry.token {
                let (table, loop, peer) = (NIOLoopBound(self, eventLoop: loop), loop, entry.peer)
                token.closeIfSilent(code: WebServer.policyViolation) {
                    loop.execute { table.value.log(.silentPage, peer, at: loop.now) }
                }
                scheduleSilenceCheck(serial, at: now + WebServer.Limits.pageSilence)
            } else if now - heard >= WebServer.Limits.pageSilence {
                state.entries[serial]?.silenceCheck = nil
                entry.close()
                log(.silentPage, entry.peer, at: now)
            } else {
                scheduleSilenceCheck(serial, at: heard + WebServer.Limits.pageSilence)
            }
        }
        state.entries[serial]?.silenceCheck = check
    }

    func setEvictable(_ channel: any Channel, _ evictable: Bool) {
        guard let serial = state.serials[ObjectIdentifier(channel)], state.entries[serial]?.page == nil else { return }
        state.entries[serial]?.evictable = evictable
    }

    /// Whether `channel` may be closed to make room (for the tests).
    func isEvictable(_ channel: any Channel) -> Bool? {
        state.serials[ObjectIdentifier(channel)].flatMap { state.entries[$0]?.evictable }
    }

    func release(_ channel: any Channel) {
        if let serial = state.serials[ObjectIdentifier(channel)], state.entries[serial]?.channel === channel { _ = remove(serial) }
    }

    /// The channel's place goes to `token` until `release(token)`: its socket was handed to the Bridge's
    /// loop (BridgeWebSocket.swift), and the channel's close gives back nothing.
    func handOver(_ channel: any Channel, to token: HandOverToken) {
        guard let serial = state.serials.removeValue(forKey: ObjectIdentifier(channel)) else { return }
        state.serials[ObjectIdentifier(token)] = serial
        state.entries[serial]?.channel = nil
        state.entries[serial]?.token = token
        state.entries[serial]?.evictable = false
    }

    /// The end of a handed-over socket (`handOver`).
    func release(_ token: HandOverToken) {
        if let serial = state.serials[ObjectIdentifier(token)] { _ = remove(serial) }
    }

    private func remove(_ serial: UInt64) -> Entry? {
        guard let entry = state.entries.removeValue(forKey: serial) else { return nil }
        entry.silenceCheck?.cancel()
        if let token = entry.token { state.serials[ObjectIdentifier(token)] = nil }
        if let channel = entry.channel { state.serials[ObjectIdentifier(channel)] = nil }
        state.perKey[entry.key, default: 1] -= 1
        if state.perKey[entry.key] == 0 { state.perKey[entry.key] = nil }
        return entry
    }

    /// One line per reason per 10 s, with counts; `now` is the loop's (`EventLoop.now`).
    func log(_ reason: ConnectionRefusal, _ peer: String, at now: NIODeadline) {
        guard let report = state.log.record(reasonIndex: reason.rawValue, at: Instant(nanoseconds: now.uptimeNanoseconds)) else { return }
        logger.warning("\(reason.action) from \(peer): \(reason)\(report.countsSuffix)")
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
        switch connections.admit(channel, from: source, now: now) {
        case .refuse(let reason):
            channel.close(mode: .all, promise: nil)
            connections.log(reason, source.addressDescription, at: now)
            return channel.eventLoop.makeFailedFuture(Refused())
        case .admit:
            break
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
