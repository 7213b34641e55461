// The page's messages on the Bridge's event loop: PoseAI packets and commands, already decoded by the
// connection's reader (InputQueue.swift), handed to the sink; the dropped ones counted and logged.
import Logging
import TouchCore
import TouchWire

/// Why a WebSocket message was dropped.
public enum WebDrop: Int, CaseIterable, Sendable, CustomStringConvertible {
    case undecodablePacket, unknownCommand, fragmented, tooLarge, staleMove, protocolError

    public var description: String {
        switch self {
        case .undecodablePacket: return "a touch packet the PoseAI decoder refused"
        case .unknownCommand: return "not a command"
        case .fragmented: return "a fragmented message"
        case .tooLarge: return "a message larger than 64 KiB"
        case .staleMove: return "a finger move older than 50 ms when its turn came (the page sent faster than it could be applied)"
        case .protocolError: return "a frame RFC 6455 does not allow (the socket was closed)"
        }
    }
}

/// Hands the page's messages, decoded by their reader (`MessageReader`), to the sink on the Bridge's
/// loop, and counts the dropped ones. One for all connections, owned by that loop.
public final class WebInput {
    private let sink: any TouchSink
    private let logger: Logger
    public private(set) var drops = DropLog<6>()
    public private(set) var delivered: UInt64 = 0

    public init(sink: any TouchSink, logger: Logger) {
        self.sink = sink
        self.logger = logger
    }

    /// One message from `source`; returns a line to send back, if any (`BridgeReply.pageText`).
    public func apply(_ input: PageInput, from source: SourceAddress, at now: Instant) -> String? {
        switch input {
        case .packet(let packet):
            delivered &+= 1
            return sink.packet(packet, from: source, via: .web, at: now)?.pageText
        case .command(let command):
            delivered &+= 1
            return sink.command(command, from: source, at: now)?.pageText
        case .dropped(let reason, let detail):
            drop(reason, from: source, at: now, detail: detail)
            return nil
        }
    }

    public func disconnected(_ source: SourceAddress, at now: Instant) {
        frameStreams.removeValue(forKey: source)?.finish()
        pages[source] = nil
        sink.sourceGone(source, at: now)
    }

    /// The TLS pages' frame streams, by address, from their first drain to their end.
    private var frameStreams: [SourceAddress: AsyncStream<[UInt8]>.Continuation] = [:]

    /// A TLS page's frames go to `frames` (its writer, on the server's loop).
    func takeFrames(for source: SourceAddress, _ frames: AsyncStream<[UInt8]>.Continuation) {
        if frameStreams[source] == nil { frameStreams[source] = frames }
    }

    /// Every page by its address, from its first message to its end: where `push` finds it.
    private var pages: [SourceAddress: WebDrain] = [:]

    func register(_ drain: WebDrain) {
        pages[drain.source] = drain
    }

    /// Sends `lines` to the page at `source`, if it is still there: lines that answer nothing it sent
    /// (what LibreOffice Impress shows). On the Bridge's loop.
    public func push(_ lines: [String], to source: SourceAddress) {
        guard let page = pages[source] else { return }
        for line in lines { page.push(line) }
    }

    /// The pages whose sockets this loop reads (BridgeWebSocket.swift), until their end.
    private var sockets: [ObjectIdentifier: BridgeWebSocket] = [:]
    /// Set by `closeAll`: a socket handed over after it is closed at once.
    private(set) var isStopped = false

    func adopt(_ socket: BridgeWebSocket) {
        sockets[ObjectIdentifier(socket)] = socket
    }

    func release(_ socket: BridgeWebSocket) {
        sockets[ObjectIdentifier(socket)] = nil
    }

    /// The daemon stops: every page read here gets a close frame (1001, going away), and what it held
    /// is released, as when its socket ends.
    public func closeAll() {
        isStopped = true
        for socket in sockets.values { socket.close(code: WebSocketWire.goingAway) }
        sockets.removeAll()
    }

    /// Sends a live view frame (`ViewFrame`) to the page at `source` as one binary message; false when
    /// no page read here is at that address, or its socket still holds the last frame (the page pulls:
    /// one in flight at most). A TLS page (read on the server's loop) gets it through its writer, which
    /// keeps the newest frame only.
    public func sendFrame(_ frame: [UInt8], to source: SourceAddress) -> Bool {
        for socket in sockets.values where socket.source == source { return socket.sendFrame(frame) }
        guard let stream = frameStreams[source] else { return false }
        if case .terminated = stream.yield(frame) {
            frameStreams[source] = nil
            return false
        }
        return true
    }

    func drop(_ reason: WebDrop, from source: SourceAddress, at now: Instant, detail: String? = nil) {
        guard let report = drops.record(reasonIndex: reason.rawValue, at: now) else { return }
        let suffix = report.countsSuffix
        logger.warning("dropped a WebSocket message from \(source): \(detail ?? reason.description)\(suffix)")
    }
}
