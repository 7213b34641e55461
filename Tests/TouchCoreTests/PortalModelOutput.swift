// The portal output (TouchPortal's real `PortalOutput`) as one of the random-sequence test's model
// outputs: the Bridge configured from the capabilities the compositor's devices give (a random set of
// what libei can offer), the output performing every step's actions on a model of libei's devices, the
// compositor pausing and resuming them at random (a paused device ends what it held, as EIS does). At the
// end nothing may be held, on the output or on the devices, and the output must never have been handed
// an action its capabilities say it cannot perform.
import TouchCore
import TouchTestSupport
import TouchOutput
import TouchPortal

/// libei's devices as the compositor sees them: what is pressed and touched, and whether they are
/// paused. A paused device takes nothing (the call returns false) and ends what it held.
final class ModelEIDevices: EmulatedDevices {
    let offered: EICapabilities
    var paused = false
    var buttons: Set<UInt32> = []
    var keys: Set<UInt32> = []
    var touches: Set<UInt8> = []
    /// What the devices were sent that they should not have been: a press of what is pressed, a release
    /// of what is not, a touch moved that never began.
    var violation: String?
    private var rng: SplitMix64
    private let pausePercent: Int
    /// Whether the compositor pauses the devices at all in this sequence.
    var pauses: Bool { pausePercent > 0 }

    init(offered: EICapabilities, seed: UInt64, pausePercent: Int) {
        self.offered = offered
        rng = SplitMix64(seed: seed ^ 0x5eed_e1)
        self.pausePercent = pausePercent
    }

    var usable: EICapabilities { paused ? [] : offered }
    var regions: [PixelRect] { [PixelRect(x: 0, y: 0, width: 1920, height: 1080)] }

    /// Before each call: the compositor may pause the devices (ending what they hold) or resume them.
    private func weather() {
        guard pausePercent > 0, Int.random(in: 0..<100, using: &rng) < pausePercent else { return }
        paused.toggle()
        if paused {
            buttons = []
            keys = []
            touches = []
        }
    }

    private func accepts(_ capability: EICapabilities) -> Bool {
        weather()
        return usable.contains(capability)
    }

    func pointerMotion(dx: Double, dy: Double) -> Bool { accepts(.pointer) }
    func pointerMotionAbsolute(x: Double, y: Double) -> Bool {
        if !(0..<1920).contains(x) || !(0..<1080).contains(y) { violation = violation ?? "absolute motion outside the region: \(x),\(y)" }
        return accepts(.pointerAbsolute)
    }
    func button(_ code: UInt32, pressed: Bool) -> Bool {
        guard accepts(.button) else { return false }
        if pressed, !buttons.insert(code).inserted { violation = violation ?? "button \(code) pressed twice" }
        if !pressed { buttons.remove(code) }
        return true
    }
    func scrollDiscrete(dx: Int32, dy: Int32) -> Bool { accepts(.scroll) }
    func scroll(dx: Double, dy: Double) -> Bool { accepts(.scroll) }
    func key(_ code: UInt32, pressed: Bool) -> Bool {
        guard accepts(.keyboard) else { return false }
        if pressed { keys.insert(code) } else { keys.remove(code) }
        return true
    }
    func touch(slot: UInt8, x: Double, y: Double) -> Bool {
        guard accepts(.touch) else { return false }
        touches.insert(slot)
        return true
    }
    func touchUp(slot: UInt8) -> Bool {
        guard accepts(.touch) else { return false }
        touches.remove(slot)
        return true
    }
    func frame() {}

    var holds: String? {
        buttons.isEmpty && keys.isEmpty && touches.isEmpty ? nil : "libei's devices hold buttons \(buttons.sorted()), keys \(keys.sorted()), touches \(touches.sorted())"
    }
}

/// A desktop that types nothing no key makes (GNOME's and KDE's Wayland sessions have no way to).
final class RefusingTypist: CharacterTypist {
    func typeLacking(_ keysym: KeySym) throws(OutputError) {
        throw OutputError(origin: "Wayland", message: "no key makes \(keysym)", kind: 6)
    }
    func restoreKeymap() throws(OutputError) {}
}

/// The portal output in one sequence: made when the sequence's roll picks it.
struct PortalModel {
    let devices: ModelEIDevices
    let output: PortalOutput
    let typist = RefusingTypist()
    var violation: String?

    /// The capabilities the sequence's compositor offers: pointer and buttons always (the portal's
    /// pointer type), the rest by the roll.
    init(seed: UInt64, failPercent: Int) {
        var rng = SplitMix64(seed: seed ^ 0x90_27a1)
        var offered: EICapabilities = [.pointer, .button]
        for extra in [EICapabilities.pointerAbsolute, .scroll, .keyboard, .touch] where Bool.random(using: &rng) { offered.insert(extra) }
        devices = ModelEIDevices(offered: offered, seed: seed, pausePercent: failPercent / 3)
        output = PortalOutput(devices: devices)
    }

    var capabilities: OutputCapabilities { portalCapabilities(offered: devices.offered) }

    /// Performs one step's actions; an action the capabilities rule out is a violation.
    mutating func perform(_ actions: [OutputAction]) {
        for error in output.perform(actions, typist: typist) {
            // Touches and smooth scrolling come only when the devices offer them: with no pause, a
            // device missing for them means the capabilities lied.
            let ruledOut = error.message.contains("not performed")
                || !devices.pauses && (error.message.contains("no device for touch") || error.message.contains("no device for scrolling"))
            if ruledOut { violation = violation ?? "the portal output was handed what its capabilities rule out: \(error.message)" }
        }
        if let v = devices.violation { violation = violation ?? v }
    }

    /// After every source is gone: nothing held on the output or the devices.
    var leftBehind: String? {
        if let violation { return violation }
        if !output.held.isEmpty { return "the portal output still holds \(output.held)" }
        return devices.holds
    }
}
