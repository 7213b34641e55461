// Cancelled stays cancelled, through the Bridge on a manual clock: a finger or pen cancelled while down stays
// cancelled through mode round trips until it ends (lifts, hovers, goes, or falls silent), and a new
// sender's fingers and pen start from nothing.
import Testing
import TouchCore

/// A Bridge in `mode` on a 1920x1080 screen, fed by pages at 127.0.0.1 (port 5000 unless told).
private struct Rig {
    var bridge: Bridge
    var effects = BridgeEffects()
    var now: UInt64 = 1_000

    init(mode: TouchMode, tablet: Bool = false) {
        var c = TouchPipeline.Configuration(mapping: AbsoluteMapping(target: PixelRect(x: 0, y: 0, width: 1920, height: 1080)),
                                            mode: mode)
        c.penTablet = tablet
        bridge = Bridge(configuration: c)
        bridge.start(screen: PixelRect(x: 0, y: 0, width: 1920, height: 1080), monitors: [], at: .milliseconds(now), into: &effects)
    }

    static func page(_ port: UInt16 = 5000) -> SourceAddress { SourceAddress(ipv4: 0x7f00_0001, port: port) }

    /// The actions of one input, 20 ms after the previous one.
    mutating func run(_ body: (inout Bridge, inout BridgeEffects, Instant) -> Void) -> [OutputAction] {
        now += 20
        effects.clear()
        body(&bridge, &effects, .milliseconds(now))
        return effects.actions
    }

    mutating func command(_ c: WebCommand, from port: UInt16 = 5000) -> [OutputAction] {
        run { $0.command(c, from: Self.page(port), at: $2, into: &$1) }
    }

    mutating func pen(_ x: Double, touching: Bool, from port: UInt16 = 5000) -> [OutputAction] {
        command(.pen(.near(PenSample(x: x, y: 0.5, pressure: touching ? 0.5 : 0, touching: touching))), from: port)
    }

    /// Slot 0 at (x, 2000) (nil: lifted), with the page's full state.
    mutating func finger(_ x: UInt16?, from port: UInt16 = 5000) -> [OutputAction] {
        let p = x.map { packet(at(0, $0, 2000), state: state([0: .down(pt($0, 2000))])) } ?? packet(ended(0), state: state())
        return run { $0.packet(p, from: Self.page(port), via: .web, at: $2, into: &$1) }
    }
}

/// What would be a press, a key, a stroke or a pen in proximity: anything but a release or a fade.
private func made(_ actions: [OutputAction]) -> [OutputAction] {
    actions.filter {
        switch $0 {
        case .button(_, true), .key(_, true), .extraPointerButton(_, _, true), .moveTo, .moveBy, .type,
             .touch(_, .began, _), .touch(_, .moved, _), .padContact(.began), .padContact(.moved), .pen(.at):
            return true
        case .overlay(.strokeBegan), .overlay(.strokeTo), .overlay(.strokeGone):
            return true
        default:
            return false
        }
    }
}

private func pressesButtonOne(_ actions: [OutputAction]) -> Bool { actions.contains(.button(.left, pressed: true)) }
private func beginsPenStroke(_ actions: [OutputAction]) -> Bool {
    actions.contains { if case .overlay(.strokeBegan(_, DrawingStore.penSlot, _)) = $0 { return true } else { return false } }
}

@Suite struct CancelRoundTripTests {
    // MARK: a finger

    @Test func twoCancelsInARowKeepTheFingerCancelled() {
        var tracker = ContactTracker()
        var changes: [ContactChange] = []
        tracker.handle(packet(at(0, 100, 100)), at: ms(0), into: &changes)
        tracker.cancelAll(keepingCancelled: true, into: &changes)
        tracker.cancelAll(keepingCancelled: true, into: &changes)
        #expect(tracker.hasSuppressed)
        #expect(tracker.feed(packet(at(0, 200, 100))).isEmpty, "the cancelled finger came back")
        #expect(tracker.feed(packet(ended(0))).isEmpty)
        #expect(tracker.feed(packet(at(0, 300, 100))) == [.began(slot: 0, at: pt(300, 100))], "a new touch begins")
    }

    @Test(arguments: [TouchMode.pen, .touchpad, .presenter])
    func aTouchscreenFingerStaysCancelledThroughARoundTrip(via: TouchMode) {
        var rig = Rig(mode: .touchscreen)
        #expect(pressesButtonOne(rig.finger(1000)))
        #expect(rig.command(.mode(via)).contains(.button(.left, pressed: false)))
        _ = rig.finger(1100)
        #expect(made(rig.command(.mode(.touchscreen))).isEmpty)
        for x in stride(from: UInt16(1200), through: 2000, by: 200) { #expect(made(rig.finger(x)).isEmpty, "moved on at \(x)") }
        #expect(made(rig.finger(nil)).isEmpty, "the lift clicked")
        #expect(pressesButtonOne(rig.finger(2500)), "a new touch presses")
    }

    @Test func aSwipeStaysCancelledThroughPresenterPenPresenter() {
        var rig = Rig(mode: .presenter)
        _ = rig.command(.surface(width: 390, height: 844))
        _ = rig.finger(3500)
        _ = rig.finger(3300)
        _ = rig.command(.mode(.pen))
        _ = rig.command(.mode(.presenter))
        for x in stride(from: UInt16(3000), through: 600, by: -400) { #expect(made(rig.finger(x)).isEmpty) }
        #expect(made(rig.finger(nil)).isEmpty, "the cancelled swipe changed the slide")
        // The same swipe, new: Page_Down or Page_Up.
        var keys: [OutputAction] = []
        for x in stride(from: UInt16(3500), through: 600, by: -400) { keys += rig.finger(x) }
        keys += rig.finger(nil)
        #expect(keys.contains { if case .key(_, true) = $0 { return true } else { return false } }, "a new swipe sent no key")
    }

    @Test func aFingerCancelledByReleaseThenAModeRoundTripStaysCancelled() {
        var rig = Rig(mode: .touchscreen)
        _ = rig.finger(1000)
        _ = rig.command(.release)
        _ = rig.command(.mode(.touchpad))
        _ = rig.command(.mode(.touchscreen))
        _ = rig.command(.release)
        #expect(made(rig.finger(1500)).isEmpty)
        #expect(made(rig.finger(nil)).isEmpty)
    }

    // MARK: the pen

    @Test(arguments: [false, true])
    func aPenDrawingInPresenterThenPenModeStaysCancelledUntilLifted(tablet: Bool) {
        var rig = Rig(mode: .presenter, tablet: tablet)
        _ = rig.pen(0.2, touching: false)
        #expect(beginsPenStroke(rig.pen(0.2, touching: true)))
        _ = rig.command(.mode(.pen))
        for x in [0.3, 0.4, 0.5] { #expect(made(rig.pen(x, touching: true)).isEmpty, "the cancelled pen came back at \(x)") }
        // Lifted to hover, then down: it presses (XTest) or touches (tablet).
        _ = rig.pen(0.5, touching: false)
        let down = rig.pen(0.5, touching: true)
        #expect(pressesButtonOne(down) || down.contains { if case .pen(.at(let f)) = $0 { return f.touching } else { return false } })
    }

    @Test func aPenTouchingInPenModeThenPresenterDrawsNothingUntilLifted() {
        var rig = Rig(mode: .pen)
        _ = rig.pen(0.1, touching: false)
        #expect(pressesButtonOne(rig.pen(0.1, touching: true)))
        _ = rig.command(.mode(.presenter))
        for x in [0.2, 0.5, 0.9] { #expect(made(rig.pen(x, touching: true)).isEmpty, "the cancelled pen drew at \(x)") }
        _ = rig.pen(0.9, touching: false)
        #expect(beginsPenStroke(rig.pen(0.9, touching: true)), "lifted and down again, it draws")
    }

    @Test func aPenCancelledStaysCancelledThroughARoundTripAndAwayEndsIt() {
        var rig = Rig(mode: .pen)
        _ = rig.pen(0.1, touching: false)
        _ = rig.pen(0.1, touching: true)
        _ = rig.command(.mode(.presenter))
        _ = rig.command(.mode(.pen))
        _ = rig.command(.release)
        #expect(made(rig.pen(0.2, touching: true)).isEmpty)
        _ = rig.command(.pen(.away))
        #expect(pressesButtonOne(rig.pen(0.3, touching: true)), "after away, a touch presses")
    }

    /// Decided: the pen's tip on the glass when a switch comes is cancelled in any mode, even one where
    /// the pen does nothing (touchscreen): entering pen mode with the tip down presses nothing.
    @Test func aPenDownInTouchscreenModeIsCancelledBySwitchingToPenMode() {
        var rig = Rig(mode: .touchscreen)
        _ = rig.pen(0.1, touching: true)
        _ = rig.command(.mode(.pen))
        #expect(made(rig.pen(0.2, touching: true)).isEmpty)
        _ = rig.pen(0.2, touching: false)
        #expect(pressesButtonOne(rig.pen(0.2, touching: true)))
    }

    /// No silence ends a cancelled pen: the page's socket loses nothing, so its end (a hover, `away`)
    /// always comes. A pen cancelled by `release`, quiet for longer than `idleRelease`, still touching,
    /// presses nothing until it hovers.
    @Test func aCancelledPenStaysCancelledThroughASilence() {
        var rig = Rig(mode: .pen)
        _ = rig.pen(0.1, touching: false)
        _ = rig.pen(0.1, touching: true)
        _ = rig.command(.release)
        #expect(made(rig.pen(0.1, touching: true)).isEmpty)
        rig.now += 600
        #expect(made(rig.pen(0.2, touching: true)).isEmpty)
        _ = rig.pen(0.2, touching: false)
        #expect(pressesButtonOne(rig.pen(0.2, touching: true)))
    }

    /// The pen touching in pen mode; `mode presenter`; the daemon makes the
    /// overlay window meanwhile, so the pen's next report comes more than `idleRelease` later, still
    /// touching (no `away`): it draws nothing until it lifts; lifted and down again, it draws.
    @Test func aPenHeldThroughASwitchToPresenterDrawsNothingAfterAPause() {
        var rig = Rig(mode: .pen)
        _ = rig.pen(0.1, touching: false)
        #expect(pressesButtonOne(rig.pen(0.1, touching: true)))
        _ = rig.command(.mode(.presenter))
        rig.now += 700
        for x in [0.2, 0.3, 0.4] { #expect(made(rig.pen(x, touching: true)).isEmpty, "the held pen drew after the switch") }
        _ = rig.pen(0.4, touching: false)
        #expect(beginsPenStroke(rig.pen(0.5, touching: true)))
    }

    /// Presenter mode, a finger down and moving; the page sets the speed (a
    /// setting that changes a value, an end path in every mode); the finger moves on and lifts: no key.
    /// A new swipe then changes the slide.
    @Test func aSettingMidSwipeInPresenterModeSendsNoKey() {
        var rig = Rig(mode: .presenter)
        _ = rig.command(.surface(width: 390, height: 844))
        _ = rig.finger(3500)
        _ = rig.finger(3300)
        _ = rig.command(.tune(.speed(0.3)))
        var after: [OutputAction] = []
        for x in stride(from: UInt16(3000), through: 500, by: -500) { after += rig.finger(x) }
        after += rig.finger(nil)
        #expect(!after.contains { if case .key(_, true) = $0 { return true } else { return false } },
                "the cancelled swipe sent a key: \(after)")
        var again: [OutputAction] = []
        for x in stride(from: UInt16(3500), through: 500, by: -500) { again += rig.finger(x) }
        again += rig.finger(nil)
        #expect(again.contains { if case .key(_, true) = $0 { return true } else { return false } }, "a new swipe sent no key")
        // The same setting again changes nothing, and cancels nothing.
        _ = rig.finger(3500)
        #expect(rig.command(.tune(.speed(0.3))).isEmpty)
    }

    // MARK: a new sender

    @Test(arguments: [TouchMode.pen, .presenter])
    func aNewPagesPenStartsFresh(mode: TouchMode) {
        var rig = Rig(mode: mode)
        _ = rig.pen(0.1, touching: false)
        _ = rig.pen(0.1, touching: true)
        _ = rig.run { $0.sourceGone(Rig.page(), at: $2, into: &$1) }
        // The next page (another port), starting with a touch and no hover.
        let first = rig.pen(0.4, touching: true, from: 5001)
        #expect(mode == .pen ? pressesButtonOne(first) : beginsPenStroke(first), "the new page's pen did nothing: \(first)")
    }

    @Test func aTakeoverStartsTheNewSendersPenAndFingersFresh() {
        var rig = Rig(mode: .pen)
        _ = rig.pen(0.1, touching: false)
        _ = rig.pen(0.1, touching: true)
        _ = rig.command(.release)
        rig.now += 11_000  // the first page silent past the takeover time
        #expect(pressesButtonOne(rig.pen(0.4, touching: true, from: 5001)))
        _ = rig.command(.pen(.away), from: 5001)
        _ = rig.command(.mode(.touchscreen), from: 5001)
        #expect(pressesButtonOne(rig.finger(1000, from: 5001)))
    }
}
