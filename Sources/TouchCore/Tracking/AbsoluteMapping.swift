// Absolute mode's whole mapping: device point → user's view → pixel of the chosen rectangle.

/// How the phone's surface is fitted onto the target rectangle.
public enum Fit: String, Hashable, Sendable, CaseIterable {
    /// Edge to edge on both axes: the phone's aspect is ignored (the default).
    case stretch
    /// The phone's aspect is kept: the largest rectangle of that aspect inside the target, centred
    /// (letterboxed or pillarboxed); the bars are not reachable.
    case contain
}

/// The shape of the phone's touch surface: its long side to its short side, e.g. 19.5:9.
///
/// Kept as exact integers in thousandths, so `19.5:9` is 19500:9000 and every computation with it
/// is integer arithmetic.
public struct SurfaceAspect: Hashable, Sendable, CustomStringConvertible {
    /// The long side, in thousandths (at least 1).
    public let long: UInt32
    /// The short side, in thousandths (at least 1, at most `long`).
    public let short: UInt32

    /// 19.5:9, a common phone shape (and the default).
    public static let phone = SurfaceAspect(long: 19_500, short: 9_000)

    /// An aspect from two sides in thousandths, in either order (the larger is the long side).
    /// - Precondition: both are at least 1.
    public init(long a: UInt32, short b: UInt32) {
        precondition(a >= 1 && b >= 1, "SurfaceAspect needs two positive sides")
        long = max(a, b)
        short = min(a, b)
    }

    /// Reads `A:B` with A and B decimal numbers greater than 0 and at most 1000, with at most three
    /// digits after the point (`19.5:9`, `16:9`, `4:3`); the order does not matter. Nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let a = Self.thousandths(parts[0]), let b = Self.thousandths(parts[1]) else {
            return nil
        }
        self.init(long: a, short: b)
    }

    private static func thousandths(_ text: Substring) -> UInt32? {
        var whole: UInt32 = 0, fraction: UInt32 = 0, fractionDigits = 0, digits = 0
        var seenPoint = false
        for c in text.utf8 {
            if c == UInt8(ascii: ".") {
                guard !seenPoint else { return nil }
                seenPoint = true
            } else if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                let d = UInt32(c - UInt8(ascii: "0"))
                digits += 1
                if seenPoint {
                    fractionDigits += 1
                    guard fractionDigits <= 3 else { return nil }
                    fraction = fraction * 10 + d
                } else {
                    whole = whole * 10 + d
                    guard whole <= 1000 else { return nil }
                }
            } else {
                return nil
            }
        }
        guard digits > 0 else { return nil }
        for _ in fractionDigits..<3 { fraction *= 10 }
        let value = whole * 1000 + fraction
        guard value >= 1 && value <= 1_000_000 else { return nil }
        return value
    }

    /// `long:short` with the sides in their shortest decimal form (`19.5:9`).
    public var description: String { "\(Self.decimal(long)):\(Self.decimal(short))" }

    private static func decimal(_ thousandths: UInt32) -> String {
        var text = String(thousandths / 1000)
        var fraction = thousandths % 1000
        if fraction != 0 {
            var digits = 3
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            let f = String(fraction)
            text += "." + String(repeating: "0", count: digits - f.count) + f
        }
        return text
    }
}

/// Absolute mode's mapping from a point of the device's portrait frame to a pixel, for every
/// orientation and fit. Three steps, each exact integer arithmetic:
///
/// 1. **Orientation** turns the device point to the user's view (`DeviceOrientation.toUserView(_:)`,
///    with `flip(r) = max(0, 4094 - r)`): portrait `(x, y)`; upside down `(flip(x), flip(y))`;
///    landscape left `(y, flip(x))`; landscape right `(flip(y), x)`.
/// 2. **Fit** picks the rectangle `(x0, y0, W, H)` inside the target `(X, Y, TW, TH)` (a monitor or the
///    whole screen):
///    - `stretch`: the target itself.
///    - `contain`: the surface as the user sees it is `sw × sh` = `short × long` in portrait and upside
///      down, `long × short` in landscape. If `TW * sh > TH * sw` (the target is wider):
///      `H = TH`, `W = (2 * TH * sw + sh) / (2 * sh)` (rounded to nearest); else `W = TW`,
///      `H = (2 * TW * sh + sw) / (2 * sw)`. Both are clamped to 1...TW and 1...TH. It is centred:
///      `x0 = X + (TW - W) / 2`, `y0 = Y + (TH - H) / 2`.
/// 3. **Pixel** (`ScreenMapping`): `px = x0 + min(W - 1, ux * W / 4094)`,
///    `py = y0 + min(H - 1, uy * H / 4094)` with `(ux, uy)` the user-view point, so raw 0 is the first
///    pixel, raw 4094 and 4095 the last, raw 2047 the middle pixel `x0 + W / 2`.
///
/// A `ScreenMapping` for the current orientation is computed once per change of orientation or target
/// (`screenMapping(for:)`), not per touch.
public struct AbsoluteMapping: Hashable, Sendable, CustomStringConvertible {
    /// The rectangle the phone maps onto: a monitor, or the whole screen.
    public var target: PixelRect
    public var fit: Fit
    /// The phone's shape, used by `contain`.
    public var aspect: SurfaceAspect

    /// - Precondition: `target` is not empty.
    public init(target: PixelRect, fit: Fit = .stretch, aspect: SurfaceAspect = .phone) {
        precondition(!target.isEmpty, "AbsoluteMapping needs a non-empty target")
        self.target = target
        self.fit = fit
        self.aspect = aspect
    }

    /// The rectangle the phone's surface covers in `orientation` (step 2 of the type's documentation).
    public func fittedRect(for orientation: DeviceOrientation) -> PixelRect {
        switch fit {
        case .stretch:
            return target
        case .contain:
            let sw = Int64(orientation.isLandscape ? aspect.long : aspect.short)
            let sh = Int64(orientation.isLandscape ? aspect.short : aspect.long)
            let tw = Int64(target.width), th = Int64(target.height)
            var w = tw, h = th
            if tw * sh > th * sw {
                w = min(tw, max(1, (2 * th * sw + sh) / (2 * sh)))
            } else {
                h = min(th, max(1, (2 * tw * sh + sw) / (2 * sw)))
            }
            return PixelRect(
                x: Int32(Int64(target.x) + (tw - w) / 2), y: Int32(Int64(target.y) + (th - h) / 2),
                width: Int32(w), height: Int32(h))
        }
    }

    /// The pixel mapping for touches already turned to the user's view in `orientation` (step 3 onto
    /// the rectangle of step 2).
    public func screenMapping(for orientation: DeviceOrientation) -> ScreenMapping {
        let r = fittedRect(for: orientation)
        return ScreenMapping(x: r.x, y: r.y, width: r.width, height: r.height)
    }

    /// The pixel under the device point `p` when the phone is held in `orientation`: all three steps.
    public func pixel(for p: DevicePoint, orientation: DeviceOrientation) -> PixelPoint {
        screenMapping(for: orientation).pixel(for: orientation.toUserView(p))
    }

    public var description: String { "\(target) \(fit.rawValue)\(fit == .contain ? " \(aspect)" : "")" }
}
