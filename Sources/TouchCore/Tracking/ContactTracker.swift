// Contacts from packets: the `Touches` events first, then the `TouchState` snapshot to recover lost events.

/// Follows the ten touch slots of the phone and turns each packet into `ContactChange`s.
///
/// Each slot is a tiny state machine:
///
/// ```
///            position p / began(p)
///   ┌──────┐ ───────────────────────────► ┌───────────┐ ─┐ position q ≠ p / moved(q)
///   │ free │                              │ active(p) │ ◄┘ (q == p: nothing)
///   └──────┘ ◄─────────────────────────── └───────────┘
///            ended / ended, cancelled / cancelled, cancelAll / cancelled
/// ```
///
/// ended or cancelled on a free slot does nothing, so every `began` is followed by exactly one `ended` or
/// `cancelled` before that slot begins again.
///
/// A finger the daemon cancelled while it was still on the glass (`cancelAll(keepingCancelled: true)`:
/// the page's `release`, a settings change, a mode switch) stays cancelled until it lifts: its slot is
/// `suppressed`, its moves change nothing, another such cancel (a mode round trip, a second `release`)
/// leaves it suppressed, and only its end (an `ended` or `cancelled` event, or the
/// state showing the slot free or cancelled) frees the slot. So the rest of that touch never becomes a
/// new, short touch (a tap). `forgetSuppressed` frees such slots when the phone was silent long enough
/// that their end must have been lost.
///
/// ```
///   active ──cancelAll(keepingCancelled)──► suppressed / cancelled
///   suppressed ──position, cancelAll(keepingCancelled)──► suppressed (nothing)
///   suppressed ──cancelAll (a new sender, shutdown)──► free (nothing)
///   suppressed ──ended, cancelled, state free or cancelled, forgetSuppressed──► free (nothing)
/// ```
///
/// ## One packet
/// 1. The `events` are applied in order (several events for one slot in one packet are normal).
/// 2. Then, when the packet has a `TouchState`, it reconciles **the slots this packet's events did not
///    mention**:
///    - state `free`, slot active → `ended` (the "ended" event was in a lost packet; a finger never stays down);
///    - state `cancelled`, slot active → `cancelled`;
///    - state `down(p)`, slot free → `began(p)` (the first event was lost);
///    - state `down(p)`, slot active at another point → `moved(p)` (moves were lost).
///
/// **Rule: within one packet, the events are authoritative for the slots they mention.** The events are
/// the complete, ordered record of what happened to a slot since the previous packet, so for such a slot
/// the snapshot can only agree with the last event or be stale. Letting a stale snapshot win would
/// resurrect a finger the events just ended (a phantom press that lasts until the next packet), end a
/// finger the events just began (a spurious click), or jump a finger back to an older point. The snapshot
/// is used for what it is good at: slots whose events were lost in *earlier* packets, which the events
/// of this packet therefore do not mention.
///
/// Known limit: if the "ended" of a finger is lost and the next finger takes the same slot before the
/// following packet, the events show only a new position for that slot, so it reads as a move of the old
/// contact (nothing in the stream tells the two fingers apart).
///
/// Events for slots outside 0...9 are ignored (the decoder should not produce them).
public struct ContactTracker: Sendable {
    /// The number of slots, 0...9.
    public static let slotCount = TouchState.slotCount

    /// The state of one slot.
    private enum Slot: Equatable, Sendable {
        /// No finger in this slot.
        case free
        /// A finger is down at this point (the last point reported).
        case active(DevicePoint)
        /// A finger the daemon cancelled is still down: ignored until it lifts.
        case suppressed
    }

    private var slots: InlineArray<10, Slot>

    /// A tracker with every slot free.
    public init() {
        slots = InlineArray(repeating: .free)
    }

    /// Whether any slot has a finger down.
    public var hasContacts: Bool {
        for i in 0..<Self.slotCount where slots[i] != .free && slots[i] != .suppressed { return true }
        return false
    }

    /// The number of fingers down (a cancelled finger still on the glass is not one).
    public var contactCount: Int {
        var n = 0
        for i in 0..<Self.slotCount where slots[i] != .free && slots[i] != .suppressed { n += 1 }
        return n
    }

    /// Whether a cancelled finger is still on the glass (its slot ignored until it lifts).
    public var hasSuppressed: Bool {
        for i in 0..<Self.slotCount where slots[i] == .suppressed { return true }
        return false
    }

    /// The last known point of the finger in `slot`, or nil when the slot is free (or out of range).
    public func point(ofSlot slot: UInt8) -> DevicePoint? {
        guard Int(slot) < Self.slotCount, case .active(let p) = slots[Int(slot)] else { return nil }
        return p
    }

    /// Applies one packet: its events in order, then its `TouchState` (see the type's documentation for
    /// the rule). Appends the resulting changes to `changes`; allocates nothing once `changes` has capacity.
    /// - Parameter now: the time the packet arrived (unused for now; part of every component's signature).
    public mutating func handle(_ packet: TouchPacket, at now: Instant, into changes: inout [ContactChange]) {
        // Bit s set: this packet's events mention slot s.
        var mentioned: UInt16 = 0
        // Indices, not `for event in`: unoptimised builds call the generic iterator, which allocates.
        for i in packet.events.indices {
            let event = packet.events[i]
            let s = Int(event.slot)
            guard s < Self.slotCount else { continue }
            mentioned |= 1 << s
            switch event.update {
            case .position(let p):
                setPoint(p, slot: event.slot, into: &changes)
            case .ended:
                if case .active = slots[s] { changes.append(.ended(slot: event.slot)) }
                slots[s] = .free
            case .cancelled:
                cancel(slot: event.slot, into: &changes)
            }
        }

        guard let state = packet.state else { return }
        for s in 0..<Self.slotCount where mentioned & (1 << s) == 0 {
            let slot = UInt8(truncatingIfNeeded: s)
            switch state[s] {
            case .free:
                if case .active = slots[s] { changes.append(.ended(slot: slot)) }
                slots[s] = .free
            case .cancelled:
                cancel(slot: slot, into: &changes)
            case .down(let p):
                setPoint(p, slot: slot, into: &changes)
            }
        }
    }

    /// Cancels every finger that is down (silence watchdog, shutdown, change of sender): one `cancelled`
    /// per active slot, lowest slot first.
    /// With `keepingCancelled`, each finger stays cancelled until it lifts (its slot is suppressed).
    /// A slot already suppressed stays so with `keepingCancelled` (a second release, a mode round trip:
    /// the finger has still not lifted), and is freed without it.
    public mutating func cancelAll(keepingCancelled: Bool = false, into changes: inout [ContactChange]) {
        for s in 0..<Self.slotCount {
            switch slots[s] {
            case .active:
                changes.append(.cancelled(slot: UInt8(truncatingIfNeeded: s)))
                slots[s] = keepingCancelled ? .suppressed : .free
            case .suppressed:
                if !keepingCancelled { slots[s] = .free }
            case .free:
                break
            }
        }
    }

    /// Frees every suppressed slot (the phone was silent for so long that those fingers' ends were lost).
    public mutating func forgetSuppressed() {
        for s in 0..<Self.slotCount where slots[s] == .suppressed { slots[s] = .free }
    }

    /// The finger in `slot` is at `p`: begins a free slot, moves an active one (nothing if unchanged).
    private mutating func setPoint(_ p: DevicePoint, slot: UInt8, into changes: inout [ContactChange]) {
        let s = Int(slot)
        switch slots[s] {
        case .free:
            slots[s] = .active(p)
            changes.append(.began(slot: slot, at: p))
        case .active(let old):
            if old != p {
                slots[s] = .active(p)
                changes.append(.moved(slot: slot, to: p))
            }
        case .suppressed:
            break
        }
    }

    private mutating func cancel(slot: UInt8, into changes: inout [ContactChange]) {
        let s = Int(slot)
        if case .active = slots[s] { changes.append(.cancelled(slot: slot)) }
        slots[s] = .free
    }
}
