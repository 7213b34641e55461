// Motion smoothing with the manual clock: even, bursty and stalled streams, lifts, turns, taps.
import Testing
import TouchCore

/// One finger's packets as the phone makes them and as the network delivers them, driven through the
/// core with the manual clock; the pointer is sampled at 60 Hz display frames.
struct Stream {
    /// When each packet is made (ms) and the finger's point in it (mm from the centre), or nil: lifted.
    var packets: [(made: Double, point: (Double, Double)?)] = []

    /// A finger moving steadily from `from` by `by` mm over `durationMS`, packets made at 60 Hz, lifting
    /// in the packet after the last.
    static func steady(from: (Double, Double), by: (Double, Double), durationMS: Double, startMS: Double = 100) -> Stream {
        var s = Stream()
        let n = Int(durationMS / (1000.0 / 60))
        for i in 0...n {
            let f = Double(i) / Double(n)
            s.packets.append((startMS + Double(i) * 1000 / 60, (from.0 + by.0 * f, from.1 + by.1 * f)))
        }
        s.packets.append((startMS + Double(n + 1) * 1000 / 60, nil))
        return s
    }

    /// When a packet made at `made` arrives: at once (`burstMS` 0) or held until the next multiple of
    /// `burstMS` (a link that releases what it holds every `burstMS`).
    static func arrival(_ made: Double, burstMS: Double) -> UInt64 {
        guard burstMS > 0 else { return UInt64(made.rounded()) }
        return UInt64(((made / burstMS).rounded(.up) * burstMS).rounded())
    }

    struct Result {
        /// Pointer distance moved in each 60 Hz frame while the finger moved (px).
        var perFrame: [Double]
        /// The pointer's total motion (px).
        var total: (dx: Int, dy: Int)
        var actions: [OutputAction]
        /// Every timed pointer position (ms, cumulative x, cumulative y).
        var path: [(UInt64, Int, Int)]
        var engaged: Bool
        var measured: SmoothingReport

        var cv: Double { coefficientOfVariation(perFrame) }
        var distance: Double { Double(total.dx * total.dx + total.dy * total.dy).squareRoot() }
    }

    /// Drives the packets through a touchpad core (or `mode`) with `smoothing`, delivered in bursts of
    /// `burstMS` (0: evenly), firing every deadline on time.
    func run(burstMS: Double, smoothing: MotionSmoothing, mode: TouchMode = .touchpad,
             accel: AccelProfile = .adaptive) -> Result {
        var pad = Pad(mode: mode) { $0.smoothing = smoothing; $0.accelProfile = accel }
        var deliveries: [(at: UInt64, point: (Double, Double)?)] = packets.map { (Self.arrival($0.made, burstMS: burstMS), $0.point) }
        deliveries.sort { $0.at < $1.at }  // stable: a burst keeps its order
        var actions: [OutputAction] = []
        var path: [(UInt64, Int, Int)] = []
        var x = 0, y = 0
        var engaged = false
        var measured = SmoothingReport(engaged: false, jitter: .init(nanoseconds: 0), period: .init(nanoseconds: 0), delay: .init(nanoseconds: 0))
        func take(_ out: [OutputAction], at t: UInt64) {
            for a in out { if case .moveBy(let dx, let dy) = a { x += Int(dx); y += Int(dy); path.append((t, x, y)) } }
            actions += out
        }
        let end = (deliveries.last?.at ?? 0) + 400
        var frames: [(Double, Int, Int)] = []
        var nextFrame = 0.0
        var i = 0
        var t: UInt64 = 0
        while t <= end {
            // Everything due at t: deadlines, then packets, then the frame sample.
            while let d = pad.core.nextDeadline, d <= .milliseconds(t) {
                var out: [OutputAction] = []
                pad.core.handleTimer(at: d, into: &out)
                take(out, at: d.nanoseconds / 1_000_000)
            }
            while i < deliveries.count && deliveries[i].at == t {
                pad.now = t
                var p = TouchPacket()
                if let point = deliveries[i].point { p.events.append(mm(0, point.0, point.1)) } else {
                    p.events.append(TouchEvent(slot: 0, update: .ended))
                }
                p.hasTouches = true
                var out: [OutputAction] = []
                pad.core.handle(p, at: .milliseconds(t), into: &out)
                take(out, at: t)
                if pad.core.smoothing.engaged { engaged = true; measured = pad.core.smoothing }
                i += 1
            }
            while Double(t) >= nextFrame {
                frames.append((nextFrame, x, y))
                nextFrame += 1000.0 / 60
            }
            t += 1
        }
        // The frames while the finger moved, without the first 200 ms (the measurement settling).
        let first = (packets.first?.made ?? 0) + 200, last = packets.last?.made ?? 0
        var perFrame: [Double] = []
        for k in 1..<frames.count where frames[k].0 >= first && frames[k].0 <= last {
            let dx = Double(frames[k].1 - frames[k - 1].1), dy = Double(frames[k].2 - frames[k - 1].2)
            perFrame.append((dx * dx + dy * dy).squareRoot())
        }
        return Result(perFrame: perFrame, total: (x, y), actions: actions, path: path, engaged: engaged, measured: measured)
    }
}

func coefficientOfVariation(_ values: [Double]) -> Double {
    guard values.count > 1 else { return 0 }
    let mean = values.reduce(0, +) / Double(values.count)
    guard mean > 0 else { return 0 }
    let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)
    return variance.squareRoot() / mean
}

@Suite struct SmoothingTests {
    /// 60 mm/s straight down the phone for 1.5 s.
    let stroke = Stream.steady(from: (0, -50), by: (10, 90), durationMS: 1500)

    @Test func evenDeliveryPassesStraightThrough() {
        let off = stroke.run(burstMS: 0, smoothing: .off)
        let auto = stroke.run(burstMS: 0, smoothing: .auto)
        #expect(!auto.engaged)
        #expect(auto.actions == off.actions)
        print("smoothing, even delivery: CV off \(off.cv), auto \(auto.cv)")
    }

    @Test(arguments: [(50.0, 0.4), (100.0, 0.6)])
    func burstsPlayOutEvenly(burstMS: Double, goal: Double) {
        let off = stroke.run(burstMS: burstMS, smoothing: .off)
        let auto = stroke.run(burstMS: burstMS, smoothing: .auto)
        print("smoothing, bursts every \(Int(burstMS)) ms: CV off \(off.cv), auto \(auto.cv); distance off \(off.distance) px, auto \(auto.distance) px; measured \(auto.measured)")
        #expect(auto.engaged)
        #expect(auto.cv <= goal)
        #expect(off.cv > 2 * auto.cv)
        #expect(abs(auto.distance - off.distance) <= 0.02 * off.distance)
        // The jitter it measured is the wait beyond the 16.7 ms period: burstMS - 16.7 ms, within a tick.
        let expected = burstMS - 1000.0 / 60
        #expect(abs(Double(auto.measured.jitter.nanoseconds) / 1e6 - expected) < 8)
    }

    @Test func stallStopsAtTheLastPointReceived() {
        // Bursts every 50 ms, then nothing for 400 ms (longer than any playout delay), then more motion.
        var s = Stream()
        for i in 0..<60 { s.packets.append((100 + Double(i) * 1000 / 60, (0, -40 + Double(i) * 0.5))) }
        for i in 60..<120 { s.packets.append((500 + Double(i) * 1000 / 60, (0, -40 + Double(i) * 0.5))) }
        s.packets.append((500 + 120 * 1000 / 60, nil))
        let off = s.run(burstMS: 50, smoothing: .off, accel: .flat)
        let auto = s.run(burstMS: 50, smoothing: .auto, accel: .flat)
        #expect(auto.engaged)
        // Where the pointer is during the stall: where the last packet before it put it, no farther.
        let stallStart = UInt64(100 + 60 * 1000 / 60 + 200), stallEnd = UInt64(500 + 60 * 1000 / 60)
        let offAtStall = off.path.last { $0.0 <= stallStart }!
        let autoInStall = auto.path.filter { $0.0 > stallStart && $0.0 < stallEnd }
        #expect(autoInStall.isEmpty, "no motion while nothing arrives")
        let autoAtStall = auto.path.last { $0.0 <= stallStart }!
        #expect(abs(autoAtStall.2 - offAtStall.2) <= 1)
        #expect(abs(auto.total.dy - off.total.dy) <= 1)
    }

    @Test func liftDuringAGapStopsMotionAtOnce() {
        // The finger lifts while the link holds packets: the lift arrives in a burst with the last moves.
        let s = Stream.steady(from: (0, -30), by: (0, 40), durationMS: 700)
        let off = s.run(burstMS: 100, smoothing: .off, accel: .flat)
        let auto = s.run(burstMS: 100, smoothing: .auto, accel: .flat)
        #expect(auto.engaged)
        let lift = Stream.arrival(s.packets.last!.made, burstMS: 100)
        #expect(auto.path.allSatisfy { $0.0 <= lift }, "nothing moves after the lift arrived")
        #expect(abs(auto.total.dy - off.total.dy) <= 1, "the finger's whole motion, no more, no less")
        #expect(clicks(auto.actions) == clicks(off.actions))
    }

    @Test func aTurnDoesNotOvershoot() {
        // 20 mm down and straight back up, delivered in bursts every 100 ms.
        var s = Stream()
        let n = 30
        for i in 0...n { s.packets.append((100 + Double(i) * 1000 / 60, (0, -10 + 20 * Double(i) / Double(n)))) }
        for i in 1...n { s.packets.append((100 + Double(n + i) * 1000 / 60, (0, 10 - 20 * Double(i) / Double(n)))) }
        s.packets.append((100 + Double(2 * n + 1) * 1000 / 60, nil))
        let off = s.run(burstMS: 100, smoothing: .off, accel: .flat)
        let auto = s.run(burstMS: 100, smoothing: .auto, accel: .flat)
        #expect(auto.engaged)
        let farthestOff = off.path.map(\.2).max()!, farthestAuto = auto.path.map(\.2).max()!
        print("smoothing, a turn: farthest off \(farthestOff) px, auto \(farthestAuto) px")
        // The bound: the pointer goes no farther than the finger took it, to a pixel of rounding.
        #expect(farthestAuto <= farthestOff + 1)
        // And it never moves back while the finger goes forward (before the turn was received).
        let turnArrives = Stream.arrival(s.packets[n + 1].made, burstMS: 100)
        var previous = Int.min
        for (t, _, y) in auto.path where t < turnArrives {
            #expect(y >= previous)
            previous = y
        }
        #expect(abs(auto.total.dy - off.total.dy) <= 1)
    }

    @Test func tapsAreUntouched() {
        // Bursty delivery engages the smoother; then a tap and a tap-and-drag arrive in bursts.
        var s = Stream.steady(from: (0, -30), by: (0, 30), durationMS: 600)
        let base = s.packets.last!.made
        s.packets.append((base + 120, (5, 5)))
        s.packets.append((base + 137, (5.2, 5.1)))
        s.packets.append((base + 154, nil))
        let off = s.run(burstMS: 50, smoothing: .off)
        let auto = s.run(burstMS: 50, smoothing: .auto)
        #expect(auto.engaged)
        #expect(clicks(off.actions) == click(.left))
        #expect(clicks(auto.actions) == clicks(off.actions))
    }

    @Test func touchscreenModeIsNeverSmoothed() {
        let off = stroke.run(burstMS: 100, smoothing: .off, mode: .touchscreen)
        let auto = stroke.run(burstMS: 100, smoothing: .auto, mode: .touchscreen)
        #expect(!auto.engaged)
        #expect(auto.actions == off.actions)
    }

    @Test func aFingerThatRestsIsNotABurst() {
        // The web page sends only when the finger moves: a finger that moves, rests 120 ms (no packets),
        // moves again... leaves gaps but no bunched packets, and must not be delayed.
        var s = Stream()
        var t = 100.0, y = -40.0
        for _ in 0..<8 {
            for _ in 0..<6 { s.packets.append((t, (0, y))); t += 1000.0 / 60; y += 0.5 }
            t += 120
        }
        s.packets.append((t, nil))
        let off = s.run(burstMS: 0, smoothing: .off)
        let auto = s.run(burstMS: 0, smoothing: .auto)
        #expect(!auto.engaged)
        #expect(auto.actions == off.actions)
    }

    @Test func aBurstyTwoFingerScrollClicksTheSameWheel() {
        // Two fingers scroll down 60 mm, packets made every 16 ms and released six at a time; then one
        // lifts, and the other a packet later: every queued move is handed on before the count changes,
        // so no scroll motion turns into pointer motion.
        func scroll(_ smoothing: MotionSmoothing) -> ([OutputAction], Bool) {
            var pad = Pad { $0.smoothing = smoothing; $0.kineticScroll = false }
            var out = pad.send(mm(0, -10, -20), mm(1, 10, -20))
            var held: [Double] = []
            for k in 1...60 {
                out += pad.wait(16)
                held.append(-20 + Double(k) * 1.0)
                if k % 6 == 0 {
                    for y in held { out += pad.send(mm(0, -10, y), mm(1, 10, y)) }
                    held.removeAll()
                }
            }
            let engaged = pad.core.smoothing.engaged
            out += pad.send(TouchEvent(slot: 0, update: .ended), mm(1, 10, 40.5))
            out += pad.send(TouchEvent(slot: 1, update: .ended))
            out += pad.wait(500)
            return (out, engaged)
        }
        let (off, _) = scroll(.off)
        let (auto, engaged) = scroll(.auto)
        #expect(engaged)
        #expect(clicks(off).count >= 10)
        #expect(clicks(auto) == clicks(off))
        #expect(totalMotion(auto).dx == 0 && totalMotion(auto).dy == 0, "no pointer motion: \(totalMotion(auto))")
    }

    @Test func fingersThatMoveTogetherStayTogether() {
        // A bursty stroke engages the smoother; then a whole sideways two-finger scroll arrives in one
        // burst, lift included: handed on finger by finger, the gap between the fingers would close and
        // open (a pinch: Ctrl + wheel) instead of scrolling sideways.
        func scroll(_ smoothing: MotionSmoothing) -> ([OutputAction], Bool) {
            var pad = Pad { $0.smoothing = smoothing; $0.kineticScroll = false }
            _ = pad.send(mm(0, 0, -30))
            for k in 1...30 {
                _ = pad.wait(17)
                if k % 6 == 0 { for j in (k - 5)...k { _ = pad.send(mm(0, 0, -30 + Double(j) * 0.5)) } }
            }
            _ = pad.send(TouchEvent(slot: 0, update: .ended))
            _ = pad.wait(300)
            var out = pad.send(mm(0, -10, 0), mm(1, 10, 0))
            for i in 1...8 { out += pad.send(mm(0, -10 + 1.6 * Double(i), 0), mm(1, 10 + 1.6 * Double(i), 0)) }
            out += pad.send(TouchEvent(slot: 0, update: .ended), TouchEvent(slot: 1, update: .ended))
            let engaged = pad.core.smoothing.engaged
            out += pad.wait(500)
            return (out, engaged)
        }
        let (off, _) = scroll(.off)
        let (auto, engaged) = scroll(.auto)
        #expect(engaged)
        #expect(clicks(off).count >= 4)
        #expect(clicks(auto) == clicks(off))
    }

    @Test func offNeverEngages() {
        let off = stroke.run(burstMS: 100, smoothing: .off)
        #expect(!off.engaged)
    }

    @Test func thePresentersLaserGlides() {
        // Presenter mode with the laser on (a long press), then a bursty stroke: the laser moves on the ticks.
        func laserSteps(_ smoothing: MotionSmoothing) -> (count: Int, last: PixelPoint?) {
            var pad = Pad(mode: .presenter) { $0.smoothing = smoothing }
            _ = pad.send(mm(0, 0, 0))
            var out = pad.wait(600)
            for k in 1...40 {
                // Packets made every 16 ms, released every 96 ms (six at a time).
                if k % 6 == 0 {
                    for j in (k - 5)...k { out += pad.send(mm(0, 0, Double(j) * 0.5)) }
                }
                out += pad.wait(16)
            }
            out += pad.wait(300)
            var count = 0
            var last: PixelPoint? = nil
            for a in out { if case .overlay(.laser(let p)) = a { count += 1; last = p } }
            return (count, last)
        }
        let off = laserSteps(.off), auto = laserSteps(.auto)
        #expect(auto.last == off.last, "the laser ends where the finger is")
        #expect(auto.count > off.count, "more, smaller steps: \(auto.count) against \(off.count)")
    }

    @Test func theTickIsArmedOnlyWhileMotionIsQueued() {
        var pad = Pad { $0.smoothing = .auto; $0.tapToClick = false }
        _ = pad.send(mm(0, 0, -20))
        // Bursts every 100 ms until the smoother engages and plays out.
        var k = 0
        while k < 60 {
            k += 1
            _ = pad.wait(17)
            if k % 6 == 0 { for j in (k - 5)...k { _ = pad.send(mm(0, 0, -20 + Double(j) * 0.3)) } }
        }
        #expect(pad.core.smoothing.engaged)
        _ = pad.wait(200)
        // Everything played out, the finger resting: only the silence watchdog (10 s here) is armed.
        #expect(pad.core.nextDeadline == .milliseconds(pad.now - 200) + .seconds(10))
        _ = pad.send(TouchEvent(slot: 0, update: .ended))
        #expect(pad.core.nextDeadline == nil)
    }

    @Test func playingOutAllocatesNothingOnceWarm() {
        var settings = TouchpadSettings()
        settings.smoothing = .auto
        var core = TouchPipeline(configuration: .init(
            screen: ScreenMapping(width: 1920, height: 1080), mode: .touchpad, touchpad: settings))
        var actions: [OutputAction] = []
        actions.reserveCapacity(256)
        var packet = TouchPacket()
        var held: [UInt16] = []
        held.reserveCapacity(64)
        // Two fingers (a scroll) then one (the pointer), packets made every 16 ms and released every
        // 80 ms, ticks fired on time; a lift every 200 packets.
        func round(_ i: Int) {
            let now = Instant.milliseconds(UInt64(i) * 16)
            while let d = core.nextDeadline, d <= now {
                actions.removeAll(keepingCapacity: true)
                core.handleTimer(at: d, into: &actions)
            }
            held.append(UInt16(1000 + (i % 200) * 10))
            guard i % 5 == 4 else { return }
            for k in held.indices {
                packet.reset()
                let y = held[k]
                if i % 200 == 199 && k == held.count - 1 {
                    packet.events.append(TouchEvent(slot: 0, update: .ended))
                    packet.events.append(TouchEvent(slot: 1, update: .ended))
                } else {
                    packet.events.append(TouchEvent(slot: 0, update: .position(DevicePoint(rawX: 1500, rawY: y))))
                    if (i / 200) % 2 == 0 {
                        packet.events.append(TouchEvent(slot: 1, update: .position(DevicePoint(rawX: 2500, rawY: y))))
                    }
                }
                packet.hasTouches = true
                actions.removeAll(keepingCapacity: true)
                core.handle(packet, at: now, into: &actions)
            }
            held.removeAll(keepingCapacity: true)
        }
        for i in 0..<400 { round(i) }  // warm up
        #expect(core.smoothing.engaged)
        let n = allocations { for i in 400..<3_000 { round(i) } }
        #expect(n == 0)
        #expect(core.smoothing.engaged)
    }
}
