// One phone at a time.

/// Who sends: an address and port on one transport. The transport is part of who a sender is: a page's
/// WebSocket, the PoseAI stream and the TUIO stream are three senders even from one address and port
/// number (a UDP datagram can carry any source port, the page's TCP one included, so a datagram is never
/// the page). Two words and a byte: comparing and copying one allocates nothing.
public struct Sender: Hashable, Sendable, CustomStringConvertible {
    /// The address and port the input came from (an IPv4 source and its IPv4-mapped IPv6 form are the same).
    public var address: SourceAddress
    /// The transport it came on.
    public var transport: Transport

    @inlinable
    public init(_ address: SourceAddress, via transport: Transport) {
        self.address = address
        self.transport = transport
    }

    /// Whether datagrams carry its input (PoseAI or TUIO over UDP), not the page's WebSocket.
    @inlinable
    public var isDatagram: Bool { transport != .web }

    /// `192.168.1.2:50000` for the PoseAI stream, else with the transport: `192.168.1.2:50000 (web page)`.
    /// Allocates: for logs only.
    public var description: String { transport == .poseAI ? "\(address)" : "\(address) (\(transport))" }
}

/// Decides which source drives the pointer: one sender at a time, like the public PoseAI receivers. Another
/// source is refused while the current sender is live, and takes over once the current sender has shown no
/// activity for `takeoverSilence`.
///
/// A sender is a `Sender`: address, port and transport. The allow-list check is separate: the shell does
/// it first and never admits a source it refuses.
///
/// Activity is what keeps the session: `admit` says whether an input is the sender's, and only `renew`
/// (the Bridge calls it for an input that moved, pressed, changed something or has a finger down) moves
/// `lastActive` on. An input that changes nothing (an empty PoseAI packet, the same surface again) is
/// still the sender's, but holds the session no longer: another source takes over `takeoverSilence`
/// after the last activity. Becoming the sender counts as activity.
///
/// ```
///               admit(a) / accepted(new), lastActive = now
///   ┌──────┐ ───────────────────────────► ┌─────────────┐ ─┐ admit(a) / accepted(not new); renew / lastActive = now
///   │ idle │                              │ serving(a)  │ ◄┘ admit(b), a active within takeoverSilence / busy
///   └──────┘ ◄─────────────────────────── └─────────────┘ ─┐ admit(b), a inactive ≥ takeoverSilence
///                       end()                  ▲           │   / accepted(new), serving(b)
///                                              └───────────┘
/// ```
public struct SenderSession: Sendable {
    /// The answer to `admit`.
    public enum Admission: Hashable, Sendable {
        /// The source is the sender: handle its input. `isNewSender` is true when it has just become the
        /// sender (first sender, takeover, or first input after `end()`): the shell then releases
        /// everything the previous sender held and answers the hello.
        case accepted(isNewSender: Bool)
        /// Another sender is live: drop the input. (The Bridge logs refusals through a `DropLog`: at
        /// most one line per 10 s, however many sources are refused.)
        case busy
    }

    /// How long the current sender must show no activity before another source may take over. Default
    /// 10 s, as in the public receivers.
    public var takeoverSilence: Interval

    /// Where the session is.
    private enum State: Sendable {
        /// No sender: the first source admitted becomes the sender.
        case idle
        /// `sender` drives the pointer; its last activity was at `lastActive`.
        case serving(sender: Sender, lastActive: Instant)
    }

    private var state: State = .idle

    /// An idle session.
    public init(takeoverSilence: Interval = .seconds(10)) {
        self.takeoverSilence = takeoverSilence
    }

    /// The current sender, if any (it may be inactive).
    public var sender: Sender? {
        if case .serving(let sender, _) = state { return sender }
        return nil
    }

    /// When the current sender last showed activity (or became the sender).
    public var lastActive: Instant? {
        if case .serving(_, let lastActive) = state { return lastActive }
        return nil
    }

    /// Decides about one input from `source` that arrived at `now`; does not renew the session (`renew`
    /// does, for activity). Allocates nothing.
    public mutating func admit(_ source: Sender, at now: Instant) -> Admission {
        switch state {
        case .idle:
            state = .serving(sender: source, lastActive: now)
            return .accepted(isNewSender: true)

        case .serving(let sender, let lastActive):
            if source == sender { return .accepted(isNewSender: false) }
            if now - lastActive >= takeoverSilence {
                state = .serving(sender: source, lastActive: now)
                return .accepted(isNewSender: true)
            }
            return .busy
        }
    }

    /// The sender's input just admitted was activity: the session is held `takeoverSilence` from `now`.
    public mutating func renew(at now: Instant) {
        guard case .serving(let sender, let lastActive) = state else { return }
        state = .serving(sender: sender, lastActive: max(lastActive, now))
    }

    /// Ends the session (the sender said goodbye, or the shell dropped it): the next source admitted becomes
    /// the sender at once.
    public mutating func end() {
        state = .idle
    }
}
