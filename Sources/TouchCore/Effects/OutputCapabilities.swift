/// What an input output can perform beyond the pointer, buttons and keys every output has. Each output
/// says its own (its factory returns them with it), and the core is configured from them
/// (`TouchPipeline.Configuration.adopting`), so no one outside the output asks which output it is.
public struct OutputCapabilities: Hashable, Sendable {
    /// A touchscreen device: touchscreen mode makes every finger a real touch (`OutputAction.touch`).
    public var realTouches: Bool
    /// A pen tablet: pen mode gives pressure, tilt and the eraser (`OutputAction.pen`); without it the
    /// pen is the main pointer with buttons 1 and 3.
    public var penTablet: Bool
    /// A native touchpad device: touchpad mode hands every finger to it (`OutputAction.padContact`) and
    /// the display server's input stack makes taps, scrolling and gestures.
    public var nativeTouchpad: Bool
    /// Scrolling in fractions of a click (`OutputAction.smoothScroll`).
    public var smoothScroll: Bool
    /// A pointer of its own for each finger beyond the first (`OutputAction.extraPointerMove`,
    /// `.extraPointerButton`): what `--multitouch` needs.
    public var extraPointers: Bool
    /// A pointer and keyboard of its own for each person beyond the first (`People`, `people = N`):
    /// without it one person drives at a time.
    public var personPointers: Bool

    public init(realTouches: Bool = false, penTablet: Bool = false, nativeTouchpad: Bool = false,
                smoothScroll: Bool = false, extraPointers: Bool = false, personPointers: Bool = false) {
        self.personPointers = personPointers
        self.realTouches = realTouches
        self.penTablet = penTablet
        self.nativeTouchpad = nativeTouchpad
        self.smoothScroll = smoothScroll
        self.extraPointers = extraPointers
    }
}

extension TouchPipeline.Configuration {
    /// This configuration on an output that can do `capabilities`: real touches, the pen tablet, the
    /// native touchpad and smooth scrolling where it has them, and `multitouch` only where it has a
    /// pointer for each finger.
    public func adopting(_ capabilities: OutputCapabilities) -> Self {
        var c = self
        c.realTouches = capabilities.realTouches
        c.penTablet = capabilities.penTablet
        c.nativeTouchpad = capabilities.nativeTouchpad
        c.touchpad.smoothScroll = capabilities.smoothScroll
        c.multitouch = multitouch && capabilities.extraPointers
        return c
    }
}
