import TouchCore

/// An input backend as a plug-in: what its factory returns (`UInputDevices.make` in TouchUInput,
/// `XTestBackend` in TouchX11), the capabilities the Bridge is configured from and the input output
/// itself. The daemon holds it as this protocol: it never asks which backend it is.
///
/// Its output may live longer than a desktop (uinput's kernel devices, made by the factory: they need no
/// display server) or only as long as one (XTest, made on the X display's connection): `output(on:)`
/// hands it over when a desktop opens, `desktopClosing` closes what lives on that desktop, `close` the rest.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public protocol InputBackend: AnyObject {
    /// Its name, for the log ("uinput", "XTest").
    var name: String { get }
    /// What its output can do; the same before and after a desktop opens.
    var capabilities: OutputCapabilities { get }
    /// The input output for `desktop`, just opened. Throws when it cannot drive that desktop.
    func output(on desktop: any Desktop) throws(OutputError) -> any InputOutput
    /// The desktop `output(on:)` was given is closing: closes what lives on it (nothing for an output
    /// that outlives it); returns what it removed, in words, and the failures.
    func desktopClosing() -> (removed: [String], errors: [OutputError])
    /// The daemon stops: closes everything it made. Idempotent.
    func close() -> (removed: [String], errors: [OutputError])
}

/// What a backend's own connection reported (`InputBackend.readIncoming`): lines for the log, and why
/// it ended when it did (the daemon then stops, releasing what it can).
public struct BackendIncoming: Sendable, Equatable {
    public var lines: [String]
    public var ended: String?
    public init(lines: [String] = [], ended: String? = nil) {
        self.lines = lines
        self.ended = ended
    }
}

/// A backend that talks to a server of its own (the portal's EIS connection) has a descriptor for the
/// daemon to watch; uinput and XTest have none, and these defaults say so.
public protocol BackendWithConnection: InputBackend {
    /// The descriptor the daemon wakes on when it is readable.
    var descriptor: Int32 { get }
    /// The descriptor is readable: reads and handles what came.
    func readIncoming() -> BackendIncoming
}

/// A backend whose session also shares the screen (the RemoteDesktop portal's session with a screen
/// cast): the live view's pictures where the desktop copies none itself (GNOME, KDE).
public protocol ScreenSharingBackend: InputBackend {
    /// A new stream of the shared monitor, which the caller owns and closes; the failure says why there
    /// is none (the session shares no screen, PipeWire is missing or refused).
    func openPixelStream() -> Result<any PixelStream, OutputError>
}
