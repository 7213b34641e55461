// Pen mode through the Bridge, on a manual clock: the pen as XTest's pointer and as the uinput tablet,
// its proximity, tip, barrel and eraser, every end path, and the pen in presenter mode.
import Testing
import TouchCore

/// A Bridge in `mode` on a 1920x1080 screen, driven by one web page at a time the test sets.
private struct PenRig {
    var bridge: Bridge
    var effects = BridgeEffects()
    var now: UInt64 = 1_000
    let page = SourceAddress(ipv4: 0x7f00_0001, port: 5000)

    init(mode: TouchMode = .pen, tablet: Bool, monitors: [Monitor] = [], choice: MonitorChoice = .all) {
        var c = TouchPipeline.Configuration(mapping: AbsoluteMapping(target: PixelRect(x: 0, y: 0, width: 1920, height: 1080)),
                                            mode: mode)
        c.penTablet = tablet
        c.realTouches = tablet
        bridge = Bridge(configuration: c, monitor: choice)
        bridge.start(screen: PixelRect(x: 0, y: 0, width: 1920, height: 1080), monitors: monitors, at: .milliseconds(now), into: &effects)
    }

    /// The input actions (overlay ones left out unless `overlay`).
    mutating func run(overlay: Bool = false, _ body: (inout Bridge, inout BridgeEffects, Instant) -> Void) -> [OutputAction] {
        effects.clear()
        body(&bridge, &effects, .milliseconds(now))
        return effects.actions.filter { if case .overlay = $0 { return overlay } else { return true } }
    }

    mutating func pen(_ report: PenReport, overlay: Bool = false) -> [OutputAction] {
        let page = self.page
        return run(overlay: overlay) { $0.command(.pen(report), from: page, at: $2, into: &$1) }
    }

    mutating func command(_ c: WebCommand) -> [OutputAction] {
        let page = self.page
        return run { $0.command(c, from: page, at: $2, into: &$1) }
    }

    /// The clock runs `ms`, the timer firing at every deadline on the way.
    mutating func wait(_ ms: UInt64) -> [OutputAction] {
        var all: [OutputAction] = []
        let end = now + ms
        while let d = effects.deadline, d <= .milliseconds(end) {
            now = max(now, d.nanoseconds / 1_000_000)
            all += run { b, e, _ in b.timer(at: d, into: &e) }
        }
        now = end
        return all
    }
}

private func near(_ x: Double, _ y: Double, pressure: Double = 0, tilt: (Double, Double) = (0, 0), touching: Bool,
                  barrel: Bool = false, eraser: Bool = false) -> PenReport {
    .near(PenSample(x: x, y: y, pressure: pressure, tiltX: tilt.0, tiltY: tilt.1, twist: 0, touching: touching,
                    barrel: barrel, eraser: eraser))
}

private func frame(_ x: Int32, _ y: Int32, pressure: UInt16 = 0, tilt: (Int8, Int8) = (0, 0),
                   touching: Bool, barrel: Bool = false, tool: PenTool = .pen) -> OutputAction {
    .pen(.at(PenFrame(tool: tool, at: PixelPoint(x: x, y: y), pressure: pressure, tiltX: tilt.0, tiltY: tilt.1,
                      touching: touching, barrel: barrel)))
}

@Suite struct PenModeTests {
    // MARK: XTest: the pen is the pointer

    @Test func xtestPenIsThePointerWithButtonOneWhileTouching() {
        var rig = PenRig(tablet: false)
        #expect(rig.pen(near(0.5, 0.5, touching: false)) == [.moveTo(PixelPoint(x: 960, y: 540))])
        #expect(rig.pen(near(0.5, 0.5, pressure: 0.4, touching: true)) == [.button(.left, pressed: true)])
        #expect(rig.pen(near(0.25, 0.75, pressure: 0.9, touching: true)) == [.moveTo(PixelPoint(x: 480, y: 810))])
        // Pressure alone moves nothing: XTest has none.
        #expect(rig.pen(near(0.25, 0.75, pressure: 0.2, touching: true)) == [])
        #expect(rig.pen(near(0.25, 0.75, touching: false)) == [.button(.left, pressed: false)])
        #expect(rig.pen(.away) == [])
        #expect(!rig.bridge.held.holdsInput)
    }

    @Test func xtestBarrelButtonIsButtonThree() {
        var rig = PenRig(tablet: false)
        _ = rig.pen(near(0.1, 0.1, touching: false))
        #expect(rig.pen(near(0.1, 0.1, touching: false, barrel: true)) == [.button(.right, pressed: true)])
        #expect(rig.pen(.away) == [.button(.right, pressed: false)])
    }

    @Test func xtestSilentPenReleasesButtonOne() {
        var rig = PenRig(tablet: false)
        _ = rig.pen(near(0.5, 0.5, touching: false))
        _ = rig.pen(near(0.5, 0.5, pressure: 1, touching: true))
        // The page repeats a still pen's report every 100 ms: 499 ms of silence is not yet silence.
        #expect(rig.wait(499) == [])
        #expect(rig.wait(1) == [.button(.left, pressed: false)])
        #expect(rig.bridge.held.buttons == 0)
        #expect(rig.effects.deadline == nil)
    }

    // MARK: the uinput tablet

    @Test func tabletFramesCarryPressureTiltAndTool() {
        var rig = PenRig(tablet: true)
        #expect(rig.pen(near(0.5, 0.5, tilt: (30, -45), touching: false)) == [frame(960, 540, tilt: (30, -45), touching: false)])
        // Pressure 0.5 of 4095.
        #expect(rig.pen(near(0.5, 0.5, pressure: 0.5, tilt: (30, -45), touching: true))
                == [frame(960, 540, pressure: 2048, tilt: (30, -45), touching: true)])
        // A wobble below 8 of 4095 with nothing else changed sends nothing; more than that does.
        #expect(rig.pen(near(0.5, 0.5, pressure: 0.501, tilt: (30, -45), touching: true)) == [])
        #expect(rig.pen(near(0.5, 0.5, pressure: 0.8, tilt: (30, -45), touching: true))
                == [frame(960, 540, pressure: 3276, tilt: (30, -45), touching: true)])
        #expect(rig.bridge.held.pen?.touching == true)
        // Tilt beyond 90 degrees is clamped (the parser refuses it; the machine clamps anyway).
        #expect(rig.pen(near(0.5, 0.5, pressure: 0.8, tilt: (120, -200), touching: true))
                == [frame(960, 540, pressure: 3276, tilt: (90, -90), touching: true)])
        #expect(rig.pen(.away) == [.pen(.away)])
        #expect(rig.bridge.held.pen == nil)
    }

    @Test func theEraserIsItsOwnTool() {
        var rig = PenRig(tablet: true)
        _ = rig.pen(near(0.5, 0.5, touching: false))
        // Turned over: the pen leaves proximity and the eraser enters.
        #expect(rig.pen(near(0.5, 0.5, touching: false, eraser: true)) == [.pen(.away), frame(960, 540, touching: false, tool: .eraser)])
        #expect(rig.pen(near(0.5, 0.5, pressure: 1, touching: true, eraser: true)) == [frame(960, 540, pressure: 4095, touching: true, tool: .eraser)])
        #expect(rig.bridge.held.pen?.tool == .eraser)
    }

    @Test func mapsOntoTheChosenMonitorAsAFingerDoes() {
        let monitors = [Monitor(name: "LEFT", rect: PixelRect(x: 0, y: 0, width: 960, height: 1080), isPrimary: true),
                        Monitor(name: "RIGHT", rect: PixelRect(x: 960, y: 0, width: 960, height: 1080), isPrimary: false)]
        var rig = PenRig(tablet: true, monitors: monitors, choice: .named("RIGHT"))
        // The right monitor's top-left and bottom-right pixels (stretch: the default fit).
        #expect(rig.pen(near(0, 0, touching: false)) == [frame(960, 0, touching: false)])
        #expect(rig.pen(near(1, 1, touching: false)) == [frame(1919, 1079, touching: false)])
    }

    // MARK: every end path leaves proximity

    @Test func silencePageHiddenSocketClosedModeSwitchAndShutdownEachLeaveProximity() {
        let enter: (inout PenRig) -> Void = { rig in
            _ = rig.pen(near(0.3, 0.3, touching: false))
            _ = rig.pen(near(0.3, 0.3, pressure: 0.6, touching: true, barrel: true))
        }
        var silence = PenRig(tablet: true)
        enter(&silence)
        #expect(silence.wait(600) == [.pen(.away)])

        var hidden = PenRig(tablet: true)
        enter(&hidden)
        #expect(hidden.command(.release) == [.pen(.away)])
        // The tip still on the glass does nothing until it lifts; then the pen comes back.
        #expect(hidden.pen(near(0.4, 0.4, pressure: 0.6, touching: true)) == [])
        #expect(hidden.pen(near(0.4, 0.4, touching: false)) == [frame(768, 432, touching: false)])

        var closed = PenRig(tablet: true)
        enter(&closed)
        let page = closed.page
        #expect(closed.run { $0.sourceGone(page, at: $2, into: &$1) } == [.pen(.away)])

        var switched = PenRig(tablet: true)
        enter(&switched)
        #expect(switched.command(.mode(.touchscreen)) == [.pen(.away)])
        // In touchscreen mode the pen does nothing.
        #expect(switched.pen(near(0.3, 0.3, touching: false)) == [])

        var tuned = PenRig(tablet: true)
        enter(&tuned)
        // A setting that changes a value releases everything, in every mode: the pen too (it stays
        // cancelled until it hovers or goes).
        #expect(tuned.command(.tune(.speed(0.5))) == [.pen(.away)])
        #expect(tuned.bridge.held.pen == nil)

        var stopped = PenRig(tablet: true)
        enter(&stopped)
        #expect(stopped.run { b, e, _ in b.shutdown(into: &e) } == [.pen(.away)])
        #expect(!stopped.bridge.held.holdsInput)
    }

    @Test func fingersDoNothingInPenMode() {
        var rig = PenRig(tablet: true)
        var packet = TouchPacket()
        packet.events = [TouchEvent(slot: 0, update: .position(DevicePoint(rawX: 100, rawY: 100)))]
        packet.hasTouches = true
        let page = rig.page
        #expect(rig.run { $0.packet(packet, from: page, via: .web, at: $2, into: &$1) } == [])
    }

    @Test func traceNamesTheStates() {
        var rig = PenRig(tablet: true)
        rig.bridge.setTracing(true)
        _ = rig.pen(near(0.5, 0.5, touching: false))
        _ = rig.pen(near(0.5, 0.5, pressure: 0.5, touching: true))
        _ = rig.pen(near(0.5, 0.5, touching: false))
        _ = rig.pen(.away)
        let lines = rig.effects.events.compactMap { if case .transition(let t, _) = $0 { return "\(t)" } else { return nil } }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("pen: hovering → away → away") == true)
    }

    // MARK: presenter mode: the pen draws with its pressure, the eraser erases

    @Test func presenterPenWidthFollowsPressure() {
        var rig = PenRig(mode: .presenter, tablet: false)
        let down = rig.pen(near(0.1, 0.1, pressure: 0, touching: true), overlay: true)
        #expect(down == [.overlay(.strokeWidth(slot: DrawingStore.penSlot, width: 2)),
                         .overlay(.strokeBegan(StrokeID(rawValue: 1), slot: DrawingStore.penSlot, at: PixelPoint(x: 191, y: 107)))])
        let harder = rig.pen(near(0.2, 0.1, pressure: 1, touching: true), overlay: true)
        #expect(harder == [.overlay(.strokeWidth(slot: DrawingStore.penSlot, width: 12)),
                           .overlay(.strokeTo(StrokeID(rawValue: 1), PixelPoint(x: 384, y: 107)))])
        // The same pressure again: no new width.
        let same = rig.pen(near(0.3, 0.1, pressure: 1, touching: true), overlay: true)
        #expect(same == [.overlay(.strokeTo(StrokeID(rawValue: 1), PixelPoint(x: 575, y: 107)))])
        #expect(rig.pen(near(0.3, 0.1, touching: false), overlay: true) == [.overlay(.strokeEnded(StrokeID(rawValue: 1)))])
        // Nothing is pressed by the pen in presenter mode.
        #expect(!rig.bridge.held.holdsInput)
    }

    @Test func presenterEraserErasesTheStrokesItMeets() {
        var rig = PenRig(mode: .presenter, tablet: false)
        // Two strokes: one at the top left, one at the bottom right.
        _ = rig.pen(near(0.1, 0.1, pressure: 0.5, touching: true))
        _ = rig.pen(near(0.15, 0.1, pressure: 0.5, touching: true))
        _ = rig.pen(.away)
        _ = rig.pen(near(0.8, 0.8, pressure: 0.5, touching: true))
        _ = rig.pen(near(0.85, 0.8, pressure: 0.5, touching: true))
        _ = rig.pen(.away)
        #expect(rig.bridge.core.strokeCount == 2)
        // The eraser far from both erases nothing; on the second stroke, that one (the second begun) goes, by its identity.
        #expect(rig.pen(near(0.5, 0.5, pressure: 0.5, touching: true, eraser: true), overlay: true) == [])
        #expect(rig.pen(near(0.82, 0.8, pressure: 0.5, touching: true, eraser: true), overlay: true) == [.overlay(.strokeGone(StrokeID(rawValue: 2)))])
        #expect(rig.pen(near(0.12, 0.1, pressure: 0.5, touching: true, eraser: true), overlay: true) == [.overlay(.strokeGone(StrokeID(rawValue: 1)))])
        #expect(rig.bridge.core.strokeCount == 0)
    }

    @Test func presenterPenStrokeEndsOnSilence() {
        var rig = PenRig(mode: .presenter, tablet: false)
        _ = rig.pen(near(0.1, 0.1, pressure: 0.5, touching: true))
        let after = rig.wait(600)
        #expect(after.isEmpty)  // no input: only the overlay's stroke end (left out here)
        #expect(rig.bridge.held.strokes == 0)
    }
}
