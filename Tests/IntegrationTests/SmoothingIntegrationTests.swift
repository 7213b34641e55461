// Motion smoothing end to end: the real binary in touchpad mode on a private Xvfb, one finger moving
// steadily (packets made at 60 Hz) and a sender that holds the packets back and releases them in bursts,
// as a power-saving Wi-Fi link does. xobserve stamps every pointer motion; the pointer is sampled at
// 60 Hz frames from those stamps and the coefficient of variation (CV) of the distance per frame is
// reported with --smoothing auto and off. Timings are printed, not asserted (the machine may be
// loaded): the assertions are that smoothing clearly lowers the CV of bursty delivery, that it engages
// (the debug line), and that the total distance stays within 2% of off.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct SmoothingIntegrationTests {
    struct Run {
        var cv: Double
        var distance: Double
        var frames: Int
        var engagedLine: String?
        var perFrame: [Double]
    }

    /// One stroke: 1.5 s, packets made every 1/60 s, released every `burstMS` (0: as made).
    static func stroke(smoothing: String, burstMS: Int, accel: String) throws -> Run {
        let rig = try Rig.start(mode: "touchpad", extraArguments: [
            "--smoothing", smoothing, "--accel", accel, "--log-level", "debug"])
        defer { rig.stop() }
        try rig.observer.warp(x: 400, y: 300)
        let mark = rig.observer.mark
        let period = 1_000_000_000 / 60
        let count = 90
        // The finger lands, then moves right and down at a steady 60 Hz: x from -0.6 by 1.2, y by 0.5.
        func point(_ i: Int) -> PoseAITouch {
            let f = Double(i) / Double(count)
            return .at(slot: 0, x: -0.6 + 1.2 * f, y: -0.3 + 0.5 * f)
        }
        func send(_ i: Int) throws {
            if i <= count {
                let t = point(i)
                guard case .at(_, let x, let y) = t else { return }
                try rig.sender.send(touches: [t], state: [0: .at(x: x, y: y)])
            } else {
                try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
            }
        }
        let start = MonotonicClock.now() + 50_000_000
        let burst = UInt64(burstMS) * 1_000_000
        var next = 0
        // Packet i is made at start + i·period and released at the next multiple of `burst` after it.
        func release(_ i: Int) -> UInt64 {
            let made = start + UInt64(i * period)
            guard burst > 0 else { return made }
            let k = (made - start + burst - 1) / burst
            return start + k * burst
        }
        while next <= count + 1 {
            let due = release(next)
            MonotonicClock.sleep(until: due)
            while next <= count + 1 && release(next) <= due {
                try send(next)
                next += 1
            }
        }
        let lastMade = start + UInt64(count * period)
        // Everything the daemon did: a sync barrier after the pointer stopped at its end.
        var end = try rig.observer.query()
        for _ in 0..<50 {
            usleep(50_000)
            let now = try rig.observer.query()
            if now.x == end.x && now.y == end.y { break }
            end = now
        }
        try rig.observer.sync()
        let motions = rig.observer.events(from: mark).filter { $0.kind == "motion" && $0.x != nil && $0.y != nil }
        // The pointer at 60 Hz frames, from 200 ms after the finger started (the measurement settling)
        // to the last packet made.
        var positions: [(Int, Int)] = []
        var frame = start + 200_000_000
        var j = 0
        var current = (400, 300)
        while frame <= lastMade {
            while j < motions.count && motions[j].tNs <= frame { current = (motions[j].x!, motions[j].y!); j += 1 }
            positions.append(current)
            frame += UInt64(period)
        }
        var perFrame: [Double] = []
        for k in 1..<positions.count {
            let dx = Double(positions[k].0 - positions[k - 1].0), dy = Double(positions[k].1 - positions[k - 1].1)
            perFrame.append((dx * dx + dy * dy).squareRoot())
        }
        let dx = Double(end.x - 400), dy = Double(end.y - 300)
        let line = rig.daemon.logLines(containing: "smoothing engaged").first
        return Run(cv: Self.cv(perFrame), distance: (dx * dx + dy * dy).squareRoot(), frames: perFrame.count,
                   engagedLine: line, perFrame: perFrame)
    }

    static func cv(_ values: [Double]) -> Double {
        guard values.count > 1 else { return 0 }
        let mean = values.reduce(0, +) / Double(values.count)
        guard mean > 0 else { return 0 }
        let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)
        return variance.squareRoot() / mean
    }

    /// With `--accel flat` the distance does not depend on timing, so auto and off must agree to 2%.
    /// (With the default adaptive acceleration, bursts delivered as they come look like fast motion and
    /// move the pointer farther than the finger's speed would: the second pair of rows shows it.)
    @Test(arguments: [0, 50, 100])
    func burstyDeliveryGlides(burstMS: Int) throws {
        let label = burstMS == 0 ? "even delivery" : "bursts every \(burstMS) ms"
        for accel in ["flat", "adaptive"] {
            var off = try Self.stroke(smoothing: "off", burstMS: burstMS, accel: accel)
            var auto = try Self.stroke(smoothing: "auto", burstMS: burstMS, accel: accel)
            // Evenness is measured in time: on a loaded machine a stall of the daemon, the X server or this
            // sender can spoil a pair of strokes (seen: CV 2.22 against 1.33 allowed; and two pairs in a row
            // in a fresh clone's `make test` beside another, auto 3.19 and 1.62 against off 2.61 and 2.22,
            // the smoothing engaged late on a send period misread as 6 ms). Up to two more pairs are
            // measured then; smoothing that does not work fails all three.
            var pairs = 1
            while burstMS > 0 && !(auto.cv < 0.6 * off.cv) && pairs < 3 {
                print(String(format: "smoothing, bursts every %d ms, accel %@: CV off %.2f, auto %.2f; measured again", burstMS, accel, off.cv, auto.cv))
                off = try Self.stroke(smoothing: "off", burstMS: burstMS, accel: accel)
                auto = try Self.stroke(smoothing: "auto", burstMS: burstMS, accel: accel)
                pairs += 1
            }
            print(String(format: "smoothing, %@, accel %@: per-frame CV off %.2f, auto %.2f; distance off %.0f px, auto %.0f px (%d frames)",
                         label, accel, off.cv, auto.cv, off.distance, auto.distance, auto.frames))
            print("  per frame, auto: \(auto.perFrame.map { Int($0.rounded()) })")
            if let line = auto.engagedLine { print("  \(line)") }
            #expect(off.distance > 100, "the stroke moved the pointer")
            #expect(off.engagedLine == nil)
            if accel == "flat" {
                #expect(abs(auto.distance - off.distance) <= 0.02 * off.distance,
                        "total distance: off \(off.distance) px, auto \(auto.distance) px")
            }
            if burstMS > 0 {
                #expect(auto.engagedLine != nil, "the debug line: smoothing engaged")
                #expect(auto.cv < 0.6 * off.cv, "CV with smoothing \(auto.cv), without \(off.cv)")
            }
        }
    }
}
