// Several people at once on a real Xvfb, through XTest: each further person gets an X master pointer and
// keyboard of their own ("touchbridge person N"), their input goes through that master's XTest slaves,
// and it goes when they leave, on every end path.
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct PeopleIntegrationTests {
    /// A rig serving the page too, with `--people N`.
    static func start(people: Int = 2, extra: [String] = []) throws -> (rig: Rig, port: UInt16, secret: String, home: String) {
        try WebHardeningTests.start(mode: "touchscreen", extraArguments: ["--people", String(people)] + extra)
    }

    /// The person masters and their slaves in `xinput list`, by name.
    static func personDevices(_ rig: Rig) throws -> [String] {
        try ScreensAndFingersTests.touchbridgeDevices(rig.xvfb).filter { $0.contains("touchbridge person") }
    }

    /// A page on the daemon's web port, from `source` (a loopback address), speaking the page's language;
    /// with `tab`, its address names its tab (`t=`) as the page's does.
    static func page(_ port: UInt16, _ secret: String, from source: String = "127.0.0.1", tab: String? = nil) throws -> WebSocketClient {
        let (code, client) = try WebSocketClient.open(port: port, key: secret + (tab.map { "&t=" + $0 } ?? ""),
                                                      origin: "http://127.0.0.1:\(port)", from: source)
        guard code == 101, let client else { throw RigError("the page's socket from \(source): HTTP \(code)") }
        return client
    }

    /// A touchscreen packet: slot 0 at (x, y) (-1…1), or lifted.
    static func finger(_ x: Double, _ y: Double) -> String {
        PoseAIText.packet(touches: PoseAIText.touches([.at(slot: 0, x: x, y: y)]), touchState: PoseAIText.touchState([0: .at(x: x, y: y)]))
    }
    static let lifted = PoseAIText.packet(touches: PoseAIText.touches([.ended(slot: 0)]), touchState: PoseAIText.touchState([:]))

    /// Waits for a press or release of button 1 from a device other than the core pointer (2); returns its id.
    static func waitForOtherDevice(_ rig: Rig, _ kind: String, since mark: Int, _ what: String) throws -> Int {
        guard let e = rig.observer.waitFor(from: mark, timeout: 20, { $0.isButton(kind, 1) && ($0.fields["dev"] ?? 2) != 2 }),
              let dev = e.fields["dev"]
        else { throw RigError("\(what): no \(kind) of button 1 from a person's own master\n" + rig.context(since: mark)) }
        return dev
    }

    /// Waits for an event of `device` matching `predicate`.
    @discardableResult
    static func waitFor(_ rig: Rig, device: Int, since mark: Int, _ what: String,
                        _ predicate: @escaping (ObservedEvent) -> Bool) throws -> ObservedEvent {
        guard let e = rig.observer.waitFor(from: mark, timeout: 20, { $0.fields["dev"] == device && predicate($0) }) else {
            throw RigError("\(what): nothing from device \(device)\n" + rig.context(since: mark))
        }
        return e
    }

    @Test func twoPeopleDriveTheirOwnPointersAndALeaverTakesTheirsAway() throws {
        let (rig, port, secret, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        #expect(try Self.personDevices(rig).isEmpty, "no person's master before anyone comes")

        // Person 1, the PoseAI phone: the core pointer.
        let a = rig.expectedPixel(x: -0.5, y: -0.5)
        try rig.fingerDown(x: -0.5, y: -0.5, "person 1 down")

        // Person 2, a page: a master of their own, pressed where their finger is.
        var page = try Self.page(port, secret)
        defer { page.close() }
        var mark = rig.observer.mark
        try page.send(Self.finger(0.5, 0.5))
        let dev = try Self.waitForOtherDevice(rig, "press", since: mark, "person 2 down")
        let b = rig.expectedPixel(x: 0.5, y: 0.5)
        var p = try ScreensAndFingersTests.query(rig, device: dev)
        #expect(abs(p.x - b.x) <= 1 && abs(p.y - b.y) <= 1 && p.buttons & 1 != 0, "person 2's pointer at \(b), button 1 held: \(p)")
        var core = try rig.observer.query()
        #expect(abs(core.x - a.x) <= 1 && abs(core.y - a.y) <= 1 && core.buttonOneHeld, "person 1's pointer stayed, still pressed: \(core)")
        let masters = try Self.personDevices(rig)
        #expect(masters.contains("touchbridge person 2 pointer") && masters.contains("touchbridge person 2 keyboard")
                && masters.contains("touchbridge person 2 XTEST pointer"), "\(masters)")

        // Person 2 drags: their pointer moves, by motion from their master; person 1's does not.
        mark = rig.observer.mark
        let c = rig.expectedPixel(x: 0.5, y: -0.8)
        try page.send(Self.finger(0.5, -0.8))
        try Self.waitFor(rig, device: dev, since: mark, "person 2 drags") { $0.isMotion(near: c.x, c.y, tolerance: 1) }
        core = try rig.observer.query()
        #expect(abs(core.x - a.x) <= 1 && abs(core.y - a.y) <= 1, "person 1's pointer stayed: \(core)")

        // Person 1 drags: the core pointer moves, person 2's does not.
        mark = rig.observer.mark
        let d = rig.expectedPixel(x: -0.2, y: 0.6)
        try rig.sender.send(touches: [.at(slot: 0, x: -0.2, y: 0.6)], state: [0: .at(x: -0.2, y: 0.6)])
        try Self.waitFor(rig, device: 2, since: mark, "person 1 drags") { $0.isMotion(near: d.x, d.y, tolerance: 1) }
        p = try ScreensAndFingersTests.query(rig, device: dev)
        #expect(abs(p.x - c.x) <= 1 && abs(p.y - c.y) <= 1 && p.buttons & 1 != 0, "person 2's pointer stayed: \(p)")

        // Person 2 lifts: the release is on their master; person 1 still holds.
        mark = rig.observer.mark
        try page.send(Self.lifted)
        try Self.waitFor(rig, device: dev, since: mark, "person 2 lifts") { $0.isButton("release", 1) }
        #expect(try rig.observer.query().buttonOneHeld, "person 1's button is still held")

        // Person 2 taps elsewhere: a click at the tapper's position, on their master.
        mark = rig.observer.mark
        let t = rig.expectedPixel(x: 0.8, y: 0.8)
        try page.send(Self.finger(0.8, 0.8))
        try page.send(Self.lifted)
        let pressed = try Self.waitFor(rig, device: dev, since: mark, "person 2 taps") { $0.isButton("press", 1) }
        try Self.waitFor(rig, device: dev, since: pressed.index, "person 2's tap releases") { $0.isButton("release", 1) }
        p = try ScreensAndFingersTests.query(rig, device: dev)
        #expect(abs(p.x - t.x) <= 1 && abs(p.y - t.y) <= 1 && p.buttons & 1 == 0, "person 2 clicked at \(t): \(p)")
        #expect(try rig.observer.query().buttonOneHeld, "person 1's button is still held after person 2's click")

        // Person 2 leaves: their master goes; person 1 keeps working.
        var log = rig.daemon.logMark
        page.close()
        try rig.daemon.waitForLog(containing: "person 2 left: removed \"touchbridge person 2\"", since: log, "person 2's master removed")
        let afterLeaving = try Self.personDevices(rig)
        #expect(afterLeaving.isEmpty, "xinput list after person 2 left: \(afterLeaving)")
        mark = rig.observer.mark
        let e = rig.expectedPixel(x: 0.1, y: 0.1)
        try rig.sender.send(touches: [.at(slot: 0, x: 0.1, y: 0.1)], state: [0: .at(x: 0.1, y: 0.1)])
        try Self.waitFor(rig, device: 2, since: mark, "person 1 after person 2 left") { $0.isMotion(near: e.x, e.y, tolerance: 1) }
        #expect(try rig.observer.query().buttonOneHeld, "person 1's finger was not released by person 2's leaving")

        // Someone new: a fresh master, pressed; then SIGTERM with both down releases both and removes it.
        page = try Self.page(port, secret, from: "127.0.0.2")
        mark = rig.observer.mark
        try page.send(Self.finger(-0.8, 0.8))
        let fresh = try Self.waitForOtherDevice(rig, "press", since: mark, "a new person 2 down")
        #expect(try Self.personDevices(rig).count == 4, "one master: pointer, keyboard, their XTEST slaves")
        mark = rig.observer.mark
        log = rig.daemon.logMark
        let status = rig.daemon.terminate(timeout: 10)
        #expect(status == .exited(0), "exit on SIGTERM: \(String(describing: status))\n\(rig.daemon.outputTail())")
        try Self.waitFor(rig, device: 2, since: mark, "SIGTERM: person 1 released") { $0.isButton("release", 1) }
        try Self.waitFor(rig, device: fresh, since: mark, "SIGTERM: person 2 released") { $0.isButton("release", 1) }
        let afterSigterm = try Self.personDevices(rig)
        #expect(afterSigterm.isEmpty, "xinput list after SIGTERM: \(afterSigterm)")
        #expect(try rig.observer.query().buttons == 0, "nothing held on the core pointer")
        _ = log
    }

    @Test func eachPersonIsDrawnInTheirColourAndTheirPageIsToldIt() throws {
        typealias O = OverlayIntegrationTests
        let (rig, port, secret, home) = try Self.start(extra: ["--show-touches"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let d = rig.xvfb.display
        // Person 1, the PoseAI phone: their finger's circle in the finger's colour, as with one person.
        let a = rig.expectedPixel(x: -0.5, y: -0.5)
        try rig.fingerDown(x: -0.5, y: -0.5, "person 1 down")

        // Person 2, a page: told who they are and their colour, and their circle drawn in it.
        var page = try Self.page(port, secret)
        defer { page.close() }
        try page.send(Self.finger(0.5, 0.5))
        var told = Self.told(&page)
        #expect(told == "person 2 #00b359", "what person 2's page was told: \(String(describing: told))")
        let green = (0, 179, 89)
        let b = rig.expectedPixel(x: 0.5, y: 0.5)
        let shot = try Screenshot.waitFor(display: d, "each person's circle in their colour") {
            O.circle($0, at: a, O.slot0) >= 300 && O.circle($0, at: b, green) >= 300
        }
        #expect(shot.count(near: a.x, a.y, radius: 40, green) == 0, "none of person 2's colour at person 1's finger")
        #expect(shot.count(near: b.x, b.y, radius: 40, O.slot0) == 0, "none of person 1's finger colour at person 2's")
        // A further person's circle is ringed in white, to be told from a finger of person 1's.
        #expect(shot.count(near: b.x, b.y, radius: 32, (255, 255, 255), tolerance: 40) >= 50, "person 2's white ring")

        // Person 2 leaves: their circle goes; person 1's stays.
        page.close()
        try Screenshot.waitFor(display: d, "person 2's circle gone, person 1's kept") {
            $0.count(near: b.x, b.y, radius: 40, green) == 0 && O.circle($0, at: a, O.slot0) >= 300
        }
        // A newcomer takes place 2 again and is told so.
        page = try Self.page(port, secret, from: "127.0.0.2")
        try page.send(Self.finger(0.5, -0.5))
        told = Self.told(&page)
        #expect(told == "person 2 #00b359", "what the newcomer was told: \(String(describing: told))")
    }

    @Test func aFurtherPersonsTouchpadAndKeysAreOnTheirOwnDevices() throws {
        let (rig, port, secret, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let a = rig.expectedPixel(x: -0.5, y: -0.5)
        try rig.fingerDown(x: -0.5, y: -0.5, "person 1 down")
        var page = try Self.page(port, secret)
        defer { page.close() }
        var mark = rig.observer.mark
        try page.send(Self.finger(0.5, 0.5))
        let dev = try Self.waitForOtherDevice(rig, "press", since: mark, "person 2 down")
        try page.send(Self.lifted)
        try Self.waitFor(rig, device: dev, since: mark, "person 2 lifts") { $0.isButton("release", 1) }
        let before = try ScreensAndFingersTests.query(rig, device: dev)

        // Touchpad mode for this page alone: a drag moves their pointer by relative motion, not the core one.
        try page.send("mode touchpad")
        var answer: String?
        repeat { answer = page.receiveText() } while answer != nil && answer != "mode touchpad"
        #expect(answer == "mode touchpad")
        mark = rig.observer.mark
        for i in 0...8 { try page.send(Self.finger(-0.4 + 0.1 * Double(i), 0)) }
        try page.send(Self.lifted)
        try Self.waitFor(rig, device: dev, since: mark, "person 2's touchpad drag") { $0.kind == "motion" }
        let after = try ScreensAndFingersTests.query(rig, device: dev)
        #expect(after.x > before.x, "person 2's pointer moved right by the drag: \(before) → \(after)")
        let core = try rig.observer.query()
        #expect(abs(core.x - a.x) <= 1 && abs(core.y - a.y) <= 1 && core.buttonOneHeld, "person 1's pointer stayed, pressed: \(core)")

        // A key: on person 2's own master keyboard (their focus), not the core keyboard.
        let (status, out) = try X.run("/usr/bin/env", ["DISPLAY=\(rig.xvfb.display)", "xinput", "list", "--id-only", "touchbridge person 2 keyboard"])
        let keyboard = Int(out.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(status == .exited(0) && keyboard != nil, "\(out)")
        mark = rig.observer.mark
        try page.send("key a")
        let pressed = try Self.waitFor(rig, device: keyboard ?? -1, since: mark, "person 2's key") { $0.kind == "keypress" }
        try Self.waitFor(rig, device: keyboard ?? -1, since: pressed.index, "person 2's key released") { $0.kind == "keyrelease" }
        let onCore = rig.observer.events(from: mark).filter { $0.kind.hasPrefix("key") && $0.fields["dev"] == 3 }
        #expect(onCore.isEmpty, "keys on the core keyboard: \(onCore)")
    }

    @Test func fiveHundredJoinsAndLeavesLeakNoMaster() throws {
        let (rig, port, secret, home) = try Self.start(people: 4)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        try rig.fingerDown(x: -0.5, y: -0.5, "person 1 down")
        var devices = Set<Int>()
        for i in 0..<500 {
            // From many loopback addresses, so the cap of pages per address is never what is tested.
            let page = try Self.page(port, secret, from: "127.0.\(1 + i / 200).\(2 + i % 200)")
            let mark = rig.observer.mark
            try page.send(Self.finger(0.5, 0.5))
            devices.insert(try Self.waitForOtherDevice(rig, "press", since: mark, "join \(i)"))
            page.close()
        }
        // One more, present: its master is the only one; the 500 before left none behind.
        let last = try Self.page(port, secret)
        let mark = rig.observer.mark
        try last.send(Self.finger(0.2, 0.2))
        _ = try Self.waitForOtherDevice(rig, "press", since: mark, "the last join")
        let left = try Self.personDevices(rig)
        #expect(left.count == 4 && left.contains("touchbridge person 2 pointer"), "xinput list: \(left)")
        last.close()
        #expect(rig.daemon.terminate(timeout: 10) == .exited(0))
        #expect(try Self.personDevices(rig).isEmpty)
    }

    @Test func aMasterRemovedBySomeoneElseIsMadeAgain() throws {
        let (rig, _, _, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        try rig.fingerDown(x: -0.5, y: -0.5, "person 1 down")
        let other = try PoseAISender(port: rig.daemon.port, host: rig.daemon.host, source: "127.0.0.3")
        var mark = rig.observer.mark
        try other.send(touches: [.at(slot: 0, x: 0.5, y: 0.5)], state: [0: .at(x: 0.5, y: 0.5)])
        let dev = try Self.waitForOtherDevice(rig, "press", since: mark, "person 2 down")
        let log = rig.daemon.logMark
        let (status, out) = try X.run("/usr/bin/env", ["DISPLAY=\(rig.xvfb.display)", "xinput", "remove-master", String(dev)])
        #expect(status == .exited(0), "\(out)")
        try rig.daemon.waitForLog(containing: "was removed by someone else", since: log, "the removal said")
        mark = rig.observer.mark
        try other.send(touches: [.ended(slot: 0)], state: [:])
        try other.send(touches: [.at(slot: 0, x: 0.6, y: 0.6)], state: [0: .at(x: 0.6, y: 0.6)])
        let again = try Self.waitForOtherDevice(rig, "press", since: mark, "person 2 down again")
        _ = again  // the server may give the new master the removed one's id
        #expect(try Self.personDevices(rig).count == 4)
        #expect(try rig.observer.query().buttonOneHeld, "person 1 untouched")
        #expect(rig.daemon.terminate(timeout: 10) == .exited(0), "\(rig.daemon.outputTail())")
        #expect(try Self.personDevices(rig).isEmpty)
    }

    @Test func losingTheXServerWithTwoPeopleDownExits69() throws {
        let (rig, port, secret, home) = try Self.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        try rig.fingerDown(x: -0.5, y: -0.5, "person 1 down")
        let page = try Self.page(port, secret)
        defer { page.close() }
        let mark = rig.observer.mark
        try page.send(Self.finger(0.5, 0.5))
        _ = try Self.waitForOtherDevice(rig, "press", since: mark, "person 2 down")
        // The output fails under both people: the X server goes away mid-drag.
        rig.observer.stop()
        _ = rig.xvfb.stop()
        let status = rig.daemon.waitForExit(timeout: 15)
        #expect(status == .exited(69), "exit 69 when the X server goes away with two people on it: \(String(describing: status))\n\(rig.daemon.outputTail())")
    }

    @Test func mastersLeftByACrashAreRemovedAtTheNextStart() throws {
        let x = try XvfbServer.start(width: 1920, height: 1080)
        defer { x.stop() }
        for n in [2, 3] {
            let (status, out) = try X.run("/usr/bin/env", ["DISPLAY=\(x.display)", "xinput", "create-master", "touchbridge person \(n)"])
            #expect(status == .exited(0), "\(out)")
        }
        let daemon = try Daemon.start(display: x.display, idleReleaseMs: 10_000, extraArguments: ["--people", "3"])
        defer { _ = daemon.terminate() }
        #expect(try ScreensAndFingersTests.touchbridgeDevices(x).isEmpty, "leftovers removed before the daemon listens")
        try daemon.waitForLog(containing: "\"touchbridge person 2\", \"touchbridge person 3\"", "the leftovers named")
    }

    /// The person a page is told it is ("person 2 #00b359") once it touches; nil when the socket ends first.
    static func told(_ page: inout WebSocketClient) -> String? {
        while let line = page.receiveText() { if line.hasPrefix("person ") { return line } }
        return nil
    }

    /// A phone that lost Wi-Fi and came back opens its page's connection again, with its tab, while the
    /// daemon still holds the old one (no close came): the old one is closed at once and the page is
    /// person 1 again, not a further person. A page of another tab is a further person, as before. Before,
    /// the new connection became person 2 (with a pointer of its own) and stayed so.
    @Test func aPageThatConnectsAgainWithItsTabIsTheSamePerson() throws {
        let (rig, port, secret, home) = try Self.start(people: 4)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let tab = "4f1c2a9be07d3355aa01"
        var old = try Self.page(port, secret, tab: tab)
        defer { old.close() }
        try old.send(Self.finger(0.5, 0.5))
        let first = Self.told(&old)
        #expect(first?.hasPrefix("person 1 ") == true, "the page at first: \(String(describing: first))")
        try old.send(Self.lifted)
        let log = rig.daemon.logMark
        // The same tab again, from a new port (the old socket left open, as a vanished phone leaves it).
        var again = try Self.page(port, secret, tab: tab)
        defer { again.close() }
        try rig.daemon.waitForLog(containing: "its page connected again (the same tab)", since: log, "the old connection closed")
        #expect(old.socket.receive().closed, "the old connection is open")
        try again.send(Self.finger(-0.5, 0.5))
        let second = Self.told(&again)
        #expect(second?.hasPrefix("person 1 ") == true, "the page again: \(String(describing: second))\n\(rig.daemon.outputTail(8))")
        var other = try Self.page(port, secret, from: "127.0.0.2", tab: "77aa00bb11cc22dd")
        defer { other.close() }
        try other.send(Self.finger(0.5, -0.5))
        let third = Self.told(&other)
        #expect(third?.hasPrefix("person 2 ") == true, "another tab: \(String(describing: third))")
    }
}
