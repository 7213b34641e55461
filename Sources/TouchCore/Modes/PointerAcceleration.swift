// From finger motion in millimetres to pointer motion in pixels.

/// The pointer acceleration curve: a gain factor from finger speed, in the spirit of libinput's touchpad
/// profile (a double incline with a plateau).
///
/// Pixels moved = finger travel (mm) × `basePixelsPerMM` × factor(speed). With `s` the speed setting
/// (-1...+1) and `v` the finger speed in mm/s, the adaptive factor is:
///
/// ```
///   factor
///     ^              ______ maxFactor (3.0 + 1.0 s)
///     |             /
///     |   ________ /  slope 0.01 per mm/s above the threshold T = 100 - 50 s mm/s
///     |  /  1.0
///     | /  0.3 + 0.1 v below 7 mm/s (slow = precise: 30 % at rest)
///     +-----------------> v (mm/s)
/// ```
///
/// then × (1 + 0.5 s) overall. So at s = 0: 0.3 at rest, 1.0 from 7 to 100 mm/s, 2.0 at 200 mm/s,
/// capped at 3.0 from 300 mm/s. The flat profile is the constant 1 + 0.5 s (0.5 ... 1.5).
///
/// `basePixelsPerMM` is 12: libinput's touchpad output at factor 1 is about 11.7 units per mm
/// (its 1000-dpi normalisation × 0.2968), and X takes those units as pixels. A 65 mm wide phone then
/// moves the pointer 780 px per slow stroke and up to about 2300 px per fast one.
public struct PointerAcceleration: Hashable, Sendable {
    public static let basePixelsPerMM = 12.0
    /// Below this finger speed the factor decelerates for precision: 7 mm/s.
    public static let decelerationBelowMMPerS = 7.0
    /// The factor at rest: 0.3.
    public static let restFactor = 0.3
    /// Where acceleration starts at speed 0: 100 mm/s; each unit of speed setting moves it by -50 mm/s.
    public static let thresholdMMPerS = 100.0
    public static let thresholdShiftMMPerS = 50.0
    /// The incline above the threshold: 0.01 per mm/s.
    public static let inclinePerMMPerS = 0.01
    /// The largest factor at speed 0: 3.0; each unit of speed setting adds 1.0.
    public static let maxFactor = 3.0
    public static let maxFactorShift = 1.0

    public var profile: AccelProfile
    /// -1...+1, clamped.
    public var speed: Double

    public init(profile: AccelProfile, speed: Double) {
        self.profile = profile
        self.speed = min(1, max(-1, speed))
    }

    /// The gain factor for a finger moving at `v` mm/s (unitless; multiply by `basePixelsPerMM`).
    @inlinable
    public func factor(speedMMPerS v: Double) -> Double {
        let s = speed
        let overall = 1 + 0.5 * s
        switch profile {
        case .flat:
            return overall
        case .adaptive:
            let v = max(0, v)
            let threshold = Self.thresholdMMPerS - Self.thresholdShiftMMPerS * s
            var f: Double
            if v < Self.decelerationBelowMMPerS {
                f = min(1, Self.restFactor + (1 - Self.restFactor) * v / Self.decelerationBelowMMPerS)
            } else if v < threshold {
                f = 1
            } else {
                f = 1 + Self.inclinePerMMPerS * (v - threshold)
            }
            f = min(f, Self.maxFactor + Self.maxFactorShift * s)
            return f * overall
        }
    }

    /// Pixels per millimetre of finger travel at `v` mm/s.
    @inlinable
    public func pixelsPerMM(speedMMPerS v: Double) -> Double { Self.basePixelsPerMM * factor(speedMMPerS: v) }
}

/// The speed of one finger, from its recent positions: distance over time across the samples of the
/// last `window` (at least `minimumSpan` apart), so packets that arrive bunched by the network
/// (two within a millisecond) do not read as a burst of speed.
public struct VelocityTracker: Hashable, Sendable {
    /// The span the speed is measured over, when samples allow: 50 ms (2–3 packets at 30–60/s).
    public static let minimumSpan = Interval.milliseconds(50)
    /// Samples older than this are not used: 150 ms (a finger that paused starts again slow).
    public static let window = Interval.milliseconds(150)
    /// The shortest time a speed is measured over: 8 ms (half a 60/s packet interval).
    public static let shortestSpanNS = 8_000_000.0

    private struct Sample: Hashable, Sendable {
        var t: Instant
        var x: Double
        var y: Double
    }
    private var samples: InlineArray<8, Sample> = InlineArray(repeating: Sample(t: Instant(nanoseconds: 0), x: 0, y: 0))
    private var newest = 0
    private var count = 0

    public init() {}

    public static func == (a: Self, b: Self) -> Bool { a.count == b.count && a.newest == b.newest }
    public func hash(into h: inout Hasher) { h.combine(count); h.combine(newest) }

    /// The time of the newest sample, if any.
    public var newestTime: Instant? { count > 0 ? samples[newest].t : nil }

    /// Forgets every sample (a new finger).
    public mutating func reset() { count = 0; newest = 0 }

    /// Adds the position (mm) at `t`.
    public mutating func add(x: Double, y: Double, at t: Instant) {
        newest = (newest + 1) % 8
        samples[newest] = Sample(t: t, x: x, y: y)
        count = min(count + 1, 8)
    }

    /// The speed in mm/s at the newest sample (0 with fewer than two samples) and its velocity vector.
    @inline(__always)
    public func velocity() -> (speed: Double, vx: Double, vy: Double) {
        guard count >= 2 else { return (0, 0, 0) }
        // Through a span: indexing the stored InlineArray directly copies all of it first.
        let samples = self.samples.span
        let now = samples[newest]
        var ref = samples[(newest + 7) % 8]
        var i = 1
        while i < count {
            let s = samples[(newest + 8 - i) % 8]
            if now.t - s.t > Self.window { break }
            ref = s
            if now.t - s.t >= Self.minimumSpan { break }
            i += 1
        }
        let dt = max(Double((now.t - ref.t).nanoseconds), Self.shortestSpanNS) / 1e9
        let vx = (now.x - ref.x) / dt, vy = (now.y - ref.y) / dt
        return ((vx * vx + vy * vy).squareRoot(), vx, vy)
    }
}

/// Turns fractional pixel motion into whole pixels, carrying the remainder so slow motion is not lost.
public struct SubpixelAccumulator: Hashable, Sendable {
    public private(set) var x = 0.0
    public private(set) var y = 0.0

    public init() {}

    /// Adds (dx, dy) pixels; returns the whole pixels to move now (rounded toward zero, the rest kept).
    public mutating func add(dx: Double, dy: Double) -> (dx: Int32, dy: Int32) {
        x += dx
        y += dy
        let ix = x.rounded(.towardZero), iy = y.rounded(.towardZero)
        x -= ix
        y -= iy
        return (Int32(max(-1e6, min(1e6, ix))), Int32(max(-1e6, min(1e6, iy))))
    }

    public mutating func reset() { x = 0; y = 0 }
}
