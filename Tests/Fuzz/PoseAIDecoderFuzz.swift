// libFuzzer target: the PoseAI decoder and the core behind it. Built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer,address`; not part of the SwiftPM package.
//
// For every input: decoding never traps; a reused decoder and a fresh one agree (no state leaks
// between datagrams); a rejected datagram leaves the last packet as it was; a decoded one has slots
// 0...9 and coordinates 0...4095; and after the core handles it and releases everything, no button
// is held and every move was on the screen.
import TouchCore
import TouchWire

// libFuzzer calls the entry point from one thread, one input at a time: the state below is never
// touched concurrently, which is why the unchecked `nonisolated(unsafe)` is sound here.
nonisolated(unsafe) private var reused = PoseAIDecoder()
nonisolated(unsafe) private var actions: [OutputAction] = []


private enum Outcome: Equatable {
    case rejected(PoseAIDecodeError)
    case decoded([TouchEvent], hasTouches: Bool, hasState: Bool)
}

private func decode(_ decoder: inout PoseAIDecoder, _ bytes: UnsafeRawBufferPointer) -> Outcome {
    do throws(PoseAIDecodeError) {
        try decoder.decode(bytes)
        return .decoded(decoder.packet.events, hasTouches: decoder.packet.hasTouches, hasState: decoder.packet.state != nil)
    } catch {
        return .rejected(error)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPoseAIDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let before = reused.packet.events
    let outcome = decode(&reused, bytes)
    var fresh = PoseAIDecoder()
    precondition(decode(&fresh, bytes) == outcome, "a reused decoder and a fresh one disagree")

    switch outcome {
    case .rejected(let error):
        precondition(reused.packet.events == before, "a rejected datagram changed the packet")
        precondition(error.offset >= 0 && error.offset <= max(size, PoseAIDecoder.maxPacketBytes), "offset out of range")
    case .decoded(let events, _, _):
        precondition(size <= PoseAIDecoder.maxPacketBytes)
        checkEventsInRange(events)
        var core = TouchPipeline(configuration: .init(screen: fuzzScreen))
        actions.removeAll(keepingCapacity: true)
        core.handle(reused.packet, at: Instant(nanoseconds: 1_000_000_000), into: &actions)
        checkNothingHeldAfterReleaseAll(&core, actions: &actions)
    }
    return 0
}
