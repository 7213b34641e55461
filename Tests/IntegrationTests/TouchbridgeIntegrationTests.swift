// End-to-end tests: the real touchbridge binary, a private Xvfb, and xobserve (an independent X
// client) reporting what the X server delivered. Each test starts and stops its own world.
//
// Run: swift test --scratch-path .build-it --filter IntegrationTests
// Binaries: $TOUCHBRIDGE_BIN / $XOBSERVE_BIN, else the newest of .build/debug and .build-it/debug.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct TouchbridgeIntegrationTests {
    /// Ten free slots.
    static let allFree = PoseAIText.touchState([:])

    // MARK: a touch lands on its pixel

    @Test func fingerAtCentrePutsPointerAtScreenCentre() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer

        // Start away from every target, so only the daemon can put the pointer there.
        try observer.warp(x: 123, y: 456)
        var mark = observer.mark
        try rig.sender.send(PoseAIText.packet(touches: "0f/f/", touchState: "f/f/" + String(repeating: "====", count: 9)))
        try rig.waitForMotion(to: 960, 540, since: mark, "finger at the centre")
        let centre = try observer.query()
        #expect(abs(centre.x - 960) <= 1 && abs(centre.y - 540) <= 1,
                "finger at 0,0 should put the pointer at (960,540) ±1, it is at \(centre)")

        let corners: [(wire: String, x: Int, y: Int)] = [
            ("AAAA", 0, 0), ("//AA", 1919, 0), ("////", 1919, 1079), ("AA//", 0, 1079),
        ]
        for corner in corners {
            try observer.warp(x: 700, y: 300)
            mark = observer.mark
            try rig.sender.send(PoseAIText.packet(
                touches: "0" + corner.wire, touchState: corner.wire + String(repeating: "====", count: 9)))
            try rig.waitForMotion(to: corner.x, corner.y, since: mark, "finger at corner \(corner.wire)")
            let p = try observer.query()
            #expect(abs(p.x - corner.x) <= 1 && abs(p.y - corner.y) <= 1,
                    "finger at \(corner.wire) should put the pointer at (\(corner.x),\(corner.y)) ±1, it is at \(p)")
        }

        mark = observer.mark
        try rig.sender.send(PoseAIText.packet(touches: "0====", touchState: Self.allFree))
        try rig.waitForButton("release", 1, since: mark, "finger lifted")
    }

    // MARK: a drag holds button 1

    @Test func dragHoldsButtonOneAndReleasesAtEnd() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 1500, y: 900)
        let start = observer.mark

        let down = (x: -0.5, y: -0.5)
        try rig.fingerDown(x: down.x, y: down.y, "drag: finger down")
        let held = try observer.query()
        #expect(held.buttonOneHeld, "button 1 should be held after the finger went down: \(held)")

        let path: [(x: Double, y: Double)] = [(-0.3, -0.4), (-0.1, -0.2), (0.15, 0.05), (0.4, 0.3), (0.6, 0.45)]
        for (i, point) in path.enumerated() {
            let mark = observer.mark
            try rig.sender.send(touches: [.at(slot: 0, x: point.x, y: point.y)], state: [0: .at(x: point.x, y: point.y)])
            let target = rig.expectedPixel(x: point.x, y: point.y)
            try rig.waitForMotion(to: target.x, target.y, since: mark, "drag move \(i + 1)")
            let p = try observer.query()
            #expect(p.buttonOneHeld, "button 1 should stay held during the drag (move \(i + 1)): \(p)")
            #expect(abs(p.x - target.x) <= 1 && abs(p.y - target.y) <= 1,
                    "move \(i + 1) should be at (\(target.x),\(target.y)) ±1: \(p)")
        }

        // The end event alone (no TouchState in this packet), so only `0====` can cause the release;
        // lostEndedIsReleasedByTouchState covers TouchState on its own.
        let endMark = observer.mark
        try rig.sender.send(PoseAIText.packet(touches: "0====", touchState: nil))
        try rig.waitForButton("release", 1, since: endMark, "drag end")
        let last = rig.expectedPixel(x: path.last!.x, y: path.last!.y)
        let after = try observer.query()
        #expect(after.buttons == 0, "no button should be held after the finger lifted: \(after)")
        #expect(abs(after.x - last.x) <= 1 && abs(after.y - last.y) <= 1,
                "the pointer should stay at the last position (\(last.x),\(last.y)) ±1: \(after)")

        // The whole drag: one press, motions while held, one release, in that order.
        try observer.sync()
        let events = observer.events(from: start)
        let presses = events.filter { $0.isButton("press", 1) }
        let releases = events.filter { $0.isButton("release", 1) }
        #expect(presses.count == 1 && releases.count == 1,
                "one press and one release of button 1 expected\n\(rig.context(since: start))")
        if let press = presses.first, let release = releases.first {
            let heldMotions = events.filter { $0.kind == "motion" && $0.index > press.index && $0.index < release.index }
            #expect(heldMotions.count >= path.count,
                    "expected ≥ \(path.count) motions between press and release\n\(rig.context(since: start))")
        }
    }

    // MARK: a stop signal releases first

    /// Every signal that would end the process releases first: Ctrl-C, kill, a closed terminal or ssh
    /// session (SIGHUP), Ctrl-\\ (SIGQUIT), and the ones whose default action kills.
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM])
    func signalMidDragReleasesButtonOneAndExitsZero(signal: Int32) throws {
        let name = [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP", SIGQUIT: "SIGQUIT",
                    SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGALRM: "SIGALRM"][signal]!
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        try rig.fingerDown(x: -0.2, y: 0.1, "finger down")
        var mark = observer.mark
        try rig.sender.send(touches: [.at(slot: 0, x: 0.1, y: 0.2)], state: [0: .at(x: 0.1, y: 0.2)])
        let target = rig.expectedPixel(x: 0.1, y: 0.2)
        try rig.waitForMotion(to: target.x, target.y, since: mark, "drag move")
        let before = try observer.query()
        #expect(before.buttonOneHeld, "button 1 should be held mid-drag: \(before)")

        mark = observer.mark
        let status = rig.daemon.terminate(timeout: 5, signal: signal)
        #expect(status == .exited(0),
                "touchbridge should exit 0 on \(name), got \(status.map { "\($0)" } ?? "no exit within 5 s")\n\(rig.daemon.outputTail())"
        )
        try rig.waitForButton("release", 1, since: mark, "\(name) mid-drag")
        let after = try observer.query()
        #expect(after.buttons == 0, "no button should be held after the daemon exited: \(after)")
        try rig.daemon.waitForLog(containing: "\(name): released button 1", "the log line \(name): released button 1")

        try rig.daemon.waitForLog(containing: "stopped by \(name)", "the log line stopped by \(name)")
    }

    // MARK: the silence watchdog

    @Test func silentSenderMidDragIsReleasedByWatchdog() throws {
        let idleMs: UInt64 = 300
        let rig = try Rig.start(idleReleaseMs: Int(idleMs))
        defer { rig.stop() }
        let observer = rig.observer
        let mark = observer.mark
        try rig.sender.send(touches: [.at(slot: 0, x: 0.3, y: -0.3)], state: [0: .at(x: 0.3, y: -0.3)])
        let lastPacket = MonotonicClock.now() // after sendto returned: the silence starts here
        try rig.waitForButton("press", 1, since: mark, "finger down")
        let release = try rig.waitForButton("release", 1, since: mark, timeout: 5, "watchdog release")
        let delay = release.tNs &- lastPacket
        print("watchdog: release observed \(String(format: "%.1f", delay.ms)) ms after the last packet "
            + "(--idle-release-ms \(idleMs))")
        #expect(release.tNs >= lastPacket && delay >= 250_000_000,
                "the release came \(String(format: "%.1f", Double(Int64(bitPattern: delay)) / 1e6)) ms after the last packet; not before ~\(idleMs) ms")
        #expect(delay < (idleMs + 700) * 1_000_000,
                "the release came \(String(format: "%.1f", delay.ms)) ms after the last packet; the bound is \(idleMs) + 700 ms")
        let after = try observer.query()
        #expect(after.buttons == 0, "no button should be held after the watchdog: \(after)")
    }

    // MARK: an end the phone never sent

    @Test func lostEndedIsReleasedByTouchState() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        try rig.fingerDown(x: 0.25, y: 0.25)
        let mark = observer.mark
        // The packet with `0====` was lost; the next one has no events but its state says all free.
        let sent = try rig.sender.send(PoseAIText.packet(touches: "", touchState: Self.allFree))
        let release = try rig.waitForButton("release", 1, since: mark, "TouchState says slot 0 is free")
        #expect(release.tNs >= sent)
        let after = try observer.query()
        #expect(after.buttons == 0, "no button should be held once TouchState says free: \(after)")
    }

    // MARK: a cancelled touch

    @Test func cancelReleasesButton() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        let start = observer.mark
        try rig.fingerDown(x: -0.4, y: 0.4)
        let mark = observer.mark
        // The cancel event alone (no TouchState in this packet), so only `=0=0` can cause the release.
        try rig.sender.send(PoseAIText.packet(touches: "0=0=0", touchState: nil))
        try rig.waitForButton("release", 1, since: mark, "touch cancelled")
        let after = try observer.query()
        #expect(after.buttons == 0, "no button should be held after the cancel: \(after)")
        try observer.sync()
        let presses = observer.events(from: start).filter { $0.kind == "press" }
        #expect(presses.count == 1, "a cancel must not click: \(presses.map(\.text))")
    }

    // MARK: the PoseAI handshake

    @Test func handshakeAnswersHello() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        try rig.sender.send(PoseAISender.hello())
        guard let reply = rig.sender.receive(timeout: 20) else {
            Issue.record("no reply to the hello within 3 s\n\(rig.daemon.outputTail())")
            return
        }
        let text = String(decoding: reply, as: UTF8.self)
        #expect(text.contains("{\"HANDSHAKE\":"), "the reply should contain {\"HANDSHAKE\": — got: \(text.prefix(300))")
        let object = try? JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any]
        #expect(object?["HANDSHAKE"] is [String: Any], "the reply should be a JSON object with a HANDSHAKE object: \(text.prefix(300))")
    }

    // MARK: garbage dropped

    @Test func garbageIsDroppedAndGoodPacketsStillWork() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 200, y: 200)
        let mark = observer.mark

        try rig.sender.send("this is not JSON {\"Touches\":\"0AAAA\"")
        try rig.sender.send(bytes: [0xff, 0xfe, 0x00, 0x7b, 0x22])
        // The largest UDP/IPv4 datagram (65,507 bytes; a datagram over 64 KiB cannot be sent): an
        // unterminated JSON text that starts like a touch at the top-left corner.
        var big = Array("{\"Touches\":\"0AAAA\",\"pad\":\"".utf8)
        big += [UInt8](repeating: UInt8(ascii: "x"), count: 65_507 - big.count)
        try rig.sender.send(bytes: big)
        // Bad slot digits, otherwise well-formed.
        try rig.sender.send(PoseAIText.packet(touches: "aAAAA", touchState: nil))
        try rig.sender.send(PoseAIText.packet(touches: ":AAAA", touchState: nil))
        // A Touches string that is not a whole number of events.
        try rig.sender.send(PoseAIText.packet(touches: "0AAA", touchState: nil))

        let good = (x: 0.5, y: -0.5)
        let target = rig.expectedPixel(x: good.x, y: good.y)
        let sent = try rig.sender.send(touches: [.at(slot: 0, x: good.x, y: good.y)], state: [0: .at(x: good.x, y: good.y)])
        try rig.waitForMotion(to: target.x, target.y, since: mark, "a valid touch after garbage")
        #expect(rig.daemon.isRunning, "the daemon should survive garbage\n\(rig.daemon.outputTail())")

        let p = try observer.query()
        #expect(abs(p.x - target.x) <= 1 && abs(p.y - target.y) <= 1, "pointer should be at (\(target.x),\(target.y)): \(p)")
        let input = observer.events(from: mark).filter { ["motion", "press", "release"].contains($0.kind) }
        let early = input.filter { $0.tNs < sent }
        #expect(early.isEmpty, "garbage caused X input: \(early.map(\.text))")
        // By the event's own position (rx/ry), not the position queried after it, which can already
        // include the valid touch.
        if let first = input.first(where: { $0.kind == "motion" }), let fx = first.eventX, let fy = first.eventY {
            #expect(abs(fx - target.x) <= 1 && abs(fy - target.y) <= 1,
                    "the first motion after the garbage should be the valid touch's (\(target.x),\(target.y)): \(first.text)")
        }
        #expect(input.filter { $0.kind == "press" }.count <= 1, "garbage caused a press: \(input.map(\.text))")

        let endMark = observer.mark
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
        try rig.waitForButton("release", 1, since: endMark, "finger lifted after garbage")
        #expect(rig.daemon.isRunning, "the daemon should still run\n\(rig.daemon.outputTail())")
    }

    // MARK: latency

    @Test func medianLatencyOverThousandPackets() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        let count = 1000

        // Each packet has its own target: y alternates between two rows ~530 px apart, x steps 7 raw
        // units (~3.3 px) and wraps every 500 packets, so a motion identifies its packet.
        func rawPosition(_ i: Int) -> (x: Int, y: Int) { (200 + ((i + 1) % 500) * 7, i % 2 == 0 ? 3000 : 1000) }
        func pixel(_ i: Int) -> (x: Int, y: Int) {
            let r = rawPosition(i)
            return (Rig.expectedPixel(raw: r.x, size: rig.width), Rig.expectedPixel(raw: r.y, size: rig.height))
        }

        let downMark = observer.mark
        try rig.sender.send(touches: [.raw(slot: 0, x: 200, y: 1000)], state: [0: .raw(x: 200, y: 1000)])
        try rig.waitForButton("press", 1, since: downMark, "finger down")
        try observer.sync()

        // Closed loop: each datagram goes out once the previous one's motion was observed (and at
        // most one per millisecond), so no stage ever queues: this is the latency of one packet, as a
        // phone at 60-240 packets/s sees it, even while other tests load the machine.
        let mark = observer.mark
        var sentAt = [UInt64](repeating: 0, count: count)
        var latencies: [UInt64] = []
        var missed = 0
        let t0 = MonotonicClock.now()
        var nextSend = t0
        for i in 0..<count {
            MonotonicClock.sleep(until: nextSend)
            let r = rawPosition(i)
            let target = pixel(i)
            let before = observer.mark
            sentAt[i] = try rig.sender.send(touches: [.raw(slot: 0, x: r.x, y: r.y)], state: [0: .raw(x: r.x, y: r.y)])
            let seen = observer.waitFor(from: before, timeout: 2) {
                $0.tNs >= sentAt[i] && $0.isMotion(near: target.x, target.y, tolerance: 1)
            }
            if let seen { latencies.append(seen.tNs - sentAt[i]) } else { missed += 1 }
            nextSend = max(MonotonicClock.now(), sentAt[i] + 1_000_000)
        }
        let sendSpan = MonotonicClock.now() - t0
        try observer.sync()
        let motions = observer.events(from: mark).filter { $0.kind == "motion" }

        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let rank = Int((p * Double(sorted.count)).rounded(.up))
            return sorted[min(max(rank - 1, 0), sorted.count - 1)].us
        }
        func f(_ v: Double) -> String { String(format: "%.0f", v) }
        print("latency: median=\(f(percentile(0.5))) p90=\(f(percentile(0.9))) p99=\(f(percentile(0.99))) n=\(sorted.count)")
        print("latency: µs from sendto to xobserve reading the raw motion; sent=\(count) in "
            + "\(String(format: "%.0f", sendSpan.ms)) ms, observed=\(sorted.count), motions seen=\(motions.count)")

        #expect(missed == 0 && sorted.count == count,
                "\(missed) of \(count) packets were not observed as motions at their position within 2 s\n\(rig.context(since: mark))")

        let endMark = observer.mark
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
        try rig.waitForButton("release", 1, since: endMark, "finger lifted")
    }
}

/// The rig's own encoder, checked against the wire document's examples (no X needed).
@Suite struct PoseAIEncodingTests {
    @Test func encoderMatchesWireFormatExamples() {
        #expect(PoseAIText.encode(value: -1) == "AA")
        #expect(PoseAIText.encode(value: 0) == "f/")
        #expect(PoseAIText.encode(value: 1) == "/+") // round(2 · 2047) = 4094
        #expect(PoseAIText.encode(value: 4095.0 / 2047 - 1) == "//")
        #expect(PoseAIText.encode(raw: 4095) == "//")
        #expect(PoseAIText.encode(value: 2) == "//")
        #expect(PoseAIText.touches([.at(slot: 0, x: 0, y: 0), .ended(slot: 1), .cancelled(slot: 2)]) == "0f/f/1====2=0=0")
        #expect(PoseAIText.touchState([0: .at(x: 0, y: 0)]) == "f/f/" + String(repeating: "====", count: 9))
        #expect(PoseAIText.touchState([:]).count == 40)
        #expect(Rig.expectedPixel(raw: 2047, size: 1920) == 960)
        #expect(Rig.expectedPixel(raw: 0, size: 1080) == 0)
        #expect(Rig.expectedPixel(raw: 4095, size: 1080) == 1079)
    }
}
