// The live view's decisions: when the desktop's picture is captured and for whom. Pure: standard
// library only, time passed in; the shell (the daemon's host) feeds it and performs what it answers.
//
// The page pulls: it asks for the next frame (`view W H`) when it has shown the last, so at most one
// frame is ever in flight and a slow link never builds a queue. A frame is captured only when all four
// hold: the view is on, the page that asks holds the session, it has asked, and the screen changed
// since the last frame (damage). A still screen costs nothing: no capture, no frame, no wake-up.
//
// ```
//                 ask(W H) by the holder ─► asked = clamp(W H)   (a second ask replaces the first)
//  damage ─► damaged                                   │
//         asked && damaged && holder && on ─► capture(size); asked = nil, damaged = false
//  holder changes / view off / disabled ─► everything forgotten (stopped: the mark goes)
//  capture had no picture yet ─► the ask stands; captured again at the next damage, or at
//                                 `notReadyRetry` if none comes (`timer`); still none `pictureLimit`
//                                 after the first that had none ─► given up (viewing stopped, the
//                                 page told; it may ask again)
// ```

/// The size of a picture in pixels (both at least 1).
public struct ViewSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    @inlinable
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
}

/// A request of the page's view (`view W H`, `view off`), as parsed (TouchWire's WebMessage.swift):
/// the size is the page's as sent, which the machine judges.
public enum ViewRequest: Hashable, Sendable {
    /// The page has shown the last frame (or has none yet) and wants the next, `width × height` device pixels.
    case next(width: Int, height: Int)
    /// The page shows no picture (touchpad mode, the view turned off on the page).
    case off
}

/// Why a request of the view got no picture.
public enum ViewRefusal: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The view is turned off on this daemon (`view = false`, `--no-view`).
    case disabled
    /// The desktop gives no picture (Wayland this release, no desktop, or its capture failed).
    case noPicture
    /// A size of 0 or less on a side.
    case badSize
    /// The page asking does not hold the session.
    case notHolder

    /// One word for the page (`view none WORD: …`).
    public var word: String {
        switch self {
        case .disabled: return "disabled"
        case .noPicture: return "no-picture"
        case .badSize: return "bad-size"
        case .notHolder: return "busy"
        }
    }

    public var description: String {
        switch self {
        case .disabled: return "the view is turned off on this computer (view = false, --no-view)"
        case .noPicture: return "this desktop gives no picture"
        case .badSize: return "a picture size of 0 or less"
        case .notHolder: return "another phone holds the session"
        }
    }
}

/// What the machine asks the shell to do after an input.
public enum ViewAction: Hashable, Sendable {
    /// Nothing now.
    case none
    /// Capture the screen, scale it to `size` and send it to the holder as one frame.
    case capture(ViewSize)
    /// Answer the page that asked: no picture, and why.
    case refuse(ViewRefusal)
    /// The picture has not come for `waited` (`ViewMachine.pictureLimit`): given up, viewing stopped;
    /// the holder is told (`view none no-picture`) and may ask again.
    case giveUp(waited: Interval)
}

/// The view's state machine: one per daemon.
public struct ViewMachine: Sendable {
    /// The longest side a picture may have, in pixels: a larger ask is scaled down, keeping its shape.
    public static let maxLongSide = 1920
    /// The shortest side a picture may have, in pixels: a smaller ask (but above 0) is scaled up to it.
    public static let minSide = 16

    /// Whether the daemon may show its screen at all (`view = false` makes this false for good).
    public let enabled: Bool
    /// Whether the desktop gives a picture now (X11 with MIT-SHM; false on Wayland, with no desktop,
    /// or after the capture failed).
    public private(set) var available: Bool
    /// The sender that may get frames: the session's holder, as the host last told it.
    public private(set) var holder: Sender?
    /// Whether the holder is viewing: it asked for a frame since it became the holder and has not
    /// said `view off` (the overlay's mark and the start and stop lines follow this).
    public private(set) var viewing = false
    /// The size of the frame asked for and not sent yet (nil: none asked, or sent).
    public private(set) var asked: ViewSize?
    /// Whether the screen changed since the last frame (true at first: the first ask gets a frame).
    public private(set) var damaged = true
    /// Frames captured since the start (for the log and the tests).
    public private(set) var frames: UInt64 = 0

    public init(enabled: Bool, available: Bool) {
        self.enabled = enabled
        self.available = available
    }

    /// Fits the page's asked size into the bounds: nil for a side of 0 or less; else the shape kept,
    /// the long side at most `maxLongSide`, each side at least `minSide`.
    public static func clamp(width: Int, height: Int) -> ViewSize? {
        guard width >= 1, height >= 1 else { return nil }
        var w = width, h = height
        let long = max(w, h)
        if long > maxLongSide {
            // In doubles: any Int scales without overflow (the parser lets 9 digits through; the machine
            // takes whatever it is given).
            w = Int((Double(w) / Double(long) * Double(maxLongSide)).rounded())
            h = Int((Double(h) / Double(long) * Double(maxLongSide)).rounded())
        }
        return ViewSize(width: min(maxLongSide, max(minSide, w)), height: min(maxLongSide, max(minSide, h)))
    }

    /// The picture's size for a page whose box is `box` (clamped) and a monitor of `shape`: the
    /// largest of the monitor's shape inside the box (letterboxed), at least 1×1. The page draws it
    /// centred in its box and maps touches on it onto the monitor.
    public static func fit(_ box: ViewSize, shape: PixelRect) -> ViewSize {
        let bw = Int64(box.width), bh = Int64(box.height)
        let sw = Int64(max(1, shape.width)), sh = Int64(max(1, shape.height))
        if bw * sh > bh * sw {
            // The box is wider than the monitor: full height.
            return ViewSize(width: Int(max(1, min(bw, (2 * bh * sw + sh) / (2 * sh)))), height: Int(bh))
        }
        return ViewSize(width: Int(bw), height: Int(max(1, min(bh, (2 * bw * sh + sw) / (2 * sw)))))
    }

    /// A request of the page at `from`. `viewingChanged` is set when viewing starts or stops.
    public mutating func request(_ request: ViewRequest, from sender: Sender, at now: Instant,
                                 viewingChanged: inout Bool) -> ViewAction {
        guard enabled else { return .refuse(.disabled) }
        guard sender == holder else { return .refuse(.notHolder) }
        switch request {
        case .off:
            viewingChanged = stop()
            return .none
        case .next(let width, let height):
            guard available else {
                viewingChanged = stop()
                return .refuse(.noPicture)
            }
            guard let size = Self.clamp(width: width, height: height) else { return .refuse(.badSize) }
            if !viewing {
                viewing = true
                viewingChanged = true
                damaged = true  // a page that starts viewing gets the picture as it is
            }
            // A new size is a new picture, even on a still screen.
            if let last = lastSize, last != size { damaged = true }
            asked = size
            return due()
        }
    }

    /// The screen changed (damage, a monitor resized or rotated).
    public mutating func damage(at now: Instant) -> ViewAction {
        damaged = true
        return due()
    }

    /// The capture of `size` had no picture yet (a screen cast still starting, a compositor slow with
    /// its first copy): the ask stands and the next change captures it, as if nothing had been captured;
    /// with no change by `notReadyRetry`, it is captured again then (`timer`). Once the captures have
    /// had no picture for `pictureLimit` since the first of them, the picture is given up: viewing
    /// stops (everything forgotten) and the answer is `.giveUp`, which the shell tells the page. The
    /// desktop stays available: a later ask (the page connected again) starts afresh.
    public mutating func notReady(_ size: ViewSize, at now: Instant) -> ViewAction {
        guard viewing, asked == nil else { return .none }
        let since = captureWaitingSince ?? now
        captureWaitingSince = nil
        frames &-= 1
        if !(now - since < Self.pictureLimit) {
            _ = stop()
            return .giveUp(waited: now - since)
        }
        asked = size
        damaged = false
        waitingSince = since
        retryAt = now + Self.notReadyRetry
        return .none
    }

    /// The shell's timer for `retryAt`: the capture that had no picture is tried again when due.
    public mutating func timer(at now: Instant) -> ViewAction {
        guard let at = retryAt, !(now < at) else { return .none }
        retryAt = nil
        damaged = true
        return due()
    }

    /// The session's holder after the Bridge's last step (nil: none). A new holder, or none, ends the
    /// old one's view: everything it asked is forgotten. Returns whether viewing stopped.
    public mutating func holderChanged(to sender: Sender?) -> Bool {
        guard sender != holder else { return false }
        let stopped = stop()
        holder = sender
        return stopped
    }

    /// Whether the desktop gives a picture (it came, went, or its capture failed). Going away stops the
    /// view (returns true then); the page learns at its next ask.
    public mutating func setAvailable(_ on: Bool) -> Bool {
        available = on
        return on ? false : stop()
    }

    /// The size of the last frame captured (a different ask makes a new picture).
    public private(set) var lastSize: ViewSize?
    /// When a capture that had no picture yet is tried again if no damage came first (nil: none due).
    /// The shell arms a timer for it and calls `timer(at:)`.
    public private(set) var retryAt: Instant?
    /// When the first of the captures that have had no picture yet was (nil: the last capture had one).
    public private(set) var waitingSince: Instant?
    /// `waitingSince` as it was when the capture under way began (its `notReady` carries it on).
    private var captureWaitingSince: Instant?
    /// How long a capture that had no picture yet waits for the picture's coming (damage) before it is
    /// tried again: a compositor slow to copy under load, a screen cast still starting.
    public static let notReadyRetry = Interval.seconds(2)
    /// How long the picture may stay not there before the view gives it up: a loaded compositor's late
    /// first copy (over 1 s seen in a loaded VM) and a screen cast's first frame come well within it; a
    /// compositor stopped, or a cast that never starts, gets the page `view none no-picture` after it
    /// rather than a blank for ever.
    public static let pictureLimit = Interval.seconds(10)

    /// Captures when everything says so.
    private mutating func due() -> ViewAction {
        guard enabled, available, viewing, holder != nil, damaged, let size = asked else { return .none }
        asked = nil
        damaged = false
        lastSize = size
        frames &+= 1
        retryAt = nil
        captureWaitingSince = waitingSince
        waitingSince = nil
        return .capture(size)
    }

    /// Forgets the view; true when it was viewing.
    private mutating func stop() -> Bool {
        let was = viewing
        viewing = false
        asked = nil
        damaged = true
        lastSize = nil
        retryAt = nil
        waitingSince = nil
        captureWaitingSince = nil
        return was
    }
}
