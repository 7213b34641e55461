// Decoding allocates nothing once warm. AllocationCounter replaces malloc & co. in the test executable
// and counts calls per thread; this test's body runs on one thread with no suspension point.
//
// One caveat is the harness's, not the decoder's: Swift Testing hooks swift_willThrow to record
// where errors are thrown, and with a hook installed the runtime boxes every thrown error, typed or
// not, which allocates. So a dropped datagram is allowed exactly the allocations of one bare
// `throw` measured in the same process, and no more.

import AllocationCounter
import Testing
import TouchCore
import TouchTestSupport
import TouchWire

@inline(never)
func throwOnce(_ offset: Int) throws(PoseAIDecodeError) {
    if offset >= 0 { throw PoseAIDecodeError(.notJSON, at: offset) }
}

@Test func decodingAllocatesNothingOnceWarm() throws {
    let typical = rawCopies([Array(typicalPacket.utf8)])
    let packets = rawCopies([
        Array(#"{"Touches":"\#(touchesString(events: 50))","Orientation":3}"#.utf8),
        // Escaped keys and touch strings (the slow path), unknown nested values, a hello.
        Array(#"{"Touch\u0065s":"\u0030AAAA1\/\/\/\/","Body":{"a":[1,-2.5e-3,true,null,"\ud83d\ude00"]},"Orientation":1.0}"#.utf8),
        Array(#"{"sessionUUID":"6B7C6A33-8E0B","version":"1.2","Orientation":0}"#.utf8),
        // Duplicate Touches, and the largest Touches that fits in a datagram.
        Array(#"{"Touches":"0AAAA","Touches":"1BBBB2CCCC"}"#.utf8),
        Array(#"{"Touches":"\#(touchesString(events: 13_100))"}"#.utf8),
    ])
    let drops = rawCopies([
        Array(#"{"Touches":"0AAA"}"#.utf8),
        Array(#"{"Orientation":1.5}"#.utf8),
        Array(#"{"a":1e400}"#.utf8),
        Array(#"{"a":[[[[[[[[[[[[[[[[[[["#.utf8),
        Array(#"{"a":"\uD800"}"#.utf8),
        Array(#"{"a":1,}"#.utf8),
        [UInt8](repeating: 0x7B, count: 70_000),
    ])
    defer { release(typical + packets + drops) }
    var decoder = PoseAIDecoder()
    // Warm up every path, and the harness's throw hook.
    _ = decodeAll(typical + packets + drops, with: &decoder)
    do { try throwOnce(1) } catch {}

    // The counter counts: an array whose size the optimiser cannot know allocates once.
    let probeBefore = allocation_counter_thread_count()
    let probe = [UInt8](repeating: 1, count: 100 + Int(probeBefore % 3))
    let probeAfter = allocation_counter_thread_count()

    // What one bare typed throw costs under this test harness.
    let throwBefore = allocation_counter_thread_count()
    do { try throwOnce(2) } catch {}
    let throwCost = allocation_counter_thread_count() - throwBefore

    let c0 = allocation_counter_thread_count()
    let typicalResult = decodeAll(typical, with: &decoder, times: 1_000)
    let c1 = allocation_counter_thread_count()
    let packetsResult = decodeAll(packets, with: &decoder)
    let c2 = allocation_counter_thread_count()
    let dropsResult = decodeAll(drops, with: &decoder)
    let c3 = allocation_counter_thread_count()

    withExtendedLifetime(probe) {}
    #expect(probeAfter > probeBefore, "the malloc counter is not counting")
    #expect(c1 - c0 == 0, "1000 typical packets allocated \(c1 - c0) times")
    #expect(c2 - c1 == 0, "other packets allocated \(c2 - c1) times")
    #expect(c3 - c2 == UInt64(drops.count) * throwCost,
            "\(drops.count) drops allocated \(c3 - c2) times; one bare throw costs \(throwCost)")
    print("allocation counts: typical x1000 \(c1 - c0), other packets \(c2 - c1), \(drops.count) drops \(c3 - c2) (harness cost of one throw: \(throwCost))")
    #expect(typicalResult == (1_000, 0))
    #expect(packetsResult == (packets.count, 0))
    #expect(dropsResult == (0, drops.count))
    #expect(decoder.packet.events.count == 13_100)
}
