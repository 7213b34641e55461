import CX11

#if canImport(Glibc)
import Glibc
#endif

// Xlib's process-wide error handlers: protocol errors recorded for the display's owner, a lost connection
// made an ordinary condition.

/// touchbridge's X error handlers.
///
/// Xlib reports protocol errors through one process-wide callback, `XSetErrorHandler`, which cannot
/// capture context. The handler records each error here; the owner takes them with `take()`.
///
/// Why the unsynchronised globals below are safe: Xlib calls the error handler synchronously, from
/// inside an Xlib call (`XSync`, `XEventsQueued`, ...) made on the thread that made the call. All
/// Xlib calls of touchbridge are made by `XDisplay`, whose owner is a single thread (the event loop),
/// so the handler and `take()` never run concurrently. `displayName` is written before any handler
/// can run and only read by the I/O error handler, which ends the process.
public enum XErrorHandlers {
    /// How many unread errors are kept; more are counted in `dropped`.
    public static let capacity = 64

    nonisolated(unsafe) private static var pending: [XProtocolError] = []
    nonisolated(unsafe) private static var dropped = 0
    nonisolated(unsafe) static var displayName = ""
    nonisolated(unsafe) private static var installed = false

    /// The exit code after the X server went away.
    public static let lostServerExitCode: Int32 = 69

    /// The displays whose connections broke (the desktop's, the live view's), set by the I/O error exit
    /// handler (see `install`), each removed when that display is closed. Written and read on the owning
    /// thread only (Xlib calls the handler from inside the call that found the connection broken).
    nonisolated(unsafe) static var lostDisplays: [OpaquePointer] = []

    static func install() {
        guard !installed else { return }
        installed = true
        pending.reserveCapacity(capacity)
        // The corresponding C functions are `XSetErrorHandler` and `XSetIOErrorHandler`.
        _ = XSetErrorHandler { dpy, event in
            guard let event else { return 0 }
            XErrorHandlers.record(dpy, event.pointee)
            return 0
        }
        _ = XSetIOErrorHandler { _ in
            // The server went away (or the connection broke). Say so; the display's exit handler (see
            // `watchForLoss`) then marks it lost and returns, and the lifecycle decides what follows.
            let message = "touchbridge: lost the connection to the X server \(XErrorHandlers.displayName)\n"
            message.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
            return 0
        }
    }

    /// Makes a broken connection of `dpy` an ordinary condition instead of the end of the process:
    /// Xlib (1.7 and later) calls this exit handler after the I/O error handler, and when it returns,
    /// Xlib marks the display dead and every later call on it returns without doing anything.
    ///
    /// The corresponding C function is `XSetIOErrorExitHandler`.
    static func watchForLoss(_ dpy: OpaquePointer) {
        XSetIOErrorExitHandler(dpy, { dpy, _ in
            if let dpy, !XErrorHandlers.lostDisplays.contains(dpy) { XErrorHandlers.lostDisplays.append(dpy) }
        }, nil)
    }

    private static func record(_ dpy: OpaquePointer?, _ event: XErrorEvent) {
        guard pending.count < capacity else {
            dropped += 1
            return
        }
        var buffer = [CChar](repeating: 0, count: 128)
        if let dpy {
            // The corresponding C function is `XGetErrorText`.
            XGetErrorText(dpy, Int32(event.error_code), &buffer, Int32(buffer.count))
        }
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        pending.append(XProtocolError(
            code: event.error_code, requestCode: event.request_code, minorCode: event.minor_code,
            resourceID: event.resourceid, serial: event.serial, text: text))
    }

    static func take() -> (errors: [XProtocolError], dropped: Int) {
        defer {
            pending.removeAll(keepingCapacity: true)
            dropped = 0
        }
        return (pending, dropped)
    }
}
