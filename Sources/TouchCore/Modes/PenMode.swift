// Pen mode: a stylus on the page becomes a pen on the desktop, absolute on the chosen monitor.

/// One report of the page's pen (`pen …` over the WebSocket, parsed in TouchWire): where it is, how hard
/// it presses, how it leans, which end and buttons, and whether it touches the glass or hovers.
public struct PenSample: Hashable, Sendable, CustomStringConvertible {
    /// Where the tip is, as fractions of the page's pad (0 left/top edge … 1 right/bottom edge), as the user
    /// sees it (the page sends `Orientation` 1, like its touches).
    public var x: Double
    public var y: Double
    /// How hard the tip presses, 0…1 (Pointer Events `pressure`; 0 while hovering).
    public var pressure: Double
    /// How the pen leans, in degrees, -90…90 each (Pointer Events `tiltX`: towards +x is positive;
    /// `tiltY`: towards the user, +y, is positive).
    public var tiltX: Double
    public var tiltY: Double
    /// The pen's rotation about its own axis, degrees 0…359 (Pointer Events `twist`).
    public var twist: Double
    /// Whether the tip touches the glass (Pointer Events `buttons` bit 1); false: it hovers near it.
    public var touching: Bool
    /// Whether the barrel (side) button is held (`buttons` bit 2).
    public var barrel: Bool
    /// Whether it is the eraser end (`buttons` bit 32, or the pointer's `button` 5).
    public var eraser: Bool

    public init(x: Double, y: Double, pressure: Double = 0, tiltX: Double = 0, tiltY: Double = 0, twist: Double = 0,
                touching: Bool, barrel: Bool = false, eraser: Bool = false) {
        self.x = x
        self.y = y
        self.pressure = pressure
        self.tiltX = tiltX
        self.tiltY = tiltY
        self.twist = twist
        self.touching = touching
        self.barrel = barrel
        self.eraser = eraser
    }

    /// The point on the pad as a device point (0…4094 each way), for the same mapping as a finger.
    public var devicePoint: DevicePoint {
        func raw(_ f: Double) -> UInt16 {
            let clamped = f.isFinite ? Swift.min(1, Swift.max(0, f)) : 0
            return UInt16((clamped * Double(ScreenMapping.rawSpan)).rounded())
        }
        return DevicePoint(rawX: raw(x), rawY: raw(y))
    }

    public var description: String {
        "\(touching ? "touching" : "hovering") \(x),\(y) pressure \(pressure) tilt \(tiltX),\(tiltY) twist \(twist)"
            + (barrel ? " barrel" : "") + (eraser ? " eraser" : "")
    }
}

/// What the page says of its pen: near the glass (hovering or touching), or gone from it.
public enum PenReport: Hashable, Sendable {
    /// The pen is near or on the glass.
    case near(PenSample)
    /// The pen left the glass's range (or the page lost it: `pointercancel`, `pointerleave`).
    case away
}

/// The end of the pen in use: the tablet's tool.
public enum PenTool: Hashable, Sendable {
    case pen, eraser
}

/// The tablet pen's state, in the output's units: what a kernel tablet reports in one frame.
public struct PenFrame: Hashable, Sendable, CustomStringConvertible {
    /// The most pressure: 4095 (12 bits, as many tablets).
    public static let pressureMax: UInt16 = 4095
    /// The most tilt either way, in degrees.
    public static let tiltMax: Int8 = 90

    public var tool: PenTool
    /// Where the tip is, in screen pixels (through the mapping onto the chosen monitor).
    public var at: PixelPoint
    /// 0…`pressureMax`; 0 while not touching.
    public var pressure: UInt16
    /// Degrees, -90…90.
    public var tiltX: Int8
    public var tiltY: Int8
    /// Whether the tip touches (`BTN_TOUCH`).
    public var touching: Bool
    /// Whether the barrel button is held (`BTN_STYLUS`).
    public var barrel: Bool

    public init(tool: PenTool, at: PixelPoint, pressure: UInt16, tiltX: Int8, tiltY: Int8, touching: Bool, barrel: Bool) {
        self.tool = tool
        self.at = at
        self.pressure = pressure
        self.tiltX = tiltX
        self.tiltY = tiltY
        self.touching = touching
        self.barrel = barrel
    }

    public var description: String {
        "\(tool) \(at) pressure \(pressure) tilt \(tiltX),\(tiltY)\(touching ? " touching" : "")\(barrel ? " barrel" : "")"
    }
}

/// What the tablet pen does (`OutputAction.pen`): it is near with this state, or it left proximity.
public enum PenOutput: Hashable, Sendable, CustomStringConvertible {
    /// In proximity with this state (entering it when it was away; a new tool leaves with the old first).
    case at(PenFrame)
    /// Out of proximity: the tip lifted, the buttons released, the tool gone.
    case away

    public var description: String {
        switch self {
        case .at(let f): return "at \(f)"
        case .away: return "away"
        }
    }
}

/// The pen as a machine: where it is in its life and what it holds on the desktop.
///
/// Two outputs, chosen at start (`tablet`): the uinput backend's tablet (`.pen` actions: proximity,
/// pressure, tilt, the tool) or the main pointer (the pen is the pointer: button 1 while it
/// touches, button 3 while the barrel button is held; no pressure, no tilt, no eraser: the eraser end is
/// the pointer too).
///
/// ```
///              near(hover) / enter proximity              near(contact) / tip down (button 1)
///   ┌──────┐ ───────────────────────────────► ┌──────────┐ ─────────────────────────────► ┌──────────┐
///   │ away │                                  │ hovering │                                │ touching │
///   └──────┘ ◄─────────────────────────────── └──────────┘ ◄───────────────────────────── └──────────┘
///     ▲  │    away, silence, releaseAll / leave             near(hover) / tip up (release button 1)
///     │  └── near(contact) / enter proximity, tip down ──────────────────────────────────────► touching
///     └───── away, silence / tip up, buttons up, leave proximity ◄──────────────────────────── touching
///  hovering, touching ──releaseAll / tip up, buttons up, leave proximity──► away
///  hovering, touching ──near(other end) / leave proximity, enter with the other tool──► (same state)
/// ```
///
/// `hovering` and `touching` have a deadline: `silence` after the last report (the page repeats a still
/// pen's report every 100 ms), the pen is taken away. A pen cancelled by `releaseAll` (the page's
/// `release`, a mode switch, a setting) while on the glass is not this machine's to remember, since a mode
/// switch replaces it: `TouchPipeline` drops that tip's reports until it hovers or goes. Transitions are traced
/// as `pen: from → event → to` (`near`, `down`, `up`, `away`, `tool`, `silence`, `releaseAll`).
/// Allocates nothing.
public struct PenMode: Sendable {
    /// The thresholds, with their units.
    public struct Thresholds: Hashable, Sendable {
        /// How long a pen near the glass may send nothing before it is taken away: 500 ms, the same as
        /// fingers' silence (`--idle-release-ms`); the page repeats a still pen's report every 100 ms.
        public var silence: Interval = .milliseconds(500)
        /// A pressure change smaller than this many of `PenFrame.pressureMax` steps (out of 4095) with
        /// nothing else changed sends no frame: 8 (0.2 %), below what a hand can hold steady.
        public var pressureStep: UInt16 = 8
        public init(silence: Interval = .milliseconds(500)) { self.silence = silence }
    }

    /// Where the pen is.
    enum State: Equatable, Sendable {
        /// No pen near the glass: nothing shown, nothing held.
        case away
        /// Near the glass, not touching: in proximity (tablet) or moving the pointer (no tablet).
        case hovering(PenFrame, lastReport: Instant)
        /// On the glass: tip down (tablet), button 1 held (no tablet).
        case touching(PenFrame, lastReport: Instant)

        var name: StaticString {
            switch self {
            case .away: return "away"
            case .hovering: return "hovering"
            case .touching: return "touching"
            }
        }

        /// Which of the three it is (0…2), whatever its payload.
        var kind: Int {
            switch self {
            case .away: return 0
            case .hovering: return 1
            case .touching: return 2
            }
        }

        var frame: PenFrame? {
            switch self {
            case .hovering(let f, _), .touching(let f, _): return f
            case .away: return nil
            }
        }
    }

    public private(set) var thresholds: Thresholds
    /// Whether the output is the uinput tablet (else the main pointer).
    public let tablet: Bool
    private(set) var state = State.away
    /// Where pen points land (the same mapping as touchscreen mode's fingers).
    public private(set) var mapping: ScreenMapping
    /// How points are turned (the same as fingers': `--orientation`, else the page's portrait).
    private var orientation = DeviceOrientation.unknown
    /// Transitions, when enabled.
    public var trace = TransitionTrace()

    public init(mapping: ScreenMapping, tablet: Bool, thresholds: Thresholds = Thresholds()) {
        self.mapping = mapping
        self.tablet = tablet
        self.thresholds = thresholds
    }

    /// Whether a pen is near or on the glass.
    public var isNear: Bool { state.frame != nil }
    /// Whether the pen touches.
    public var isTouching: Bool { if case .touching = state { return true } else { return false } }
    /// The pen's last frame, while near.
    public var frame: PenFrame? { state.frame }

    public mutating func setMapping(_ mapping: ScreenMapping) { self.mapping = mapping }
    public mutating func setOrientation(_ o: DeviceOrientation) { orientation = o }

    /// When `handleTimer` must be called: the silence deadline while the pen is near.
    public var deadline: Instant? {
        switch state {
        case .hovering(_, let t), .touching(_, let t): return t + thresholds.silence
        case .away: return nil
        }
    }

    /// The frame a sample makes, in output units.
    public func frame(for s: PenSample) -> PenFrame {
        func tilt(_ d: Double) -> Int8 {
            guard d.isFinite else { return 0 }
            return Int8(Swift.max(-Double(PenFrame.tiltMax), Swift.min(Double(PenFrame.tiltMax), d.rounded())))
        }
        let p = s.pressure.isFinite ? Swift.min(1, Swift.max(0, s.pressure)) : 0
        return PenFrame(tool: s.eraser ? .eraser : .pen, at: mapping.pixel(for: orientation.toUserView(s.devicePoint)),
                        pressure: s.touching ? UInt16((p * Double(PenFrame.pressureMax)).rounded()) : 0,
                        tiltX: tilt(s.tiltX), tiltY: tilt(s.tiltY), touching: s.touching, barrel: s.barrel)
    }

    /// One report of the page's pen at `now`.
    public mutating func handle(_ report: PenReport, at now: Instant, into actions: inout [OutputAction]) {
        let from = state
        let event: StaticString
        switch report {
        case .away:
            event = "away"
            leave(into: &actions)
            state = .away
        case .near(let sample):
            var new = frame(for: sample)
            switch state {
            case .away:
                event = new.touching ? "down" : "near"
                enter(new, into: &actions)
            case .hovering(let old, _), .touching(let old, _):
                if old.tool != new.tool {
                    event = "tool"
                    leave(into: &actions)
                    enter(new, into: &actions)
                } else {
                    event = new.touching == old.touching ? "move" : (new.touching ? "down" : "up")
                    new = change(from: old, to: new, into: &actions)
                }
            }
            state = new.touching ? .touching(new, lastReport: now) : .hovering(new, lastReport: now)
        }
        if from.kind != state.kind { trace.record("pen", from.name, event, state.name, at: now) }
    }

    /// The silence deadline passed (early calls do nothing): the pen is taken away.
    public mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {
        guard let d = deadline, now >= d else { return }
        trace.record("pen", state.name, "silence", "away", at: now)
        leave(into: &actions)
        state = .away
    }

    /// Everything released (the page's `release`, a mode switch, a setting, silence, shutdown): the pen
    /// leaves proximity. (A tip still on the glass is kept cancelled by `TouchPipeline` until it lifts.)
    public mutating func releaseAll(at now: Instant, into actions: inout [OutputAction]) {
        guard state.frame != nil else { return }
        leave(into: &actions)
        trace.record("pen", state.name, "releaseAll", "away", at: now)
        state = .away
    }

    // MARK: output

    private func enter(_ f: PenFrame, into actions: inout [OutputAction]) {
        if tablet {
            actions.append(.pen(.at(f)))
        } else {
            actions.append(.moveTo(f.at))
            if f.touching { actions.append(.button(.left, pressed: true)) }
            if f.barrel { actions.append(.button(.right, pressed: true)) }
        }
    }

    /// The output follows the pen from `old` to `new`; returns the frame the output now has (`old` when a
    /// pressure wobble alone was not worth a frame).
    private func change(from old: PenFrame, to new: PenFrame, into actions: inout [OutputAction]) -> PenFrame {
        if tablet {
            let wobble = new.pressure > old.pressure ? new.pressure - old.pressure : old.pressure - new.pressure
            if new.touching == old.touching && new.at == old.at && new.tiltX == old.tiltX && new.tiltY == old.tiltY
                && new.barrel == old.barrel && wobble < thresholds.pressureStep {
                return old
            }
            actions.append(.pen(.at(new)))
        } else {
            if new.at != old.at { actions.append(.moveTo(new.at)) }
            if new.touching != old.touching { actions.append(.button(.left, pressed: new.touching)) }
            if new.barrel != old.barrel { actions.append(.button(.right, pressed: new.barrel)) }
        }
        return new
    }

    private func leave(into actions: inout [OutputAction]) {
        guard let f = state.frame else { return }
        if tablet {
            actions.append(.pen(.away))
        } else {
            if f.touching { actions.append(.button(.left, pressed: false)) }
            if f.barrel { actions.append(.button(.right, pressed: false)) }
        }
    }
}
