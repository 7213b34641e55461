// A TLS page's WebSocket, read in its channel's pipeline on the server's loop: the TLS handler's decrypted bytes
// go to the connection's `WebSocketReader` (the one reader, WebSocketReader.swift), which the plain path
// drives too. (A plain page's socket goes to the Bridge's own loop once upgraded: the slot below hands it
// over, BridgeWebSocket.swift reads it.)
//
// `TLSWebSocket` takes the decoder's place: right behind the upgrader, in front of NIO's frame codec,
// it takes every byte, so no frame reaches NIO's decoder or Hummingbird's inbound stream. Messages go to
// the connection's queue (`InputQueue`), which schedules the drain on the Bridge's loop: one hop from the
// socket to the core. Pings are answered here and the close handshake ended here; the connection's
// `serve` task (WebServer.swift) writes the greeting, the replies and the live view's frames.
//
// It is put in place by `WebSocketReaderSlot`, which sits behind the HTTP upgrader from the connection's
// start: the upgrader announces a completed upgrade before it replays what came behind the request, so
// no byte gets past the reader. The socket's end, however it comes, applies what was queued and then
// releases what the page held (`channelInactive`), whether or not the WebSocket's task ever ran.
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import TouchCore
import TouchWire

/// One WebSocket's input side: made when its upgrade is accepted; its reader (on the server's
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

/// The one reader, reading a page's messages (WebSocketReader.swift).
typealias PageSocketReader = WebSocketReader<MessageReader>

extension WebConnection {
    /// A frame the reader refused, which ended the socket: counted and logged as a dropped message
    /// (bounded per reason in time, `WebInput.drop`). On the Bridge's loop.
    func dropped(_ failure: WebSocketFailure) {
        input.value.drop(failure == .tooLarge ? .tooLarge : .protocolError, from: source, at: now, detail: failure.detail)
    }
}

/// Reads a TLS page's WebSocket on the server's loop (see the top of the file): its bytes through the one
/// reader; a full queue stops reading from the socket until the drain has taken it (it holds back the
/// channel's `read`, so TCP pushes back on the page).
final class TLSWebSocket: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private let connection: WebConnection
    private let reader = PageSocketReader(maxMessageBytes: WebServer.maxMessageBytes, messages: MessageReader())
    /// Bytes the TLS handler gave that the reader has not taken yet (while it is paused, or a buffer larger than
    /// its room between two runs), oldest first.
    private var waiting: [ByteBuffer] = []
    /// Whether the reader holds a message the queue did not take.
    private var paused = false
    /// A `read` held back while paused.
    private var readHeld = false

    init(connection: WebConnection) { self.connection = connection }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !reader.isClosed else { return }
        waiting.append(unwrapInboundIn(data))
        if !paused { pump(context: context) }
    }

    /// Feeds what waits to the reader and reads it, until all of it is read, the reader pauses or ends.
    private func pump(context: ChannelHandlerContext) {
        while true {
            if var first = waiting.first {
                let taken = first.withUnsafeReadableBytes { reader.append($0) }
                first.moveReaderIndex(forwardBy: taken)
                if first.readableBytes == 0 { waiting.removeFirst() } else { waiting[0] = first }
            }
            let stop = reader.run(received: connection.now, offer: offer, write: { write($0, context: context) },
                                  heard: heard(context))
            guard handle(stop, context: context), !waiting.isEmpty else { return }
        }
    }

    /// Carries out how a run ended; true when reading goes on.
    private func handle(_ stop: WebSocketStop, context: ChannelHandlerContext) -> Bool {
        switch stop {
        case .needBytes:
            return true
        case .paused:
            if !paused {
                paused = true
                pause(context: context)
            }
            return false
        case .closed(let failure):
            if let failure {
                let connection = self.connection
                connection.loop.execute { connection.dropped(failure) }
            }
            waiting.removeAll()
            context.close(promise: nil)
            return false
        }
    }

    private func heard(_ context: ChannelHandlerContext) -> () -> Void {
        let activity = connection.activity, now = context.eventLoop.now.uptimeNanoseconds
        return { activity.heard(atUptimeNanoseconds: now) }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: bytes)), promise: nil)
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

    /// No read of the socket while paused.
    func read(context: ChannelHandlerContext) {
        if paused { readHeld = true } else { context.read() }
    }

    /// At the next drain, resumes (and reads again once the held message is in).
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
        guard paused, !reader.isClosed else { return }
        let stop = reader.resume(received: connection.now, offer: offer, write: { write($0, context: context) },
                                 heard: heard(context))
        if stop == .paused {
            pause(context: context)
            return
        }
        paused = false
        guard handle(stop, context: context) else { return }
        if !waiting.isEmpty { pump(context: context) }
        if !paused && !reader.isClosed && readHeld {
            readHeld = false
            context.read()
        }
    }

    /// The socket's end: what is held goes in past the queue's bound, the last drain applies
    /// everything, and then the page's fingers, keys and buttons are released.
    func channelInactive(context: ChannelHandlerContext) {
        let connection = self.connection, now = connection.now
        let last: (InputQueue.Item) -> Void = { connection.queue.append($0, evenIfFull: true) }
        // The held message, what is in the reader, then what the TLS handler gave that had no room yet.
        var stop = reader.flush(received: now, offer: last)
        while stop == .needBytes, var first = waiting.first {
            let taken = first.withUnsafeReadableBytes { reader.append($0) }
            guard taken > 0 else { break }
            first.moveReaderIndex(forwardBy: taken)
            if first.readableBytes == 0 { waiting.removeFirst() } else { waiting[0] = first }
            stop = reader.flush(received: now, offer: last)
        }
        reader.close()
        waiting.removeAll()
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
/// reader (`TLSWebSocket`) in front of the frame codec and leaves the pipeline. A connection that stays HTTP
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
            // In front of NIO's frame encoder and decoder (the upgrade adds them in that order): the decoder
            // then gets no byte (nor does Hummingbird's inbound stream), and the reader's own frames (a pong,
            // a close) go straight to TLS, while the `serve` task's go through the encoder.
            let encoder = try context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
            try context.pipeline.syncOperations.addHandler(TLSWebSocket(connection: connection), position: .before(encoder.handler))
            connection.logger.info("web page connected from \(connection.source)")
        } catch {
            // Not a pipeline this server builds: no frame could be read, so no WebSocket.
            connection.logger.error("web page from \(connection.source): no reader (\(error)); closing")
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
