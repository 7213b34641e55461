// What flows between the stages of the core, and out of it to the outputs.

/// A change to one tracked contact (finger), produced by `ContactTracker`.
public enum ContactChange: Hashable, Sendable, CustomStringConvertible {
    case began(slot: UInt8, at: DevicePoint)
    case moved(slot: UInt8, to: DevicePoint)
    /// The finger lifted.
    case ended(slot: UInt8)
    /// The touch was cancelled: by the phone, by reconciliation with `TouchState`, by the silence
    /// watchdog, or by shutdown. Outputs treat it like `ended` but must not act on it (no click).
    case cancelled(slot: UInt8)

    public var slot: UInt8 {
        switch self {
        case .began(let s, _), .moved(let s, _), .ended(let s), .cancelled(let s): return s
        }
    }

    public var description: String {
        switch self {
        case .began(let s, let p): return "began(\(s) \(p))"
        case .moved(let s, let p): return "moved(\(s) \(p))"
        case .ended(let s): return "ended(\(s))"
        case .cancelled(let s): return "cancelled(\(s))"
        }
    }
}

/// A pointer button number (X numbering): 1 left, 2 middle, 3 right, 4/5 wheel up/down, 6/7 wheel left/right.
public struct PointerButton: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let left = PointerButton(rawValue: 1)
    public static let middle = PointerButton(rawValue: 2)
    public static let right = PointerButton(rawValue: 3)
    public static let wheelUp = PointerButton(rawValue: 4)
    public static let wheelDown = PointerButton(rawValue: 5)
    public static let wheelLeft = PointerButton(rawValue: 6)
    public static let wheelRight = PointerButton(rawValue: 7)

    public var description: String { "button \(rawValue)" }
}

/// A pixel position in screen coordinates (origin top-left of the whole screen).
public struct PixelPoint: Hashable, Sendable, CustomStringConvertible {
    public var x: Int32
    public var y: Int32
    @inlinable public init(x: Int32, y: Int32) { self.x = x; self.y = y }
    public var description: String { "\(x),\(y)" }
}

/// An X keysym: the symbol on a key, independent of the keyboard layout (`XK_Right` = 0xff53).
/// For Latin-1 characters the keysym is the character's code point (`b` = 0x62); other Unicode
/// characters are 0x0100_0000 + the code point.
public struct KeySym: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let backSpace = KeySym(rawValue: 0xff08)
    public static let tab = KeySym(rawValue: 0xff09)
    public static let returnKey = KeySym(rawValue: 0xff0d)
    public static let escape = KeySym(rawValue: 0xff1b)
    public static let home = KeySym(rawValue: 0xff50)
    public static let left = KeySym(rawValue: 0xff51)
    public static let up = KeySym(rawValue: 0xff52)
    public static let right = KeySym(rawValue: 0xff53)
    public static let down = KeySym(rawValue: 0xff54)
    public static let pageUp = KeySym(rawValue: 0xff55)
    public static let pageDown = KeySym(rawValue: 0xff56)
    public static let end = KeySym(rawValue: 0xff57)
    public static let shiftL = KeySym(rawValue: 0xffe1)
    public static let controlL = KeySym(rawValue: 0xffe3)
    public static let altL = KeySym(rawValue: 0xffe9)
    public static let superL = KeySym(rawValue: 0xffeb)

    public var description: String { "keysym 0x\(String(rawValue, radix: 16))" }
}

/// An extra finger's own pointer in multi-pointer output (`--multitouch`, an output with
/// `OutputCapabilities.extraPointers`): finger 2...10, each a pointer of its own that the output makes.
/// Finger 1 is the main pointer and uses the plain actions (`moveTo`, `button`).
public struct FingerPointer: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The finger number, 2...10.
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The second finger's pointer, the first that is not the main pointer.
    public static let first = FingerPointer(rawValue: 2)
    /// The last one: ten fingers in all.
    public static let last = FingerPointer(rawValue: 10)

    public var description: String { "finger \(rawValue)" }
}

/// Where a real touch (`OutputAction.touch`) is in its life.
public enum TouchPhase: Hashable, Sendable {
    case began, moved, ended, cancelled
}

/// One thing for the input output to do. The output performs them in order and flushes once per packet.
public enum OutputAction: Hashable, Sendable, CustomStringConvertible {
    /// Move the main pointer to an absolute pixel.
    case moveTo(PixelPoint)
    /// Move the main pointer by whole pixels (not accelerated by the server: the core's curve is the
    /// only one applied).
    case moveBy(dx: Int32, dy: Int32)
    /// Press (`true`) or release (`false`) a pointer button.
    case button(PointerButton, pressed: Bool)
    /// Press (`true`) or release (`false`) the key that carries this keysym.
    case key(KeySym, pressed: Bool)
    /// Type this symbol: a press and a release of the key that carries it, or of a spare key mapped to
    /// it for the moment (any Unicode character). Nothing stays pressed or mapped.
    case type(KeySym)
    /// Give back every key that `type` borrowed for a symbol the keymap lacks (the keymap as it was
    /// before). The Bridge sends it when the source that typed goes, so nothing stays borrowed.
    case restoreKeymap
    /// Move an extra finger's own pointer to an absolute pixel (multi-pointer output; the output
    /// makes the pointer on first use).
    case extraPointerMove(FingerPointer, PixelPoint)
    /// Press or release a button of an extra finger's own pointer.
    case extraPointerButton(FingerPointer, PointerButton, pressed: Bool)
    /// Draw on the overlay (presenter mode's laser pointer and drawings); not an input event.
    case overlay(OverlayAction)
    /// A finger of a real touch device (the uinput backend's touchscreen: one XI 2.2 touch sequence per
    /// finger) began, moved, ended or was cancelled at this pixel. Only touchscreen mode with
    /// `Configuration.realTouches` produces it; an output without real touches cannot perform it.
    case touch(slot: UInt8, phase: TouchPhase, at: PixelPoint)
    /// Scroll by a fraction of a wheel click: `dx`, `dy` in 1/120 of a click (the kernel's hi-res wheel
    /// unit); dy > 0 scrolls down like button 5, dx > 0 right like button 7. Only touchpad mode with
    /// `TouchpadSettings.smoothScroll` produces it; an output without smooth scrolling cannot perform it.
    case smoothScroll(dx: Int32, dy: Int32)
    /// A finger on a native touchpad device (the uinput backend's: libinput recognises taps, scrolling
    /// and gestures itself): the tracker's change, its point turned to the user's view. Only touchpad
    /// mode with `Configuration.nativeTouchpad` produces it; an output without a native touchpad cannot perform it.
    case padContact(ContactChange)
    /// The tablet pen (the uinput backend's pen tablet: proximity, tip, barrel button, pressure, tilt,
    /// the pen or eraser tool). Only pen mode with `Configuration.penTablet` produces it; an output without
    /// a pen tablet cannot perform it (without a tablet, pen mode drives the main pointer instead).
    case pen(PenOutput)

    public var description: String {
        switch self {
        case .moveTo(let p): return "move \(p)"
        case .moveBy(let dx, let dy): return "move by \(dx),\(dy)"
        case .button(let b, let down): return "\(b) \(down ? "press" : "release")"
        case .key(let k, let down): return "\(k) \(down ? "press" : "release")"
        case .type(let k): return "type \(k)"
        case .restoreKeymap: return "restore the keymap"
        case .extraPointerMove(let f, let p): return "\(f) move \(p)"
        case .extraPointerButton(let f, let b, let down): return "\(f) \(b) \(down ? "press" : "release")"
        case .overlay(let o): return "overlay: \(o)"
        case .touch(let s, let phase, let p): return "touch \(s) \(phase) \(p)"
        case .smoothScroll(let dx, let dy): return "smooth scroll \(dx),\(dy)/120"
        case .padContact(let change): return "pad \(change)"
        case .pen(let p): return "pen \(p)"
        }
    }
}

/// Something drawn on the overlay (visible touches, the presenter's laser pointer and drawings).
/// Performed by the desktop's overlay; a shell without one ignores them.
public enum OverlayAction: Hashable, Sendable, CustomStringConvertible {
    /// The overlay window is needed, over this rectangle (made if it does not exist, else moved).
    case cover(PixelRect)
    /// The overlay window is not needed any more: it goes, with everything drawn on it.
    case remove
    /// The circle of the finger in `slot` is at this pixel with this opacity (255 opaque; it appears if
    /// it was not shown). `--show-touches`.
    case touch(slot: UInt8, at: PixelPoint, alpha: UInt8)
    /// The circle of the finger in `slot` is gone.
    case touchGone(slot: UInt8)
    /// The laser dot is at this pixel now (it appears if it was not shown).
    case laser(PixelPoint)
    /// The laser dot fades: it is drawn at this opacity now (255 opaque); `laser` shows it at full
    /// strength again.
    case laserAlpha(UInt8)
    /// The laser pointer was turned off, or its dot has faded: the dot and its trail go.
    case laserOff
    /// The laser's trail (the dot's previous positions, each added when the dot moved on) keeps only
    /// its newest `keep` points: the older ones have faded.
    case laserTrim(keep: UInt8)
    /// Every drawing is cleared.
    case clearDrawings
    /// The finger in `slot` starts the stroke `id` at this pixel (drawing). A stroke still in progress
    /// in the same slot ends here (its end was lost).
    case strokeBegan(StrokeID, slot: UInt8, at: PixelPoint)
    /// The stroke `id` goes on to this pixel (nothing if it is not in progress).
    case strokeTo(StrokeID, PixelPoint)
    /// The stroke `id` is finished (its finger lifted): it stays until it goes or the drawings are cleared.
    case strokeEnded(StrokeID)
    /// The finished stroke `id` goes: the drawing keeps within its bound (`DrawingStore`), or the eraser
    /// met it. Nothing if it is not shown (the overlay's own bound may have dropped it already).
    case strokeGone(StrokeID)
    /// The points `slot`'s stroke adds from now on are drawn `width` pixels wide (the pen's pressure);
    /// until its stroke ends, when the slot's width is the default again (`OverlayScene.strokeWidth`).
    case strokeWidth(slot: UInt8, width: UInt8)

    public var description: String {
        switch self {
        case .cover(let r): return "cover \(r)"
        case .remove: return "remove"
        case .touch(let s, let p, let a): return "touch \(s) at \(p) alpha \(a)"
        case .touchGone(let s): return "touch \(s) gone"
        case .laser(let p): return "laser \(p)"
        case .laserAlpha(let a): return "laser alpha \(a)"
        case .laserOff: return "laser off"
        case .laserTrim(let n): return "laser trail \(n)"
        case .clearDrawings: return "clear drawings"
        case .strokeBegan(let id, let s, let p): return "\(id) (slot \(s)) from \(p)"
        case .strokeTo(let id, let p): return "\(id) to \(p)"
        case .strokeEnded(let id): return "\(id) ended"
        case .strokeGone(let id): return "\(id) gone"
        case .strokeWidth(let s, let w): return "slot \(s) stroke width \(w)"
        }
    }
}

/// A stroke's identity on the overlay: `DrawingStore` numbers the strokes it begins (1, 2, …), and every
/// stroke action names its stroke by it, so the overlay and the core agree on which stroke is meant
/// whatever either has dropped (never by a place in a list).
public struct StrokeID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: StrokeID, b: StrokeID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "stroke #\(rawValue)" }
}
