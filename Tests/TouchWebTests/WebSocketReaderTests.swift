// The one WebSocket reader (WebSocketReader.swift), sans-IO: bytes in, in any cut; messages, replies,
// the close and the pause out. Both drivers (the plain socket's on the Bridge's loop, the TLS channel's)
// carry out only what it says; their own tests are BridgeWebSocket's (WebSocketOnBridgeLoopTests) and
// TLSWebSocketTests.
import Testing
import TouchCore
import TouchWire
@testable import TouchWeb

/// A client's frame, masked as a browser sends it (`rsv1`: a reserved bit, which RFC 6455 forbids here).
func clientFrame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false) -> [UInt8] {
    var frame = WebSocketWire.frame(opcode: opcode, payload: payload)
    if !fin { frame[0] &= 0x7F }
    if rsv1 { frame[0] |= 0x40 }
    let header = frame.count - payload.count
    let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
    frame[1] |= 0x80
    frame.insert(contentsOf: key, at: header)
    for i in 0..<payload.count { frame[header + 4 + i] ^= key[i & 3] }
    return frame
}

func clientText(_ text: String, fin: Bool = true) -> [UInt8] { clientFrame(WebSocketWire.text, Array(text.utf8), fin: fin) }

/// What a reader gave: the messages offered (as the core would see them), the replies written.
private final class Outcome {
    var offered: [String] = []
    var written: [[UInt8]] = []
    /// How many more messages the queue takes (nil: all).
    var room: Int?
    var heard = 0

    func offer(_ item: InputQueue.Item) -> Bool {
        if let r = room {
            guard r > 0 else { return false }
            room = r - 1
        }
        switch item.input {
        case .command(let c): offered.append("\(c)")
        case .packet(let p): offered.append("packet \(p.events.count)")
        case .dropped(let why, _): offered.append("dropped \(why)")
        }
        return true
    }

    func run(_ reader: PageSocketReader, _ bytes: [UInt8], cut: Int = .max) -> [WebSocketStop] {
        var stops: [WebSocketStop] = []
        var at = 0
        repeat {
            let piece = Array(bytes[at..<min(bytes.count, at + cut)])
            at += piece.count
            let taken = piece.withUnsafeBytes { reader.append($0) }
            precondition(taken == piece.count)
            stops.append(reader.run(received: Instant(nanoseconds: 0), offer: offer, write: { self.written.append($0) },
                                    heard: { self.heard += 1 }))
        } while at < bytes.count
        return stops
    }
}

@Suite struct WebSocketReaderTests {
    static let max = 64 * 1024

    /// The same frames, whole or one byte at a time: the same messages, in order; a ping answered with
    /// its payload; the page's fragments dropped, counted as such (the page never sends them).
    @Test(arguments: [1, 3, 7, Int.max])
    func framesInAnyCutGiveTheSameMessagesAndReplies(cut: Int) {
        let reader = PageSocketReader(maxMessageBytes: Self.max, messages: MessageReader())
        let out = Outcome()
        let bytes = clientText("text a") + clientFrame(WebSocketWire.ping, [1, 2, 3]) + clientText("text b", fin: false)
            + clientFrame(WebSocketWire.continuation, Array("c".utf8)) + clientFrame(WebSocketWire.pong, [])
            + clientText("text d")
        let stops = out.run(reader, bytes, cut: cut)
        #expect(stops.allSatisfy { $0 == .needBytes })
        #expect(out.offered == ["\(WebCommand.text("a"))", "dropped \(WebDrop.fragmented)", "dropped \(WebDrop.fragmented)",
                                "\(WebCommand.text("d"))"], "\(out.offered)")
        #expect(out.written == [WebSocketWire.frame(opcode: WebSocketWire.pong, payload: [1, 2, 3])])
        #expect(reader.unread == 0 && out.heard >= 1)
    }

    /// The close handshake: the page's code echoed, then the end; nothing behind it is read.
    @Test func theCloseIsEchoedAndEndsTheReading() {
        let reader = PageSocketReader(maxMessageBytes: Self.max, messages: MessageReader())
        let out = Outcome()
        let stops = out.run(reader, clientFrame(WebSocketWire.close, [0x03, 0xE9]) + clientText("text late"))
        #expect(stops == [.closed(nil)])
        #expect(out.written == [WebSocketWire.closeFrame(code: 1001)])
        #expect(out.offered.isEmpty && reader.isClosed)
    }

    /// A frame over the largest message ends the socket with 1009 before its payload arrives; reserved
    /// bits with 1002. Each says why, for the drop line.
    @Test func aFrameTooLargeOrForbiddenEndsTheSocketWithItsCode() {
        let large = PageSocketReader(maxMessageBytes: 100, messages: MessageReader())
        let out = Outcome()
        let header = Array(clientFrame(WebSocketWire.text, Array(repeating: 0x20, count: 101)).prefix(8))
        #expect(out.run(large, header) == [.closed(.tooLarge)])
        #expect(out.written == [WebSocketWire.closeFrame(code: WebSocketWire.messageTooBig)])

        let forbidden = PageSocketReader(maxMessageBytes: 100, messages: MessageReader())
        let other = Outcome()
        let stops = other.run(forbidden, clientText("text a") + clientFrame(WebSocketWire.text, Array("text b".utf8), rsv1: true))
        #expect(stops == [.closed(.protocolError("a frame with reserved bits set"))])
        #expect(other.offered == ["\(WebCommand.text("a"))"])
        #expect(other.written == [WebSocketWire.closeFrame(code: WebSocketWire.protocolError)])
    }

    /// A full queue: the message it does not take is held and the reader pauses (its driver stops
    /// reading the socket); `resume` offers it first and reads on, in order; at the socket's end
    /// `flush` gives the held message and every whole one behind it, with nothing lost or reordered.
    @Test func aFullQueuePausesTheReaderWhichHoldsOneMessageAndLosesNothing() {
        let reader = PageSocketReader(maxMessageBytes: Self.max, messages: MessageReader())
        let out = Outcome()
        out.room = 2
        let bytes = (0..<6).flatMap { clientText("text w\($0)") }
        #expect(out.run(reader, bytes) == [.paused])
        #expect(out.offered == ["\(WebCommand.text("w0"))", "\(WebCommand.text("w1"))"])
        #expect(reader.held != nil)
        // Still full: paused again, the same message held.
        #expect(reader.resume(received: Instant(nanoseconds: 0), offer: out.offer, write: { out.written.append($0) }) == .paused)
        out.room = 1
        #expect(reader.resume(received: Instant(nanoseconds: 0), offer: out.offer, write: { out.written.append($0) }) == .paused)
        #expect(out.offered.count == 3)
        // The socket ends: the held one and the two behind it.
        var last: [String] = []
        out.room = nil
        reader.flush(received: Instant(nanoseconds: 0)) { item in
            if case .command(let c) = item.input { last.append("\(c)") }
        }
        #expect(out.offered + last == (0..<6).map { "\(WebCommand.text("w\($0)"))" }, "\(out.offered + last)")
        #expect(reader.held == nil)
    }

    /// The buffer takes the largest frame and one read behind it, never more: what does not fit stays
    /// with the driver, and goes in once the frames in front are read.
    @Test func theBufferIsBoundedAndTakesTheRestOnceRead() {
        let reader = PageSocketReader(maxMessageBytes: 1000, messages: MessageReader())
        let out = Outcome()
        let frame = clientText("text " + String(repeating: "x", count: 900))
        let many = Array((0..<40).map { _ in frame }.joined())
        var at = 0
        var rounds = 0
        while at < many.count && rounds < 100 {
            let taken = many[at...].withUnsafeBytes { reader.append($0) }
            #expect(taken <= reader.capacity)
            at += taken
            _ = reader.run(received: Instant(nanoseconds: 0), offer: out.offer, write: { _ in })
            rounds += 1
        }
        #expect(out.offered.count == 40 && reader.unread == 0, "\(out.offered.count) read in \(rounds) rounds")
        #expect(rounds > 1, "the buffer took \(many.count) bytes at once")
    }
}
