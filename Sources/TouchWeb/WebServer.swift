// The HTTP + WebSocket server of the web touchpad (Hummingbird 2, hummingbird-websocket).
//
// Threads: the server's channels (accept, HTTP, WebSocket frames) run on the Bridge's own event loop,
// given to Hummingbird as its EventLoopGroup. Hummingbird's route and WebSocket handlers are Swift
// async functions, which run on the concurrency pool, not on that loop; so each message hops to the
// loop with `loop.execute`/`loop.submit` (in order, as FIFO tasks) and is decoded and applied there, by
// the one owner of the core and the X connection. Nothing of the core is touched off the loop.
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import TouchCore
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

    /// Starts the server on `loop`; returns once it listens, with the bound port and the task running
    /// it (cancel the task to stop it).
    public static func start(
        settings: WebServerSettings, loop: any EventLoop, input: NIOLoopBound<WebInput>, logger: Logger
    ) async throws -> (port: Int, task: Task<Void, any Error>) {
        let attempts = PairingAttempts()
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: AllowListMiddleware(allowList: settings.allowList))
        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: WebPage.html)))
        }
        router.get("/ws") { _, _ -> Response in
            // Reached only when the upgrade was refused (see shouldUpgrade).
            Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "pairing secret required\n")))
        }
        router.get("/healthz") { _, _ in "ok\n" }

        let allowList = settings.allowList
        let secret = settings.secret
        var server: HTTPServerBuilder = .http1WebSocketUpgrade(
            configuration: .init(ws: .init(maxFrameSize: maxMessageBytes))
        ) { request, channel, _ in
            guard let remote = channel.remoteAddress, let source = SourceAddress(remote), allowList.allows(source),
                  let path = request.path, path.hasPrefix("/ws") else { return .dontUpgrade }
            let address = remote.ipAddress ?? "?"
            guard attempts.mayTry(address) else {
                logger.warning("refused a WebSocket from \(address): too many wrong pairing secrets, wait a minute")
                return .dontUpgrade
            }
            let given = Self.queryValue("k", in: path) ?? ""
            guard secret.matches(given) else {
                attempts.failed(address)
                logger.warning("refused a WebSocket from \(address): wrong or missing pairing secret")
                return .dontUpgrade
            }
            return .upgrade([:]) { inbound, outbound, _ in
                try await Self.serve(inbound: inbound, outbound: outbound, source: source, loop: loop, input: input, logger: logger)
            }
        }
        if let cert = settings.tlsCertificate, let key = settings.tlsKey {
            let certificates = try NIOSSLCertificate.fromPEMFile(cert).map { NIOSSLCertificateSource.certificate($0) }
            let tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: certificates, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            server = try .tls(server, tlsConfiguration: tls)
        }
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Int.self)
        // The server service alone, not `Application.run()`: that adds a date-header cache ticking every
        // second, and an idle touchbridge must have no timer at all.
        let responder = router.buildResponder()
        // Hummingbird's own messages (e.g. a cancellation error at shutdown) only at debug level.
        var serverLogger = logger
        if logger.logLevel > .debug { serverLogger.logLevel = .critical }
        let service = try server.buildServer(
            configuration: ServerConfiguration(address: .hostname(settings.host, port: settings.port)),
            eventLoopGroup: loop, logger: serverLogger,
            responder: { request, writer, channel in
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
            },
            onServerRunning: { channel in
                boundContinuation.yield(channel.localAddress?.port ?? settings.port)
                boundContinuation.finish()
            })
        let task = Task {
            defer { boundContinuation.finish() }
            try await service.run()
        }
        var iterator = bound.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // The server stopped before listening: its error says why.
            try await task.value
            throw PairingError("the HTTP server stopped before listening")
        }
        return (port, task)
    }

    /// One WebSocket: every whole message goes to the loop in order; the socket's end, however it
    /// comes, releases what the page held.
    static func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, source: SourceAddress,
        loop: any EventLoop, input: NIOLoopBound<WebInput>, logger: Logger
    ) async throws {
        logger.info("web page connected from \(source)")
        defer {
            loop.execute {
                input.value.disconnected(source, at: Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds))
            }
            logger.info("web page disconnected from \(source)")
        }
        try await outbound.write(.text("hello touchbridge"))
        for try await frame in inbound {
            guard frame.fin, frame.opcode == .text || frame.opcode == .binary else {
                // Fragments: the page never sends them. Dropped (the continuation frames too).
                let now = Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds)
                loop.execute { input.value.drop(.fragmented, from: source, at: now) }
                continue
            }
            let data = frame.data
            let isPacket = data.readableBytes > 0 && data.getInteger(at: data.readerIndex, as: UInt8.self) == UInt8(ascii: "{")
            if isPacket {
                // Touches: fire and forget, in order; a reply only when another sender holds the session.
                loop.execute {
                    _ = input.value.message(data, from: source, at: Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds))
                }
            } else {
                let reply = try await loop.submit {
                    input.value.message(data, from: source, at: Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds))
                }.get()
                if let reply { try await outbound.write(.text(reply)) }
            }
        }
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

/// A request's context, with the peer's address (for --allow).
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Pages and sockets only for addresses in --allow, as for the UDP listeners.
struct AllowListMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    let allowList: AllowList

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let remote = context.remoteAddress, let source = SourceAddress(remote), allowList.allows(source) else {
            return Response(status: .forbidden)
        }
        return try await next(request, context)
    }
}
