// What a keyboard that speaks evdev codes (the uinput keyboard) presses for the Bridge's `.key` actions,
// by the desktop's keymap: pure bookkeeping, no I/O.

/// The keys a keyboard holds for the Bridge's `.key(keysym, pressed)` actions, and the evdev events
/// each action becomes by a `Keymap`:
///
/// - a press is the key that produces the keysym, with Shift and/or the third-level shift (AltGr)
///   pressed just before it when its shift level needs them, unless a key already held (the chord's
///   own `Shift_L`, or one this keyboard added for an earlier key) holds them;
/// - a release lets that key go, then the modifiers its press added, once no other held key needs them;
/// - the keymap may change while keys are held: a release goes to the key the press went to.
///
/// A keysym no key produces is not pressed (`press` returns false): the caller hands it elsewhere.
public struct KeyPresses: Sendable {
    /// One keysym held, the key it went to and the modifier keys its press added (nil: none added).
    public struct Held: Hashable, Sendable {
        public var keysym: KeySym
        public var evdevCode: UInt16
        public var addedShift: UInt16?
        public var addedLevelThree: UInt16?
    }

    /// An evdev key event: the code and whether it is a press.
    public struct Event: Hashable, Sendable {
        public var code: UInt16
        public var pressed: Bool
        public init(_ code: UInt16, _ pressed: Bool) {
            self.code = code
            self.pressed = pressed
        }
    }

    /// The keysyms held now, in press order.
    public private(set) var held: [Held] = []

    public init() { held.reserveCapacity(16) }

    /// Whether `keysym` is held (pressed and not yet released).
    public func holds(_ keysym: KeySym) -> Bool { held.contains { $0.keysym == keysym } }

    /// Every evdev code held now (keys and the modifiers added for them), in press order.
    public var codes: [UInt16] {
        var codes: [UInt16] = []
        for h in held {
            for c in [h.addedShift, h.addedLevelThree, h.evdevCode] {
                if let c, !codes.contains(c) { codes.append(c) }
            }
        }
        return codes
    }

    private func holdsShift() -> Bool {
        held.contains { $0.keysym == .shiftL || $0.keysym == .shiftR || $0.addedShift != nil }
    }

    private func holdsLevelThree() -> Bool {
        held.contains { $0.keysym == .isoLevel3Shift || $0.addedLevelThree != nil }
    }

    /// Appends to `events` what pressing (`pressed`) or releasing `keysym` takes. Returns false (and
    /// appends nothing) when `keysym` is to be pressed and no key of `keymap` produces it. Pressing a
    /// keysym already held, or releasing one not held, appends nothing.
    @discardableResult
    public mutating func key(_ keysym: KeySym, pressed: Bool, keymap: Keymap, into events: inout [Event]) -> Bool {
        if pressed {
            if holds(keysym) { return true }
            guard let p = keymap.position(of: keysym) else { return false }
            var h = Held(keysym: keysym, evdevCode: p.evdevCode)
            if p.shift, !holdsShift() {
                guard let shift = keymap.shiftKey else { return false }
                h.addedShift = shift
                events.append(Event(shift, true))
            }
            if p.levelThree, !holdsLevelThree() {
                guard let l3 = keymap.levelThreeKey else {
                    if let s = h.addedShift { events.append(Event(s, false)) }
                    return false
                }
                h.addedLevelThree = l3
                events.append(Event(l3, true))
            }
            events.append(Event(p.evdevCode, true))
            held.append(h)
            return true
        }
        guard let i = held.firstIndex(where: { $0.keysym == keysym }) else { return true }
        let h = held.remove(at: i)
        // Another held key on the same code (two keysyms of one key) keeps it down.
        if !held.contains(where: { $0.evdevCode == h.evdevCode }) { events.append(Event(h.evdevCode, false)) }
        // An added modifier another held key relied on passes to it instead of going up.
        if let l3 = h.addedLevelThree {
            if let j = held.firstIndex(where: { keymap.position(of: $0.keysym)?.levelThree == true && $0.addedLevelThree == nil }) {
                held[j].addedLevelThree = l3
            } else {
                events.append(Event(l3, false))
            }
        }
        if let s = h.addedShift {
            if let j = held.firstIndex(where: { keymap.position(of: $0.keysym)?.shift == true && $0.addedShift == nil }) {
                held[j].addedShift = s
            } else {
                events.append(Event(s, false))
            }
        }
        return true
    }

    /// Appends the release of every key held, last pressed first, each followed by the modifiers added
    /// for it; nothing is held afterwards.
    public mutating func releaseAll(into events: inout [Event]) {
        var up: [UInt16] = []
        for h in held.reversed() {
            for c in [h.evdevCode, h.addedLevelThree, h.addedShift] {
                if let c, !up.contains(c) { up.append(c) }
            }
        }
        for c in up { events.append(Event(c, false)) }
        held.removeAll(keepingCapacity: true)
    }
}
