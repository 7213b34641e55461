// A TLS page's WebSocket data frames, read where NIO decodes them: in the channel's pipeline, on the
// server's loop. (A plain page's socket goes to the Bridge's own loop once upgraded: the slot below hands
// it over, BridgeWebSocket.swift reads it.)
//
// Each frame the decoder makes goes to this connection's `WebSocketFrameReader`, right behind the frame
// decoder, which reads the message once (`MessageReader`), queues it (`InputQueue`) and schedules the
// drain on the Bridge's loop: one hop from the socket to the core. Only control frames (ping, pong,
// close) and frames with reserved bits go on to Hummingbird's async inbound stream, whose handler
// answers pings and the close handshake (and closes on reserved bits). Before this, every message went
// through that stream and the task reading it: a second hop, and a third of the web path's CPU
// (issue 31).
//
// The reader is put in place by `WebSocketReaderSlot`, which sits behind the HTTP upgrader from the
// connection's start: the upgrader announces a completed upgrade before it replays what came behind the
// request, so no frame gets past the reader. The socket's end, however it comes, applies what was
// queued and then releases what the page held (`channelInactive`), whether or not the WebSocket's task
// ever ran.
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import TouchCore

/// One WebSocket's input side: made when its upgrade is accepted; its frame reader (on the server's
/// loop) queues, its drain (on the Bridge's loop) applies, its `serve` task writes the replies. The
/// drain holds the queue, the page's address and the Bridge's side; this adds the replies' stream.
final class WebConnection: Sendable {
    let drain: WebDrain
    let replies: AsyncStream<String>
    /// A TLS page's live view frames, on their way to its writer: the newest one only (the page pulls,
    /// so there is at most one; a page that asks and does not read gets the latest, never a queue).
    let frames: AsyncStream<[UInt8]>
    let logger: Logger

    /// How a plain connection's socket goes to the Bridge's loop; nil: read here (TLS, or a Bridge's
    /// loop that is not a `BridgeEventLoop`, as in the tests' embedded loops).
    let handOver: SocketHandOver?

    /// When it last sent a whole frame (`ConnectionTable` closes a page silent too long).
    let activity: PageActivity

    init(source: SourceAddress, input: NIOLoopBound<WebInput>, logger: Logger, handOver: SocketHandOver? = nil,
         activity: PageActivity) {
        self.logger = logger
        self.handOver = handOver
        self.activity = activity
        let (replies, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(64))
        self.replies = replies
        let (frames, frameContinuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1))
        self.frames = frames
        drain = WebDrain(queue: InputQueue(), source: source, input: input, replies: continuation, frames: frameContinuation)
    }

    var source: SourceAddress { drain.source }
    var queue: InputQueue { drain.queue }
    var input: NIOLoopBound<WebInput> { drain.input }
    /// The Bridge's loop.
    var loop: any EventLoop { drain.input.eventLoop }

    /// The Bridge's time, which stamps every message (see `InputQueue`).
    var now: Instant { Instant(nanoseconds: loop.now.uptimeNanoseconds) }
}

/// Reads one WebSocket's data frames on the server's loop (see the top of the file); a full queue
/// stops reading from the socket until the drain has taken it (it holds back the channel's `read`, so
/// TCP pushes back on the page).
final class WebSocketFrameReader: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private let connection: WebConnection
    private var reader = MessageReader()
    /// Messages read while the queue was full, oldest first (at most what one socket read held): they
    /// go in, in order, before anything read after them.
    private var held: [InputQueue.Item] = []
    /// A `read` held back while messages are held.
    private var readHeld = false

    init(connection: WebConnection) { self.connection = connection }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        connection.activity.heard(atUptimeNanoseconds: context.eventLoop.now.uptimeNanoseconds)
        let isData = frame.opcode == .text || frame.opcode == .binary || frame.opcode == .continuation
        guard isData, frame.reservedBits.isEmpty else {
            // Control frames, and data frames with reserved bits (a protocol error): the WebSocket handler's.
            context.fireChannelRead(data)
            return
        }
        let now = connection.now
        let item = frame.fin && frame.opcode != .continuation
            ? reader.read(frame.unmaskedData, received: now)
            // Fragments: the page never sends them. Dropped (the continuation frames too).
            : reader.fragment(received: now)
        if held.isEmpty, offer(item) { return }
        held.append(item)
        if held.count == 1 { pause(context: context) }
    }

    /// Queues `item`, scheduling the drain if none is; false when the queue is full.
    private func offer(_ item: InputQueue.Item) -> Bool {
        switch connection.queue.append(item) {
        case .queued(let schedule):
            if schedule {
                let drain = connection.drain
                connection.loop.execute { drain.run() }
            }
            return true
        case .full:
            return false
        }
    }

    /// No read of the socket while messages are held.
    func read(context: ChannelHandlerContext) {
        if held.isEmpty { context.read() } else { readHeld = true }
    }

    /// At the next drain, queues what is held (and reads again once all of it is in).
    private func pause(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        connection.queue.whenDrained {
            eventLoop.execute {
                let (reader, context) = bound.value
                reader.resume(context: context)
            }
        }
    }

    private func resume(context: ChannelHandlerContext) {
        var taken = 0
        defer { held.removeFirst(taken) }
        while taken < held.count {
            guard offer(held[taken]) else {
                pause(context: context)
                return
            }
            taken += 1
        }
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    /// The socket's end: what is held goes in past the queue's bound, the last drain applies
    /// everything, and then the page's fingers, keys and buttons are released.
    func channelInactive(context: ChannelHandlerContext) {
        for item in held { connection.queue.append(item, evenIfFull: true) }
        held.removeAll()
        let connection = self.connection
        connection.loop.execute {
            connection.drain.run(final: true)
            connection.input.value.disconnected(connection.source, at: connection.now)
        }
        connection.logger.info("web page disconnected from \(connection.source)")
        context.fireChannelInactive()
    }
}

/// Sits behind the HTTP upgrader from a connection's start. The accepted upgrade leaves its
/// `WebConnection` here; when the upgrader announces the completed upgrade, this puts the connection's
/// frame reader right behind the frame decoder and leaves the pipeline. A connection that stays HTTP
/// sees it leave at its first request.
final class WebSocketReaderSlot: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// Set by the upgrade's `shouldUpgrade`, on this channel's loop.
    var connection: WebConnection?

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let upgrade = event as? HTTPServerUpgradeEvents, case .upgradeComplete = upgrade, let connection else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if let handOver = connection.handOver {
            // The 101 is written. What comes behind it is kept for the Bridge's loop, and the socket goes
            // there once the upgrader has replayed what came with the request (the next turn of this loop).
            let tap = HandOverTap()
            do {
                try context.pipeline.syncOperations.addHandler(tap, position: .after(self))
            } catch {
                connection.logger.error("web page from \(connection.source): cannot hand its socket over (\(error)); closing")
                context.close(promise: nil)
                return
            }
            let channel = context.channel
            let bound = NIOLoopBound(tap, eventLoop: context.eventLoop)
            context.eventLoop.execute { handOver.perform(channel: channel, tap: bound.value, connection: connection) }
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        do {
            let decoder = try context.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<WebSocketFrameDecoder>.self)
            try context.pipeline.syncOperations.addHandler(WebSocketFrameReader(connection: connection), position: .after(decoder.handler))
            connection.logger.info("web page connected from \(connection.source)")
        } catch {
            // Not a pipeline this server builds: no frame could be read, so no WebSocket.
            connection.logger.error("web page from \(connection.source): no frame reader (\(error)); closing")
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Keeps every byte that reaches it from the upgrade on (what came behind the request, then what the
/// socket gave before reading stopped), for the Bridge's loop: no frame reaches NIO's decoder behind it.
final class HandOverTap: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private(set) var bytes: [UInt8] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if let read = buffer.readBytes(length: buffer.readableBytes) { bytes += read }
    }

    func channelReadComplete(context: ChannelHandlerContext) {}
}
