import CX11
import TouchCore

#if canImport(Glibc)
import Glibc
#endif

/// An X keycode (8...255): a physical key in the server's keyboard map.
public struct KeyCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
}

/// The one owner of an Xlib `Display*`.
///
/// Every Xlib, XTest, XInput2, RandR and SHAPE call touchbridge makes goes through a method here or
/// in its extensions (XDisplay+*.swift), and every cairo call through Cairo.swift: each C function is
/// called from one Swift function only, which names it in its doc comment (CCallSiteTests checks
/// this). An `XDisplay` is not thread-safe and not `Sendable`: it lives on the single thread (event
/// loop) that owns the core state; nothing else touches it.
///
/// Resources are released explicitly with `close()`; `deinit` asserts that happened. The windows,
/// pixmaps and colormaps made through it must be released before (`close()` asserts that too).
public final class XDisplay {
    /// The display name it was opened with (`:0`, `localhost:10.0`).
    public let name: String
    var handle: OpaquePointer?
    /// The default screen's number.
    public let screen: Int32
    /// Windows, pixmaps and colormaps made through this display and not yet released (see
    /// XDisplay+Window.swift): `close()` asserts there are none.
    var liveResources = 0
    /// The RandR extension's first event code, once `selectScreenChangeInput()` has run; -1 before.
    var randrEventBase: Int32 = -1
    /// The XKB extension's event code, once `selectKeymapChangeInput()` has run; -1 before.
    var xkbEventBase: Int32 = -1
    /// The XDamage extension's first event code, once `selectDamageInput()` has run; -1 before.
    var damageEventBase: Int32 = -1
    /// The XInput extension's major opcode (its events' `extension`), once `xinputVersion()` has run; -1 before.
    var xinputOpcode: Int32 = -1
    /// The display's own xcb connection (Xlib's requests go out through it too, in one sequence): the
    /// XTest input requests are made on it directly, so that sending them does not read (`flushXTest`).
    private var xcb: OpaquePointer?
    /// xcb's count of bytes read from the server when the first XTest request since the last flush was
    /// made; nil when none is waiting. `flushXTest` compares it to the count after its flush.
    private var xcbReadMark: UInt64?
    /// Whether xcb read something from the server (events, errors: into xcb's own queue) while sending
    /// the XTest requests and flushing them, which Xlib has not taken yet: the connection's descriptor
    /// will not become readable for it (`hasQueuedEvents`). Cleared when Xlib reads (`drainIncoming`,
    /// `flush`, `sync`).
    var xcbReadUnseen = false

    /// Opens the display and checks that it has XTEST.
    ///
    /// The corresponding C functions are `XOpenDisplay`, `XDisplayString`, `XDefaultScreen`,
    /// `XTestQueryExtension` and `XTestGrabControl`; `XGetXCBConnection` and, for xcb's XTEST
    /// (`tb_xcb_test_extension`), `xcb_get_extension_data`, once here so that the first input request
    /// does not wait for the extension's reply.
    /// Also installs touchbridge's X error handlers (see `XErrorHandlers`).
    public init(name: String?) throws(X11Error) {
        XErrorHandlers.install()
        let shown = name ?? (getenv("DISPLAY").map { String(cString: $0) } ?? "")
        let opened = XOpenDisplay(name)
        guard let opened else { throw .cannotOpenDisplay(shown) }
        self.handle = opened
        self.name = String(cString: XDisplayString(opened))
        self.screen = XDefaultScreen(opened)
        XErrorHandlers.displayName = self.name
        XErrorHandlers.watchForLoss(opened)
        var event: Int32 = 0, error: Int32 = 0, major: Int32 = 0, minor: Int32 = 0
        guard XTestQueryExtension(opened, &event, &error, &major, &minor) != 0 else {
            close()
            throw .missingExtension("XTEST")
        }
        // XTest requests from this client must never be suspended by another client's grab:
        // the phone's release must get through whatever the desktop is doing.
        XTestGrabControl(opened, 1)
        let connection = XGetXCBConnection(opened)
        guard let connection, xcb_get_extension_data(connection, tb_xcb_test_extension())?.pointee.present == 1 else {
            close()
            throw .missingExtension("XTEST (through xcb)")
        }
        xcb = connection
    }

    deinit {
        assert(handle == nil, "XDisplay \(name) was not closed: call close() on every exit path")
    }

    /// The open `Display*`, for the wrappers in this module's other files.
    func display() throws(X11Error) -> OpaquePointer {
        guard let handle else { throw .closed }
        return handle
    }

    /// Whether the connection broke (the X server went away): nothing sent on it arrives any more.
    public var isLost: Bool { handle.map { XErrorHandlers.lostDisplays.contains($0) } ?? false }

    /// The size of the default screen in pixels.
    ///
    /// The corresponding C functions are `XDisplayWidth` and `XDisplayHeight`.
    public func screenSize() throws(X11Error) -> (width: Int32, height: Int32) {
        let dpy = try display()
        return (XDisplayWidth(dpy, screen), XDisplayHeight(dpy, screen))
    }

    /// The file descriptor of the connection, to wait on for errors and for the server going away.
    ///
    /// The corresponding C function is `XConnectionNumber`.
    public func connectionFileDescriptor() throws(X11Error) -> Int32 {
        XConnectionNumber(try display())
    }

    /// Moves the core pointer to an absolute position on the default screen, as if the user did.
    ///
    /// Through `fakeInput` (`xcb_test_fake_input`: MotionNotify, absolute, root None: the pointer's
    /// current screen, as `XTestFakeMotionEvent` with screen -1).
    public func fakeMotion(to point: PixelPoint) throws(X11Error) {
        try fakeInput(type: 6, detail: 0, x: point.x, y: point.y)
    }

    /// Moves the core pointer by a relative amount (not accelerated by the server).
    ///
    /// Through `fakeInput` (`xcb_test_fake_input`: MotionNotify, detail 1: relative, as
    /// `XTestFakeRelativeMotionEvent`).
    public func fakeRelativeMotion(dx: Int32, dy: Int32) throws(X11Error) {
        try fakeInput(type: 6, detail: 1, x: dx, y: dy)
    }

    /// Presses or releases a pointer button of the core pointer.
    ///
    /// Through `fakeInput` (`xcb_test_fake_input`: ButtonPress or ButtonRelease, as `XTestFakeButtonEvent`).
    public func fakeButton(_ button: PointerButton, pressed: Bool) throws(X11Error) {
        try fakeInput(type: pressed ? 4 : 5, detail: button.rawValue, x: 0, y: 0)
    }

    /// One XTest input request (core device, no delay), made on the display's xcb connection: it waits in
    /// xcb's buffer for the next flush (`flushXTest`, or Xlib's `flush`, `sync`). Its protocol errors come
    /// as the Xlib ones do, through Xlib's error handler (`XErrorHandlers`), when Xlib next reads. On a
    /// lost connection it sends nothing, as Xlib's calls then do.
    ///
    /// The corresponding C function is `xcb_test_fake_input` (the `FakeInput` request of
    /// `XTestFakeMotionEvent`, `XTestFakeButtonEvent` and `XTestFakeKeyEvent`; coordinates are 16-bit,
    /// cut as Xlib cuts them).
    private func fakeInput(type: UInt8, detail: UInt8, x: Int32, y: Int32) throws(X11Error) {
        _ = try display()
        guard let xcb, !isLost else { return }
        if xcbReadMark == nil { xcbReadMark = bytesRead(xcb) }
        let cookie = xcb_test_fake_input(xcb, type, detail, 0, 0, Int16(truncatingIfNeeded: x), Int16(truncatingIfNeeded: y), 0)
        guard cookie.sequence != 0 else {
            // The connection is broken: Xlib learns it when it next reads.
            xcbReadUnseen = true
            throw .requestFailed("xcb_test_fake_input")
        }
    }

    /// How many bytes xcb has read from the server so far.
    ///
    /// The corresponding C function is `xcb_total_read`.
    private func bytesRead(_ xcb: OpaquePointer) -> UInt64 {
        xcb_total_read(xcb)
    }

    /// Sends the XTest requests made since the last flush (`fakeMotion` and its kin, xcb's) without
    /// reading the connection, where `flush()` (`XFlush`) also reads it, twice, every time. Only for a
    /// batch whose last requests are those: Xlib's own buffer is then empty (xcb took the connection back
    /// for the first of them, and Xlib sent what it held); after any other request, `flush()`.
    /// If xcb read something from the server meanwhile (it reads while it waits to write), it is in
    /// xcb's queue, where the descriptor does not signal it: `hasQueuedEvents()` says so until Xlib reads.
    ///
    /// The corresponding C function is `xcb_flush` (and `bytesRead`'s).
    public func flushXTest() throws(X11Error) {
        _ = try display()
        guard let xcb, !isLost else { return }
        if xcb_flush(xcb) <= 0 { xcbReadUnseen = true }  // broken: Xlib learns it when it reads
        if let mark = xcbReadMark, bytesRead(xcb) != mark { xcbReadUnseen = true }
        xcbReadMark = nil
    }

    /// The keycode that carries `keysym` in the current keyboard map.
    ///
    /// Through `anyKeyCode(for:)` (`XKeysymToKeycode`).
    public func keyCode(for keysym: TouchCore.KeySym) throws(X11Error) -> KeyCode {
        let code = try anyKeyCode(for: keysym)
        guard code != 0 else { throw .requestFailed("XKeysymToKeycode(\(keysym)): no key carries it") }
        return KeyCode(rawValue: code)
    }

    /// The first keycode that carries `keysym` in the current keyboard map, or 0 when none does.
    ///
    /// The corresponding C function is `XKeysymToKeycode`.
    func anyKeyCode(for keysym: TouchCore.KeySym) throws(X11Error) -> UInt8 {
        XKeysymToKeycode(try display(), UInt(keysym.rawValue))
    }

    /// The highest keycode that carries no symbol at all now (read from the server at this call, never
    /// remembered: the user may map one at any time); nil when every key has one.
    ///
    /// The corresponding C function is `XDisplayKeycodes` (and `keyboardMapping`'s).
    public func emptyKeyCode() throws(X11Error) -> KeyCode? {
        let dpy = try display()
        var minCode: Int32 = 0, maxCode: Int32 = 0
        XDisplayKeycodes(dpy, &minCode, &maxCode)
        let (perCode, map) = try keyboardMapping(first: minCode, count: maxCode - minCode + 1)
        var found: KeyCode?
        for code in stride(from: maxCode, through: minCode, by: -1) {
            let base = Int(code - minCode) * perCode
            if (0..<perCode).allSatisfy({ map[base + $0] == 0 }) {
                found = KeyCode(rawValue: UInt8(code))
                break
            }
        }
        return found
    }

    /// The keysyms of `count` keycodes from `first`: `perCode` per keycode, `NoSymbol` (0) where a level
    /// has none.
    ///
    /// The corresponding C functions are `XGetKeyboardMapping` and `XFree`.
    private func keyboardMapping(first: Int32, count: Int32) throws(X11Error) -> (perCode: Int, keysyms: [UInt]) {
        let dpy = try display()
        var perCode: Int32 = 0
        guard count > 0, let map = XGetKeyboardMapping(dpy, UInt8(clamping: first), count, &perCode) else {
            throw .requestFailed("XGetKeyboardMapping")
        }
        defer { xFree(map) }
        let n = Int(count) * Int(max(0, perCode))
        return (Int(max(0, perCode)), (0..<n).map { UInt(map[$0]) })
    }

    /// Every keysym `code` carries now, all levels (trailing `NoSymbol`s included): what to give
    /// `setKeysyms` to put it back as it was.
    public func keysyms(of code: KeyCode) throws(X11Error) -> [UInt] {
        try keyboardMapping(first: Int32(code.rawValue), count: 1).keysyms
    }

    /// Puts `keysyms` on the levels of `code` (an empty list is one `NoSymbol`: no symbol at all).
    ///
    /// The corresponding C function is `XChangeKeyboardMapping`.
    public func setKeysyms(_ keysyms: [UInt], of code: KeyCode) throws(X11Error) {
        let dpy = try display()
        var symbols = keysyms.isEmpty ? [0] : keysyms
        XChangeKeyboardMapping(dpy, Int32(code.rawValue), Int32(symbols.count), &symbols, 1)
    }

    /// The atom named `name`, created if it does not exist yet.
    ///
    /// Through `internAtom` (`XInternAtom`).
    public func atom(_ name: String) throws(X11Error) -> UInt {
        let dpy = try display()
        _ = dpy
        let atom = try internAtom(name).rawValue
        guard atom != 0 else { throw .requestFailed("XInternAtom(\(name))") }
        return atom
    }

    /// The predefined atom CARDINAL (`XA_CARDINAL` in X11/Xatom.h, a cast macro Swift does not import).
    static let cardinal: UInt = 6

    /// The 32-bit values of the root window's property `atom` (type CARDINAL), or nil when it is not set.
    ///
    /// The corresponding C functions are `XGetWindowProperty` and `XFree`.
    public func rootCardinals(_ atom: UInt) throws(X11Error) -> [UInt32]? {
        let dpy = try display()
        var type: UInt = 0, format: Int32 = 0, count: UInt = 0, after: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        let status = XGetWindowProperty(dpy, try rootWindow().rawValue, atom, 0, 4096, 0, Self.cardinal,
                                        &type, &format, &count, &after, &data)
        defer { if let data { xFree(data) } }
        guard status == Success else { throw .requestFailed("XGetWindowProperty") }
        guard type == Self.cardinal, format == 32, let data else { return nil }
        // Format 32 comes as C longs, whatever their size.
        return data.withMemoryRebound(to: UInt.self, capacity: Int(count)) { longs in
            (0..<Int(count)).map { UInt32(truncatingIfNeeded: longs[$0]) }
        }
    }

    /// Sets the root window's property `atom` to `values` (type CARDINAL, format 32).
    ///
    /// The corresponding C function is `XChangeProperty`.
    public func setRootCardinals(_ atom: UInt, _ values: [UInt32]) throws(X11Error) {
        let dpy = try display()
        let root = try rootWindow().rawValue
        // Format 32 is passed as C longs.
        var longs = values.map { UInt($0) }
        _ = longs.withUnsafeMutableBytes { bytes in
            XChangeProperty(dpy, root, atom, Self.cardinal, 32, PropModeReplace,
                            bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(values.count))
        }
    }

    /// Deletes the root window's property `atom` (nothing if it is not set).
    ///
    /// The corresponding C function is `XDeleteProperty`.
    public func deleteRootProperty(_ atom: UInt) throws(X11Error) {
        let dpy = try display()
        XDeleteProperty(dpy, try rootWindow().rawValue, atom)
    }

    /// Presses or releases a key, as if the user did.
    ///
    /// Through `fakeInput` (`xcb_test_fake_input`: KeyPress or KeyRelease, as `XTestFakeKeyEvent`).
    public func fakeKey(_ code: KeyCode, pressed: Bool) throws(X11Error) {
        try fakeInput(type: pressed ? 2 : 3, detail: code.rawValue, x: 0, y: 0)
    }

    /// Sends a request the server rejects: the release of keycode 0, below every keyboard's minimum
    /// keycode, which XTEST answers with BadValue. For the test of X error survival only
    /// (`serve --debug-x-error-every`, a hidden option); it presses and releases nothing.
    ///
    /// Through `fakeKey` (`xcb_test_fake_input`); its synchronous result is ignored (the error comes later).
    public func fakeRejectedRequest() throws(X11Error) {
        do { try fakeKey(KeyCode(rawValue: 0), pressed: false) } catch .requestFailed(_) {}
    }

    /// Sends every buffered request to the server without waiting.
    ///
    /// The corresponding C function is `XFlush`.
    public func flush() throws(X11Error) {
        XFlush(try display())
        // XFlush reads the connection, xcb's queue into Xlib's.
        xcbReadMark = nil
        xcbReadUnseen = false
    }

    /// Sends every buffered request and waits until the server has processed them all, so that every
    /// error they caused has reached the error handler.
    ///
    /// The corresponding C function is `XSync`.
    public func sync() throws(X11Error) {
        XSync(try display(), 0)
        xcbReadMark = nil
        xcbReadUnseen = false
    }

    /// The overlay's window, whose own map and restack events are not "another window" (0: none).
    var overlayWindow: UInt = 0

    /// Protocol errors reported since the last call, oldest first (at most `XErrorHandlers.capacity`;
    /// `dropped` counts the ones beyond that).
    public func takeErrors() -> (errors: [XProtocolError], dropped: Int) {
        XErrorHandlers.take()
    }

    /// Closes the connection. Requests still buffered are flushed first. Every window, pixmap and
    /// colormap made through it (an `Overlay`'s) must have been released before.
    ///
    /// The corresponding C function is `XCloseDisplay`.
    public func close() {
        guard let handle else { return }
        assert(liveResources == 0, "XDisplay \(name) closed with \(liveResources) windows, pixmaps or colormaps alive: destroy the Overlay first")
        XCloseDisplay(handle)
        XErrorHandlers.lostDisplays.removeAll { $0 == handle }
        self.handle = nil
        xcb = nil
    }
}

/// Frees memory Xlib returned (a keyboard map, an atom's name).
///
/// The corresponding C function is `XFree`.
func xFree(_ pointer: UnsafeMutableRawPointer) {
    XFree(pointer)
}
