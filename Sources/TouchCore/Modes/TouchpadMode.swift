// Relative mode: the phone is a laptop touchpad.

/// The phone as a touchpad: one finger moves the pointer by accelerated deltas, taps click, two fingers
/// scroll or pinch, three and four fingers swipe. Composes three state machines — `TapMachine`,
/// `GestureMachine` (with `KineticScroller`) — and the pointer path (`PointerAcceleration`,
/// `VelocityTracker`, `SubpixelAccumulator`). See docs/touchpad.md for the diagrams and numbers.
///
/// Positions are kept in millimetres of the device's portrait frame (raw × surface size / 4094);
/// motion is turned to the user's view with `DeviceOrientation.toUserView(dx:dy:)` only when it becomes
/// output, so a finger that lands, or a second finger that joins or leaves, never moves the pointer:
/// only each finger's own motion since its previous position does.
///
/// Pointer motion comes from the *primary* finger (the earliest of those down) while it is the only
/// finger, or during a tap-and-drag whatever the count. With two or more fingers the gesture machine
/// has the motion. Allocates nothing per call.
public struct TouchpadMode: Sendable {
    public private(set) var settings: TouchpadSettings
    /// The fingers (shared with the presenter); the primary passes to a finger still down when it lifts.
    private var layer: TouchLayer
    public var fingerCount: Int { layer.count }
    private var primary: Int? { layer.primary }
    private var orientation = DeviceOrientation.portrait
    private var accel: PointerAcceleration
    private var velocity = VelocityTracker()
    private var subpixel = SubpixelAccumulator()
    public private(set) var tap: TapMachine
    public private(set) var gesture: GestureMachine
    /// The previous centroid (device mm) of the fingers down, for gesture motion.
    private var centroidX = 0.0, centroidY = 0.0
    /// Transitions of every machine, when enabled; the shell drains it after each step.
    public var trace = TransitionTrace()

    public init(settings: TouchpadSettings) {
        self.settings = settings
        layer = TouchLayer(surface: settings.surface, tapMoveThresholdMM: settings.tapMoveThresholdMM, passesPrimary: true)
        accel = PointerAcceleration(profile: settings.accelProfile, speed: settings.speed)
        tap = TapMachine(settings: settings)
        gesture = GestureMachine(settings: settings)
    }

    /// The phone's orientation changed (definite orientations only: the core filters face up/down).
    public mutating func setOrientation(_ o: DeviceOrientation) {
        if o.isDefinite { orientation = o }
    }

    /// A sender reported its surface size: it replaces the configured one from the next finger on.
    public mutating func setSurface(_ s: SurfaceSize) { layer.surface = s }

    /// The desktop's keymap changed (nil: unknown): the gesture machine's swipes and pinch, the keys this
    /// mode presses, are refused where they are emitted when it lacks a key.
    mutating func setKeymap(_ keymap: Keymap?) { gesture.gate.setKeymap(keymap) }

    /// Hands the gesture machine's refusals since the last call to `gate`, in order.
    mutating func moveRefusals(to gate: inout KeyGate) { gesture.gate.move(to: &gate) }

    /// When `handleTimer` must be called next: the tap machine's timeout or the next kinetic tick; nil when
    /// nothing is pending.
    public var deadline: Instant? {
        switch (tap.deadline, gesture.kinetic.deadline) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }


    /// Feeds one contact change; appends the pointer, button and key actions it causes.
    public mutating func handle(_ change: ContactChange, at now: Instant, into actions: inout [OutputAction]) {
        switch layer.handle(change) {
        case .ignored:
            return
        case .moved(let s, let dx, let dy, let crossed):
            if crossed && settings.tapToClick { tap.handle(.motion, at: now, into: &actions, trace: &trace) }
            moved(s, dx: dx, dy: dy, at: now, into: &actions)
        case .landed(let s):
            gesture.kinetic.stop(event: "touch", at: now, trace: &trace)
            if primary == s { startVelocity(at: s, now) }
            fingersChanged(at: now)
            if settings.tapToClick {
                tap.handle(.touch(fingers: fingerCount), at: now, into: &actions, trace: &trace)
            }
        case .lifted(_, let cancelled, let wasPrimary):
            if wasPrimary, let p = primary { startVelocity(at: p, now) }
            fingersChanged(at: now)
            if settings.tapToClick {
                if cancelled {
                    tap.handle(.cancel(fingers: fingerCount), at: now, into: &actions, trace: &trace)
                } else {
                    tap.handle(.release(fingers: fingerCount), at: now, into: &actions, trace: &trace)
                }
            }
        }
    }

    /// The pointer's speed is measured afresh from the new primary finger.
    private mutating func startVelocity(at s: Int, _ now: Instant) {
        velocity.reset()
        velocity.add(x: layer[s].x, y: layer[s].y, at: now)
    }

    /// Called when `deadline` has passed (early calls do nothing).
    public mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {
        if let d = tap.deadline, now >= d {
            tap.handle(.timeout, at: now, into: &actions, trace: &trace)
        }
        gesture.tick(at: now, into: &actions, trace: &trace)
    }

    /// Releases whatever a tap or drag holds, stops coasting, and forgets every finger.
    public mutating func releaseAll(at now: Instant, into actions: inout [OutputAction]) {
        tap.releaseAll(at: now, into: &actions, trace: &trace)
        gesture.releaseAll(at: now, trace: &trace)
        layer.forgetAll()
        subpixel.reset()
    }

    // MARK: -

    /// The finger in slot `s` moved by (dx, dy) mm (the layer has its new place).
    private mutating func moved(_ s: Int, dx: Double, dy: Double, at now: Instant, into actions: inout [OutputAction]) {
        let x = layer[s].x, y = layer[s].y
        if s == primary && ((fingerCount == 1 && gesture.allowsPointer) || tap.isDragging) {
            velocity.add(x: x, y: y, at: now)
            let gain = accel.pixelsPerMM(speedMMPerS: velocity.velocity().speed)
            let user = orientation.toUserView(dx: dx, dy: dy)
            let px = subpixel.add(dx: user.dx * gain, dy: user.dy * gain)
            if px.dx != 0 || px.dy != 0 { actions.append(.moveBy(dx: px.dx, dy: px.dy)) }
        } else if fingerCount >= 2 && !tap.isDragging {
            let (cx, cy, spread) = layer.centroidAndSpread()
            let user = orientation.toUserView(dx: cx - centroidX, dy: cy - centroidY)
            centroidX = cx
            centroidY = cy
            gesture.motion(dx: user.dx, dy: user.dy, spread: spread, at: now, into: &actions, trace: &trace)
        }
    }

    private mutating func fingersChanged(at now: Instant) {
        let (cx, cy, spread) = layer.centroidAndSpread()
        centroidX = cx
        centroidY = cy
        gesture.fingersChanged(fingerCount, spread: spread, at: now, trace: &trace)
    }
}
