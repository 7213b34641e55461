import TouchCore

/// A handler's half of the sender's own socket (`SenderSockets`, `UDPListener`): asks the listener for
/// it when a datagram the handler is passing to the sink makes its source the sender, and gives it back
/// when the sender changes to anyone else or goes. The sender is told by the sink (`SenderWatcher`),
/// during the `packet` call that changed it, so "the datagram in the sink's hands now" tells a sender
/// that came in through this listener from one that came in another way (another listener, a page, a
/// sender whose address and port this one shares): only the first gets a socket here.
struct SenderSocketFollower {
    private weak var sockets: (any SenderSockets)?
    /// The datagram in the sink's hands (set around the `packet` call), nil between datagrams.
    var handing: DatagramSource?
    /// The sender the listener has a socket for, as asked.
    private(set) var kept: SourceAddress?

    init() {}

    mutating func attached(_ sockets: any SenderSockets) {
        self.sockets = sockets
    }

    /// The sink's new sender.
    mutating func senderChanged(to sender: SourceAddress?) {
        if let sender, let handing, handing.address == sender {
            kept = sender
            sockets?.openSenderSocket(for: handing)
        } else if let kept, kept != sender {
            self.kept = nil
            sockets?.closeSenderSocket()
        }
    }
}
