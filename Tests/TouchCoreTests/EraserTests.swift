// The pen's eraser in presenter mode (`DrawingStore.erase`): a stroke goes when the eraser's way comes
// within reach of the stroke's own path, not of the box around it; the way between two reports counts;
// and it still holds after the store's bound dropped strokes and its path buffer was compacted.
import Testing
import TouchCore

@Suite struct EraserTests {
    static let reach: Int32 = 12

    static func p(_ x: Int32, _ y: Int32) -> PixelPoint { PixelPoint(x: x, y: y) }

    /// The eraser's action for the `n`th stroke the store began (identities count from 1).
    static func gone(_ n: Int) -> OverlayAction { .strokeGone(StrokeID(rawValue: UInt32(n))) }

    /// A finished stroke through these points.
    static func stroke(_ store: inout DrawingStore, _ points: [PixelPoint], slot: Int = 0) {
        var actions: [OutputAction] = []
        store.begin(slot: slot, at: points[0], into: &actions)
        for q in points.dropFirst() { store.extend(slot: slot, to: q, into: &actions) }
        store.end(slot: slot, into: &actions)
    }

    static func erase(_ store: inout DrawingStore, from a: PixelPoint, to b: PixelPoint) -> [OverlayAction] {
        var actions: [OutputAction] = []
        store.erase(from: a, to: b, reach: reach, into: &actions)
        return actions.compactMap { if case .overlay(let o) = $0 { return o } else { return nil } }
    }

    @Test func aDiagonalStrokeGoesOnlyWhenTheEraserMeetsItsPathNotItsBox() {
        var store = DrawingStore()
        Self.stroke(&store, [Self.p(0, 0), Self.p(500, 500), Self.p(1000, 1000)])
        // Inside the box, 566 px from the line: it stays.
        #expect(Self.erase(&store, from: Self.p(900, 100), to: Self.p(900, 100)) == [])
        // 13 px from the line (9.2 px across, 9.2 down is 13 px): still out of reach.
        #expect(Self.erase(&store, from: Self.p(309, 291), to: Self.p(309, 291)) == [])
        // 7 px from the line, between two of its points: it goes.
        #expect(Self.erase(&store, from: Self.p(705, 695), to: Self.p(705, 695)) == [Self.gone(1)])
        #expect(store.strokeCount == 0 && store.totalPoints == 0)
    }

    @Test func theWayBetweenTwoReportsSweeps() {
        var store = DrawingStore()
        Self.stroke(&store, [Self.p(100, 500), Self.p(900, 500)])
        // Both ends 100 px from the line, on either side: the eraser crossed it.
        #expect(Self.erase(&store, from: Self.p(500, 400), to: Self.p(500, 400)) == [])
        #expect(Self.erase(&store, from: Self.p(500, 600), to: Self.p(500, 600)) == [])
        #expect(Self.erase(&store, from: Self.p(500, 400), to: Self.p(500, 600)) == [Self.gone(1)])
        // A single point (a dot) is met by a sweep passing within reach of it.
        Self.stroke(&store, [Self.p(300, 300)])
        #expect(Self.erase(&store, from: Self.p(250, 310), to: Self.p(350, 310)) == [Self.gone(2)])
    }

    @Test func ofCrossingStrokesOnlyTheOneMetGoesByItsIdentity() {
        var store = DrawingStore()
        Self.stroke(&store, [Self.p(0, 0), Self.p(400, 400)])      // 1: a diagonal
        Self.stroke(&store, [Self.p(0, 400), Self.p(400, 0)])      // 2: the other diagonal
        Self.stroke(&store, [Self.p(0, 200), Self.p(400, 200)])    // 3: across the middle
        // Near (100, 300): on diagonal 2, inside every box, far from 1 and 3.
        #expect(Self.erase(&store, from: Self.p(104, 300), to: Self.p(104, 300)) == [Self.gone(2)])
        // The two left cross at (200, 200): both go, each named by its own identity.
        #expect(Self.erase(&store, from: Self.p(200, 200), to: Self.p(200, 200)) == [Self.gone(1), Self.gone(3)])
        #expect(store.strokeCount == 0)
    }

    @Test func moreStrokesThanOnePassTriesAreAllMet() {
        var store = DrawingStore()
        // 20 strokes through (500, 500), each at its own angle, and one far away that stays.
        for i in 0..<20 {
            let dx = Int32(i * 20 - 200)
            Self.stroke(&store, [Self.p(500 - dx, 300), Self.p(500, 500), Self.p(500 + dx, 700)], slot: i % 10)
        }
        Self.stroke(&store, [Self.p(1500, 100), Self.p(1600, 100)])
        let erased = Self.erase(&store, from: Self.p(500, 500), to: Self.p(500, 500))
        #expect(erased == (1...20).map(Self.gone))
        #expect(store.strokeCount == 1)
    }

    /// After the bound dropped the oldest strokes many times over (so the path buffer was compacted), the
    /// eraser still follows the live strokes' paths, and a dropped one is not met.
    @Test func afterDropsAndCompactionTheLiveStrokesAreStillMet() {
        var store = DrawingStore()
        // 100 strokes of 1,000 points, each a horizontal line at its own height: 100,000 points in all,
        // three times the bound, past the path's capacity (65,536) once.
        for s in 0..<100 {
            let y = Int32(10 * s)
            var actions: [OutputAction] = []
            store.begin(slot: 0, at: Self.p(0, y), into: &actions)
            for x in 1..<1_000 { store.extend(slot: 0, to: Self.p(Int32(x), y), into: &actions) }
            store.end(slot: 0, into: &actions)
        }
        let kept = store.strokeCount
        #expect(kept < 100 && store.totalPoints <= DrawingStore.maxPoints)
        // The first stroke (y = 0) was dropped: nothing there. The newest (y = 990) is the last kept.
        #expect(Self.erase(&store, from: Self.p(500, 0), to: Self.p(500, 0)) == [])
        #expect(Self.erase(&store, from: Self.p(500, 994), to: Self.p(500, 994)) == [Self.gone(100)])
        // The oldest kept one, at its far end, from the side of the dropped ones: the line 7 px away was
        // dropped (its points may still be in the path buffer, dead), the next kept one is 13 px away.
        let oldest = Int32(10 * (100 - kept))
        #expect(Self.erase(&store, from: Self.p(995, oldest - 3), to: Self.p(995, oldest - 3)) == [Self.gone(100 - kept + 1)])
        #expect(store.strokeCount == kept - 2)
    }

    @Test func aClearForgetsThePathsAndAStrokeGoingOnStartsAgain() {
        var store = DrawingStore()
        var actions: [OutputAction] = []
        Self.stroke(&store, [Self.p(0, 100), Self.p(400, 100)])
        store.begin(slot: 1, at: Self.p(0, 300), into: &actions)
        store.extend(slot: 1, to: Self.p(400, 300), into: &actions)
        store.clear(into: &actions)
        // The finger goes on from (400, 300) to (400, 700) and lifts: only that part is a stroke.
        store.extend(slot: 1, to: Self.p(400, 500), into: &actions)
        store.extend(slot: 1, to: Self.p(400, 700), into: &actions)
        store.end(slot: 1, into: &actions)
        #expect(Self.erase(&store, from: Self.p(200, 100), to: Self.p(200, 100)) == [])
        #expect(Self.erase(&store, from: Self.p(200, 300), to: Self.p(200, 300)) == [])
        #expect(Self.erase(&store, from: Self.p(405, 600), to: Self.p(405, 600)) == [Self.gone(2)])
    }
}
