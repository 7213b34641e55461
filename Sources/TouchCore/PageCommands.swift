// The web page's commands as the Bridge receives them: `WebCommand`, with the Slides panel's buttons and
// the live settings. Their text (the grammar, the replies' words) is TouchWire/WebMessage.swift.

/// A command of the web page, one text message each. Its grammar and the words of the replies are
/// TouchWire/WebMessage.swift's (`WebCommand(parsing:)`, `BridgeReply.pageText`).
public enum WebCommand: Equatable, Sendable {
    /// The page's touch surface, in CSS pixels.
    case surface(width: Double, height: Double)
    /// Press and release a button, with `modifiers` (the page's sticky Ctrl/Alt/Super/Shift; `.none`
    /// for none) pressed around it.
    case click(PointerButton, modifiers: KeyChord = .none)
    /// Type these characters (the page before the `edit` command; kept for pages a service worker
    /// still serves from its cache).
    case text(String)
    /// The page's text field changed: press BackSpace `backspaces` times, then type `text` (one key
    /// press and release per Unicode scalar). The page sends the smallest such edit that turns what it
    /// has typed on this line into what its field shows: see `maxEditBackspaces`.
    case edit(backspaces: Int, text: String)
    /// Press and release this key, or chord (modifiers first, released in reverse).
    case key(KeyChord)
    /// A button of the page's Slides panel (see `PresenterCommand`).
    case presenter(PresenterCommand)
    /// A live setting of the page, for this page only (see `TouchpadTuning`).
    case tune(TouchpadTuning)
    /// Answered `pong N` at once, whoever holds the session: the page's round-trip time.
    case ping(UInt64)
    /// Switch what touches do.
    case mode(TouchMode)
    /// Release everything the page holds (the page was hidden).
    case release
    /// The page's pen (`pen …`, parsed in TouchWire's PenMessage.swift).
    case pen(PenReport)
    /// The live view: the next frame, or none (`ViewMachine`).
    case view(ViewRequest)
    /// The slide list: show slide N (from 0), while a presentation program takes the slides by protocol
    /// (LibreOffice Impress, paired); nothing otherwise.
    case gotoSlide(Int)
}

extension WebCommand {
    /// The most BackSpace presses one `edit` may ask for; a longer deletion is several messages.
    public static let maxEditBackspaces = 256
    /// The most Unicode scalars one `edit` (or `text`) may type; the page splits a longer paste into
    /// several messages, which arrive in order.
    public static let maxEditScalars = 256
    /// The first slide number `slide goto` refuses (Impress's own bound is the show's count).
    public static let maxSlide = 100_000

    /// Whether `scalar` is a control character that `edit` and `text` refuse to type: C0 but Tab
    /// (U+0000…U+001F, so Escape, NUL and line breaks too) and DEL (U+007F).
    @inlinable
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 && scalar != "\t" || scalar.value == 0x7F
    }
}

/// A button of the web page's Slides panel.
public enum PresenterCommand: String, Hashable, Sendable, CaseIterable {
    /// The bindings' keys (`PresenterBindings`: next, previous, blank, start, end), in any mode.
    case next, previous, blank, start, end
    /// The Laser button is held: the laser is on and the pad's first finger moves the dot (presenter
    /// mode only).
    case laserOn
    /// The Laser button is released: the dot and its trail go.
    case laserOff
    /// The Draw button: drawing on or off (presenter mode only).
    case draw
    /// The Clear button: every drawing goes (presenter mode only).
    case clear

    /// What the button asks of a presentation program taken by protocol (LibreOffice Impress), nil for
    /// the buttons that stay keys or the overlay's (blank, the laser, drawing).
    public var slideRequest: SlideRequest? {
        switch self {
        case .next: return .next
        case .previous: return .previous
        case .start: return .start
        case .end: return .stop
        case .blank, .laserOn, .laserOff, .draw, .clear: return nil
        }
    }

    /// The chord a key button sends, nil for the overlay buttons.
    public func chord(in keys: PresenterBindings) -> KeyChord? {
        switch self {
        case .next: return keys.next
        case .previous: return keys.previous
        case .blank: return keys.blank
        case .start: return keys.start
        case .end: return keys.end
        case .laserOn, .laserOff, .draw, .clear: return nil
        }
    }
}

/// One live setting of the web page: it overrides the configured touchpad setting for that page only,
/// until the page goes or another sender takes over (`touchbridge config --print` never shows it).
public enum TouchpadTuning: Hashable, Sendable {
    /// Pointer speed, -1...1 (`TouchpadSettings.speed`).
    case speed(Double)
    /// Scroll speed, 0.1...10 (`TouchpadSettings.scrollSpeed`).
    case scrollSpeed(Double)
    case naturalScroll(Bool)
    case tapToClick(Bool)

    /// The range the page may set, per setting.
    public static let speedRange = -1.0...1.0
    public static let scrollSpeedRange = 0.1...10.0

    /// `settings` with this one setting changed.
    public func apply(to settings: inout TouchpadSettings) {
        switch self {
        case .speed(let v): settings.speed = v
        case .scrollSpeed(let v): settings.scrollSpeed = v
        case .naturalScroll(let v): settings.naturalScroll = v
        case .tapToClick(let v): settings.tapToClick = v
        }
    }

    /// Copies the tunable settings of `from` into `settings` (the rest, the surface included, stays).
    public static func restore(_ settings: inout TouchpadSettings, from base: TouchpadSettings) {
        settings.speed = base.speed
        settings.scrollSpeed = base.scrollSpeed
        settings.naturalScroll = base.naturalScroll
        settings.tapToClick = base.tapToClick
    }
}

/// What the Slides panel asks of a presentation program that takes it by protocol rather than keys
/// (LibreOffice Impress, through its remote server, once paired). The shell sends it.
public enum SlideRequest: Hashable, Sendable {
    case start, stop, next, previous
    /// Show slide N (from 0).
    case goto(Int)
}
