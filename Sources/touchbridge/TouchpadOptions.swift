import ArgumentParser
import TouchCore
import TouchWire

/// The options of touchpad mode, nil (empty) when not given: `Setting.all` reads them into
/// `ServeSettings.touchpad` over the defaults and the config file.
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
}

extension AccelProfile: ExpressibleByArgument {}
extension MotionSmoothing: ExpressibleByArgument {}
