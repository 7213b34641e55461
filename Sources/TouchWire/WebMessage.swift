// The web page's language, in one place: what the page sends over its WebSocket (which kind a message
// is, the commands' grammar, the key chords' grammar) and what the daemon answers (the replies' words).
// The values are the core's (`WebCommand`, `PresenterCommand`, `TouchpadTuning`, `KeyChord`,
// `BridgeReply`: TouchCore/PageCommands.swift and Bridge.swift), since the Bridge decides on them;
// their text is here, since the core never reads or writes text. Standard library only, without
// Hummingbird or NIO, so the fuzzer compiles it straight from Sources/. `TouchWeb` reads the frames
// and hands the results to the Bridge's host; the page's JavaScript (TouchWeb/WebPage.swift) is the
// other speaker, and the commands' table in docs/architecture.md is the summary of both.
//
// A new kind of message (the pen's) gets its own case in `WebMessage`, a branch in `classify` by
// its first byte, and its own file beside this one when its grammar is more than a line.
import TouchCore

// MARK: - Messages

/// One WebSocket message of the page, classified.
public enum WebMessage: Equatable, Sendable {
    /// A PoseAI packet (first byte `{`), now in the decoder's `packet`.
    case packet
    /// Starts with `{` but the PoseAI decoder refused it (its `packet` is unchanged).
    case undecodablePacket(PoseAIDecodeError)
    /// A command: one line of text (see `WebCommand.init(parsing:)`).
    case command(WebCommand)
    /// Neither a packet nor a command (including text that is not UTF-8).
    case notACommand

    /// Classifies one message (at most `PoseAIDecoder.maxPacketBytes`; the caller drops larger ones)
    /// by its first byte: `{` goes through `decoder`, anything else must be a command.
    public static func classify(_ bytes: UnsafeRawBufferPointer, decoder: inout PoseAIDecoder) -> WebMessage {
        switch bytes.first {
        case UInt8(ascii: "{"):
            do throws(PoseAIDecodeError) {
                try decoder.decode(bytes)
                return .packet
            } catch {
                return .undecodablePacket(error)
            }
        default:
            guard let text = String(validating: bytes, as: UTF8.self), let command = WebCommand(parsing: Substring(text)) else {
                return .notACommand
            }
            return .command(command)
        }
    }
}

// MARK: - Commands

/// A command of the page, one text message each:
/// - `surface W H` (the touch surface in CSS pixels);
/// - `click left|middle|right [MODIFIERS]` (modifiers as a chord, `ctrl+shift`: the sticky keys);
/// - `edit N [TEXT]`: the page's text field changed: N BackSpace presses (0...256, decimal, no
///   leading zero), then, after one space, TEXT typed (1...256 Unicode scalars, no control character
///   but Tab); at least one of the two. The page splits longer edits (a paste) into several messages;
/// - `text <characters>` (1...256 scalars, no control character but Tab, as `edit`; the page before
///   `edit`, kept for cached pages);
/// - `key CHORD`: a key or chord as `--swipe` writes it (`Escape`, `F5`, `ctrl+c`, `XF86AudioMute`);
/// - `mode touchpad|touchscreen|presenter|pen`, `release`;
/// - `slide next|previous|blank|start|end|laser-on|laser-off|draw|clear` (the Slides panel), `slide goto N`
///   (its slide list: slide N, from 0, while LibreOffice Impress is paired);
/// - `set speed S` (-1...1), `set scroll-speed S` (0.1...10), `set natural-scroll on|off`,
///   `set tap-to-click on|off` (the page's live settings);
/// - `ping N` (N a decimal number below 2^53, what a page's JavaScript counts exactly);
/// - `pen away`, `pen hover|touch X Y P TX TY TW FLAGS` (the pen: `PenMessage.swift`);
/// - `view W H`: the live view's next frame, for a box of W×H device pixels (W and H decimal integers,
///   a `-` allowed, at most 9 digits: the `ViewMachine` refuses 0 and less, and caps the rest);
///   `view off`: the page shows no picture.
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
            guard Self.typedRefusal(rest, what: "a text command") == nil else { return nil }
            self = .text(String(rest))
        case "edit":
            guard case .edit(let n, let typed)? = Self.edit(rest) else { return nil }
            self = .edit(backspaces: n, text: typed)
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
            default:
                // `slide goto N`: a slide of the show (from 0), for a presentation program taken by protocol.
                guard rest.hasPrefix("goto "), let n = Int(rest.dropFirst(5)), n >= 0, n < WebCommand.maxSlide,
                      rest.dropFirst(5).allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
                self = .gotoSlide(n)
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
        case "view":
            if rest == "off" { self = .view(.off); return }
            let parts = rest.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = Self.viewSide(parts[0]), let h = Self.viewSide(parts[1]) else { return nil }
            self = .view(.next(width: w, height: h))
        case "ping":
            guard rest.utf8.count <= 16, rest.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let n = UInt64(rest), n < 1 << 53 else { return nil }
            self = .ping(n)
        default:
            return nil
        }
    }

    /// A side of `view W H`: an optional `-` and 1...9 decimal digits.
    private static func viewSide(_ text: Substring) -> Int? {
        let digits = text.first == "-" ? text.dropFirst() : text
        guard (1...9).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    /// Why `edit N [TEXT]`'s arguments were refused, or the edit.
    private enum EditParse { case edit(Int, String), refused(String) }

    /// Parses the arguments of `edit` (see the type's comment), or says what is wrong with them.
    private static func edit(_ rest: Substring) -> EditParse? {
        let space = rest.firstIndex(of: " ")
        let number = space.map { rest[..<$0] } ?? rest
        guard !number.isEmpty, number.utf8.count <= 9, number.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              number == "0" || number.first != "0", let n = Int(number) else {
            return .refused("an edit whose count of backspaces is not a decimal number")
        }
        guard n <= WebCommand.maxEditBackspaces else {
            return .refused("an edit of \(n) backspaces (at most \(WebCommand.maxEditBackspaces) a message)")
        }
        guard let space else { return n > 0 ? .edit(n, "") : .refused("an edit that changes nothing") }
        let typed = rest[rest.index(after: space)...]
        guard !typed.isEmpty else { return .refused("an edit with a space and no text after it") }
        if let why = typedRefusal(typed, what: "an edit") { return .refused(why) }
        return .edit(n, String(typed))
    }

    /// Why the text that `edit` or `text` would type is refused (`what` names the command in the
    /// reason), or nil: none, more than `maxEditScalars` scalars, or a control character
    /// (`WebCommand.isControl`: C0 but Tab, and DEL).
    private static func typedRefusal(_ typed: Substring, what: String) -> String? {
        guard !typed.isEmpty else { return "\(what) with no text" }
        var count = 0
        for scalar in typed.unicodeScalars {
            count += 1
            if WebCommand.isControl(scalar) {
                return "\(what) with a control character (U+\(String(scalar.value, radix: 16, uppercase: true))) in its text"
            }
        }
        guard count <= WebCommand.maxEditScalars else {
            return "\(what) of \(count) characters (at most \(WebCommand.maxEditScalars) a message)"
        }
        return nil
    }

    /// Why a message that starts as an `edit` or a `text` is not one (its count or its text out of
    /// bounds, a control character), for the log's line about the dropped message; nil for any other
    /// message. Only the refusal path calls it.
    public static func refusal(of bytes: UnsafeRawBufferPointer) -> String? {
        if bytes.starts(with: "text".utf8), bytes.count == 4 || bytes[4] == UInt8(ascii: " ") {
            guard let text = String(validating: bytes, as: UTF8.self) else { return "a text command that is not UTF-8" }
            return typedRefusal(Substring(text).dropFirst(5), what: "a text command")
        }
        guard bytes.starts(with: "edit".utf8), bytes.count == 4 || bytes[4] == UInt8(ascii: " ") else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else { return "an edit that is not UTF-8" }
        if text.utf8.count == 4 { return "an edit with no count of backspaces" }
        if case .refused(let why)? = edit(Substring(text).dropFirst(5)) { return why }
        return nil
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

// MARK: - Key chords

extension KeyChord {
    /// Parses `ctrl+alt+Right`, `super`, `alt+Left`, `none`: names separated by `+`, each a modifier
    /// (`ctrl`, `alt`, `shift`, `super`), a key name from `KeyNames`, a single letter or digit, or
    /// a keysym in hex (`0xff53`). Case-insensitive. Nil when a name is unknown or there are more than
    /// four keys. The one chord grammar: the page's `key` and `click` commands, `--swipe`,
    /// `--presenter-key` and the config file all write chords this way (`description` reads back).
    public init?(parsing text: String) {
        self.init()
        let trimmed = text.filter { $0 != " " }
        if trimmed.lowercased() == "none" || trimmed.isEmpty { return }
        for part in trimmed.split(separator: "+", omittingEmptySubsequences: false) {
            guard count < Self.maxKeys, let key = KeyNames.keySym(named: String(part)) else { return nil }
            append(key)
        }
    }

    /// Whether every key is Ctrl, Alt, Shift or Super (the page's sticky keys).
    var isModifiersOnly: Bool {
        for i in 0..<count where ![KeySym.controlL, .altL, .shiftL, .superL].contains(self[i]) { return false }
        return true
    }
}

// MARK: - Replies

extension BridgeReply {
    /// The reply as the page reads it (`busy`, `mode touchpad`, `pong 7`, `drawing on`, `error …`); nil
    /// for what means nothing to the page (the PoseAI handshake).
    public var pageText: String? {
        switch self {
        case .busy: return "busy"
        case .mode(let kind): return "mode \(kind.rawValue)"
        case .pong(let n): return "pong \(n)"
        case .drawing(let on): return on ? "drawing on" : "drawing off"
        case .refused(let keysym):
            return "error no key on the desktop's keyboard layout makes \(KeyNames.name(of: keysym)): nothing was pressed"
        case .cannotType(let keysym):
            return "error this desktop cannot type \(KeyNames.name(of: keysym)): no key on its keyboard layout makes it, "
                + "and it lets no program add one (a Wayland desktop without the virtual keyboard protocol, such as GNOME or KDE Plasma 5): the rest was typed"
        case .viewRefused(let why):
            return "view none \(why.word): \(why)"
        case .handshake: return nil
        }
    }
}
