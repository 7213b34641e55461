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
    private struct Finger: Sendable {
        var active = false
        /// Where the finger is and where it landed, device portrait frame, mm.
        var x = 0.0, y = 0.0
        var startX = 0.0, startY = 0.0
        /// Whether it has moved beyond the tap move threshold from where it landed.
        var movedBeyondTap = false
    }

    public private(set) var settings: TouchpadSettings
    private var fingers: InlineArray<10, Finger> = InlineArray(repeating: Finger())
    public private(set) var fingerCount = 0
    private var primary: Int? = nil
    private var orientation = DeviceOrientation.portrait
    private var surface: SurfaceSize
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
        surface = settings.surface
        accel = PointerAcceleration(profile: settings.accelProfile, speed: settings.speed)
        tap = TapMachine(settings: settings)
        gesture = GestureMachine(settings: settings)
    }

    /// The phone's orientation changed (definite orientations only: the core filters face up/down).
    public mutating func setOrientation(_ o: DeviceOrientation) {
        if o.isDefinite { orientation = o }
    }

    /// A sender reported its surface size: it replaces the configured one from the next finger on.
    public mutating func setSurface(_ s: SurfaceSize) { surface = s }

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

    /// Whether button 1 is held by a tap or a drag.
    public var holdsButton: Bool { tap.holdsButton }

    /// Feeds one contact change; appends the pointer, button and key actions it causes.
    public mutating func handle(_ change: ContactChange, at now: Instant, into actions: inout [OutputAction]) {
        switch change {
        case .began(let slot, let p):
            let s = Int(slot)
            guard s < 10, !fingers[s].active else {
                if s < 10 { move(s, to: p, at: now, into: &actions) }
                return
            }
            gesture.kinetic.stop(event: "touch", at: now, trace: &trace)
            let (x, y) = mm(p)
            fingers[s] = Finger(active: true, x: x, y: y, startX: x, startY: y, movedBeyondTap: false)
            fingerCount += 1
            if primary == nil {
                primary = s
                velocity.reset()
                velocity.add(x: x, y: y, at: now)
            }
            fingersChanged(at: now)
            if settings.tapToClick {
                tap.handle(.touch(fingers: fingerCount), at: now, into: &actions, trace: &trace)
            }
        case .moved(let slot, let p):
            let s = Int(slot)
            guard s < 10, fingers[s].active else { return }
            move(s, to: p, at: now, into: &actions)
        case .ended(let slot), .cancelled(let slot):
            let s = Int(slot)
            guard s < 10, fingers[s].active else { return }
            fingers[s].active = false
            fingerCount -= 1
            if primary == s {
                primary = nil
                for i in 0..<10 where fingers[i].active {
                    primary = i
                    velocity.reset()
                    velocity.add(x: fingers[i].x, y: fingers[i].y, at: now)
                    break
                }
            }
            fingersChanged(at: now)
            if settings.tapToClick {
                if case .cancelled = change {
                    tap.handle(.cancel(fingers: fingerCount), at: now, into: &actions, trace: &trace)
                } else {
                    tap.handle(.release(fingers: fingerCount), at: now, into: &actions, trace: &trace)
                }
            }
        }
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
        for i in 0..<10 { fingers[i].active = false }
        fingerCount = 0
        primary = nil
        subpixel.reset()
    }

    // MARK: -

    @inline(__always)
    private func mm(_ p: DevicePoint) -> (Double, Double) {
        (Double(p.rawX) * surface.mmPerRawX, Double(p.rawY) * surface.mmPerRawY)
    }

    private mutating func move(_ s: Int, to p: DevicePoint, at now: Instant, into actions: inout [OutputAction]) {
        let (x, y) = mm(p)
        let dx = x - fingers[s].x, dy = y - fingers[s].y
        fingers[s].x = x
        fingers[s].y = y
        if !fingers[s].movedBeyondTap {
            let tx = x - fingers[s].startX, ty = y - fingers[s].startY
            if (tx * tx + ty * ty).squareRoot() > settings.tapMoveThresholdMM {
                fingers[s].movedBeyondTap = true
                if settings.tapToClick { tap.handle(.motion, at: now, into: &actions, trace: &trace) }
            }
        }
        if s == primary && ((fingerCount == 1 && gesture.allowsPointer) || tap.isDragging) {
            velocity.add(x: x, y: y, at: now)
            let gain = accel.pixelsPerMM(speedMMPerS: velocity.velocity().speed)
            let user = orientation.toUserView(dx: dx, dy: dy)
            let px = subpixel.add(dx: user.dx * gain, dy: user.dy * gain)
            if px.dx != 0 || px.dy != 0 { actions.append(.moveBy(dx: px.dx, dy: px.dy)) }
        } else if fingerCount >= 2 && !tap.isDragging {
            let (cx, cy, spread) = centroidAndSpread()
            let user = orientation.toUserView(dx: cx - centroidX, dy: cy - centroidY)
            centroidX = cx
            centroidY = cy
            gesture.motion(dx: user.dx, dy: user.dy, spread: spread, at: now, into: &actions, trace: &trace)
        }
    }

    private mutating func fingersChanged(at now: Instant) {
        let (cx, cy, spread) = centroidAndSpread()
        centroidX = cx
        centroidY = cy
        gesture.fingersChanged(fingerCount, spread: spread, at: now, trace: &trace)
    }

    /// The centroid of the fingers down (device mm) and their spread: for two fingers the distance
    /// between them, for more twice the mean distance from the centroid (the same for two).
    @inline(__always)
    private func centroidAndSpread() -> (Double, Double, Double) {
        guard fingerCount > 0 else { return (0, 0, 0) }
        // Through a span: indexing the stored InlineArray directly copies all of it first.
        let fingers = self.fingers.span
        var sx = 0.0, sy = 0.0
        for i in 0..<10 where fingers[i].active { sx += fingers[i].x; sy += fingers[i].y }
        let n = Double(fingerCount)
        let cx = sx / n, cy = sy / n
        var d = 0.0
        for i in 0..<10 where fingers[i].active {
            let ex = fingers[i].x - cx, ey = fingers[i].y - cy
            d += (ex * ex + ey * ey).squareRoot()
        }
        return (cx, cy, 2 * d / n)
    }
}
