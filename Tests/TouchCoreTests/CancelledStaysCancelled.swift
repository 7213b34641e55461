// The second promise over random sequences, checked on every step: a contact the Bridge cancelled
// makes nothing until it has ended, whatever follows (mode round trips included), and a new sender's
// contacts and pen start from nothing.
import TouchCore

/// What the Bridge was told of the sender's fingers and pen, and which of them it cancelled while still down.
///
/// The rules it follows are the documented ones, not the code's:
/// - a finger is told to begin, move and end by the packets (`ContactTracker`'s rule: the events decide the
///   slots they mention, the `TouchState` the others); the pen touches on `pen touch`, ends on `pen hover`
///   or `pen away`;
/// - a release while the same sender continues (its `release`, a switch to another mode, a setting that
///   changes a value, in every mode, the silence watchdog) cancels every finger and pen still down: each
///   stays cancelled until it ends;
/// - silence is a finger's end: a cancelled finger is forgotten when no packet came for `idleRelease` (the
///   stream repeats itself every 100 ms while down, and a datagram's end may be lost); never the pen's,
///   which comes over the page's WebSocket and ends only when the page says so (hover, away) or goes;
/// - a new sender (first, after a takeover, after the old one went, after a restart) starts from nothing;
/// - a sender is an address and a transport: a datagram from the page's address and port number is not
///   the page, and never acts while the page holds the session.
///
/// Checked on each step: a packet that leaves only cancelled fingers down, before, during and after it, makes
/// nothing but releases; a `pen touch` of a cancelled pen makes nothing but releases; a `pen touch` of a
/// pen that is up presses (pen mode) or begins a stroke (presenter mode, not the eraser).
struct CancelModel {
    enum Contact: Equatable { case free, live, cancelled }

    var slots = [Contact](repeating: .free, count: 10)
    var pen = Contact.free
    var sender: Sender?
    /// The sender's last activity, the mode and the touchpad settings, as they were before the step.
    var lastActive: Instant?
    var mode: TouchMode?
    var touchpad: TouchpadSettings?
    /// When the Bridge last handled a packet (not a hello) and a pen report, in ms.
    var lastPacket: UInt64?
    var lastPen: UInt64?
    var releases = 0

    /// Every finger and the pen still down are cancelled.
    mutating func cancelDown() {
        for i in 0..<10 where slots[i] == .live { slots[i] = .cancelled }
        if pen == .live { pen = .cancelled }
    }

    /// Nothing down, nothing cancelled.
    mutating func reset() {
        slots = [Contact](repeating: .free, count: 10)
        pen = .free
    }

    /// After `input` at `now` (ms): follows what the Bridge was told and did, and checks the step's `actions`.
    mutating func step(_ input: BridgeInput, sources: [SourceAddress], bridge: Bridge, actions: [OutputAction],
                       now: UInt64) -> String? {
        let idle = UInt64(bridge.core.configuration.idleRelease.nanoseconds / 1_000_000)
        let released = bridge.core.releases != releases
        releases = bridge.core.releases
        let senderBefore = sender, lastActiveBefore = lastActive, modeBefore = mode, touchpadBefore = touchpad
        let newSender = bridge.sender != sender
        sender = bridge.sender
        lastActive = bridge.senderLastActive
        mode = bridge.core.configuration.mode
        touchpad = bridge.core.configuration.touchpad
        if newSender { reset() }
        func admitted(_ s: Int, _ t: Transport = .web) -> Bool { bridge.sender == Sender(sources[s], via: t) }

        // A datagram from the page's address and port number, while the page holds the session and was
        // active within the takeover silence: never the page's input.
        if case .packet(_, let s, let t) = input, t != .web, senderBefore == Sender(sources[s], via: .web),
           let active = lastActiveBefore, Instant.milliseconds(now) - active < Interval.seconds(10) {
            if !actions.isEmpty { return "a datagram (\(t)) from the page's address and port acted: \(actions)" }
            if bridge.sender != senderBefore { return "a datagram (\(t)) from the page's address and port took the page's session" }
        }

        switch input {
        case .packet(let p, let s, let t) where admitted(s, t) && !p.isHello:
            if let last = lastPacket, now - last >= idle {
                for i in 0..<10 where slots[i] == .cancelled { slots[i] = .free }
            }
            lastPacket = now
            let quietBefore = !slots.contains(.live)
            let hadCancelled = slots.contains(.cancelled)
            let began = apply(p)
            if quietBefore && hadCancelled && !began && !slots.contains(.live), let a = Self.firstNotRelease(actions) {
                return "a finger cancelled while down came back: \(a) (fingers \(slots))"
            }
        case .command(.pen(let report), let s) where admitted(s):
            // No silence ends a cancelled pen: only the page's hover or away, or a new sender.
            lastPen = now
            guard case .near(let sample) = report, sample.touching else {
                pen = .free
                break
            }
            switch pen {
            case .cancelled:
                if let a = Self.firstNotRelease(actions) { return "a pen cancelled while down came back: \(a)" }
            case .free:
                pen = .live
                switch bridge.core.configuration.mode {
                case .pen:
                    let pressed = actions.contains {
                        switch $0 {
                        case .button(.left, true): return true
                        case .pen(.at(let f)): return f.touching
                        default: return false
                        }
                    }
                    if !pressed { return "a pen that was up touched in pen mode and pressed nothing: \(actions)" }
                case .presenter where !sample.eraser:
                    let began = actions.contains {
                        if case .overlay(.strokeBegan(_, DrawingStore.penSlot, _)) = $0 { return true } else { return false }
                    }
                    if !began { return "a pen that was up touched in presenter mode and drew nothing: \(actions)" }
                default:
                    break
                }
            case .live:
                break
            }
        case .command(let c, let s) where admitted(s) && !newSender:
            // The documented end paths, whether or not the Bridge released: `release`; a switch to
            // another mode; a setting that changes a value, in every mode.
            var ends = released
            switch c {
            case .release: ends = true
            case .mode(let k): ends = ends || (modeBefore.map { $0 != k } ?? false)
            case .tune(let t):
                if var settings = touchpadBefore {
                    let before = settings
                    t.apply(to: &settings)
                    ends = ends || settings != before
                }
            default: break
            }
            if ends { cancelDown() }
        case .advance:
            // The silence watchdog; the same sender continues: what is down stays cancelled until it ends.
            if released && !newSender { cancelDown() }
        default:
            break
        }
        return nil
    }

    /// The packet as `ContactTracker` documents it: the events for the slots they mention, the state for the
    /// others. Returns whether a finger began (even one that ended in the same packet: a tap).
    mutating func apply(_ p: TouchPacket) -> Bool {
        var began = false
        var mentioned = Set<Int>()
        for e in p.events where e.slot < 10 {
            let s = Int(e.slot)
            mentioned.insert(s)
            switch e.update {
            case .position: if slots[s] == .free { slots[s] = .live; began = true }
            case .ended, .cancelled: slots[s] = .free
            }
        }
        guard let state = p.state else { return began }
        for s in 0..<10 where !mentioned.contains(s) {
            switch state[s] {
            case .free, .cancelled: slots[s] = .free
            case .down: if slots[s] == .free { slots[s] = .live; began = true }
            }
        }
        return began
    }

    /// The first action that is not a release or a fade, if any.
    static func firstNotRelease(_ actions: [OutputAction]) -> OutputAction? {
        actions.first {
            switch $0 {
            case .button(_, false), .key(_, false), .extraPointerButton(_, _, false), .restoreKeymap,
                 .touch(_, .ended, _), .touch(_, .cancelled, _), .padContact(.ended), .padContact(.cancelled),
                 .overlay(.touchGone), .overlay(.laserAlpha), .overlay(.laserOff), .overlay(.laserTrim),
                 .overlay(.strokeEnded), .pen(.away):
                return false
            case .overlay(.touch(_, _, let alpha)) where alpha < 255:
                return false
            default:
                return true
            }
        }
    }
}

extension InputGenerator {
    /// A finger or the pen (or both) down from one source, then mode round trips, releases, settings and
    /// a page that goes, between their moves; then the rest of the touch, which may end or not.
    mutating func cancelScenario() -> [BridgeInput] {
        var out: [BridgeInput] = []
        let s = chance(70) ? 1 : int(0...2)
        let transport: Transport = s == 0 ? .poseAI : s == 1 ? .web : .tuio
        if chance(20) { out.append(.gone(source: s)) }
        let start = TouchMode.allCases.randomElement(using: &rng)!
        out.append(.command(.mode(start), source: s))
        let slot = int(0...3)
        let finger = chance(65)
        let usePen = !finger || chance(50)
        func move() {
            if finger { out.append(.packet(fingerPacket(source: s, slot: slot), source: s, transport)) }
            if usePen && chance(80) { out.append(.command(.pen(penTouch(true)), source: s)) }
            // A datagram from the page's address and port number mixed into its session.
            if s == 1 && chance(20) { out.append(.packet(packet(source: 0), source: 1, chance(50) ? .poseAI : .tuio)) }
        }
        move()
        for _ in 0..<int(1...5) {
            switch int(0...11) {
            case 0...3:
                // A round trip: away to another mode and back.
                out.append(.command(.mode(TouchMode.allCases.randomElement(using: &rng)!), source: s))
                if chance(50) { move() }
                out.append(.command(.mode(start), source: s))
            case 4: out.append(.command(.release, source: s))
            case 5, 10:
                // Every setting, mid-contact, in the mode of the scenario (values that change, and the same again).
                out.append(.command(tuning(), source: s))
            case 11:
                // Held through a switch while the daemon is busy (the overlay window made): its next
                // report comes after the silence of `idleRelease`, still touching.
                out.append(.command(.mode(TouchMode.allCases.randomElement(using: &rng)!), source: s))
                out.append(.advance(UInt64(int(500...1_500))))
                if chance(50) { out.append(.command(.mode(start), source: s)) }
            case 6: out.append(.advance(UInt64(int(1...60))))
            case 7:
                // The page goes with its finger or pen down; the same page again is a new sender.
                out.append(.gone(source: s))
            case 8: out.append(.keymap(chance(50) ? Self.keymapLacking : Self.keymapBorrowing))
            default: out.append(.command(.mode(TouchMode.allCases.randomElement(using: &rng)!), source: s))
            }
            move()
        }
        for _ in 0..<int(0...3) { move() }
        if finger && chance(80) {
            down[s][slot] = nil
            var p = TouchPacket()
            p.events.append(TouchEvent(slot: UInt8(slot), update: .ended))
            p.hasTouches = true
            out.append(.packet(p, source: s, transport))
        }
        if usePen && chance(80) { out.append(.command(.pen(chance(50) ? penTouch(false) : .away), source: s)) }
        return out
    }

    /// One of the page's live settings, with a value that may or may not be the one in use.
    mutating func tuning() -> WebCommand {
        switch int(0...3) {
        case 0: return .tune(.speed([-1, -0.5, 0, 0.3, 1].randomElement(using: &rng)!))
        case 1: return .tune(.scrollSpeed([0.5, 1, 3].randomElement(using: &rng)!))
        case 2: return .tune(.naturalScroll(chance(50)))
        default: return .tune(.tapToClick(chance(50)))
        }
    }

    /// The finger in `slot` of `source` moves a little (or lands), with the phone's state half the time.
    mutating func fingerPacket(source: Int, slot: Int) -> TouchPacket {
        var q = down[source][slot] ?? point()
        q.rawX = UInt16(clamping: Int(q.rawX) + int(-200...200)).clamped(to: 4095)
        q.rawY = UInt16(clamping: Int(q.rawY) + int(-200...200)).clamped(to: 4095)
        down[source][slot] = q
        var p = TouchPacket()
        p.events.append(TouchEvent(slot: UInt8(slot), update: .position(q)))
        p.hasTouches = true
        if chance(50) {
            var st = TouchState()
            for i in 0..<10 { if let d = down[source][i] { st[i] = .down(d) } }
            p.state = st
        }
        return p
    }

    /// The pen near the glass, touching or hovering, somewhere; now and then the eraser end.
    mutating func penTouch(_ touching: Bool) -> PenReport {
        penNear = true
        return .near(PenSample(x: Double(int(0...1000)) / 1000, y: Double(int(0...1000)) / 1000,
                               pressure: touching ? Double(int(1...100)) / 100 : 0, tiltX: Double(int(-60...60)),
                               tiltY: Double(int(-60...60)), touching: touching, eraser: chance(10)))
    }
}
