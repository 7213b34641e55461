// What flows between the stages of the core, and out of it to the X11 output.

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

/// An X pointer button number: 1 left, 2 middle, 3 right, 4/5 wheel up/down, 6/7 wheel left/right.
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

/// A pixel position in X screen coordinates (origin top-left of the root window).
public struct PixelPoint: Hashable, Sendable, CustomStringConvertible {
    public var x: Int32
    public var y: Int32
    @inlinable public init(x: Int32, y: Int32) { self.x = x; self.y = y }
    public var description: String { "\(x),\(y)" }
}

/// One thing for the X11 output to do. The output performs them in order and flushes once per packet.
public enum OutputAction: Hashable, Sendable, CustomStringConvertible {
    /// Move the core pointer to an absolute pixel.
    case moveTo(PixelPoint)
    /// Press (`true`) or release (`false`) a pointer button.
    case button(PointerButton, pressed: Bool)

    public var description: String {
        switch self {
        case .moveTo(let p): return "move \(p)"
        case .button(let b, let down): return "\(b) \(down ? "press" : "release")"
        }
    }
}
