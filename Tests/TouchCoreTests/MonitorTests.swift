import Testing
import TouchCore

/// `--monitor NAME|primary|all`: which rectangle absolute mode maps onto.
@Suite struct MonitorTests {
    let screen = PixelRect(x: 0, y: 0, width: 2880, height: 1200)
    let left = Monitor(name: "LEFT", rect: PixelRect(x: 0, y: 0, width: 960, height: 1080), isPrimary: false)
    let right = Monitor(name: "RIGHT", rect: PixelRect(x: 960, y: 120, width: 1920, height: 1080), isPrimary: true)

    @Test func primaryPicksThePrimaryMonitor() {
        let t = MonitorChoice.primary.resolve(monitors: [left, right], screen: screen)
        #expect(t == .init(rect: right.rect, monitorName: "RIGHT", fellBack: false))
    }

    @Test func primaryWithoutAPrimaryMonitorIsTheWholeScreen() {
        var r = right
        r.isPrimary = false
        #expect(MonitorChoice.primary.resolve(monitors: [left, r], screen: screen) == .init(rect: screen, monitorName: nil, fellBack: false))
        #expect(MonitorChoice.primary.resolve(monitors: [], screen: screen).rect == screen)
    }

    @Test func allIsTheWholeScreen() {
        #expect(MonitorChoice.all.resolve(monitors: [left, right], screen: screen) == .init(rect: screen, monitorName: nil, fellBack: false))
    }

    @Test func aNamePicksThatMonitor() {
        #expect(MonitorChoice(parsing: "LEFT").resolve(monitors: [left, right], screen: screen).rect == left.rect)
    }

    @Test func aMissingNameFallsBackToTheWholeScreen() {
        let t = MonitorChoice(parsing: "HDMI-9").resolve(monitors: [left, right], screen: screen)
        #expect(t == .init(rect: screen, monitorName: nil, fellBack: true))
    }

    @Test func anEmptyMonitorCountsAsMissing() {
        let empty = Monitor(name: "LEFT", rect: PixelRect(x: 0, y: 0, width: 0, height: 0), isPrimary: true)
        #expect(MonitorChoice.named("LEFT").resolve(monitors: [empty], screen: screen).fellBack)
        #expect(MonitorChoice.primary.resolve(monitors: [empty], screen: screen).rect == screen)
    }

    @Test func parsingAndDescriptions() {
        #expect(MonitorChoice(parsing: "primary") == .primary)
        #expect(MonitorChoice(parsing: "all") == .all)
        #expect(MonitorChoice(parsing: "DP-1") == .named("DP-1"))
        #expect(right.description == "RIGHT 1920x1080+960+120 primary")
        #expect(left.description == "LEFT 960x1080+0+0")
        #expect(PixelRect(x: -1280, y: 0, width: 1280, height: 1024).description == "1280x1024-1280+0")
    }
}
