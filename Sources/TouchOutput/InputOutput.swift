// The two interfaces the daemon performs the Bridge's effects on, and the one tested place that chooses
// their implementations (OutputChoice.swift). Standard library and TouchCore only: the implementations
// live beside their C libraries (TouchX11: XTest and the X11 desktop; TouchUInput: kernel devices;
// TouchWayland: the Wayland desktop), and none of them knows another.
import TouchCore

/// A failure of an input output or of the desktop, in words, with its kind for bounded log lines.
public struct OutputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Who failed, the log line's prefix: "X11", "uinput", "Wayland".
    public var origin: String
    /// What failed, in words (the request or C function, and why).
    public var message: String
    /// Which kind of failure, 0..<8, for one bounded log reason per kind (`DropLog<8>`): X11's are
    /// `X11Error.kindIndex` (0...4), an input device's 5, the Wayland desktop's 6, any other 7.
    public var kind: Int
    /// Not a failure yet: what was asked for is not there yet and comes with the next change (the live
    /// view's first picture from a screen cast still starting).
    public var notYet: Bool

    public init(origin: String, message: String, kind: Int, notYet: Bool = false) {
        self.origin = origin
        self.message = message
        self.kind = min(max(kind, 0), 7)
        self.notYet = notYet
    }

    public var description: String { "\(origin): \(message)" }
}

/// What types a character that the input output's keymap has on no key: the desktop (the X11 desktop
/// borrows a spare keycode for the moment; a desktop that cannot refuses, with a reason).
public protocol CharacterTypist: AnyObject {
    /// Types `keysym` (a press and a release) though no key produces it. Throws when it cannot: the
    /// caller counts and logs it, nothing else happens.
    func typeLacking(_ keysym: KeySym) throws(OutputError)
    /// Gives back every keycode `typeLacking` borrowed (the Bridge's `.restoreKeymap`). Nothing when
    /// none is borrowed.
    func restoreKeymap() throws(OutputError)
}

/// The one interface the Bridge's input effects go to: XTest on the X display (TouchX11's
/// `XTestOutput`) or kernel devices through /dev/uinput (TouchUInput's `UInputBackend`), two equals,
/// neither inside the other. Overlay actions are not input: the desktop's overlay takes them.
///
/// Routing, the one exception to "one output performs the whole batch": a `.type` of a character the
/// output's keymap has on no key goes to the `typist` (the desktop) in its place in the batch, and so
/// does `.restoreKeymap`. Nothing else is split.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public protocol InputOutput: AnyObject {
    /// Which output this is, for the log ("xtest", "uinput").
    var name: String { get }
    /// Performs the input actions of `actions` in order (overlay actions are skipped), every one even
    /// after one fails, and ends its frame (XTest: one flush; uinput: one sync per device that changed)
    /// once at the end. Returns the failures, in order.
    func perform(_ actions: [OutputAction], typist: any CharacterTypist) -> [OutputError]
    /// What is held down now (buttons, keys, touches), in words, for the log.
    var held: [String] { get }
    /// Lifts every touch and releases every button and key held, each even after one fails; returns
    /// what it released, in words, and the failures.
    func releaseAll() -> (released: [String], errors: [OutputError])
    /// The desktop's screen is `width`×`height` pixels (at start, and again when it changes): a direct
    /// touch device spans it, so a touch lands on the pixel the core chose. XTest needs nothing.
    func setScreen(width: Int32, height: Int32) throws(OutputError)
    /// The desktop's keymap, at start and after every change: keys are pressed where it has them.
    func setKeymap(_ keymap: Keymap)
    /// The name of its own keyboard device as the display server sees it (the server translates that
    /// device's keys by the device's own map, the one to read); nil when it has none (XTest).
    var keyboardName: String? { get }
    /// Releases what is held and destroys what it made (uinput: the devices; XTest: the fingers'
    /// masters); returns what it removed, in words, and the failures. Idempotent.
    func close() -> (removed: [String], errors: [OutputError])
    /// Performs a further person's actions (`People`: person 2, 3, …) on that person's own pointer and
    /// keyboard, made at their first action; only an output whose capabilities have `personPointers` is given any.
    func perform(_ actions: [OutputAction], as person: Person, typist: any CharacterTypist) -> [OutputError]
    /// A further person came: an output whose people's devices take a while to be usable (uinput's:
    /// the display server adds them, then they go on the person's seat) makes them now. Returns the failures.
    func personJoined(_ person: Person) -> [OutputError]
    /// A further person left: their own pointer and keyboard go (what they held was released by their own
    /// actions before; whatever the output still holds for them is released first). Returns what it
    /// removed, in words, and the failures.
    func personLeft(_ person: Person) -> (removed: [String], errors: [OutputError])
    /// The display server's devices changed (a master added or removed by someone else): a person's pointer
    /// that is gone is forgotten, and made again at their next action. Returns what it found, in words.
    func devicesChanged() -> [String]
}

extension InputOutput {
    public func perform(_ actions: [OutputAction], as person: Person, typist: any CharacterTypist) -> [OutputError] {
        actions.isEmpty ? [] : [OutputError(origin: name, message: "\(person): \(name) has one pointer for everyone", kind: 7)]
    }

    public func personJoined(_ person: Person) -> [OutputError] { [] }

    public func personLeft(_ person: Person) -> (removed: [String], errors: [OutputError]) { ([], []) }

    public func devicesChanged() -> [String] { [] }
}
