// The web page's pen message: `pen …`, one text message per pen event (docs/wire-format.md).
import TouchCore

/// `pen away`, or `pen hover|touch X Y PRESSURE TILTX TILTY TWIST FLAGS`:
/// - `X`, `Y`: where the tip is, as fractions of the pad, 0…1 (decimal numbers, as JavaScript writes them);
/// - `PRESSURE`: 0…1;
/// - `TILTX`, `TILTY`: degrees, -90…90; `TWIST`: degrees, 0…360;
/// - `FLAGS`: `-` for none, else the letters of what is held: `b` the barrel button, `e` the eraser end
///   (each at most once).
/// Anything else (a missing or extra field, a number out of its range or not finite) is not a pen message.
extension PenReport {
    /// Parses the part after `pen `; nil when it is not a pen message.
    public init?(parsing text: Substring) {
        if text == "away" {
            self = .away
            return
        }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 8 else { return nil }
        let touching: Bool
        switch parts[0] {
        case "hover": touching = false
        case "touch": touching = true
        default: return nil
        }
        func number(_ s: Substring, _ range: ClosedRange<Double>) -> Double? {
            // Decimal only: `Double` would take hexadecimal (`0x1`), `nan` and `inf` too.
            guard s.utf8.count <= 24, s.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2e || $0 == 0x2d || $0 == 0x2b || $0 == 0x65 || $0 == 0x45 }),
                  let v = Double(s), v.isFinite, range.contains(v) else { return nil }
            return v
        }
        guard let x = number(parts[1], 0...1), let y = number(parts[2], 0...1),
              let pressure = number(parts[3], 0...1),
              let tiltX = number(parts[4], -90...90), let tiltY = number(parts[5], -90...90),
              let twist = number(parts[6], 0...360) else { return nil }
        var barrel = false, eraser = false
        if parts[7] != "-" {
            guard !parts[7].isEmpty, parts[7].utf8.count <= 2 else { return nil }
            for c in parts[7] {
                switch c {
                case "b" where !barrel: barrel = true
                case "e" where !eraser: eraser = true
                default: return nil
                }
            }
        }
        self = .near(PenSample(x: x, y: y, pressure: pressure, tiltX: tiltX, tiltY: tiltY, twist: twist,
                               touching: touching, barrel: barrel, eraser: eraser))
    }
}
