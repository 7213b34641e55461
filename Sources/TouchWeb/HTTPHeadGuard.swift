// How long a request head may take and how large it may be (`HTTPHeadGuard`, the first handler after
// TLS: it sees plaintext bytes before NIO's HTTP parser), and the gate in front of the WebSocket
// upgrader (`UpgradeGate`, right after the parser).
//
// A request head must be whole within `Limits.headTimeout` of its first byte (the first head: of the
// accept); a connection idle between requests is closed after `Limits.idleTimeout`; a head larger than
// `Limits.maxHeadBytes` gets 431 and a close. When the gate lets a WebSocket upgrade through, it takes
// the head guard out of the pipeline: the WebSocket has its own ping.
//
// What NIO and Hummingbird give, and why this is still here:
// - Hummingbird's `HTTP1Channel.Configuration(idleTimeout:)` (its `HTTPConnectionStateHandler`) and
//   NIO's `IdleStateHandler` measure idleness from the last read, so a client that sends one byte of
//   its head every few seconds (a slow loris) is never idle: neither has a deadline for a whole head.
//   On the WebSocket upgrade channel Hummingbird adds its idle handler only once the first request
//   turned out not to be an upgrade, so a connection that never finishes its first head has none.
//   And both read the wall clock (`ContinuousClock.now`, `NIODeadline.now()`) when their timer fires,
//   so an EmbeddedEventLoop cannot drive them. The head deadline and the idle deadline are one timer
//   here, on the loop's clock (`scheduleTask`), and the tests move it.
// - NIO's parser has size limits (`NIOHTTPDecoderLimitConfiguration`, Hummingbird's `httpDecoder`),
//   but they count the URL and the header names and values only, answer through Hummingbird with 400,
//   and see the bytes only once the parser holds them; the limit here counts every byte of the head
//   and answers 431 before any of it reaches the parser.
// So the guard finds the end of a head in the byte stream itself (`HeadEndScanner`: CRLF CRLF).
import Logging
import NIOCore
import HummingbirdCore
import NIOHTTP1
import TouchCore

/// Adds the head guard in front of the HTTP handlers of `Base` (after TLS when there is TLS), the
/// upgrade gate right after the HTTP request decoder (before the WebSocket upgrader), and the slot of
/// the WebSocket's frame reader behind the upgrader.
struct HeadGuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let table: NIOLoopBoundBox<ConnectionTable>
    /// Whether a WebSocket upgrade request may go on to the upgrader (the request's head, the peer,
    /// the loop's time); refused ones get 403.
    let mayUpgrade: @Sendable (HTTPRequestHead, any Channel, NIODeadline) -> Bool

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(HTTPHeadGuard(table: table.value))
        } catch {
            channel.close(mode: .all, promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
        let mayUpgrade = self.mayUpgrade
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(UpgradeGate(mayUpgrade: mayUpgrade), position: .after(decoder.handler))
            // Behind the upgrader: where an accepted WebSocket's frame reader comes from (WebSocketReader.swift).
            try channel.pipeline.syncOperations.addHandler(WebSocketReaderSlot())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Answers a refused WebSocket upgrade with 403 and a close (Hummingbird's own answer would be 400);
/// steps out of the pipeline once it lets an upgrade through (the WebSocket replaces HTTP), and takes
/// the head guard with it (a WebSocket has no request heads; the upgrader answers at once, or with 400
/// and a close when the request is not a WebSocket handshake after all).
final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let mayUpgrade: @Sendable (HTTPRequestHead, any Channel, NIODeadline) -> Bool
    private var refusing = false

    init(mayUpgrade: @escaping @Sendable (HTTPRequestHead, any Channel, NIODeadline) -> Bool) {
        self.mayUpgrade = mayUpgrade
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        guard case .head(let head) = unwrapInboundIn(data), head.headers.contains(name: "upgrade") else {
            context.fireChannelRead(data)
            return
        }
        if mayUpgrade(head, context.channel, context.eventLoop.now) {
            let pipeline = context.pipeline.syncOperations
            if let headGuard = try? pipeline.context(handlerType: HTTPHeadGuard.self) {
                pipeline.removeHandler(context: headGuard, promise: nil)
            }
            context.fireChannelRead(data)
            pipeline.removeHandler(context: context, promise: nil)
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

/// Deadlines and size limit for request heads; taken out of the pipeline by `UpgradeGate` when a
/// WebSocket upgrade goes through.
final class HTTPHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Where the connection is.
    enum Phase {
        /// Reading a request head: `Limits.headTimeout` from its start.
        case head
        /// A whole head was read; the answer is not written yet (or waits for the peer to read: then
        /// closed after `Limits.idleTimeout`).
        case request
        /// Answered; waiting for the next request: `Limits.idleTimeout`.
        case idle
        /// Answered 431; discarding input until the peer goes or the timer fires.
        case rejected
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
            updateEvictable(context: context)
            // Answers are immediate; one its peer does not read is closed when this fires.
            arm(WebServer.Limits.idleTimeout, context: context)
        }
        context.fireChannelRead(data)
    }

    /// The answer's first bytes: the connection is idle until the next request's first byte.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if phase == .request {
            phase = .idle
            updateEvictable(context: context)
            arm(WebServer.Limits.idleTimeout, context: context)
        }
        context.write(data, promise: promise)
    }

    /// The peer stopped reading (more than NIO's high-water mark waits to be written) or started again.
    /// A connection whose answer waits for its peer is idle as far as the table goes: it may be closed
    /// to make room. (Hummingbird's writer waits for writability before it writes the next answer, so
    /// a peer that pipelines requests and reads none would otherwise sit "answering" for ever.)
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        updateEvictable(context: context)
        context.fireChannelWritabilityChanged()
    }

    /// Evictable unless answering a request to a peer that reads.
    private func updateEvictable(context: ChannelHandlerContext) {
        table.setEvictable(context.channel, phase != .request || !context.channel.isWritable)
    }

    /// 431, then no more reading: the output is shut so the answer is read before the close.
    private func reject(context: ChannelHandlerContext) {
        phase = .rejected
        table.log(.headTooLarge, context.channel.remoteAddress?.ipAddress ?? "?", at: context.eventLoop.now)
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
                table.log(.headTimeout, context.channel.remoteAddress?.ipAddress ?? "?", at: context.eventLoop.now)
                context.close(promise: nil)
            case .idle, .rejected:
                context.close(promise: nil)
            case .request where !context.channel.isWritable:
                // Its answer waits for a peer that has not read for `idleTimeout`.
                table.log(.answerUnread, context.channel.remoteAddress?.ipAddress ?? "?", at: context.eventLoop.now)
                context.close(promise: nil)
            case .request:
                arm(WebServer.Limits.idleTimeout, context: context)
            }
        }
    }
}
