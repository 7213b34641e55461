// What the page sends over its WebSocket, handled on the Bridge's event loop: PoseAI packets (JSON
// objects, through the same decoder as the UDP stream) and short text commands.
import Logging
import NIOCore
import TouchCore
import TouchWire

/// Why a WebSocket message was dropped.
public enum WebDrop: Int, CaseIterable, Sendable, CustomStringConvertible {
    case undecodablePacket, unknownCommand, fragmented, tooLarge, staleMove

    public var description: String {
        switch self {
        case .undecodablePacket: return "a touch packet the PoseAI decoder refused"
        case .unknownCommand: return "not a command"
        case .fragmented: return "a fragmented message"
        case .tooLarge: return "a message larger than 64 KiB"
        case .staleMove: return "a finger move older than 50 ms when its turn came (the page sent faster than it could be applied)"
        }
    }
}

/// Decodes the page's messages on the loop and hands them to the sink. One for all connections: the
/// loop runs one message at a time, so one decoder serves every socket.
public final class WebInput {
    private var decoder = PoseAIDecoder()
    private let sink: any TouchSink
    private let logger: Logger
    public private(set) var drops = DropLog<5>()
    public private(set) var delivered: UInt64 = 0

    public init(sink: any TouchSink, logger: Logger) {
        self.sink = sink
        self.logger = logger
    }

    /// One message from `source`; returns a line to send back, if any.
    public func message(_ buffer: ByteBuffer, from source: SourceAddress, at now: Instant) -> String? {
        guard buffer.readableBytes <= PoseAIDecoder.maxPacketBytes else {
            drop(.tooLarge, from: source, at: now)
            return nil
        }
        let kind = buffer.withUnsafeReadableBytes { WebMessage.classify($0, decoder: &decoder) }
        switch kind {
        case .packet:
            delivered &+= 1
            return Self.text(of: sink.packet(decoder.packet, from: source, via: .web, at: now))
        case .undecodablePacket(let failure):
            drop(.undecodablePacket, from: source, at: now, detail: failure.description)
            return nil
        case .notACommand:
            drop(.unknownCommand, from: source, at: now)
            return nil
        case .command(let command):
            delivered &+= 1
            return Self.text(of: sink.command(command, from: source, at: now))
        }
    }

    public func disconnected(_ source: SourceAddress, at now: Instant) {
        sink.sourceGone(source, at: now)
    }

    /// A reply as the page reads it (`busy`, `mode touchpad`); the PoseAI handshake means nothing to
    /// the page.
    static func text(of reply: BridgeReply?) -> String? {
        switch reply {
        case .busy: return "busy"
        case .mode(let kind): return "mode \(kind.rawValue)"
        case .pong(let n): return "pong \(n)"
        case .drawing(let on): return on ? "drawing on" : "drawing off"
        case .refused(let keysym):
            return "error no key on the desktop's keyboard layout makes \(KeyNames.name(of: keysym)): nothing was pressed"
        case .handshake, nil: return nil
        }
    }

    func drop(_ reason: WebDrop, from source: SourceAddress, at now: Instant, detail: String? = nil) {
        guard let report = drops.record(reasonIndex: reason.rawValue, at: now) else { return }
        let suffix = report.countsSuffix
        logger.warning("dropped a WebSocket message from \(source): \(detail ?? reason.description)\(suffix)")
    }
}
