// The fingers of a relative mode: one copy of the finger, move-threshold and primary-finger bookkeeping.

/// The fingers that the touchpad and the presenter follow, in the device's portrait frame, in mm: where
/// each landed and is, whether it has moved beyond the tap threshold, how many are down, and which one is
/// primary (the earliest down). Both modes turn a `ContactChange` into a `Step` here, then decide what
/// the step means for them, so a tap, a move and a lift are the same finger motion in both.
///
/// ```
///   free ──began──► down (landed; primary if none)   down ──began again──► down (a move)
///   down ──moved──► down (moved: delta, and once, crossedTapThreshold)
///   down ──ended, cancelled──► free (lifted; the primary passes on, or not: `passesPrimary`)
///   any ──forgetAll──► free
/// ```
/// Allocates nothing.
public struct TouchLayer: Sendable {
    /// One finger.
    public struct Finger: Sendable {
        public var active = false
        /// Where the finger is and where it landed, device portrait frame, mm.
        public var x = 0.0, y = 0.0
        public var startX = 0.0, startY = 0.0
        /// Whether it has moved beyond the tap move threshold from where it landed.
        public var movedBeyondTap = false

        /// How far it is from where it landed, mm.
        public var travel: Double {
            let tx = x - startX, ty = y - startY
            return (tx * tx + ty * ty).squareRoot()
        }
    }

    /// What one change was to the layer.
    public enum Step: Equatable, Sendable {
        /// A finger landed in this slot.
        case landed(Int)
        /// The finger in this slot moved by (dx, dy) mm (device frame); `crossedTapThreshold` the first
        /// time it is beyond `tapMoveThresholdMM` from where it landed.
        case moved(Int, dx: Double, dy: Double, crossedTapThreshold: Bool)
        /// The finger in this slot lifted (or was cancelled); `wasPrimary` if it was the primary one.
        case lifted(Int, cancelled: Bool, wasPrimary: Bool)
        /// Nothing: a slot out of range, or a change for a finger that is not down.
        case ignored
    }

    private(set) var fingers: InlineArray<10, Finger> = InlineArray(repeating: Finger())
    /// How many fingers are down.
    public private(set) var count = 0
    /// The primary finger: the earliest down.
    public private(set) var primary: Int?
    /// The phone's surface, for raw units to mm.
    public var surface: SurfaceSize
    /// How far a finger may move from where it landed and still tap, mm.
    public var tapMoveThresholdMM: Double
    /// Whether the primary passes to the next finger down when it lifts (the touchpad: the pointer
    /// follows a finger still down), or stays unset until a finger lands (the presenter: the laser
    /// follows only the first finger of a touch).
    public let passesPrimary: Bool

    public init(surface: SurfaceSize, tapMoveThresholdMM: Double, passesPrimary: Bool) {
        self.surface = surface
        self.tapMoveThresholdMM = tapMoveThresholdMM
        self.passesPrimary = passesPrimary
    }

    /// The finger in slot `s` (0...9).
    @inline(__always)
    public subscript(_ s: Int) -> Finger { fingers[s] }

    /// A raw device point in mm.
    @inline(__always)
    public func mm(_ p: DevicePoint) -> (Double, Double) {
        (Double(p.rawX) * surface.mmPerRawX, Double(p.rawY) * surface.mmPerRawY)
    }

    /// Follows one change.
    public mutating func handle(_ change: ContactChange) -> Step {
        let s = Int(change.slot)
        guard s < 10 else { return .ignored }
        switch change {
        case .began(_, let p):
            if fingers[s].active { return move(s, to: p) }
            let (x, y) = mm(p)
            fingers[s] = Finger(active: true, x: x, y: y, startX: x, startY: y, movedBeyondTap: false)
            count += 1
            if primary == nil { primary = s }
            return .landed(s)
        case .moved(_, let p):
            guard fingers[s].active else { return .ignored }
            return move(s, to: p)
        case .ended, .cancelled:
            guard fingers[s].active else { return .ignored }
            fingers[s].active = false
            count -= 1
            let wasPrimary = primary == s
            if wasPrimary {
                primary = nil
                if passesPrimary { for i in 0..<10 where fingers[i].active { primary = i; break } }
            }
            var cancelled = false
            if case .cancelled = change { cancelled = true }
            return .lifted(s, cancelled: cancelled, wasPrimary: wasPrimary)
        }
    }

    /// Every finger is forgotten.
    public mutating func forgetAll() {
        for i in 0..<10 { fingers[i].active = false }
        count = 0
        primary = nil
    }

    private mutating func move(_ s: Int, to p: DevicePoint) -> Step {
        let (x, y) = mm(p)
        let dx = x - fingers[s].x, dy = y - fingers[s].y
        fingers[s].x = x
        fingers[s].y = y
        var crossed = false
        if !fingers[s].movedBeyondTap && fingers[s].travel > tapMoveThresholdMM {
            fingers[s].movedBeyondTap = true
            crossed = true
        }
        return .moved(s, dx: dx, dy: dy, crossedTapThreshold: crossed)
    }

    /// The centroid of the fingers down (device mm) and their spread: for two fingers the distance
    /// between them, for more twice the mean distance from the centroid (the same for two).
    @inline(__always)
    public func centroidAndSpread() -> (Double, Double, Double) {
        guard count > 0 else { return (0, 0, 0) }
        // Through a span: indexing the stored InlineArray directly copies all of it first.
        let fingers = self.fingers.span
        var sx = 0.0, sy = 0.0
        for i in 0..<10 where fingers[i].active { sx += fingers[i].x; sy += fingers[i].y }
        let n = Double(count)
        let cx = sx / n, cy = sy / n
        var d = 0.0
        for i in 0..<10 where fingers[i].active {
            let ex = fingers[i].x - cx, ey = fingers[i].y - cy
            d += (ex * ex + ey * ey).squareRoot()
        }
        return (cx, cy, 2 * d / n)
    }
}
