// TUIO 1.1 end to end: OSC datagrams from a test socket, the real daemon, X events seen on Xvfb.
import Foundation
import Testing
import TouchTestSupport

@Suite(.serialized, .timeLimit(.minutes(10)))
struct TUIOIntegrationTests {
    /// A rig in touchscreen mode with TUIO on a free port, and a socket sending to it.
    static func start(mode: String = "touchscreen", extraArguments: [String] = []) throws -> (Rig, PoseAISender) {
        let port = try freeUDPPort()
        let rig = try Rig.start(mode: mode, extraArguments: ["--tuio-port", String(port)] + extraArguments)
        do {
            let listening = try rig.daemon.listeningPort("tuio-udp")
            #expect(listening == port)
            return (rig, try PoseAISender(port: port))
        } catch {
            rig.stop()
            throw error
        }
    }

    @Test func aTUIOCursorMovesThePointerAndEndsWhenItLeavesAlive() throws {
        let (rig, tuio) = try Self.start()
        defer { rig.stop() }
        try rig.observer.warp(x: 100, y: 100)

        // Session 17 at the centre: pointer there, button 1 pressed (touchscreen mode).
        var mark = rig.observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 1, alive: [17], set: [(17, 0.5, 0.5)]))
        try rig.waitForMotion(to: 960, 540, since: mark, "TUIO cursor at the centre")
        try rig.waitForButton("press", 1, since: mark, "TUIO cursor down")

        // It moves to (0.25, 0.75) of the screen.
        mark = rig.observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 2, alive: [17], set: [(17, 0.25, 0.75)]))
        let target = (x: Rig.expectedPixel(raw: 1024, size: 1920), y: Rig.expectedPixel(raw: 3071, size: 1080))
        try rig.waitForMotion(to: target.x, target.y, since: mark, "TUIO cursor moved")

        // A late frame (older fseq) moving it elsewhere is dropped.
        mark = rig.observer.mark
        let logMark = rig.daemon.logMark
        try tuio.send(bytes: OSCWrite.frame(fseq: 1, alive: [17], set: [(17, 0.9, 0.1)]))
        try rig.daemon.waitForLog(containing: "late TUIO frame", since: logMark, "late frame logged")

        // Malformed OSC: dropped, counted in the log, no effect.
        try tuio.send(bytes: Array("/tuio/2Dcur_".utf8))
        try tuio.send(bytes: Array(OSCWrite.frame(fseq: 3, alive: [], set: []).dropLast(4)))
        try rig.daemon.waitForLog(containing: "dropped a TUIO datagram", since: logMark, "malformed OSC logged")
        // The barrier: a good frame on the same socket, handled after the late and malformed ones. Before
        // its motion, X saw nothing: no move to (0.9, 0.1), no release.
        let next = (x: Rig.expectedPixel(raw: 3071, size: 1920), y: Rig.expectedPixel(raw: 1024, size: 1080))
        try tuio.send(bytes: OSCWrite.frame(fseq: 5, alive: [17], set: [(17, 0.75, 0.25)]))
        let marker = try rig.waitForMotion(to: next.x, next.y, since: mark, "a good frame after the late and malformed ones")
        let before = rig.inputEvents(from: mark, before: marker.index)
        #expect(before.isEmpty, "a late or malformed frame reached X: \(before.map(\.text))\n\(rig.context(since: mark))")

        // Session 17 leaves alive: button 1 released.
        mark = rig.observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 6, alive: [], set: []))
        try rig.waitForButton("release", 1, since: mark, "TUIO cursor left alive")
        #expect(rig.daemon.isRunning)
    }

    @Test func twoTUIOFingersScrollInTouchpadMode() throws {
        let (rig, tuio) = try Self.start(mode: "touchpad")
        defer { rig.stop() }
        let mark = rig.observer.mark
        var fseq: Int32 = 1
        // Two fingers side by side move down the surface together: a two-finger scroll down (wheel 5).
        for step in 0...20 {
            let y = 0.3 + Float(step) * 0.02
            try tuio.send(bytes: OSCWrite.frame(fseq: fseq, alive: [1, 2], set: [(1, 0.4, y), (2, 0.6, y)]))
            fseq += 1
            usleep(16_000)
        }
        try tuio.send(bytes: OSCWrite.frame(fseq: fseq, alive: [], set: []))
        let wheel = rig.observer.waitFor(from: mark, timeout: 20) { $0.isButton("press", 5) }
        #expect(wheel != nil, "two TUIO fingers moving down together should scroll down (button 5)\n\(rig.context(since: mark))")
        // The barrier: then one finger lands and moves on the same socket; its pointer motion comes after
        // whatever the scroll did (a scroll moves no pointer).
        try tuio.send(bytes: OSCWrite.frame(fseq: fseq + 1, alive: [9], set: [(9, 0.5, 0.5)]))
        try tuio.send(bytes: OSCWrite.frame(fseq: fseq + 2, alive: [9], set: [(9, 0.6, 0.5)]))
        guard let marker = rig.observer.waitFor(from: mark, timeout: 20, { $0.kind == "motion" }) else {
            throw RigError("one TUIO finger moving after the scroll moved no pointer\n" + rig.context(since: mark))
        }
        #expect(wheel.map { marker.index > $0.index } ?? true, "the scroll moved the pointer: the barrier is not after it\n\(rig.context(since: mark))")
        #expect(!rig.inputEvents(from: mark, before: marker.index).contains { $0.isButton("press", 4) || $0.isButton("press", 1) },
                "a two-finger scroll down pressed button 4 or 1\n\(rig.context(since: mark))")
        try tuio.send(bytes: OSCWrite.frame(fseq: fseq + 3, alive: [], set: []))
    }

    @Test func aTUIOSourceOutsideAllowIsDropped() throws {
        // 127.0.0.2 is allowed: the barrier's sender.
        let (rig, tuio) = try Self.start(extraArguments: ["--allow", "10.0.0.0/8,127.0.0.2"])
        defer { rig.stop() }
        let allowed = try PoseAISender(port: tuio.port, source: "127.0.0.2")
        let mark = rig.observer.mark
        try tuio.send(bytes: OSCWrite.frame(fseq: 1, alive: [3], set: [(3, 0.5, 0.5)]))
        try rig.daemon.waitForLog(containing: "dropped a TUIO datagram from [IPv4]127.0.0.1", "refused source logged")
        try rig.daemon.waitForLog(containing: "source outside --allow", "reason logged")
        // The barrier: an allowed source's frame on the same socket, handled after the refused one.
        let target = (x: Rig.expectedPixel(raw: 1024, size: 1920), y: Rig.expectedPixel(raw: 1024, size: 1080))
        try allowed.send(bytes: OSCWrite.frame(fseq: 10, alive: [4], set: [(4, 0.25, 0.25)]))
        let marker = try rig.waitForMotion(to: target.x, target.y, since: mark, "an allowed source's frame after the refused one")
        let before = rig.inputEvents(from: mark, before: marker.index)
        #expect(before.isEmpty, "a TUIO source outside --allow reached X: \(before.map(\.text))\n\(rig.context(since: mark))")
        let lift = rig.observer.mark
        try allowed.send(bytes: OSCWrite.frame(fseq: 11, alive: [], set: []))
        try rig.waitForButton("release", 1, since: lift, "the allowed source's touch lifted")
    }
}
