import Testing
import TouchCore

@Suite struct ViewMachineTests {
    let phone = Sender(v4(192, 168, 1, 20, port: 50000), via: .web)
    let tablet = Sender(v4(192, 168, 1, 30, port: 50000), via: .web)

    func holding(_ sender: Sender? = nil, enabled: Bool = true, available: Bool = true) -> ViewMachine {
        var m = ViewMachine(enabled: enabled, available: available)
        _ = m.holderChanged(to: sender ?? phone)
        return m
    }

    func ask(_ m: inout ViewMachine, _ w: Int, _ h: Int, from: Sender? = nil, at t: UInt64 = 0) -> ViewAction {
        var changed = false
        return m.request(.next(width: w, height: h), from: from ?? phone, at: ms(t), viewingChanged: &changed)
    }

    @Test func firstAskGetsTheScreenAsItIs() {
        var m = holding()
        var changed = false
        #expect(m.request(.next(width: 960, height: 540), from: phone, at: ms(0), viewingChanged: &changed)
                == .capture(ViewSize(width: 960, height: 540)))
        #expect(changed, "viewing starts with the first ask")
        #expect(m.viewing)
    }

    @Test func stillScreenCapturesNothingUntilItChanges() {
        var m = holding()
        #expect(ask(&m, 960, 540) == .capture(ViewSize(width: 960, height: 540)))
        // The page showed it and asks again: nothing changed, nothing captured.
        #expect(ask(&m, 960, 540, at: 40) == .none)
        #expect(m.asked == ViewSize(width: 960, height: 540), "the ask waits for damage")
        #expect(m.damage(at: ms(5_000)) == .capture(ViewSize(width: 960, height: 540)))
        #expect(m.frames == 2)
    }

    @Test func aPictureNotThereYetIsCapturedWhenItComes() {
        var m = holding()
        let size = ViewSize(width: 960, height: 540)
        #expect(ask(&m, 960, 540) == .capture(size))
        // The screen cast had no picture yet: the ask stands, nothing counted.
        #expect(m.notReady(size, at: ms(0)) == .none)
        #expect(m.asked == size && m.frames == 0 && m.viewing && m.waitingSince == ms(0))
        #expect(m.retryAt == ms(0) + ViewMachine.notReadyRetry)
        // Asking again changes nothing; the picture's coming (damage) captures it.
        #expect(ask(&m, 960, 540, at: 100) == .none)
        #expect(m.damage(at: ms(300)) == .capture(size))
        #expect(m.frames == 1 && m.retryAt == nil, "the capture ends the retry")
        // The retry's timer, if it fires anyway, captures nothing.
        #expect(m.timer(at: ms(5_000)) == .none)
        // A word of "not ready" for a page that stopped viewing meanwhile changes nothing.
        var off = false
        _ = m.request(.off, from: phone, at: ms(400), viewingChanged: &off)
        #expect(m.notReady(size, at: ms(400)) == .none)
        #expect(m.asked == nil && !m.viewing && m.retryAt == nil && m.waitingSince == nil)
    }

    @Test func aPictureThatDoesNotComeIsTriedAgainThenGivenUp() {
        var m = holding()
        let size = ViewSize(width: 640, height: 360)
        let retryMs = ViewMachine.notReadyRetry.milliseconds, limitMs = ViewMachine.pictureLimit.milliseconds
        #expect(ask(&m, 640, 360, at: 1_000) == .capture(size))
        #expect(m.notReady(size, at: ms(1_250)) == .none)
        var due = ms(1_250) + ViewMachine.notReadyRetry
        #expect(m.retryAt == due)
        // Not before it is due.
        #expect(m.timer(at: ms(1_250 + retryMs - 1)) == .none)
        // Due, with no damage meanwhile, again and again until `pictureLimit` after the first that had
        // none: each a capture, each with no picture, each with its retry; the first's time is kept.
        var t = 1_250 + retryMs
        while t - 1_250 < limitMs {
            #expect(m.timer(at: ms(t)) == .capture(size))
            #expect(m.frames == 1 && m.retryAt == nil)
            #expect(m.notReady(size, at: ms(t)) == .none)
            #expect(m.asked == size && m.waitingSince == ms(1_250))
            due = ms(t) + ViewMachine.notReadyRetry
            #expect(m.retryAt == due)
            t += retryMs
        }
        // The retry at or past the limit has no picture either: given up, with how long it waited.
        #expect(m.timer(at: ms(t)) == .capture(size))
        #expect(m.notReady(size, at: ms(t)) == .giveUp(waited: .milliseconds(t - 1_250)))
        // Viewing stopped, everything forgotten; no timer due.
        #expect(!m.viewing && m.asked == nil && m.waitingSince == nil && m.retryAt == nil)
        #expect(m.timer(at: ms(t + 60_000)) == .none)
        // The desktop is still there: a later ask (the page connected again) starts afresh.
        var started = false
        #expect(m.available)
        #expect(m.request(.next(width: 640, height: 360), from: phone, at: ms(t + 70_000), viewingChanged: &started) == .capture(size))
        #expect(started && m.viewing)
        #expect(m.notReady(size, at: ms(t + 70_250)) == .none && m.waitingSince == ms(t + 70_250))
    }

    @Test func aPictureThatComesMeanwhileStartsTheWaitAgain() {
        var m = holding()
        let size = ViewSize(width: 640, height: 360)
        let limitMs = ViewMachine.pictureLimit.milliseconds
        #expect(ask(&m, 640, 360) == .capture(size))
        #expect(m.notReady(size, at: ms(0)) == .none)
        // Damage just before the limit: captured, and this one had its picture (no word of not ready).
        #expect(m.damage(at: ms(limitMs - 1)) == .capture(size))
        #expect(ask(&m, 640, 360, at: limitMs) == .none)
        // Much later a capture has none (a turn): its own wait, from its own time, not given up.
        #expect(m.damage(at: ms(limitMs + 50_000)) == .capture(size))
        #expect(m.notReady(size, at: ms(limitMs + 50_000)) == .none)
        #expect(m.waitingSince == ms(limitMs + 50_000) && m.retryAt == ms(limitMs + 50_000) + ViewMachine.notReadyRetry)
        // Damage that captures again with no picture keeps the first time: the limit counts from it.
        #expect(m.damage(at: ms(limitMs + 50_100)) == .capture(size))
        #expect(m.notReady(size, at: ms(limitMs + 50_100)) == .none)
        #expect(m.waitingSince == ms(limitMs + 50_000))
        #expect(m.damage(at: ms(2 * limitMs + 50_000)) == .capture(size))
        #expect(m.notReady(size, at: ms(2 * limitMs + 50_000)) == .giveUp(waited: ViewMachine.pictureLimit))
    }

    @Test func damageWithoutAnAskWaitsForTheAsk() {
        var m = holding()
        #expect(ask(&m, 800, 600) == .capture(ViewSize(width: 800, height: 600)))
        // The frame is in flight: damage comes, however often; nothing captured until the page asks.
        for t in 1...100 { #expect(m.damage(at: ms(UInt64(t))) == .none) }
        #expect(ask(&m, 800, 600, at: 200) == .capture(ViewSize(width: 800, height: 600)))
        #expect(m.frames == 2, "one frame in flight at most: 100 damages made one frame")
    }

    @Test func askingFasterThanShowingQueuesNothing() {
        var m = holding()
        _ = ask(&m, 800, 600)
        // A page that asks again and again without damage: the one ask is replaced, never queued.
        for t in 1...1_000 { #expect(ask(&m, 800, 600, at: UInt64(t)) == .none) }
        #expect(m.damage(at: ms(2_000)) == .capture(ViewSize(width: 800, height: 600)))
        #expect(m.damage(at: ms(2_001)) == .none, "one capture for the thousand asks")
    }

    @Test func aNewSizeIsANewPictureEvenOnAStillScreen() {
        var m = holding()
        _ = ask(&m, 800, 600)
        #expect(ask(&m, 600, 800, at: 10) == .capture(ViewSize(width: 600, height: 800)))
        #expect(ask(&m, 600, 800, at: 20) == .none)
    }

    @Test func sizesAreClampedOrRefused() {
        #expect(ViewMachine.clamp(width: 0, height: 100) == nil)
        #expect(ViewMachine.clamp(width: 100, height: -5) == nil)
        #expect(ViewMachine.clamp(width: -100_000, height: -100_000) == nil)
        #expect(ViewMachine.clamp(width: 100_000, height: 100_000) == ViewSize(width: 1920, height: 1920))
        #expect(ViewMachine.clamp(width: 100_000, height: 50_000) == ViewSize(width: 1920, height: 960))
        #expect(ViewMachine.clamp(width: 3840, height: 2160) == ViewSize(width: 1920, height: 1080))
        #expect(ViewMachine.clamp(width: 1, height: 1) == ViewSize(width: 16, height: 16))
        #expect(ViewMachine.clamp(width: 100_000, height: 1) == ViewSize(width: 1920, height: 16))
        #expect(ViewMachine.clamp(width: Int.max, height: Int.max) == ViewSize(width: 1920, height: 1920))
        var m = holding()
        #expect(ask(&m, 0, 0) == .refuse(.badSize))
        #expect(!m.viewing, "a refused size starts nothing")
        #expect(ask(&m, 100_000, 100_000) == .capture(ViewSize(width: 1920, height: 1920)))
    }

    @Test func onlyTheHolderGetsFrames() {
        var m = holding(phone)
        #expect(ask(&m, 800, 600, from: tablet) == .refuse(.notHolder))
        #expect(!m.viewing)
        var none = ViewMachine(enabled: true, available: true)
        #expect(ask(&none, 800, 600) == .refuse(.notHolder), "no holder: nobody")
    }

    @Test func aHolderLeavingForgetsEverything() {
        var m = holding(phone)
        _ = ask(&m, 800, 600)
        _ = ask(&m, 800, 600, at: 10)
        #expect(m.asked != nil)
        let r1 = m.holderChanged(to: nil)
        #expect(r1, "viewing stopped")
        #expect(!m.viewing && m.asked == nil && m.lastSize == nil)
        #expect(m.damage(at: ms(20)) == .none, "nobody to capture for")
        // The next holder starts afresh: its first ask gets a frame at once.
        _ = m.holderChanged(to: tablet)
        #expect(ask(&m, 800, 600, from: phone, at: 30) == .refuse(.notHolder))
        #expect(ask(&m, 800, 600, from: tablet, at: 30) == .capture(ViewSize(width: 800, height: 600)))
    }

    @Test func aTakeoverStopsTheOldView() {
        var m = holding(phone)
        _ = ask(&m, 800, 600)
        let r2 = m.holderChanged(to: tablet)
        #expect(r2)
        let r3 = m.holderChanged(to: tablet)
        #expect(!r3, "the same holder again changes nothing")
    }

    @Test func viewOffStopsAndForgets() {
        var m = holding()
        _ = ask(&m, 800, 600)
        _ = ask(&m, 800, 600, at: 5)
        var changed = false
        #expect(m.request(.off, from: phone, at: ms(10), viewingChanged: &changed) == .none)
        #expect(changed && !m.viewing && m.asked == nil)
        #expect(m.damage(at: ms(20)) == .none)
        changed = false
        #expect(m.request(.off, from: phone, at: ms(30), viewingChanged: &changed) == .none)
        #expect(!changed, "off twice stops once")
    }

    @Test func disabledRefusesEveryone() {
        var m = holding(enabled: false)
        #expect(ask(&m, 800, 600) == .refuse(.disabled))
        #expect(m.damage(at: ms(1)) == .none)
        #expect(!m.viewing)
    }

    @Test func noPictureIsSaidAndTheViewStopsWhenThePictureGoes() {
        var m = holding(available: false)
        #expect(ask(&m, 800, 600) == .refuse(.noPicture))
        #expect(!m.viewing)
        _ = m.setAvailable(true)
        #expect(ask(&m, 800, 600) == .capture(ViewSize(width: 800, height: 600)))
        _ = ask(&m, 800, 600, at: 1)
        let r4 = m.setAvailable(false)
        #expect(r4, "the capture failed: viewing stopped")
        #expect(m.damage(at: ms(2)) == .none)
        #expect(ask(&m, 800, 600, at: 3) == .refuse(.noPicture))
    }

    @Test func aMonitorThatChangesIsANewFrame() {
        var m = holding()
        _ = ask(&m, 800, 600)
        _ = ask(&m, 800, 600, at: 1)
        // The host calls `damage` when the monitor changes size or rotates: the asked frame goes at once.
        #expect(m.damage(at: ms(2)) == .capture(ViewSize(width: 800, height: 600)))
    }

    @Test func thePictureKeepsTheMonitorsShape() {
        let wide = PixelRect(x: 0, y: 0, width: 1920, height: 1080)
        #expect(ViewMachine.fit(ViewSize(width: 960, height: 960), shape: wide) == ViewSize(width: 960, height: 540))
        #expect(ViewMachine.fit(ViewSize(width: 2000, height: 540), shape: wide) == ViewSize(width: 960, height: 540))
        // A monitor turned to portrait (RandR rotation): its rectangle is tall.
        let tall = PixelRect(x: 1920, y: 0, width: 1080, height: 1920)
        #expect(ViewMachine.fit(ViewSize(width: 1000, height: 1000), shape: tall) == ViewSize(width: 563, height: 1000))
        #expect(ViewMachine.fit(ViewSize(width: 16, height: 16), shape: PixelRect(x: 0, y: 0, width: 10_000, height: 1)) == ViewSize(width: 16, height: 1))
    }
}
