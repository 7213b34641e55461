// The device frame turned to the user's view.

extension DeviceOrientation {
    /// Whether this orientation says which way up the phone is held (face up, face down and unknown
    /// do not: they keep the last known one).
    @inlinable public var isDefinite: Bool {
        switch self {
        case .portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight: return true
        case .unknown, .faceUp, .faceDown: return false
        }
    }

    /// Whether the user sees the phone's long side horizontally.
    @inlinable public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }

    /// Turns a point of the device's portrait frame into the user's view, in the same 12-bit raw units
    /// (X to the user's right, Y down as the user looks at the phone). With `m = 4094` (`2 * 2047`, so
    /// that the centre 2047 stays the centre) and `flip(r) = max(0, m - r)`:
    ///
    /// | orientation | user X | user Y | why |
    /// | --- | --- | --- | --- |
    /// | portrait (and face up/down/unknown) | x | y | |
    /// | portraitUpsideDown | flip(x) | flip(y) | both axes reversed |
    /// | landscapeLeft (home right) | y | flip(x) | device +Y points to the user's right, +X points up |
    /// | landscapeRight (home left) | flip(y) | x | device +Y points to the user's left, +X points down |
    ///
    /// (The raw value 4095, one step past the edge, flips to 0 like 4094.)
    @inlinable public func toUserView(_ p: DevicePoint) -> DevicePoint {
        @inline(__always) func flip(_ r: UInt16) -> UInt16 { r >= 4094 ? 0 : 4094 - r }
        switch self {
        case .portrait, .unknown, .faceUp, .faceDown: return p
        case .portraitUpsideDown: return DevicePoint(rawX: flip(p.rawX), rawY: flip(p.rawY))
        case .landscapeLeft: return DevicePoint(rawX: p.rawY, rawY: flip(p.rawX))
        case .landscapeRight: return DevicePoint(rawX: flip(p.rawY), rawY: p.rawX)
        }
    }

    /// Turns a motion of the device's portrait frame (any unit) into the user's view, by the same rule
    /// as `toUserView(_:)`.
    @inlinable public func toUserView(dx: Double, dy: Double) -> (dx: Double, dy: Double) {
        switch self {
        case .portrait, .unknown, .faceUp, .faceDown: return (dx, dy)
        case .portraitUpsideDown: return (-dx, -dy)
        case .landscapeLeft: return (dy, -dx)
        case .landscapeRight: return (-dy, dx)
        }
    }
}
