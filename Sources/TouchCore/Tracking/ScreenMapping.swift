// From the device's 12-bit points to screen pixels.

/// Maps a `DevicePoint` (already turned to the user's view) onto a rectangle of pixels, edge to edge: step 3
/// of `AbsoluteMapping`, onto the rectangle its fit chose in a monitor or the whole screen.
///
/// The formula is exact integer arithmetic, per axis:
///
/// ```
/// px = x0 + min(W - 1, rawX * W / 4094)
/// py = y0 + min(H - 1, rawY * H / 4094)
/// ```
///
/// (integer division, rounding down). Raw 0 (-1.0, the device's left/top edge) is the first pixel `x0`;
/// raw 4094 (+1.0, the right/bottom edge) and raw 4095 (one step past it) are clamped to the last pixel
/// `x0 + W - 1`; raw 2047 (0.0, the centre) is `x0 + W / 2`. Each pixel receives the same number of raw
/// values (±1), so no pixel column is favoured.
public struct ScreenMapping: Hashable, Sendable, CustomStringConvertible {
    /// The raw value that stands for +1.0, the far edge: `2 * DevicePoint.rawCentre`.
    public static let rawSpan: Int64 = 2 * Int64(DevicePoint.rawCentre)

    /// The top-left pixel of the rectangle, in screen coordinates.
    public let origin: PixelPoint
    /// The width of the rectangle in pixels, at least 1.
    public let width: Int32
    /// The height of the rectangle in pixels, at least 1.
    public let height: Int32

    /// A rectangle `width` × `height` pixels whose top-left pixel is (`x`, `y`).
    /// - Precondition: `width` and `height` are at least 1, and the rectangle fits in `Int32` coordinates.
    public init(x: Int32 = 0, y: Int32 = 0, width: Int32, height: Int32) {
        precondition(width >= 1 && height >= 1, "ScreenMapping needs a non-empty rectangle")
        precondition(Int64(x) + Int64(width) - 1 <= Int64(Int32.max)
            && Int64(y) + Int64(height) - 1 <= Int64(Int32.max), "ScreenMapping rectangle overflows Int32")
        origin = PixelPoint(x: x, y: y)
        self.width = width
        self.height = height
    }

    /// The pixel under `point` (see the type's documentation for the formula).
    @inlinable
    public func pixel(for point: DevicePoint) -> PixelPoint {
        PixelPoint(
            x: Self.map(point.rawX, origin: origin.x, extent: width),
            y: Self.map(point.rawY, origin: origin.y, extent: height))
    }

    @inlinable
    static func map(_ raw: UInt16, origin: Int32, extent: Int32) -> Int32 {
        let n = Int64(extent)
        let offset = Swift.min(n - 1, Int64(raw) * n / rawSpan)
        return Int32(truncatingIfNeeded: Int64(origin) + offset)
    }

    public var description: String { "\(width)x\(height)+\(origin.x)+\(origin.y)" }
}
