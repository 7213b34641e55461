// The HTTP + WebSocket server of the web touchpad (Hummingbird 2, hummingbird-websocket).
//
// Threads: the server's channels (accept, HTTP, WebSocket frames) run on a loop of their own
// (`serverLoop`, given to Hummingbird as its EventLoopGroup); Hummingbird's route and WebSocket
// handlers, Swift async functions, run on the daemon's loops (NIO's loops are Swift concurrency's
// executors), not always that one: what the server's loop owns (the connection table, the wrong-secret
// counts) is reached from them by hopping there. A plain page's socket, once upgraded, is the Bridge's
// loop's: read, framed, decoded, queued and drained there in one turn (BridgeWebSocket.swift). A TLS
// page's messages are decoded by its frame reader in the channel's pipeline on the server's loop
// (WebSocketReader.swift), queued (InputQueue) and applied on the Bridge's loop by one drain task at a
// time (WebDrain), the one owner of the core and the X connection. Nothing of the core is touched off
// that loop.
//
// Before HTTP: ConnectionAdmission.swift (who may connect, how many: the one allow-list check) and
// HTTPHeadGuard.swift (how long a head may take, how large it may be; the upgrade gate).
// Time is always a loop's (`EventLoop.now`), never read from the wall clock here.
import Glibc
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import TouchCore
import TouchFiles
import TouchNet

/// The server's settings.
public struct WebServerSettings: Sendable {
    public var host: String
    public var port: Int
    public var secret: PairingSecret
    public var allowList: AllowList
    /// PEM files for HTTPS/WSS; both or neither.
    public var tlsCertificate: String?
    public var tlsKey: String?

    public init(host: String, port: Int, secret: PairingSecret, allowList: AllowList,
                tlsCertificate: String? = nil, tlsKey: String? = nil) {
        self.host = host
        self.port = port
        self.secret = secret
        self.allowList = allowList
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
    }
}

public enum WebServer {
    /// The largest WebSocket message read.
    public static let maxMessageBytes = 65_536
    /// The close code of a page closed by the limits (RFC 6455 §7.4.1: policy violation).
    static let policyViolation: UInt16 = 1008

    /// The page's routes (tested on their own with HummingbirdTesting). Only admitted connections reach
    /// them: the allow-list is checked once, at accept (`AdmittedChannel`).
    static func router() -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        WebPage.addRoutes(to: router)
        router.get("/ws") { _, _ -> Response in
            // Reached only by a GET /ws that asks for no upgrade (refused upgrades are answered by UpgradeGate).
            Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "refused: pairing secret or origin\n")))
        }
        router.get("/healthz") { _, _ in "ok\n" }
        return router
    }

    /// Starts the server's channels on `serverLoop`, applying input on `input`'s loop (the Bridge's); returns
    /// once it listens, with the bound port and the task running it (cancel the task to stop it).
    public static func start(
        settings: WebServerSettings, serverLoop: any EventLoop, input: NIOLoopBound<WebInput>,
        logger: Logger
    ) async throws -> (port: Int, task: Task<Void, any Error>) {
        // The server's loop owns the wrong-secret counts and the connection table (see their types).
        let pairingAttempts = NIOLoopBoundBox.makeBoxSendingValue(PairingAttempts(), eventLoop: serverLoop)
        let router = Self.router()
        WebAssets.addRoutes(to: router, tls: settings.tlsCertificate != nil, secret: settings.secret,
                            attempts: pairingAttempts, loop: serverLoop)

        let secret = settings.secret
        let tls = settings.tlsCertificate != nil
        let table = NIOLoopBoundBox.makeBoxSendingValue(ConnectionTable(loop: serverLoop, logger: logger), eventLoop: serverLoop)
        // The gate in front of the upgrader (an admitted connection: its address is allowed): origin,
        // secret (wrong ones counted), room for one more page of its address; refusals get 403 (see
        // UpgradeGate).
        let mayUpgrade: @Sendable (HTTPRequestHead, any Channel, NIODeadline) -> Bool = { head, channel, now in
            guard let remote = channel.remoteAddress, let source = SourceAddress(remote) else { return false }
            let attempts = pairingAttempts.value
            let address = remote.ipAddress ?? "?"
            let origin = head.headers.first(name: "origin")
            guard Self.originMatches(origin: origin, host: head.headers.first(name: "host")) else {
                attempts.logOrigin(address: address, origin: origin ?? "", now: now, logger: logger)
                return false
            }
            guard head.uri.hasPrefix("/ws") else { return false }
            switch attempts.check(Self.queryValue("k", in: head.uri) ?? "", secret: secret, from: HostKey(source), now: now) {
            case .paired: break
            case .wrongSecret:
                attempts.logRefusal(.wrongSecret, address: address, now: now, logger: logger)
                return false
            case .tooManyTries:
                attempts.logRefusal(.tooManyTries, address: address, now: now, logger: logger)
                return false
            }
            // A page from now on, if its address has room for one more (ConnectionAdmission.swift).
            return table.value.admitPage(channel, tab: Self.queryValue("t", in: head.uri), now: now) != nil
        }
        // The upgrader is reached only through the gate, which let this request through with the
        // secret: nothing is checked twice.
        let shouldUpgrade: @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        > = { _, channel, _ in
            guard let remote = channel.remoteAddress, let source = SourceAddress(remote),
                  let slot = try? channel.pipeline.syncOperations.handler(type: WebSocketReaderSlot.self)
            else { return .dontUpgrade }
            // A plain connection's socket goes to the Bridge's own loop after the upgrade (BridgeWebSocket.swift).
            let handOver = tls ? nil : (input.eventLoop as? BridgeEventLoop).flatMap {
                SocketHandOver.prepare(channel: channel, bridgeLoop: $0, table: table, logger: logger)
            }
            let activity = table.value.activity(of: channel) ?? PageActivity(now: channel.eventLoop.now)
            let connection = WebConnection(source: source, input: input, logger: logger, handOver: handOver, activity: activity)
            slot.connection = connection
            return .upgrade([:]) { inbound, outbound, _ in
                if connection.handOver != nil {
                    // Its messages and replies are the Bridge's loop's; this only waits for the channel's close.
                    for try await _ in inbound {}
                    return
                }
                try await Self.serve(inbound: inbound, outbound: outbound, connection: connection)
            }
        }
        // The server's own responder: the router, with errors as their responses.
        let responder = router.buildResponder()
        let respond: HTTPChannelHandler.Responder = { request, writer, channel in
            let context = WebRequestContext(source: .init(channel: channel, logger: logger))
            let response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as any HTTPResponseError {
                response = try error.response(from: request, context: context)
            } catch {
                response = Response(status: .internalServerError)
            }
            try await writer.write(response: response.head, body: response.body)
        }
        let upgrading = HeadGuardedChannel(
            base: HTTP1WebSocketUpgradeChannel(
                responder: respond,
                // No WebSocket auto-ping: its sleep is a loop timer that outlives the page (a page that has
                // gone still wakes the daemon once, up to 30 s later). TCP keepalive finds a vanished peer
                // instead, in the kernel (`Limits.keepAlive`, set on every connection at admission).
                configuration: .init(http1: .init(), ws: .init(maxFrameSize: maxMessageBytes, autoPing: .disabled)),
                shouldUpgrade: shouldUpgrade),
            table: table, mayUpgrade: mayUpgrade)
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Int.self)
        // The server service alone, not `Application.run()`: that adds a date-header cache ticking every
        // second, and an idle touchbridge must have no timer at all.
        // Hummingbird's own messages (e.g. a cancellation error at shutdown) only at debug level.
        var serverLogger = logger
        if logger.logLevel > .debug {
            serverLogger.logLevel = .critical
        } else {
            // A peer causes them (a refused upgrade is one): at most one a call site per 10 s.
            serverLogger.handler = BoundedLogHandler(base: logger.handler)
        }
        let configuration = ServerConfiguration(address: .hostname(settings.host, port: settings.port))
        let onServerRunning: @Sendable (any Channel) async -> Void = { channel in
            // Before the port is announced, so every connection's SYN-ACK carries it (see Limits).
            do {
                try await channel.setOption(Self.maxSegmentOption, value: Limits.maxSegmentBytes).get()
            } catch {
                logger.warning("web server: could not limit TCP segments to \(Limits.maxSegmentBytes) bytes (\(error)); loopback clients may stall")
            }
            boundContinuation.yield(channel.localAddress?.port ?? settings.port)
            boundContinuation.finish()
        }
        // Admission first (before TLS, before any byte is read), then TLS, then the head guard, then HTTP.
        let task: Task<Void, any Error>
        if let cert = settings.tlsCertificate, let key = settings.tlsKey {
            // Read through TouchFiles (regular files only, bounded, never waited on), then handed to OpenSSL as bytes.
            let tls = try TLSContext(certificates: try BoundedFile.read(cert, as: .certificate), key: try BoundedFile.read(key, as: .privateKey))
            let service = AdmittedChannel(base: TLSServerChannel(base: upgrading, context: tls, table: table), allowList: settings.allowList, table: table)
                .server(configuration: configuration, onServerRunning: onServerRunning, eventLoopGroup: serverLoop, logger: serverLogger)
            task = Task {
                defer { boundContinuation.finish() }
                try await service.run()
            }
        } else {
            let service = AdmittedChannel(base: upgrading, allowList: settings.allowList, table: table)
                .server(configuration: configuration, onServerRunning: onServerRunning, eventLoopGroup: serverLoop, logger: serverLogger)
            task = Task {
                defer { boundContinuation.finish() }
                try await service.run()
            }
        }
        var iterator = bound.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // The server stopped before listening: its error says why.
            try await task.value
            throw PairingError("the HTTP server stopped before listening")
        }
        return (port, task)
    }

    /// One WebSocket's task: the greeting, then the replies its drain yields, until the socket ends. Its
    /// messages never come through here: the connection's frame reader reads them in the pipeline
    /// (WebSocketReader.swift), so `inbound` yields nothing, and its iterator only answers pings and the
    /// close handshake.
    static func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, connection: WebConnection) async throws {
        let replyContinuation = connection.drain.replies
        let frameContinuation = connection.drain.frames
        defer {
            replyContinuation.finish()
            frameContinuation.finish()
        }
        try await outbound.write(.text("hello touchbridge"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await reply in connection.replies { try await outbound.write(.text(reply)) }
            }
            group.addTask {
                for await frame in connection.frames { try await outbound.write(.binary(ByteBuffer(bytes: frame))) }
            }
            for try await _ in inbound {}
            replyContinuation.finish()
            frameContinuation.finish()
            try await group.waitForAll()
        }
    }

    /// TCP_MAXSEG, which NIO does not name.
    static let maxSegmentOption = ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: TCP_MAXSEG))
    /// TCP_WINDOW_CLAMP, which NIO does not name.
    static let windowClampOption = ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: TCP_WINDOW_CLAMP))
    /// TCP keepalive's timing (TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT), which NIO does not name.
    static let keepAliveOptions = [
        (ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: TCP_KEEPIDLE)), Limits.keepAlive.idleSeconds),
        (ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: TCP_KEEPINTVL)), Limits.keepAlive.intervalSeconds),
        (ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: TCP_KEEPCNT)), Limits.keepAlive.probes),
    ]

    /// Whether the WebSocket's `Origin` is the page this server served: its host and port are the
    /// request's `Host` (the address the page was loaded from). No `Origin` at all is a client that is
    /// not a browser (browsers always send it on a WebSocket handshake): allowed, it still needs the
    /// secret. `null` (sandboxed frames, files) and anything else are refused.
    public static func originMatches(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        guard let host, !host.isEmpty else { return false }
        let lower = origin.lowercased()
        let defaultPort: String
        let rest: Substring
        if lower.hasPrefix("http://") {
            defaultPort = "80"; rest = lower.dropFirst(7)
        } else if lower.hasPrefix("https://") {
            defaultPort = "443"; rest = lower.dropFirst(8)
        } else {
            return false
        }
        guard !rest.isEmpty, !rest.contains("/") else { return false }
        return withPort(rest, defaultPort) == withPort(Substring(host.lowercased()), defaultPort)
    }

    /// `host[:port]` with the port spelt out (an IPv6 literal keeps its brackets).
    private static func withPort(_ authority: Substring, _ defaultPort: String) -> String {
        if let close = authority.lastIndex(of: "]") {
            let after = authority[authority.index(after: close)...]
            return after.isEmpty ? authority + ":" + defaultPort : String(authority)
        }
        return authority.contains(":") ? String(authority) : authority + ":" + defaultPort
    }

    /// The value of `name` in the query of `path` (`/ws?k=abc` → `abc`), percent-decoding not needed
    /// for the hex secret.
    static func queryValue(_ name: String, in path: String) -> Substring? {
        guard let q = path.firstIndex(of: "?") else { return nil }
        for pair in path[path.index(after: q)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2, parts[0] == name { return parts[1] }
        }
        return nil
    }
}

/// The drain task of one WebSocket: applies its queue on the loop, at most one scheduled at a time, and
/// moves at most once per `InputQueue.minMoveInterval` (a held move waits in the queue, where newer
/// moves replace it, for a drain scheduled at the next allowed time).
final class WebDrain: Sendable {
    let queue: InputQueue
    let source: SourceAddress
    let input: NIOLoopBound<WebInput>
    let replies: AsyncStream<String>.Continuation
    /// A TLS page's frames (`WebConnection.frames`): handed to `WebInput` at the first drain.
    let frames: AsyncStream<[UInt8]>.Continuation
    /// Loop-only state: the drained items (reused), when a move was last applied, whether a paced drain
    /// is scheduled.
    private struct LoopState {
        var scratch: [InputQueue.Item]
        var lastMove: Instant?
        var pacedDrainScheduled = false
        /// Where replies go when the socket is the Bridge's loop's (`BridgeWebSocket`); else `replies`.
        var sendReply: ((String) -> Void)?
        /// Whether `WebInput` knows this drain (at its first run), to push lines that answer nothing.
        var registered = false
    }
    private let state: NIOLoopBoundBox<LoopState>

    init(queue: InputQueue, source: SourceAddress, input: NIOLoopBound<WebInput>, replies: AsyncStream<String>.Continuation,
         frames: AsyncStream<[UInt8]>.Continuation) {
        self.queue = queue
        self.source = source
        self.input = input
        self.replies = replies
        self.frames = frames
        var items: [InputQueue.Item] = []
        items.reserveCapacity(queue.capacity)
        state = NIOLoopBoundBox.makeBoxSendingValue(LoopState(scratch: items), eventLoop: input.eventLoop)
    }

    /// On the loop: applies what is queued, in order, except moves already stale; `final` (the socket
    /// ended) applies everything left without pacing, before the disconnect releases it.
    func run(final: Bool = false) {
        if !state.value.registered {
            state.value.registered = true
            if !final { input.value.register(self) }
        }
        var items = state.value.scratch
        state.value.scratch = []
        queue.take(into: &items)
        let now = Instant(nanoseconds: self.input.eventLoop.now.uptimeNanoseconds)
        let input = self.input.value
        // A page read on the server's loop (TLS) gets its view frames through its writer.
        if state.value.sendReply == nil && !final { input.takeFrames(for: source, frames) }
        var index = 0
        while index < items.count {
            let item = items[index]
            switch item.kind {
            case .dropped:
                _ = input.apply(item.input, from: source, at: now)
            case .move where InputQueue.isStale(item, at: now):
                input.drop(.staleMove, from: source, at: now)
            case .move:
                if !final, let last = state.value.lastMove, now - last < InputQueue.minMoveInterval {
                    // Too soon after the last move: this and what follows wait (in order) for a paced drain.
                    queue.requeue(items[index...])
                    schedulePacedDrain(at: last + InputQueue.minMoveInterval, now: now)
                    index = items.count
                    continue
                }
                state.value.lastMove = now
                if let text = input.apply(item.input, from: source, at: now) { reply(text) }
            case .keep:
                if let text = input.apply(item.input, from: source, at: now) { reply(text) }
            }
            index += 1
        }
        items.removeAll(keepingCapacity: true)
        state.value.scratch = items
    }

    /// On the loop: replies go to `send` from now on, not to the replies' stream (`BridgeWebSocket`).
    func sendReplies(_ send: @escaping (String) -> Void) {
        state.value.sendReply = send
        replies.finish()
    }

    /// On the loop: a line that answers nothing the page sent (what LibreOffice Impress shows).
    func push(_ text: String) { reply(text) }

    private func reply(_ text: String) {
        if let send = state.value.sendReply { send(text) } else { replies.yield(text) }
    }

    private func schedulePacedDrain(at deadline: Instant, now: Instant) {
        guard !state.value.pacedDrainScheduled else { return }
        state.value.pacedDrainScheduled = true
        let delay = TimeAmount.nanoseconds(Int64((deadline - now).nanoseconds))
        input.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            state.value.pacedDrainScheduled = false
            run()
        }
    }
}

/// A request's context, with the peer's address (for `/pairing`'s wrong-secret limits).
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
