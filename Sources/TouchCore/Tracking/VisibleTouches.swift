// Visible touches (`--show-touches`): a circle under every finger, fading out when it lifts.

/// Decides what the overlay shows for each finger: the circle's pixel and opacity per slot. It gets the
/// tracker's changes with their pixels (through the absolute mapping, in any mode) and returns overlay
/// actions; the desktop's overlay draws them.
///
/// ```
///   hidden ──began──► down(p) / show(slot, p, 255)
///   down ──moved──► down(p') / show(slot, p', 255)
///   down ──ended, cancelled──► fading(p, since now) / show(slot, p, 255 → 0 over fadeOut)
///   fading ──tick (every fadeTick)──► fading / show(slot, p, α)  … α reaches 0 ──► hidden / hide(slot)
///   fading ──began──► down(p) / show(slot, p, 255)
/// ```
///
/// Only while a circle fades is there a deadline (one tick per `fadeTick`); the idle daemon has none.
/// A finger that goes silent is cancelled by the core's watchdog, so its circle fades too: no circle
/// outlives its finger by more than `fadeOut`. Allocates nothing per call.
public struct VisibleTouches: Sendable {
    /// How long a lifted finger's circle takes to fade out: 300 ms (Touchposé's fade is 0.3–0.5 s).
    public static let fadeOut = Interval.milliseconds(300)
    /// One fade step every 33 ms (30 frames per second: smooth for a fade, cheap to draw).
    public static let fadeTick = Interval.milliseconds(33)

    private enum Circle: Equatable, Sendable {
        case hidden
        case down(PixelPoint)
        case fading(PixelPoint, since: Instant, next: Instant)
    }

    private var circles: InlineArray<10, Circle> = InlineArray(repeating: .hidden)
    private var fadingCount = 0

    public init() {}

    /// The next fade tick, while a circle fades.
    public var deadline: Instant? {
        guard fadingCount > 0 else { return nil }
        var next: Instant? = nil
        for i in 0..<10 {
            if case .fading(_, _, let n) = circles[i] { next = next.map { min($0, n) } ?? n }
        }
        return next
    }

    /// One contact change; `pixel` is where its point lands (nil for ended and cancelled).
    public mutating func handle(_ change: ContactChange, pixel: PixelPoint?, at now: Instant,
                                into actions: inout [OutputAction]) {
        let s = Int(change.slot)
        guard s < 10 else { return }
        switch change {
        case .began, .moved:
            guard let pixel else { return }
            if case .fading = circles[s] { fadingCount -= 1 }
            if circles[s] == .down(pixel) { return }
            circles[s] = .down(pixel)
            actions.append(.overlay(.touch(slot: change.slot, at: pixel, alpha: 255)))
        case .ended, .cancelled:
            guard case .down(let p) = circles[s] else { return }
            circles[s] = .fading(p, since: now, next: now + Self.fadeTick)
            fadingCount += 1
        }
    }

    /// A fade tick at `now`: each fading circle's opacity falls linearly to 0 over `fadeOut`, then it goes.
    public mutating func handleTimer(at now: Instant, into actions: inout [OutputAction]) {
        guard fadingCount > 0 else { return }
        for i in 0..<10 {
            guard case .fading(let p, let since, let next) = circles[i], now >= next else { continue }
            let elapsed = now - since
            if elapsed >= Self.fadeOut {
                circles[i] = .hidden
                fadingCount -= 1
                actions.append(.overlay(.touchGone(slot: UInt8(i))))
            } else {
                let left = Self.fadeOut.nanoseconds - elapsed.nanoseconds
                let alpha = UInt8(min(255, left * 255 / Self.fadeOut.nanoseconds))
                circles[i] = .fading(p, since: since, next: now + Self.fadeTick)
                actions.append(.overlay(.touch(slot: UInt8(i), at: p, alpha: alpha)))
            }
        }
    }
}
