/// What every mode machine answers to, so that `TouchPipeline` treats the mode in use as one value
/// (`ActiveMachine`). Each mode's conformance below says, in one place, what the common calls mean for it
/// (a call that has no meaning for a mode is a written no-op there, never a default). The tracker's
/// changes are not among them: the pipeline hands them to the machine of the mode in use itself, once
/// per step, in the frame that machine takes (the touchscreen in the user's view, the touchpad in the
/// device frame, the presenter in the device frame with the pixel under it, the pen not at all).
protocol ModeMachine: Sendable {
    /// When the machine's next timer is due (tap, kinetic tick, long press, laser trail), if any.
    /// A mutating read, so that `ActiveMachine` reads its machine in place: a plain read through the
    /// optional that holds it copies the machine (305 to 1,496 bytes and their references, a step).
    var deadline: Instant? { mutating get }
    /// Its transitions since the last `clearTrace()`, when tracing is on.
    var trace: TransitionTrace { get }
    mutating func setTracing(_ on: Bool)
    mutating func clearTrace()
    mutating func setOrientation(_ o: DeviceOrientation)
    mutating func setSurface(_ s: SurfaceSize)
    mutating func setMapping(_ mapping: ScreenMapping)
    /// One report of the page's pen.
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction])
    /// The desktop's keymap changed (nil: unknown): the chords the machine emits are checked against it
    /// where they are emitted (`KeyGate`).
    mutating func setKeymap(_ keymap: Keymap?)
    /// Hands the chords the machine refused since the last call to `gate`, in order.
    mutating func moveRefusals(to gate: inout KeyGate)
    /// A Slides panel button; false when the mode has no use for it.
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool
    /// The laser dot and its trail go (a mode switch).
    mutating func hideLaser(into actions: inout [OutputAction])
    mutating func handleTimer(at now: Instant, into actions: inout [OutputAction])
    mutating func releaseAll(at now: Instant, into actions: inout [OutputAction])
}

/// The machine of the mode in use: one of the four lives, in the optional of its `kind` (the others are
/// nil), held inline and changed in place (no box, nothing copied on a call, the presenter's
/// `DrawingStore` grows in place). A call switches on `kind` once. The pipeline's hot path, a packet's
/// changes, switches on it once per step and calls the machine itself (`TouchPipeline.forward`).
///
/// Tried first: an enum with the four machines as payloads. Swift changes an enum's payload only by
/// taking it out and putting it back, which copied the machine twice per call (+50 ns a packet for one
/// finger, `make bench`'s core rows), more than the dynamic dispatch it saved.
struct ActiveMachine: Sendable {
    /// The mode whose machine lives.
    let kind: TouchMode
    // Exactly the one of `kind` is set, by the initialisers; the pipeline changes it in place.
    var touchscreenMode: TouchscreenMode?
    var touchpadMode: TouchpadMode?
    var presenterMode: PresenterMode?
    var penMode: PenMode?

    init(_ m: TouchscreenMode) { kind = .touchscreen; touchscreenMode = m }
    init(_ m: TouchpadMode) { kind = .touchpad; touchpadMode = m }
    init(_ m: PresenterMode) { kind = .presenter; presenterMode = m }
    init(_ m: PenMode) { kind = .pen; penMode = m }
}

extension ActiveMachine: ModeMachine {
    @inline(__always) var deadline: Instant? {
        mutating get {
            switch kind {
            case .touchscreen: return touchscreenMode!.deadline
            case .touchpad: return touchpadMode!.deadline
            case .presenter: return presenterMode!.deadline
            case .pen: return penMode!.deadline
            }
        }
    }

    var trace: TransitionTrace {
        switch kind {
        case .touchscreen: return touchscreenMode!.trace
        case .touchpad: return touchpadMode!.trace
        case .presenter: return presenterMode!.trace
        case .pen: return penMode!.trace
        }
    }

    mutating func setTracing(_ on: Bool) {
        switch kind {
        case .touchscreen: touchscreenMode!.setTracing(on)
        case .touchpad: touchpadMode!.setTracing(on)
        case .presenter: presenterMode!.setTracing(on)
        case .pen: penMode!.setTracing(on)
        }
    }

    mutating func clearTrace() {
        switch kind {
        case .touchscreen: touchscreenMode!.clearTrace()
        case .touchpad: touchpadMode!.clearTrace()
        case .presenter: presenterMode!.clearTrace()
        case .pen: penMode!.clearTrace()
        }
    }

    mutating func setOrientation(_ o: DeviceOrientation) {
        switch kind {
        case .touchscreen: touchscreenMode!.setOrientation(o)
        case .touchpad: touchpadMode!.setOrientation(o)
        case .presenter: presenterMode!.setOrientation(o)
        case .pen: penMode!.setOrientation(o)
        }
    }

    mutating func setSurface(_ s: SurfaceSize) {
        switch kind {
        case .touchscreen: touchscreenMode!.setSurface(s)
        case .touchpad: touchpadMode!.setSurface(s)
        case .presenter: presenterMode!.setSurface(s)
        case .pen: penMode!.setSurface(s)
        }
    }

    mutating func setMapping(_ mapping: ScreenMapping) {
        switch kind {
        case .touchscreen: touchscreenMode!.setMapping(mapping)
        case .touchpad: touchpadMode!.setMapping(mapping)
        case .presenter: presenterMode!.setMapping(mapping)
        case .pen: penMode!.setMapping(mapping)
        }
    }

    mutating func setKeymap(_ keymap: Keymap?) {
        switch kind {
        case .touchscreen: touchscreenMode!.setKeymap(keymap)
        case .touchpad: touchpadMode!.setKeymap(keymap)
        case .presenter: presenterMode!.setKeymap(keymap)
        case .pen: penMode!.setKeymap(keymap)
        }
    }

    mutating func moveRefusals(to gate: inout KeyGate) {
        switch kind {
        case .touchscreen: touchscreenMode!.moveRefusals(to: &gate)
        case .touchpad: touchpadMode!.moveRefusals(to: &gate)
        case .presenter: presenterMode!.moveRefusals(to: &gate)
        case .pen: penMode!.moveRefusals(to: &gate)
        }
    }

    mutating func hideLaser(into actions: inout [OutputAction]) {
        switch kind {
        case .touchscreen: touchscreenMode!.hideLaser(into: &actions)
        case .touchpad: touchpadMode!.hideLaser(into: &actions)
        case .presenter: presenterMode!.hideLaser(into: &actions)
        case .pen: penMode!.hideLaser(into: &actions)
        }
    }

    mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {
        switch kind {
        case .touchscreen: touchscreenMode!.handleTimer(at: now, into: &actions)
        case .touchpad: touchpadMode!.handleTimer(at: now, into: &actions)
        case .presenter: presenterMode!.handleTimer(at: now, into: &actions)
        case .pen: penMode!.handleTimer(at: now, into: &actions)
        }
    }

    mutating func releaseAll(at now: Instant, into actions: inout [OutputAction]) {
        switch kind {
        case .touchscreen: touchscreenMode!.releaseAll(at: now, into: &actions)
        case .touchpad: touchpadMode!.releaseAll(at: now, into: &actions)
        case .presenter: presenterMode!.releaseAll(at: now, into: &actions)
        case .pen: penMode!.releaseAll(at: now, into: &actions)
        }
    }

    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction]) {
        switch kind {
        case .touchscreen: touchscreenMode!.pen(report, turnedBy: o, mapping: mapping, at: now, into: &actions)
        case .touchpad: touchpadMode!.pen(report, turnedBy: o, mapping: mapping, at: now, into: &actions)
        case .presenter: presenterMode!.pen(report, turnedBy: o, mapping: mapping, at: now, into: &actions)
        case .pen: penMode!.pen(report, turnedBy: o, mapping: mapping, at: now, into: &actions)
        }
    }

    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool {
        switch kind {
        case .touchscreen: return touchscreenMode!.presenterCommand(command, at: now, into: &actions)
        case .touchpad: return touchpadMode!.presenterCommand(command, at: now, into: &actions)
        case .presenter: return presenterMode!.presenterCommand(command, at: now, into: &actions)
        case .pen: return penMode!.presenterCommand(command, at: now, into: &actions)
        }
    }
}

extension TouchscreenMode: ModeMachine {
    var deadline: Instant? { nil }
    var trace: TransitionTrace { TransitionTrace() }
    mutating func setTracing(_ on: Bool) {}
    mutating func clearTrace() {}
    /// It gets turned points (`setMapping` for the rest).
    mutating func setOrientation(_ o: DeviceOrientation) {}
    mutating func setSurface(_ s: SurfaceSize) {}
    /// It presses no key.
    mutating func setKeymap(_ keymap: Keymap?) {}
    mutating func moveRefusals(to gate: inout KeyGate) {}
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction]) {}
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool { false }
    mutating func hideLaser(into actions: inout [OutputAction]) {}
    mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {}
    mutating func releaseAll(at now: Instant, into actions: inout [OutputAction]) { releaseAll(into: &actions) }
}

extension TouchpadMode: ModeMachine {
    mutating func setTracing(_ on: Bool) { trace.setEnabled(on) }
    mutating func clearTrace() { trace.removeAll() }
    mutating func setMapping(_ mapping: ScreenMapping) {}
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction]) {}
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool { false }
    mutating func hideLaser(into actions: inout [OutputAction]) {}
}

extension PresenterMode: ModeMachine {
    mutating func setTracing(_ on: Bool) { trace.setEnabled(on) }
    mutating func clearTrace() { trace.removeAll() }
    /// Its taps and swipes press the bindings' chords.
    mutating func setKeymap(_ keymap: Keymap?) { gate.setKeymap(keymap) }
    mutating func moveRefusals(to other: inout KeyGate) { gate.move(to: &other) }
    /// It gets pixels with each change.
    mutating func setMapping(_ mapping: ScreenMapping) {}
    /// The pen draws (pressure in the width) and its eraser erases.
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction]) {
        var pixel: PixelPoint? = nil
        if case .near(let s) = report { pixel = mapping.pixel(for: o.toUserView(s.devicePoint)) }
        pen(report, pixel: pixel, at: now, into: &actions)
    }
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool {
        perform(command, at: now, into: &actions)
        return true
    }
}

extension PenMode: ModeMachine {
    mutating func setTracing(_ on: Bool) { trace.setEnabled(on) }
    mutating func clearTrace() { trace.removeAll() }
    mutating func setSurface(_ s: SurfaceSize) {}
    /// It presses no key (the pen's buttons are pointer buttons).
    mutating func setKeymap(_ keymap: Keymap?) {}
    mutating func moveRefusals(to gate: inout KeyGate) {}
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction]) {
        handle(report, at: now, into: &actions)
    }
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool { false }
    mutating func hideLaser(into actions: inout [OutputAction]) {}
}
