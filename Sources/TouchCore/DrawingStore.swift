// Presenter mode's drawings: the strokes on the overlay, kept within a bound.

/// What presenter mode has drawn on the overlay, as counts, and the bound it keeps: at most `maxPoints`
/// points and `maxStrokes` strokes in all. A stroke longer than `maxStrokePoints` is cut (ended, and a
/// new one begun where the finger is), and when the total would pass a bound the oldest finished stroke
/// goes (`OverlayAction.dropOldestStroke`: of the strokes that have ended, the first to begin, as the
/// overlay keeps them). So ten fingers drawing for ever keep at most about 32 thousand points on screen,
/// the newest, and the overlay's memory and a full repaint's cost stay bounded.
///
/// The only sender of stroke actions: its counts are what the overlay holds. The entries live in one
/// buffer made at init (`maxStrokes + 11`: ten fingers and the pen in progress); a point allocates nothing.
public struct DrawingStore: Sendable {
    /// The most points kept in all strokes together: 32,768 (about 9 minutes of one finger at 60 Hz).
    public static let maxPoints = 32_768
    /// The most strokes kept: 4,096.
    public static let maxStrokes = 4_096
    /// The most points in one stroke before it is cut: 2,048 (34 s of one finger at 60 Hz).
    public static let maxStrokePoints = 2_048

    /// The slot of the pen's strokes (presenter mode: fingers are slots 0…9).
    public static let penSlot: UInt8 = 10

    /// One stroke, in the order they began: its points, the slot drawing it while in progress (-1 once it
    /// ended), and the box its points lie in (screen pixels), for the eraser.
    private struct Entry: Sendable {
        var points: Int32
        var slot: Int8
        var minX: Int32 = 0, minY: Int32 = 0, maxX: Int32 = 0, maxY: Int32 = 0

        init(points: Int32, slot: Int8) { self.points = points; self.slot = slot }
        init(points: Int32, slot: Int8, at p: PixelPoint) {
            self.points = points
            self.slot = slot
            minX = p.x; maxX = p.x; minY = p.y; maxY = p.y
        }

        mutating func include(_ p: PixelPoint) {
            minX = Swift.min(minX, p.x); maxX = Swift.max(maxX, p.x)
            minY = Swift.min(minY, p.y); maxY = Swift.max(maxY, p.y)
        }

        /// Whether `p` is within `reach` pixels of the stroke's box.
        func near(_ p: PixelPoint, reach: Int32) -> Bool {
            p.x >= minX &- reach && p.x <= maxX &+ reach && p.y >= minY &- reach && p.y <= maxY &+ reach
        }
    }

    /// A ring of entries: `count` of them from `head`.
    private var ring: [Entry]
    private var head = 0
    private var count = 0
    /// Bit s: slot s draws a stroke now.
    private var drawing: UInt16 = 0
    /// Points in every stroke together.
    public private(set) var totalPoints = 0

    public init() {
        ring = Array(repeating: Entry(points: 0, slot: -1), count: Self.maxStrokes + 11)
    }

    /// Strokes kept, finished or not.
    public var strokeCount: Int { count }

    /// Whether the finger in `slot` draws a stroke now.
    public func isDrawing(_ slot: Int) -> Bool { drawing & (1 << UInt16(slot)) != 0 }

    /// The finger in `slot` starts a stroke at `pixel`.
    public mutating func begin(slot: Int, at pixel: PixelPoint, into actions: inout [OutputAction]) {
        if isDrawing(slot) { end(slot: slot, into: &actions) }
        while count >= Self.maxStrokes, dropOldest(into: &actions) {}
        guard count < ring.count else { return }
        ring[(head + count) % ring.count] = Entry(points: 1, slot: Int8(slot), at: pixel)
        count += 1
        totalPoints += 1
        drawing |= 1 << UInt16(slot)
        actions.append(.overlay(.strokeBegan(slot: UInt8(slot), at: pixel)))
        keepBound(into: &actions)
    }

    /// The stroke of `slot` goes on to `pixel` (cut first when it is at `maxStrokePoints`).
    public mutating func extend(slot: Int, to pixel: PixelPoint, into actions: inout [OutputAction]) {
        guard isDrawing(slot), let i = live(slot) else { return }
        if Int(ring[i].points) >= Self.maxStrokePoints {
            return begin(slot: slot, at: pixel, into: &actions)
        }
        if ring[i].points == 0 { ring[i] = Entry(points: 0, slot: ring[i].slot, at: pixel) }  // after a clear
        ring[i].points += 1
        ring[i].include(pixel)
        totalPoints += 1
        actions.append(.overlay(.strokeTo(slot: UInt8(slot), pixel)))
        keepBound(into: &actions)
    }

    /// The finger in `slot` lifted: its stroke is finished (it stays).
    public mutating func end(slot: Int, into actions: inout [OutputAction]) {
        guard isDrawing(slot) else { return }
        drawing &= ~(1 << UInt16(slot))
        if let i = live(slot) { ring[i].slot = -1 }
        actions.append(.overlay(.strokeEnded(slot: UInt8(slot))))
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
            if e.slot >= 0 { ring[(head + kept) % ring.count] = Entry(points: 0, slot: e.slot); kept += 1 }
            // (Its box starts again at its next point.)
        }
        count = kept
        totalPoints = 0
        actions.append(.overlay(.clearDrawings))
    }

    /// The eraser at `pixel`: every finished stroke whose box comes within `reach` pixels of it goes
    /// (`eraseStroke`, each by its place among the strokes kept). A box, not the stroke's own path: the
    /// store keeps counts, not points, so a long diagonal stroke goes when the eraser is in its box.
    public mutating func erase(at pixel: PixelPoint, reach: Int32, into actions: inout [OutputAction]) {
        var k = 0
        while k < count {
            let e = ring[(head + k) % ring.count]
            guard e.slot < 0, e.near(pixel, reach: reach) else { k += 1; continue }
            totalPoints -= Int(e.points)
            for j in k..<(count - 1) { ring[(head + j) % ring.count] = ring[(head + j + 1) % ring.count] }
            count -= 1
            actions.append(.overlay(.eraseStroke(index: UInt16(k))))
        }
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
        totalPoints -= Int(ring[(head + k) % ring.count].points)
        var j = k
        while j > 0 { ring[(head + j) % ring.count] = ring[(head + j - 1) % ring.count]; j -= 1 }
        head = (head + 1) % ring.count
        count -= 1
        actions.append(.overlay(.dropOldestStroke))
        return true
    }
}
