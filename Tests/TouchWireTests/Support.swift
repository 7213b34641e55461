// Shared helpers for the TouchWire tests.

import TouchCore
import TouchWire

/// Decodes `json` (as UTF-8) with a fresh decoder and returns the packet.
func decoded(_ json: String) throws(PoseAIDecodeError) -> TouchPacket {
    try decoded(Array(json.utf8))
}

/// Decodes `bytes` with a fresh decoder and returns the packet.
func decoded(_ bytes: [UInt8]) throws(PoseAIDecodeError) -> TouchPacket {
    var decoder = PoseAIDecoder()
    try decoder.decode(bytes)
    return decoder.packet
}

/// The error a fresh decoder throws for `bytes`, or nil if they decode.
func dropError(_ bytes: [UInt8]) -> PoseAIDecodeError? {
    do {
        _ = try decoded(bytes)
        return nil
    } catch {
        return error
    }
}

/// Why a fresh decoder drops `json`, or nil if it decodes.
func dropReason(_ json: String) -> PoseAIDecodeError.Reason? {
    dropError(Array(json.utf8))?.reason
}

/// A point from raw wire values.
func point(_ x: UInt16, _ y: UInt16) -> DevicePoint {
    DevicePoint(rawX: x, rawY: y)
}

/// Copies of datagrams in manually allocated memory, so that decoding them needs no closure
/// (a debug build may box what a closure captures).
func rawCopies(_ datagrams: [[UInt8]]) -> [UnsafeRawBufferPointer] {
    datagrams.map { bytes in
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        copy.copyBytes(from: bytes)
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(copy)[0..<bytes.count])
    }
}

func release(_ buffers: [UnsafeRawBufferPointer]) {
    for buffer in buffers { buffer.baseAddress.map { UnsafeMutableRawPointer(mutating: $0).deallocate() } }
}

/// Runs `decoder.decode` on every datagram `times` times; returns (decoded, dropped).
func decodeAll(_ datagrams: [UnsafeRawBufferPointer], with decoder: inout PoseAIDecoder, times: Int = 1) -> (Int, Int) {
    var decoded = 0, dropped = 0
    var i = 0
    while i < datagrams.count {
        var k = 0
        while k < times {
            do throws(PoseAIDecodeError) {
                try decoder.decode(datagrams[i])
                decoded += 1
            } catch {
                dropped += 1
            }
            k += 1
        }
        i += 1
    }
    return (decoded, dropped)
}
