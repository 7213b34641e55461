import ArgumentParser
import TouchCore
import TouchWire

/// The options of touchpad mode; `settings()` turns them into the core's `TouchpadSettings`, with the
/// defaults for what was not given. (The config file's values arrive as options too: see `ConfigFile`.)
struct TouchpadOptions: ParsableArguments {
    @Option(name: .customLong("surface-diagonal-mm"), help: ArgumentHelp(
        "Diagonal of the phone's touch surface in millimetres (default: 155, a 6.1-inch phone).",
        valueName: "mm"))
    var surfaceDiagonalMM: Double?

    @Option(help: ArgumentHelp(
        "Pointer acceleration in touchpad mode: adaptive (slow motion precise, fast motion far) or flat (default: adaptive).",
        valueName: "profile"))
    var accel: AccelProfile?

    @Option(help: ArgumentHelp(
        "Pointer speed in touchpad mode, from -1 (slowest) to 1 (fastest) (default: 0).",
        valueName: "speed"))
    var speed: Double?

    @Option(help: ArgumentHelp(
        "Smooth motion that arrives in bursts (touchpad pointer and scrolling, the presenter's laser): auto (play bursty moves out on a steady 120 Hz tick, pass even ones straight through) or off (default: auto).",
        valueName: "mode"))
    var smoothing: MotionSmoothing?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Tap to click: one finger left, two fingers right, three fingers middle; double tap, tap-and-drag (default: on)."))
    var tap: Bool?

    @Flag(name: .customLong("drag-lock"), inversion: .prefixedNo, help: ArgumentHelp(
        "After a tap-and-drag, keep the button held for 300 ms after the finger lifts so the drag can go on (default: off)."))
    var dragLock: Bool?

    @Flag(name: .customLong("natural-scroll"), inversion: .prefixedNo, help: ArgumentHelp(
        "Two-finger scrolling moves the content with the fingers (default: off)."))
    var naturalScroll: Bool?

    @Option(name: .customLong("scroll-speed"), help: ArgumentHelp(
        "Scroll speed factor: 1 is one wheel click per 4 mm of two-finger travel (default: 1; from 0.1 to 10).",
        valueName: "factor"))
    var scrollSpeed: Double?

    @Flag(name: .customLong("kinetic-scroll"), inversion: .prefixedNo, help: ArgumentHelp(
        "Keep scrolling after a two-finger flick, slowing down until a new touch (default: on)."))
    var kineticScroll: Bool?

    @Option(help: ArgumentHelp(
        "Bind a three- or four-finger swipe to a key chord, as FINGERS-DIRECTION=CHORD (e.g. 3-left=alt+Right, 4-up=super, 3-down=none); repeatable.",
        valueName: "binding"))
    var swipe: [String] = []

    /// The touchpad settings: each option as given, else its default. `surfaceAspect` is `serve`'s
    /// `--surface-aspect` (shared with touchscreen mode's `--fit contain`).
    func settings(surfaceAspect: String?) throws -> TouchpadSettings {
        var s = TouchpadSettings()
        let aspectText = surfaceAspect ?? "19.5:9"
        guard let aspect = SurfaceAspect(parsing: aspectText) else {
            throw ValidationError("--surface-aspect must be two positive numbers as long:short (like 19.5:9), not \"\(aspectText)\"")
        }
        let long = Double(aspect.long) / 1000, short = Double(aspect.short) / 1000
        let diagonal = surfaceDiagonalMM ?? SurfaceSize.defaultDiagonalMM
        guard (20...1000).contains(diagonal) else {
            throw ValidationError("--surface-diagonal-mm must be 20...1000, not \(diagonal)")
        }
        s.surface = SurfaceSize(aspectLong: long, short: short, diagonalMM: diagonal)
        s.accelProfile = accel ?? .adaptive
        s.speed = speed ?? 0
        guard (-1...1).contains(s.speed) else { throw ValidationError("--speed must be -1...1, not \(s.speed)") }
        s.smoothing = smoothing ?? .auto
        s.tapToClick = tap ?? true
        s.dragLock = dragLock ?? false
        s.naturalScroll = naturalScroll ?? false
        s.scrollSpeed = scrollSpeed ?? 1
        guard (0.1...10).contains(s.scrollSpeed) else {
            throw ValidationError("--scroll-speed must be 0.1...10, not \(s.scrollSpeed)")
        }
        s.kineticScroll = kineticScroll ?? true
        for binding in swipe { try Self.bind(binding, in: &s.swipes, source: "--swipe") }
        return s
    }

    /// Applies `3-left=alt+Right` to `bindings`.
    static func bind(_ text: String, in bindings: inout SwipeBindings, source: String) throws {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        let gesture = parts.first?.split(separator: "-").map(String.init) ?? []
        guard parts.count == 2, gesture.count == 2, let fingers = Int(gesture[0]), fingers == 3 || fingers == 4,
              let direction = SwipeDirection(rawValue: gesture[1].lowercased()) else {
            throw ValidationError("\(source): \"\(text)\" is not FINGERS-DIRECTION=CHORD with FINGERS 3 or 4 and DIRECTION left, right, up or down (like 3-left=alt+Right)")
        }
        guard let chord = KeyChord(parsing: parts[1]) else {
            throw ValidationError("\(source): \"\(parts[1])\" is not a key chord: names joined by +, like ctrl+alt+Right, super, alt+Left, or none")
        }
        if fingers == 3 { bindings.three[direction] = chord } else { bindings.four[direction] = chord }
    }
}

extension AccelProfile: ExpressibleByArgument {}
extension MotionSmoothing: ExpressibleByArgument {}
