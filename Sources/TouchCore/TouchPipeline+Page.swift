// What the web page asks of the pipeline beside touches: its live settings, the Slides panel's buttons
// and its pen.

extension TouchPipeline {
    /// One live setting of the page, at once: into the configuration (so a later mode switch keeps
    /// it) and, in touchpad mode, into a fresh touchpad machine. A setting that changes a value is an end
    /// path in every mode, as a mode switch is: whatever is held is released first, and the fingers and
    /// the pen still on the glass stay cancelled until they lift. One that changes nothing does nothing.
    /// Returns whether it changed a value.
    @discardableResult
    public mutating func tune(_ tuning: TouchpadTuning, into actions: inout [OutputAction]) -> Bool {
        var settings = configuration.touchpad
        tuning.apply(to: &settings)
        return setTouchpad(settings, into: &actions)
    }

    /// The tunable settings back to `base`'s (the page that tuned them went). Returns whether a value changed.
    @discardableResult
    public mutating func restoreTuning(from base: TouchpadSettings, into actions: inout [OutputAction]) -> Bool {
        var settings = configuration.touchpad
        TouchpadTuning.restore(&settings, from: base)
        return setTouchpad(settings, into: &actions)
    }

    mutating func setTouchpad(_ settings: TouchpadSettings, into actions: inout [OutputAction]) -> Bool {
        guard settings != configuration.touchpad else { return false }
        cancelEverything(at: latestTime, keepingCancelled: true, into: &actions)
        configuration.touchpad = settings
        if configuration.mode == .touchpad { active = makeMachine(.touchpad) }
        return true
    }

    /// A Slides panel button: the key buttons send their binding in any mode; the laser, draw and
    /// clear buttons act in presenter mode only. Returns whether the presenter machine handled it.
    public mutating func presenter(_ command: PresenterCommand, at now: Instant, into actions: inout [OutputAction]) -> Bool {
        latestTime = max(latestTime, now)
        if let chord = command.chord(in: configuration.presenter.keys) {
            gate.emit(chord, into: &actions)
            return false
        }
        return active.presenterCommand(command, at: now, into: &actions)
    }

    /// The page's pen: in pen mode the pen machine; in presenter mode it draws (pressure in the width)
    /// and its eraser erases; in the other modes it does nothing. Every report is a sign of life. A tip
    /// cancelled while down (`penTip`) is dropped here, in every mode, until it lifts.
    public mutating func pen(_ report: PenReport, at now: Instant, into actions: inout [OutputAction]) {
        latestTime = max(latestTime, now)
        if case .near(let s) = report, s.touching {
            if penTip == .cancelled { return }  // the cancelled tip is still on the glass: nothing until it lifts
            penTip = .down
        } else {
            penTip = .up
        }
        active.pen(report, turnedBy: effectiveOrientation, mapping: screenMapping, at: now, into: &actions)
    }
}
