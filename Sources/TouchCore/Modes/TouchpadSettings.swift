// Settings of touchpad mode: a plain value the shell fills from the command line and the config file.

/// The size of the phone's touch surface, in millimetres, in the device's portrait frame.
///
/// The PoseAI stream normalises each axis to its own edge (-1..+1) and carries no size, so a touchpad
/// needs the size to turn positions into millimetres. Default: a 6.1-inch (155 mm) diagonal with a
/// 19.5:9 aspect — the common size of current phones (iPhone 12–16, Pixel 7–9) — which gives
/// 64.95 × 140.73 mm. A sender that reports its surface's size overrides it.
public struct SurfaceSize: Hashable, Sendable, CustomStringConvertible {
    /// Width of the portrait-held surface (its short side), mm.
    public var widthMM: Double
    /// Height of the portrait-held surface (its long side), mm.
    public var heightMM: Double

    public init(widthMM: Double, heightMM: Double) {
        precondition(widthMM > 0 && heightMM > 0, "a surface has a positive size")
        self.widthMM = widthMM
        self.heightMM = heightMM
    }

    /// The surface whose sides are in the ratio `long:short` and whose diagonal is `diagonalMM`.
    public init(aspectLong long: Double, short: Double, diagonalMM: Double) {
        let l = max(long, short), s = min(long, short)
        let d = (l * l + s * s).squareRoot()
        self.init(widthMM: diagonalMM * s / d, heightMM: diagonalMM * l / d)
    }

    /// 155 mm: 6.1 inches (154.94 mm), rounded.
    public static let defaultDiagonalMM = 155.0
    public static let `default` = SurfaceSize(aspectLong: 19.5, short: 9, diagonalMM: defaultDiagonalMM)

    /// Millimetres per raw step along X and Y: raw 0...4094 spans the whole side.
    @inlinable public var mmPerRawX: Double { widthMM / Double(ScreenMapping.rawSpan) }
    @inlinable public var mmPerRawY: Double { heightMM / Double(ScreenMapping.rawSpan) }

    public var description: String {
        "\((widthMM * 100).rounded() / 100)x\((heightMM * 100).rounded() / 100) mm"
    }
}

/// How finger speed turns into pointer speed (see `PointerAcceleration`).
public enum AccelProfile: String, Hashable, Sendable, CaseIterable {
    /// Speed-dependent gain: slow motion precise, fast motion far.
    case adaptive
    /// A constant gain.
    case flat
}

/// A direction of a swipe, in the user's view.
public enum SwipeDirection: String, Hashable, Sendable, CaseIterable {
    case left, right, up, down
}

/// The key chord of each three- and four-finger swipe.
public struct SwipeBindings: Hashable, Sendable {
    public var three: [SwipeDirection: KeyChord]
    public var four: [SwipeDirection: KeyChord]

    public init(three: [SwipeDirection: KeyChord], four: [SwipeDirection: KeyChord]) {
        self.three = three
        self.four = four
    }

    /// The chord for `fingers` (3, or 4 and more) moving in `direction`; `.none` when unbound.
    public func chord(fingers: Int, direction: SwipeDirection) -> KeyChord {
        (fingers >= 4 ? four[direction] : three[direction]) ?? .none
    }

    /// Defaults for a GNOME/KDE desktop and a web browser:
    ///
    /// | swipe | chord | effect |
    /// | --- | --- | --- |
    /// | 3 fingers right | alt+Left | browser back (the page follows the fingers, as on a laptop) |
    /// | 3 fingers left | alt+Right | browser forward |
    /// | 3 fingers up | super | activities overview (GNOME), overview (KDE) |
    /// | 3 fingers down | Escape | leave the overview |
    /// | 4 fingers left | ctrl+alt+Right | next workspace (GNOME 40+) |
    /// | 4 fingers right | ctrl+alt+Left | previous workspace |
    /// | 4 fingers up | ctrl+alt+Up | workspace above (KDE) |
    /// | 4 fingers down | ctrl+alt+Down | workspace below (KDE) |
    public static let `default` = SwipeBindings(
        three: [
            .right: KeyChord(.altL, .left),
            .left: KeyChord(.altL, .right),
            .up: KeyChord(.superL),
            .down: KeyChord(.escape),
        ],
        four: [
            .left: KeyChord(.controlL, .altL, .right),
            .right: KeyChord(.controlL, .altL, .left),
            .up: KeyChord(.controlL, .altL, .up),
            .down: KeyChord(.controlL, .altL, .down),
        ])
}

/// Everything that tunes touchpad mode. Thresholds carry their unit in their name.
public struct TouchpadSettings: Hashable, Sendable {
    // MARK: surface and pointer
    /// The phone's touch surface, portrait frame.
    public var surface: SurfaceSize = .default
    public var accelProfile: AccelProfile = .adaptive
    /// -1 (slowest) ... +1 (fastest); 0 is the default curve.
    public var speed: Double = 0
    /// Whether moves that arrive in bursts are played out on a steady tick (`MotionSmoother`), here and
    /// in presenter mode's laser.
    public var smoothing: MotionSmoothing = .auto

    // MARK: taps
    /// Tap to click (1 finger left, 2 right, 3 middle), double tap, tap-and-drag.
    public var tapToClick = true
    /// After a tap-and-drag, lifting the finger keeps the button held for `dragLockTimeout`, so the drag
    /// can go on with the next touch; a tap ends it.
    public var dragLock = false
    /// Longest touch that still counts as a tap: 180 ms (libinput's value; both ends of a tap are
    /// packets with the same network delay, so the measured duration is the finger's).
    public var tapTimeout: Interval = .milliseconds(180)
    /// Farthest a finger may move and still tap: 1.6 mm. libinput's 1.3 mm is for a touchpad's small,
    /// firm contact; a fingertip on glass rolls more, and both phone platforms use a larger slop
    /// (iOS: 10 pt ≈ 1.6 mm, Android: 8 dp ≈ 1.3 mm at 160 dpi, more on denser screens).
    public var tapMoveThresholdMM: Double = 1.6
    /// How long after a tap a new touch turns into a drag (or a double tap): 180 ms (libinput:
    /// 160 ms + 20 ms per finger of the tap, here one).
    public var dragTimeout: Interval = .milliseconds(180)
    /// With drag lock, how long the button stays held after the finger lifts: 300 ms (libinput's).
    public var dragLockTimeout: Interval = .milliseconds(300)

    // MARK: scrolling
    /// Content follows the fingers (fingers down scroll up).
    public var naturalScroll = false
    /// Multiplies the scroll distance; 1 is one wheel click per `scrollClickMM`.
    public var scrollSpeed: Double = 1
    /// Two-finger travel per wheel click at scroll speed 1: 4 mm (one X wheel click scrolls about three
    /// lines, about 50 px, which is what 4 mm of pointer motion moves at gain 1, 12 px/mm).
    public var scrollClickMM: Double = 4
    /// Keep scrolling after a flick, slowing down, until a new touch.
    public var kineticScroll = true
    /// Scroll in fractions of a click (`OutputAction.smoothScroll`, for the uinput backend's hi-res
    /// wheels) instead of whole wheel clicks (buttons 4–7, all an output without smooth scrolling can do).
    public var smoothScroll = false

    // MARK: gestures
    /// How far the fingers move before a 2-finger gesture is decided as scroll or pinch: 2.5 mm.
    public var gestureDecideMM: Double = 2.5
    /// Change of the distance between two fingers per zoom step (Ctrl + wheel click): 6 mm.
    public var pinchStepMM: Double = 6
    /// Travel of a 3- or 4-finger swipe before its chord fires: 12 mm.
    public var swipeDistanceMM: Double = 12
    public var swipes: SwipeBindings = .default

    public init() {}
}
