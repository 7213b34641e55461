// TEMPORARY stub, replaced by the real core.
public struct SourceAddress: Hashable, Sendable, CustomStringConvertible {
    public init(ipv4: UInt32, port: UInt16) {}
    public init?(ipv6: [UInt8], port: UInt16) {}
    public var description: String { "" }
}
public struct CIDR: Sendable { public init?(parsing: String) {} }
public struct AllowList: Sendable {
    public static let defaultPrivate = AllowList([])
    public init(_ r: [CIDR]) {}
    public func allows(_ a: SourceAddress) -> Bool { true }
}
public struct SenderSession {
    public enum Admission { case accepted(isNewSender: Bool), busy(firstRefusal: Bool) }
    public init() {}
    public mutating func admit(_ s: SourceAddress, at now: Instant) -> Admission { .accepted(isNewSender: false) }
}
public struct ScreenMapping: Sendable { public init(x: Int32, y: Int32, width: Int32, height: Int32) {} }
public struct BridgeCore {
    public struct Configuration: Sendable { public var idleRelease: Interval; public var screen: ScreenMapping
        public init(idleRelease: Interval, screen: ScreenMapping) { self.idleRelease = idleRelease; self.screen = screen } }
    public let configuration: Configuration
    public init(configuration: Configuration) { self.configuration = configuration }
    public mutating func handle(_ packet: TouchPacket, at now: Instant, into actions: inout [OutputAction]) {}
    public var nextDeadline: Instant? { nil }
    public mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {}
    public mutating func releaseAll(into actions: inout [OutputAction]) {}
}
