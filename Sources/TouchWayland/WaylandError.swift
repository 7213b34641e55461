/// What can go wrong talking to a Wayland compositor.
public enum WaylandError: Error, Equatable, CustomStringConvertible {
    /// `wl_display_connect` failed: no compositor at that socket (the name, and why).
    case cannotConnect(String, String)
    /// A request could not be made (the C function named).
    case requestFailed(String)
    /// The connection broke (the compositor quit, or sent a protocol error): why.
    case connectionLost(String)
    /// The compositor's keymap could not be read or compiled.
    case keymap(String)
    /// The connection is closed.
    case closed

    public var description: String {
        switch self {
        case .cannotConnect(let name, let why):
            return "cannot connect to the Wayland compositor at \"\(name)\" (\(why); is WAYLAND_DISPLAY right, and XDG_RUNTIME_DIR?)"
        case .requestFailed(let request): return "Wayland request \(request) failed"
        case .connectionLost(let why): return "the Wayland connection was lost (\(why))"
        case .keymap(let why): return "the compositor's keymap: \(why)"
        case .closed: return "the Wayland connection is closed"
        }
    }
}
