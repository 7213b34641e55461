// A touchpad driven through the whole core (packets in, actions out) with a manual clock.
import TouchCore

/// The default surface: 64.95 × 140.73 mm, so one raw step is 0.01586 mm across and 0.03437 mm down.
let surface = SurfaceSize.default

/// The raw X (across the portrait phone) `mm` millimetres right of the centre.
func rawX(_ mm: Double) -> UInt16 { UInt16((2047 + mm / surface.mmPerRawX).rounded()) }
/// The raw Y `mm` millimetres below the centre.
func rawY(_ mm: Double) -> UInt16 { UInt16((2047 + mm / surface.mmPerRawY).rounded()) }

/// Slot `slot` at (x, y) mm from the centre of the portrait phone.
func mm(_ slot: UInt8, _ x: Double, _ y: Double) -> TouchEvent { at(slot, rawX(x), rawY(y)) }

let leftPress = OutputAction.button(.left, pressed: true)
let leftRelease = OutputAction.button(.left, pressed: false)
func click(_ b: PointerButton) -> [OutputAction] { [.button(b, pressed: true), .button(b, pressed: false)] }

/// The core in touchpad mode with a manual clock. `send` delivers a packet at the current time, `wait`
/// moves the clock and fires the core's timer at each deadline on the way, as the shell does.
struct Pad {
    var core: TouchPipeline
    var now: UInt64 = 1_000
    var orientation: DeviceOrientation? = nil

    init(mode: TouchMode = .touchpad, presenter: PresenterSettings = PresenterSettings(),
         _ configure: (inout TouchpadSettings) -> Void = { _ in }) {
        var settings = TouchpadSettings()
        configure(&settings)
        core = TouchPipeline(configuration: .init(
            screen: ScreenMapping(width: 1920, height: 1080), idleRelease: .seconds(10),
            mode: mode, touchpad: settings, presenter: presenter))
    }

    /// Delivers one packet with these events now.
    mutating func send(_ events: TouchEvent...) -> [OutputAction] {
        var p = TouchPacket()
        p.events.append(contentsOf: events)
        p.hasTouches = true
        p.orientation = orientation
        var out: [OutputAction] = []
        core.handle(p, at: .milliseconds(now), into: &out)
        return out
    }

    /// Moves the clock by `ms`, firing every deadline that passes (at the deadline).
    mutating func wait(_ ms: UInt64) -> [OutputAction] {
        let target = now + ms
        var out: [OutputAction] = []
        while let d = core.nextDeadline, d <= .milliseconds(target) {
            core.handleTimer(at: d, into: &out)
            now = max(now, d.nanoseconds / 1_000_000)
        }
        now = target
        return out
    }

    /// Sends `steps` packets `intervalMS` apart, moving slot 0 (or `slot`) from (x0, y0) by (dx, dy) mm in
    /// equal steps; returns everything emitted.
    mutating func stroke(_ slot: UInt8 = 0, from x0: Double, _ y0: Double, by dx: Double, _ dy: Double,
                         steps: Int, intervalMS: UInt64 = 16) -> [OutputAction] {
        var out: [OutputAction] = []
        for i in 1...steps {
            out += wait(intervalMS)
            let f = Double(i) / Double(steps)
            out += send(mm(slot, x0 + dx * f, y0 + dy * f))
        }
        return out
    }

    /// Like `stroke`, for several fingers moving together (each from its own start).
    mutating func multiStroke(_ starts: [(UInt8, Double, Double)], by dx: Double, _ dy: Double,
                              steps: Int, intervalMS: UInt64 = 16) -> [OutputAction] {
        var out: [OutputAction] = []
        for i in 1...steps {
            out += wait(intervalMS)
            let f = Double(i) / Double(steps)
            var p = TouchPacket()
            for (s, x, y) in starts { p.events.append(mm(s, x + dx * f, y + dy * f)) }
            p.hasTouches = true
            core.handle(p, at: .milliseconds(now), into: &out)
        }
        return out
    }
}

/// The total relative motion in `actions`.
func totalMotion(_ actions: [OutputAction]) -> (dx: Int, dy: Int) {
    var x = 0, y = 0
    for a in actions { if case .moveBy(let dx, let dy) = a { x += Int(dx); y += Int(dy) } }
    return (x, y)
}

/// Only the button and key actions, in order.
func clicks(_ actions: [OutputAction]) -> [OutputAction] {
    actions.filter { if case .moveBy = $0 { return false } else { return true } }
}

/// Whether every button and key pressed in `actions` is released again by the end, in order.
func balanced(_ actions: [OutputAction]) -> Bool {
    var buttons = Set<UInt8>(), keys = Set<UInt32>()
    for a in actions {
        switch a {
        case .button(let b, let down):
            if down { if !buttons.insert(b.rawValue).inserted { return false } }
            else if buttons.remove(b.rawValue) == nil { return false }
        case .key(let k, let down):
            if down { if !keys.insert(k.rawValue).inserted { return false } }
            else if keys.remove(k.rawValue) == nil { return false }
        default: break
        }
    }
    return buttons.isEmpty && keys.isEmpty
}
