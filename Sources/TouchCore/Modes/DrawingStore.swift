// Presenter mode's drawings: the strokes on the overlay, kept within a bound.

/// What presenter mode has drawn on the overlay, as counts, and the bound it keeps: at most `maxPoints`
/// points and `maxStrokes` strokes in all. A stroke longer than `maxStrokePoints` is cut (ended, and a
/// new one begun where the finger is), and when the total would pass a bound the oldest finished stroke
/// goes (`OverlayAction.strokeGone`, by its `StrokeID`: of the strokes that have ended, the first to
/// begin). So ten fingers drawing for ever keep at most about 32 thousand points on screen,
/// the newest, and the overlay's memory and a full repaint's cost stay bounded.
///
/// The only sender of stroke actions, each naming its stroke by identity (its serial, a `StrokeID`): its
/// strokes are what the overlay shows (`OverlayScene`, which `shownStrokes` equals). The entries live in one
/// buffer made at init (`maxStrokes + 11`: ten fingers and the pen in progress), and every point's pixel
/// in another (`pathCapacity`), so the eraser can follow a stroke's own path; a point allocates nothing.
public struct DrawingStore: Sendable {
    /// The most points kept in all strokes together: 32,768 (about 9 minutes of one finger at 60 Hz).
    public static let maxPoints = 32_768
    /// The most strokes kept: 4,096.
    public static let maxStrokes = 4_096
    /// The most points in one stroke before it is cut: 2,048 (34 s of one finger at 60 Hz).
    public static let maxStrokePoints = 2_048

    /// The slot of the pen's strokes (presenter mode: fingers are slots 0…9).
    public static let penSlot: UInt8 = 10
    /// Room for the strokes' points, live or gone: twice `maxPoints`. Points of strokes that went stay
    /// until it is full; one pass then keeps the live ones (at most `maxPoints` + 1), so at least half of
    /// it comes free each time: 64 Ki points of 8 bytes, 512 KiB made once with the store.
    public static let pathCapacity = 2 * maxPoints

    /// One stroke, in the order they began: its points, the slot drawing it while in progress (-1 once it
    /// ended), its serial (the mark of its points in `path`; serials grow in the entries' order), and the
    /// box its points lie in (screen pixels), which the eraser tries before the path.
    private struct Entry: Sendable {
        var points: Int32
        var slot: Int8
        var serial: UInt32
        var minX: Int32 = 0, minY: Int32 = 0, maxX: Int32 = 0, maxY: Int32 = 0

        init(points: Int32, slot: Int8, serial: UInt32) { self.points = points; self.slot = slot; self.serial = serial }
        init(points: Int32, slot: Int8, serial: UInt32, at p: PixelPoint) {
            self.points = points
            self.slot = slot
            self.serial = serial
            minX = p.x; maxX = p.x; minY = p.y; maxY = p.y
        }

        mutating func include(_ p: PixelPoint) {
            minX = Swift.min(minX, p.x); maxX = Swift.max(maxX, p.x)
            minY = Swift.min(minY, p.y); maxY = Swift.max(maxY, p.y)
        }

        /// Whether the box from `a` to `b` comes within `reach` pixels of the stroke's box.
        func near(_ a: PixelPoint, _ b: PixelPoint, reach: Int32) -> Bool {
            Swift.max(a.x, b.x) >= minX &- reach && Swift.min(a.x, b.x) <= maxX &+ reach
                && Swift.max(a.y, b.y) >= minY &- reach && Swift.min(a.y, b.y) <= maxY &+ reach
        }
    }

    /// One point of a stroke, in the order the points came, marked with its stroke's serial.
    private struct PathPoint: Sendable {
        var x: Int16, y: Int16
        var stroke: UInt32

        init(_ p: PixelPoint, stroke: UInt32) {
            x = Int16(clamping: p.x); y = Int16(clamping: p.y); self.stroke = stroke
        }

        var pixel: PixelPoint { PixelPoint(x: Int32(x), y: Int32(y)) }
    }

    /// A ring of entries: `count` of them from `head`.
    private var ring: [Entry]
    private var head = 0
    private var count = 0
    /// Bit s: slot s draws a stroke now.
    private var drawing: UInt16 = 0
    /// Points in every stroke together.
    public private(set) var totalPoints = 0
    /// Every point drawn since the last clear or compaction, live or not (`pathCount` of them).
    private var path: [PathPoint]
    private var pathCount = 0
    /// The serial of the next stroke (0 is never one).
    private var nextSerial: UInt32 = 1

    public init() {
        ring = Array(repeating: Entry(points: 0, slot: -1, serial: 0), count: Self.maxStrokes + 11)
        path = Array(repeating: PathPoint(PixelPoint(x: 0, y: 0), stroke: 0), count: Self.pathCapacity)
    }

    /// Strokes kept, finished or not.
    public var strokeCount: Int { count }

    /// The strokes kept, in the order they began: what the overlay shows (tests compare the two).
    public var shownStrokes: [ShownStroke] {
        (0..<count).map { k in
            let e = ring[(head + k) % ring.count]
            return ShownStroke(id: StrokeID(rawValue: e.serial), points: Int(e.points), inProgress: e.slot >= 0)
        }
    }

    /// Whether the finger in `slot` draws a stroke now.
    public func isDrawing(_ slot: Int) -> Bool { drawing & (1 << UInt16(slot)) != 0 }

    /// The finger in `slot` starts a stroke at `pixel`.
    public mutating func begin(slot: Int, at pixel: PixelPoint, into actions: inout [OutputAction]) {
        if isDrawing(slot) { end(slot: slot, into: &actions) }
        while count >= Self.maxStrokes, dropOldest(into: &actions) {}
        guard count < ring.count else { return }
        let serial = newSerial()
        ring[(head + count) % ring.count] = Entry(points: 1, slot: Int8(slot), serial: serial, at: pixel)
        record(pixel, stroke: serial)
        count += 1
        totalPoints += 1
        drawing |= 1 << UInt16(slot)
        actions.append(.overlay(.strokeBegan(StrokeID(rawValue: serial), slot: UInt8(slot), at: pixel)))
        keepBound(into: &actions)
    }

    /// The stroke of `slot` goes on to `pixel` (cut first when it is at `maxStrokePoints`).
    public mutating func extend(slot: Int, to pixel: PixelPoint, into actions: inout [OutputAction]) {
        guard isDrawing(slot), let i = live(slot) else { return }
        if Int(ring[i].points) >= Self.maxStrokePoints {
            return begin(slot: slot, at: pixel, into: &actions)
        }
        if ring[i].points == 0 { ring[i] = Entry(points: 0, slot: ring[i].slot, serial: ring[i].serial, at: pixel) }  // after a clear
        ring[i].points += 1
        ring[i].include(pixel)
        record(pixel, stroke: ring[i].serial)
        totalPoints += 1
        actions.append(.overlay(.strokeTo(StrokeID(rawValue: ring[i].serial), pixel)))
        keepBound(into: &actions)
    }

    /// The finger in `slot` lifted: its stroke is finished (it stays).
    public mutating func end(slot: Int, into actions: inout [OutputAction]) {
        guard isDrawing(slot) else { return }
        drawing &= ~(1 << UInt16(slot))
        guard let i = live(slot) else { return }
        ring[i].slot = -1
        actions.append(.overlay(.strokeEnded(StrokeID(rawValue: ring[i].serial))))
    }

    /// Every stroke in progress is finished.
    public mutating func endAll(into actions: inout [OutputAction]) {
        for s in 0...Int(Self.penSlot) where isDrawing(s) { end(slot: s, into: &actions) }
    }

    /// Every drawing goes (the strokes in progress go on from nothing).
    public mutating func clear(into actions: inout [OutputAction]) {
        var kept = 0
        for k in 0..<count {
            let e = ring[(head + k) % ring.count]
            if e.slot >= 0 { ring[(head + kept) % ring.count] = Entry(points: 0, slot: e.slot, serial: e.serial); kept += 1 }
            // (Its box starts again at its next point.)
        }
        count = kept
        totalPoints = 0
        pathCount = 0  // every point drawn so far is gone
        actions.append(.overlay(.clearDrawings))
    }

    /// Every stroke is forgotten, sending nothing: the overlay went with them. (Serials go on: no later
    /// stroke takes the identity of one forgotten.)
    public mutating func forgetAll() {
        head = 0
        count = 0
        drawing = 0
        totalPoints = 0
        pathCount = 0
    }

    /// The eraser on the glass, moved from `from` to `to` since its last report (the same pixel at its
    /// first): every finished stroke whose own path comes within `reach` pixels of that sweep goes
    /// (`strokeGone`, each by its identity). The strokes whose box
    /// the sweep comes near are tried against their points, `tryAtOnce` strokes per pass over `path`.
    public mutating func erase(from: PixelPoint, to: PixelPoint, reach: Int32, into actions: inout [OutputAction]) {
        var after: UInt32 = 0  // the candidates of the next pass have later serials
        while true {
            var serials = InlineArray<8, UInt32>(repeating: 0)
            var n = 0
            for k in 0..<count {
                if n == Self.tryAtOnce { break }
                let e = ring[(head + k) % ring.count]
                if e.slot < 0, e.serial > after, e.near(from, to, reach: reach) { serials[n] = e.serial; n += 1 }
            }
            guard n > 0 else { return }
            after = serials[n - 1]
            // One pass over the points: each candidate's segments (or its single point) against the sweep.
            var last = InlineArray<8, PixelPoint>(repeating: PixelPoint(x: 0, y: 0))
            var started: UInt8 = 0, met: UInt8 = 0
            for k in 0..<pathCount {
                let point = path[k]
                var c = 0
                while c < n && serials[c] != point.stroke { c += 1 }
                guard c < n, met & (1 << c) == 0 else { continue }
                let p = point.pixel
                let a = started & (1 << c) != 0 ? last[c] : p
                if Self.segments(a, p, andSweep: from, to, within: reach) { met |= 1 << c }
                last[c] = p
                started |= 1 << c
            }
            for c in 0..<n where met & (1 << c) != 0 { remove(serial: serials[c], into: &actions) }
        }
    }

    /// How many strokes one pass of the eraser tries: 8 (the bits of its `UInt8` masks).
    static let tryAtOnce = 8

    /// Removes the finished stroke with this serial (its points stay in `path`, dead, until compaction).
    private mutating func remove(serial: UInt32, into actions: inout [OutputAction]) {
        guard let k = place(of: serial) else { return }
        totalPoints -= Int(ring[(head + k) % ring.count].points)
        for j in k..<(count - 1) { ring[(head + j) % ring.count] = ring[(head + j + 1) % ring.count] }
        count -= 1
        actions.append(.overlay(.strokeGone(StrokeID(rawValue: serial))))
    }

    /// The place among the strokes kept of the one with this serial (serials grow with the places).
    private func place(of serial: UInt32) -> Int? {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            let s = ring[(head + mid) % ring.count].serial
            if s == serial { return mid }
            if s < serial { low = mid + 1 } else { high = mid }
        }
        return nil
    }

    /// The next serial. Every stroke begun takes one, so it wraps after 4 billion strokes (13 years of
    /// ten strokes a second), past which the serials' order, and so `place(of:)`, would no longer hold.
    private mutating func newSerial() -> UInt32 {
        defer { nextSerial = nextSerial == .max ? 1 : nextSerial + 1 }
        return nextSerial
    }

    /// Keeps a point of the stroke `stroke`; when `path` is full, first drops the points of strokes that
    /// went.
    private mutating func record(_ pixel: PixelPoint, stroke: UInt32) {
        if pathCount == path.count {
            var kept = 0
            for k in 0..<pathCount where place(of: path[k].stroke) != nil {
                path[kept] = path[k]
                kept += 1
            }
            pathCount = kept
            guard pathCount < path.count else { return }  // cannot happen: live points ≤ maxPoints + 1
        }
        path[pathCount] = PathPoint(pixel, stroke: stroke)
        pathCount += 1
    }

    /// Whether the segment from `a` to `b` comes within `reach` of the sweep from `c` to `d`: they cross,
    /// or an end of one is within `reach` of the other.
    static func segments(_ a: PixelPoint, _ b: PixelPoint, andSweep c: PixelPoint, _ d: PixelPoint, within reach: Int32) -> Bool {
        if cross(a, b, c, d) { return true }
        let r = Int64(reach) * Int64(reach)
        return distanceSquared(a, c, d) <= r || distanceSquared(b, c, d) <= r
            || distanceSquared(c, a, b) <= r || distanceSquared(d, a, b) <= r
    }

    /// The square of the distance from `p` to the segment from `a` to `b` (rounded up to whole pixels²).
    static func distanceSquared(_ p: PixelPoint, _ a: PixelPoint, _ b: PixelPoint) -> Int64 {
        let abx = Int64(b.x) - Int64(a.x), aby = Int64(b.y) - Int64(a.y)
        let apx = Int64(p.x) - Int64(a.x), apy = Int64(p.y) - Int64(a.y)
        let length = abx * abx + aby * aby
        let along = apx * abx + apy * aby
        if length == 0 || along <= 0 { return apx * apx + apy * apy }
        if along >= length { let bx = Int64(p.x) - Int64(b.x), by = Int64(p.y) - Int64(b.y); return bx * bx + by * by }
        // |ap × ab|² / |ab|², the perpendicular distance.
        let crossed = apx * aby - apy * abx
        let (q, r) = (crossed * crossed).quotientAndRemainder(dividingBy: length)
        return r == 0 ? q : q + 1
    }

    /// Whether the segments a–b and c–d cross or touch.
    static func cross(_ a: PixelPoint, _ b: PixelPoint, _ c: PixelPoint, _ d: PixelPoint) -> Bool {
        func side(_ p: PixelPoint, _ q: PixelPoint, _ r: PixelPoint) -> Int64 {
            let v = (Int64(q.x) - Int64(p.x)) * (Int64(r.y) - Int64(p.y)) - (Int64(q.y) - Int64(p.y)) * (Int64(r.x) - Int64(p.x))
            return v > 0 ? 1 : (v < 0 ? -1 : 0)
        }
        let d1 = side(c, d, a), d2 = side(c, d, b), d3 = side(a, b, c), d4 = side(a, b, d)
        // Touching (a zero) is left to the distance tests, which see it as 0.
        return d1 * d2 < 0 && d3 * d4 < 0
    }

    /// The ring index of the stroke `slot` draws.
    private func live(_ slot: Int) -> Int? {
        var k = count
        while k > 0 {
            k -= 1
            let i = (head + k) % ring.count
            if Int(ring[i].slot) == slot { return i }
        }
        return nil
    }

    private mutating func keepBound(into actions: inout [OutputAction]) {
        while totalPoints > Self.maxPoints, dropOldest(into: &actions) {}
    }

    /// Drops the first finished stroke (the strokes in progress before it, ten at most, move up one).
    private mutating func dropOldest(into actions: inout [OutputAction]) -> Bool {
        guard let k = (0..<count).first(where: { ring[(head + $0) % ring.count].slot < 0 }) else { return false }
        let gone = ring[(head + k) % ring.count]
        totalPoints -= Int(gone.points)
        var j = k
        while j > 0 { ring[(head + j) % ring.count] = ring[(head + j - 1) % ring.count]; j -= 1 }
        head = (head + 1) % ring.count
        count -= 1
        actions.append(.overlay(.strokeGone(StrokeID(rawValue: gone.serial))))
        return true
    }
}
