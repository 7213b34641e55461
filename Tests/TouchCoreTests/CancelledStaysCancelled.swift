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
/// - a release while the same sender continues (its `release`, a mode switch, a setting, the silence
///   watchdog) cancels every finger and pen still down: each stays cancelled until it ends;
/// - silence is an end: a cancelled finger is forgotten when no packet came for `idleRelease`, a cancelled
///   pen when no pen report came for it (both streams repeat themselves every 100 ms while down);
/// - a new sender (first, after a takeover, after the old one went, after a restart) starts from nothing.
///
/// Checked on each step: a packet that leaves only cancelled fingers down, before, during and after it, makes
/// nothing but releases; a `pen touch` of a cancelled pen makes nothing but releases; a `pen touch` of a
/// pen that is up presses (pen mode) or begins a stroke (presenter mode, not the eraser).
struct CancelModel {
    enum Contact: Equatable { case free, live, cancelled }

    var slots = [Contact](repeating: .free, count: 10)
    var pen = Contact.free
    var sender: SourceAddress?
    /// When the Bridge last handled a packet (not a hello) and a pen report, in ms.
    var lastPacket: UInt64?
    var lastPen: UInt64?
    var releases = 0

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
        let newSender = bridge.sender != sender
        sender = bridge.sender
        if newSender { reset() }
        func admitted(_ s: Int) -> Bool { bridge.sender == sources[s] }

        switch input {
        case .packet(let p, let s, _) where admitted(s) && !p.isHello:
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
            if pen == .cancelled, let last = lastPen, now - last >= idle { pen = .free }
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
        case .command(.release, _), .command(.mode, _), .command(.tune, _), .advance:
            // The same sender continues: what is down stays cancelled until it ends.
            if released && !newSender {
                for i in 0..<10 where slots[i] == .live { slots[i] = .cancelled }
                if pen == .live { pen = .cancelled }
            }
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
        }
        move()
        for _ in 0..<int(1...5) {
            switch int(0...9) {
            case 0...3:
                // A round trip: away to another mode and back.
                out.append(.command(.mode(TouchMode.allCases.randomElement(using: &rng)!), source: s))
                if chance(50) { move() }
                out.append(.command(.mode(start), source: s))
            case 4: out.append(.command(.release, source: s))
            case 5: out.append(.command(.tune(.tapToClick(chance(50))), source: s))
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
