// What the page sends over its WebSocket, handled on the engine's event loop: PoseAI packets (JSON
// objects, through the same decoder as the UDP stream) and short text commands.
import Logging
import NIOCore
import TouchCore
import TouchNet
import TouchWire

/// A command of the page, one text message each:
/// `surface W H` (the touch surface in CSS pixels), `click left|middle|right`, `text <characters>`,
/// `key Return|BackSpace|Tab|Escape`, `mode touchpad|touchscreen|presenter`, `release`.
public enum WebCommand: Equatable, Sendable {
    case surface(width: Double, height: Double)
    case click(PointerButton)
    case text(String)
    case key(KeySym)
    case mode(String)
    case release

    /// Parses one command; nil when it is not one.
    public init?(parsing text: Substring) {
        let space = text.firstIndex(of: " ")
        let verb = space.map { text[..<$0] } ?? text
        let rest = space.map { text[text.index(after: $0)...] } ?? ""
        switch verb {
        case "surface":
            let parts = rest.split(separator: " ")
            guard parts.count == 2, let w = Double(parts[0]), let h = Double(parts[1]),
                  w.isFinite, h.isFinite, (10...10_000).contains(w), (10...10_000).contains(h) else { return nil }
            self = .surface(width: w, height: h)
        case "click":
            switch rest {
            case "left": self = .click(PointerButton(rawValue: 1))
            case "middle": self = .click(PointerButton(rawValue: 2))
            case "right": self = .click(PointerButton(rawValue: 3))
            default: return nil
            }
        case "text":
            guard !rest.isEmpty, rest.unicodeScalars.count <= 256 else { return nil }
            self = .text(String(rest))
        case "key":
            switch rest {
            case "Return": self = .key(.returnKey)
            case "BackSpace": self = .key(.backSpace)
            case "Tab": self = .key(.tab)
            case "Escape": self = .key(.escape)
            default: return nil
            }
        case "mode":
            guard ["touchpad", "touchscreen", "presenter"].contains(rest) else { return nil }
            self = .mode(String(rest))
        case "release":
            guard rest.isEmpty else { return nil }
            self = .release
        default:
            return nil
        }
    }
}

/// The engine's side of the web page. Every call is on the engine's event loop.
public protocol WebClientSink: PoseAIPacketSink {
    /// A command from the page at `source`; returns a line to send back, if any.
    func webCommand(_ command: WebCommand, from source: SourceAddress, at now: Instant) -> String?
    /// The page at `source` closed its socket (or it dropped): whatever it held is released.
    func webDisconnected(_ source: SourceAddress, at now: Instant)
}

/// Why a WebSocket message was dropped.
public enum WebDrop: Int, CaseIterable, Sendable, CustomStringConvertible {
    case undecodablePacket, unknownCommand, fragmented, tooLarge

    public var description: String {
        switch self {
        case .undecodablePacket: return "a touch packet the PoseAI decoder refused"
        case .unknownCommand: return "not a command"
        case .fragmented: return "a fragmented message"
        case .tooLarge: return "a message larger than 64 KiB"
        }
    }
}

/// Decodes the page's messages on the loop and hands them to the sink. One for all connections: the
/// loop runs one message at a time, so one decoder serves every socket.
public final class WebInput {
    private var decoder = PoseAIDecoder()
    private let sink: any WebClientSink
    private let logger: Logger
    public private(set) var drops = DropLog<4>()
    public private(set) var delivered: UInt64 = 0

    public init(sink: any WebClientSink, logger: Logger) {
        self.sink = sink
        self.logger = logger
    }

    /// One message from `source`; returns a line to send back, if any.
    public func message(_ buffer: ByteBuffer, from source: SourceAddress, at now: Instant) -> String? {
        guard buffer.readableBytes <= PoseAIDecoder.maxPacketBytes else {
            drop(.tooLarge, from: source, at: now)
            return nil
        }
        if buffer.readableBytes > 0, buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) == UInt8(ascii: "{") {
            let failure = buffer.withUnsafeReadableBytes { bytes -> PoseAIDecodeError? in
                do throws(PoseAIDecodeError) {
                    try decoder.decode(bytes)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure {
                drop(.undecodablePacket, from: source, at: now, detail: failure.description)
                return nil
            }
            delivered &+= 1
            return sink.receive(decoder.packet, from: source, at: now) == .refusedBusy ? "busy" : nil
        }
        guard let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes),
              let command = WebCommand(parsing: Substring(text)) else {
            drop(.unknownCommand, from: source, at: now)
            return nil
        }
        delivered &+= 1
        return sink.webCommand(command, from: source, at: now)
    }

    public func disconnected(_ source: SourceAddress, at now: Instant) {
        sink.webDisconnected(source, at: now)
    }

    func drop(_ reason: WebDrop, from source: SourceAddress, at now: Instant, detail: String? = nil) {
        guard let report = drops.record(reasonIndex: reason.rawValue, at: now) else { return }
        let suffix = report.suppressed > 0 ? " (and \(report.suppressed) more since the last report; \(report.total) in all)" : ""
        logger.warning("dropped a WebSocket message from \(source): \(detail ?? reason.description)\(suffix)")
    }
}
