// One phone at a time.

/// Decides which source drives the pointer: one sender at a time, like the public PoseAI receivers. Another
/// source is refused while the current sender is live, and takes over once the current sender has been
/// silent for `takeoverSilence`.
///
/// A sender is one `SourceAddress`: address and port (an IPv4 source and its IPv4-mapped IPv6 form are the
/// same). The allow-list check is separate: the shell does it first and never admits a source it refuses.
///
/// ```
///               admit(a) / accepted(new)
///   ┌──────┐ ───────────────────────────► ┌─────────────┐ ─┐ admit(a) / accepted(not new)
///   │ idle │                              │ serving(a)  │ ◄┘ admit(b), a live / busy
///   └──────┘ ◄─────────────────────────── └─────────────┘ ─┐ admit(b), a silent ≥ takeoverSilence
///                       end()                  ▲           │   / accepted(new), serving(b)
///                                              └───────────┘
/// ```
public struct SenderSession: Sendable {
    /// The answer to `admit`.
    public enum Admission: Hashable, Sendable {
        /// The source is the sender: handle its packet. `isNewSender` is true when it has just become the
        /// sender (first sender, takeover, or first packet after `end()`): the shell then releases
        /// everything the previous sender held and answers the hello.
        case accepted(isNewSender: Bool)
        /// Another sender is live: drop the packet. (The Bridge logs refusals through a `DropLog`: at
        /// most one line per 10 s, however many sources are refused.)
        case busy
    }

    /// How long the current sender must be silent (no admitted datagram) before another source may take
    /// over. Default 10 s, as in the public receivers.
    public var takeoverSilence: Interval

    /// Where the session is.
    private enum State: Sendable {
        /// No sender: the first source admitted becomes the sender.
        case idle
        /// `sender` drives the pointer; its last admitted datagram arrived at `lastSeen`.
        case serving(sender: SourceAddress, lastSeen: Instant)
    }

    private var state: State = .idle

    /// An idle session.
    public init(takeoverSilence: Interval = .seconds(10)) {
        self.takeoverSilence = takeoverSilence
    }

    /// The current sender, if any (it may be silent).
    public var sender: SourceAddress? {
        if case .serving(let sender, _) = state { return sender }
        return nil
    }

    /// When the current sender's last datagram was admitted.
    public var lastSeen: Instant? {
        if case .serving(_, let lastSeen) = state { return lastSeen }
        return nil
    }

    /// Decides about one datagram from `source` that arrived at `now`. Allocates nothing.
    public mutating func admit(_ source: SourceAddress, at now: Instant) -> Admission {
        switch state {
        case .idle:
            state = .serving(sender: source, lastSeen: now)
            return .accepted(isNewSender: true)

        case .serving(let sender, let lastSeen):
            if source == sender {
                state = .serving(sender: sender, lastSeen: now)
                return .accepted(isNewSender: false)
            }
            if now - lastSeen >= takeoverSilence {
                state = .serving(sender: source, lastSeen: now)
                return .accepted(isNewSender: true)
            }
            return .busy
        }
    }

    /// Ends the session (the sender said goodbye, or the shell dropped it): the next source admitted becomes
    /// the sender at once.
    public mutating func end() {
        state = .idle
    }
}
