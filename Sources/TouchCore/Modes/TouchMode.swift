// The modes a sender can choose between: what touches do.

/// What touches do.
public enum TouchMode: String, Hashable, Sendable, CaseIterable {
    /// The phone is a laptop touchpad: relative motion, taps, scrolling, gestures (`TouchpadMode`).
    case touchpad
    /// The phone is the screen: absolute motion, the first finger drives button 1 (`TouchscreenMode`).
    case touchscreen
    /// The phone is a presentation remote: taps and swipes change slides, a long press toggles the
    /// laser pointer (`PresenterMode`).
    case presenter
    /// The page's pen is a pen on the desktop, absolute on the chosen monitor: a pen tablet with pressure
    /// and tilt (uinput), or the main pointer (without a tablet); fingers do nothing (`PenMode`).
    case pen
}
