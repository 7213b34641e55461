// The pointer buttons an output holds down: one value for every output (XTest's core pointer, a
// person's and a finger's master, uinput's pointer, the portal's), so that each release path reads the
// same record. Pure bookkeeping, no I/O; the keys an output holds are `KeyPresses`, likewise shared.

/// Pointer buttons held down, a bit per button (1...31; the bit of a button past 31 is its number
/// modulo 32, as X's button numbers never go past it).
public struct PressedButtons: Sendable, Equatable {
    public private(set) var bits: UInt32 = 0

    public init() {}

    @inline(__always) static func bit(_ button: PointerButton) -> UInt32 { UInt32(1) << UInt32(button.rawValue & 31) }

    public func holds(_ button: PointerButton) -> Bool { bits & Self.bit(button) != 0 }

    public var isEmpty: Bool { bits == 0 }

    /// Records a press or a release of `button`.
    public mutating func record(_ button: PointerButton, pressed: Bool) {
        if pressed { bits |= Self.bit(button) } else { bits &= ~Self.bit(button) }
    }

    /// The buttons held, lowest first.
    public var all: [PointerButton] {
        guard bits != 0 else { return [] }
        return (UInt8(1)...31).compactMap { bits & (UInt32(1) << UInt32($0)) != 0 ? PointerButton(rawValue: $0) : nil }
    }

    /// Forgets every button (they were released, or could not be).
    public mutating func removeAll() { bits = 0 }
}
