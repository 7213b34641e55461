// The Bridge's decisions, with a manual clock: who may send, what a hello gets, what is released when,
// and what a mode switch asks of the overlay.
import Testing
import TouchCore

/// A Bridge on a 1920×1080 screen, fed by the test at the times it says.
struct Harness {
    var bridge: Bridge
    var effects = BridgeEffects()
    static let screen = PixelRect(x: 0, y: 0, width: 1920, height: 1080)

    init(mode: TouchMode = .touchscreen, showTouches: Bool = false, monitor: MonitorChoice = .all,
         idleRelease: Interval = .milliseconds(500)) {
        var c = TouchPipeline.Configuration(screen: ScreenMapping(width: 1920, height: 1080), idleRelease: idleRelease, mode: mode)
        c.showTouches = showTouches
        bridge = Bridge(configuration: c, monitor: monitor)
        bridge.start(screen: Self.screen, monitors: [], at: ms(0), into: &effects)
    }

    mutating func send(_ p: TouchPacket, from s: SourceAddress, via t: Transport = .poseAI, at n: UInt64) -> BridgeEffects {
        effects.clear()
        bridge.packet(p, from: s, via: t, at: ms(n), into: &effects)
        return effects
    }

    mutating func command(_ c: WebCommand, from s: SourceAddress, at n: UInt64) -> BridgeEffects {
        effects.clear()
        bridge.command(c, from: s, at: ms(n), into: &effects)
        return effects
    }

    mutating func gone(_ s: SourceAddress, at n: UInt64) -> BridgeEffects {
        effects.clear()
        bridge.sourceGone(s, at: ms(n), into: &effects)
        return effects
    }

    mutating func timer(at n: UInt64) -> BridgeEffects {
        effects.clear()
        bridge.timer(at: ms(n), into: &effects)
        return effects
    }

    mutating func shutdown() -> BridgeEffects {
        effects.clear()
        bridge.shutdown(into: &effects)
        return effects
    }
}

let phone = v4(192, 168, 1, 20, port: 50000)
let tablet = v4(192, 168, 1, 30, port: 50001)
let hello: TouchPacket = {
    var p = TouchPacket()
    p.hasSessionUUID = true
    return p
}()
let down = packet(at(0, 2047, 2047), state: state([0: .down(pt(2047, 2047))]))
let lift = packet(ended(0), state: state())

extension BridgeEffects {
    var overlayWindow: [OverlayAction] {
        actions.compactMap {
            if case .overlay(let o) = $0, o == .remove || { if case .cover = o { return true } else { return false } }() { return o }
            return nil
        }
    }
    var connected: [SourceAddress] {
        events.compactMap { if case .senderConnected(let s, _, _) = $0 { return s } else { return nil } }
    }
    var busyLines: Int {
        events.filter { if case .refusedBusy = $0 { return true } else { return false } }.count
    }
}

@Suite struct BridgeTests {
    @Test func aHelloIsAnsweredWithTheHandshakeAndMakesTheSender() {
        var h = Harness()
        let e = h.send(hello, from: phone, at: 0)
        #expect(e.reply == .handshake)
        #expect(e.actions.isEmpty)
        #expect(e.connected == [phone])
        #expect((h.bridge.sender?.address == phone))
    }

    @Test func anotherSourceIsBusyUntilTheSenderIsSilentTenSecondsThenTakesOver() {
        var h = Harness()
        _ = h.send(down, from: phone, at: 0)
        var e = h.send(down, from: tablet, at: 100)
        #expect(e.actions.isEmpty, "a second phone must not act while the first is live")
        #expect(e.reply == nil, "UDP gets no reply when busy")
        #expect(e.busyLines == 1)
        e = h.send(down, from: tablet, via: .web, at: 200)
        #expect(e.reply == BridgeReply.busy, "the web page is told it is busy")
        // The first phone's finger is released by the watchdog meanwhile; at 10 s the tablet takes over.
        _ = h.timer(at: 500)
        e = h.send(down, from: tablet, at: 10_000)
        #expect(e.connected == [tablet])
        #expect(e.actions.contains(leftPress), "the new sender's finger acts")
        #expect(h.send(down, from: phone, at: 10_016).actions.isEmpty, "now the old phone is refused")
    }

    @Test func aNewSenderReleasesWhatTheOldOneHeld() {
        var h = Harness(idleRelease: .seconds(20))
        _ = h.send(down, from: phone, at: 0)
        #expect(h.bridge.core.hasContacts)
        // The phone's finger stays down (the watchdog is long), but the phone falls silent for 10 s.
        let e = h.send(down, from: tablet, at: 10_000)
        let releaseIndex = e.actions.firstIndex(of: leftRelease)
        let pressIndex = e.actions.lastIndex(of: leftPress)
        #expect(releaseIndex != nil && pressIndex != nil && releaseIndex! < pressIndex!,
                "the old finger's button is released before the new one presses: \(e.actions)")
    }

    @Test func busyLinesAreBoundedToOnePerTenSecondsWithCounts() {
        var h = Harness(idleRelease: .seconds(30))
        _ = h.send(down, from: phone, at: 0)
        var lines = 0, refused: UInt64 = 0
        // 16 ports at 60 Hz for 9.9 s, while the phone stays live: one line.
        for t in stride(from: UInt64(1), to: 9_900, by: 16) {
            _ = h.send(down, from: phone, at: t)
            for port in UInt16(0)..<16 {
                lines += h.send(down, from: v4(192, 168, 1, 20, port: 40000 + port), at: t).busyLines
                refused += 1
            }
        }
        #expect(lines == 1)
        // 10 s after the first line, the next refusal is logged again, with the counts.
        _ = h.send(down, from: phone, at: 10_000)
        let e = h.send(down, from: tablet, at: 10_001)
        guard case .refusedBusy(let source, _, let report)? = e.events.first else {
            Issue.record("no second line: \(e.events)")
            return
        }
        #expect(source == tablet)
        #expect(report.total == refused + 1 && report.suppressed == refused - 1, "\(report)")
    }

    @Test func theWebPageGoingAwayReleasesAndEndsTheSession() {
        var h = Harness()
        _ = h.send(down, from: phone, via: .web, at: 0)
        #expect(h.gone(tablet, at: 10).actions.isEmpty, "a source that is not the sender changes nothing")
        let e = h.gone(phone, at: 20)
        #expect(e.actions.contains(leftRelease))
        #expect(e.events.contains { if case .sourceGone(phone, _) = $0 { return true } else { return false } })
        _ = h.send(down, from: tablet, at: 30)
        #expect(h.bridge.isSender(Sender(tablet, via: .poseAI)), "another phone may connect at once")
    }

    @Test func silenceReleasesAndIsLoggedOnce() {
        var h = Harness()
        let e0 = h.send(down, from: phone, at: 0)
        #expect(e0.deadline == ms(500))
        #expect(h.timer(at: 499).actions.isEmpty, "an early timer does nothing")
        let e = h.timer(at: 500)
        #expect(e.actions.contains(leftRelease))
        #expect(e.events.contains { if case .senderSilent = $0 { return true } else { return false } })
        #expect(e.deadline == nil, "nothing pending: the idle daemon sleeps")
    }

    @Test func shutdownReleasesEverythingRemovesTheOverlayAndStopsActing() {
        var h = Harness(mode: .presenter)
        _ = h.send(down, from: phone, at: 0)
        let e = h.shutdown()
        #expect(e.overlayWindow == [.remove])
        #expect(e.deadline == nil)
        #expect(h.send(down, from: phone, at: 10).actions.isEmpty, "nothing acts after shutdown")
        var h2 = Harness()
        _ = h2.send(down, from: phone, at: 0)
        #expect(h2.shutdown().actions.contains(leftRelease))
    }

    @Test func theOverlayExistsExactlyWhileTheModeDraws() {
        var touchpad = Harness(mode: .touchpad)
        #expect(touchpad.effects.overlayWindow.isEmpty, "no overlay for the touchpad")
        let presenter = Harness(mode: .presenter)
        #expect(presenter.effects.overlayWindow == [.cover(Harness.screen)], "presenter mode starts with its overlay")
        let shown = Harness(mode: .touchpad, showTouches: true)
        #expect(shown.effects.overlayWindow == [.cover(Harness.screen)], "--show-touches makes it in any mode")
        _ = touchpad.send(hello, from: phone, via: .web, at: 0)
        #expect(touchpad.bridge.overlayShown == false)
    }

    @Test func switchingPadToSlidesMakesTheOverlayAndALongPressShowsTheLaser() {
        var h = Harness(mode: .touchpad, idleRelease: .seconds(2))
        var e = h.command(.mode(.presenter), from: phone, at: 0)
        #expect(e.reply == .mode(.presenter))
        #expect(e.overlayWindow == [.cover(Harness.screen)])
        #expect(e.events.contains { if case .modeChanged(.presenter, by: phone, _) = $0 { return true } else { return false } })
        _ = h.send(down, from: phone, via: .web, at: 100)
        e = h.timer(at: 600)  // the long press: 500 ms resting
        #expect(e.actions.contains { if case .overlay(.laser) = $0 { return true } else { return false } }, "\(e.actions)")
        #expect(h.bridge.core.laserOn)
    }

    @Test func switchingSlidesToPadReleasesUnderTheOldModeAndRemovesTheOverlay() {
        var h = Harness(mode: .presenter, idleRelease: .seconds(2))
        _ = h.send(down, from: phone, via: .web, at: 0)
        _ = h.timer(at: 500)
        #expect(h.bridge.core.laserOn)
        let e = h.command(.mode(.touchpad), from: phone, at: 600)
        #expect(e.overlayWindow == [.remove])
        #expect(e.reply == .mode(.touchpad))
        #expect(!h.bridge.core.laserOn, "only the active machine lives: the presenter and its laser are gone")
        #expect(!h.bridge.core.hasContacts, "everything held was released across the switch")
        // And back: a fresh presenter with its overlay.
        #expect(h.command(.mode(.presenter), from: phone, at: 700).overlayWindow == [.cover(Harness.screen)])
    }

    @Test func switchingToTheModeInUseChangesNothing() {
        var h = Harness(mode: .touchpad)
        let e = h.command(.mode(.touchpad), from: phone, at: 0)
        #expect(e.actions.isEmpty)
        #expect(e.reply == .mode(.touchpad))
        #expect(!e.events.contains { if case .modeChanged = $0 { return true } else { return false } })
    }

    @Test func webCommandsBecomeActionsInTheCoresUnits() {
        var h = Harness(mode: .touchpad)
        #expect(h.command(.click(.right), from: phone, at: 0).actions == click(.right))
        // (A control character never reaches here: the parser refuses it, as in `edit`; EditMessageTests.)
        #expect(h.command(.text("a€"), from: phone, at: 1).actions
                == [.type(KeySym(rawValue: 0x61)), .type(KeySym(rawValue: 0x0100_20AC))])
        #expect(h.command(.key(KeyChord(.escape)), from: phone, at: 2).actions == [.key(.escape, pressed: true), .key(.escape, pressed: false)])
        let e = h.command(.surface(width: 390, height: 844), from: phone, at: 3)
        #expect(e.reply == .mode(.touchpad))
        guard case .surface(_, _, let size, _)? = e.events.first else {
            Issue.record("no surface event: \(e.events)")
            return
        }
        #expect(abs(size.widthMM - 61.9) < 0.1 && abs(size.heightMM - 134.0) < 0.1, "160 CSS px per inch: \(size)")
    }

    @Test func aMonitorThatAppearsIsFollowedAndAMissingOneIsSaid() {
        var h = Harness(mode: .presenter, monitor: .named("RIGHT"))
        #expect(h.effects.events.contains { if case .monitorMissing = $0 { return true } else { return false } })
        let right = Monitor(name: "RIGHT", rect: PixelRect(x: 960, y: 0, width: 960, height: 1080), isPrimary: false)
        h.effects.clear()
        h.bridge.screenChanged(screen: Harness.screen, monitors: [right], at: ms(10), into: &h.effects)
        #expect(h.effects.overlayWindow == [.cover(right.rect)], "the overlay follows the monitor")
        #expect(h.effects.events.contains { if case .targetChanged = $0 { return true } else { return false } })
        #expect(h.bridge.core.screenMapping.pixel(for: pt(0, 0)) == PixelPoint(x: 960, y: 0))
    }

    @Test func theHotPathAllocatesNothingOnceWarm() {
        var h = Harness(mode: .touchpad)
        var moving = packet(at(0, 1000, 1000), state: state([0: .down(pt(1000, 1000))]))
        for i in 0..<50 { _ = h.send(moving, from: phone, at: UInt64(i * 16)) }
        let before = allocations {
            for i in 0..<200 {
                moving.events[0] = at(0, UInt16(1000 + i), 1000)
                h.effects.clear()
                h.bridge.packet(moving, from: phone, via: .poseAI, at: ms(UInt64(1000 + i * 16)), into: &h.effects)
            }
        }
        #expect(before == 0, "\(before) allocations in 200 packets")
    }

    /// A page's mode lasts while that page holds the session: when it goes, or another sender takes
    /// over, the configured mode comes back (with its overlay).
    @Test func aPagesModeLastsWhileItHoldsTheSession() {
        var h = Harness(mode: .touchpad)
        #expect(h.command(.mode(.presenter), from: phone, at: 0).overlayWindow == [.cover(Harness.screen)])
        let gone = h.gone(phone, at: 1_100)
        #expect(h.bridge.core.configuration.mode == .touchpad, "the page's mode outlived the page")
        #expect(gone.overlayWindow == [.remove])
        #expect(gone.events.contains { if case .modeRestored(.touchpad, _) = $0 { return true } else { return false } })
        // Another page (told the mode in use by the answer to its `surface`, as every page is) comes.
        _ = h.send(down, from: tablet, via: .web, at: 1_200)
        // A takeover by a UDP phone (the page idle for 10 s) brings the configured mode back too.
        _ = h.command(.mode(.touchscreen), from: tablet, at: 1_300)
        _ = h.send(lift, from: tablet, via: .web, at: 1_400)
        _ = h.send(down, from: phone, at: 11_400)
        #expect((h.bridge.sender?.address == phone))
        #expect(h.bridge.core.configuration.mode == .touchpad)
    }

    /// Activity holds the session, nothing else: a sender whose packets change nothing (the empty PoseAI
    /// packet) lets a waiting page in 10 s after its last activity, however often it sends.
    @Test func emptyPacketsDoNotHoldTheSession() {
        var h = Harness(mode: .touchscreen)
        let empty: TouchPacket = {
            var p = TouchPacket()
            p.state = state()
            return p
        }()
        _ = h.send(down, from: tablet, at: 0)
        _ = h.send(lift, from: tablet, at: 50)
        for t in stride(from: UInt64(1_000), to: 10_050, by: 1_000) {
            #expect(h.send(empty, from: tablet, at: t).actions.isEmpty)
            #expect(h.command(.surface(width: 390, height: 844), from: phone, at: t + 1).reply == .busy)
        }
        #expect(h.command(.surface(width: 390, height: 844), from: phone, at: 10_050).reply == .mode(.touchscreen))
        #expect((h.bridge.sender?.address == phone))
        // The page's own activity holds it: a click does, the same surface again does not.
        _ = h.command(.click(.left), from: phone, at: 15_000)
        _ = h.command(.surface(width: 390, height: 844), from: phone, at: 20_000)
        #expect(h.send(down, from: tablet, at: 24_999).actions.isEmpty, "the page clicked 10 s ago less 1 ms")
        #expect(h.send(down, from: tablet, at: 25_000).actions.contains(leftPress), "the same surface held the session")
    }

    /// A datagram from the page's address and port number (UDP lets anyone write it) is another sender:
    /// refused while the page holds the session, whatever it carries.
    @Test func aDatagramFromThePagesPortIsNotThePage() {
        for transport in [Transport.poseAI, .tuio] {
            var h = Harness(mode: .touchscreen)
            _ = h.command(.click(.middle), from: phone, at: 0)
            let e = h.send(down, from: phone, via: transport, at: 10)
            #expect(e.actions.isEmpty, "a \(transport) datagram from the page's port acted: \(e.actions)")
            #expect(e.busyLines == 1)
            #expect(h.bridge.sender == Sender(phone, via: .web))
            #expect(h.send(down, from: phone, via: .web, at: 20).actions.contains(leftPress), "the page's own finger")
            // Nor does it end the page's session when the page's socket closes: only the page's own does.
            #expect(h.gone(tablet, at: 30).actions.isEmpty)
        }
    }
}
