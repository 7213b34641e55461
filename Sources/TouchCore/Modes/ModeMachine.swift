/// What every mode machine answers to, so that `TouchPipeline` holds the mode in use as one value and
/// calls it directly. Each mode's conformance below says, in one place, what the common calls mean for
/// it (a call that has no meaning for a mode is a written no-op there, never a default), and how it
/// takes the tracker's changes: the touchscreen in the user's view, the touchpad in the device frame,
/// the presenter in the device frame with the pixel under it, the pen not at all.
protocol ModeMachine: Sendable {
    /// When the machine's next timer is due (tap, kinetic tick, long press, laser trail), if any.
    var deadline: Instant? { get }
    /// Its transitions since the last `clearTrace()`, when tracing is on.
    var trace: TransitionTrace { get }
    mutating func setTracing(_ on: Bool)
    mutating func clearTrace()
    mutating func setOrientation(_ o: DeviceOrientation)
    mutating func setSurface(_ s: SurfaceSize)
    mutating func setMapping(_ mapping: ScreenMapping)
    /// One change of the tracker (device frame); `o` and `mapping` are the pipeline's.
    mutating func handle(_ change: ContactChange, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                         at now: Instant, into actions: inout [OutputAction])
    /// One report of the page's pen.
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction])
    /// A Slides panel button; false when the mode has no use for it.
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool
    /// The laser dot and its trail go (a mode switch).
    mutating func hideLaser(into actions: inout [OutputAction])
    mutating func handleTimer(at now: Instant, into actions: inout [OutputAction])
    mutating func releaseAll(at now: Instant, into actions: inout [OutputAction])
}

extension TouchscreenMode: ModeMachine {
    var deadline: Instant? { nil }
    var trace: TransitionTrace { TransitionTrace() }
    mutating func setTracing(_ on: Bool) {}
    mutating func clearTrace() {}
    /// It gets turned points (`setMapping` for the rest).
    mutating func setOrientation(_ o: DeviceOrientation) {}
    mutating func setSurface(_ s: SurfaceSize) {}
    mutating func handle(_ change: ContactChange, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                         at now: Instant, into actions: inout [OutputAction]) {
        handle(TouchPipeline.turned(change, o), at: now, into: &actions)
    }
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
    /// Device-frame points: the touchpad turns its motion itself (`setOrientation`).
    mutating func handle(_ change: ContactChange, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                         at now: Instant, into actions: inout [OutputAction]) {
        handle(change, at: now, into: &actions)
    }
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction]) {}
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool { false }
    mutating func hideLaser(into actions: inout [OutputAction]) {}
}

extension PresenterMode: ModeMachine {
    mutating func setTracing(_ on: Bool) { trace.setEnabled(on) }
    mutating func clearTrace() { trace.removeAll() }
    /// It gets pixels with each change.
    mutating func setMapping(_ mapping: ScreenMapping) {}
    /// Device-frame points for the gestures (turned like the touchpad's), the pixel through the
    /// absolute mapping for the laser.
    mutating func handle(_ change: ContactChange, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                         at now: Instant, into actions: inout [OutputAction]) {
        handle(change, pixel: TouchPipeline.pixel(of: change, o, mapping), at: now, into: &actions)
    }
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
    /// Fingers do nothing in pen mode: the page's pen is the input (a palm on the glass is not).
    mutating func handle(_ change: ContactChange, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                         at now: Instant, into actions: inout [OutputAction]) {}
    mutating func pen(_ report: PenReport, turnedBy o: DeviceOrientation, mapping: ScreenMapping,
                      at now: Instant, into actions: inout [OutputAction]) {
        handle(report, at: now, into: &actions)
    }
    mutating func presenterCommand(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool { false }
    mutating func hideLaser(into actions: inout [OutputAction]) {}
}
