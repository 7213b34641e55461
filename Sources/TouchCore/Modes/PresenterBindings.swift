// Presenter mode's settings: the key chords of its gestures, rebindable, and whether it starts drawing.

/// The key chords of presenter mode's gestures, rebindable (`--presenter-key`, `[presenter-key]`).
///
/// The defaults are the keys every common presentation program takes:
///
/// | gesture | action | chord | LibreOffice Impress | reveal.js | PDF viewers | PowerPoint (browser) |
/// | --- | --- | --- | --- | --- | --- | --- |
/// | one-finger tap, swipe left | next | Page_Down | next | next | next page | next |
/// | swipe right | previous | Page_Up | previous | previous | previous page | previous |
/// | two-finger tap | blank | b | black screen | pause (black) | black (Evince, Okular) | black screen |
///
/// Page_Down/Page_Up rather than Right/Left: they are what presentation clickers send, reveal.js's
/// Right skips vertical slides, and a PDF viewer in continuous mode scrolls sideways on Right.
public struct PresenterBindings: Hashable, Sendable {
    public var next: KeyChord
    public var previous: KeyChord
    public var blank: KeyChord
    /// The web page's Start show and End show buttons: F5 and Escape (LibreOffice Impress, PowerPoint;
    /// Escape leaves reveal.js's overview and a PDF viewer's presentation mode).
    public var start = KeyChord(KeySym(rawValue: 0xffc2))
    public var end = KeyChord(.escape)

    public init(next: KeyChord, previous: KeyChord, blank: KeyChord) {
        self.next = next
        self.previous = previous
        self.blank = blank
    }

    public static let `default` = PresenterBindings(
        next: KeyChord(.pageDown), previous: KeyChord(.pageUp), blank: KeyChord(KeySym(rawValue: 0x62)))

    /// The names the bindings go by in `--presenter-key NAME=CHORD`, in order.
    public static let names = ["next", "previous", "blank", "start", "end"]

    public subscript(name: String) -> KeyChord? {
        get {
            switch name {
            case "next": return next
            case "previous": return previous
            case "blank": return blank
            case "start": return start
            case "end": return end
            default: return nil
            }
        }
        set {
            guard let newValue else { return }
            switch name {
            case "next": next = newValue
            case "previous": previous = newValue
            case "blank": blank = newValue
            case "start": start = newValue
            case "end": end = newValue
            default: break
            }
        }
    }
}

/// Settings of presenter mode. The tap and swipe thresholds are the touchpad's (`TouchpadSettings`:
/// `tapTimeout`, `tapMoveThresholdMM`, `swipeDistanceMM`, `surface`), so a tap or a swipe is the same
/// finger motion in both modes.
public struct PresenterSettings: Hashable, Sendable {
    public var keys: PresenterBindings = .default
    /// How long one finger rests without moving before it toggles the laser pointer (two fingers: the
    /// drawing): 500 ms (Android's long-press timeout; iOS's long-press recogniser also defaults to 0.5 s).
    public var longPress: Interval = .milliseconds(500)
    /// Whether drawing is on from the start (`--draw`); a two-finger long press toggles it.
    public var drawing = false

    public init() {}
}
