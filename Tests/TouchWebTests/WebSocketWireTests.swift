// The framing of a page's socket read on the Bridge's loop (WebSocketWire.swift), checked against
// frames NIO's own encoder makes: what a browser sends (masked), split anywhere, and what is refused.
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
import TouchWire

@Suite struct WebSocketWireTests {
    /// `payload` as a client's frame, made by NIO's WebSocket encoder (the reference; it masks the data
    /// with the frame's key).
    static func clientFrame(_ payload: [UInt8], opcode: WebSocketOpcode = .text, fin: Bool = true, masked: Bool = true) throws -> [UInt8] {
        let key: WebSocketMaskingKey? = masked ? [0x12, 0x34, 0x56, 0x78] : nil
        let data = ByteBuffer(bytes: payload)
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        try channel.writeOutbound(WebSocketFrame(fin: fin, opcode: opcode, maskKey: key, data: data))
        var bytes: [UInt8] = []
        while var part = try channel.readOutbound(as: ByteBuffer.self) { bytes += part.readBytes(length: part.readableBytes)! }
        _ = try channel.finish()
        return bytes
    }

    static func parse(_ bytes: [UInt8], max: Int = 65_536) -> ClientFrame {
        bytes.withUnsafeBytes { WebSocketWire.parse($0, maxPayload: max) }
    }

    /// The payload of the whole frame `bytes`, unmasked.
    static func payload(_ bytes: [UInt8]) -> [UInt8]? {
        guard case .frame(let header, let length) = parse(bytes), length == bytes.count else { return nil }
        var copy = bytes
        return copy.withUnsafeMutableBytes { raw in
            let payload = UnsafeMutableRawBufferPointer(rebasing: raw[header.payloadOffset..<header.payloadOffset + header.payloadCount])
            if let mask = header.mask { WebSocketWire.unmask(payload, with: mask) }
            return Array(payload)
        }
    }

    @Test(arguments: [0, 1, 125, 126, 127, 65_535, 65_536])
    func aMaskedFrameOfEveryLengthClassReadsBackWhole(count: Int) throws {
        let text = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let frame = try Self.clientFrame(text)
        #expect(Self.payload(frame) == text)
        // Every cut short of the whole is incomplete, never a frame or an error.
        for cut in [0, 1, 2, 3, 5, 9, 13, frame.count - 1] where cut < frame.count {
            #expect(Self.parse(Array(frame[..<cut])) == .incomplete, "cut at \(cut) of \(frame.count)")
        }
    }

    @Test func anUnmaskedFrameIsReadAsNIOsDecoderReadIt() throws {
        let frame = try Self.clientFrame(Array("hello".utf8), masked: false)
        #expect(Self.payload(frame) == Array("hello".utf8))
    }

    @Test func twoFramesBackToBackAreReadOneAfterTheOther() throws {
        let first = try Self.clientFrame(Array("one".utf8)), second = try Self.clientFrame(Array("two!".utf8), opcode: .binary)
        guard case .frame(let header, let length) = Self.parse(first + second) else { Issue.record("no frame"); return }
        #expect(length == first.count)
        #expect(header.opcode == WebSocketWire.text && header.fin)
        guard case .frame(let next, _) = Self.parse(Array((first + second)[length...])) else { Issue.record("no second frame"); return }
        #expect(next.opcode == WebSocketWire.binary && next.payloadCount == 4)
    }

    @Test func aFrameOverTheLimitIsTooLargeBeforeItsPayloadArrives() throws {
        let frame = try Self.clientFrame([UInt8](repeating: 65, count: 70_000))
        #expect(Self.parse(Array(frame[..<14])) == .tooLarge)
        #expect(Self.parse(frame, max: 1000) == .tooLarge)
    }

    @Test func reservedBitsUnknownOpcodesAndBadControlFramesAreProtocolErrors() throws {
        var rsv = try Self.clientFrame(Array("x".utf8))
        rsv[0] |= 0x40
        #expect({ if case .protocolError = Self.parse(rsv) { return true }; return false }())
        var opcode = try Self.clientFrame(Array("x".utf8))
        opcode[0] = (opcode[0] & 0xF0) | 0x3
        #expect({ if case .protocolError = Self.parse(opcode) { return true }; return false }())
        let longPing = try Self.clientFrame([UInt8](repeating: 1, count: 126), opcode: .ping)
        #expect({ if case .protocolError = Self.parse(longPing) { return true }; return false }())
        let fragmentedClose = try Self.clientFrame([3, 232], opcode: .connectionClose, fin: false)
        #expect({ if case .protocolError = Self.parse(fragmentedClose) { return true }; return false }())
    }

    @Test(arguments: [0, 5, 125, 126, 65_535, 65_536])
    func aServerFrameIsWhatNIOsDecoderReads(count: Int) throws {
        let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = WebSocketWire.frame(opcode: WebSocketWire.text, payload: payload)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        let frame = try #require(try channel.readInbound(as: WebSocketFrame.self))
        #expect(frame.fin && frame.opcode == .text && frame.maskKey == nil)
        #expect(Array(frame.data.readableBytesView) == payload)
        _ = try channel.finish()
    }

    @Test func aCloseFrameCarriesItsCode() {
        #expect(WebSocketWire.closeFrame(code: WebSocketWire.goingAway) == [0x88, 2, 0x03, 0xE9])
    }
}
