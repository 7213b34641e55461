import Testing
import TouchCore

/// `ScrollOutput` with `smoothScroll` (the uinput backend): fractions of a click in 1/120 units.
@Suite struct SmoothScrollTests {
    func output(natural: Bool = false) -> ScrollOutput {
        var settings = TouchpadSettings()
        settings.smoothScroll = true
        settings.naturalScroll = natural
        return ScrollOutput(settings: settings)
    }

    @Test func aQuarterClickOfTravelIsAQuarterClick() {
        var scroll = output()
        var actions: [OutputAction] = []
        for _ in 0..<4 { scroll.scroll(dx: 0, dy: 1, into: &actions) }  // 4 mm = one click at speed 1
        #expect(actions == Array(repeating: .smoothScroll(dx: 0, dy: 30), count: 4))
    }

    @Test func nothingIsLostBelowOneUnitAndNaturalTurnsTheSign() {
        var scroll = output(natural: true)
        var actions: [OutputAction] = []
        for _ in 0..<10 { scroll.scroll(dx: 0.01, dy: 0, into: &actions) }  // 0.1 mm = 3 units in all
        let total = actions.reduce(Int32(0)) { sum, a in
            if case .smoothScroll(let dx, _) = a { return sum + dx } else { Issue.record("\(a)"); return sum }
        }
        #expect(total == -3)
        #expect(!actions.contains { if case .button = $0 { return true } else { return false } })
    }

    @Test func withoutSmoothScrollItIsStillWholeClicks() {
        var scroll = ScrollOutput(settings: TouchpadSettings())
        var actions: [OutputAction] = []
        for _ in 0..<4 { scroll.scroll(dx: 0, dy: 1, into: &actions) }
        #expect(actions == [.button(.wheelDown, pressed: true), .button(.wheelDown, pressed: false)])
    }
}
