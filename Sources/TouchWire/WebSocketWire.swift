// The WebSocket framing (RFC 6455 §5) of a page's socket, plain or TLS (`WebSocketReader`): the page's
// frames parsed in place, the server's few frames made.
// Pure: bytes in, a verdict out; no I/O (fuzzed with the page's messages, Tests/Fuzz/WebMessageFuzz.swift).

/// What the front of the bytes read so far holds.
public enum ClientFrame: Equatable, Sendable {
    /// Not a whole frame yet.
    case incomplete
    /// A whole frame of `length` bytes: its payload is `payload` (an offset and a count into the same
    /// bytes), masked with `mask` when the page masked it (RFC 6455 requires it; the server takes
    /// unmasked ones as well, as NIO's decoder did).
    case frame(Header, length: Int)
    /// A frame larger than the largest message read (close code 1009).
    case tooLarge
    /// Reserved bits, an opcode RFC 6455 does not define, a control frame that is fragmented or
    /// longer than 125 bytes (close code 1002).
    case protocolError(String)

    public struct Header: Equatable, Sendable {
        public var fin: Bool
        public var opcode: UInt8
        public var payloadOffset: Int
        public var payloadCount: Int
        /// The masking key, its first byte the highest; nil when the frame is not masked.
        public var mask: UInt32?
    }
}

public enum WebSocketWire {
    public static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2
    public static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA
    /// The longest header of a frame: 2 bytes, a 64-bit length, a masking key.
    public static let maxHeaderBytes = 14
    /// The most one read of a page's socket takes (`WebSocketReader.space`).
    public static let readBytes = 16 * 1024

    /// Close codes (RFC 6455 §7.4.1).
    public static let normalClosure: UInt16 = 1000, goingAway: UInt16 = 1001, protocolError: UInt16 = 1002
    public static let messageTooBig: UInt16 = 1009

    /// The frame at the front of `bytes`, payloads of at most `maxPayload` bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxPayload: Int) -> ClientFrame {
        guard bytes.count >= 2 else { return .incomplete }
        let first = bytes[0], second = bytes[1]
        let fin = first & 0x80 != 0
        let opcode = first & 0x0F
        guard first & 0x70 == 0 else { return .protocolError("a frame with reserved bits set") }
        let isControl = opcode & 0x8 != 0
        guard opcode <= binary || (opcode >= close && opcode <= pong) else {
            return .protocolError("a frame with opcode \(opcode), which RFC 6455 does not define")
        }
        let masked = second & 0x80 != 0
        var offset = 2
        var count = Int(second & 0x7F)
        if isControl {
            guard fin else { return .protocolError("a fragmented control frame") }
            guard count <= 125 else { return .protocolError("a control frame of over 125 bytes") }
        }
        if count == 126 {
            guard bytes.count >= 4 else { return .incomplete }
            count = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if count == 127 {
            guard bytes.count >= 10 else { return .incomplete }
            var length: UInt64 = 0
            for i in 2..<10 { length = length << 8 | UInt64(bytes[i]) }
            guard length <= UInt64(maxPayload) else { return .tooLarge }
            count = Int(length)
            offset = 10
        }
        guard count <= maxPayload else { return .tooLarge }
        var mask: UInt32?
        if masked {
            guard bytes.count >= offset + 4 else { return .incomplete }
            mask = UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
            offset += 4
        }
        guard bytes.count >= offset + count else { return .incomplete }
        return .frame(.init(fin: fin, opcode: opcode, payloadOffset: offset, payloadCount: count, mask: mask), length: offset + count)
    }

    /// Unmasks `payload` in place with the masking key `mask` (its first byte the highest).
    public static func unmask(_ payload: UnsafeMutableRawBufferPointer, with mask: UInt32) {
        for i in 0..<payload.count { payload[i] ^= UInt8(truncatingIfNeeded: mask >> UInt32(24 - 8 * (i & 3))) }
    }

    /// A server's frame (never masked, RFC 6455 §5.1): `fin`, `opcode`, then `payload`.
    public static func frame(opcode: UInt8, payload: some Collection<UInt8>) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        let count = payload.count
        frame.reserveCapacity(count + 10)
        if count < 126 {
            frame.append(UInt8(count))
        } else if count <= 0xFFFF {
            frame += [126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            frame.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF)) }
        }
        frame += payload
        return frame
    }

    /// A close frame with `code` (RFC 6455 §5.5.1).
    public static func closeFrame(code: UInt16) -> [UInt8] {
        frame(opcode: close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)])
    }
}
