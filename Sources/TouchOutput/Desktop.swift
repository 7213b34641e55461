import TouchCore

/// What the daemon needs from the desktop, whatever it is: its screen and monitors, its keymap, the
/// overlay, typing a character the keymap lacks, and its connection (a descriptor to watch, what came
/// in, whether it was lost, closing it). Implementations: `X11Desktop` (TouchX11), the Wayland desktop
/// (TouchWayland), and `AbsentDesktop` (neither DISPLAY nor WAYLAND_DISPLAY: uinput alone).
///
/// Input never goes through it (that is the `InputOutput`'s), except a character no key produces
/// (`CharacterTypist`). A conforming type needs only seven members: `description`, `screen()`,
/// `keymap(keyboardNamed:)`, `descriptors`, `readIncoming()`, `typeLacking(_:)` (a desktop that cannot
/// borrow throws: a counted refusal) and `close()`; the rest have defaults for a desktop with no overlay,
/// nothing borrowed, nothing queued and a connection that is never lost. A Wayland desktop whose
/// session has Xwayland too gets its overlay from `OverlaidDesktop`.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public protocol Desktop: CharacterTypist, CustomStringConvertible {
    /// Which desktop, for the log ("X display :1", "Wayland display wayland-1", "no desktop").
    var description: String { get }
    /// The screen (the rectangle absolute input spans, in the desktop's pixels) and its monitors now.
    func screen() throws(OutputError) -> (screen: PixelRect, monitors: [Monitor])
    /// The keymap now, read for the keyboard device named `keyboardNamed` when the desktop has it
    /// (the input output's own), else the desktop's default one. nil: the desktop has no keymap to give
    /// (keys are then pressed where a US keyboard has them).
    func keymap(keyboardNamed: String?) throws(OutputError) -> DesktopKeymap?
    /// The descriptors to watch: when one is readable, call `readIncoming`. Empty: nothing to watch.
    var descriptors: [Int32] { get }
    /// What came in since the last call (a descriptor was readable, or `hasQueuedEvents`).
    func readIncoming() -> DesktopChanges

    /// The overlay window (visible touches, the laser, drawings), when the desktop has one.
    var overlay: (any OverlayOutput)? { get }
    /// The live view's picture of the screen, when the desktop gives one (X11 with MIT-SHM and XDamage; a
    /// wlroots compositor's screen copy).
    var view: (any ViewCapture)? { get }
    /// Where a further person's own kernel devices (uinput) get a pointer of their own: an X master
    /// (XInput 2), a sway seat. Nil: the desktop has one pointer for everyone.
    var seats: (any PersonSeats)? { get }
    /// Whether the connection broke (the server went away): nothing more can be done on it; `close()`
    /// still frees this side.
    var isLost: Bool { get }
    /// Whether events were read from the connection that nobody handled yet (then `readIncoming`
    /// again: the descriptor will not become readable for them).
    var hasQueuedEvents: Bool { get }
    /// Errors the server reported on its own (not as a reply) since the last call, and how many more
    /// were not kept.
    func takeErrors() -> (errors: [OutputError], dropped: Int)
    /// Test only (`--debug-x-error-every`): a request the server rejects, to prove that its errors are
    /// logged and survived. Nothing where there is no such server.
    func provokeError() throws(OutputError)
    /// Gives back what it borrowed (keycodes), removes the overlay and closes the connection, in that
    /// order; returns the failures. Idempotent.
    func close() -> [OutputError]
}

extension Desktop {
    public var overlay: (any OverlayOutput)? { nil }
    public var view: (any ViewCapture)? { nil }
    public var seats: (any PersonSeats)? { nil }
    public var isLost: Bool { false }
    public var hasQueuedEvents: Bool { false }
    public func takeErrors() -> (errors: [OutputError], dropped: Int) { ([], 0) }
    public func provokeError() throws(OutputError) {}
    public func restoreKeymap() throws(OutputError) {}
}

/// A desktop's keymap as read, with where it was read from.
public struct DesktopKeymap: Sendable, Equatable {
    public var keymap: Keymap
    /// Where, in words, for the log ("the core keyboard", "X device 12 \"touchbridge keyboard\"").
    public var source: String
    /// Whether it is the map of the keyboard named in the request (then a device coming or going is
    /// no reason to read it again).
    public var ofNamedKeyboard: Bool

    public init(keymap: Keymap, source: String, ofNamedKeyboard: Bool) {
        self.keymap = keymap
        self.source = source
        self.ofNamedKeyboard = ofNamedKeyboard
    }
}

/// What `Desktop.readIncoming` saw.
public struct DesktopChanges: Sendable {
    /// The screen or its monitors changed: read `screen()` again.
    public var screenChanged = false
    /// The keymap changed: read `keymap(keyboardNamed:)` again.
    public var keymapChanged = false
    /// An input device came, went, or was enabled or disabled: the keyboard `keymap` looks for may be
    /// there now.
    public var devicesChanged = false
    /// The overlay's look changed (a compositor started or stopped).
    public var overlayLookChanged = false
    /// The screen's pixels changed while the live view watches them (`ViewCapture.watch`).
    public var viewDamaged = false
    /// What failed while reading.
    public var errors: [OutputError] = []

    public init() {}
}

/// A further person's own pointer and keyboard for input devices the display server reads itself
/// (uinput's): on Xorg a master pointer and keyboard (`touchbridge person N`) their devices are attached
/// to, under sway a seat of their own. Their devices reach the server some time after they are made (udev,
/// then the server's libinput), and until then are on no seat or on everyone's: input for them waits
/// for `isReady`, or it would move another person's pointer. Made by the desktop, on its connection.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public protocol PersonSeats: AnyObject {
    /// Makes `person`'s own pointer and keyboard, and asks for the devices named `devices` (their names,
    /// vendor and product as the kernel has them) to be put on it as soon as the server has them.
    func make(_ person: Person, devices: [SeatDevice]) throws(OutputError)
    /// The server's devices changed, or a person waits: puts on each person's seat what is there now,
    /// and makes a person's pointer again when someone else removed it. Returns what it did, in words.
    func settle() -> [String]
    /// Whether every device of `person`'s is on their own seat (their input may go now).
    func isReady(_ person: Person) -> Bool
    /// `person`'s pointer and keyboard go (their devices were destroyed before); returns what it
    /// removed, in words. Nothing when the person has none.
    func remove(_ person: Person) throws(OutputError) -> [String]
    /// Whether a person's devices stay on their seat when they leave, for whoever comes next at their
    /// place, until the devices all go (sway's seats: a seat's pointer must not come and go under
    /// Xwayland, see `SwaySeats`). False: they go with their person.
    var keepsDevices: Bool { get }
    /// Called before every further person's devices go at once (the daemon stops, the desktop closes):
    /// waits while the server may still be catching up with devices that came a moment ago, bounded.
    /// Returns what it did, in words; nil when it did not wait.
    func beforeDevicesGo() -> String?
}

extension PersonSeats {
    public var keepsDevices: Bool { false }
    public func beforeDevicesGo() -> String? { nil }
}

/// A kernel input device as a display server names it.
public struct SeatDevice: Sendable, Equatable {
    /// The device's name ("touchbridge pointer 2 #3fa2").
    public var name: String
    public var vendor: UInt16
    public var product: UInt16
    /// Whether it gives keys (a keyboard: attached to the keyboard half of an X master).
    public var isKeyboard: Bool

    public init(name: String, vendor: UInt16, product: UInt16, isKeyboard: Bool) {
        self.name = name
        self.vendor = vendor
        self.product = product
        self.isKeyboard = isKeyboard
    }
}

/// The live view's capture: the screen's pixels, scaled and encoded as JPEG, and word of their changes
/// (`DesktopChanges.viewDamaged`) while watched. Owned by its desktop, closed with it.
public protocol ViewCapture: AnyObject {
    /// Starts (true) or stops watching the screen for changes; stopping frees what a capture holds on
    /// both sides (the shared memory, the damage object).
    func watch(_ on: Bool) throws(OutputError)
    /// Shows the mark that says the screen is viewed in the corner of `rect` (the viewed monitor), or
    /// moves it there; `watch(false)` takes it away.
    func showMark(in rect: PixelRect) throws(OutputError)
    /// Captures `rect` of the screen, with the cursor, scaled to `size`, as a JPEG handed to `body`
    /// (the bytes valid only during the call).
    func frame(of rect: PixelRect, size: ViewSize, _ body: (UnsafeRawBufferPointer) -> Void) throws(OutputError)
    /// What it holds on the X server now, in words, for the tests' and the log's sake ("segment 5, damage 0x200001").
    var holding: String { get }
}

/// A live view a desktop holds, and closes with itself (`PictureView` over a desktop's `ScreenPixels`).
public protocol ClosableViewCapture: ViewCapture {
    /// Frees what it holds. Safe to call twice.
    func close()
}

/// A picture of an output in memory of this process: rows of 32-bit pixels (XRGB, cairo's RGB24), and
/// where the viewed rectangle lies in it. Valid only during the call that hands it over.
public struct ScreenPicture {
    public var pixels: UnsafeMutableRawPointer
    public var width: Int32
    public var height: Int32
    /// Bytes a row.
    public var stride: Int32
    /// The viewed rectangle in the picture's pixels as the monitor shows them (turned by `transform`;
    /// more than logical ones on a scaled output).
    public var region: (x: Double, y: Double, width: Double, height: Double)
    /// Whether the rows go bottom to top.
    public var yInverted: Bool
    /// How the monitor turns the pixels to show them (`wl_output.transform`: 0 normal, 1–3 turned 90°,
    /// 180°, 270° counter-clockwise, 4–7 the same flipped): a turned output's screen copy is of its
    /// unturned framebuffer.
    public var transform: Int32

    public init(pixels: UnsafeMutableRawPointer, width: Int32, height: Int32, stride: Int32,
                region: (x: Double, y: Double, width: Double, height: Double), yInverted: Bool, transform: Int32 = 0) {
        self.pixels = pixels
        self.width = width
        self.height = height
        self.stride = stride
        self.region = region
        self.yInverted = yInverted
        self.transform = transform
    }
}

/// A desktop that copies its outputs' pictures whole into memory of this process (a Wayland
/// compositor's screen copy): the live view scales and encodes them itself (TouchX11's `PictureView`).
/// A change of the watched output comes as the desktop's `DesktopChanges.viewDamaged`.
public protocol ScreenPixels: AnyObject {
    /// Starts (true) or stops watching the outputs for changes; stopping frees the copies' memory.
    func watchPixels(_ on: Bool) throws(OutputError)
    /// The newest picture of the output that shows `rect` (a monitor of the desktop's `screen()`),
    /// handed to `body`; waits (bounded) for the first one.
    func withPicture(of rect: PixelRect, _ body: (ScreenPicture) throws(OutputError) -> Void) throws(OutputError)
    /// What the copies hold now, in words.
    var pixelsHolding: String { get }
}

/// A stream of a monitor's pictures that the session shares (the ScreenCast portal's PipeWire stream,
/// under GNOME and KDE): the pictures as `ScreenPixels`, on a descriptor of its own, which the desktop
/// holding the stream watches with its own (`Desktop.descriptors`).
public protocol PixelStream: ScreenPixels {
    /// Readable when the stream has news: call `dispatch`.
    var descriptor: Int32 { get }
    /// Handles what came, without waiting: whether a newer picture is held, and why the stream failed
    /// (nil while it has not).
    func dispatch() -> (newPicture: Bool, failure: String?)
    /// The desktop's monitors now, in the compositor's logical layout: the shared one (the one at the
    /// place the stream began at) is followed when it turns or changes size.
    func follow(monitors: [PixelRect])
    /// Ends the stream and frees what it holds. Safe to call twice.
    func close()
}

/// The overlay: a window over the desktop that input passes through, drawn by `OverlayAction`s.
public protocol OverlayOutput: AnyObject {
    /// Performs `person`'s overlay actions among `actions` (the rest is skipped): the window is made or
    /// moved first (`.cover`), then drawn; `.remove` takes away what `person` shows, and the window last
    /// when no one else wants it. Each person's circles, laser and strokes are their own (`Person.colour`).
    /// Returns the failures and whether its look changed (it was made, or a compositor came or went).
    func perform(_ actions: [OutputAction], as person: Person) -> (errors: [OutputError], lookChanged: Bool)
    /// How it draws now; nil while there is no window.
    var look: OverlayLook? { get }
}

/// How the overlay draws.
public enum OverlayLook: Sendable {
    /// A compositor blends it: translucent drawing.
    case translucent
    /// No compositor: the window is cut to what it draws.
    case shaped
}

/// The desktop of a session with neither DISPLAY nor WAYLAND_DISPLAY (uinput alone: a console, or a
/// compositor whose socket this process cannot see): no overlay, no keymap (keys where a US keyboard
/// has them), nothing to borrow, nothing to watch. Absolute input spans `screen`, a size of its own
/// choosing: the compositor or libinput maps a touchscreen's whole range onto its output, so only the
/// aspect and the resolution matter.
public final class AbsentDesktop: Desktop {
    /// What the touchscreen spans by default: 1920×1080, the most common monitor's aspect and resolution.
    public static let defaultSize = PixelRect(x: 0, y: 0, width: 1920, height: 1080)
    /// What the touchscreen spans.
    public let size: PixelRect

    public init(size: PixelRect = AbsentDesktop.defaultSize) {
        self.size = size
    }

    public var description: String { "no desktop" }
    public func screen() throws(OutputError) -> (screen: PixelRect, monitors: [Monitor]) { (size, []) }
    public func keymap(keyboardNamed: String?) throws(OutputError) -> DesktopKeymap? { nil }
    public var descriptors: [Int32] { [] }
    public func readIncoming() -> DesktopChanges { DesktopChanges() }
    public func typeLacking(_ keysym: KeySym) throws(OutputError) {
        throw OutputError(origin: "desktop", message: "no key makes \(KeyNames.name(of: keysym)) and there is no desktop to borrow a key from: not typed", kind: 7)
    }
    public func close() -> [OutputError] { [] }
}

/// A desktop with the overlay of another: a Wayland session's own desktop (`base`: screen, monitors,
/// keymap, typing), drawn on through Xwayland's X11 desktop (`overlaySource`), the only way a client
/// gets a window above everything there. Both connections are watched; losing either is losing the
/// desktop (`--reconnect` opens both again).
public final class OverlaidDesktop: Desktop {
    public let base: any Desktop
    public let overlaySource: any Desktop

    public init(base: any Desktop, overlaySource: any Desktop) {
        self.base = base
        self.overlaySource = overlaySource
    }

    public var description: String { "\(base) (the overlay on \(overlaySource))" }
    public func screen() throws(OutputError) -> (screen: PixelRect, monitors: [Monitor]) { try base.screen() }
    public func keymap(keyboardNamed: String?) throws(OutputError) -> DesktopKeymap? { try base.keymap(keyboardNamed: keyboardNamed) }
    public var descriptors: [Int32] { base.descriptors + overlaySource.descriptors }

    /// The base's changes, and of the overlay's desktop only what concerns the overlay (its screen and
    /// keymap are not the ones driven).
    public func readIncoming() -> DesktopChanges {
        var changes = base.readIncoming()
        let overlayChanges = overlaySource.readIncoming()
        if overlayChanges.overlayLookChanged { changes.overlayLookChanged = true }
        changes.errors += overlayChanges.errors
        return changes
    }

    public var overlay: (any OverlayOutput)? { overlaySource.overlay }
    /// The base's picture (the compositor's outputs): the overlay's X server (Xwayland) shows only X
    /// clients' windows. Its mark is drawn through the overlay's X server (`PictureView`).
    public var view: (any ViewCapture)? { base.view }
    /// The base's: the overlay's X server (Xwayland) has no say over the compositor's seats.
    public var seats: (any PersonSeats)? { base.seats }
    public var isLost: Bool { base.isLost || overlaySource.isLost }
    public var hasQueuedEvents: Bool { base.hasQueuedEvents || overlaySource.hasQueuedEvents }

    public func takeErrors() -> (errors: [OutputError], dropped: Int) {
        let (a, m) = base.takeErrors(), (b, n) = overlaySource.takeErrors()
        return (a + b, m + n)
    }

    public func provokeError() throws(OutputError) { try overlaySource.provokeError() }
    public func typeLacking(_ keysym: KeySym) throws(OutputError) { try base.typeLacking(keysym) }
    public func restoreKeymap() throws(OutputError) { try base.restoreKeymap() }

    /// The overlay's desktop first (its window goes), then the base.
    public func close() -> [OutputError] { overlaySource.close() + base.close() }
}
