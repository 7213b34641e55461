/// Where every transport hands what it decoded: the one owner of the `Bridge` (the shell's
/// `BridgeHost`). Transports only gate (allow-list, rate), decode, forward, and write what comes back.
/// Every call is made on the event loop that owns the Bridge.
public protocol TouchSink: AnyObject {
    /// A decoded packet from an allowed source; the packet is only valid during the call. Returns what
    /// to send back, if anything.
    func packet(_ packet: TouchPacket, from source: SourceAddress, via transport: Transport, at now: Instant) -> BridgeReply?
    /// A command of the web page.
    func command(_ command: WebCommand, from source: SourceAddress, at now: Instant) -> BridgeReply?
    /// The connection of `source` closed (the web page went away, or its socket dropped).
    func sourceGone(_ source: SourceAddress, at now: Instant)
    /// Tells `watcher` the current sender at once, then again after every step that changes it (a
    /// first sender, a takeover, the sender gone, shutdown). Held weakly: a watcher that goes away is
    /// forgotten.
    func watchSender(_ watcher: any SenderWatcher)
}

/// A transport that keeps the current sender to itself: the UDP gate gives the sender (address and
/// port) a rate budget of its own before it decodes, without asking the sink for every datagram. Told
/// by the sink, on the Bridge's event loop, only when the sender changes.
public protocol SenderWatcher: AnyObject {
    /// The sender is now `sender` (nil: none, or a sender whose input comes in no datagram: the page,
    /// whose WebSocket's port number a datagram may carry too, is never a UDP gate's sender).
    func senderChanged(to sender: SourceAddress?)
}

/// A sink's watchers of the sender, held weakly, and the sender last handed to them: `hand` after
/// every step costs one comparison, and tells them only when the sender changed. The watchers are the
/// UDP gates: they are told the sender's address only when its input comes in datagrams (PoseAI or
/// TUIO), and none while the page holds the session.
public struct SenderWatchers {
    private struct Weak {
        weak var watcher: (any SenderWatcher)?
    }

    private var watchers: [Weak] = []
    private var handed: SourceAddress?

    public init() {}

    /// What a UDP gate is told of `sender`: its address when it sends datagrams, else none.
    @inlinable
    public static func gateSender(_ sender: Sender?) -> SourceAddress? {
        guard let sender, sender.isDatagram else { return nil }
        return sender.address
    }

    /// Adds `watcher` and tells it `current`, the Bridge's sender now.
    public mutating func add(_ watcher: any SenderWatcher, current: Sender?) {
        watchers.removeAll { $0.watcher == nil }
        watchers.append(Weak(watcher: watcher))
        handed = Self.gateSender(current)
        watcher.senderChanged(to: handed)
    }

    /// After a step: tells every watcher `sender` when it is not the one they were told last.
    public mutating func hand(_ sender: Sender?) {
        let address = Self.gateSender(sender)
        guard address != handed else { return }
        handed = address
        for w in watchers { w.watcher?.senderChanged(to: address) }
    }
}
