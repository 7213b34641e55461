// What the web page sends over its WebSocket, classified without Hummingbird or NIO (so the fuzzer
// compiles it straight from Sources/): a PoseAI packet (a JSON object, through the same decoder as the
// UDP stream) or one short text command. `TouchWeb.WebInput` hands the result to the Bridge's host.
import TouchCore

/// One WebSocket message of the page, classified.
public enum WebMessage: Equatable, Sendable {
    /// A PoseAI packet, now in the decoder's `packet`.
    case packet
    /// Starts with `{` but the PoseAI decoder refused it (its `packet` is unchanged).
    case undecodablePacket(PoseAIDecodeError)
    case command(WebCommand)
    /// Neither a packet nor a command (including text that is not UTF-8).
    case notACommand

    /// Classifies one message (at most `PoseAIDecoder.maxPacketBytes`; the caller drops larger ones):
    /// a message whose first byte is `{` goes through `decoder`, anything else must be a command.
    public static func classify(_ bytes: UnsafeRawBufferPointer, decoder: inout PoseAIDecoder) -> WebMessage {
        if let first = bytes.first, first == UInt8(ascii: "{") {
            do throws(PoseAIDecodeError) {
                try decoder.decode(bytes)
                return .packet
            } catch {
                return .undecodablePacket(error)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self), let command = WebCommand(parsing: Substring(text)) else {
            return .notACommand
        }
        return .command(command)
    }
}

/// A command of the page, one text message each:
/// `surface W H` (the touch surface in CSS pixels), `click left|middle|right`, `text <characters>`,
/// `key Return|BackSpace|Tab|Escape`, `mode touchpad|touchscreen|presenter`, `release`.
extension WebCommand {
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
            guard let kind = OutputModeKind(rawValue: String(rest)) else { return nil }
            self = .mode(kind)
        case "release":
            guard rest.isEmpty else { return nil }
            self = .release
        default:
            return nil
        }
    }
}
