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
    /// Whether `source` (address and port) is the current sender: it has a rate budget of its own.
    func isSender(_ source: SourceAddress) -> Bool
}
