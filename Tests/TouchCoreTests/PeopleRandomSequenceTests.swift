// The random-sequence property over several people: two and three senders at once (two pages, PoseAI and
// TUIO streams, datagrams from a page's port), joining and leaving, through `People`. At every step no
// person's input acts on another's pointer, and when a person leaves nothing of theirs is held; at the end,
// once every source is gone and the daemon stops, nothing is held on anyone's pointer.
import Testing
import TouchCore
import TouchTestSupport

/// Runs one sequence through `People` of `count` places, each person's actions on a model desktop of their
/// own (their pointer and keyboard); nil when every check holds.
func runPeopleSequence(seed: UInt64, inputs: [BridgeInput], count: Int) -> Violation? {
    var cfgRng = SplitMix64(seed: seed ^ 0x5eed)
    func pick(_ p: Int) -> Bool { Int.random(in: 0..<100, using: &cfgRng) < p }
    let screen = PixelRect(x: 0, y: 0, width: 1920, height: 1080)
    var config = TouchPipeline.Configuration(mapping: AbsoluteMapping(target: screen))
    config.mode = TouchMode.allCases.randomElement(using: &cfgRng)!
    config.showTouches = pick(50)
    config.multitouch = pick(30)
    config.touchpad.smoothing = pick(50) ? .auto : .off
    config.presenter.drawing = pick(40)
    // XTest's capabilities: extra fingers' pointers for person 1, a pointer for each further person.
    var people = People(configuration: config, capabilities: OutputCapabilities(extraPointers: true, personPointers: true),
                        monitor: .all, people: count)
    var desktops: [Person: ModelDesktop] = [:]
    var effects = BridgeEffects()
    var now: UInt64 = 1_000
    var deadline: Instant?
    // Two pages (1 and 3), a PoseAI phone (0), a TUIO sender (2).
    let sources = [
        SourceAddress(ipv4: 0x7f00_0001, port: 5000), SourceAddress(ipv4: 0x7f00_0002, port: 5001),
        SourceAddress(ipv4: 0x7f00_0003, port: 5002), SourceAddress(ipv4: 0x7f00_0004, port: 5003),
    ]
    var broken: String?

    func desktop(_ p: Person) -> ModelDesktop { desktops[p] ?? ModelDesktop(seed: seed &+ UInt64(p.rawValue), failPercent: 0) }
    func holding(_ d: ModelDesktop) -> String? {
        let owed = d.owed.keys.filter { !$0.hasPrefix("circle") && $0 != "laser" }
        if !d.buttons.isEmpty || !d.keys.isEmpty || !d.fingerButtons.isEmpty || !d.touches.isEmpty || !d.pad.isEmpty
            || d.pen != nil || !owed.isEmpty {
            return "buttons \(d.buttons.sorted()), keys \(d.keys.sorted()), fingers \(d.fingerButtons.sorted()), touches \(d.touches.sorted()), pad \(d.pad.sorted()), pen \(d.pen != nil), owed \(owed.sorted())"
        }
        return nil
    }
    func isRelease(_ a: OutputAction) -> Bool {
        switch a {
        case .button(_, false), .key(_, false), .extraPointerButton(_, _, false), .restoreKeymap, .touch(_, .ended, _),
             .touch(_, .cancelled, _), .padContact(.ended), .padContact(.cancelled), .pen(.away), .overlay:
            return true
        default:
            return false
        }
    }
    /// Performs the step's actions person by person, as the shell does; `actor`: whose input this was (nil:
    /// the timer, the screen, the keymap, a restart), whose alone may do more than release.
    func apply(actor: Sender?, _ body: (inout People, inout BridgeEffects) -> Void) {
        effects.clear()
        body(&people, &effects)
        deadline = effects.deadline
        let actorPerson = actor.flatMap { people.person(of: $0) }
        var person = Person.first, from = 0
        func run(_ end: Int) {
            guard end > from else { return }
            let actions = effects.actions[from..<end].filter { if case .overlay = $0 { return false } else { return true } }
            from = end
            if actor != nil, person != actorPerson, let a = actions.first(where: { !isRelease($0) }), broken == nil {
                broken = "\(person) was made to act by another's input (\(actor!), \(actorPerson.map { "\($0)" } ?? "no place")): \(a)"
            }
            var d = desktop(person)
            d.perform(Array(actions))
            desktops[person] = d
        }
        for mark in effects.people {
            run(mark.start)
            if mark.leaves {
                if let held = holding(desktop(mark.person)), broken == nil { broken = "\(mark.person) left holding \(held)" }
                desktops[mark.person] = nil  // their pointer goes; the next gets a fresh one
                person = .first
            } else {
                person = mark.person
            }
        }
        run(effects.actions.count)
        if count > 1, effects.people.contains(where: { $0.person.rawValue > UInt8(count) }), broken == nil {
            broken = "a mark names a person past \(count): \(effects.people)"
        }
    }
    func run(until: UInt64) {
        var guardCount = 0
        while let d = deadline, d <= Instant.milliseconds(until), guardCount < 100_000 {
            now = max(now, UInt64(d.nanoseconds / 1_000_000))
            apply(actor: nil) { $0.timer(at: d, into: &$1) }
            guardCount += 1
        }
        now = max(now, until)
    }
    func monitors(_ n: Int) -> [Monitor] {
        (0..<n).map { Monitor(name: "M\($0)", rect: PixelRect(x: Int32($0) * 960, y: 0, width: 960, height: 1080), isPrimary: $0 == 0) }
    }

    apply(actor: nil) { $0.start(screen: screen, monitors: monitors(1), at: .milliseconds(now), into: &$1) }
    for (step, input) in inputs.enumerated() {
        let t = Instant.milliseconds(now)
        switch input {
        case .packet(let p, let s, let transport):
            let sender = Sender(sources[s], via: transport)
            apply(actor: sender) { $0.packet(p, from: sources[s], via: transport, at: t, into: &$1) }
        case .command(let c, let s):
            apply(actor: Sender(sources[s], via: .web)) { $0.command(c, from: sources[s], at: t, into: &$1) }
        case .gone(let s):
            apply(actor: Sender(sources[s], via: .web)) { $0.sourceGone(sources[s], at: t, into: &$1) }
        case .advance(let ms):
            run(until: now + ms)
        case .screen(let n):
            apply(actor: nil) { $0.screenChanged(screen: screen, monitors: monitors(n), at: t, into: &$1) }
        case .keymap(let k):
            apply(actor: nil) { $0.keymapChanged(k, at: t, into: &$1) }
        case .restart:
            apply(actor: nil) { $0.shutdown(into: &$1) }
            for (p, d) in desktops.sorted(by: { $0.key < $1.key }) {
                if let held = holding(d), broken == nil { broken = "\(p) holds after shutdown: \(held)" }
            }
            apply(actor: nil) { $0.start(screen: screen, monitors: monitors(1), at: t, into: &$1) }
        case .refusedLine, .xmodmap, .setxkbmap:
            continue
        }
        if people.present.count > count { broken = broken ?? "\(people.present.count) people present, at most \(count)" }
        if let broken { return Violation(what: "step \(step) (\(input)): \(broken)") }
    }
    // Every page closes, the streams fall silent, the clock runs past the takeover silence, the daemon stops.
    for s in sources { apply(actor: nil) { $0.sourceGone(s, at: .milliseconds(now), into: &$1) } }
    run(until: now + 12_000)
    apply(actor: nil) { $0.shutdown(into: &$1) }
    if let broken { return Violation(what: "at the end: \(broken)") }
    for (p, d) in desktops.sorted(by: { $0.key < $1.key }) {
        if let held = holding(d) { return Violation(what: "\(p) holds after everyone left and the daemon stopped: \(held)") }
    }
    return nil
}

@Suite struct PeopleRandomSequenceTests {
    /// Two and three places; the inputs of `InputGenerator`, with the page's commands and its going spread
    /// over two pages.
    @Test(arguments: [2, 3])
    func noPersonActsOnAnothersPointerAndNothingIsHeldAfterTheyGo(count: Int) {
        let sequences = NothingLeftBehindTests.sequenceCount / 3
        var failures = 0
        for n in 0..<sequences {
            let seed = NothingLeftBehindTests.firstSeed &+ UInt64(n)
            var gen = InputGenerator(seed: seed)
            let length = Int.random(in: 1...200, using: &gen.rng)
            let inputs: [BridgeInput] = (0..<length).map { _ in
                switch gen.next() {
                case .command(let c, _): return .command(c, source: gen.chance(50) ? 1 : 3)
                case .gone: return .gone(source: gen.chance(50) ? 1 : 3)
                case let other: return other
                }
            }
            guard let violation = runPeopleSequence(seed: seed, inputs: inputs, count: count) else { continue }
            let small = shrink(inputs) { runPeopleSequence(seed: seed, inputs: $0, count: count) }
            let why = runPeopleSequence(seed: seed, inputs: small, count: count) ?? violation
            Issue.record("""
                seed \(seed), \(count) people: \(why)
                shrunk from \(inputs.count) to \(small.count) inputs:
                \(small.map { "  \($0)" }.joined(separator: "\n"))
                """)
            failures += 1
            if failures >= 3 { break }
        }
        print("people: \(sequences) random sequences with \(count) places, \(failures) failed")
    }
}
