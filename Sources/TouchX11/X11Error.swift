/// Everything that can go wrong talking to the X server, with the names of the X requests involved.
public enum X11Error: Error, Equatable, CustomStringConvertible {
    /// `XOpenDisplay` returned NULL: no server at that name, or access refused.
    case cannotOpenDisplay(String)
    /// The server lacks an extension touchbridge needs (`XTEST`, `XInputExtension`).
    case missingExtension(String)
    /// A library loaded at run time is not there (the live view's XDamage and TurboJPEG): why, and what
    /// to install.
    case missingLibrary(String)
    /// A request returned failure synchronously (the C function returned 0/False).
    case requestFailed(String)
    /// An asynchronous protocol error the server reported (from the error handler).
    case protocolError(XProtocolError)
    /// The connection was closed; no more requests can be made.
    case closed

    public var description: String {
        switch self {
        case .cannotOpenDisplay(let name):
            return "cannot open X display \"\(name)\" (is the X server running, and is DISPLAY/XAUTHORITY right?)"
        case .missingExtension(let name):
            return "the X server lacks the \(name) extension, which touchbridge needs"
        case .missingLibrary(let problem):
            return problem
        case .requestFailed(let request):
            return "X request \(request) failed"
        case .protocolError(let error):
            return error.description
        case .closed:
            return "the X connection is closed"
        }
    }
}

/// One X protocol error as delivered to the error handler (`XErrorEvent`).
public struct XProtocolError: Equatable, Sendable, CustomStringConvertible {
    /// The error code (`BadValue` = 2, `BadWindow` = 3, ...).
    public var code: UInt8
    /// The major opcode of the failed request (an extension's opcode for extension requests).
    public var requestCode: UInt8
    /// The minor opcode (the extension's request number).
    public var minorCode: UInt8
    /// The resource the request named, if any.
    public var resourceID: UInt
    /// The request's sequence number.
    public var serial: UInt
    /// Xlib's text for `code` (`XGetErrorText`).
    public var text: String

    public var description: String {
        "X error \(code) (\(text)) from request \(requestCode).\(minorCode), resource 0x\(String(resourceID, radix: 16)), serial \(serial)"
    }
}

extension X11Error {
    /// A small dense number per kind of error (0...4), for counting and rate-limiting log lines (a missing
    /// library counts with the missing extensions: something this machine lacks).
    public var kindIndex: Int {
        switch self {
        case .cannotOpenDisplay: return 0
        case .missingExtension, .missingLibrary: return 1
        case .requestFailed: return 2
        case .protocolError: return 3
        case .closed: return 4
        }
    }
}
