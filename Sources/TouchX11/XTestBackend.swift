import TouchCore
import TouchOutput

/// The XTest input backend: its output (`XTestOutput`) works on the X11 desktop's connection, so it is
/// made when that desktop opens and closed when it closes (its fingers' masters removed). XTest has no
/// touchscreen, tablet, touchpad device or smooth scroll; with `--multitouch` it gives every finger
/// beyond the first an X pointer of its own, and every person beyond the first (`people = N`) a master
/// pointer and keyboard of their own.
public final class XTestBackend: InputBackend {
    private let multitouch: Bool
    private var current: XTestOutput?
    public let capabilities = OutputCapabilities(extraPointers: true, personPointers: true)
    public var name: String { "XTest" }

    /// The factory: nothing is made until a desktop opens. `multitouch`: `--multitouch`.
    public init(multitouch: Bool) { self.multitouch = multitouch }

    /// A new XTest output on `desktop`'s connection; throws when it is not an X display.
    public func output(on desktop: any Desktop) throws(OutputError) -> any InputOutput {
        guard let x11 = desktop as? X11Desktop else {
            throw OutputError(origin: "touchbridge", message: "XTest needs an X display", kind: 7)
        }
        _ = desktopClosing()
        let made = try XTestOutput(desktop: x11, multitouch: multitouch)
        current = made
        return made
    }

    public func desktopClosing() -> (removed: [String], errors: [OutputError]) {
        defer { current = nil }
        return current?.close() ?? ([], [])
    }

    public func close() -> (removed: [String], errors: [OutputError]) { desktopClosing() }
}
