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
    /// A character no key makes cannot be typed: the compositor offers no virtual keyboard protocol.
    case typingUnavailable

    public var description: String {
        switch self {
        case .cannotConnect(let name, let why):
            return "cannot connect to the Wayland compositor at \"\(name)\" (\(why); is WAYLAND_DISPLAY right, and XDG_RUNTIME_DIR?)"
        case .requestFailed(let request): return "Wayland request \(request) failed"
        case .connectionLost(let why): return "the Wayland connection was lost (\(why))"
        case .keymap(let why): return "the compositor's keymap: \(why)"
        case .closed: return "the Wayland connection is closed"
        case .typingUnavailable:
            return "the compositor offers no virtual keyboard (zwp_virtual_keyboard_v1; GNOME's Mutter has none) to type a character its keymap lacks"
        }
    }
}
