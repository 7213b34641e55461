// Motion smoothing: contact moves that arrive in bursts are played out on a steady tick.

/// `--smoothing`: whether bursty delivery is smoothed.
public enum MotionSmoothing: String, Hashable, Sendable, CaseIterable {
    /// Moves pass straight through while packets arrive evenly; when they come in bursts, they are
    /// played out on a steady tick (the default).
    case auto
    /// Every move is applied as it arrives.
    case off
}

/// What the smoother measured when it engaged or let go (logged at debug level).
public struct SmoothingReport: Hashable, Sendable {
    /// Whether it now plays moves out on the tick (true) or passes them straight through (false).
    public var engaged: Bool
    /// The longest wait for a packet beyond the send period, over the last `MotionSmoother.window`
    /// packets: 0 for perfectly even delivery, about 33 ms for 60 Hz packets released every 50 ms.
    public var jitter: Interval
    /// The send period inferred from the arrivals (the mean time between packets, pauses excluded).
    public var period: Interval
    /// How far behind the arrivals the moves are played out (while engaged).
    public var delay: Interval

    public init(engaged: Bool, jitter: Interval, period: Interval, delay: Interval) {
        self.engaged = engaged
        self.jitter = jitter
        self.period = period
        self.delay = delay
    }
}

/// Re-times the contacts' moves between the `ContactTracker` and the relative modes (touchpad pointer
/// and scrolling, the presenter's laser) so that packets a Wi-Fi link holds back and releases together
/// become steady motion instead of jumps.
///
/// **Where it sits.** Between the tracker and the mode, on `ContactChange`s: `began` always passes at
/// once and `ended` at once, each after every finger's queued moves, so every tap, its duration and its
/// motion are what the mode would see without smoothing; only `moved` is re-timed. One place serves the
/// pointer, the scroll and the laser, and the modes' own logic (acceleration, tap threshold, gestures)
/// is untouched. Touchscreen mode does not use it (the pointer must stay under the finger).
///
/// **What it measures.** The touch streams carry no send time (the PoseAI documentation describes only
/// `Touches`, `TouchState` and `Orientation`), so it infers the send period from the arrivals of the
/// packets while a finger is down (the phone sends one per frame, moving or not): the period is the mean
/// time between packets over the last `window` packets, gaps longer than `maxDelay` (a pause, not a
/// burst) excluded; the *jitter* is the longest wait beyond that period in the same window, and it counts
/// the packets that came *bunched* (less than a quarter period after the one before: held back and
/// released together). A gap without a bunch is a finger at rest, not a burst. Every finger
/// down arrives in the same packets, so one measurement serves all of them.
///
/// **How it plays out.** Each packet gets an estimated send time `ŝ = clamp(ŝ_prev + period,
/// arrival - delay, arrival)`, so the packets of a burst are spread back over the time they were held.
/// While engaged, a 120 Hz tick plays every finger along its received path at the time
/// `t - delay` (delay = jitter + period + `margin`, at most `maxDelay`): the burst's motion is spread
/// over the ticks and the recent velocity carries on across the gap. The play time moves at 0.75–1.25
/// times real time (no jumps when the delay changes) and never past the newest packet: the pointer never
/// goes beyond where the finger was, never moves backward, and the total motion is the finger's.
///
/// ```
///    jitter ≥ engageJitter and ≥ minimumBunched bunched, ≥ minimumHold since the last change / report engaged
///  ┌─────────────┐ ───────────────────────────────────────────────────────────► ┌────────────┐
///  │ passThrough │                                                              │ playingOut │ ─┐ tick: moves at t − delay
///  └─────────────┘ ◄─────────────────────────────────────────────────────────── └────────────┘ ◄┘
///    moves at once   jitter < releaseJitter or none bunched, nothing queued, ≥ minimumHold / report let go
///  any state: began, ended ─► every finger's queued moves at once, then the change (the count of fingers
///             decides what motion means); cancelled ─► its queue dropped, the others' handed on
/// ```
///
/// The tick is armed only while a finger has queued moves: an idle daemon, or an even stream, needs no
/// timer. Allocates nothing (fixed inline buffers).
public struct MotionSmoother: Sendable {
    /// The playout tick: 120 Hz, twice a 60 Hz display's frame rate.
    public static let tick = Interval(nanoseconds: 8_333_333)
    /// Jitter from which moves are played out: 12 ms (about three quarters of a 60 Hz packet period;
    /// loopback and a good Wi-Fi link stay well below it).
    public static let engageJitter = Interval.milliseconds(12)
    /// Jitter under which moves pass straight through again: 6 ms (hysteresis).
    public static let releaseJitter = Interval.milliseconds(6)
    /// The longest playout delay, and the longest gap taken for a burst rather than a pause: 150 ms.
    public static let maxDelay = Interval.milliseconds(150)
    /// Added to the delay so a tick that comes slightly before the next burst still has motion: 4 ms.
    public static let margin = Interval.milliseconds(4)
    /// The least time between two changes of state (so the debug line comes at most once a second): 1 s.
    public static let minimumHold = Interval.seconds(1)
    /// Packets the jitter and period are measured over: 32 (about half a second at 60 Hz).
    public static let window = 32
    /// Bunched packets (less than a quarter period apart) in the window needed to engage: 4. Held-back
    /// packets arrive together, a finger that rests (the web page sends nothing then) leaves a gap but
    /// no bunch: only bursts engage the smoother.
    public static let minimumBunched = 4
    /// Packet intervals needed before the smoother may engage: 5 (one burst of 100 ms at 60 Hz).
    public static let minimumIntervals = 5
    /// The send period assumed until it is measured: 16.7 ms (60 Hz, what phones send at).
    public static let assumedPeriod = Interval(nanoseconds: 16_666_667)
    /// Moves a finger can have queued: 16 (a full `maxDelay` at 100 Hz); a 17th plays the oldest at once.
    public static let queueLength = 16
    /// The play time's speed while it catches up with, or falls back to, `t - delay`: 0.75–1.25 × real time.
    static let slowest = 0.75, fastest = 1.25

    /// Whether moves are played out on the tick.
    public enum State: Equatable, Sendable {
        case passThrough
        case playingOut
    }

    private struct Sample: Sendable {
        /// Estimated send time, ns.
        var t: Double
        /// Raw device point.
        var x: Double, y: Double
        /// The packet it came in (counted), for the order across fingers: several packets can share a
        /// send time once it is capped at their arrival.
        var packet: UInt64 = 0
    }

    private struct Finger: Sendable {
        var active = false
        /// The last sample the play time reached (or the point the finger began at).
        var anchor = Sample(t: 0, x: 0, y: 0)
        /// The point last handed on.
        var last = DevicePoint(rawX: 0, rawY: 0)
        var queue: InlineArray<16, Sample> = InlineArray(repeating: Sample(t: 0, x: 0, y: 0))
        var head = 0, count = 0
    }

    public let setting: MotionSmoothing
    public private(set) var state = State.passThrough
    private var fingers: InlineArray<10, Finger> = InlineArray(repeating: Finger())
    /// The last packet intervals (ns), pauses excluded: a ring of `window`.
    private var intervals: InlineArray<32, Double> = InlineArray(repeating: 0)
    private var intervalCount = 0, intervalNext = 0
    /// The sum of the intervals in the ring, kept as they come and go: the intervals are whole
    /// nanoseconds well under 2^53, so the sum is exact and the same as adding them up again.
    private var intervalSum = 0.0
    private var lastArrival: Double? = nil
    /// The estimated send time of the newest packet, ns, and of the one before it.
    private var newestSend = 0.0, previousSend = 0.0
    /// Packets measured so far (numbers the samples).
    private var packets: UInt64 = 0
    /// The play time, ns: every queued move at or before it has been handed on.
    private var playTime = 0.0
    private var lastTick: Instant? = nil
    /// The next tick, while a finger has queued moves.
    public private(set) var deadline: Instant? = nil
    private var lastChange: Instant? = nil
    private var report: SmoothingReport? = nil

    public init(setting: MotionSmoothing) {
        self.setting = setting
    }

    // MARK: measurement

    // These only read, but are `mutating` so that they read the ring in place: a non-mutating
    // read of a stored InlineArray (or a call with a large `self`) copies it first, kilobytes per packet,
    // and a `mutableSpan` of it allocates.

    /// The measured intervals, in place.
    @inline(__always)
    private mutating func withIntervals<R>(_ body: (UnsafeBufferPointer<Double>) -> R) -> R {
        let count = intervalCount
        return withUnsafeMutablePointer(to: &intervals) { p in
            // An InlineArray is laid out as its elements, contiguously.
            body(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: Double.self), count: count))
        }
    }

    /// The send period inferred from the arrivals, ns (nil until `minimumIntervals` were seen).
    @inline(__always) private mutating func periodNS() -> Double? {
        guard intervalCount >= Self.minimumIntervals else { return nil }
        return intervalSum / Double(intervalCount)
    }

    /// The longest wait beyond the period in the window (as `jitterNS`), and how many packets of the
    /// window came bunched (less than a quarter period after the one before), in one pass.
    @inline(__always) private mutating func jitterAndBunched(period: Double) -> (jitter: Double, bunched: Int) {
        let (longest, n) = withIntervals { intervals in
            var longest = 0.0, n = 0
            for i in 0..<intervals.count {
                longest = max(longest, intervals[i])
                if intervals[i] < period / 4 { n += 1 }
            }
            return (longest, n)
        }
        return (max(0, longest - period), n)
    }

    /// The longest wait beyond the period in the window, ns.
    @inline(__always) private mutating func jitterNS(period: Double) -> Double {
        let longest = withIntervals { intervals in
            var longest = 0.0
            for i in 0..<intervals.count { longest = max(longest, intervals[i]) }
            return longest
        }
        return max(0, longest - period)
    }

    @inline(__always) private func delayNS(jitter: Double, period: Double) -> Double {
        min(jitter + period + Double(Self.margin.nanoseconds), Double(Self.maxDelay.nanoseconds))
    }

    /// The current measurement (zeros before `minimumIntervals` packets).
    public var measurement: SmoothingReport {
        var copy = self  // the helpers are mutating (see above); this getter is not on the packet path
        let p = copy.periodNS() ?? 0
        let j = copy.jitterNS(period: p)
        return SmoothingReport(engaged: state == .playingOut, jitter: Self.interval(j), period: Self.interval(p),
                               delay: state == .playingOut ? Self.interval(delayNS(jitter: j, period: p)) : Interval(nanoseconds: 0))
    }

    private static func interval(_ ns: Double) -> Interval { Interval(nanoseconds: UInt64(max(0, ns).rounded())) }

    /// The report of the last change of state, once (the core hands it to the shell's log).
    public mutating func takeReport() -> SmoothingReport? {
        defer { report = nil }
        return report
    }

    // MARK: inputs

    /// A packet arrived at `now` while fingers were down (before or after it): measures, estimates its
    /// send time, and engages or lets go.
    public mutating func arrive(at now: Instant) {
        let a = Double(now.nanoseconds)
        let p = periodNS()
        previousSend = newestSend
        packets &+= 1
        if let last = lastArrival, a - last <= Double(Self.maxDelay.nanoseconds) {
            if intervalCount == Self.window { intervalSum -= intervals[intervalNext] }
            intervals[intervalNext] = a - last
            intervalSum += a - last
            intervalNext = (intervalNext + 1) % Self.window
            intervalCount = min(intervalCount + 1, Self.window)
            // Before the period is known, a phone's usual 60 Hz.
            let period = p ?? Double(Self.assumedPeriod.nanoseconds)
            var d = Double(Self.maxDelay.nanoseconds)
            if let p { d = delayNS(jitter: jitterNS(period: p), period: p) }
            newestSend = max(newestSend, min(a, max(newestSend + period, a - d)))
        } else {
            // The first packet of a touch, or after a pause: sent now, as far as anyone can tell.
            newestSend = max(newestSend, a)
        }
        lastArrival = a
        guard setting == .auto, let period = periodNS() else { return }
        if let c = lastChange, now - c < Self.minimumHold { return }
        let (jitter, bunched) = jitterAndBunched(period: period)
        switch state {
        case .passThrough where jitter >= Double(Self.engageJitter.nanoseconds) && bunched >= Self.minimumBunched:
            state = .playingOut
            lastChange = now
            lastTick = nil
            report = measurement
        case .playingOut where (jitter < Double(Self.releaseJitter.nanoseconds) || bunched == 0) && !anyQueued:
            state = .passThrough
            lastChange = now
            report = SmoothingReport(engaged: false, jitter: Self.interval(jitter), period: Self.interval(period),
                                     delay: Interval(nanoseconds: 0))
        default:
            break
        }
    }

    /// One packet's changes, arrived at `now` while fingers were down (before or after it): measured
    /// (`arrive`), then each routed (`route`) into `out`, which is emptied first. The pipeline's one call
    /// per packet.
    public mutating func pass(_ changes: [ContactChange], at now: Instant, into out: inout [ContactChange]) {
        arrive(at: now)
        out.removeAll(keepingCapacity: true)
        for i in changes.indices { route(changes[i], at: now, into: &out) }
    }

    /// No finger is down: the next packet starts a new measurement interval (the idle time between
    /// touches is not a gap in the stream).
    public mutating func noContacts() { lastArrival = nil }

    /// Routes one change of the packet `arrive` measured: appended to `out` at once, or queued.
    public mutating func route(_ change: ContactChange, at now: Instant, into out: inout [ContactChange]) {
        let s = Int(change.slot)
        guard s < 10 else { return out.append(change) }
        switch change {
        case .began(_, let p):
            // The count of fingers changes what motion means (pointer, scroll, swipe): every move
            // queued before it is handed on first.
            flushAll(into: &out)
            updateDeadline()
            fingers[s].active = true
            fingers[s].count = 0
            fingers[s].head = 0
            fingers[s].anchor = Sample(t: newestSend, x: Double(p.rawX), y: Double(p.rawY))
            fingers[s].last = p
            out.append(change)
        case .moved(_, let p):
            guard fingers[s].active else { return out.append(change) }
            let sample = Sample(t: newestSend, x: Double(p.rawX), y: Double(p.rawY), packet: packets)
            if state == .passThrough && fingers[s].count == 0 {
                fingers[s].anchor = sample
                fingers[s].last = p
                playTime = max(playTime, newestSend)
                out.append(change)
                return
            }
            if fingers[s].count == Self.queueLength {
                // Full: the oldest plays now.
                let old = fingers[s].queue[fingers[s].head]
                handOn(s, old, into: &out)
                fingers[s].anchor = old
                fingers[s].head = (fingers[s].head + 1) % Self.queueLength
                fingers[s].count -= 1
            }
            if fingers[s].count == 0 {
                // The finger was at its anchor until the previous packet at least (it may have rested).
                fingers[s].anchor.t = max(fingers[s].anchor.t, previousSend)
            }
            fingers[s].queue[(fingers[s].head + fingers[s].count) % Self.queueLength] = sample
            fingers[s].count += 1
            if deadline == nil {
                // Nothing was queued: the play time was idle, it starts from the previous packet.
                playTime = max(playTime, previousSend)
                deadline = now + Self.tick
                if lastTick == nil || now - lastTick! > Self.tick { lastTick = now }
            }
        case .ended:
            // The lift: what the fingers did before it, at once, then the lift itself.
            flushAll(into: &out)
            fingers[s].active = false
            out.append(change)
            updateDeadline()
        case .cancelled:
            fingers[s].active = false
            fingers[s].count = 0
            flushAll(into: &out)
            out.append(change)
            updateDeadline()
        }
    }

    /// The tick: every finger moves along its received path to the play time.
    public mutating func tick(at now: Instant, into out: inout [ContactChange]) {
        guard let d = deadline, now >= d else { return }
        let period = periodNS() ?? Double(Self.tick.nanoseconds)
        let target = Double(now.nanoseconds) - delayNS(jitter: jitterNS(period: period), period: period)
        let elapsed = min(Double((now - (lastTick ?? now)).nanoseconds), Double(Self.maxDelay.nanoseconds) / 3)
        lastTick = now
        var t = min(max(target, playTime + Self.slowest * elapsed), playTime + Self.fastest * elapsed)
        t = max(playTime, min(t, newestSend))
        playTime = t
        handOn(upTo: t, into: &out)
        for s in 0..<10 where fingers[s].active && fingers[s].count > 0 {
            let a = fingers[s].anchor, b = fingers[s].queue[fingers[s].head]
            let f = b.t > a.t ? min(1, max(0, (t - a.t) / (b.t - a.t))) : 0
            handOn(s, Sample(t: t, x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f), into: &out)
        }
        deadline = nil
        if anyQueued { deadline = max(d + Self.tick, now + Interval(nanoseconds: Self.tick.nanoseconds / 2)) }
    }

    /// Drops every queued move and forgets every finger (cancel all, mode switch, another sender).
    public mutating func dropAll() {
        for s in 0..<10 {
            fingers[s].active = false
            fingers[s].count = 0
        }
        deadline = nil
        lastArrival = nil
    }

    // MARK: -

    @inline(__always) private var anyQueued: Bool {
        for s in 0..<10 where fingers[s].active && fingers[s].count > 0 { return true }
        return false
    }

    private mutating func updateDeadline() {
        if !anyQueued { deadline = nil }
    }

    private mutating func flushAll(into out: inout [ContactChange]) {
        handOn(upTo: .infinity, into: &out)
    }

    /// Hands on every queued move at or before `limit`, across the fingers in the order they arrived
    /// (by packet, then slot, as the packets had them): fingers that move together stay together, so the
    /// distance between them (a pinch) is what the packets said.
    private mutating func handOn(upTo limit: Double, into out: inout [ContactChange]) {
        while true {
            var next = -1
            var nextPacket = UInt64.max
            for s in 0..<10 where fingers[s].active && fingers[s].count > 0 {
                let head = fingers[s].queue[fingers[s].head]
                if head.t <= limit && head.packet < nextPacket { next = s; nextPacket = head.packet }
            }
            guard next >= 0 else { return }
            let sample = fingers[next].queue[fingers[next].head]
            handOn(next, sample, into: &out)
            fingers[next].anchor = sample
            fingers[next].head = (fingers[next].head + 1) % Self.queueLength
            fingers[next].count -= 1
        }
    }

    /// Hands on a move of finger `s` to the point of `sample` (nothing if that is where it is).
    private mutating func handOn(_ s: Int, _ sample: Sample, into out: inout [ContactChange]) {
        let p = DevicePoint(rawX: UInt16(sample.x.rounded()), rawY: UInt16(sample.y.rounded()))
        guard p != fingers[s].last else { return }
        fingers[s].last = p
        out.append(.moved(slot: UInt8(s), to: p))
    }
}
