// The core as the shell sees it: packets and timer ticks in, pointer actions out.

/// Everything between a decoded packet and the X11 output: the `ContactTracker`, the orientation
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
public struct BridgeCore: Sendable {
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
        /// Whether fingers beyond the first drive their own X pointers (`--multitouch`).
        public var multitouch: Bool
        /// What touches do.
        public var mode: OutputModeKind
        /// Settings of touchpad mode (presenter mode shares its tap and swipe thresholds).
        public var touchpad: TouchpadSettings
        /// Settings of presenter mode.
        public var presenter: PresenterSettings
        /// Whether the overlay shows a circle under every finger (`--show-touches`), in any mode.
        public var showTouches = false
        /// Whether touchscreen mode makes every finger a real touch (`OutputAction.touch`, for the uinput
        /// backend's touchscreen) instead of driving X pointers.
        public var realTouches = false
        /// Whether touchpad mode hands every finger to a native touchpad device (`OutputAction.padContact`,
        /// the uinput backend's: libinput makes taps, scrolling and gestures) instead of recognising them.
        public var nativeTouchpad = false

        public init(
            mapping: AbsoluteMapping, orientationOverride: DeviceOrientation? = nil, multitouch: Bool = false,
            idleRelease: Interval = .milliseconds(500), mode: OutputModeKind = .touchscreen,
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
                    mode: OutputModeKind = .touchscreen, touchpad: TouchpadSettings = TouchpadSettings(),
                    presenter: PresenterSettings = PresenterSettings()) {
            self.init(
                mapping: AbsoluteMapping(target: PixelRect(
                    x: screen.origin.x, y: screen.origin.y, width: screen.width, height: screen.height)),
                idleRelease: idleRelease, mode: mode, touchpad: touchpad, presenter: presenter)
        }
    }

    /// The silence watchdog.
    private enum Watchdog: Equatable, Sendable {
        /// No contacts: nothing to release, no timer needed.
        case disarmed
        /// Contacts are down; if no packet comes by `deadline`, they are cancelled.
        case armed(deadline: Instant)
    }

    /// The settings in use.
    public private(set) var configuration: Configuration
    private var tracker = ContactTracker()
    private var mode: TouchscreenMode
    private var touchpad: TouchpadMode
    private var presenter: PresenterMode
    private var visibleTouches = VisibleTouches()
    private var watchdog = Watchdog.disarmed
    /// The tracker's output for one call, reused so the hot path does not allocate.
    private var changes: [ContactChange] = []
    /// The latest time the shell gave (packet or timer), for changes made without one (`releaseAll`).
    private var latestTime = Instant(nanoseconds: 0)

    /// The last known orientation of the phone: `.unknown` until a packet gives a definite one; `faceUp`,
    /// `faceDown` and `unknown` keep the last definite orientation.
    public private(set) var orientation: DeviceOrientation = .unknown

    /// The orientation touches are turned by: the override when there is one, else the last known
    /// orientation (`.unknown`, before any, turns nothing, like portrait).
    public var effectiveOrientation: DeviceOrientation { configuration.orientationOverride ?? orientation }

    /// The pixel mapping in use: the configuration's for `effectiveOrientation`.
    public var screenMapping: ScreenMapping { mode.mapping }

    /// A core with no contacts.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let o = configuration.orientationOverride ?? .unknown
        mode = TouchscreenMode(mapping: configuration.mapping.screenMapping(for: o), multitouch: configuration.multitouch,
                               touches: configuration.realTouches)
        touchpad = TouchpadMode(settings: configuration.touchpad)
        touchpad.setOrientation(o)
        presenter = PresenterMode(settings: configuration.presenter, touchpad: configuration.touchpad)
        presenter.setOrientation(o)
        // A packet makes at most one change per event plus ten from the reconciliation; a packet with
        // more events than this grows the buffer once, and it keeps that capacity.
        changes.reserveCapacity(64)
    }

    /// Whether any finger is down.
    public var hasContacts: Bool { tracker.hasContacts }

    /// When the shell must call `handleTimer` next, or nil when nothing is pending (no contacts, no tap
    /// or drag timeout, no kinetic scroll: the idle daemon needs no timer at all). The earliest of the
    /// silence watchdog and, in touchpad mode, the tap machine's timeout and the next kinetic tick.
    public var nextDeadline: Instant? {
        var next: Instant? = nil
        if case .armed(let deadline) = watchdog { next = deadline }
        if configuration.mode == .touchpad, let d = touchpad.deadline {
            next = next.map { min($0, d) } ?? d
        }
        if configuration.mode == .presenter, let d = presenter.deadline {
            next = next.map { min($0, d) } ?? d
        }
        if let d = visibleTouches.deadline { next = next.map { min($0, d) } ?? d }
        return next
    }

    /// The transitions of the mode's state machines since the last `clearTrace()`, when tracing is on.
    public var trace: TransitionTrace { configuration.mode == .presenter ? presenter.trace : touchpad.trace }

    /// Turns the transition trace on or off (the shell turns it on at debug log level).
    public mutating func setTracing(_ on: Bool) {
        touchpad.trace.setEnabled(on)
        presenter.trace.setEnabled(on)
    }

    /// Empties the trace after the shell has logged it.
    public mutating func clearTrace() {
        touchpad.trace.removeAll()
        presenter.trace.removeAll()
    }

    /// Whether presenter mode's laser pointer is on.
    public var laserOn: Bool { presenter.laserOn }
    /// Whether presenter mode's drawing is on.
    public var drawingOn: Bool { presenter.drawingOn }

    /// Handles one packet from the current sender, received at `now`; appends the pointer actions to
    /// `actions`. Every packet, touches or not, counts as a sign of life for the watchdog.
    public mutating func handle(_ packet: TouchPacket, at now: Instant, into actions: inout [OutputAction]) {
        latestTime = max(latestTime, now)
        if let o = packet.orientation, o.isDefinite, o != orientation {
            let before = effectiveOrientation
            orientation = o
            if effectiveOrientation != before {
                updateMapping()
                touchpad.setOrientation(effectiveOrientation)
                presenter.setOrientation(effectiveOrientation)
            }
        }
        changes.removeAll(keepingCapacity: true)
        tracker.handle(packet, at: now, into: &changes)
        forwardChanges(at: now, into: &actions)
        watchdog = tracker.hasContacts ? .armed(deadline: now + configuration.idleRelease) : .disarmed
    }

    /// Called by the shell when `nextDeadline` has passed (or early: it then does nothing and keeps the
    /// deadline). If no packet came for `idleRelease` while contacts are down, cancels all contacts
    /// (→ button released).
    public mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {
        latestTime = max(latestTime, now)
        switch configuration.mode {
        case .touchpad: touchpad.handleTimer(at: now, into: &actions)
        case .presenter: presenter.handleTimer(at: now, into: &actions)
        case .touchscreen: break
        }
        visibleTouches.handleTimer(at: now, into: &actions)
        guard case .armed(let deadline) = watchdog, now >= deadline else { return }
        cancelEverything(at: now, into: &actions)
    }

    /// Shutdown or change of sender: cancels every contact and releases everything pressed.
    public mutating func releaseAll(into actions: inout [OutputAction]) {
        cancelEverything(at: latestTime, into: &actions)
    }

    /// The sender reported the size of its touch surface (our web client can; the PoseAI stream cannot):
    /// it replaces `--surface-aspect` / `--surface-diagonal-mm` in touchpad mode from now on.
    public mutating func setSurface(_ surface: SurfaceSize) {
        configuration.touchpad.surface = surface
        touchpad.setSurface(surface)
        presenter.setSurface(surface)
    }

    /// Switches what touches do (the web page's mode switch): everything held is released first, under
    /// the old mode, so no button stays pressed across the switch. Nothing when `kind` is the mode in use.
    public mutating func setMode(_ kind: OutputModeKind, into actions: inout [OutputAction]) {
        guard kind != configuration.mode else { return }
        cancelEverything(at: latestTime, into: &actions)
        configuration.mode = kind
    }

    /// Maps touches onto `target` from now on, with the same fit (the pointers are not moved now).
    /// The shell calls it when the monitors change.
    public mutating func setTarget(_ target: PixelRect) {
        configuration.mapping.target = target
        updateMapping()
    }

    private mutating func updateMapping() {
        mode.setMapping(configuration.mapping.screenMapping(for: effectiveOrientation))
    }

    private mutating func cancelEverything(at now: Instant, into actions: inout [OutputAction]) {
        changes.removeAll(keepingCapacity: true)
        tracker.cancelAll(into: &changes)
        forwardChanges(at: now, into: &actions)
        switch configuration.mode {
        case .touchscreen: mode.releaseAll(into: &actions)
        case .touchpad: touchpad.releaseAll(at: now, into: &actions)
        case .presenter: presenter.releaseAll(at: now, into: &actions)
        }
        watchdog = .disarmed
    }

    /// Hands the tracker's changes to the mode, and to the visible touches when they are on.
    private mutating func forwardChanges(at now: Instant, into actions: inout [OutputAction]) {
        if configuration.showTouches {
            for i in changes.indices {
                let change = changes[i]
                var pixel: PixelPoint? = nil
                switch Self.turned(change, effectiveOrientation) {
                case .began(_, let p), .moved(_, let p): pixel = mode.mapping.pixel(for: p)
                case .ended, .cancelled: break
                }
                visibleTouches.handle(change, pixel: pixel, at: now, into: &actions)
            }
        }
        switch configuration.mode {
        case .touchscreen:
            for i in changes.indices {
                mode.handle(Self.turned(changes[i], effectiveOrientation), at: now, into: &actions)
            }
        case .touchpad where configuration.nativeTouchpad:
            for i in changes.indices { actions.append(.padContact(Self.turned(changes[i], effectiveOrientation))) }
        case .touchpad:
            // Device-frame points: the touchpad turns its motion itself (`setOrientation`).
            for i in changes.indices { touchpad.handle(changes[i], at: now, into: &actions) }
        case .presenter:
            // Device-frame points for the gestures (turned like the touchpad's), the pixel through the
            // absolute mapping for the laser.
            for i in changes.indices {
                let change = changes[i]
                var pixel: PixelPoint? = nil
                switch Self.turned(change, effectiveOrientation) {
                case .began(_, let p), .moved(_, let p): pixel = mode.mapping.pixel(for: p)
                case .ended, .cancelled: break
                }
                presenter.handle(change, pixel: pixel, at: now, into: &actions)
            }
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

/// What touches do.
public enum OutputModeKind: String, Hashable, Sendable, CaseIterable {
    /// The phone is a laptop touchpad: relative motion, taps, scrolling, gestures (`TouchpadMode`).
    case touchpad
    /// The phone is the screen: absolute motion, the first finger drives button 1 (`TouchscreenMode`).
    case touchscreen
    /// The phone is a presentation remote: taps and swipes change slides, a long press toggles the
    /// laser pointer (`PresenterMode`).
    case presenter
}
