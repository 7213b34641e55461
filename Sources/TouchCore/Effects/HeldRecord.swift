// One record of what the sender has pressed, touched, borrowed and shown, and one release of it all.

/// Everything the output holds or shows because of the current sender, as read from the actions the
/// Bridge sent out: buttons, keys, the extra fingers' buttons, real touches, native-touchpad contacts,
/// the tablet pen in proximity (touching, its barrel button held),
/// a borrowed keycode (`type`), strokes in progress, and the transient overlay items (the circles under
/// the fingers, the laser dot and its trail).
///
/// The Bridge hands it every action it emits (`observe`), so the record is what the output was asked to
/// do, whichever machine asked. Every end path (a lift's cancel, silence, the page gone or hidden,
/// `release`, a takeover, a mode switch, a settings change, shutdown) ends in `release`, which appends
/// the release of whatever is still recorded: the machines release what they know first, this catches
/// what they do not (a chord cut short, a machine's bookkeeping gone wrong).
///
/// Input is released at once. The transient overlay items may fade out first (the machines fade them):
/// `release` arms `sweepDeadline`, `sweepAfter` later, and `sweep` then removes whatever shown before
/// the release has not gone by itself. Drawings are deliberate and stay (their bound is the
/// `DrawingStore`'s).
///
/// ```
///  observe(action) ─► the record follows it (press ⇒ held, release ⇒ not; laser ⇒ shown, laserOff ⇒ not …)
///  release ─► releases of everything held, in reverse (keys last pressed first), the pen away (its tip
///             up, its buttons released, out of proximity), restoreKeymap if typed,
///             strokeEnded for strokes in progress; sweepDeadline = now + sweepAfter if anything is shown
///  sweep(now ≥ sweepDeadline) ─► touchGone / laserOff for what was shown before the release and still is
/// ```
///
/// Fixed size: allocates nothing (up to `maxKeys` keys held at once; a chord longer than that is
/// recorded up to the limit and the rest released at once by the Bridge's chord check).
public struct HeldRecord: Sendable {
    /// How long after a release the transient items it left are swept: 1 s, longer than every fade
    /// (`VisibleTouches.fadeOut` and `LaserDot.fadeOut`, 300 ms).
    public static let sweepAfter = Interval.seconds(1)
    /// The most keys recorded held at once (a chord has at most 8: `KeyChord`).
    public static let maxKeys = 16

    /// Bit n: pointer button n held.
    public private(set) var buttons: UInt32 = 0
    /// Keys held, in press order.
    private var keys: InlineArray<16, KeySym> = InlineArray(repeating: KeySym(rawValue: 0))
    public private(set) var keyCount = 0
    /// Bit n of entry f-2: button n of extra finger f held.
    private var fingerButtons: InlineArray<9, UInt32> = InlineArray(repeating: 0)
    /// Bit s: a real touch in slot s is down; `touchAt[s]` is its last pixel.
    public private(set) var touches: UInt16 = 0
    private var touchAt: InlineArray<10, PixelPoint> = InlineArray(repeating: PixelPoint(x: 0, y: 0))
    /// Bit s: a native-touchpad contact in slot s is down.
    public private(set) var padContacts: UInt16 = 0
    /// The tablet pen's last state while it is in proximity (its tip, barrel button and tool), nil when
    /// it is away.
    public private(set) var pen: PenFrame?
    /// Whether a `type` may have borrowed a keycode since the last `restoreKeymap`.
    public private(set) var typed = false
    /// Bit s: the stroke of slot s is in progress; `strokeIDs[s]`: which stroke it is.
    public private(set) var strokes: UInt16 = 0
    private var strokeIDs: InlineArray<11, StrokeID> = InlineArray(repeating: StrokeID(rawValue: 0))
    /// Bit s: the circle of slot s is shown; `circleEpoch[s]`: the `epoch` it was last shown in.
    public private(set) var circles: UInt16 = 0
    private var circleEpoch: InlineArray<10, UInt64> = InlineArray(repeating: 0)
    /// Whether the laser dot (or its trail) is shown, and the `epoch` it was last shown in.
    public private(set) var laser = false
    private var laserEpoch: UInt64 = 0
    /// How many releases there have been: what is shown before a release is swept after it, what is
    /// shown since (a new touch, even at the same instant) is not.
    private var epoch: UInt64 = 0
    /// The latest time seen (actions carry none: the Bridge passes the input's time).
    private var now = Instant(nanoseconds: 0)
    /// When the transient items a release left are swept, if any are.
    public private(set) var sweepDeadline: Instant?
    /// How many items a sweep had to remove: the machines fade what they show, so this stays 0 unless a
    /// machine lost track of something (the random-sequence test checks it).
    public private(set) var swept = 0

    public init() {}

    /// Whether anything is held (input: buttons, keys, finger buttons, touches, contacts, the pen near).
    public var holdsInput: Bool {
        if buttons != 0 || keyCount != 0 || touches != 0 || padContacts != 0 || pen != nil { return true }
        for i in 0..<9 where fingerButtons[i] != 0 { return true }
        return false
    }

    /// Whether a transient overlay item is shown (a circle, the laser dot or trail).
    public var showsTransient: Bool { circles != 0 || laser }

    /// Whether a key carrying `keysym` is recorded held.
    public func holds(_ keysym: KeySym) -> Bool {
        for i in 0..<keyCount where keys[i] == keysym { return true }
        return false
    }

    /// Follows one action the Bridge sent out at `time`.
    public mutating func observe(_ action: OutputAction, at time: Instant) {
        now = max(now, time)
        switch action {
        case .button(let b, let pressed):
            let bit = UInt32(1) << UInt32(b.rawValue & 31)
            if pressed { buttons |= bit } else { buttons &= ~bit }
        case .key(let k, let pressed):
            if pressed {
                if !holds(k) && keyCount < Self.maxKeys { keys[keyCount] = k; keyCount += 1 }
            } else if let i = (0..<keyCount).first(where: { keys[$0] == k }) {
                for j in i..<(keyCount - 1) { keys[j] = keys[j + 1] }
                keyCount -= 1
            }
        case .type:
            typed = true
        case .restoreKeymap:
            typed = false
        case .extraPointerButton(let f, let b, let pressed):
            let i = Int(f.rawValue) - 2
            guard i >= 0 && i < 9 else { return }
            let bit = UInt32(1) << UInt32(b.rawValue & 31)
            if pressed { fingerButtons[i] |= bit } else { fingerButtons[i] &= ~bit }
        case .touch(let slot, let phase, let p):
            guard slot < 10 else { return }
            let bit = UInt16(1) << UInt16(slot)
            switch phase {
            case .began, .moved: touches |= bit; touchAt[Int(slot)] = p
            case .ended, .cancelled: touches &= ~bit
            }
        case .padContact(let change):
            guard change.slot < 10 else { return }
            let bit = UInt16(1) << UInt16(change.slot)
            switch change {
            case .began, .moved: padContacts |= bit
            case .ended, .cancelled: padContacts &= ~bit
            }
        case .pen(.at(let frame)):
            pen = frame
        case .pen(.away):
            pen = nil
        case .overlay(let o):
            observe(o)
        case .moveTo, .moveBy, .extraPointerMove, .smoothScroll:
            break
        }
    }

    private mutating func observe(_ o: OverlayAction) {
        switch o {
        case .touch(let slot, _, let alpha):
            guard slot < 10 else { return }
            circles |= UInt16(1) << UInt16(slot)
            // Full strength: a finger is on it now (a fade step is less, and is not a new showing).
            if alpha == 255 { circleEpoch[Int(slot)] = epoch }
        case .touchGone(let slot):
            guard slot < 10 else { return }
            circles &= ~(UInt16(1) << UInt16(slot))
        case .laser:
            laser = true
            laserEpoch = epoch
        case .laserOff:
            laser = false
        case .strokeBegan(let id, let slot, _):
            guard slot <= DrawingStore.penSlot else { return }
            strokes |= UInt16(1) << UInt16(slot)
            strokeIDs[Int(slot)] = id
        case .strokeEnded(let id):
            for s in 0...Int(DrawingStore.penSlot) where strokes & (UInt16(1) << UInt16(s)) != 0 && strokeIDs[s] == id {
                strokes &= ~(UInt16(1) << UInt16(s))
            }
        case .remove:
            // The window goes with everything on it.
            circles = 0
            laser = false
            strokes = 0
        case .cover, .laserAlpha, .laserTrim, .clearDrawings, .strokeTo, .strokeGone, .strokeWidth:
            break
        }
    }

    /// Appends the release of everything still held, and ends the strokes in progress; arms the sweep of
    /// the transient items shown. The appended actions are observed too.
    public mutating func release(at time: Instant, into actions: inout [OutputAction]) {
        now = max(now, time)
        let from = actions.count
        for n in UInt8(1)...31 where buttons & (UInt32(1) << UInt32(n)) != 0 {
            actions.append(.button(PointerButton(rawValue: n), pressed: false))
        }
        var i = keyCount
        while i > 0 { i -= 1; actions.append(.key(keys[i], pressed: false)) }
        for f in 0..<9 where fingerButtons[f] != 0 {
            for n in UInt8(1)...31 where fingerButtons[f] & (UInt32(1) << UInt32(n)) != 0 {
                actions.append(.extraPointerButton(FingerPointer(rawValue: UInt8(f + 2)), PointerButton(rawValue: n), pressed: false))
            }
        }
        for s in 0..<10 where touches & (UInt16(1) << UInt16(s)) != 0 {
            actions.append(.touch(slot: UInt8(s), phase: .cancelled, at: touchAt[s]))
        }
        for s in 0..<10 where padContacts & (UInt16(1) << UInt16(s)) != 0 {
            actions.append(.padContact(.cancelled(slot: UInt8(s))))
        }
        if pen != nil { actions.append(.pen(.away)) }
        if typed { actions.append(.restoreKeymap) }
        for s in 0...Int(DrawingStore.penSlot) where strokes & (UInt16(1) << UInt16(s)) != 0 {
            actions.append(.overlay(.strokeEnded(strokeIDs[s])))
        }
        for j in from..<actions.count { observe(actions[j], at: now) }
        epoch &+= 1
        sweepDeadline = showsTransient ? now + Self.sweepAfter : nil
    }

    /// At `sweepDeadline`: removes the transient items shown before the last release that have not gone
    /// (shown again since, they belong to a new touch and stay). Early calls do nothing.
    public mutating func sweep(at time: Instant, into actions: inout [OutputAction]) {
        now = max(now, time)
        guard let d = sweepDeadline, now >= d else { return }
        sweepDeadline = nil
        for s in 0..<10 where circles & (UInt16(1) << UInt16(s)) != 0 && circleEpoch[s] < epoch {
            actions.append(.overlay(.touchGone(slot: UInt8(s))))
            circles &= ~(UInt16(1) << UInt16(s))
            swept += 1
        }
        if laser && laserEpoch < epoch {
            actions.append(.overlay(.laserOff))
            laser = false
            swept += 1
        }
    }
}
