// libFuzzer target: the OSC reader, the TUIO 1.1 decoder and the core behind it. Built by
// scripts/fuzz.sh with `swiftc -sanitize=fuzzer,address`; not part of the SwiftPM package.
//
// For every input: decoding never traps; a reused decoder (state carried over from earlier inputs, as
// the listener keeps it per source) and a fresh one accept or reject the datagram alike (validation
// does not depend on state); a rejected datagram applies no frame and leaves the decoder's touches and
// frame count as they were; every frame has slots 0...9, coordinates 0...4095, at most ten touches
// down, and its TouchState agrees with each slot's last event; and after a core handles every frame and releases
// everything, no button is held and every move was on the screen.
import TouchCore
import TouchWire

// libFuzzer calls the entry point from one thread, one input at a time: the state below is never
// touched concurrently, which is why the unchecked `nonisolated(unsafe)` is sound here.
nonisolated(unsafe) private var reused = TUIODecoder()
nonisolated(unsafe) private var actions: [OutputAction] = []


private func checkFrame(_ packet: borrowing TouchPacket) {
    precondition(packet.hasTouches, "a TUIO frame without touches")
    guard let state = packet.state else { preconditionFailure("a TUIO frame without its TouchState") }
    // The last event of each slot decides its state: a position leaves it down there, an end frees it.
    var last = InlineArray<10, SlotUpdate?>(repeating: nil)
    for event in packet.events {
        precondition(event.slot <= 9, "slot out of range")
        if case .position(let p) = event.update { precondition(p.rawX <= 4095 && p.rawY <= 4095, "coordinate out of range") }
        last[Int(event.slot)] = event.update
    }
    for s in 0..<10 {
        switch last[s] {
        case .position(let p)?: precondition(state[s].point == p, "a moved slot is not down at its last position")
        case .ended?: precondition(state[s].point == nil, "an ended slot is still down")
        default: break
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTUIODecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)

    let (liveBefore, frameBefore) = (reused.liveCount, reused.currentFrame)
    var reusedFrames = 0
    let reusedError: OSCDropReason?
    do throws(OSCDropReason) {
        _ = try reused.decode(bytes) { packet in
            reusedFrames += 1
            checkFrame(packet)
        }
        reusedError = nil
    } catch {
        reusedError = error
    }
    if reusedError != nil {
        precondition(reusedFrames == 0, "a rejected datagram applied a frame")
        precondition(reused.liveCount == liveBefore && reused.currentFrame == frameBefore, "a rejected datagram changed the decoder")
    }
    precondition(reused.liveCount <= 10)

    var fresh = TUIODecoder()
    var core = TouchPipeline(configuration: .init(screen: fuzzScreen))
    actions.removeAll(keepingCapacity: true)
    var now = Instant(nanoseconds: 1_000_000_000)
    let freshError: OSCDropReason?
    do throws(OSCDropReason) {
        let outcome = try fresh.decode(bytes) { packet in
            checkFrame(packet)
            now = now + .milliseconds(5)
            core.handle(packet, at: now, into: &actions)
        }
        precondition(outcome.frames >= 0 && outcome.lateFrames >= 0 && outcome.ignoredMessages >= 0)
        freshError = nil
    } catch {
        freshError = error
    }
    precondition(freshError == reusedError, "a reused decoder and a fresh one disagree about a datagram")
    if freshError == .tooLarge { precondition(size > TUIODecoder.maxPacketBytes) }

    checkNothingHeldAfterReleaseAll(&core, actions: &actions)
    return 0
}
