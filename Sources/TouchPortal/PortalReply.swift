// The RemoteDesktop portal's words, pure: request paths, device types, what a Response says. No I/O.

/// A value read from an `a{sv}`.
public enum DBusValue: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case uint32(UInt32)
    case bool(Bool)
    /// A pair of int32 (`(ii)`: a stream's position or size).
    case pair(Int32, Int32)
    /// The ScreenCast portal's streams (`a(ua{sv})`).
    case streams([PortalStream])
    /// A value of another type, skipped: its signature.
    case other(signature: String)

    /// The text of a string or object path.
    public var text: String? {
        switch self {
        case .string(let s), .objectPath(let s): return s
        default: return nil
        }
    }
}

/// One stream a ScreenCast session shares: its PipeWire node, and the monitor's place in the
/// compositor's logical layout when the portal says it.
public struct PortalStream: Sendable, Equatable, CustomStringConvertible {
    public var node: UInt32
    public var position: (x: Int32, y: Int32)?
    public var size: (width: Int32, height: Int32)?

    public init(node: UInt32, position: (x: Int32, y: Int32)? = nil, size: (width: Int32, height: Int32)? = nil) {
        self.node = node
        self.position = position
        self.size = size
    }

    public static func == (a: PortalStream, b: PortalStream) -> Bool {
        a.node == b.node && a.position?.x == b.position?.x && a.position?.y == b.position?.y
            && a.size?.width == b.size?.width && a.size?.height == b.size?.height
    }

    public var description: String {
        let place = size.map { s in "\(s.width)x\(s.height)" + (position.map { "+\($0.x)+\($0.y)" } ?? "") } ?? "size unsaid"
        return "node \(node) (\(place))"
    }
}

/// The portal's device types (`types` of SelectDevices, `devices` of Start's results, the
/// `AvailableDeviceTypes` property): a bit mask.
public struct PortalDevices: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let keyboard = PortalDevices(rawValue: 1)
    public static let pointer = PortalDevices(rawValue: 2)
    public static let touchscreen = PortalDevices(rawValue: 4)
    public static let all: PortalDevices = [.keyboard, .pointer, .touchscreen]

    public var description: String {
        let names = [(PortalDevices.keyboard, "keyboard"), (.pointer, "pointer"), (.touchscreen, "touchscreen")]
            .filter { contains($0.0) }.map(\.1)
        return names.isEmpty ? "nothing" : names.joined(separator: ", ")
    }
}

/// What one `org.freedesktop.portal.Request.Response` said.
public enum PortalResponse: Equatable, Sendable {
    /// 0: the request succeeded, with these results.
    case success([String: DBusValue])
    /// 1: the user cancelled (said no in the dialog).
    case cancelled
    /// 2: the interaction ended some other way (the portal or the compositor refused).
    case ended
    /// Any other code.
    case unknown(UInt32)

    public init(code: UInt32, results: [String: DBusValue]) {
        switch code {
        case 0: self = .success(results)
        case 1: self = .cancelled
        case 2: self = .ended
        default: self = .unknown(code)
        }
    }
}

/// Why the portal gave no input: what the log says, and whether the user (or the portal) said no,
/// which exits with its own status.
public struct PortalFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The user said no, or the portal refused the request (Response 1 or 2).
        case refused
        /// No portal, no RemoteDesktop interface, no libei, no session bus, or a failure on the way.
        case unavailable
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// The pure rules of the portal's conversation.
public enum PortalRules {
    /// The Request object a call with `handleToken` gets: `/org/freedesktop/portal/desktop/request/`,
    /// the caller's unique name without its ':' and with '.' as '_', then the token. Known before the
    /// call, so the Response is subscribed to first and cannot be missed.
    public static func requestPath(uniqueName: String, handleToken: String) -> String {
        let sender = String(uniqueName.drop { $0 == ":" }.map { $0 == "." ? "_" : $0 })
        return "/org/freedesktop/portal/desktop/request/\(sender)/\(handleToken)"
    }

    /// The devices to ask for: keyboard, pointer and touchscreen, as far as the portal has them (0 or
    /// an unreadable property: ask for keyboard and pointer, which every version has).
    public static func devicesToAsk(available: UInt32?) -> PortalDevices {
        guard let available, available != 0 else { return [.keyboard, .pointer] }
        return PortalDevices(rawValue: available).intersection(.all)
    }

    /// What a Response means for step `step` ("CreateSession", "SelectDevices", "Start"): its results,
    /// or why it ended.
    public static func results(of response: PortalResponse, step: String) -> Result<[String: DBusValue], PortalFailure> {
        switch response {
        case .success(let results): return .success(results)
        case .cancelled:
            return .failure(PortalFailure(.refused, "the RemoteDesktop portal's \(step) was cancelled (response 1): the user said no to remote control of this desktop; run touchbridge again to be asked again, or give the user write access to /dev/uinput (the README's udev rule)"))
        case .ended:
            return .failure(PortalFailure(.refused, "the RemoteDesktop portal ended \(step) (response 2): the desktop refused remote control (the dialog was closed, or the compositor does not allow it)"))
        case .unknown(let code):
            return .failure(PortalFailure(.refused, "the RemoteDesktop portal answered \(step) with response \(code), which means neither success nor cancel"))
        }
    }

    /// The session's object path in CreateSession's results (`session_handle`; xdg-desktop-portal sends
    /// it as a string, the documentation says an object path: either is taken).
    public static func sessionHandle(_ results: [String: DBusValue]) -> Result<String, PortalFailure> {
        guard let handle = results["session_handle"]?.text, handle.hasPrefix("/") else {
            return .failure(PortalFailure(.unavailable, "the RemoteDesktop portal's CreateSession gave no session_handle"))
        }
        return .success(handle)
    }

    /// What Start granted: the devices (nil when not said) and the restore token (nil when none).
    public static func started(_ results: [String: DBusValue]) -> (devices: PortalDevices?, restoreToken: String?) {
        var devices: PortalDevices?
        if case .uint32(let d)? = results["devices"] { devices = PortalDevices(rawValue: d) }
        let token = results["restore_token"]?.text.flatMap { $0.isEmpty ? nil : $0 }
        return (devices, token)
    }

    /// The ScreenCast portal's `SelectSources` options for the live view: one monitor, the cursor drawn
    /// into the frames when the portal offers that (`AvailableCursorModes` bit 2; else unsaid: hidden).
    public static func screenSources(cursorModes: UInt32?) -> [(String, DBusArgument)] {
        var options: [(String, DBusArgument)] = [("types", .uint32(1)), ("multiple", .bool(false))]
        if let cursorModes, cursorModes & 2 != 0 { options.append(("cursor_mode", .uint32(2))) }
        return options
    }

    /// The stream Start's results share (`streams`), when there is one; the first when several.
    public static func sharedStream(_ results: [String: DBusValue]) -> PortalStream? {
        if case .streams(let streams)? = results["streams"] { return streams.first }
        return nil
    }

    /// Whether a restore token read from the file can be sent: printable ASCII, not empty, at most 256
    /// bytes (the portal makes UUIDs); anything else is ignored (and replaced after the next dialog).
    public static func isUsableToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 256 && token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }
}
