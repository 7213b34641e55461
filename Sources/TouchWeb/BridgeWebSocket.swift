// A plain (not TLS) WebSocket read and written on the Bridge's own loop, without NIO.
//
// Why: read on the server's loop, every message of the page woke two threads, the server's and then the
// Bridge's, and went through NIO's pipeline and frame decoder on the way (README, the benchmark notes:
// the web path). Here the page's socket is one more descriptor of the Bridge's loop, like the UDP
// listeners': the loop wakes once, reads, parses the frames in place (TouchWire's WebSocketWire.swift), queues the
// messages (`InputQueue`, so moves coalesce and are paced as before) and drains the queue in the same
// turn.
//
// Who does what: the HTTP server (Hummingbird, on the server's loop) admits the connection, answers the
// upgrade with 101, and then hands the socket over (`SocketHandOver`, at the upgrade's completion): a
// duplicate of its descriptor (made when the upgrade was accepted) and the bytes that came behind the
// request. Its own channel is closed then, which leaves the TCP connection open on the duplicate. The
// connection keeps its place in the server's connection table until it ends here. TLS connections stay
// on the server's loop (WebSocketReader.swift): their records are NIO's; so does a plain one whose
// descriptor could not be found (no /proc).
//
// Bounds: one `read` of at most `WebSocketWire.readBytes` a turn (level-triggered: the loop comes back while more
// is there, after the other descriptors' turns); a queue full of messages that must be applied stops
// reading until it drains (TCP then pushes back on the page); replies waiting for room are bounded
// (`maxPendingOutput`), newer ones dropped past it.
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import TouchCore
import TouchNet
import TouchWire

/// One taken-over WebSocket, on the Bridge's loop from `start` to its end.
final class BridgeWebSocket {
    private let descriptor: Int32
    private let loop: BridgeEventLoop
    private let connection: WebConnection
    /// Called once, at the end (on the loop): gives the connection's place in the table back.
    private let ended: () -> Void
    /// The one reader (WebSocketReader.swift): the socket's bytes go straight into its buffer.
    private let reader = PageSocketReader(maxMessageBytes: WebServer.maxMessageBytes, messages: MessageReader())
    /// Whether the reader holds a message the queue did not take (reading stops until the drain).
    private var paused = false
    /// Whether the descriptor is watched for reading (not while the reader holds a message).
    private var reading = false
    /// Bytes of frames waiting for room in the socket.
    private var output: [UInt8] = []
    private var droppedReplies = 0
    private var drainDue = false
    private var isOpen = true

    /// Replies waiting for room at most (the page reads them: a page that does not gets no more).
    static let maxPendingOutput = 64 * 1024

    init(descriptor: Int32, loop: BridgeEventLoop, connection: WebConnection, ended: @escaping () -> Void) {
        self.descriptor = descriptor
        self.loop = loop
        self.connection = connection
        self.ended = ended
    }

    /// On the loop: the greeting, then what came behind the request, then the socket.
    func start(after bytes: [UInt8]) {
        loop.preconditionInEventLoop()
        // Weak: a paced drain may still run after the end (its replies then go nowhere).
        connection.drain.sendReplies { [weak self] reply in self?.send(WebSocketWire.frame(opcode: WebSocketWire.text, payload: reply.utf8)) }
        send(WebSocketWire.frame(opcode: WebSocketWire.text, payload: "hello touchbridge".utf8))
        connection.logger.info("web page connected from \(connection.source)")
        if !bytes.isEmpty {
            let taken = bytes.withUnsafeBytes { reader.append($0) }
            if taken < bytes.count {
                // More than a whole frame of the largest size before the 101 was even answered.
                return fail(.tooLarge)
            }
            parse()
        }
        if isOpen && !paused { resumeReading() }
    }

    /// Ends the connection with a close frame (`code`): the daemon stops.
    func close(code: UInt16) {
        guard isOpen else { return }
        reader.close()
        writeNow(WebSocketWire.closeFrame(code: code))
        finish()
    }

    /// Closes the connection with `code` and calls `closed` if nothing came for `Limits.pageSilence`,
    /// reading first what waits in the socket: the table's check runs on the server's loop and sees only
    /// what this loop has read, and this loop may be behind (a person's leave takes a second on a slow
    /// machine). A message held for the queue counts as heard.
    func closeIfSilent(code: UInt16, closed: () -> Void) {
        func silent() -> Bool {
            let now = connection.now.nanoseconds, heard = connection.activity.lastHeard.uptimeNanoseconds
            return now >= heard && now - heard >= UInt64(WebServer.Limits.pageSilence.nanoseconds)
        }
        guard isOpen, !paused, silent() else { return }
        readable()
        guard isOpen, !paused, silent() else { return }
        closed()
        close(code: code)
    }

    // MARK: reading

    private func resumeReading() {
        guard isOpen, !reading else { return }
        do {
            try loop.watch(descriptor) { [unowned self] in self.readable() }
            reading = true
            if !output.isEmpty { try loop.watchWritable(descriptor) { [unowned self] in self.writable() } }
        } catch {
            connection.logger.error("web page from \(connection.source): cannot watch its socket (\(error)); closing")
            finish()
        }
    }

    private func pauseReading() {
        guard reading else { return }
        reading = false
        loop.unwatch(descriptor)
    }

    /// One `read`, then every whole frame in what was read.
    private func readable() {
        guard isOpen else { return }
        let space = reader.space()
        let count = recv(descriptor, space.baseAddress, space.count, Int32(MSG_DONTWAIT))
        if count > 0 {
            reader.didRead(count)
            parse()
        } else if count == 0 {
            finish()  // the page closed the socket
        } else if errno != EAGAIN && errno != EINTR {
            // ECONNRESET, or ETIMEDOUT from TCP keepalive (a vanished phone).
            connection.logger.info("web page from \(connection.source): \(String(cString: strerror(errno)))")
            finish()
        }
    }

    /// Queues the page's messages of every whole frame read and drains the queue once.
    private func parse() {
        handle(reader.run(received: connection.now, offer: offer, write: reply, heard: heard))
    }

    /// The reader's replies: a pong waits behind what waits for room; the close frame that ends the
    /// socket goes now or never (the end follows at once).
    private func reply(_ frame: [UInt8]) {
        if reader.isClosed { writeNow(frame) } else { send(frame) }
    }

    private func heard() { connection.activity.heard(atUptimeNanoseconds: connection.now.nanoseconds) }

    /// Carries out how the reader's run ended; the drain a queued message asked for runs after it.
    private func handle(_ stop: WebSocketStop) {
        switch stop {
        case .needBytes:
            break
        case .paused:
            if !paused {
                paused = true
                pauseReading()
                let bound = NIOLoopBound(self, eventLoop: loop)
                connection.queue.whenDrained { [loop] in
                    // Called inside the drain: resumed after it, not within it.
                    loop.execute { bound.value.resume() }
                }
            }
        case .closed(let failure):
            if let failure { connection.dropped(failure) }
            finish()
        }
        if drainDue && isOpen {
            drainDue = false
            connection.drain.run()
        }
    }

    /// Queues `item`; a full queue is drained at once (on this loop); false when even that leaves no
    /// room (moves held by the pacing in front of it): the reader holds it until the next drain.
    private func offer(_ item: InputQueue.Item) -> Bool {
        if append(item) { return true }
        drainDue = false
        connection.drain.run()
        return append(item)
    }

    private func append(_ item: InputQueue.Item) -> Bool {
        switch connection.queue.append(item) {
        case .queued(let scheduleDrain):
            if scheduleDrain { drainDue = true }
            return true
        case .full:
            return false
        }
    }

    private func resume() {
        guard isOpen, paused else { return }
        paused = false
        // Paused again (the queue is still full), it waits for the next drain.
        handle(reader.resume(received: connection.now, offer: offer, write: reply, heard: heard))
        if isOpen && !paused { resumeReading() }
    }

    /// Ends the connection as the reader does for a frame it refuses: counted and logged, the close frame.
    private func fail(_ failure: WebSocketFailure) {
        reader.close()
        connection.dropped(failure)
        writeNow(WebSocketWire.closeFrame(code: failure.code))
        finish()
    }

    // MARK: writing

    /// The page's address.
    var source: SourceAddress { connection.source }

    /// The most a frame may take (the largest picture, 1920×1920, at the view's quality is far below).
    static let maxFrameBytes = 4 * 1024 * 1024

    /// Sends a live view frame as one binary message, past the replies' bound: the page asks for each
    /// (one in flight at most), so what waits is at most one frame and the replies behind it. False
    /// when closed, too large, or a frame is still waiting for room.
    func sendFrame(_ frame: [UInt8]) -> Bool {
        guard isOpen, frame.count <= Self.maxFrameBytes, output.count <= Self.maxPendingOutput else { return false }
        let bytes = WebSocketWire.frame(opcode: WebSocketWire.binary, payload: frame)
        if output.isEmpty {
            let written = writeNow(bytes)
            guard written >= 0 else {
                let bound = NIOLoopBound(self, eventLoop: loop)
                loop.execute { bound.value.finish() }
                return false
            }
            guard written < bytes.count else { return true }
            output += bytes[written...]
        } else {
            output += bytes
        }
        guard reading else { return true }
        do {
            try loop.watchWritable(descriptor) { [unowned self] in self.writable() }
        } catch {
            connection.logger.error("web page from \(connection.source): cannot watch its socket (\(error))")
        }
        return true
    }

    /// Sends `frame`, or keeps it until there is room (bounded).
    private func send(_ frame: [UInt8]) {
        guard isOpen else { return }
        guard output.isEmpty else {
            if output.count + frame.count > Self.maxPendingOutput {
                droppedReplies += 1
                if droppedReplies == 1 { connection.logger.notice("web page from \(connection.source) reads no replies: dropping them") }
                return
            }
            output += frame
            return
        }
        let written = writeNow(frame)
        guard written < frame.count else { return }
        guard written >= 0 else {
            // A reply may be sent from within the drain: the end comes after it, not within it.
            let bound = NIOLoopBound(self, eventLoop: loop)
            loop.execute { bound.value.finish() }
            return
        }
        output += frame[written...]
        guard reading else { return }  // watched again with the room's watch when reading resumes
        do {
            try loop.watchWritable(descriptor) { [unowned self] in self.writable() }
        } catch {
            connection.logger.error("web page from \(connection.source): cannot watch its socket (\(error))")
        }
    }

    /// `send(2)` of what fits now (no SIGPIPE): the bytes written, 0 when there was no room, -1 when the
    /// socket failed.
    @discardableResult
    private func writeNow(_ bytes: [UInt8]) -> Int {
        let written = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        if written >= 0 { return written }
        return errno == EAGAIN || errno == EINTR ? 0 : -1
    }

    private func writable() {
        guard isOpen else { return }
        let written = writeNow(output)
        guard written >= 0 else { return finish() }
        output.removeFirst(written)
        if output.isEmpty { loop.stopWritable(descriptor) }
    }

    // MARK: the end

    /// Closes the socket; what was queued is applied, then the page's fingers, keys and buttons are
    /// released (as `TLSWebSocket.channelInactive` does for a TLS page).
    private func finish() {
        guard isOpen else { return }
        isOpen = false
        pauseReading()
        Glibc.close(descriptor)
        // The held message and the whole ones read behind it, past the queue's bound, for the last drain.
        let queue = connection.queue
        reader.flush(received: connection.now) { queue.append($0, evenIfFull: true) }
        reader.close()
        connection.drain.run(final: true)
        connection.input.value.disconnected(connection.source, at: connection.now)
        connection.logger.info("web page disconnected from \(connection.source)")
        connection.input.value.release(self)
        ended()
    }
}

/// Hands a plain WebSocket's socket from the server's loop to the Bridge's (the top of the file).
struct SocketHandOver: Sendable {
    let bridgeLoop: BridgeEventLoop
    let serverLoop: any EventLoop
    let table: NIOLoopBoundBox<ConnectionTable>
    /// The duplicate of the channel's socket, made when the upgrade was accepted.
    let descriptor: Int32
    /// Whether the Bridge's loop took `descriptor` (else the channel's close closes it). The server's loop's.
    private let taken: NIOLoopBoundBox<Bool>

    /// On the server's loop, when an upgrade is accepted: the channel's socket duplicated, or nil (the
    /// page is then read on the server's loop, as a TLS page is). The duplicate is closed with the
    /// channel unless `perform` hands it over first (an upgrade that fails, a page gone before its turn).
    static func prepare(channel: any Channel, bridgeLoop: BridgeEventLoop, table: NIOLoopBoundBox<ConnectionTable>,
                        logger: Logger) -> SocketHandOver? {
        guard let local = channel.localAddress, let remote = channel.remoteAddress,
              let descriptor = duplicateDescriptor(local: local, remote: remote)
        else {
            logger.notice("web page from \(channel.remoteAddress.map { "\($0)" } ?? "?"): its socket's descriptor was not found in /proc/self/fd; read on the web server's loop")
            return nil
        }
        let taken = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
        channel.closeFuture.whenComplete { _ in
            if !taken.value { Glibc.close(descriptor) }
        }
        return SocketHandOver(bridgeLoop: bridgeLoop, serverLoop: channel.eventLoop, table: table, descriptor: descriptor, taken: taken)
    }

    /// On the server's loop, the turn after the upgrade: reading stops, the channel's place in the table
    /// goes to the socket, the channel is closed (the connection stays open on the duplicate), and the
    /// Bridge's loop takes the socket with the bytes `tap` kept.
    func perform(channel: any Channel, tap: HandOverTap, connection: WebConnection) {
        guard channel.isActive else { return }  // gone meanwhile (its close closed the duplicate): nothing of it was applied
        try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        taken.value = true
        let bytes = tap.bytes
        let token = HandOverToken(bridgeLoop: bridgeLoop)
        table.value.handOver(channel, to: token)
        channel.close(promise: nil)
        let (bridgeLoop, serverLoop, table, descriptor) = (self.bridgeLoop, self.serverLoop, self.table, self.descriptor)
        bridgeLoop.execute {
            let input = connection.input.value
            let socket = BridgeWebSocket(descriptor: descriptor, loop: bridgeLoop, connection: connection) {
                token.socket.value = nil
                serverLoop.execute { table.value.release(token) }
            }
            token.socket.value = socket
            input.adopt(socket)
            if input.isStopped {
                socket.close(code: WebSocketWire.goingAway)
            } else {
                socket.start(after: bytes)
            }
        }
    }

    /// A duplicate (close-on-exec) of this process's descriptor of the TCP connection from `remote` to
    /// `local`, found among `/proc/self/fd` by its two addresses (NIO does not give a channel's
    /// descriptor). Nil when none matches or `fcntl(F_DUPFD_CLOEXEC)` fails.
    static func duplicateDescriptor(local: SocketAddress, remote: SocketAddress) -> Int32? {
        guard let wantLocal = SourceAddress(local), let wantRemote = SourceAddress(remote),
              let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let descriptor = Int32(name),
                  address(of: descriptor, peer: true) == wantRemote, address(of: descriptor, peer: false) == wantLocal
            else { continue }
            let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            return copy >= 0 ? copy : nil
        }
        return nil
    }

    /// `getpeername(2)` (`peer`) or `getsockname(2)` of `descriptor`, as the core's address; nil for
    /// what is not an IPv4 or IPv6 socket.
    private static func address(of descriptor: Int32, peer: Bool) -> SourceAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length) }
        }
        guard rc == 0 else { return nil }
        return DatagramSource(raw: storage, length: length).address
    }
}

/// A handed-over socket's place in the connection table, until its end; the table closes the socket
/// through it (a page silent too long, or closed to make room).
final class HandOverToken: Sendable {
    let bridgeLoop: BridgeEventLoop
    /// The socket, from when the Bridge's loop takes it to its end. The Bridge's loop's.
    let socket: NIOLoopBoundBox<BridgeWebSocket?>

    init(bridgeLoop: BridgeEventLoop) {
        self.bridgeLoop = bridgeLoop
        socket = .makeEmptyBox(valueType: BridgeWebSocket.self, eventLoop: bridgeLoop)
    }

    /// Closes the socket with `code` (on the Bridge's loop, after its start: that was queued first).
    func close(code: UInt16) {
        bridgeLoop.execute { [socket] in socket.value?.close(code: code) }
    }

    /// The table found the page silent (`Limits.pageSilence`): on the Bridge's loop, the socket is closed
    /// with `code` and `closed` called, unless the page was heard from after all (`closeIfSilent`).
    func closeIfSilent(code: UInt16, closed: @escaping @Sendable () -> Void) {
        bridgeLoop.execute { [socket] in socket.value?.closeIfSilent(code: code, closed: closed) }
    }
}
