// Which part of the screen absolute mode maps onto: a monitor, or the whole screen.

/// A rectangle of pixels in screen coordinates: `width` × `height` pixels whose top-left pixel is
/// (`x`, `y`). The last pixel column is `x + width - 1`.
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int32
    public var y: Int32
    public var width: Int32
    public var height: Int32

    @inlinable
    public init(x: Int32, y: Int32, width: Int32, height: Int32) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Whether the rectangle has at least one pixel.
    @inlinable public var isEmpty: Bool { width < 1 || height < 1 }

    /// Whether `p` is one of the rectangle's pixels.
    @inlinable
    public func contains(_ p: PixelPoint) -> Bool {
        Int64(p.x) >= Int64(x) && Int64(p.x) < Int64(x) + Int64(width)
            && Int64(p.y) >= Int64(y) && Int64(p.y) < Int64(y) + Int64(height)
    }

    /// The geometry notation `WxH+X+Y` (as `xrandr` prints it).
    public var description: String {
        "\(width)x\(height)\(x < 0 ? "" : "+")\(x)\(y < 0 ? "" : "+")\(y)"
    }
}

/// One monitor of the screen (as the desktop reports it): a named rectangle, one of them possibly primary.
public struct Monitor: Hashable, Sendable, CustomStringConvertible {
    /// The monitor's name (an output name such as `HDMI-1`, or a name given to `xrandr --setmonitor`).
    public var name: String
    /// Where the monitor is on the screen.
    public var rect: PixelRect
    /// Whether it is the primary monitor.
    public var isPrimary: Bool

    public init(name: String, rect: PixelRect, isPrimary: Bool) {
        self.name = name
        self.rect = rect
        self.isPrimary = isPrimary
    }

    /// One line of `touchbridge monitors`: `NAME WxH+X+Y`, then ` primary` for the primary monitor.
    public var description: String { "\(name) \(rect)\(isPrimary ? " primary" : "")" }
}

/// What `--monitor` asked absolute mode to map onto.
public enum MonitorChoice: Hashable, Sendable, CustomStringConvertible {
    /// The primary monitor; the whole screen when no monitor is primary (the default).
    case primary
    /// The whole screen (every monitor, and any space between them).
    case all
    /// The monitor of this name; the whole screen while no monitor has that name.
    case named(String)

    /// Reads `primary`, `all` or a monitor name, as `--monitor` takes them.
    public init(parsing text: String) {
        switch text {
        case "primary": self = .primary
        case "all": self = .all
        default: self = .named(text)
        }
    }

    public var description: String {
        switch self {
        case .primary: return "primary"
        case .all: return "all"
        case .named(let name): return name
        }
    }

    /// Where this choice lands among `monitors` on a screen of `screen` pixels (whose top-left is 0,0).
    ///
    /// | choice | monitors | result |
    /// | --- | --- | --- |
    /// | `all` | any | the whole screen |
    /// | `primary` | one is primary | that monitor |
    /// | `primary` | none is primary | the whole screen (`fellBack` is false: that is the documented default) |
    /// | `named(n)` | one is named `n` | that monitor |
    /// | `named(n)` | none is named `n` | the whole screen, `fellBack` true (the shell warns) |
    ///
    /// A monitor with no pixels (RandR allows a 0×0 monitor) is treated as missing.
    public func resolve(monitors: [Monitor], screen: PixelRect) -> Target {
        switch self {
        case .all:
            return Target(rect: screen, monitorName: nil, fellBack: false)
        case .primary:
            if let m = monitors.first(where: { $0.isPrimary && !$0.rect.isEmpty }) {
                return Target(rect: m.rect, monitorName: m.name, fellBack: false)
            }
            return Target(rect: screen, monitorName: nil, fellBack: false)
        case .named(let name):
            if let m = monitors.first(where: { $0.name == name && !$0.rect.isEmpty }) {
                return Target(rect: m.rect, monitorName: m.name, fellBack: false)
            }
            return Target(rect: screen, monitorName: nil, fellBack: true)
        }
    }

    /// The outcome of `resolve`: the rectangle absolute mode maps onto.
    public struct Target: Hashable, Sendable, CustomStringConvertible {
        public var rect: PixelRect
        /// The monitor's name, or nil for the whole screen.
        public var monitorName: String?
        /// True when a named monitor was asked for and is missing, so the whole screen is used instead.
        public var fellBack: Bool

        public init(rect: PixelRect, monitorName: String?, fellBack: Bool) {
            self.rect = rect
            self.monitorName = monitorName
            self.fellBack = fellBack
        }

        public var description: String {
            if let monitorName { return "monitor \(monitorName) \(rect)" }
            return "the whole screen \(rect)"
        }
    }
}
