// What the overlay shows: the one model of it, followed from the core's overlay actions. The X11 overlay
// renders it; the tests' model desktop keeps one too and compares it with the core's machines.

/// What is on the overlay: a circle per finger (`VisibleTouches`), the laser dot and its trail
/// (`LaserDot`), and the drawings (`DrawingStore`), as their overlay actions say. Strokes are addressed by
/// identity (`StrokeID`), never by a place in a list, so whatever one side dropped, the other cannot
/// mistake one stroke for another.
///
/// Its own bound is a backstop: beyond `pointGuard` points (the core keeps `DrawingStore.maxPoints`) the
/// oldest finished strokes go here, counted in `backstopDropped`; the core naming one of them later
/// (`strokeGone`, `strokeTo`) finds nothing by that identity and nothing else changes.
///
/// `apply` tells a renderer what changed in the drawings (`Change`), so it paints only that; the circles
/// and the laser it reads whole. `apply` allocates only as a stroke's arrays grow (amortised) and when
/// a stroke begins; `shownCircles` and `shownStrokes` are for comparing, not for the hot path.
public struct OverlayScene: Sendable {
    /// A finger's stroke width: 6 px (the pen's follows its pressure, `PresenterMode.penWidth`).
    public static let strokeWidth = 6.0
    /// The overlay's own bound on the drawings: 40,000 points, above the core's 32,768
    /// (`DrawingStore.maxPoints`), so it never acts while the core keeps its bound.
    public static let defaultPointGuard = 40_000

    /// A finger's circle: where, and how opaque (255 opaque; it fades).
    public struct Circle: Equatable, Sendable {
        public var at: PixelPoint
        public var alpha: UInt8
    }

    /// A stroke shown: its identity, the slot drawing it (its colour), its points in screen pixels with
    /// each one's width, whether its finger is still down, and the box its points lie in.
    public struct Stroke: Sendable {
        public let id: StrokeID
        public let slot: UInt8
        public fileprivate(set) var points: [PixelPoint]
        public fileprivate(set) var widths: [Double]
        public fileprivate(set) var inProgress: Bool
        /// The box of its points (nil while it has none: in progress after a clear).
        public fileprivate(set) var bounds: PixelBox?
        /// Whether its points' widths differ (the pen's): then each segment is stroked alone.
        public fileprivate(set) var varying: Bool
    }

    /// What changed in the drawings, for a renderer that paints only that.
    public enum Change: Sendable {
        /// A stroke in progress went on from `from` to `to` (a dot at `to` when `from` is nil).
        case segment(slot: UInt8, from: PixelPoint?, to: PixelPoint, width: Double)
        /// The stroke `id` ended: it is drawn once more, in its full colour.
        case finished(StrokeID)
        /// A stroke whose points lay in this box went: the box is drawn again from the rest.
        case erased(PixelBox)
        /// Every finished stroke went, and the strokes in progress lost their points.
        case cleared
    }

    /// The circle of each finger slot (0…9), nil where none is shown.
    public private(set) var circles: InlineArray<10, Circle?> = InlineArray(repeating: nil)
    /// The laser dot, and its opacity (it fades out after its finger lifts).
    public private(set) var laser: PixelPoint?
    public private(set) var laserAlpha: UInt8 = 255
    /// The dot's previous places, newest last (at most `LaserDot.trailLength`).
    public private(set) var trail: [PixelPoint] = []
    /// The strokes, in the order they began.
    public private(set) var strokes: [Stroke] = []
    /// The points of all strokes together.
    public private(set) var totalPoints = 0
    /// The width the next points of each slot's stroke get (nil: `strokeWidth`), until its stroke ends.
    private var slotWidth: InlineArray<11, Double?> = InlineArray(repeating: nil)
    /// The backstop's bound on `totalPoints`.
    public let pointGuard: Int
    /// How many strokes the backstop dropped (0 while the core keeps its bound).
    public private(set) var backstopDropped = 0

    public init(pointGuard: Int = Self.defaultPointGuard) {
        self.pointGuard = pointGuard
        trail.reserveCapacity(LaserDot.trailLength + 1)
    }

    /// Whether nothing is shown.
    public var isEmpty: Bool {
        laser == nil && trail.isEmpty && totalPoints == 0 && !hasCircle
    }

    private var hasCircle: Bool {
        for s in 0..<10 where circles[s] != nil { return true }
        return false
    }

    /// The slots whose circle is shown.
    public var shownCircles: Set<UInt8> {
        Set((0..<10).filter { circles[$0] != nil }.map(UInt8.init))
    }

    /// The strokes as the core's `DrawingStore.shownStrokes` lists them.
    public var shownStrokes: [ShownStroke] {
        strokes.map { ShownStroke(id: $0.id, points: $0.points.count, inProgress: $0.inProgress) }
    }

    /// Takes one overlay action in; appends what changed in the drawings to `changes`. The window's own
    /// actions (`cover`, `remove`) are its owner's: `remove` takes everything away (`removeAll`).
    public mutating func apply(_ action: OverlayAction, changes: inout [Change]) {
        switch action {
        case .cover:
            break
        case .remove:
            removeAll()
        case .touch(let slot, let p, let alpha):
            guard slot < 10 else { return }
            circles[Int(slot)] = Circle(at: p, alpha: alpha)
        case .touchGone(let slot):
            guard slot < 10 else { return }
            circles[Int(slot)] = nil
        case .laser(let p):
            if let old = laser {
                trail.append(old)
                if trail.count > LaserDot.trailLength { trail.removeFirst(trail.count - LaserDot.trailLength) }
            }
            laser = p
            laserAlpha = 255
        case .laserAlpha(let alpha):
            laserAlpha = alpha
        case .laserOff:
            laser = nil
            laserAlpha = 255
            trail.removeAll(keepingCapacity: true)
        case .laserTrim(let keep):
            if trail.count > Int(keep) { trail.removeFirst(trail.count - Int(keep)) }
        case .clearDrawings:
            strokes.removeAll { !$0.inProgress }
            for i in strokes.indices {
                strokes[i].points.removeAll(keepingCapacity: true)
                strokes[i].widths.removeAll(keepingCapacity: true)
                strokes[i].bounds = nil
            }
            totalPoints = 0
            changes.append(.cleared)
        case .strokeBegan(let id, let slot, let p):
            // A slot draws one stroke at a time: one still open in it (its end was lost) ends here; a
            // stroke shown under the same identity (a core started afresh) gives way.
            if let i = strokes.lastIndex(where: { $0.slot == slot && $0.inProgress }) { finish(i, changes: &changes) }
            if let i = index(of: id) { drop(i, changes: &changes) }
            let w = width(of: slot)
            strokes.append(Stroke(id: id, slot: slot, points: [p], widths: [w], inProgress: true,
                                  bounds: PixelBox(around: p, reach: 0), varying: w != Self.strokeWidth))
            totalPoints += 1
            changes.append(.segment(slot: slot, from: nil, to: p, width: w))
            keepBackstop(changes: &changes)
        case .strokeTo(let id, let p):
            guard let i = index(of: id), strokes[i].inProgress else { return }
            let from = strokes[i].points.last
            let w = width(of: strokes[i].slot)
            strokes[i].points.append(p)
            strokes[i].widths.append(w)
            if w != strokes[i].widths[0] { strokes[i].varying = true }
            let box = PixelBox(around: p, reach: 0)
            strokes[i].bounds = strokes[i].bounds.map { $0.union(box) } ?? box
            totalPoints += 1
            changes.append(.segment(slot: strokes[i].slot, from: from, to: p, width: w))
            keepBackstop(changes: &changes)
        case .strokeEnded(let id):
            guard let i = index(of: id), strokes[i].inProgress else { return }
            if strokes[i].slot < 11 { slotWidth[Int(strokes[i].slot)] = nil }
            finish(i, changes: &changes)
        case .strokeGone(let id):
            guard let i = index(of: id), !strokes[i].inProgress else { return }
            drop(i, changes: &changes)
        case .strokeWidth(let slot, let width):
            guard slot < 11 else { return }
            slotWidth[Int(slot)] = Double(width)
        }
    }

    /// Everything goes (the window went).
    public mutating func removeAll() {
        circles = InlineArray(repeating: nil)
        laser = nil
        laserAlpha = 255
        trail.removeAll(keepingCapacity: true)
        strokes.removeAll()
        totalPoints = 0
        slotWidth = InlineArray(repeating: nil)
    }

    /// The stroke with this identity (the newest, were there two).
    public func index(of id: StrokeID) -> Int? {
        strokes.lastIndex { $0.id == id }
    }

    private func width(of slot: UInt8) -> Double {
        slot < 11 ? slotWidth[Int(slot)] ?? Self.strokeWidth : Self.strokeWidth
    }

    private mutating func finish(_ i: Int, changes: inout [Change]) {
        strokes[i].inProgress = false
        changes.append(.finished(strokes[i].id))
    }

    private mutating func drop(_ i: Int, changes: inout [Change]) {
        let gone = strokes.remove(at: i)
        totalPoints -= gone.points.count
        if let bounds = gone.bounds { changes.append(.erased(bounds)) }
    }

    /// The backstop: the oldest finished strokes go while there are more than `pointGuard` points.
    private mutating func keepBackstop(changes: inout [Change]) {
        while totalPoints > pointGuard, let i = strokes.firstIndex(where: { !$0.inProgress }) {
            drop(i, changes: &changes)
            backstopDropped += 1
        }
    }
}

/// A stroke as the core keeps it and the overlay shows it, for comparing the two.
public struct ShownStroke: Equatable, Sendable, CustomStringConvertible {
    public var id: StrokeID
    public var points: Int
    public var inProgress: Bool
    public init(id: StrokeID, points: Int, inProgress: Bool) {
        self.id = id
        self.points = points
        self.inProgress = inProgress
    }
    public var description: String { "\(id) \(points) points\(inProgress ? " in progress" : "")" }
}

/// A box of screen pixels, `x0..<x1` × `y0..<y1`.
public struct PixelBox: Equatable, Sendable {
    public var x0: Int, y0: Int, x1: Int, y1: Int
    public init(x0: Int, y0: Int, x1: Int, y1: Int) { self.x0 = x0; self.y0 = y0; self.x1 = x1; self.y1 = y1 }
    /// The pixels within `reach` of `p`.
    public init(around p: PixelPoint, reach: Int) {
        self.init(x0: Int(p.x) - reach, y0: Int(p.y) - reach, x1: Int(p.x) + reach + 1, y1: Int(p.y) + reach + 1)
    }
    public func union(_ o: PixelBox) -> PixelBox {
        PixelBox(x0: min(x0, o.x0), y0: min(y0, o.y0), x1: max(x1, o.x1), y1: max(y1, o.y1))
    }
    public func grown(by n: Int) -> PixelBox { PixelBox(x0: x0 - n, y0: y0 - n, x1: x1 + n, y1: y1 + n) }
    public func intersects(_ o: PixelBox) -> Bool { x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1 }
    public func offset(by dx: Int, _ dy: Int) -> PixelBox { PixelBox(x0: x0 + dx, y0: y0 + dy, x1: x1 + dx, y1: y1 + dy) }
}
