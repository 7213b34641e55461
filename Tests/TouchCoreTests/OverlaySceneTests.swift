// One model of what the overlay shows (`OverlayScene`): strokes are named by identity, so the overlay's
// own bound (a backstop) dropping a stroke cannot make the core's next action hit another one; and the
// core keeps what stays on the overlay across a mode switch, so the two still agree after it.
import AllocationCounter
import Testing
import TouchCore

@Suite struct OverlaySceneTests {
    static func id(_ n: UInt32) -> StrokeID { StrokeID(rawValue: n) }

    /// A finished stroke `n` of `points` points in `slot`, along the row `y`.
    static func stroke(_ scene: inout OverlayScene, _ n: UInt32, slot: UInt8 = 0, points: Int, y: Int32) -> [OverlayScene.Change] {
        var changes: [OverlayScene.Change] = []
        scene.apply(.strokeBegan(id(n), slot: slot, at: PixelPoint(x: 0, y: y)), changes: &changes)
        for x in 1..<points { scene.apply(.strokeTo(id(n), PixelPoint(x: Int32(x), y: y)), changes: &changes) }
        scene.apply(.strokeEnded(id(n)), changes: &changes)
        return changes
    }

    @Test func theBackstopDropsTheOldestAndTheCoreStillNamesTheRightStroke() {
        var scene = OverlayScene(pointGuard: 10)
        _ = Self.stroke(&scene, 1, points: 4, y: 10)
        _ = Self.stroke(&scene, 2, points: 4, y: 20)
        let changes = Self.stroke(&scene, 3, points: 4, y: 30)
        // 12 points over a bound of 10: the oldest finished stroke went here, and its box is repainted.
        #expect(scene.shownStrokes.map(\.id) == [Self.id(2), Self.id(3)])
        #expect(scene.backstopDropped == 1)
        #expect(changes.contains { if case .erased(let box) = $0 { box.y0 == 10 } else { false } })
        // The core, unaware, erases its second stroke: that one goes, not the one now second in the list.
        var more: [OverlayScene.Change] = []
        scene.apply(.strokeGone(Self.id(2)), changes: &more)
        #expect(scene.shownStrokes == [ShownStroke(id: Self.id(3), points: 4, inProgress: false)])
        // And its bound dropping the first is nothing here: that one is gone already.
        scene.apply(.strokeGone(Self.id(1)), changes: &more)
        #expect(scene.shownStrokes.map(\.id) == [Self.id(3)] && scene.totalPoints == 4)
    }

    /// The circles and the laser (every frame of `--show-touches` and of the laser) cost no allocation
    /// once warm; nor does the list of changes they leave empty.
    @Test func circlesAndTheLaserAllocateNothingOnceWarm() {
        var scene = OverlayScene()
        var changes: [OverlayScene.Change] = []
        changes.reserveCapacity(16)
        func round(_ i: Int) {
            let p = PixelPoint(x: Int32(i % 1900), y: Int32((i * 7) % 1000))
            scene.apply(.touch(slot: UInt8(i % 10), at: p, alpha: UInt8(truncatingIfNeeded: i)), changes: &changes)
            scene.apply(.laser(p), changes: &changes)
            if i % 5 == 0 { scene.apply(.laserAlpha(UInt8(truncatingIfNeeded: i)), changes: &changes) }
            if i % 7 == 0 { scene.apply(.laserTrim(keep: UInt8(i % 4)), changes: &changes) }
            if i % 11 == 0 { scene.apply(.touchGone(slot: UInt8(i % 10)), changes: &changes) }
            if i % 97 == 0 { scene.apply(.laserOff, changes: &changes) }
        }
        for i in 0..<200 { round(i) }
        let n = allocations { for i in 200..<5_000 { round(i) } }
        #expect(n == 0 && changes.isEmpty)
        #expect(scene.laser != nil && scene.trail.count <= LaserDot.trailLength)
    }

    @Test func aStrokeInProgressIsAddressedByItsIdentityOnly() {
        var scene = OverlayScene()
        var changes: [OverlayScene.Change] = []
        scene.apply(.strokeBegan(Self.id(1), slot: 0, at: PixelPoint(x: 5, y: 5)), changes: &changes)
        // Its end was lost: the slot's next stroke ends it; points for the old one change nothing.
        scene.apply(.strokeBegan(Self.id(2), slot: 0, at: PixelPoint(x: 50, y: 50)), changes: &changes)
        scene.apply(.strokeTo(Self.id(1), PixelPoint(x: 6, y: 6)), changes: &changes)
        scene.apply(.strokeTo(Self.id(2), PixelPoint(x: 51, y: 51)), changes: &changes)
        // A stroke in progress is not erased; a clear empties it and it goes on from nothing.
        scene.apply(.strokeGone(Self.id(2)), changes: &changes)
        #expect(scene.shownStrokes == [ShownStroke(id: Self.id(1), points: 1, inProgress: false),
                                       ShownStroke(id: Self.id(2), points: 2, inProgress: true)])
        scene.apply(.clearDrawings, changes: &changes)
        scene.apply(.strokeTo(Self.id(2), PixelPoint(x: 60, y: 60)), changes: &changes)
        #expect(scene.shownStrokes == [ShownStroke(id: Self.id(2), points: 1, inProgress: true)])
        #expect(scene.strokes.first?.bounds == PixelBox(around: PixelPoint(x: 60, y: 60), reach: 0))
        scene.apply(.remove, changes: &changes)
        #expect(scene.isEmpty && scene.strokes.isEmpty)
    }

    @Test func theCoreKeepsTheDrawingsAcrossAModeSwitchAndErasesThemByIdentity() {
        var config = TouchPipeline.Configuration(mapping: AbsoluteMapping(target: PixelRect(x: 0, y: 0, width: 1920, height: 1080)),
                                                 mode: .presenter)
        config.showTouches = true  // the overlay stays through the switch, and the drawings on it
        var bridge = Bridge(configuration: config)
        var effects = BridgeEffects()
        var scene = OverlayScene()
        var changes: [OverlayScene.Change] = []
        let page = SourceAddress(ipv4: 0x7f00_0001, port: 5000)
        var t: UInt64 = 1_000
        func step(_ body: (inout Bridge, inout BridgeEffects, Instant) -> Void) -> [OverlayAction] {
            effects.clear()
            t += 20
            body(&bridge, &effects, .milliseconds(t))
            let shown = effects.actions.compactMap { if case .overlay(let o) = $0 { o } else { nil } }
            for o in shown { scene.apply(o, changes: &changes) }
            return shown
        }
        func pen(_ x: Double, _ y: Double, eraser: Bool = false) -> [OverlayAction] {
            step { $0.command(.pen(.near(PenSample(x: x, y: y, pressure: 0.5, tiltX: 0, tiltY: 0, twist: 0,
                                                     touching: true, barrel: false, eraser: eraser))),
                              from: page, at: $2, into: &$1) }
        }
        _ = step { $0.start(screen: PixelRect(x: 0, y: 0, width: 1920, height: 1080), monitors: [], at: $2, into: &$1) }
        _ = pen(0.1, 0.1)
        _ = pen(0.2, 0.1)
        _ = step { $0.command(.pen(.away), from: page, at: $2, into: &$1) }
        #expect(bridge.core.shownStrokes.count == 1 && bridge.core.shownStrokes == scene.shownStrokes)
        // To the touchpad and back: the stroke stays on the overlay, and in the core.
        _ = step { $0.command(.mode(.touchpad), from: page, at: $2, into: &$1) }
        #expect(bridge.core.shownStrokes == scene.shownStrokes && scene.strokes.count == 1)
        _ = step { $0.command(.mode(.presenter), from: page, at: $2, into: &$1) }
        #expect(bridge.core.shownStrokes == scene.shownStrokes)
        // A new stroke, then the eraser on the first: that one goes, by its identity.
        _ = pen(0.5, 0.8)
        _ = pen(0.6, 0.8)
        _ = step { $0.command(.pen(.away), from: page, at: $2, into: &$1) }
        let erased = pen(0.15, 0.1, eraser: true)
        #expect(erased == [.strokeGone(Self.id(1))])
        #expect(bridge.core.shownStrokes == scene.shownStrokes && scene.strokes.map(\.id) == [Self.id(2)])
    }
}
