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
/// - `surface W H` (the touch surface in CSS pixels);
/// - `click left|middle|right [MODIFIERS]` (modifiers as a chord, `ctrl+shift`: the sticky keys);
/// - `text <characters>`;
/// - `key CHORD`: a key or chord as `--swipe` writes it (`Escape`, `F5`, `ctrl+c`, `XF86AudioMute`);
/// - `mode touchpad|touchscreen|presenter|pen`, `release`;
/// - `slide next|previous|blank|start|end|laser-on|laser-off|draw|clear` (the Slides panel);
/// - `set speed S` (-1...1), `set scroll-speed S` (0.1...10), `set natural-scroll on|off`,
///   `set tap-to-click on|off` (the page's live settings);
/// - `ping N` (N a decimal number below 2^53, what a page's JavaScript counts exactly);
/// - `pen away`, `pen hover|touch X Y P TX TY TW FLAGS` (the pen: `PenMessage.swift`).
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
            let parts = rest.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 1 || parts.count == 2 else { return nil }
            var modifiers = KeyChord.none
            if parts.count == 2 {
                guard let chord = Self.chord(parts[1]), chord.isModifiersOnly else { return nil }
                modifiers = chord
            }
            switch parts[0] {
            case "left": self = .click(PointerButton(rawValue: 1), modifiers: modifiers)
            case "middle": self = .click(PointerButton(rawValue: 2), modifiers: modifiers)
            case "right": self = .click(PointerButton(rawValue: 3), modifiers: modifiers)
            default: return nil
            }
        case "text":
            guard !rest.isEmpty, rest.unicodeScalars.count <= 256 else { return nil }
            self = .text(String(rest))
        case "key":
            guard let chord = Self.chord(rest) else { return nil }
            self = .key(chord)
        case "mode":
            guard let kind = TouchMode(rawValue: String(rest)) else { return nil }
            self = .mode(kind)
        case "release":
            guard rest.isEmpty else { return nil }
            self = .release
        case "slide":
            switch rest {
            case "next": self = .presenter(.next)
            case "previous": self = .presenter(.previous)
            case "blank": self = .presenter(.blank)
            case "start": self = .presenter(.start)
            case "end": self = .presenter(.end)
            case "laser-on": self = .presenter(.laserOn)
            case "laser-off": self = .presenter(.laserOff)
            case "draw": self = .presenter(.draw)
            case "clear": self = .presenter(.clear)
            default: return nil
            }
        case "set":
            let parts = rest.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            let value = parts[1]
            switch parts[0] {
            case "speed":
                guard let v = Double(value), TouchpadTuning.speedRange.contains(v) else { return nil }
                self = .tune(.speed(v))
            case "scroll-speed":
                guard let v = Double(value), TouchpadTuning.scrollSpeedRange.contains(v) else { return nil }
                self = .tune(.scrollSpeed(v))
            case "natural-scroll":
                guard let on = Self.onOff(value) else { return nil }
                self = .tune(.naturalScroll(on))
            case "tap-to-click":
                guard let on = Self.onOff(value) else { return nil }
                self = .tune(.tapToClick(on))
            default: return nil
            }
        case "pen":
            guard let report = PenReport(parsing: rest) else { return nil }  // PenMessage.swift
            self = .pen(report)
        case "ping":
            guard rest.utf8.count <= 16, rest.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let n = UInt64(rest), n < 1 << 53 else { return nil }
            self = .ping(n)
        default:
            return nil
        }
    }

    /// A non-empty chord of at most four known key names (no spaces: `ctrl+c`).
    private static func chord(_ text: Substring) -> KeyChord? {
        guard !text.isEmpty, text.utf8.count <= 96, !text.contains(" "),
              let chord = KeyChord(parsing: String(text)), chord.count > 0 else { return nil }
        return chord
    }

    private static func onOff(_ text: Substring) -> Bool? {
        switch text {
        case "on": return true
        case "off": return false
        default: return nil
        }
    }
}

extension KeyChord {
    /// Whether every key is Ctrl, Alt, Shift or Super (the page's sticky keys).
    var isModifiersOnly: Bool {
        for i in 0..<count where ![KeySym.controlL, .altL, .shiftL, .superL].contains(self[i]) { return false }
        return true
    }
}
