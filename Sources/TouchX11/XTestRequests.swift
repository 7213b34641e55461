import TouchCore

/// What `XTestOutput` asks of the X server: XTest's input requests on the core devices or on a person's
/// master's, the two flushes, the round trip, and whether the connection is lost. `XDisplay`'s calls of
/// those names are the one conformance that runs for real; TouchX11Tests stand in for it to see, request
/// by request, what the output asks (which presses it records, what every release path lets go).
public protocol XTestRequests: AnyObject {
    /// Whether the connection to the X server is gone (nothing can be sent or released).
    var isLost: Bool { get }
    func fakeMotion(to point: PixelPoint) throws(X11Error)
    func fakeRelativeMotion(dx: Int32, dy: Int32) throws(X11Error)
    func fakeButton(_ button: PointerButton, pressed: Bool) throws(X11Error)
    func fakeKey(_ code: KeyCode, pressed: Bool) throws(X11Error)
    /// The first keycode that carries `keysym` at any level (a `.key` pressed with no keymap known).
    func keyCode(for keysym: KeySym) throws(X11Error) -> KeyCode
    func fakeDeviceMotion(_ device: OpenedDevice, to point: PixelPoint) throws(X11Error)
    func fakeDeviceMotion(_ device: OpenedDevice, dx: Int32, dy: Int32) throws(X11Error)
    func fakeDeviceButton(_ device: OpenedDevice, _ button: PointerButton, pressed: Bool) throws(X11Error)
    func fakeDeviceKey(_ device: OpenedDevice, _ code: KeyCode, pressed: Bool) throws(X11Error)
    /// Sends a batch of XTest input requests only, without reading the connection (xcb).
    func flushXTest() throws(X11Error)
    /// Sends any batch (Xlib's `XFlush`).
    func flush() throws(X11Error)
    /// Waits until the server has handled every request sent so far.
    func sync() throws(X11Error)
}

extension XDisplay: XTestRequests {}
