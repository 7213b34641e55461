// What every fuzz target checks once a core has handled what the decoder accepted (compiled into each
// target by scripts/fuzz.sh).
import TouchCore

/// The screen every fuzz target maps onto.
let fuzzScreen = ScreenMapping(x: 0, y: 0, width: 1920, height: 1080)

/// Every decoded event names a slot 0–9 and, for a position, coordinates of 12 bits.
func checkEventsInRange(_ events: [TouchEvent]) {
    for event in events {
        precondition(event.slot <= 9, "slot out of range")
        if case .position(let p) = event.update { precondition(p.rawX <= 4095 && p.rawY <= 4095, "coordinate out of range") }
    }
}

/// Releases everything `core` holds, into `actions` (which holds what the core produced for this input),
/// then checks the promise: every absolute move stayed on the screen, no button is held, no contact is left.
func checkNothingHeldAfterReleaseAll(_ core: inout TouchPipeline, actions: inout [OutputAction]) {
    core.releaseAll(into: &actions)
    var held: UInt32 = 0
    for action in actions {
        switch action {
        case .button(let b, let pressed):
            let bit = UInt32(1) << UInt32(b.rawValue & 31)
            if pressed { held |= bit } else { held &= ~bit }
        case .moveTo(let p):
            precondition(p.x >= 0 && p.x < fuzzScreen.width && p.y >= 0 && p.y < fuzzScreen.height, "a move off the screen")
        default:
            break
        }
    }
    precondition(held == 0, "a button is held after releaseAll")
    precondition(!core.hasContacts, "contacts left after releaseAll")
}
