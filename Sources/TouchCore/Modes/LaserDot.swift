// Presenter mode's laser dot on the overlay: shown, moved, faded and hidden through one path each.

/// The laser dot and its trail, as the overlay shows them. Presenter mode decides when the laser is on
/// and which finger points; this machine decides what the overlay shows, and is the only one that sends
/// the dot's overlay actions, so its state is what is on screen:
///
/// ```
///   hidden ──show (finger down, long press, the Laser button)──► shown / laser(p), trail reset
///   shown ──move──► shown / laser(p), the old place joins the trail
///   shown ──fade (the pointing finger lifts, releaseAll)──► fading / laserAlpha 255 → 0 over fadeOut
///   fading ──tick (every fadeTick)──► fading / laserAlpha(α) … α reaches 0 ──► hidden / laserOff
///   fading ──show──► shown / laser(p)
///   any but hidden ──hide (laser off, drawing on, mode switch)──► hidden / laserOff
/// ```
///
/// `hide` is the one way the dot goes: a fade ends in it too, so nothing fades after the laser is off.
/// Allocates nothing.
public struct LaserDot: Sendable {
    /// How long a point of the trail lasts: 250 ms (a short comet tail at 30–60 packets/s).
    public static let trailLife = Interval.milliseconds(250)
    /// At most 8 trail points (the overlay keeps as many).
    public static let trailLength = 8
    /// How long the dot takes to fade out once its finger lifts: 300 ms (as a finger's circle,
    /// `VisibleTouches.fadeOut`).
    public static let fadeOut = Interval.milliseconds(300)
    /// One fade step every 33 ms (30 frames per second, as the circles').
    public static let fadeTick = Interval.milliseconds(33)

    private enum State: Equatable, Sendable {
        case hidden
        case shown
        /// Fading since `since`; the next step at `next`.
        case fading(since: Instant, next: Instant)
    }
    private var state = State.hidden
    /// When each trail point was left behind, oldest first (`trailCount` of them).
    private var trailTimes: InlineArray<8, Instant> = InlineArray(repeating: Instant(nanoseconds: 0))
    private var trailCount = 0

    public init() {}

    /// Whether the dot (or its trail) is on screen.
    public var isShown: Bool { state != .hidden }

    /// The next trail point's end or fade step, while there is one.
    public var deadline: Instant? {
        var next: Instant? = trailCount > 0 ? trailTimes[0] + Self.trailLife : nil
        if case .fading(_, let n) = state { next = next.map { min($0, n) } ?? n }
        return next
    }

    /// The dot appears at `pixel` at full strength (or jumps there: a new finger), with a fresh trail.
    public mutating func show(at pixel: PixelPoint, into actions: inout [OutputAction]) {
        actions.append(.overlay(.laser(pixel)))
        if trailCount > 0 { actions.append(.overlay(.laserTrim(keep: 0))) }
        trailCount = 0
        state = .shown
    }

    /// The dot moves to `pixel`: its old place joins the trail.
    public mutating func move(to pixel: PixelPoint, at now: Instant, into actions: inout [OutputAction]) {
        actions.append(.overlay(.laser(pixel)))
        state = .shown
        if trailCount == Self.trailLength {
            for i in 1..<Self.trailLength { trailTimes[i - 1] = trailTimes[i] }
            trailCount -= 1
        }
        trailTimes[trailCount] = now
        trailCount += 1
    }

    /// The shown dot starts fading out (nothing if it is hidden or already fading).
    public mutating func fade(at now: Instant) {
        guard state == .shown else { return }
        state = .fading(since: now, next: now + Self.fadeTick)
    }

    /// The dot and its trail go at once (nothing if they are gone).
    public mutating func hide(into actions: inout [OutputAction]) {
        guard state != .hidden || trailCount > 0 else { return }
        trailCount = 0
        state = .hidden
        actions.append(.overlay(.laserOff))
    }

    /// The trail points older than `trailLife` go, and the fade steps when due: the opacity falls
    /// linearly to 0 over `fadeOut`, then `hide`.
    public mutating func tick(at now: Instant, into actions: inout [OutputAction]) {
        var old = 0
        while old < trailCount && trailTimes[old] + Self.trailLife <= now { old += 1 }
        if old > 0 {
            for i in old..<max(old, trailCount) { trailTimes[i - old] = trailTimes[i] }
            trailCount -= old
            if state != .hidden { actions.append(.overlay(.laserTrim(keep: UInt8(trailCount)))) }
        }
        guard case .fading(let since, let next) = state, now >= next else { return }
        let elapsed = now - since  // saturates at 0
        if elapsed >= Self.fadeOut {
            hide(into: &actions)
        } else {
            let left = Self.fadeOut.nanoseconds - elapsed.nanoseconds
            actions.append(.overlay(.laserAlpha(UInt8(min(255, left * 255 / Self.fadeOut.nanoseconds)))))
            // The last step lands on the end of the fade.
            state = .fading(since: since, next: min(now + Self.fadeTick, since + Self.fadeOut))
        }
    }
}
