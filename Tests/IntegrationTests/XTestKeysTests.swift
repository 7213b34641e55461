// Keys by level and a keymap changed by another client, on a real daemon (XTest), a private Xvfb and a real WebSocket; the keys are
// read from xobserve (a real X client: the keycodes X delivers, in order) and the map from `xmodmap -pke`.
// - Keys by level: `key 1` on fr is Shift and the `&` key (keycode 10 alone types `&`), `key period` on
//   fr is Shift and the `;` key, `key ctrl+plus` on us is Ctrl, Shift and the `=` key.
// - The borrowed keycode: only one empty when it is borrowed; a keycode the user maps is theirs, before
//   or while it is borrowed; giving back restores only what touchbridge wrote.
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct XTestKeysTests {
    typealias H = WebHardeningTests
    typealias T = TouchpadIntegrationTests
    typealias W = WebTouchpadTests

    /// A paired page (a WebSocket with the secret), its hello read.
    static func page(_ port: UInt16, _ secret: String) throws -> WebSocketClient {
        let (status, opened) = try WebSocketClient.open(port: port, key: secret, origin: "http://127.0.0.1:\(port)")
        guard status == 101, var page = opened else { throw RigError("upgrade answered \(status)") }
        _ = page.receiveText()  // hello
        return page
    }

    /// The keycode whose `level` (0 plain, 1 shifted) carries `name` in `map` (`xmodmap -pke`'s), the
    /// lowest; throws when none does.
    static func code(_ map: [Int: [String]], _ name: String, level: Int) throws -> Int {
        guard let code = map.keys.sorted().first(where: { (map[$0] ?? []).count > level && map[$0]![level] == name }) else {
            throw RigError("no keycode carries \(name) on level \(level + 1)")
        }
        return code
    }

    static func xmodmap(_ rig: Rig, _ expression: String) throws {
        guard let tool = findInPath("xmodmap") else { throw RigError("xmodmap is not installed (Debian: x11-xserver-utils)") }
        let (status, out) = try X.run(tool, ["-display", rig.xvfb.display, "-e", expression])
        guard status == .exited(0) else { throw RigError("xmodmap -e \(expression): \(String(describing: status))\n\(out)") }
    }

    /// Sends `command` and waits until X has seen `expected` (xobserve's "keypress N"/"keyrelease N").
    static func expectKeys(_ rig: Rig, _ page: inout WebSocketClient, _ command: String, _ expected: [String]) throws {
        let mark = rig.observer.mark
        try page.send(command)
        try T.waitForClicks(rig, since: mark, expected, command)
    }

    @Test func keysArePressedAtTheirLevel() throws {
        let (rig, port, secret, home) = try H.start(mode: "touchpad")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let d = rig.xvfb.display
        // Xvfb starts with us.
        try rig.daemon.waitForLog(containing: "z on evdev 44,", timeout: 10, "the us keymap read at start")
        var page = try Self.page(port, secret)
        defer { page.close() }
        let mark = rig.observer.mark

        // us: plus is the shifted level of the `=` key.
        var map = try W.keymap(display: d)
        let control = try Self.code(map, "Control_L", level: 0), shift = try Self.code(map, "Shift_L", level: 0)
        let equal = try Self.code(map, "plus", level: 1)
        #expect(map[equal]?.first == "equal", "us: the plus key is \(map[equal] ?? [])")
        try Self.expectKeys(rig, &page, "key ctrl+plus", ["keypress \(control)", "keypress \(shift)", "keypress \(equal)",
                                                          "keyrelease \(equal)", "keyrelease \(shift)", "keyrelease \(control)"])

        // fr: the digits and the period are on the shifted levels.
        var log = rig.daemon.logMark
        try KeymapFollowTests.setxkbmap(rig, "fr")
        try rig.daemon.waitForLog(containing: "z on evdev 17,", since: log, timeout: 10, "the fr keymap read")
        map = try W.keymap(display: d)
        let one = try Self.code(map, "1", level: 1), period = try Self.code(map, "period", level: 1)
        #expect(map[one]?.first == "ampersand" && map[period]?.first == "semicolon",
                "fr: the 1 key is \(map[one] ?? []), the period key \(map[period] ?? [])")
        try Self.expectKeys(rig, &page, "key 1", ["keypress \(shift)", "keypress \(one)", "keyrelease \(one)", "keyrelease \(shift)"])
        try Self.expectKeys(rig, &page, "key period",
                            ["keypress \(shift)", "keypress \(period)", "keyrelease \(period)", "keyrelease \(shift)"])
        // The chord's own Shift (the page's sticky Shift) is the level's: no second Shift.
        try Self.expectKeys(rig, &page, "key shift+1", ["keypress \(shift)", "keypress \(one)", "keyrelease \(one)", "keyrelease \(shift)"])
        // A level-one key stays plain.
        let a = try Self.code(map, "a", level: 0)
        try Self.expectKeys(rig, &page, "key a", ["keypress \(a)", "keyrelease \(a)"])
        // Typed text by level too: "1" is Shift and the 1 key, not a borrowed keycode.
        let before = map
        try Self.expectKeys(rig, &page, "text 1", ["keypress \(shift)", "keypress \(one)", "keyrelease \(one)", "keyrelease \(shift)"])
        #expect(KeymapRestoreTests.differences(before, try W.keymap(display: d)).isEmpty, "typing 1 on fr borrowed a keycode")

        // Nothing held once the page goes.
        log = rig.daemon.logMark
        page.close()
        try rig.daemon.waitForLog(containing: "gone: released everything", since: log, "the page gone")
        try rig.observer.sync()
        #expect(LeftBehindTests.held(rig.observer.events(from: mark)).isEmpty, "\(rig.context(since: mark))")
    }

    /// The issue's case: the user maps the keycode the old borrower noted at start (the highest empty
    /// one), then the page types `€`; later the user maps the keycode touchbridge borrowed. F30 and F31
    /// (0xffdb, 0xffdc): keysyms no key of the layout carries, so the keymap changes with each mapping.
    @Test func theBorrowerTakesOnlyAnEmptyKeycodeAndGivesBackOnlyItsOwn() throws {
        let (rig, port, secret, home) = try H.start(mode: "touchpad")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let d = rig.xvfb.display
        let before = try W.keymap(display: d)
        guard let highestEmpty = (8...255).filter({ before[$0] == nil }).max() else {
            Issue.record("no empty keycode on this X server: nothing to test")
            return
        }
        // The user maps it after the start.
        var log = rig.daemon.logMark
        try Self.xmodmap(rig, "keycode \(highestEmpty) = F30")
        // (Once this keycode was left out of the keymap for good: no new keymap, F30 refused.)
        try rig.daemon.waitForLog(containing: "keymap: ", since: log, timeout: 10, "the keymap read again after xmodmap")
        var page = try Self.page(port, secret)
        defer { page.close() }

        // "€" goes on another keycode, and the user's F30 stays.
        var mark = rig.observer.mark
        try page.send("text €")
        guard let typed = rig.observer.waitFor(from: mark, timeout: 10, { $0.kind == "keyrelease" }), let borrowed = typed.fields["key"] else {
            Issue.record("€ never arrived\n\(rig.context(since: mark))")
            return
        }
        #expect(borrowed != highestEmpty, "€ was typed on the user's F30 keycode \(highestEmpty)")
        var map = try W.keymap(display: d)
        #expect(map[highestEmpty]?.first == "F30", "the user's F30 is gone: keycode \(highestEmpty) is \(map[highestEmpty] ?? [])")
        #expect(map[borrowed]?.first == "U20AC", "keycode \(borrowed) carries \(map[borrowed] ?? [])")
        // The user's own key is pressable from the page.
        try Self.expectKeys(rig, &page, "key 0xffdb", ["keypress \(highestEmpty)", "keyrelease \(highestEmpty)"])

        // The user maps the borrowed keycode meanwhile: it is theirs; the next "€" borrows another.
        log = rig.daemon.logMark
        try Self.xmodmap(rig, "keycode \(borrowed) = F31")
        try rig.daemon.waitForLog(containing: "keymap: ", since: log, timeout: 10, "the keymap read again after xmodmap")
        mark = rig.observer.mark
        try page.send("text €")
        guard let again = rig.observer.waitFor(from: mark, timeout: 10, { $0.kind == "keyrelease" }), let second = again.fields["key"] else {
            Issue.record("the second € never arrived\n\(rig.context(since: mark))")
            return
        }
        #expect(second != borrowed && second != highestEmpty, "the second € went on keycode \(second)")
        map = try W.keymap(display: d)
        #expect(map[borrowed]?.first == "F31", "the user's F31 is gone: keycode \(borrowed) is \(map[borrowed] ?? [])")
        try Self.expectKeys(rig, &page, "key 0xffdc", ["keypress \(borrowed)", "keyrelease \(borrowed)"])

        // The page goes: the borrowed keycode is empty again, the user's two stay theirs.
        log = rig.daemon.logMark
        page.close()
        try rig.daemon.waitForLog(containing: "gone: released everything", since: log, "the page gone")
        try rig.observer.sync()
        map = try W.keymap(display: d)
        let changed = KeymapRestoreTests.differences(before, map)
        #expect(changed.count == 2 && map[highestEmpty]?.first == "F30" && map[borrowed]?.first == "F31" && map[second] == nil,
                "after the page: \(changed)")
    }
}
