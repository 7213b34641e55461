// Several people at once (`People`), with a manual clock: who gets which place, whose each action is,
// and that every release path releases that person's input and no one else's.
import Testing
import TouchCore

/// People on a 1920×1080 screen, fed by the test at the times it says.
struct PeopleHarness {
    var people: People
    var effects = BridgeEffects()

    init(people n: Int = 3, mode: TouchMode = .touchscreen, personPointers: Bool = true, idleRelease: Interval = .seconds(20)) {
        let c = TouchPipeline.Configuration(screen: ScreenMapping(width: 1920, height: 1080), idleRelease: idleRelease, mode: mode)
        people = People(configuration: c, capabilities: OutputCapabilities(personPointers: personPointers), monitor: .all, people: n)
        people.start(screen: Harness.screen, monitors: [], at: ms(0), into: &effects)
    }

    mutating func send(_ p: TouchPacket, from s: SourceAddress, via t: Transport = .poseAI, at n: UInt64) -> BridgeEffects {
        effects.clear()
        people.packet(p, from: s, via: t, at: ms(n), into: &effects)
        return effects
    }

    mutating func command(_ c: WebCommand, from s: SourceAddress, at n: UInt64) -> BridgeEffects {
        effects.clear()
        people.command(c, from: s, at: ms(n), into: &effects)
        return effects
    }

    mutating func gone(_ s: SourceAddress, at n: UInt64) -> BridgeEffects {
        effects.clear()
        people.sourceGone(s, at: ms(n), into: &effects)
        return effects
    }

    mutating func timer(at n: UInt64) -> BridgeEffects {
        effects.clear()
        people.timer(at: ms(n), into: &effects)
        return effects
    }

    mutating func shutdown() -> BridgeEffects {
        effects.clear()
        people.shutdown(into: &effects)
        return effects
    }
}

extension BridgeEffects {
    /// The input actions (not the overlay's) by whose they are, in order; and who left.
    var byPerson: (actions: [Person: [OutputAction]], left: [Person]) {
        var actions: [Person: [OutputAction]] = [:], left: [Person] = []
        var person = Person.first, from = 0
        func run(_ end: Int) {
            for a in self.actions[from..<end] { if case .overlay = a { continue }; actions[person, default: []].append(a) }
            from = end
        }
        for mark in people {
            run(mark.start)
            if mark.leaves { left.append(mark.person); person = .first } else { person = mark.person }
        }
        run(self.actions.count)
        return (actions, left)
    }
}

let student = v4(192, 168, 1, 40, port: 50002)
let p2 = Person(rawValue: 2), p3 = Person(rawValue: 3)

@Suite struct PeopleTests {
    @Test func onePersonIsTheOneBridgeExactly() {
        // people = 1, and an output with one pointer whatever people says: a second phone is busy, no marks.
        for h0 in [PeopleHarness(people: 1), PeopleHarness(people: 4, personPointers: false)] {
            var h = h0
            #expect(h.people.count == 1)
            var e = h.send(down, from: phone, at: 0)
            #expect(e.people.isEmpty && e.actions.contains(leftPress))
            e = h.send(down, from: tablet, at: 100)
            #expect(e.actions.isEmpty && e.busyLines == 1 && e.people.isEmpty)
            e = h.send(down, from: tablet, via: .web, at: 200)
            #expect(e.reply == .busy)
            e = h.send(down, from: tablet, at: 10_000)
            #expect(e.connected == [tablet] && e.people.isEmpty, "takeover after 10 s, as today")
            #expect(!e.events.contains { if case .personJoined = $0 { return true } else { return false } })
        }
    }

    @Test func eachSenderIsAPersonAndTheirActionsAreTaggedWithThem() {
        var h = PeopleHarness()
        var e = h.send(down, from: phone, at: 0)
        #expect(e.byPerson.actions[.first]?.contains(leftPress) == true)
        #expect(e.byPerson.actions[p2] == nil)
        e = h.send(down, from: tablet, at: 10)
        #expect(e.busyLines == 0, "a free place: no busy")
        #expect(e.byPerson.actions[p2]?.contains(leftPress) == true, "the tablet is person 2: \(e.people) \(e.actions)")
        #expect(e.byPerson.actions[.first] == nil, "nothing of person 1's")
        #expect(h.people.person(of: Sender(tablet, via: .poseAI)) == p2)
        #expect(h.people.person(of: Sender(phone, via: .poseAI)) == .first)
        #expect(h.people.sender == Sender(phone, via: .poseAI), "the gates' sender is person 1's")
        e = h.send(down, from: student, via: .web, at: 20)
        #expect(e.byPerson.actions[p3]?.contains(leftPress) == true)
        // The first person's moves stay theirs.
        e = h.send(packet(at(0, 100, 100)), from: phone, at: 30)
        #expect(e.people.isEmpty && e.actions.contains { if case .moveTo = $0 { return true } else { return false } })
    }

    @Test func aPersonLeavingReleasesTheirsOnlyAndTheirPointerGoes() {
        var h = PeopleHarness()
        _ = h.send(down, from: phone, at: 0)
        _ = h.send(down, from: tablet, via: .web, at: 10)
        let e = h.gone(tablet, at: 20)
        let (actions, left) = e.byPerson
        #expect(actions[p2] == [leftRelease], "person 2's button released on their pointer: \(e.actions)")
        #expect(actions[.first] == nil, "nothing of person 1's released")
        #expect(left == [p2])
        #expect(e.people.last?.leaves == true, "the pointer goes after the releases")
        #expect(h.people.bridge(of: .first).held.holdsInput, "person 1 still holds their finger")
        #expect(!h.people.bridge(of: p2).held.holdsInput)
        // Person 1 keeps working; the next to come gets place 2 again (a fresh pointer).
        #expect(h.send(lift, from: phone, at: 30).byPerson.actions[.first]?.contains(leftRelease) == true)
        let again = h.send(down, from: student, at: 40)
        #expect(again.byPerson.actions[p2]?.contains(leftPress) == true)
    }

    @Test func aModeSwitchReleasesThatPersonsInputOnly() {
        var h = PeopleHarness()
        _ = h.send(down, from: phone, at: 0)
        _ = h.send(down, from: tablet, via: .web, at: 10)
        let e = h.command(.mode(.touchpad), from: tablet, at: 20)
        #expect(e.reply == .mode(.touchpad))
        #expect(e.byPerson.actions[p2] == [leftRelease], "\(e.actions)")
        #expect(e.byPerson.actions[.first] == nil)
        #expect(h.people.bridge(of: .first).core.configuration.mode == .touchscreen, "person 1's mode is theirs")
        #expect(h.people.bridge(of: .first).held.holdsInput)
    }

    @Test func aFullHouseIsBusyUntilAnIdlePersonsPlaceIsTaken() {
        var h = PeopleHarness(people: 2)
        _ = h.send(down, from: phone, at: 0)
        _ = h.send(down, from: tablet, at: 10)
        _ = h.send(lift, from: tablet, at: 20)
        var e = h.send(down, from: student, via: .web, at: 5_000)
        #expect(e.reply == .busy && e.actions.isEmpty, "both active within 10 s: busy")
        // The phone stays active; the tablet (person 2) falls silent: at 10 s after its last activity the
        // student takes place 2, once the tablet's pointer has gone.
        _ = h.send(packet(at(0, 100, 100)), from: phone, at: 9_000)
        e = h.send(down, from: student, via: .web, at: 10_020)
        #expect(e.reply != .busy)
        let leave = e.people.firstIndex { $0.leaves && $0.person == p2 }
        let acts = e.people.lastIndex { !$0.leaves && $0.person == p2 }
        #expect(leave != nil && acts != nil && leave! < acts!, "the old person 2 leaves before the new one acts: \(e.people)")
        #expect(e.byPerson.actions[p2]?.contains(leftPress) == true)
        #expect(h.people.person(of: Sender(student, via: .web)) == p2)
        #expect(h.people.person(of: Sender(tablet, via: .poseAI)) == nil)
        #expect(e.events.contains { if case .personLeft(p2, _, .replaced, _) = $0 { return true } else { return false } })
    }

    @Test func aFurtherDatagramPersonLeavesAfterTheTakeoverSilence() {
        var h = PeopleHarness()
        _ = h.send(down, from: phone, at: 0)
        _ = h.send(down, from: tablet, at: 10)
        var e = h.send(lift, from: tablet, at: 20)
        let last = h.people.bridge(of: p2).senderLastActive!
        #expect(e.deadline == last + .seconds(10), "the silent leave is the deadline: \(String(describing: e.deadline))")
        e = h.timer(at: last.nanoseconds / 1_000_000 + 9_999)
        #expect(e.people.allSatisfy { !$0.leaves })
        e = h.timer(at: last.nanoseconds / 1_000_000 + 10_000)
        #expect(e.byPerson.left == [p2])
        #expect(e.byPerson.actions[.first] == nil, "person 1's finger is not touched")
        #expect(h.people.person(of: Sender(tablet, via: .poseAI)) == nil)
        // Person 1, a datagram sender too, keeps the place as with one person.
        #expect(h.people.person(of: Sender(phone, via: .poseAI)) == .first)
    }

    @Test func silenceReleasesEachPersonOnTheirOwnPointer() {
        var h = PeopleHarness(idleRelease: .milliseconds(500))
        _ = h.send(down, from: phone, at: 0)
        _ = h.send(down, from: tablet, at: 300)
        var e = h.timer(at: 500)
        #expect(e.byPerson.actions[.first]?.contains(leftRelease) == true, "\(e.actions) \(e.people)")
        #expect(e.byPerson.actions[p2] == nil)
        e = h.timer(at: 800)
        #expect(e.byPerson.actions[p2]?.contains(leftRelease) == true)
        #expect(e.byPerson.actions[.first] == nil)
    }

    @Test func shutdownReleasesEveryonesOnTheirOwnPointerAndEveryoneLeaves() {
        var h = PeopleHarness()
        _ = h.send(down, from: phone, at: 0)
        _ = h.send(down, from: tablet, at: 10)
        _ = h.send(down, from: student, via: .web, at: 30)
        let e = h.shutdown()
        let (actions, left) = e.byPerson
        #expect(actions[.first] == [leftRelease])
        #expect(actions[p2] == [leftRelease])
        #expect(actions[p3] == [leftRelease])
        #expect(Set(left) == [p2, p3])
        #expect(e.deadline == nil)
        for p in [Person.first, p2, p3] { #expect(!h.people.bridge(of: p).held.holdsInput) }
        #expect(h.send(down, from: phone, at: 40).actions.isEmpty, "nothing after shutdown")
    }

    @Test func twoPeoplesHotPathAllocatesNothingOnceWarm() {
        var h = PeopleHarness(people: 3, mode: .touchpad)
        var moving = packet(at(0, 1000, 1000), state: state([0: .down(pt(1000, 1000))]))
        for i in 0..<50 {
            _ = h.send(moving, from: phone, at: UInt64(i * 16))
            _ = h.send(moving, from: tablet, at: UInt64(i * 16 + 8))
        }
        let first = allocations {
            for i in 0..<200 {
                moving.events[0] = at(0, UInt16(1000 + i), 1000)
                h.effects.clear()
                h.people.packet(moving, from: phone, via: .poseAI, at: ms(UInt64(1000 + i * 16)), into: &h.effects)
            }
        }
        let second = allocations {
            for i in 0..<200 {
                moving.events[0] = at(0, UInt16(2000 + i), 1000)
                h.effects.clear()
                h.people.packet(moving, from: tablet, via: .poseAI, at: ms(UInt64(5000 + i * 16 + 8)), into: &h.effects)
            }
        }
        var one = PeopleHarness(people: 1, mode: .touchpad)
        for i in 0..<50 { _ = one.send(moving, from: phone, at: UInt64(i * 16)) }
        let alone = allocations {
            for i in 0..<200 {
                moving.events[0] = at(0, UInt16(1000 + i), 1000)
                one.effects.clear()
                one.people.packet(moving, from: phone, via: .poseAI, at: ms(UInt64(1000 + i * 16)), into: &one.effects)
            }
        }
        #expect(alone == 0, "allocations in 200 packets of one person: \(alone)")
        #expect(first == 0 && second == 0, "allocations in 200 packets of person 1: \(first), of person 2: \(second)")
        // (Before the loop in `People.index(of:)`, the generic `firstIndex(of:)`: 200 and 400.)
    }

    @Test func aPingTakesNoPlace() {
        var h = PeopleHarness(people: 2)
        _ = h.send(down, from: phone, at: 0)
        let e = h.command(.ping(7), from: tablet, at: 10)
        #expect(e.reply == .pong(7))
        #expect(h.people.present.count == 1)
    }

    @Test func everyJoinIsHandedToTheShellWhateverTheLogKeeps() {
        // The page is told its person and colour at each join: the join lines are bounded, the joins not.
        var h = PeopleHarness(people: 2)
        _ = h.send(down, from: phone, at: 0)
        var told: [String] = [], logged = 0
        for i in 0..<40 {
            let page = v4(192, 168, 1, 50, port: UInt16(40_000 + i))
            var e = h.send(down, from: page, via: .web, at: UInt64(10 + 2 * i))
            told += e.joined.map(\.pageText)
            logged += e.events.filter { if case .personJoined = $0 { return true } else { return false } }.count
            #expect(e.joined.map(\.sender) == [Sender(page, via: .web)], "join \(i): \(e.joined)")
            e = h.gone(page, at: UInt64(11 + 2 * i))
            #expect(e.joined.isEmpty)
        }
        #expect(told == Array(repeating: "person 2 #00b359", count: 40))
        #expect(logged < 40, "the join lines are bounded (\(logged) of 40)")
        // One person: no join is handed over (the page shows no person).
        var one = PeopleHarness(people: 1)
        #expect(one.send(down, from: tablet, via: .web, at: 0).joined.isEmpty)
    }

    @Test func eachPersonHasAColourOfTheirOwn() {
        let hexes = (1...8).map { Person(rawValue: UInt8($0)).colourHex }
        #expect(Set(hexes).count == 8, "\(hexes)")
        #expect(hexes[0] == "#ff0000", "person 1's is the laser's red")
        #expect(hexes.allSatisfy { $0.count == 7 && $0.first == "#" && $0.dropFirst().allSatisfy(\.isHexDigit) })
        // Beyond eight, the further people's colours come round again; person 1's red is theirs alone.
        #expect(Person(rawValue: 9).colourHex == hexes[1] && Person(rawValue: 16).colourHex == hexes[1 + 14 % 7])
        let c = Person(rawValue: 2).colour
        #expect(c.red == 0 && c.green == 179.0 / 255 && c.blue == 89.0 / 255)
    }
}
