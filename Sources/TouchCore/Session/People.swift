// Several people at once, each with their own pointer.

/// One of the people driving the desktop at once: person 1 drives the main (core) pointer, each further
/// person a pointer of their own that the output makes (`OutputCapabilities.personPointers`).
public struct Person: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// 1, 2, …: the place the person holds while their sender is connected.
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The one who drives the main pointer.
    public static let first = Person(rawValue: 1)
    /// The most people `people = N` may ask for.
    public static let most = 16

    public static func < (a: Person, b: Person) -> Bool { a.rawValue < b.rawValue }

    public var description: String { "person \(rawValue)" }

    /// The person's colour, RGB 0…1: the overlay draws a further person's circles, laser and strokes in
    /// it, and their page shows it. Person 1's is the laser's red; their circles and strokes keep a colour
    /// per finger, as with one person (`Overlay.slotColours`), so a lone user's overlay does not change.
    public var colour: (red: Double, green: Double, blue: Double) {
        let (r, g, b) = bytes
        return (Double(r) / 255, Double(g) / 255, Double(b) / 255)
    }

    /// The colour in 8-bit RGB: eight hues far apart, then again from the first further one.
    public var bytes: (UInt8, UInt8, UInt8) {
        Self.colours[Int(rawValue) <= 1 ? 0 : 1 + (Int(rawValue) - 2) % (Self.colours.count - 1)]
    }

    /// Red (person 1), green, purple, amber, sky, pink, navy, brown: none of them a finger's colour.
    static let colours: [(UInt8, UInt8, UInt8)] = [
        (255, 0, 0), (0, 179, 89), (153, 64, 230), (255, 179, 0),
        (0, 179, 230), (255, 102, 179), (38, 64, 153), (153, 102, 51),
    ]

    /// The colour as the page reads it: `#rrggbb`.
    public var colourHex: String {
        let (r, g, b) = bytes
        func hex(_ v: UInt8) -> String { (v < 16 ? "0" : "") + String(v, radix: 16) }
        return "#" + hex(r) + hex(g) + hex(b)
    }
}

/// Where one person's actions begin among `BridgeEffects.actions`, or where a person leaves.
public struct PersonMark: Hashable, Sendable, CustomStringConvertible {
    /// The index in `BridgeEffects.actions` the mark stands before.
    public var start: Int
    public var person: Person
    /// False: the actions from `start` to the next mark are `person`'s. True: `person` leaves here: once the
    /// actions before `start` are performed, their own pointer goes (what it held was released by them).
    public var leaves: Bool

    @inlinable public init(start: Int, person: Person, leaves: Bool = false) {
        self.start = start
        self.person = person
        self.leaves = leaves
    }

    public var description: String { "\(person) \(leaves ? "leaves" : "acts") at \(start)" }
}

/// Why a person left.
public enum PersonLeaving: String, Hashable, Sendable {
    /// Their page's connection closed.
    case gone = "their page went away"
    /// A further person's datagrams showed no activity for the takeover silence.
    case silent = "silent"
    /// The house was full and they were idle for the takeover silence: a newcomer took their place.
    case replaced = "idle while the house was full: a newcomer took the place"
    /// The daemon stopped.
    case shutdown = "the daemon stops"
}

/// Up to `count` senders at once, each a person with a `Bridge` of their own (their session, pipeline,
/// mode machine, held record and timer): a sender is routed to its person, and every effect is tagged
/// with whose it is (`BridgeEffects.people`), so that each release path (leave, silence, mode switch,
/// output failure, shutdown) releases that person's buttons, keys and touches and no one else's.
/// With one person it is exactly the one `Bridge` (no marks, no other line).
///
/// The rules:
/// - A sender that holds a place is routed to it. A newcomer takes the lowest free place: place 1 drives
///   the main pointer, place N > 1 a pointer of its own while it is held (the output makes it at the
///   person's first action and removes it when they leave; the next to come gets a fresh one).
/// - A full house: the newcomer is routed to the place whose sender has been idle longest. If that sender
///   has shown no activity for the takeover silence (10 s, as with one person), the newcomer takes the
///   place (everything the old sender held released first); else the answer is "busy", as today.
/// - A page leaves when its connection closes. A further person's datagram stream (PoseAI, TUIO), which
///   has no close, leaves after the takeover silence without activity; person 1's stays, as with one
///   person, until someone takes over.
/// - Shutdown: everyone leaves.
///
/// Pure: standard library only, time passed in.
public struct People: Sendable {
    /// How many people may drive at once (1: the one `Bridge`, today's behaviour).
    public let count: Int
    /// Person 1's Bridge; place `i` > 0 (person `i + 1`) is `further[i - 1]`. Person 1's apart from the array:
    /// a call through an array element's accessor allocates in a debug build.
    private var place1: Bridge
    private var further: [Bridge]
    /// Each place's deadline, as its Bridge last said.
    private var deadlines: [Instant?]
    /// Each place's sender as last seen, to tell joins and leaves apart.
    private var senders: [Sender?]
    /// Joined and left, bounded as the Bridge's session lines.
    private var personLog = DropLog<2>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)

    /// One person: `bridge` alone.
    public init(_ bridge: Bridge) {
        count = 1
        place1 = bridge
        further = []
        deadlines = [nil]
        senders = [nil]
    }

    /// Up to `people` at once when the output has a pointer for each (`capabilities.personPointers`),
    /// else one. A further person has no extra fingers' pointers (`--multitouch` is person 1's).
    public init(configuration: TouchPipeline.Configuration, capabilities: OutputCapabilities, monitor: MonitorChoice = .all,
                takeoverSilence: Interval = .seconds(10), people: Int) {
        let n = capabilities.personPointers ? min(max(people, 1), Person.most) : 1
        count = n
        var further = configuration
        further.multitouch = false
        place1 = Bridge(configuration: configuration, capabilities: capabilities, monitor: monitor, takeoverSilence: takeoverSilence)
        self.further = (1..<max(n, 1)).map { _ in
            Bridge(configuration: further, capabilities: capabilities, monitor: monitor, takeoverSilence: takeoverSilence)
        }
        deadlines = Array(repeating: nil, count: n)
        senders = Array(repeating: nil, count: n)
    }

    /// Person 1's Bridge (the main pointer's).
    public var first: Bridge { place1 }
    /// Person 1's pipeline (for the start-up line and tests).
    public var core: TouchPipeline { place1.core }
    /// Where absolute mapping lands (every person's is the same).
    public var target: MonitorChoice.Target? { place1.target }
    /// Person 1's sender, the one the UDP gates give a budget of its own.
    public var sender: Sender? { place1.sender }

    /// The Bridge of `person` (for tests).
    public func bridge(of person: Person) -> Bridge { person == .first ? place1 : further[Int(person.rawValue) - 2] }

    /// The person `sender` is, if it holds a place.
    public func person(of sender: Sender) -> Person? {
        index(of: sender).map { Person(rawValue: UInt8($0 + 1)) }
    }

    /// Who holds a place now.
    public var present: [(Person, Sender)] {
        senders.enumerated().compactMap { i, s in s.map { (Person(rawValue: UInt8(i + 1)), $0) } }
    }

    /// The presentation program takes person 1's slides by protocol, or no more (`Bridge.setSlidesByProtocol`).
    public mutating func setSlidesByProtocol(_ on: Bool) { place1.setSlidesByProtocol(on) }

    public mutating func setTracing(_ on: Bool) {
        place1.setTracing(on)
        for i in further.indices { further[i].setTracing(on) }
    }

    // MARK: inputs, as the Bridge's

    public mutating func start(screen: PixelRect, monitors: [Monitor], at now: Instant, into effects: inout BridgeEffects) {
        everyone(at: now, into: &effects) { $0.start(screen: screen, monitors: monitors, at: now, into: &$1) }
    }

    public mutating func packet(_ packet: TouchPacket, from source: SourceAddress, via transport: Transport,
                                at now: Instant, into effects: inout BridgeEffects) {
        if count == 1 {
            place1.packet(packet, from: source, via: transport, at: now, into: &effects)
            return
        }
        let i = place(for: Sender(source, via: transport), at: now, into: &effects)
        mark(i, into: &effects)
        with(i) { $0.packet(packet, from: source, via: transport, at: now, into: &effects) }
        after(i, at: now, into: &effects)
        finish(at: now, into: &effects)
    }

    public mutating func command(_ command: WebCommand, from source: SourceAddress, at now: Instant,
                                 into effects: inout BridgeEffects) {
        if count == 1 {
            place1.command(command, from: source, at: now, into: &effects)
            return
        }
        let sender = Sender(source, via: .web)
        let i: Int
        if case .ping = command {
            // Answered whoever holds the session: it takes no place.
            i = index(of: sender) ?? 0
        } else {
            i = place(for: sender, at: now, into: &effects)
        }
        mark(i, into: &effects)
        with(i) { $0.command(command, from: source, at: now, into: &effects) }
        after(i, at: now, into: &effects)
        finish(at: now, into: &effects)
    }

    public mutating func sourceGone(_ source: SourceAddress, at now: Instant, into effects: inout BridgeEffects) {
        if count == 1 {
            place1.sourceGone(source, at: now, into: &effects)
            return
        }
        guard let i = index(of: Sender(source, via: .web)) else {
            return finish(at: now, into: &effects)
        }
        mark(i, into: &effects)
        with(i) { $0.sourceGone(source, at: now, into: &effects) }
        after(i, at: now, why: .gone, into: &effects)
        finish(at: now, into: &effects)
    }

    public mutating func timer(at now: Instant, into effects: inout BridgeEffects) {
        if count == 1 {
            place1.timer(at: now, into: &effects)
            return
        }
        for i in 0..<count {
            if let d = deadlines[i], d <= now {
                mark(i, into: &effects)
                with(i) { $0.timer(at: now, into: &effects) }
                after(i, at: now, into: &effects)
            }
            if let silent = silentLeave(i), silent <= now {
                mark(i, into: &effects)
                with(i) { $0.leave(at: now, into: &effects) }
                after(i, at: now, why: .silent, into: &effects)
            }
        }
        finish(at: now, into: &effects)
    }

    public mutating func screenChanged(screen: PixelRect, monitors: [Monitor], at now: Instant,
                                       into effects: inout BridgeEffects) {
        everyone(at: now, into: &effects) { $0.screenChanged(screen: screen, monitors: monitors, at: now, into: &$1) }
    }

    public mutating func keymapChanged(_ keymap: Keymap?, at now: Instant, into effects: inout BridgeEffects) {
        everyone(at: now, into: &effects) { $0.keymapChanged(keymap, at: now, into: &$1) }
    }

    public mutating func shutdown(into effects: inout BridgeEffects) {
        if count == 1 {
            place1.shutdown(into: &effects)
            return
        }
        // Further people first, person 1 last: person 1's overlay removal ends the batch.
        for i in (0..<count).reversed() {
            mark(i, into: &effects)
            with(i) { $0.shutdown(into: &effects) }
            after(i, at: nil, why: .shutdown, into: &effects)
        }
        finish(at: nil, into: &effects)
    }

    // MARK: -

    /// The place `sender` goes to: its own, else the lowest free one, else the one idle longest (after the
    /// takeover silence its sender leaves first; before it, that place's session answers busy).
    private mutating func place(for sender: Sender, at now: Instant, into effects: inout BridgeEffects) -> Int {
        if let i = index(of: sender) { return i }
        if let i = index(of: nil) { return i }
        var oldest = 0
        for i in 0..<count where (lastActive(i) ?? now) < (lastActive(oldest) ?? now) {
            oldest = i
        }
        // Place 1's own session takes over as with one person; a further place is left first, so that its
        // pointer goes before the newcomer's comes.
        if oldest > 0, let last = lastActive(oldest), now - last >= place1.takeoverSilence {
            mark(oldest, into: &effects)
            with(oldest) { $0.leave(at: now, into: &effects) }
            after(oldest, at: now, why: .replaced, into: &effects)
        }
        return oldest
    }

    /// Runs `body` on place `i`'s Bridge.
    private mutating func with(_ i: Int, _ body: (inout Bridge) -> Void) {
        if i == 0 { body(&place1) } else { body(&further[i - 1]) }
    }

    /// The same step for every place in turn (the start, a screen or a keymap that changed), each person's
    /// effects marked as theirs; person 1 alone, as most of the time, takes it with no marks.
    private mutating func everyone(at now: Instant, into effects: inout BridgeEffects,
                                   _ step: (inout Bridge, inout BridgeEffects) -> Void) {
        if count == 1 { return step(&place1, &effects) }
        for i in 0..<count {
            mark(i, into: &effects)
            with(i) { step(&$0, &effects) }
            after(i, at: now, into: &effects)
        }
        finish(at: now, into: &effects)
    }

    /// The place `sender` holds (a loop: the generic `firstIndex(of:)` allocates in a debug build).
    private func index(of sender: Sender?) -> Int? {
        for i in 0..<count where senders[i] == sender { return i }
        return nil
    }

    /// When place `i`'s sender last showed activity.
    private func lastActive(_ i: Int) -> Instant? { i == 0 ? place1.senderLastActive : further[i - 1].senderLastActive }

    /// When a further person's datagram stream leaves for silence (nil: not such a person).
    private func silentLeave(_ i: Int) -> Instant? {
        guard i > 0, let s = senders[i], s.isDatagram, let last = further[i - 1].senderLastActive else { return nil }
        return last + place1.takeoverSilence
    }

    /// The actions from here on are place `i`'s (with one person and no mark yet: none needed).
    private func mark(_ i: Int, into effects: inout BridgeEffects) {
        guard i > 0 || !effects.people.isEmpty else { return }
        let person = Person(rawValue: UInt8(i + 1))
        if let last = effects.people.last, last.person == person, !last.leaves { return }
        effects.people.append(PersonMark(start: effects.actions.count, person: person))
    }

    /// After place `i`'s Bridge took an input: its deadline kept; a sender that left or changed is a person
    /// who left (a further person's pointer goes), a new one a person who joined.
    private mutating func after(_ i: Int, at now: Instant?, why: PersonLeaving = .replaced, into effects: inout BridgeEffects) {
        deadlines[i] = effects.deadline
        let now = now ?? Instant(nanoseconds: 0)
        let was = senders[i], current = effects.sender
        guard was != current else { return }
        let person = Person(rawValue: UInt8(i + 1))
        senders[i] = current
        if let was {
            if i > 0 { effects.people.append(PersonMark(start: effects.actions.count, person: person, leaves: true)) }
            if let report = personLog.record(reasonIndex: 1, at: now) {
                effects.events.append(.personLeft(person, was, why, report))
            }
        }
        if let joined = current {
            effects.joined.append(PersonJoin(person: person, sender: joined))
            if let report = personLog.record(reasonIndex: 0, at: now) {
                effects.events.append(.personJoined(person, joined, report))
            }
        }
    }

    /// The batch's deadline is the earliest of every place's and of the silent leaves; the sender handed to
    /// the gates is person 1's. `mutating` though it changes nothing of `self`: called from a mutating step, a
    /// non-mutating method got a copy of the whole `People` (11.5 kB, every Bridge) on every packet.
    private mutating func finish(at now: Instant?, into effects: inout BridgeEffects) {
        var deadline: Instant?
        for i in 0..<count {
            if let d = deadlines[i] { deadline = deadline.map { min($0, d) } ?? d }
            if let d = silentLeave(i) { deadline = deadline.map { min($0, d) } ?? d }
        }
        effects.deadline = deadline
        effects.sender = place1.sender
        // The presentation program (LibreOffice Impress) is person 1's, as the session's first place is.
        effects.wantsSlides = place1.wantsSlides
    }
}
