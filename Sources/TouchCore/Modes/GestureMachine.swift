// Two-finger scroll, pinch, three- and four-finger swipes, and kinetic scrolling.

/// Wheel clicks from scroll distance: small deltas accumulate until they make a whole click, so
/// nothing is dropped. For an output without smooth scrolling, buttons 4/5 (up/down) and 6/7
/// (left/right) are the scroll events.
public struct ScrollOutput: Hashable, Sendable {
    /// Millimetres per wheel click (`scrollClickMM / scrollSpeed`).
    public var mmPerClick: Double
    /// Content follows the fingers: fingers down → scroll up.
    public var natural: Bool
    private var accX = 0.0
    private var accY = 0.0
    /// Emit `.smoothScroll` in 1/120 clicks instead of whole clicks.
    public var smooth: Bool

    public init(settings: TouchpadSettings) {
        mmPerClick = settings.scrollClickMM / max(0.05, settings.scrollSpeed)
        natural = settings.naturalScroll
        smooth = settings.smoothScroll
    }

    /// Hi-res units per wheel click (the kernel's `REL_WHEEL_HI_RES` detent).
    static let unitsPerClick = 120.0

    /// Most clicks emitted by one call, so a huge delta cannot flood the server.
    static let maxClicksPerStep = 20

    /// Adds (dx, dy) mm of finger travel in the user's view; appends the whole wheel clicks.
    public mutating func scroll(dx: Double, dy: Double, into actions: inout [OutputAction]) {
        let sign = natural ? -1.0 : 1.0
        accX += sign * dx
        accY += sign * dy
        if smooth {
            // Whole 1/120 clicks, at most maxClicksPerStep clicks' worth; the remainder waits.
            let limit = Double(Self.maxClicksPerStep) * Self.unitsPerClick
            let ux = min(max((accX / mmPerClick * Self.unitsPerClick).rounded(.towardZero), -limit), limit)
            let uy = min(max((accY / mmPerClick * Self.unitsPerClick).rounded(.towardZero), -limit), limit)
            guard ux != 0 || uy != 0 else { return }
            accX -= ux / Self.unitsPerClick * mmPerClick
            accY -= uy / Self.unitsPerClick * mmPerClick
            if abs(ux) == limit { accX = 0 }
            if abs(uy) == limit { accY = 0 }
            actions.append(.smoothScroll(dx: Int32(ux), dy: Int32(uy)))
            return
        }
        emit(&accY, positive: .wheelDown, negative: .wheelUp, into: &actions)
        emit(&accX, positive: .wheelRight, negative: .wheelLeft, into: &actions)
    }

    private func emit(_ acc: inout Double, positive: PointerButton, negative: PointerButton,
                      into actions: inout [OutputAction]) {
        var n = 0
        while abs(acc) >= mmPerClick && n < Self.maxClicksPerStep {
            let button = acc > 0 ? positive : negative
            actions.append(.button(button, pressed: true))
            actions.append(.button(button, pressed: false))
            acc -= acc > 0 ? mmPerClick : -mmPerClick
            n += 1
        }
        if n == Self.maxClicksPerStep { acc = 0 }
    }

    /// Forgets partial clicks (a new scroll starts from zero).
    public mutating func reset() { accX = 0; accY = 0 }
}

/// Coasting after a two-finger flick: the scroll goes on at the flick's speed, slowing exponentially,
/// one step every `tickInterval`, until it is slow or a new touch stops it.
///
/// ```
///   idle ──flick (speed ≥ 50 mm/s at lift) / deadline = now + 16 ms──► coasting(v)
///   coasting ──tick / scroll v·dt, v ×= e^(−dt/325 ms)──► coasting   (while |v| ≥ 8 mm/s)
///   coasting ──tick, |v| < 8 mm/s; touch; releaseAll──► idle
/// ```
///
/// 325 ms is the time constant of the classic kinetic-scrolling decay (the same as iOS's "normal"
/// deceleration to within a few per cent over a flick); a flick at v mm/s coasts about v × 0.325 mm.
/// Only while coasting is there a deadline: the idle daemon has no timer.
public struct KineticScroller: Sendable {
    public static let tickInterval = Interval.milliseconds(16)
    public static let timeConstantS = 0.325
    /// Slowest flick that coasts: 50 mm/s.
    public static let minimumStartSpeedMMPerS = 50.0
    /// Coasting stops below 8 mm/s (one click per half second at 4 mm per click).
    public static let stopSpeedMMPerS = 8.0
    /// A flick whose last motion is older than this at lift is a stop, not a flick: 60 ms.
    public static let maximumPauseBeforeLift = Interval.milliseconds(60)

    private enum State: Equatable, Sendable {
        case idle
        case coasting(vx: Double, vy: Double, last: Instant)

        var name: StaticString {
            switch self {
            case .idle: return "idle"
            case .coasting: return "coasting"
            }
        }
    }

    private var state = State.idle

    public init() {}

    /// The next tick, while coasting.
    public var deadline: Instant? {
        if case .coasting(_, _, let last) = state { return last + Self.tickInterval }
        return nil
    }

    /// The fingers lifted from a scroll moving at (vx, vy) mm/s (user view).
    public mutating func flick(vx: Double, vy: Double, at now: Instant, trace: inout TransitionTrace) {
        let speed = (vx * vx + vy * vy).squareRoot()
        guard speed >= Self.minimumStartSpeedMMPerS else { return }
        let from = state
        state = .coasting(vx: vx, vy: vy, last: now)
        trace.record("kinetic", from.name, "flick", state.name, at: now)
    }

    /// A new touch, or everything released: stop coasting.
    public mutating func stop(event: StaticString, at now: Instant, trace: inout TransitionTrace) {
        guard state != .idle else { return }
        trace.record("kinetic", state.name, event, "idle", at: now)
        state = .idle
    }

    /// A tick at `now`: scrolls by the distance coasted since the last tick.
    public mutating func tick(at now: Instant, scroll: inout ScrollOutput, into actions: inout [OutputAction],
                              trace: inout TransitionTrace) {
        guard case .coasting(var vx, var vy, let last) = state, let d = deadline, now >= d else { return }
        let dt = Double((now - last).nanoseconds) / 1e9
        // e^(−x) for the decay (no Foundation in the core): exact enough for the small x of a tick.
        let decay = Self.expNegative(dt / Self.timeConstantS)
        // Distance over dt with exponential decay: v·τ·(1 − e^(−dt/τ)).
        let k = Self.timeConstantS * (1 - decay)
        scroll.scroll(dx: vx * k, dy: vy * k, into: &actions)
        vx *= decay
        vy *= decay
        if (vx * vx + vy * vy).squareRoot() < Self.stopSpeedMMPerS {
            state = .idle
            trace.record("kinetic", "coasting", "tick", "idle", at: now)
        } else {
            state = .coasting(vx: vx, vy: vy, last: now)
        }
    }

    /// e^(−x) for x ≥ 0, from the standard library only: e^(−x) = (e^(−x/64))^64, with e^(−y) by its
    /// Taylor series to y⁵ (relative error under 1e-8 for x ≤ 5).
    @inlinable
    public static func expNegative(_ x: Double) -> Double {
        let y = max(0, min(x, 50)) / 64
        var r = 1 - y * (1 - y / 2 * (1 - y / 3 * (1 - y / 4 * (1 - y / 5))))
        for _ in 0..<6 { r *= r }
        return r
    }
}

/// Recognises multi-finger gestures from the fingers' centroid travel and spread (the distance between
/// two fingers, or the mean distance from the centroid for more), in the user's view, in mm.
///
/// ```
///   none ──fingers ≥ 2──► undecided(n) ──2 fingers, travel or spread change ≥ 2.5 mm──► scroll | pinch
///                              │          (pinch when the spread changed more than the centroid moved)
///                              └──3+ fingers, travel ≥ 12 mm / the swipe's chord──► finished
///   scroll ──motion / wheel clicks (4 mm per click)──► scroll
///   scroll ──fingers < 2 / kinetic flick──► finished (1 finger) or none (0)
///   pinch ──spread ±6 mm / ctrl + wheel up (spread) or down (closer)──► pinch
///   undecided, scroll, pinch ──finger count changes to ≥ 2──► undecided(n) (measured afresh)
///   finished ──all fingers up──► none
/// ```
///
/// In `finished` (after a gesture, until every finger is up) the remaining finger does not move the
/// pointer, so lifting the fingers of a scroll one by one does not jerk it.
public struct GestureMachine: Sendable {
    private enum State: Equatable, Sendable {
        /// Fewer than two fingers, no gesture: one finger moves the pointer.
        case none
        /// `fingers` down, travel and spread measured from where they were when the count changed.
        case undecided(fingers: Int)
        /// Two-finger scroll.
        case scroll
        /// Two-finger pinch; `spreadRef` is the spread at the last zoom step.
        case pinch(spreadRef: Double)
        /// A gesture is over; waits until every finger is up.
        case finished

        var name: StaticString {
            switch self {
            case .none: return "none"
            case .undecided: return "undecided"
            case .scroll: return "scroll"
            case .pinch: return "pinch"
            case .finished: return "finished"
            }
        }
    }

    private var state = State.none
    private var travelX = 0.0
    private var travelY = 0.0
    private var spread0 = 0.0
    /// The scroll's centroid position (user view, mm, relative) and its speed, for kinetic flicks.
    private var scrollX = 0.0
    private var scrollY = 0.0
    private var scrollVelocity = VelocityTracker()
    public var settings: TouchpadSettings
    public var output: ScrollOutput
    public var kinetic = KineticScroller()
    /// Where the swipes' chords and the pinch's Ctrl are refused when the desktop's keymap lacks a key.
    public internal(set) var gate = KeyGate()
    /// The pinch's modifier: Ctrl (Ctrl + wheel zooms).
    private static let zoomChord = KeyChord(.controlL)

    public init(settings: TouchpadSettings) {
        self.settings = settings
        output = ScrollOutput(settings: settings)
    }

    /// Whether one finger may move the pointer.
    public var allowsPointer: Bool { state == .none }
    /// Whether a two-finger scroll is under way.
    public var isScrolling: Bool { state == .scroll }

    /// The number of fingers changed to `fingers`; `spread` is their spread now.
    public mutating func fingersChanged(_ fingers: Int, spread: Double, at now: Instant,
                                        trace: inout TransitionTrace) {
        let from = state
        switch state {
        case .none, .undecided:
            state = fingers >= 2 ? .undecided(fingers: fingers) : .none
        case .scroll:
            if fingers >= 2 {
                state = .undecided(fingers: fingers)
            } else {
                if settings.kineticScroll, let t = scrollVelocity.newestTime,
                   now - t <= KineticScroller.maximumPauseBeforeLift {
                    let v = scrollVelocity.velocity()
                    kinetic.flick(vx: v.vx, vy: v.vy, at: now, trace: &trace)
                }
                state = fingers == 0 ? .none : .finished
            }
        case .pinch:
            state = fingers >= 2 ? .undecided(fingers: fingers) : (fingers == 0 ? .none : .finished)
        case .finished:
            state = fingers == 0 ? .none : .finished
        }
        travelX = 0
        travelY = 0
        spread0 = spread
        if from != state { trace.record("gesture", from.name, "fingers", state.name, at: now) }
    }

    /// The fingers' centroid moved by (dx, dy) mm (user view) and their spread is `spread` mm.
    public mutating func motion(dx: Double, dy: Double, spread: Double, at now: Instant,
                                into actions: inout [OutputAction], trace: inout TransitionTrace) {
        switch state {
        case .none, .finished:
            return
        case .undecided(let n):
            travelX += dx
            travelY += dy
            let travel = (travelX * travelX + travelY * travelY).squareRoot()
            if n == 2 {
                let spreadChange = abs(spread - spread0)
                guard max(travel, spreadChange) >= settings.gestureDecideMM else { return }
                if spreadChange > travel {
                    state = .pinch(spreadRef: spread0)
                    trace.record("gesture", "undecided", "spread", "pinch", at: now)
                    pinch(spread: spread, into: &actions)
                } else {
                    state = .scroll
                    trace.record("gesture", "undecided", "travel", "scroll", at: now)
                    output.reset()
                    scrollVelocity.reset()
                    scrollX = 0
                    scrollY = 0
                    scrollVelocity.add(x: 0, y: 0, at: now)
                    scroll(dx: travelX, dy: travelY, at: now, into: &actions)
                }
            } else {
                guard travel >= settings.swipeDistanceMM else { return }
                let direction: SwipeDirection = abs(travelX) >= abs(travelY)
                    ? (travelX > 0 ? .right : .left)
                    : (travelY > 0 ? .down : .up)
                gate.emit(settings.swipes.chord(fingers: n, direction: direction), into: &actions)
                state = .finished
                trace.record("gesture", "undecided", "swipe", "finished", at: now)
            }
        case .scroll:
            scroll(dx: dx, dy: dy, at: now, into: &actions)
        case .pinch:
            pinch(spread: spread, into: &actions)
        }
    }

    /// Scrolls by (dx, dy), snapped to one axis unless clearly diagonal (the smaller component is
    /// dropped when it is under half the larger), so a vertical scroll does not drift sideways.
    private mutating func scroll(dx: Double, dy: Double, at now: Instant, into actions: inout [OutputAction]) {
        var dx = dx, dy = dy
        if abs(dx) < 0.5 * abs(dy) { dx = 0 }
        if abs(dy) < 0.5 * abs(dx) { dy = 0 }
        output.scroll(dx: dx, dy: dy, into: &actions)
        scrollX += dx
        scrollY += dy
        scrollVelocity.add(x: scrollX, y: scrollY, at: now)
    }

    /// Zoom steps: each `pinchStepMM` of spread change is Ctrl + one wheel click, up when the fingers
    /// spread (zoom in), down when they close; Ctrl is pressed and released around the clicks of one step.
    private mutating func pinch(spread: Double, into actions: inout [OutputAction]) {
        guard case .pinch(var ref) = state else { return }
        let step = settings.pinchStepMM
        guard abs(spread - ref) >= step else { return }
        // Each step moves the reference towards the spread without passing it: one direction.
        let button: PointerButton = spread > ref ? .wheelUp : .wheelDown
        var n = 0
        while abs(spread - ref) >= step && n < ScrollOutput.maxClicksPerStep {
            ref += spread > ref ? step : -step
            n += 1
        }
        // Without Ctrl on the keymap the step is refused whole: a bare wheel click would scroll.
        gate.emit(Self.zoomChord, around: { actions in
            for _ in 0..<n {
                actions.append(.button(button, pressed: true))
                actions.append(.button(button, pressed: false))
            }
        }, into: &actions)
        state = .pinch(spreadRef: n == ScrollOutput.maxClicksPerStep ? spread : ref)
    }

    /// Forgets the gesture and stops coasting (shutdown, silence, change of sender).
    public mutating func releaseAll(at now: Instant, trace: inout TransitionTrace) {
        if state != .none { trace.record("gesture", state.name, "releaseAll", "none", at: now) }
        state = .none
        kinetic.stop(event: "releaseAll", at: now, trace: &trace)
    }

    /// A kinetic tick.
    public mutating func tick(at now: Instant, into actions: inout [OutputAction], trace: inout TransitionTrace) {
        kinetic.tick(at: now, scroll: &output, into: &actions, trace: &trace)
    }
}
