// TEMPORARY stub, replaced by the real decoder.
import TouchCore
public struct PoseAIDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: UInt8, CaseIterable, Sendable { case notJSON }
    public var reason: Reason
    public var offset: Int
    public var description: String { "\(reason)" }
}
public struct PoseAIDecoder {
    public static let maxPacketBytes = 65_536
    public private(set) var packet = TouchPacket()
    public init() {}
    public mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(PoseAIDecodeError) {}
}
