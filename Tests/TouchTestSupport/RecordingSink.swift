// The one `TouchSink` of the adapter tests: the real Bridge behind it, keeping what arrived and what the
// Bridge decided for the test to read (no X: nothing is performed).
import TouchCore

public final class RecordingSink: TouchSink {
    public var bridge = Bridge(configuration: .init(screen: ScreenMapping(width: 1920, height: 1080)))
    public var effects = BridgeEffects()
    /// Every action the Bridge decided, in order.
    public private(set) var actions: [OutputAction] = []
    /// The transport of every packet, in order.
    public private(set) var transports: [Transport] = []
    /// What arrived, one line each in order: a packet's events, `command …`, `disconnected`.
    public private(set) var applied: [String] = []

    public init() {
        bridge.start(screen: PixelRect(x: 0, y: 0, width: 1920, height: 1080), monitors: [], at: Instant(nanoseconds: 0), into: &effects)
    }

    public func packet(_ packet: TouchPacket, from source: SourceAddress, via transport: Transport, at now: Instant) -> BridgeReply? {
        applied.append(packet.events.map(\.description).joined(separator: " "))
        transports.append(transport)
        effects.clear()
        bridge.packet(packet, from: source, via: transport, at: now, into: &effects)
        senderWatchers.hand(bridge.sender)
        actions += effects.actions
        afterPacket?(self)
        return effects.reply
    }

    /// Called at the end of each `packet` call, on the caller's thread (a test's hook into the moment
    /// after the Bridge and the sender's watchers took a packet).
    public var afterPacket: ((RecordingSink) -> Void)?

    public func command(_ command: WebCommand, from source: SourceAddress, at now: Instant) -> BridgeReply? {
        applied.append("command \(command)")
        effects.clear()
        bridge.command(command, from: source, at: now, into: &effects)
        senderWatchers.hand(bridge.sender)
        actions += effects.actions
        return effects.reply
    }

    public func sourceGone(_ source: SourceAddress, at now: Instant) {
        applied.append("disconnected")
        effects.clear()
        bridge.sourceGone(source, at: now, into: &effects)
        senderWatchers.hand(bridge.sender)
        actions += effects.actions
    }

    private var senderWatchers = SenderWatchers()

    public func watchSender(_ watcher: any SenderWatcher) { senderWatchers.add(watcher, current: bridge.sender) }
}
