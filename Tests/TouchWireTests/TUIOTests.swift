// TUIO 1.1 /tuio/2Dcur and the OSC reader under it: frames into packets, late frames, malformed OSC.

import AllocationCounter
import Testing
import TouchCore
import TouchTestSupport
import TouchWire

/// Decodes and returns the packets handed out (events and state), or the error.
func decodeTUIO(_ decoder: inout TUIODecoder, _ bytes: [UInt8]) -> Result<[(events: [TouchEvent], state: TouchState?)], OSCDropReason> {
    var frames: [(events: [TouchEvent], state: TouchState?)] = []
    let result = bytes.withUnsafeBytes { raw -> Result<TUIODecoder.Outcome, OSCDropReason> in
        do throws(OSCDropReason) {
            return .success(try decoder.decode(raw) { packet in frames.append((packet.events, packet.state)) })
        } catch {
            return .failure(error)
        }
    }
    return result.map { _ in frames }
}

@Suite struct TUIOTests {
    @Test func aNewIdBeginsInTheLowestFreeSlotAndEndsWhenItLeavesAlive() throws {
        var d = TUIODecoder()
        let f1 = try decodeTUIO(&d, OSCWrite.frame(fseq: 1, alive: [7], set: [(7, 0.5, 0.25)])).get()
        #expect(f1.count == 1)
        #expect(f1[0].events == [TouchEvent(slot: 0, update: .position(DevicePoint(rawX: 2047, rawY: 1024)))])
        #expect(f1[0].state?[0] == .down(DevicePoint(rawX: 2047, rawY: 1024)))

        // A second finger, the first moves.
        let f2 = try decodeTUIO(&d, OSCWrite.frame(fseq: 2, alive: [7, 9], set: [(7, 0, 0), (9, 1, 1)])).get()
        #expect(f2[0].events == [TouchEvent(slot: 0, update: .position(DevicePoint(rawX: 0, rawY: 0))),
                                 TouchEvent(slot: 1, update: .position(DevicePoint(rawX: 4094, rawY: 4094)))])

        // 7 leaves alive: slot 0 ends; 9 stays in slot 1 without a set.
        let f3 = try decodeTUIO(&d, OSCWrite.frame(fseq: 3, alive: [9], set: [])).get()
        #expect(f3[0].events == [TouchEvent(slot: 0, update: .ended)])
        #expect(f3[0].state?[0] == .free && f3[0].state?[1] == .down(DevicePoint(rawX: 4094, rawY: 4094)))

        // A new id takes the free slot 0 again.
        let f4 = try decodeTUIO(&d, OSCWrite.frame(fseq: 4, alive: [9, 12], set: [(12, 0.5, 0.5)])).get()
        #expect(f4[0].events == [TouchEvent(slot: 0, update: .position(DevicePoint(rawX: 2047, rawY: 2047)))])

        let f5 = try decodeTUIO(&d, OSCWrite.frame(fseq: 5, alive: [], set: [])).get()
        #expect(f5[0].events == [TouchEvent(slot: 0, update: .ended), TouchEvent(slot: 1, update: .ended)])
        #expect(d.liveCount == 0)
    }

    @Test func contactsReachTheTrackerAsBeganMovedEnded() throws {
        var d = TUIODecoder()
        var tracker = ContactTracker()
        var changes: [ContactChange] = []
        for (fseq, alive, set) in [(Int32(1), [Int32(3)], [(Int32(3), Float(0.5), Float(0.5))]),
                                   (2, [3], [(3, 0.75, 0.5)]), (3, [], [])] {
            for frame in try decodeTUIO(&d, OSCWrite.frame(fseq: fseq, alive: alive, set: set)).get() {
                var packet = TouchPacket()
                packet.hasTouches = true
                packet.events = frame.events
                packet.state = frame.state
                tracker.handle(packet, at: Instant(nanoseconds: 0), into: &changes)
            }
        }
        #expect(changes == [.began(slot: 0, at: DevicePoint(rawX: 2047, rawY: 2047)),
                            .moved(slot: 0, to: DevicePoint(rawX: 3071, rawY: 2047)),
                            .ended(slot: 0)])
    }

    @Test func lateFramesAreDroppedUnlessTheJumpExceeds100() throws {
        var d = TUIODecoder()
        _ = try decodeTUIO(&d, OSCWrite.frame(fseq: 200, alive: [1], set: [(1, 0.5, 0.5)])).get()
        // Older: dropped, nothing handed out, state unchanged.
        var bytes = OSCWrite.frame(fseq: 150, alive: [], set: [])
        var outcome = try bytes.withUnsafeBytes { raw throws(OSCDropReason) in try d.decode(raw) { _ in } }
        #expect(outcome.frames == 0 && outcome.lateFrames == 1)
        #expect(d.liveCount == 1 && d.currentFrame == 200)
        // The same fseq again is accepted (the reference client's `>=`).
        #expect(try decodeTUIO(&d, OSCWrite.frame(fseq: 200, alive: [1], set: [(1, 0.6, 0.5)])).get().count == 1)
        // More than 100 lower: a restarted sender, accepted.
        bytes = OSCWrite.frame(fseq: 99, alive: [], set: [])
        outcome = try bytes.withUnsafeBytes { raw throws(OSCDropReason) in try d.decode(raw) { _ in } }
        #expect(outcome.frames == 1 && d.currentFrame == 99 && d.liveCount == 0)
        // fseq -1 (an unnumbered frame) is always applied.
        #expect(try decodeTUIO(&d, OSCWrite.frame(fseq: -1, alive: [4], set: [(4, 0.1, 0.1)])).get().count == 1)
        #expect(d.currentFrame == 99)
    }

    @Test func aliveAndSetWaitForTheirFseqAcrossDatagrams() throws {
        var d = TUIODecoder()
        let first = OSCWrite.bundle([OSCWrite.message("/tuio/2Dcur", [.s("alive"), .i(5)]),
                                     OSCWrite.message("/tuio/2Dcur", [.s("set"), .i(5), .f(0.5), .f(0.5), .f(0), .f(0), .f(0)])])
        #expect(try decodeTUIO(&d, first).get().isEmpty)
        let frames = try decodeTUIO(&d, OSCWrite.message("/tuio/2Dcur", [.s("fseq"), .i(1)])).get()
        #expect(frames.count == 1 && frames[0].events.count == 1)
    }

    @Test func otherProfilesAreIgnoredNotDropped() throws {
        var d = TUIODecoder()
        let bytes = OSCWrite.bundle([OSCWrite.message("/tuio/2Dobj", [.s("alive"), .i(1)]),
                                     OSCWrite.message("/tuio/2Dcur", [.s("fseq"), .i(1)])])
        let outcome = try bytes.withUnsafeBytes { raw throws(OSCDropReason) in try d.decode(raw) { _ in } }
        #expect(outcome == TUIODecoder.Outcome(frames: 1, lateFrames: 0, ignoredMessages: 1))
    }

    @Test func moreThanTenFingersKeepTheFirstTen() throws {
        var d = TUIODecoder()
        let ids = Array(Int32(1)...12)
        let frames = try decodeTUIO(&d, OSCWrite.frame(fseq: 1, alive: ids, set: ids.map { ($0, 0.5, 0.5) })).get()
        #expect(frames[0].events.count == 10 && d.liveCount == 10)
    }

    static let valid = OSCWrite.frame(fseq: 1, alive: [1], set: [(1, 0.5, 0.5)])

    static let malformed: [(String, [UInt8], OSCDropReason)] = [
        ("empty", [], .truncated),
        ("PoseAI JSON", Array(#"{"Touches":"0AAAA"}"#.utf8), .notOSC),
        ("bundle cut short", Array(valid.prefix(valid.count - 4)), .truncated),
        ("bundle header only", Array(valid.prefix(12)), .truncated),
        ("element size too large", OSCWrite.string("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1] + OSCWrite.be(64) + OSCWrite.string("/a"), .truncated),
        ("negative element size", OSCWrite.string("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1] + OSCWrite.be(0xFFFF_FFF0) + OSCWrite.string("/a"), .truncated),
        ("address without NUL", Array("/tuio/2Dcur_".utf8), .badString),
        ("no type tags", OSCWrite.string("/tuio/2Dcur") + OSCWrite.string("alive"), .badTypeTags),
        ("unknown type tag", OSCWrite.string("/tuio/2Dcur") + OSCWrite.string(",sZ") + OSCWrite.string("alive") + OSCWrite.be(1), .unsupportedType),
        ("int argument missing", OSCWrite.string("/tuio/2Dcur") + OSCWrite.string(",si") + OSCWrite.string("alive"), .truncated),
        ("bytes after the arguments", OSCWrite.message("/tuio/2Dcur", [.s("alive")]) + [0, 0, 0, 0], .truncated),
        ("set with a string position", OSCWrite.message("/tuio/2Dcur", [.s("set"), .i(1), .s("x"), .f(0)]), .badTUIO),
        ("set without position", OSCWrite.message("/tuio/2Dcur", [.s("set"), .i(1)]), .badTUIO),
        ("set with NaN", OSCWrite.message("/tuio/2Dcur", [.s("set"), .i(1), .f(.nan), .f(0.5)]), .badTUIO),
        ("alive with a float id", OSCWrite.message("/tuio/2Dcur", [.s("alive"), .f(1)]), .badTUIO),
        ("unknown command", OSCWrite.message("/tuio/2Dcur", [.s("jump")]), .badTUIO),
        ("no command", OSCWrite.message("/tuio/2Dcur", []), .badTUIO),
        ("fseq without frame id", OSCWrite.message("/tuio/2Dcur", [.s("fseq")]), .badTUIO),
        ("too large", [UInt8](repeating: 0x2F, count: 70_000), .tooLarge),
        ("bundles nested too deep", (0..<10).reduce(OSCWrite.message("/tuio/2Dcur", [.s("fseq"), .i(1)])) { inner, _ in OSCWrite.bundle([inner]) }, .tooDeep),
    ]

    @Test(arguments: 0..<malformed.count)
    func malformedOSCIsDroppedWithoutEffect(_ index: Int) throws {
        let (name, bytes, reason) = Self.malformed[index]
        var d = TUIODecoder()
        _ = try decodeTUIO(&d, OSCWrite.frame(fseq: 1, alive: [1], set: [(1, 0.5, 0.5)])).get()
        // A malformed element after a good frame in the same bundle: nothing of the datagram applies.
        for datagram in [bytes, OSCWrite.bundle([OSCWrite.frame(fseq: 2, alive: [], set: []), bytes])] where !(datagram.count > 65_536 && datagram != bytes) {
            let result = decodeTUIO(&d, datagram)
            guard case .failure(let got) = result else {
                Issue.record("\(name): decoded, expected \(reason)")
                continue
            }
            if datagram == bytes { #expect(got == reason, "\(name)") }
            #expect(d.liveCount == 1 && d.currentFrame == 1, "\(name): the decoder's state changed")
        }
    }

    @Test func blobsAndOtherTypesAreSkippedInOtherMessages() throws {
        var d = TUIODecoder()
        let bytes = OSCWrite.bundle([OSCWrite.message("/other", [.b([1, 2, 3, 4, 5]), .t, .i(3), .s("x")]),
                                     OSCWrite.frame(fseq: 1, alive: [2], set: [(2, 0.5, 0.5)])])
        #expect(try decodeTUIO(&d, bytes).get().count == 1)
    }

    @Test func decodingAllocatesNothingOnceWarm() throws {
        let datagrams = [OSCWrite.frame(fseq: 1, alive: [1, 2], set: [(1, 0.5, 0.5), (2, 0.1, 0.9)]),
                         OSCWrite.frame(fseq: 2, alive: [2], set: [(2, 0.2, 0.8)]),
                         OSCWrite.frame(fseq: 3, alive: [], set: []),
                         OSCWrite.frame(fseq: 1, alive: [], set: [])]  // late
        let raws = datagrams.map { bytes -> UnsafeMutableRawBufferPointer in
            let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 4)
            raw.copyBytes(from: bytes)
            return raw
        }
        defer { raws.forEach { $0.deallocate() } }
        var d = TUIODecoder()
        var frames = 0
        func run() {
            for i in 0..<raws.count {
                _ = try? d.decode(UnsafeRawBufferPointer(raws[i])) { packet in frames += packet.events.count }
            }
        }
        run()
        d.reset()
        let before = allocation_counter_thread_count()
        run()
        let after = allocation_counter_thread_count()
        #expect(after - before == 0, "decoding TUIO allocated \(after - before) times")
        #expect(frames > 0)
    }
}
