// Tap to click, double tap, tap-and-drag and drag lock: libinput's tap state machine, for a phone.

/// Recognises taps from finger counts, motion and time. The touchpad mode feeds it an event for each
/// finger that lands, lifts or is cancelled (with the number of fingers down afterwards), `motion`
/// when any finger has moved farther than the tap move threshold from where it landed, and `timeout`
/// when `deadline` has passed.
///
/// ```
///  idle ──touch──► touch(n, max) ──release, 0 left, max=1 / press 1──► tapped ──timeout / release 1──► idle
///                    │  │  └─release, 0 left, max=2 / click 3; max=3 / click 2; max≥4 / nothing──► idle
///                    │  └─motion, timeout (tap timeout)──► hold ──last finger up──► idle
///                    └─touch / restart tap timeout
///  tapped ──touch──► draggingOrDoubleTap ──release / release 1, press 1──► tapped   (double click)
///                      └─motion, timeout (tap timeout)──► dragging ──release──► idle / release 1
///                                                                  └─release, drag lock──► draggingWait
///  draggingWait ──timeout (drag lock timeout) / release 1──► idle
///               ──touch──► draggingOrTap ──release / release 1──► idle   (a tap ends the drag)
///                                        └─motion, timeout──► dragging
///  any state ──cancel──► (release 1 if held) hold or idle, never a click
/// ```
///
/// Timeouts: tap timeout (180 ms) from the latest touch; drag timeout (180 ms) after a tap, during which
/// button 1 is held (so that a touch within it continues the same press as a drag); drag lock timeout
/// (300 ms). Every transition is recorded in the trace as `tap: from → event → to`.
public struct TapMachine: Sendable {
    public enum Event: Sendable {
        /// A finger landed; `fingers` are down now.
        case touch(fingers: Int)
        /// A finger lifted; `fingers` are down now.
        case release(fingers: Int)
        /// A finger was cancelled; `fingers` are down now.
        case cancel(fingers: Int)
        /// A finger moved beyond the tap move threshold.
        case motion
        /// `deadline` has passed.
        case timeout

        var name: StaticString {
            switch self {
            case .touch: return "touch"
            case .release: return "release"
            case .cancel: return "cancel"
            case .motion: return "motion"
            case .timeout: return "timeout"
            }
        }
    }

    private enum State: Equatable, Sendable {
        /// No finger down, no button held.
        case idle
        /// `fingers` down, `maxFingers` at most so far, none moved: a tap if all lift by `deadline`.
        case touch(fingers: Int, maxFingers: Int, deadline: Instant)
        /// Fingers down that are not a tap (moved or rested too long); waits for all to lift.
        case hold(fingers: Int)
        /// A one-finger tap: button 1 is pressed and held until `deadline` (drag timeout).
        case tapped(deadline: Instant)
        /// Touched again after a tap; button 1 still held. Lift by `deadline` = double tap.
        case draggingOrDoubleTap(fingers: Int, deadline: Instant)
        /// Tap-and-drag: button 1 held while the finger moves.
        case dragging(fingers: Int)
        /// Drag lock: the finger lifted, button 1 stays held until `deadline`.
        case draggingWait(deadline: Instant)
        /// Drag lock: touched again; lift by `deadline` ends the drag, motion continues it.
        case draggingOrTap(fingers: Int, deadline: Instant)

        var name: StaticString {
            switch self {
            case .idle: return "idle"
            case .touch: return "touch"
            case .hold: return "hold"
            case .tapped: return "tapped"
            case .draggingOrDoubleTap: return "draggingOrDoubleTap"
            case .dragging: return "dragging"
            case .draggingWait: return "draggingWait"
            case .draggingOrTap: return "draggingOrTap"
            }
        }

        var holdsButton: Bool {
            switch self {
            case .idle, .touch, .hold: return false
            case .tapped, .draggingOrDoubleTap, .dragging, .draggingWait, .draggingOrTap: return true
            }
        }
    }

    private var state = State.idle
    public var tapTimeout: Interval
    public var dragTimeout: Interval
    public var dragLockTimeout: Interval
    public var dragLock: Bool

    public init(settings: TouchpadSettings) {
        tapTimeout = settings.tapTimeout
        dragTimeout = settings.dragTimeout
        dragLockTimeout = settings.dragLockTimeout
        dragLock = settings.dragLock
    }

    /// Whether a tap-and-drag is in progress (the pointer keeps moving with more than one finger down).
    public var isDragging: Bool {
        switch state {
        case .draggingOrDoubleTap, .dragging, .draggingOrTap: return true
        default: return false
        }
    }

    /// When `timeout` must be sent, or nil.
    public var deadline: Instant? {
        switch state {
        case .touch(_, _, let d), .tapped(let d), .draggingOrDoubleTap(_, let d), .draggingWait(let d),
             .draggingOrTap(_, let d):
            return d
        case .idle, .hold, .dragging:
            return nil
        }
    }

    /// Feeds one event; appends the button actions it causes.
    public mutating func handle(_ event: Event, at now: Instant, into actions: inout [OutputAction],
                                trace: inout TransitionTrace) {
        if case .timeout = event, let d = deadline, now < d { return }
        let from = state
        switch state {
        case .idle:
            if case .touch(let n) = event {
                state = .touch(fingers: n, maxFingers: n, deadline: now + tapTimeout)
            }
        case .touch(_, let maxFingers, let deadline):
            switch event {
            case .touch(let n):
                state = .touch(fingers: n, maxFingers: max(maxFingers, n), deadline: now + tapTimeout)
            case .release(let n):
                if n > 0 {
                    state = .touch(fingers: n, maxFingers: maxFingers, deadline: deadline)
                } else {
                    tap(fingers: maxFingers, at: now, into: &actions)
                }
            case .cancel(let n):
                state = n > 0 ? .hold(fingers: n) : .idle
            case .motion, .timeout:
                if case .touch(let n, _, _) = state { state = .hold(fingers: n) }
            }
        case .hold:
            switch event {
            case .touch(let n): state = .hold(fingers: n)
            case .release(let n), .cancel(let n): state = n > 0 ? .hold(fingers: n) : .idle
            case .motion, .timeout: break
            }
        case .tapped:
            switch event {
            case .touch(let n):
                state = .draggingOrDoubleTap(fingers: n, deadline: now + tapTimeout)
            case .timeout:
                actions.append(.button(.left, pressed: false))
                state = .idle
            case .release, .cancel, .motion:
                break
            }
        case .draggingOrDoubleTap(_, let deadline):
            switch event {
            case .touch(let n):
                state = .draggingOrDoubleTap(fingers: n, deadline: deadline)
            case .release(let n):
                if n > 0 {
                    state = .draggingOrDoubleTap(fingers: n, deadline: deadline)
                } else {
                    // The second tap: finish the first click and press the second, held for the drag
                    // timeout like the first (a third touch can drag or triple-click).
                    actions.append(.button(.left, pressed: false))
                    actions.append(.button(.left, pressed: true))
                    state = .tapped(deadline: now + dragTimeout)
                }
            case .cancel(let n):
                actions.append(.button(.left, pressed: false))
                state = n > 0 ? .hold(fingers: n) : .idle
            case .motion, .timeout:
                if case .draggingOrDoubleTap(let n, _) = state { state = .dragging(fingers: n) }
            }
        case .dragging:
            switch event {
            case .touch(let n):
                state = .dragging(fingers: n)
            case .release(let n):
                if n > 0 {
                    state = .dragging(fingers: n)
                } else if dragLock {
                    state = .draggingWait(deadline: now + dragLockTimeout)
                } else {
                    actions.append(.button(.left, pressed: false))
                    state = .idle
                }
            case .cancel(let n):
                actions.append(.button(.left, pressed: false))
                state = n > 0 ? .hold(fingers: n) : .idle
            case .motion, .timeout:
                break
            }
        case .draggingWait:
            switch event {
            case .touch(let n):
                state = .draggingOrTap(fingers: n, deadline: now + tapTimeout)
            case .timeout:
                actions.append(.button(.left, pressed: false))
                state = .idle
            case .release, .cancel, .motion:
                break
            }
        case .draggingOrTap(_, let deadline):
            switch event {
            case .touch(let n):
                state = .draggingOrTap(fingers: n, deadline: deadline)
            case .release(let n):
                if n > 0 {
                    state = .draggingOrTap(fingers: n, deadline: deadline)
                } else {
                    actions.append(.button(.left, pressed: false))
                    state = .idle
                }
            case .cancel(let n):
                actions.append(.button(.left, pressed: false))
                state = n > 0 ? .hold(fingers: n) : .idle
            case .motion, .timeout:
                if case .draggingOrTap(let n, _) = state { state = .dragging(fingers: n) }
            }
        }
        if from != state { trace.record("tap", from.name, event.name, state.name, at: now) }
    }

    /// All fingers lifted from `touch` without moving: the tap's click.
    private mutating func tap(fingers: Int, at now: Instant, into actions: inout [OutputAction]) {
        switch fingers {
        case 1:
            // Pressed now, released when the drag timeout passes without a new touch.
            actions.append(.button(.left, pressed: true))
            state = .tapped(deadline: now + dragTimeout)
        case 2:
            actions.append(.button(.right, pressed: true))
            actions.append(.button(.right, pressed: false))
            state = .idle
        case 3:
            actions.append(.button(.middle, pressed: true))
            actions.append(.button(.middle, pressed: false))
            state = .idle
        default:
            state = .idle
        }
    }

    /// Releases button 1 if held and returns to idle (shutdown, change of sender, silence).
    public mutating func releaseAll(at now: Instant, into actions: inout [OutputAction], trace: inout TransitionTrace) {
        let from = state
        if state.holdsButton { actions.append(.button(.left, pressed: false)) }
        state = .idle
        if from != .idle { trace.record("tap", from.name, "releaseAll", state.name, at: now) }
    }
}
