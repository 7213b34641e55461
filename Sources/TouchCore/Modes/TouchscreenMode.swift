// Absolute mode: the phone is the screen; the first finger is the main pointer's left button, and with
// multi-pointer output every other finger is the left button of its own pointer.

/// The phone as a touchscreen.
///
/// Each pointer the mode drives is a small state machine. Pointer 1 is the main pointer (plain
/// `moveTo` and `button` actions); with `multitouch`, pointers 2...10 are the extra fingers' own
/// pointers (`extraPointerMove` and `extraPointerButton` actions on `FingerPointer(n)`):
///
/// ```
///                 began(s, p) / move to px, press left
///   ┌──────┐ ─────────────────────────────────────────► ┌────────────────┐ ─┐ moved(s, q) / move to qx
///   │ idle │                                            │ pressed(s, px) │ ◄┘ (same pixel: nothing)
///   └──────┘ ◄───────────────────────────────────────── └────────────────┘
///                 ended(s), cancelled(s), releaseAll / release left
/// ```
///
/// A `began` goes to the lowest-numbered idle pointer; when every pointer the mode drives is pressed
/// (without `multitouch` there is only pointer 1), the new finger is ignored for its whole life. Fingers
/// that were ignored stay ignored when a pointer becomes idle: the next *new* finger takes it. So without
/// `multitouch` the first finger is the primary and the others are ignored; with it, the phone's fingers
/// and the pointers correspond one to one, ten at most.
///
/// A cancelled touch releases the button without any extra click: the press was already sent at `began`
/// (an output cannot take a press back), so the cancel produces only the release, where the pointer is.
///
/// Allocates nothing: the pointer states are an inline array, actions go to the caller's buffer.
public struct TouchscreenMode: Sendable {
    /// How many pointers multi-pointer output drives: the main pointer and nine extra ones.
    public static let maxPointers = 10

    /// Where one pointer is.
    private enum State: Equatable, Sendable {
        /// No finger on this pointer; its left button is up.
        case idle
        /// The finger in `slot` drives this pointer: the left button is held and the pointer was last
        /// moved to `pixel`.
        case pressed(slot: UInt8, pixel: PixelPoint)
    }

    /// Index 0 is the main pointer, index n the pointer of finger n + 1.
    private var pointers: InlineArray<10, State>
    /// How many entries of `pointers` are used: 1, or 10 with `multitouch`.
    private let pointerCount: Int
    /// Where device points land on the screen.
    public private(set) var mapping: ScreenMapping
    /// With real touches (`touches`): where each slot's finger last was, nil when it is up.
    private var touchPixels: InlineArray<10, PixelPoint?>
    /// Whether every finger is a real touch (`OutputAction.touch`) instead of a pointer.
    public let touches: Bool

    /// An idle mode that maps touches with `mapping`; with `multitouch`, fingers beyond the first drive
    /// their own pointers (`extraPointerMove`/`extraPointerButton`) instead of being ignored.
    /// With `touches`, every finger (slots 0...9) is a real touch instead: `.touch` actions only, no
    /// pointer state (the display server emulates the pointer from the first touch).
    public init(mapping: ScreenMapping, multitouch: Bool = false, touches: Bool = false) {
        self.mapping = mapping
        pointers = InlineArray(repeating: .idle)
        pointerCount = multitouch ? Self.maxPointers : 1
        touchPixels = InlineArray(repeating: nil)
        self.touches = touches
    }

    /// Whether fingers beyond the first drive their own pointers.
    public var multitouch: Bool { pointerCount > 1 }

    /// Whether the mode holds any left button.
    public var isPressed: Bool {
        for i in 0..<pointerCount where pointers[i] != .idle { return true }
        for i in 0..<10 where touchPixels[i] != nil { return true }
        return false
    }

    /// The slot of the finger on the main pointer, when one is down.
    public var primarySlot: UInt8? { slot(onPointer: 1) }

    /// The slot of the finger driving pointer `n` (1 is the main pointer, 2...10 the extra fingers'), or nil.
    public func slot(onPointer n: Int) -> UInt8? {
        guard n >= 1 && n <= pointerCount, case .pressed(let slot, _) = pointers[n - 1] else { return nil }
        return slot
    }

    /// Changes the mapping for the moves that follow (the pointers are not moved now).
    public mutating func setMapping(_ mapping: ScreenMapping) {
        self.mapping = mapping
    }

    /// Feeds one contact change; appends the pointer actions it causes to `actions`.
    public mutating func handle(_ change: ContactChange, at now: Instant, into actions: inout [OutputAction]) {
        if touches {
            handleTouch(change, into: &actions)
            return
        }
        if let i = pointerIndex(of: change.slot) {
            guard case .pressed(let slot, let last) = pointers[i] else { return }
            switch change {
            case .moved(_, let point), .began(_, let point):
                // `began` for a slot that is still pressed cannot come from `ContactTracker` (it ends a
                // slot before it begins again); if it does, the finger is at `point`: treat it as a move.
                let pixel = mapping.pixel(for: point)
                if pixel != last {
                    appendMove(pointer: i, to: pixel, into: &actions)
                    pointers[i] = .pressed(slot: slot, pixel: pixel)
                }
            case .ended, .cancelled:
                appendButton(pointer: i, pressed: false, into: &actions)
                pointers[i] = .idle
            }
        } else if case .began(let slot, let point) = change, let i = firstIdlePointer() {
            let pixel = mapping.pixel(for: point)
            appendMove(pointer: i, to: pixel, into: &actions)
            appendButton(pointer: i, pressed: true, into: &actions)
            pointers[i] = .pressed(slot: slot, pixel: pixel)
        }
    }

    /// Releases every left button held, main pointer first, and forgets the fingers (their later moves
    /// are ignored; the next new finger takes the lowest idle pointer).
    public mutating func releaseAll(into actions: inout [OutputAction]) {
        for s in 0..<10 {
            guard let last = touchPixels[s] else { continue }
            actions.append(.touch(slot: UInt8(s), phase: .cancelled, at: last))
            touchPixels[s] = nil
        }
        for i in 0..<pointerCount where pointers[i] != .idle {
            appendButton(pointer: i, pressed: false, into: &actions)
            pointers[i] = .idle
        }
    }

    /// Real touches: one `.touch` per change, a move only when the pixel changed.
    private mutating func handleTouch(_ change: ContactChange, into actions: inout [OutputAction]) {
        let s = Int(change.slot)
        guard s < 10 else { return }
        switch change {
        case .began(let slot, let point), .moved(let slot, let point):
            let pixel = mapping.pixel(for: point)
            if let last = touchPixels[s] {
                if pixel != last { actions.append(.touch(slot: slot, phase: .moved, at: pixel)) }
            } else if case .began = change {
                actions.append(.touch(slot: slot, phase: .began, at: pixel))
            } else {
                return  // a move of a finger that never began here
            }
            touchPixels[s] = pixel
        case .ended(let slot), .cancelled(let slot):
            guard let last = touchPixels[s] else { return }
            let phase: TouchPhase
            if case .ended = change { phase = .ended } else { phase = .cancelled }
            actions.append(.touch(slot: slot, phase: phase, at: last))
            touchPixels[s] = nil
        }
    }

    // Both read `pointers` through its span: subscripting the InlineArray of a machine that lives in
    // `ModeStorage` (a class, before the mode protocol) copied all ten states first, on every change (`make bench`).
    private func pointerIndex(of slot: UInt8) -> Int? {
        let pointers = self.pointers.span
        for i in 0..<pointerCount {
            if case .pressed(let s, _) = pointers[i], s == slot { return i }
        }
        return nil
    }

    private func firstIdlePointer() -> Int? {
        let pointers = self.pointers.span
        for i in 0..<pointerCount where pointers[i] == .idle { return i }
        return nil
    }

    private func appendMove(pointer i: Int, to pixel: PixelPoint, into actions: inout [OutputAction]) {
        if i == 0 {
            actions.append(.moveTo(pixel))
        } else {
            actions.append(.extraPointerMove(FingerPointer(rawValue: UInt8(truncatingIfNeeded: i + 1)), pixel))
        }
    }

    private func appendButton(pointer i: Int, pressed: Bool, into actions: inout [OutputAction]) {
        if i == 0 {
            actions.append(.button(.left, pressed: pressed))
        } else {
            actions.append(.extraPointerButton(FingerPointer(rawValue: UInt8(truncatingIfNeeded: i + 1)), .left, pressed: pressed))
        }
    }
}
