// The core as the shell sees it: packets and timer ticks in, pointer actions out.

/// Everything between a decoded packet and the input output: the `ContactTracker`, the orientation
/// (`effectiveOrientation`: `--orientation`, else the packets'; the tracker's device-frame points are
/// turned to the user's view before `TouchscreenMode` sees them; `TouchpadMode` turns its motion by the
/// same orientation), the output mode (`TouchpadMode`, the default of the command line, or
/// `TouchscreenMode`) and the silence watchdog.
///
/// The watchdog: while a finger is down, the phone streams packets (30–60 per second, with `TouchState`,
/// even when the finger is still). If none arrives for `Configuration.idleRelease`, the phone is gone or
/// the network dropped it, and every contact is cancelled so no button stays pressed.
///
/// ```
///   ┌──────────┐  packet, contacts down / deadline = now + idleRelease  ┌───────────────────┐ ─┐ packet, contacts
///   │ disarmed │ ─────────────────────────────────────────────────────► │ armed(deadline)   │ ◄┘ / new deadline
///   └──────────┘ ◄───────────────────────────────────────────────────── └───────────────────┘
///        packet leaving no contacts; handleTimer at ≥ deadline / cancel all; releaseAll
/// ```
///
/// Allocates nothing per call once warm: its own change buffer and the caller's action buffer keep their
/// capacity (checked by `AllocationTests`, which count the thread's mallocs).
public struct TouchPipeline: Sendable {
    /// Settings of the core.
    public struct Configuration: Hashable, Sendable {
        /// How long without any packet, while fingers are down, before every contact is cancelled and
        /// the button released. Default 500 ms (15–30 missed packets at 30–60 packets/s).
        public var idleRelease: Interval
        /// Where device points land: the target rectangle (a monitor or the whole screen), the fit and
        /// the phone's shape.
        public var mapping: AbsoluteMapping
        /// The orientation to use whatever the phone says (`--orientation`), or nil to follow the
        /// packets' `Orientation` field (`auto`, the default).
        public var orientationOverride: DeviceOrientation?
        /// Whether fingers beyond the first drive their own pointers (`--multitouch`).
        public var multitouch: Bool
        /// What touches do.
        public var mode: TouchMode
        /// Settings of touchpad mode (presenter mode shares its tap and swipe thresholds).
        public var touchpad: TouchpadSettings
        /// Settings of presenter mode.
        public var presenter: PresenterSettings
        /// Whether the overlay shows a circle under every finger (`--show-touches`), in any mode.
        public var showTouches = false
        /// Whether touchscreen mode makes every finger a real touch (`OutputAction.touch`, for the uinput
        /// backend's touchscreen) instead of driving pointers.
        public var realTouches = false
        /// Whether touchpad mode hands every finger to a native touchpad device (`OutputAction.padContact`,
        /// the uinput backend's: libinput makes taps, scrolling and gestures) instead of recognising them.
        public var nativeTouchpad = false
        /// Whether pen mode drives the uinput backend's pen tablet (`OutputAction.pen`: pressure, tilt,
        /// the eraser) instead of the main pointer.
        public var penTablet = false

        public init(
            mapping: AbsoluteMapping, orientationOverride: DeviceOrientation? = nil, multitouch: Bool = false,
            idleRelease: Interval = .milliseconds(500), mode: TouchMode = .touchscreen,
            touchpad: TouchpadSettings = TouchpadSettings(), presenter: PresenterSettings = PresenterSettings()
        ) {
            self.presenter = presenter
            self.mapping = mapping
            self.orientationOverride = orientationOverride
            self.multitouch = multitouch
            self.mode = mode
            self.touchpad = touchpad
            self.idleRelease = idleRelease
        }

        /// Stretched onto the rectangle of `screen`, orientation from the packets, one pointer.
        public init(screen: ScreenMapping, idleRelease: Interval = .milliseconds(500),
                    mode: TouchMode = .touchscreen, touchpad: TouchpadSettings = TouchpadSettings(),
                    presenter: PresenterSettings = PresenterSettings()) {
            self.init(
                mapping: AbsoluteMapping(target: PixelRect(
                    x: screen.origin.x, y: screen.origin.y, width: screen.width, height: screen.height)),
                idleRelease: idleRelease, mode: mode, touchpad: touchpad, presenter: presenter)
        }
    }

    /// The pen's tip, for `penTip`.
    enum PenTip: Equatable, Sendable {
        case up, down, cancelled
    }

    /// The silence watchdog.
    private enum Watchdog: Equatable, Sendable {
        /// No contacts: nothing to release, no timer needed.
        case disarmed
        /// Contacts are down; if no packet comes by `deadline`, they are cancelled.
        case armed(deadline: Instant)
    }

    /// The settings in use.
    public internal(set) var configuration: Configuration
    private var tracker = ContactTracker()
    /// The machine of the mode in use (`configuration.mode`'s): only the active one lives (a switch
    /// makes the new one fresh). Held inline, changed in place, switched on once per step (`forward`):
    /// no box, no dynamic dispatch per change.
    var active: ActiveMachine
    /// Presenter mode's drawings while another mode is in use: they stay on the overlay, so they stay
    /// the core's too (bounded, erasable, named by identity) and go back to the next presenter machine.
    private var parkedDrawings: DrawingStore?
    /// Where device points land on the screen for `effectiveOrientation` (touchscreen mode, the
    /// presenter's laser and the visible touches all use it).
    public private(set) var screenMapping: ScreenMapping
    private var visibleTouches = VisibleTouches()
    private var watchdog = Watchdog.disarmed
    /// The tracker's output for one call, reused so the hot path does not allocate.
    private var changes: [ContactChange] = []
    /// Re-times the moves of the relative modes when packets come in bursts (`smoothingApplies`).
    private var smoother: MotionSmoother
    /// The smoother's output for one packet, reused.
    private var routed: [ContactChange] = []
    /// The latest time the shell gave (packet or timer), for changes made without one (`releaseAll`).
    var latestTime = Instant(nanoseconds: 0)
    /// When the last packet came: after a silence of `idleRelease`, fingers cancelled while still down
    /// are forgotten (their ends were lost).
    private var lastPacket: Instant?
    /// The page's pen as the pipeline sees it in every mode: up (away or hovering), its tip on
    /// the glass, or its tip cancelled there by a release while the same sender goes on. A cancelled tip's
    /// reports are dropped before any machine sees them until the page says the pen hovers or went. Not
    /// by silence: the pen comes only over the page's WebSocket, which loses nothing, so its end always
    /// arrives; and a silence timed on the Bridge's loop also counts the daemon's own pauses (the switch to
    /// presenter mode makes the overlay window), which made a pen held through a switch draw again. It
    /// lives here and not in the machine of the mode, which a mode switch replaces, so a round trip
    /// through other modes does not forget it; a new sender (the page gone included) clears it.
    var penTip = PenTip.up
    /// Where the page's commands and the Slides panel's chords are refused when the desktop's keymap lacks
    /// a key, and where the machine's refusals are gathered for the Bridge (`collectRefusals`).
    var gate = KeyGate()
    /// Whether the machines record their transitions (kept across a mode switch).
    private(set) var tracing = false
    /// How many times everything was released (`cancelEverything`): the Bridge's `HeldRecord` releases
    /// what is left after each.
    public private(set) var releases = 0

    /// The last known orientation of the phone: `.unknown` until a packet gives a definite one; `faceUp`,
    /// `faceDown` and `unknown` keep the last definite orientation.
    public private(set) var orientation: DeviceOrientation = .unknown

    /// The orientation touches are turned by: the override when there is one, else the last known
    /// orientation (`.unknown`, before any, turns nothing, like portrait).
    public var effectiveOrientation: DeviceOrientation { configuration.orientationOverride ?? orientation }

    /// A core with no contacts.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let o = configuration.orientationOverride ?? .unknown
        screenMapping = configuration.mapping.screenMapping(for: o)
        smoother = MotionSmoother(setting: configuration.touchpad.smoothing)
        active = Self.makeMachine(configuration.mode, configuration: configuration, mapping: screenMapping,
                                  orientation: o, tracing: false)
        // A packet makes at most one change per event plus ten from the reconciliation; a packet with
        // more events than this grows the buffer once, and it keeps that capacity.
        // `smooth` trades the two buffers: both hold what the smoother can hand on.
        changes.reserveCapacity(64 + 10 * MotionSmoother.queueLength)
        routed.reserveCapacity(64 + 10 * MotionSmoother.queueLength)
    }

    /// A fresh machine for `kind`, set up for the current mapping, orientation, surface and tracing.
    func makeMachine(_ kind: TouchMode) -> ActiveMachine {
        var machine = Self.makeMachine(kind, configuration: configuration, mapping: screenMapping,
                                       orientation: effectiveOrientation, tracing: tracing)
        machine.setKeymap(gate.keymap)
        return machine
    }

    private static func makeMachine(_ kind: TouchMode, configuration: Configuration, mapping screenMapping: ScreenMapping,
                                    orientation o: DeviceOrientation, tracing: Bool) -> ActiveMachine {
        switch kind {
        case .touchscreen:
            return ActiveMachine(TouchscreenMode(mapping: screenMapping, multitouch: configuration.multitouch,
                                                 touches: configuration.realTouches))
        case .touchpad:
            var m = TouchpadMode(settings: configuration.touchpad)
            m.setOrientation(o)
            m.trace.setEnabled(tracing)
            return ActiveMachine(m)
        case .presenter:
            var m = PresenterMode(settings: configuration.presenter, touchpad: configuration.touchpad)
            m.setOrientation(o)
            m.trace.setEnabled(tracing)
            return ActiveMachine(m)
        case .pen:
            var m = PenMode(mapping: screenMapping, tablet: configuration.penTablet,
                            thresholds: PenMode.Thresholds(silence: configuration.idleRelease))
            m.setOrientation(o)
            m.trace.setEnabled(tracing)
            return ActiveMachine(m)
        }
    }

    /// Whether any finger is down.
    public var hasContacts: Bool { tracker.hasContacts }

    /// When the shell must call `handleTimer` next, or nil when nothing is pending (no contacts, no tap
    /// or drag timeout, no kinetic scroll: the idle daemon needs no timer at all). The earliest of the
    /// silence watchdog, the active machine's deadline (tap machine, kinetic tick, long press, laser
    /// trail) and the visible touches' fade.
    /// A mutating read: the active machine is read in place (`ModeMachine.deadline`).
    @inline(__always) public var nextDeadline: Instant? {
        mutating get {
            var next: Instant? = nil
            if case .armed(let deadline) = watchdog { next = deadline }
            if let d = active.deadline { next = next.map { min($0, d) } ?? d }
            if let d = visibleTouches.deadline { next = next.map { min($0, d) } ?? d }
            if let d = smoother.deadline { next = next.map { min($0, d) } ?? d }
            return next
        }
    }

    /// Whether moves go through the `MotionSmoother`: `--smoothing auto` in touchpad and presenter mode
    /// (never in touchscreen mode, where the pointer stays under the finger).
    private var smoothingApplies: Bool { configuration.touchpad.smoothing == .auto && configuration.mode != .touchscreen }

    /// The smoother's jitter, period and delay now (for tests and the log).
    public var smoothing: SmoothingReport { smoother.measurement }

    /// The smoother's last change of state (engaged or let go), once: the Bridge logs it.
    public mutating func takeSmoothingReport() -> SmoothingReport? { smoother.takeReport() }

    /// The transitions of the active machine since the last `clearTrace()`, when tracing is on.
    public var trace: TransitionTrace { active.trace }

    /// Turns the transition trace on or off (the shell turns it on at debug log level).
    public mutating func setTracing(_ on: Bool) {
        tracing = on
        active.setTracing(on)
    }

    /// Empties the trace after the shell has logged it.
    public mutating func clearTrace() {
        active.clearTrace()
    }

    /// Whether presenter mode's laser pointer is on (false in the other modes).
    public var laserOn: Bool { active.presenterMode?.laserOn ?? false }
    /// Whether presenter mode's drawing is on (false in the other modes).
    public var drawingOn: Bool { active.presenterMode?.drawingOn ?? false }

    /// Whether the mode in use, or `--show-touches`, draws on the overlay: the shell keeps an overlay
    /// window exactly while this is true.
    public var needsOverlay: Bool { configuration.showTouches || configuration.mode == .presenter }

    /// Handles one packet from the current sender, received at `now`; appends the pointer actions to
    /// `actions`. Every packet, touches or not, counts as a sign of life for the watchdog. Returns whether
    /// the packet was activity: it began, moved, ended or cancelled a finger, or left one on the glass (a
    /// cancelled one included); an empty packet, or one that repeats what is known of free slots, is not.
    @discardableResult
    public mutating func handle(_ packet: TouchPacket, at now: Instant, into actions: inout [OutputAction]) -> Bool {
        latestTime = max(latestTime, now)
        if let o = packet.orientation, o.isDefinite, o != orientation {
            let before = effectiveOrientation
            orientation = o
            if effectiveOrientation != before {
                updateMapping()
                active.setOrientation(effectiveOrientation)
            }
        }
        if let last = lastPacket, now - last >= configuration.idleRelease { tracker.forgetSuppressed() }
        lastPacket = now
        let hadContacts = tracker.hasContacts
        changes.removeAll(keepingCapacity: true)
        tracker.handle(packet, at: now, into: &changes)
        let active = !changes.isEmpty || tracker.hasContacts || tracker.hasSuppressed
        if smoothingApplies { smooth(hadContacts: hadContacts, at: now) }
        forwardChanges(at: now, into: &actions)
        watchdog = tracker.hasContacts ? .armed(deadline: now + configuration.idleRelease) : .disarmed
        return active
    }

    /// Called by the shell when `nextDeadline` has passed (or early: it then does nothing and keeps the
    /// deadline). If no packet came for `idleRelease` while contacts are down, cancels all contacts
    /// (→ button released).
    public mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {
        latestTime = max(latestTime, now)
        if let d = smoother.deadline, now >= d {
            changes.removeAll(keepingCapacity: true)
            smoother.tick(at: now, into: &changes)
            forwardChanges(at: now, into: &actions)
        }
        active.handleTimer(at: now, into: &actions)
        visibleTouches.handleTimer(at: now, into: &actions)
        guard case .armed(let deadline) = watchdog, now >= deadline else { return }
        // The same sender goes on: its fingers are forgotten by its next packet (after `idleRelease` of
        // silence, `forgetSuppressed`), but a pen still reporting stays cancelled until it lifts.
        cancelEverything(at: now, keepingCancelled: true, into: &actions)
    }

    /// Shutdown or change of sender: cancels every contact and releases everything pressed. With
    /// `keepingCancelled` (the sender's own `release`), the fingers and the pen still on the glass stay
    /// cancelled until they lift (`ContactTracker`, `penTip`): the rest of their touch does nothing.
    /// Without it (a new sender, the sender gone, shutdown), nothing is kept: the next sender's fingers
    /// and pen start from nothing.
    public mutating func releaseAll(keepingCancelled: Bool = false, into actions: inout [OutputAction]) {
        cancelEverything(at: latestTime, keepingCancelled: keepingCancelled, into: &actions)
    }

    /// The sender reported the size of its touch surface (our web client can; the PoseAI stream cannot):
    /// it replaces `--surface-aspect` / `--surface-diagonal-mm` in touchpad mode from now on.
    public mutating func setSurface(_ surface: SurfaceSize) {
        configuration.touchpad.surface = surface
        active.setSurface(surface)
    }

    /// Switches what touches do (the web page's mode switch): everything held is released first, under
    /// the old mode, so no button stays pressed across the switch; then the old machine is dropped and a
    /// fresh one made for `kind`. Nothing when `kind` is the mode in use.
    public mutating func setMode(_ kind: TouchMode, into actions: inout [OutputAction]) {
        guard kind != configuration.mode else { return }
        cancelEverything(at: latestTime, keepingCancelled: true, into: &actions)
        // The laser dot and its trail go with the machine that drew them (drawings stay).
        active.hideLaser(into: &actions)
        if let presenter = active.presenterMode { parkedDrawings = presenter.drawings }
        configuration.mode = kind
        active = makeMachine(kind)
        if kind == .presenter, let drawings = parkedDrawings, active.presenterMode != nil {
            parkedDrawings = nil
            active.presenterMode!.drawings = drawings
        }
    }

    /// Maps touches onto `target` from now on, with the same fit (the pointers are not moved now).
    /// The shell calls it when the monitors change.
    public mutating func setTarget(_ target: PixelRect) {
        configuration.mapping.target = target
        updateMapping()
    }

    private mutating func updateMapping() {
        screenMapping = configuration.mapping.screenMapping(for: effectiveOrientation)
        active.setMapping(screenMapping)
    }

    mutating func cancelEverything(at now: Instant, keepingCancelled: Bool = false,
                                           into actions: inout [OutputAction]) {
        releases &+= 1
        changes.removeAll(keepingCapacity: true)
        tracker.cancelAll(keepingCancelled: keepingCancelled, into: &changes)
        penTip = keepingCancelled && penTip != .up ? .cancelled : .up
        smoother.dropAll()
        forwardChanges(at: now, into: &actions)
        active.releaseAll(at: now, into: &actions)
        watchdog = .disarmed
    }

    /// Passes this packet's changes through the smoother: measured, then each change handed on at once
    /// or queued for the tick.
    private mutating func smooth(hadContacts: Bool, at now: Instant) {
        guard hadContacts || tracker.hasContacts else { return smoother.noContacts() }
        smoother.pass(changes, at: now, into: &routed)
        // The routed changes become this packet's, without a copy (the two buffers trade places and
        // keep their capacity).
        swap(&changes, &routed)
    }

    /// Hands the tracker's changes to the mode, and to the visible touches when they are on.
    private mutating func forwardChanges(at now: Instant, into actions: inout [OutputAction]) {
        if configuration.showTouches {
            for i in changes.indices {
                let change = changes[i]
                visibleTouches.handle(change, pixel: pixel(of: change), at: now, into: &actions)
            }
        }
        let o = effectiveOrientation
        if configuration.nativeTouchpad && configuration.mode == .touchpad {
            // The uinput backend's native touchpad: libinput makes taps, scrolling and gestures from the
            // fingers themselves, turned to the user's view. The recognizer stays idle.
            for i in changes.indices { actions.append(.padContact(Self.turned(changes[i], o))) }
        } else {
            Self.forward(changes, to: &active, turnedBy: o, mapping: screenMapping, at: now, into: &actions)
        }
    }

    /// The changes to the machine of the mode in use, switched on once for all of them, each in the frame
    /// that machine takes: the touchscreen in the user's view (`turned`), the touchpad in the device frame
    /// (it turns its motion itself, `setOrientation`), the presenter in the device frame for its gestures
    /// with the pixel under the finger for the laser; the pen mode takes none (the page's pen is its
    /// input, a palm on the glass is not).
    private static func forward(_ changes: [ContactChange], to active: inout ActiveMachine, turnedBy o: DeviceOrientation,
                                mapping: ScreenMapping, at now: Instant, into actions: inout [OutputAction]) {
        switch active.kind {
        case .touchscreen:
            for i in changes.indices { active.touchscreenMode!.handle(turned(changes[i], o), at: now, into: &actions) }
        case .touchpad:
            for i in changes.indices { active.touchpadMode!.handle(changes[i], at: now, into: &actions) }
        case .presenter:
            for i in changes.indices {
                active.presenterMode!.handle(changes[i], pixel: pixel(of: changes[i], o, mapping), at: now, into: &actions)
            }
        case .pen:
            break
        }
    }

    /// How many strokes presenter mode's drawings keep (0 in the other modes).
    public var strokeCount: Int { active.presenterMode?.drawings.strokeCount ?? 0 }

    /// The strokes the overlay shows, as the core keeps them (presenter mode's, or those it left on the
    /// overlay when another mode took over).
    public var shownStrokes: [ShownStroke] {
        (active.presenterMode?.drawings ?? parkedDrawings)?.shownStrokes ?? []
    }

    /// The overlay window went, with everything on it: the drawings are forgotten (nothing to send:
    /// nothing shows them any more).
    public mutating func overlayRemoved() {
        parkedDrawings = nil
        guard active.presenterMode?.drawings.strokeCount ?? 0 > 0 else { return }
        active.presenterMode!.drawings.forgetAll()
    }

    /// Whether a pen is near the glass (pen mode).
    public var penNear: Bool { active.penMode?.isNear ?? false }

    /// Where a began or moved change lands on the screen through `mapping` (nil for ended and cancelled).
    @inline(__always)
    static func pixel(of change: ContactChange, _ o: DeviceOrientation, _ mapping: ScreenMapping) -> PixelPoint? {
        switch Self.turned(change, o) {
        case .began(_, let p), .moved(_, let p): return mapping.pixel(for: p)
        case .ended, .cancelled: return nil
        }
    }

    /// Where a began or moved change lands on the screen (nil for ended and cancelled).
    @inline(__always)
    private func pixel(of change: ContactChange) -> PixelPoint? {
        switch Self.turned(change, effectiveOrientation) {
        case .began(_, let p), .moved(_, let p): return screenMapping.pixel(for: p)
        case .ended, .cancelled: return nil
        }
    }

    /// A change with its point turned to the user's view, for the absolute (touchscreen) mode: the
    /// tracker stays in the device frame, like `TouchState`. (A relative mode that works in the device
    /// frame turns its motion itself, with the same `effectiveOrientation`.)
    @inline(__always)
    static func turned(_ change: ContactChange, _ o: DeviceOrientation) -> ContactChange {
        switch change {
        case .began(let slot, let p): return .began(slot: slot, at: o.toUserView(p))
        case .moved(let slot, let p): return .moved(slot: slot, to: o.toUserView(p))
        case .ended, .cancelled: return change
        }
    }
}
