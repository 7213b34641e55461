// Presenter mode: the phone is a presentation remote.

/// Recognises the presenter's gestures and returns their keys and overlay actions.
///
/// ```
///  idle ──touch──► touching(n, max) ──all up before the tap timeout, no motion──► idle
///                    │                  / max 1: next; max 2: blank; max 3: clear drawings
///                    ├─touch / restart the tap timeout (max grows)
///                    ├─1 finger moves beyond the tap threshold (laser off)──► swiping
///                    ├─1 finger moves beyond the tap threshold (laser on)───► pointing
///                    ├─long-press timeout, max 1 / toggle the laser──► pointing (on) | finished (off)
///                    ├─long-press timeout, max 2 / toggle drawing──► finished
///                    ├─motion with max ≥ 2──► finished
///                    └─all up after the tap timeout──► idle (nothing)
///  swiping ──travel ≥ swipe distance, mostly sideways / left: next, right: previous──► finished
///          ──a second finger, or all up──► finished | idle
///  pointing ──motion / laser at the finger──► pointing;  all up──► idle
///  finished ──all up──► idle
///  any ──cancel (silence, shutdown, another sender)──► finished | idle, never a key
///  any ──releaseAll (silence, web page gone, shutdown, another sender) / laser off──► idle
/// ```
///
/// While the laser is on, the first finger's position shows it on the overlay (absolute, through the
/// same mapping as touchscreen mode) and one-finger motion never swipes; taps still work.
///
/// The laser dot lives as long as its finger: when the finger that points lifts, the dot fades out
/// (`LaserDot`, the one machine that shows, fades and hides it); the laser stays on, and the next finger
/// down shows the dot again. `releaseAll` (the phone went silent or away, the page hid, a setting or
/// mode changed) turns the laser off and fades the dot, and turning the laser off (a long press, the
/// page's Laser button let go, drawing on) hides it at once, so nothing but deliberate drawings
/// outlives the phone. The drawings are a `DrawingStore`, bounded.
///
/// While drawing is on, every finger that lands strokes its path on the overlay (several at once), one-
/// finger motion never swipes and a one-finger tap is a dot, not the next slide; two- and three-finger
/// taps and the two-finger long press still work. Drawing turns the laser off. Every
/// transition is recorded in the trace as `presenter: from → event → to`. Allocates nothing per call.
public struct PresenterMode: Sendable {
    private enum State: Equatable, Sendable {
        /// No finger down.
        case idle
        /// Fingers down, none moved: a tap if all lift by `tapDeadline`; one finger resting until
        /// `holdDeadline` is a long press.
        case touching(fingers: Int, maxFingers: Int, tapDeadline: Instant, holdDeadline: Instant)
        /// One finger moving with the laser off: a swipe once it has travelled far enough.
        case swiping
        /// The laser follows the finger.
        case pointing
        /// A gesture is over, or the touch is nothing; waits until every finger is up.
        case finished

        var name: StaticString {
            switch self {
            case .idle: return "idle"
            case .touching: return "touching"
            case .swiping: return "swiping"
            case .pointing: return "pointing"
            case .finished: return "finished"
            }
        }
    }

    private var state = State.idle
    /// The fingers, as the touchpad follows them; the primary (the first one down) drives the laser and
    /// swipes, and stays unset when it lifts until the next touch.
    private var layer: TouchLayer
    private var fingerCount: Int { layer.count }
    private var primary: Int? { layer.primary }
    private var orientation = DeviceOrientation.portrait
    public private(set) var settings: PresenterSettings
    public private(set) var touchpad: TouchpadSettings
    /// Whether the laser pointer is on (toggled by a long press).
    public private(set) var laserOn = false
    /// Whether fingers draw (toggled by a two-finger long press, or on from the start with `--draw`).
    public private(set) var drawingOn = false
    /// Transitions, when enabled; the shell drains it after each step.
    public var trace = TransitionTrace()
    /// Where the bindings' chords are refused when the desktop's keymap lacks a key.
    public internal(set) var gate = KeyGate()

    /// The laser dot on the overlay (its one path to show, fade and hide).
    private var dot = LaserDot()
    /// The drawings on the overlay, within their bound.
    public internal(set) var drawings = DrawingStore()
    /// The pen's stroke: its last pixel and width, and when its silence ends it. (A pen a release cancelled
    /// while on the glass is kept from drawing by `TouchPipeline` until it lifts.)
    var penPixel = PixelPoint(x: 0, y: 0)
    /// Where the eraser end touched at its last report, while it stays on the glass.
    var eraserPixel: PixelPoint?
    var penStrokeWidth: UInt8 = 0
    var penDeadline: Instant?

    public init(settings: PresenterSettings, touchpad: TouchpadSettings) {
        self.settings = settings
        self.touchpad = touchpad
        layer = TouchLayer(surface: touchpad.surface, tapMoveThresholdMM: touchpad.tapMoveThresholdMM, passesPrimary: false)
        drawingOn = settings.drawing
    }

    /// The phone's orientation changed (definite orientations only).
    public mutating func setOrientation(_ o: DeviceOrientation) {
        if o.isDefinite { orientation = o }
    }

    /// A sender reported its surface size.
    public mutating func setSurface(_ s: SurfaceSize) {
        touchpad.surface = s
        layer.surface = s
    }

    /// When `handleTimer` must be called: the long-press timeout while one or two fingers rest (all that
    /// landed). (The tap timeout needs no timer: the lift compares its own time with it.) And the laser
    /// dot's trail and fade (`LaserDot.deadline`).
    public var deadline: Instant? {
        var laser = dot.deadline
        if let d = penDeadline { laser = laser.map { min($0, d) } ?? d }
        guard case .touching(let n, let m, _, let hold) = state, m <= 2, n == m else { return laser }
        return laser.map { min($0, hold) } ?? hold
    }

    /// Whether the laser dot is on screen.
    public var laserShown: Bool { dot.isShown }

    /// Feeds one contact change (device frame); `pixel` is where it lands on the screen through the
    /// absolute mapping (for the laser), nil for ended and cancelled.
    public mutating func handle(_ change: ContactChange, pixel: PixelPoint?, at now: Instant,
                                into actions: inout [OutputAction]) {
        let from = state
        var event: StaticString = ""
        switch layer.handle(change) {
        case .ignored:
            return
        case .moved(let s, _, _, _):
            moved(s, pixel: pixel, at: now, into: &actions)
            return
        case .landed(let s):
            if let pixel { pixels[s] = pixel }
            event = "touch"
            switch state {
            case .idle:
                state = .touching(fingers: 1, maxFingers: 1, tapDeadline: now + touchpad.tapTimeout,
                                  holdDeadline: now + settings.longPress)
            case .touching(_, let m, _, _):
                state = .touching(fingers: fingerCount, maxFingers: max(m, fingerCount),
                                  tapDeadline: now + touchpad.tapTimeout, holdDeadline: now + settings.longPress)
            case .swiping:
                state = .finished
            case .pointing, .finished:
                break
            }
            if laserOn, s == primary, let pixel {
                // The dot jumps to the new finger (at full strength), and a fresh trail starts there.
                dot.show(at: pixel, into: &actions)
            }
            if drawingOn, let pixel { drawings.begin(slot: s, at: pixel, into: &actions) }
        case .lifted(let s, let cancelled, let wasPrimary):
            // The finger that pointed is gone: its dot fades (the laser stays on).
            if wasPrimary { dot.fade(at: now) }
            drawings.end(slot: s, into: &actions)
            event = cancelled ? "cancel" : "release"
            switch state {
            case .touching(_, let m, let tap, let hold):
                if cancelled {
                    state = fingerCount == 0 ? .idle : .finished
                } else if fingerCount > 0 {
                    state = .touching(fingers: fingerCount, maxFingers: m, tapDeadline: tap, holdDeadline: hold)
                } else if now <= tap {
                    if !(drawingOn && m == 1) { self.tap(fingers: m, into: &actions) }
                    state = .idle
                } else {
                    state = .idle
                }
            case .swiping, .pointing, .finished:
                if fingerCount == 0 { state = .idle } else if state == .swiping { state = .finished }
            case .idle:
                break
            }
        }
        if from != state { trace.record("presenter", from.name, event, state.name, at: now) }
    }

    /// Called when `deadline` has passed (early calls do nothing).
    public mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {
        dot.tick(at: now, into: &actions)
        if let d = penDeadline, now >= d {
            // The pen went silent: its stroke ends (it stays drawn).
            drawings.end(slot: Int(DrawingStore.penSlot), into: &actions)
            penDeadline = nil
            eraserPixel = nil
            trace.record("presenter", "pen", "silence", "pen away", at: now)
        }
        guard case .touching(let n, let m, _, let hold) = state, m <= 2, n == m, now >= hold else { return }
        let from = state
        if m == 2 {
            setDrawing(!drawingOn, into: &actions)
            state = .finished
            trace.record("presenter", from.name, drawingOn ? "drawOn" : "drawOff", state.name, at: now)
        } else if drawingOn {
            state = .finished
            trace.record("presenter", from.name, "longPress", state.name, at: now)
        } else {
            setLaser(!laserOn, into: &actions)
            state = laserOn ? .pointing : .finished
            trace.record("presenter", from.name, "longPress", state.name, at: now)
        }
    }

    /// The laser on or off: on shows the dot at the pointing finger (if one is down) and turns drawing
    /// off; off hides the dot and its trail at once.
    private mutating func setLaser(_ on: Bool, into actions: inout [OutputAction]) {
        laserOn = on
        if on {
            if drawingOn { setDrawing(false, into: &actions) }
            if let p = primary { dot.show(at: pixelOf(p), into: &actions) }
        } else {
            dot.hide(into: &actions)
        }
    }

    /// Drawing on or off: on turns the laser off; off finishes the strokes in progress (they stay).
    private mutating func setDrawing(_ on: Bool, into actions: inout [OutputAction]) {
        drawingOn = on
        if on {
            if laserOn { setLaser(false, into: &actions) }
        } else {
            drawings.endAll(into: &actions)
        }
    }

    /// Forgets every finger (silence, the web page gone or hidden, shutdown, another sender, a mode
    /// switch, a setting), finishing their strokes (they stay drawn: drawings are deliberate). The laser is
    /// turned off and its dot fades out, so nothing the phone pointed at stays on screen; the drawing
    /// toggle stays as it was.
    public mutating func releaseAll(at now: Instant, into actions: inout [OutputAction]) {
        if laserOn {
            laserOn = false
            trace.record("presenter", state.name, "laserOff", state.name, at: now)
        }
        dot.fade(at: now)
        penDeadline = nil
        eraserPixel = nil
        drawings.endAll(into: &actions)
        layer.forgetAll()
        if state != .idle { trace.record("presenter", state.name, "releaseAll", "idle", at: now) }
        state = .idle
    }

    /// The machine goes (a mode switch): the dot and its trail go at once.
    public mutating func hideLaser(into actions: inout [OutputAction]) {
        dot.hide(into: &actions)
    }

    // MARK: -

    /// The last laser pixel of each finger, so a long press can show the dot where the finger rests.
    private var pixels: InlineArray<10, PixelPoint> = InlineArray(repeating: PixelPoint(x: 0, y: 0))

    private func pixelOf(_ s: Int) -> PixelPoint { pixels[s] }

    /// The finger in slot `s` moved (the layer has its new place).
    private mutating func moved(_ s: Int, pixel: PixelPoint?, at now: Instant, into actions: inout [OutputAction]) {
        if let pixel {
            if laserOn, s == primary, pixel != pixels[s] { dot.move(to: pixel, at: now, into: &actions) }
            if drawings.isDrawing(s), pixel != pixels[s] { drawings.extend(slot: s, to: pixel, into: &actions) }
            pixels[s] = pixel
        }
        let travel = layer[s].travel
        let from = state
        switch state {
        case .touching(let n, let m, _, _):
            guard travel > touchpad.tapMoveThresholdMM else { return }
            if m == 1 && n == 1 {
                state = laserOn ? .pointing : (drawingOn ? .finished : .swiping)
            } else {
                state = .finished
            }
            trace.record("presenter", from.name, "motion", state.name, at: now)
            if state == .swiping { swipe(s, at: now, into: &actions) }
        case .swiping:
            swipe(s, at: now, into: &actions)
        case .idle, .pointing, .finished:
            break
        }
    }

    /// A swipe fires once the finger has travelled `swipeDistanceMM`, mostly sideways (user view).
    private mutating func swipe(_ s: Int, at now: Instant, into actions: inout [OutputAction]) {
        let f = layer[s]
        let user = orientation.toUserView(dx: f.x - f.startX, dy: f.y - f.startY)
        guard (user.dx * user.dx + user.dy * user.dy).squareRoot() >= touchpad.swipeDistanceMM else { return }
        if abs(user.dx) > abs(user.dy) {
            gate.emit(user.dx < 0 ? settings.keys.next : settings.keys.previous, into: &actions)
            trace.record("presenter", "swiping", user.dx < 0 ? "swipeLeft" : "swipeRight", "finished", at: now)
        } else {
            trace.record("presenter", "swiping", "swipeVertical", "finished", at: now)
        }
        state = .finished
    }

    /// All fingers lifted from `touching` in time, none moved.
    private mutating func tap(fingers: Int, into actions: inout [OutputAction]) {
        switch fingers {
        case 1: gate.emit(settings.keys.next, into: &actions)
        case 2: gate.emit(settings.keys.blank, into: &actions)
        case 3: drawings.clear(into: &actions)
        default: break
        }
    }
}

// MARK: the pen

extension PresenterMode {
    /// The narrowest pen stroke, at no pressure: 2 px.
    public static let penWidthMin = 2.0
    /// The widest pen stroke, at full pressure: 12 px (a finger's stroke is `OverlayScene.strokeWidth`, 6).
    public static let penWidthMax = 12.0
    /// How near the eraser must come to a stroke's path to erase it: 12 px.
    public static let eraserReach: Int32 = 12
    /// How long the pen may send nothing while it draws before its stroke ends: 500 ms (the page repeats
    /// a still pen's report every 100 ms).
    public static let penSilence = Interval.milliseconds(500)

    /// The stroke width for this pressure (0…1), in whole pixels.
    public static func penWidth(pressure: Double) -> UInt8 {
        let p = pressure.isFinite ? Swift.min(1, Swift.max(0, pressure)) : 0
        return UInt8((penWidthMin + p * (penWidthMax - penWidthMin)).rounded())
    }

    /// The page's pen, at `pixel` (the same mapping as the laser; nil when it went away): its tip draws
    /// whether or not finger drawing is on, the stroke as wide as it presses (`penWidth`); the eraser end
    /// on the glass erases the strokes it meets (`DrawingStore.erase`). The fingers' gestures are not
    /// affected.
    public mutating func pen(_ report: PenReport, pixel: PixelPoint?, at now: Instant, into actions: inout [OutputAction]) {
        let slot = Int(DrawingStore.penSlot)
        guard case .near(let sample) = report, let pixel else {
            drawings.end(slot: slot, into: &actions)
            penDeadline = nil
            eraserPixel = nil
            return
        }
        penDeadline = now + Self.penSilence
        guard sample.touching else {
            drawings.end(slot: slot, into: &actions)
            eraserPixel = nil
            return
        }
        if sample.eraser {
            drawings.end(slot: slot, into: &actions)
            // The eraser sweeps the way it moved since its last report, so a quick stroke across a line
            // between two reports still meets it.
            drawings.erase(from: eraserPixel ?? pixel, to: pixel, reach: Self.eraserReach, into: &actions)
            eraserPixel = pixel
            return
        }
        eraserPixel = nil
        let width = Self.penWidth(pressure: sample.pressure)
        if !drawings.isDrawing(slot) {
            actions.append(.overlay(.strokeWidth(slot: DrawingStore.penSlot, width: width)))
            drawings.begin(slot: slot, at: pixel, into: &actions)
            trace.record("presenter", "pen", "down", "pen drawing", at: now)
        } else if pixel != penPixel || width != penStrokeWidth {
            if width != penStrokeWidth { actions.append(.overlay(.strokeWidth(slot: DrawingStore.penSlot, width: width))) }
            drawings.extend(slot: slot, to: pixel, into: &actions)
        }
        penPixel = pixel
        penStrokeWidth = width
    }
}

// MARK: the web page's Slides panel

extension PresenterMode {
    /// A Slides panel button that acts on the overlay (the key buttons are plain chords):
    /// - `laserOn` (the Laser button held): the laser is on; drawing goes off; a finger already on the
    ///   pad shows the dot and moves it from now on (no swipe, no tap);
    /// - `laserOff` (released): the dot and its trail go; a finger still down does nothing more;
    /// - `draw`: drawing on or off (on turns the laser off, as the two-finger long press does);
    /// - `clear`: every drawing goes.
    public mutating func perform(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) {
        let from = state
        switch command {
        case .laserOn:
            guard !laserOn else { return }
            setLaser(true, into: &actions)
            if primary != nil && state != .finished { state = .pointing }
        case .laserOff:
            // Always hides: whatever is shown goes, even if the laser was turned off another way.
            laserOn = false
            dot.hide(into: &actions)
            if state != .idle { state = .finished }
        case .draw:
            setDrawing(!drawingOn, into: &actions)
        case .clear:
            drawings.clear(into: &actions)
        case .next, .previous, .blank, .start, .end:
            return
        }
        if from != state { trace.record("presenter", from.name, "button", state.name, at: now) }
    }
}
