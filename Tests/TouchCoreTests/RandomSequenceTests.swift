// Long random sessions (seeded, reproducible) checked against invariants rather than exact outputs.
import Testing
import TouchCore
import TouchTestSupport

/// A phone that follows the protocol (lowest free slot, events in order, a truthful `TouchState`) behind a
/// bad network and an occasionally misbehaving sender: dropped packets, stale or missing states, garbage,
/// long silences, and the shell's timer ticks and `releaseAll`s.
struct RandomSession {
    enum Step {
        /// A packet arrives. `truthful`: after it, a tracker must match the phone exactly (its state was
        /// fresh and the packet was not garbage).
        case packet(TouchPacket, at: Instant, truthful: Bool)
        /// The shell's timer fires.
        case timer(at: Instant)
        /// Shutdown or a change of sender.
        case releaseAll
    }

    var rng: SplitMix64
    var now: UInt64 = 1_000_000_000
    /// The phone's real fingers.
    var fingers = [DevicePoint?](repeating: nil, count: 10)
    /// Slots whose last touch was cancelled (the phone's `TouchState` shows `=0=0` until the slot is reused).
    var cancelledSlots = [Bool](repeating: false, count: 10)

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    var truth: TouchState {
        var s = TouchState()
        for i in 0..<10 {
            if let p = fingers[i] { s[i] = .down(p) } else if cancelledSlots[i] { s[i] = .cancelled }
        }
        return s
    }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }
    mutating func randomPoint() -> DevicePoint {
        DevicePoint(rawX: .random(in: 0...4095, using: &rng), rawY: .random(in: 0...4095, using: &rng))
    }

    mutating func next() -> Step {
        if chance(1) { return .releaseAll }
        now += chance(2) ? UInt64.random(in: 300...1_500, using: &rng) : UInt64.random(in: 16...33, using: &rng)
        let time = Instant.milliseconds(now)
        if chance(10) { return .timer(at: time) }

        var packet = TouchPacket()
        if chance(3) {
            // Garbage: events on any slot (some out of range) and a random state.
            for _ in 0..<Int.random(in: 0...8, using: &rng) {
                let slot = UInt8.random(in: 0...11, using: &rng)
                let update: SlotUpdate = chance(60) ? .position(randomPoint()) : chance(70) ? .ended : .cancelled
                packet.events.append(TouchEvent(slot: slot, update: update))
            }
            if chance(50) {
                var s = TouchState()
                for i in 0..<10 { s[i] = chance(50) ? .free : chance(20) ? .cancelled : .down(randomPoint()) }
                packet.state = s
            }
            packet.hasTouches = true
            return .packet(packet, at: time, truthful: false)
        }

        let before = truth
        for _ in 0..<Int.random(in: 0...5, using: &rng) {
            let active = (0..<10).filter { fingers[$0] != nil }
            let roll = Int.random(in: 0..<100, using: &rng)
            if roll < 15 || active.isEmpty {
                guard roll < 50, let slot = fingers.firstIndex(where: { $0 == nil }) else { continue }
                let p = randomPoint()
                fingers[slot] = p
                cancelledSlots[slot] = false
                packet.events.append(TouchEvent(slot: UInt8(slot), update: .position(p)))
            } else if roll < 85 {
                let slot = active.randomElement(using: &rng)!
                var p = fingers[slot]!
                p.rawX = UInt16(clamping: Int(p.rawX) + Int.random(in: -40...40, using: &rng)).clamped(to: 4095)
                p.rawY = UInt16(clamping: Int(p.rawY) + Int.random(in: -40...40, using: &rng)).clamped(to: 4095)
                fingers[slot] = p
                packet.events.append(TouchEvent(slot: UInt8(slot), update: .position(p)))
            } else {
                let slot = active.randomElement(using: &rng)!
                fingers[slot] = nil
                let cancel = roll >= 97
                cancelledSlots[slot] = cancel
                packet.events.append(TouchEvent(slot: UInt8(slot), update: cancel ? .cancelled : .ended))
            }
        }
        packet.hasTouches = !packet.events.isEmpty

        let stateKind = Int.random(in: 0..<100, using: &rng)
        if stateKind < 70 {
            packet.state = truth
        } else if stateKind < 80 {
            packet.state = before  // a snapshot taken before this packet's events
        }
        if chance(8) {
            // Lost on the way: the next packet has to recover. Draw another step instead.
            return next()
        }
        return .packet(packet, at: time, truthful: stateKind < 70)
    }
}

extension UInt16 {
    func clamped(to maximum: UInt16) -> UInt16 { Swift.min(self, maximum) }
}

@Suite struct RandomSequenceTests {
    static let seeds: [UInt64] = [1, 2, 3, 0xdead_beef, 20_251_121]
    static let steps = 30_000

    /// Every change is legal for the slot's state, the tracker follows the events and the state exactly as
    /// documented, a truthful packet makes it match the phone, and every `began` ends exactly once.
    @Test(arguments: seeds)
    func trackerChangesAreWellFormedAndEveryBeganEndsOnce(seed: UInt64) {
        var session = RandomSession(seed: seed)
        var tracker = ContactTracker()
        var shadow = [DevicePoint?](repeating: nil, count: 10)
        var changes: [ContactChange] = []
        var began = 0, finished = 0

        func check(_ changes: [ContactChange]) {
            for c in changes {
                let s = Int(c.slot)
                switch c {
                case .began(_, let p):
                    #expect(shadow[s] == nil, "began on an active slot: \(c)")
                    shadow[s] = p
                    began += 1
                case .moved(_, let p):
                    #expect(shadow[s] != nil && shadow[s] != p, "bad move: \(c)")
                    shadow[s] = p
                case .ended, .cancelled:
                    #expect(shadow[s] != nil, "end of a free slot: \(c)")
                    shadow[s] = nil
                    finished += 1
                }
            }
            for s in 0..<10 { #expect(tracker.point(ofSlot: UInt8(s)) == shadow[s]) }
        }

        for _ in 0..<Self.steps {
            changes.removeAll(keepingCapacity: true)
            switch session.next() {
            case .packet(let packet, let now, let truthful):
                tracker.handle(packet, at: now, into: &changes)
                check(changes)
                // The documented rule: events decide the slots they mention, the state the others.
                var expected = [DevicePoint??](repeating: .none, count: 10)
                for e in packet.events where e.slot < 10 {
                    if case .position(let p) = e.update { expected[Int(e.slot)] = .some(p) } else { expected[Int(e.slot)] = .some(nil) }
                }
                if let state = packet.state {
                    for s in 0..<10 where expected[s] == nil { expected[s] = .some(state[s].point) }
                }
                for s in 0..<10 {
                    if let e = expected[s] { #expect(tracker.point(ofSlot: UInt8(s)) == e) }
                }
                if truthful {
                    for s in 0..<10 { #expect(tracker.point(ofSlot: UInt8(s)) == session.fingers[s]) }
                }
            case .timer:
                break
            case .releaseAll:
                tracker.cancelAll(into: &changes)
                check(changes)
                #expect(!tracker.hasContacts)
            }
        }
        changes.removeAll(keepingCapacity: true)
        tracker.cancelAll(into: &changes)
        check(changes)
        #expect(!tracker.hasContacts)
        #expect(began == finished)
        #expect(began > 1_000)
    }

    /// Button 1 presses and releases alternate, the pointer moves only to press or while pressed and stays
    /// on the screen, the button is held only while a finger is down, a deadline exists exactly while
    /// fingers are down, and everything ends released.
    @Test(arguments: seeds)
    func buttonPressesAndReleasesAlternateAndEndReleased(seed: UInt64) {
        var session = RandomSession(seed: seed)
        let screen = ScreenMapping(x: 100, y: 50, width: 1366, height: 768)
        var core = TouchPipeline(configuration: .init(screen: screen))
        var actions: [OutputAction] = []
        actions.reserveCapacity(64)
        var pressed = false
        var presses = 0, watchdogReleases = 0

        func check() {
            for (i, a) in actions.enumerated() {
                switch a {
                case .moveTo(let p):
                    let next = i + 1 < actions.count ? actions[i + 1] : nil
                    #expect(pressed || next == press, "move while released and not before a press")
                    #expect(p.x >= 100 && p.x < 100 + 1366 && p.y >= 50 && p.y < 50 + 768)
                case .button(let b, let down):
                    #expect(b == .left)
                    #expect(down != pressed, "button 1 pressed twice or released twice")
                    pressed = down
                    if down { presses += 1 }
                case .moveBy, .key, .type, .restoreKeymap, .extraPointerMove, .extraPointerButton, .overlay, .touch, .smoothScroll, .padContact, .pen:
                    Issue.record("touchscreen mode produced \(a)")
                }
            }
            if pressed { #expect(core.hasContacts) }
            #expect((core.nextDeadline != nil) == core.hasContacts)
        }

        for _ in 0..<Self.steps {
            actions.removeAll(keepingCapacity: true)
            switch session.next() {
            case .packet(let packet, let now, _):
                core.handle(packet, at: now, into: &actions)
                if let d = core.nextDeadline { #expect(d == now + .milliseconds(500)) }
            case .timer(let now):
                let hadDeadline = core.nextDeadline.map { $0 <= now } ?? false
                core.handleTimer(at: now, into: &actions)
                if hadDeadline {
                    #expect(!core.hasContacts)
                    if !actions.isEmpty { watchdogReleases += 1 }
                } else {
                    #expect(actions.isEmpty)
                }
            case .releaseAll:
                core.releaseAll(into: &actions)
                #expect(!core.hasContacts)
            }
            check()
        }
        actions.removeAll(keepingCapacity: true)
        core.releaseAll(into: &actions)
        check()
        #expect(!pressed)
        #expect(!core.hasContacts)
        #expect(core.nextDeadline == nil)
        #expect(presses > 500)
        #expect(watchdogReleases > 0)
    }
}

@Suite struct TouchpadRandomSequenceTests {
    /// Touchpad mode under the same random sessions: no button or key is pressed twice or released
    /// without a press, every key and every button but 1 is released in the step that pressed it,
    /// button 1 is held across steps only by a tap or drag (and so only while the core has a deadline
    /// or contacts), and after `releaseAll` nothing is held and no timer is left.
    @Test(arguments: RandomSequenceTests.seeds)
    func nothingStaysPressedAndChordsAreReleasedInTheirStep(seed: UInt64) {
        var session = RandomSession(seed: seed)
        var settings = TouchpadSettings()
        settings.dragLock = seed % 2 == 0
        var core = TouchPipeline(configuration: .init(
            screen: ScreenMapping(width: 1920, height: 1080), mode: .touchpad, touchpad: settings))
        var actions: [OutputAction] = []
        var held = Set<UInt8>()
        var keys = Set<UInt32>()
        var leftPresses = 0, wheel = 0, keyPresses = 0

        func check(after step: String) {
            for a in actions {
                switch a {
                case .button(let b, let down):
                    if down {
                        #expect(held.insert(b.rawValue).inserted, "\(b) pressed twice (\(step))")
                        if b == .left { leftPresses += 1 }
                        if b.rawValue >= 4 { wheel += 1 }
                    } else {
                        #expect(held.remove(b.rawValue) != nil, "\(b) released while up (\(step))")
                    }
                case .key(let k, let down):
                    if down {
                        #expect(keys.insert(k.rawValue).inserted)
                        keyPresses += 1
                    } else {
                        #expect(keys.remove(k.rawValue) != nil)
                    }
                case .moveTo, .type, .restoreKeymap, .extraPointerMove, .extraPointerButton, .overlay, .touch, .smoothScroll, .padContact, .pen:
                    Issue.record("touchpad mode made an absolute or per-finger action: \(a)")
                case .moveBy:
                    break
                }
            }
            #expect(keys.isEmpty, "a key left pressed after \(step)")
            #expect(held.subtracting([PointerButton.left.rawValue]).isEmpty, "a button other than 1 left pressed")
            if held.contains(PointerButton.left.rawValue) { #expect(core.nextDeadline != nil) }
        }

        for _ in 0..<RandomSequenceTests.steps {
            actions.removeAll(keepingCapacity: true)
            switch session.next() {
            case .packet(let packet, let now, _):
                core.handle(packet, at: now, into: &actions)
                check(after: "packet")
            case .timer(let now):
                core.handleTimer(at: now, into: &actions)
                check(after: "timer")
            case .releaseAll:
                core.releaseAll(into: &actions)
                check(after: "releaseAll")
                #expect(held.isEmpty)
                #expect(core.nextDeadline == nil)
            }
        }
        actions.removeAll(keepingCapacity: true)
        core.releaseAll(into: &actions)
        check(after: "final releaseAll")
        #expect(held.isEmpty)
        #expect(core.nextDeadline == nil)
        #expect(leftPresses > 10)
    }
}
