// The packet model: what one datagram from the phone says, after decoding.
// Standard library only. Decoders in TouchWire fill a `TouchPacket`; the core consumes it.

/// A point in the device's own portrait frame, as the 12-bit fixed-precision numbers of the wire.
///
/// Each axis is `raw` in 0...4095 and stands for `raw / 2047 - 1`, so 0 is -1.0 (left or top edge),
/// 2047 is 0.0 (centre) and 4095 is +1.000489 (one step past the right or bottom edge).
public struct DevicePoint: Hashable, Sendable, CustomStringConvertible {
    /// The largest raw value two base64 digits can carry (`//`).
    public static let rawMax: UInt16 = 4095
    /// The raw value of 0.0, the centre of the screen (`f/`).
    public static let rawCentre: UInt16 = 2047
    /// One step of the fixed-precision scale is `1 / rawScale`.
    public static let rawScale: Double = 2047

    public var rawX: UInt16
    public var rawY: UInt16

    @inlinable
    public init(rawX: UInt16, rawY: UInt16) {
        self.rawX = rawX
        self.rawY = rawY
    }

    /// X in -1...+1.000489, 0 at the centre, +X to the right of the portrait-held device.
    @inlinable public var x: Double { Double(rawX) / Self.rawScale - 1 }
    /// Y in -1...+1.000489, 0 at the centre, +Y down the portrait-held device.
    @inlinable public var y: Double { Double(rawY) / Self.rawScale - 1 }

    public static let centre = DevicePoint(rawX: rawCentre, rawY: rawCentre)

    public var description: String { "(\(rawX),\(rawY))" }
}

/// What one `Touches` event says about a slot.
public enum SlotUpdate: Hashable, Sendable {
    /// The finger in the slot is at this point (a slot that was free has begun).
    case position(DevicePoint)
    /// `====`: the touch ended (the finger lifted).
    case ended
    /// `=0=0`: the touch was cancelled by the system (e.g. a phone call).
    case cancelled
}

/// One 5-character event of the `Touches` string.
public struct TouchEvent: Hashable, Sendable, CustomStringConvertible {
    /// The slot index, 0...9. A new contact takes the lowest free slot.
    public var slot: UInt8
    public var update: SlotUpdate

    @inlinable
    public init(slot: UInt8, update: SlotUpdate) {
        self.slot = slot
        self.update = update
    }

    public var description: String {
        switch update {
        case .position(let p): return "\(slot)@\(p)"
        case .ended: return "\(slot) ended"
        case .cancelled: return "\(slot) cancelled"
        }
    }
}

/// The state of one slot in `TouchState`.
public enum SlotState: Hashable, Sendable {
    /// `====`: no touch in this slot.
    case free
    /// `=0=0`: the touch in this slot was cancelled.
    case cancelled
    /// A finger is down at this point.
    case down(DevicePoint)

    @inlinable public var point: DevicePoint? {
        if case .down(let p) = self { return p }
        return nil
    }
}

/// The `TouchState` field: the latest state of all ten slots, slot 0 first.
public struct TouchState: Equatable, Sendable {
    public static let slotCount = 10
    @usableFromInline var storage: InlineArray<10, SlotState>

    @inlinable
    public init() { storage = InlineArray(repeating: .free) }

    @inlinable
    public subscript(slot: Int) -> SlotState {
        get { storage[slot] }
        set { storage[slot] = newValue }
    }

    public static func == (a: TouchState, b: TouchState) -> Bool {
        for i in 0..<slotCount where a.storage[i] != b.storage[i] { return false }
        return true
    }
}

/// iOS `UIDeviceOrientation`, as sent in the `Orientation` field.
public enum DeviceOrientation: UInt8, Sendable, CaseIterable {
    case unknown = 0
    case portrait = 1
    case portraitUpsideDown = 2
    /// Home button on the right: device +Y points to the user's right, +X points up.
    case landscapeLeft = 3
    /// Home button on the left: device +Y points to the user's left, +X points down.
    case landscapeRight = 4
    case faceUp = 5
    case faceDown = 6
}

/// Everything touchbridge uses from one PoseAI packet.
///
/// A decoder keeps one `TouchPacket` and refills it for every datagram: `events` keeps its capacity,
/// so decoding allocates nothing once warm. Do not keep a copy across decodes on the hot path
/// (copy-on-write would then allocate).
public struct TouchPacket: Sendable {
    /// The `Touches` events in the order they happened; empty when the field is absent or empty.
    public var events: [TouchEvent]
    /// Whether the packet had a `Touches` field.
    public var hasTouches: Bool
    /// The `TouchState` field, when present.
    public var state: TouchState?
    /// The `Orientation` field, when present. Integral values outside 0...6 read as `.unknown`.
    public var orientation: DeviceOrientation?
    /// Whether the packet had a `sessionUUID` field (the phone's hello carries one).
    public var hasSessionUUID: Bool

    public init(eventCapacity: Int = 64) {
        events = []
        events.reserveCapacity(eventCapacity)
        hasTouches = false
        state = nil
        orientation = nil
        hasSessionUUID = false
    }

    /// Empties the packet for the next decode, keeping the event buffer's capacity.
    @inlinable
    public mutating func reset() {
        events.removeAll(keepingCapacity: true)
        hasTouches = false
        state = nil
        orientation = nil
        hasSessionUUID = false
    }

    /// A hello: the phone announcing itself (a `sessionUUID` and no touch data), to be answered
    /// with a handshake.
    @inlinable
    public var isHello: Bool { hasSessionUUID && !hasTouches && state == nil }
}
