// Absolute mode: the phone is the screen, one finger is the left button.

/// The phone as a touchscreen: the first finger moves the pointer to the point under it and holds the left
/// button; other fingers are ignored (multi-finger output is a later feature).
///
/// ```
///                 began(s, p) / moveTo(px), press left
///   ┌──────┐ ─────────────────────────────────────────► ┌────────────────┐ ─┐ moved(s, q) / moveTo(qx)
///   │ idle │                                            │ pressed(s, px) │ ◄┘ (same pixel: nothing)
///   └──────┘ ◄───────────────────────────────────────── └────────────────┘
///                 ended(s), cancelled(s), releaseAll / release left
/// ```
///
/// In `idle`, only `began` matters: fingers that were already down when the primary lifted stay ignored,
/// and the next *new* finger becomes the primary. Changes of other slots are ignored in `pressed`.
///
/// A cancelled touch releases the button without any extra click: the press was already sent at `began`
/// (XTest cannot take a press back), so the cancel produces only the release, where the pointer is.
public struct TouchscreenMode: Sendable {
    /// Where the mode is.
    private enum State: Equatable, Sendable {
        /// No primary finger; the left button is up.
        case idle
        /// The finger in `slot` is the primary: the left button is held and the pointer was last moved
        /// to `pixel`.
        case pressed(slot: UInt8, pixel: PixelPoint)
    }

    private var state: State = .idle
    /// Where device points land on the screen.
    public private(set) var mapping: ScreenMapping

    /// An idle mode that maps touches with `mapping`.
    public init(mapping: ScreenMapping) {
        self.mapping = mapping
    }

    /// Whether the mode holds the left button.
    public var isPressed: Bool { state != .idle }

    /// The slot of the primary finger, when one is down.
    public var primarySlot: UInt8? {
        if case .pressed(let slot, _) = state { return slot }
        return nil
    }

    /// Changes the mapping for the moves that follow (the pointer is not moved now).
    public mutating func setMapping(_ mapping: ScreenMapping) {
        self.mapping = mapping
    }

    /// Feeds one contact change; appends the pointer actions it causes to `actions`.
    public mutating func handle(_ change: ContactChange, at now: Instant, into actions: inout [OutputAction]) {
        switch state {
        case .idle:
            if case .began(let slot, let point) = change {
                let pixel = mapping.pixel(for: point)
                actions.append(.moveTo(pixel))
                actions.append(.button(.left, pressed: true))
                state = .pressed(slot: slot, pixel: pixel)
            }
        case .pressed(let primary, let last):
            guard change.slot == primary else { return }
            switch change {
            case .moved(_, let point), .began(_, let point):
                // `began` for a slot that is still pressed cannot come from `ContactTracker` (it ends a
                // slot before it begins again); if it does, the finger is at `point`: treat it as a move.
                let pixel = mapping.pixel(for: point)
                if pixel != last {
                    actions.append(.moveTo(pixel))
                    state = .pressed(slot: primary, pixel: pixel)
                }
            case .ended, .cancelled:
                actions.append(.button(.left, pressed: false))
                state = .idle
            }
        }
    }

    /// Releases the left button if it is held and forgets the primary finger (its later moves are
    /// ignored; the next new finger becomes the primary).
    public mutating func releaseAll(into actions: inout [OutputAction]) {
        if state != .idle {
            actions.append(.button(.left, pressed: false))
            state = .idle
        }
    }
}
