// The portal output: the Bridge's input actions as libei events on the devices the compositor gave
// through the RemoteDesktop portal. It keeps what it holds (buttons, keys, touches), so every exit path
// releases it.
import TouchCore
import TouchOutput

/// What the portal output sends on: libei's devices (`EIContext`), or the property test's model. Each
/// call returns false when no resumed device has the capability (nothing was sent).
public protocol EmulatedDevices: AnyObject {
    /// What the resumed devices can do now.
    var usable: EICapabilities { get }
    /// The absolute devices' regions, in the desktop's logical pixels (empty: unknown).
    var regions: [PixelRect] { get }
    func pointerMotion(dx: Double, dy: Double) -> Bool
    func pointerMotionAbsolute(x: Double, y: Double) -> Bool
    func button(_ code: UInt32, pressed: Bool) -> Bool
    /// Smooth scrolling, in logical pixels.
    func scroll(dx: Double, dy: Double) -> Bool
    /// Wheel clicks, 120 a click.
    func scrollDiscrete(dx: Int32, dy: Int32) -> Bool
    func key(_ code: UInt32, pressed: Bool) -> Bool
    func touch(slot: UInt8, x: Double, y: Double) -> Bool
    func touchUp(slot: UInt8) -> Bool
    /// Ends the frame of every device that changed.
    func frame()
}

/// The capabilities of the portal output, from what the compositor offered: real touches when it gave
/// a touch device, smooth scrolling when it gave scrolling; never a pen tablet, a native touchpad or a
/// pointer per finger (libei has none).
public func portalCapabilities(offered: EICapabilities) -> OutputCapabilities {
    OutputCapabilities(realTouches: offered.contains(.touch), penTablet: false, nativeTouchpad: false,
                       smoothScroll: offered.contains(.scroll), extraPointers: false)
}

/// The portal's input output. Not thread-safe: owned by the loop.
///
/// - `moveBy`: relative motion; `moveTo`: absolute motion, kept inside the compositor's regions.
/// - `button`: buttons 1–3, 8, 9 as evdev buttons; 4–7 one discrete wheel click each (on the press).
/// - `smoothScroll`: a scroll delta, `pixelsPerClick` pixels a click (the action counts 1/120 of a click).
/// - `key`, `type`: evdev key codes by the desktop's keymap (`setKeymap`, as uinput), Shift and AltGr
///   around them (`KeyPresses`); a `type` no key makes goes to the typist (the desktop), as on uinput.
/// - `touch`: one libei touch per finger, in the desktop's logical pixels.
/// - not performed, each a failure: `padContact`, `pen`, `extraPointerMove`, `extraPointerButton` (the
///   capabilities say none of them, so the Bridge does not make them).
public final class PortalOutput: InputOutput {
    private let devices: any EmulatedDevices
    /// The pointer buttons held.
    public private(set) var pressedButtons = PressedButtons()
    public private(set) var keys = KeyPresses()
    /// Touch slots down (bit = slot).
    public private(set) var touching: UInt16 = 0
    private var keymap: Keymap?
    private var keyEvents: [KeyPresses.Event] = []
    private var closed = false

    public var name: String { "portal" }
    public var keyboardName: String? { nil }

    public init(devices: any EmulatedDevices) {
        self.devices = devices
        keyEvents.reserveCapacity(8)
    }

    public func setKeymap(_ keymap: Keymap) { self.keymap = keymap }
    public func setScreen(width: Int32, height: Int32) throws(OutputError) {}

    private static func failure(_ what: String) -> OutputError { OutputError(origin: "portal", message: what, kind: 5) }

    /// The pixels of smooth scrolling that make one wheel click (Mutter 48: a delta of 5 is half a click).
    static let pixelsPerClick = 10.0

    /// The evdev code of X button `n`, nil for the wheel (4–7) and buttons no mouse has.
    static func evdevButton(_ n: UInt8) -> UInt32? {
        switch n {
        case 1: return 0x110  // BTN_LEFT
        case 2: return 0x112  // BTN_MIDDLE
        case 3: return 0x111  // BTN_RIGHT
        case 8: return 0x113  // BTN_SIDE
        case 9: return 0x114  // BTN_EXTRA
        default: return nil
        }
    }

    /// `p` kept inside the region that holds it, else moved onto the nearest region's edge.
    static func clamp(_ p: PixelPoint, into regions: [PixelRect]) -> (Double, Double) {
        guard !regions.isEmpty else { return (Double(p.x), Double(p.y)) }
        var best: (Double, Double) = (0, 0)
        var bestDistance = Int64.max
        for r in regions {
            let x = min(max(p.x, r.x), r.x + max(r.width, 1) - 1)
            let y = min(max(p.y, r.y), r.y + max(r.height, 1) - 1)
            let d = Int64(x - p.x) * Int64(x - p.x) + Int64(y - p.y) * Int64(y - p.y)
            if d < bestDistance { (best, bestDistance) = ((Double(x), Double(y)), d) }
            if d == 0 { break }
        }
        return best
    }

    public func perform(_ actions: [OutputAction], typist: any CharacterTypist) -> [OutputError] {
        var errors: [OutputError] = []
        guard !actions.isEmpty else { return errors }
        func sent(_ ok: Bool, _ what: @autoclosure () -> String) {
            if !ok { errors.append(Self.failure("no device for \(what()) (the compositor paused or removed it, or did not offer it)")) }
        }
        let keymap = self.keymap ?? Keymap.usFallback
        var changed = false
        for action in actions {
            switch action {
            case .moveBy(let dx, let dy):
                sent(devices.pointerMotion(dx: Double(dx), dy: Double(dy)), "relative motion")
                changed = true
            case .moveTo(let p):
                let (x, y) = Self.clamp(p, into: devices.regions)
                sent(devices.pointerMotionAbsolute(x: x, y: y), "absolute motion")
                changed = true
            case .button(let button, let pressed):
                changed = true
                let n = button.rawValue
                if (4...7).contains(n) {
                    guard pressed else { continue }
                    let (dx, dy): (Int32, Int32) = n == 4 ? (0, -120) : n == 5 ? (0, 120) : n == 6 ? (-120, 0) : (120, 0)
                    sent(devices.scrollDiscrete(dx: dx, dy: dy), "the wheel")
                    continue
                }
                guard let code = Self.evdevButton(n) else { continue }
                // A press of a held button or a release of a free one is not sent twice.
                if pressed == pressedButtons.holds(button) { continue }
                let ok = devices.button(code, pressed: pressed)
                // A release that finds no device is forgotten all the same (the compositor ended it).
                if ok || !pressed { pressedButtons.record(button, pressed: pressed) }
                sent(ok, "\(button)")
            case .smoothScroll(let dx, let dy):
                // Smooth scrolling as a delta (Mutter drops discrete values below a click): one click is
                // `pixelsPerClick` pixels, as Mutter turns a delta back into clicks.
                sent(devices.scroll(dx: Double(dx) * Self.pixelsPerClick / 120, dy: Double(dy) * Self.pixelsPerClick / 120), "scrolling")
                changed = true
            case .key(_, true) where !devices.usable.contains(.keyboard), .type where !devices.usable.contains(.keyboard):
                // Nothing is recorded as held that no device pressed.
                sent(false, "the keyboard")
            case .key(let keysym, let pressed):
                keyEvents.removeAll(keepingCapacity: true)
                guard keys.key(keysym, pressed: pressed, keymap: keymap, into: &keyEvents) else {
                    if pressed { errors.append(Self.failure("no key on the keymap makes \(KeyNames.name(of: keysym)): not pressed")) }
                    continue
                }
                for e in keyEvents { sent(devices.key(UInt32(e.code), pressed: e.pressed), "the keyboard") }
                changed = true
            case .type(let keysym):
                keyEvents.removeAll(keepingCapacity: true)
                if !keys.holds(keysym), keys.key(keysym, pressed: true, keymap: keymap, into: &keyEvents) {
                    _ = keys.key(keysym, pressed: false, keymap: keymap, into: &keyEvents)
                    for e in keyEvents { sent(devices.key(UInt32(e.code), pressed: e.pressed), "the keyboard") }
                    changed = true
                } else {
                    if changed { devices.frame(); changed = false }
                    do throws(OutputError) { try typist.typeLacking(keysym) } catch { errors.append(error) }
                }
            case .restoreKeymap:
                do throws(OutputError) { try typist.restoreKeymap() } catch { errors.append(error) }
            case .touch(let slot, let phase, let at):
                guard slot < 16 else { continue }
                let bit = UInt16(1) << UInt16(slot)
                switch phase {
                case .began, .moved:
                    let (x, y) = Self.clamp(at, into: devices.regions)
                    if devices.touch(slot: slot, x: x, y: y) { touching |= bit } else { sent(false, "touch") }
                case .ended, .cancelled:
                    if touching & bit != 0 { _ = devices.touchUp(slot: slot) }
                    touching &= ~bit
                }
                changed = true
            case .overlay:
                continue
            case .padContact, .pen, .extraPointerMove, .extraPointerButton:
                errors.append(Self.failure("no native touchpad, pen tablet or extra pointers through the portal: \(action) not performed"))
            }
        }
        if changed { devices.frame() }
        return errors
    }

    public var held: [String] {
        var held: [String] = []
        if touching != 0 { held.append("touches 0x\(String(touching, radix: 16))") }
        for button in pressedButtons.all { held.append(button.description) }
        for code in keys.codes { held.append("evdev key \(code)") }
        return held
    }

    /// Lifts every touch, releases every button and key, each even when another finds no device; what
    /// could not be sent is forgotten all the same (the compositor ends what a paused or removed device
    /// held). One frame at the end.
    public func releaseAll() -> (released: [String], errors: [OutputError]) {
        let released = held
        var errors: [OutputError] = []
        for slot in UInt8(0)..<16 where touching & (UInt16(1) << UInt16(slot)) != 0 { _ = devices.touchUp(slot: slot) }
        touching = 0
        for button in pressedButtons.all {
            if let code = Self.evdevButton(button.rawValue), !devices.button(code, pressed: false) {
                errors.append(Self.failure("no device to release \(button) on"))
            }
        }
        pressedButtons.removeAll()
        if !keys.held.isEmpty {
            keyEvents.removeAll(keepingCapacity: true)
            keys.releaseAll(into: &keyEvents)
            for e in keyEvents where !devices.key(UInt32(e.code), pressed: e.pressed) {
                errors.append(Self.failure("no device to release evdev key \(e.code) on"))
            }
        }
        if !released.isEmpty { devices.frame() }
        return (released, errors)
    }

    /// Releases what is held. The devices are the backend's (closed with it). Idempotent.
    public func close() -> (removed: [String], errors: [OutputError]) {
        guard !closed else { return ([], []) }
        closed = true
        return ([], releaseAll().errors)
    }
}
