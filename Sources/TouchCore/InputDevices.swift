/// Input devices beside the X server's XTest: the output backend's input half when it is not XTest (the
/// uinput backend's kernel devices). The X output hands them every input action they take and performs
/// the rest itself on XTest: typed text (the X keymap path), keys they have no code for, and absolute
/// pointer moves (only touchscreen mode without real touches makes those). Overlay actions are never
/// input.
///
/// Not thread-safe: owned, like the X output, by the one event loop that owns the Bridge.
public protocol InputDevices: AnyObject {
    /// Which backend this is, for the log ("uinput").
    var name: String { get }
    /// Whether these devices perform `action`; the X output performs the rest.
    func takes(_ action: OutputAction) -> Bool
    /// Performs `actions` (all taken) in order; every device that changed ends its frame once, at the end.
    func perform(_ actions: [OutputAction]) throws(InputDeviceError)
    /// What is held down now, in words, for the log.
    var held: [String] { get }
    /// Lifts every touch and releases every button and key held; returns what it released, in words.
    func releaseAll() throws(InputDeviceError) -> [String]
    /// The X screen is `width`×`height` pixels (at start, and again when it changes): a direct touch
    /// device spans it, so that a touch lands on the pixel the core chose.
    func setScreen(width: Int32, height: Int32) throws(InputDeviceError)
    /// The desktop's keymap, at start and again after every change: a `.key` action presses the key that
    /// produces its keysym there (with the modifiers its shift level needs). Before the first call the
    /// devices assume a US keyboard (`Keymap.usFallback`).
    func setKeymap(_ keymap: Keymap)
    /// The name the keyboard device has (X names an input device as the kernel does): the display
    /// server translates its keys by that device's own map, so that is the map to give `setKeymap`.
    var keyboardName: String { get }
    /// Destroys the devices; the kernel ends whatever they still held. Idempotent.
    func close()
}

/// A device call that failed, in words (the C function, what for, and errno).
public struct InputDeviceError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
