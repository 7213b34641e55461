// Small builders for packets and times, so each test reads as the touch sequence it describes.
import TouchCore

func pt(_ x: UInt16, _ y: UInt16) -> DevicePoint { DevicePoint(rawX: x, rawY: y) }

/// Slot `slot` is at (x, y).
func at(_ slot: UInt8, _ x: UInt16, _ y: UInt16) -> TouchEvent {
    TouchEvent(slot: slot, update: .position(pt(x, y)))
}
func ended(_ slot: UInt8) -> TouchEvent { TouchEvent(slot: slot, update: .ended) }
func cancelled(_ slot: UInt8) -> TouchEvent { TouchEvent(slot: slot, update: .cancelled) }

/// A `TouchState` with the given slots set and every other slot free.
func state(_ slots: [Int: SlotState] = [:]) -> TouchState {
    var s = TouchState()
    for (slot, value) in slots { s[slot] = value }
    return s
}

/// A packet with these events, optionally a `TouchState` and an orientation.
func packet(_ events: TouchEvent..., state: TouchState? = nil, orientation: DeviceOrientation? = nil) -> TouchPacket {
    var p = TouchPacket()
    p.events.append(contentsOf: events)
    p.hasTouches = !events.isEmpty
    p.state = state
    p.orientation = orientation
    return p
}

func ms(_ n: UInt64) -> Instant { .milliseconds(n) }

extension ContactTracker {
    /// Handles `packet` and returns only the changes it caused.
    mutating func feed(_ packet: TouchPacket, at now: Instant = ms(0)) -> [ContactChange] {
        var out: [ContactChange] = []
        handle(packet, at: now, into: &out)
        return out
    }
}

extension TouchscreenMode {
    mutating func feed(_ changes: ContactChange..., at now: Instant = ms(0)) -> [OutputAction] {
        var out: [OutputAction] = []
        for c in changes { handle(c, at: now, into: &out) }
        return out
    }
}

extension TouchPipeline {
    mutating func feed(_ packet: TouchPacket, at now: Instant) -> [OutputAction] {
        var out: [OutputAction] = []
        handle(packet, at: now, into: &out)
        return out
    }
    mutating func tick(at now: Instant) -> [OutputAction] {
        var out: [OutputAction] = []
        handleTimer(at: now, into: &out)
        return out
    }
    mutating func releaseEverything() -> [OutputAction] {
        var out: [OutputAction] = []
        releaseAll(into: &out)
        return out
    }
}

let press = OutputAction.button(.left, pressed: true)
let release = OutputAction.button(.left, pressed: false)
func move(_ x: Int32, _ y: Int32) -> OutputAction { .moveTo(PixelPoint(x: x, y: y)) }
