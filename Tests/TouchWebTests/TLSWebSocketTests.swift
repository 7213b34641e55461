// A TLS page's WebSocket (TLSWebSocket.swift: the one reader driven in the channel's pipeline) on an
// EmbeddedChannel, with the Bridge's loop an EmbeddedEventLoop of its own: what it reads, what it answers,
// how a full queue stops the socket and how the socket's end releases. Both loops move only when the test runs them: nothing here sleeps.
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
import TouchCore
import TouchTestSupport
import TouchWire
@testable import TouchWeb

@Suite struct TLSWebSocketTests {
    /// A client's frame as the bytes the TLS handler gives: masked, as a browser sends it.
    static func frame(_ text: String, opcode: UInt8 = WebSocketWire.text, fin: Bool = true, rsv1: Bool = false) -> ByteBuffer {
        ByteBuffer(bytes: clientFrame(opcode, Array(text.utf8), fin: fin, rsv1: rsv1))
    }

    struct Setup {
        let bridge = EmbeddedEventLoop()
        let sink = RecordingSink()
        let channel: EmbeddedChannel
        let source = SourceAddress(ipv4: 0x7f00_0001, port: 5)
        init() throws {
            bridge.advanceTime(by: .seconds(1))
            let input = NIOLoopBound(WebInput(sink: sink, logger: .init(label: "test")), eventLoop: bridge)
            let connection = WebConnection(source: source, input: input, logger: .init(label: "test"), activity: PageActivity(now: bridge.now))
            channel = EmbeddedChannel(handlers: [counter, TLSWebSocket(connection: connection)])
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5)).wait()
        }
        let counter = ReadCounter()
        /// Whether a `read` of the channel gets through the reader to the socket.
        func reads() -> Bool {
            let before = counter.count
            channel.read()
            return counter.count > before
        }
    }

    /// Counts the `read`s that reach the socket's end of the pipeline.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var count = 0
        func read(context: ChannelHandlerContext) {
            count += 1
            context.read()
        }
    }

    /// Data frames go to the core; a ping is answered here; fragments are dropped; a frame with reserved
    /// bits ends the socket with 1002. Nothing goes on to NIO's decoder or Hummingbird's handler.
    @Test func framesAreReadHereAndPingsAndErrorsAnsweredHere() throws {
        let s = try Setup()
        try s.channel.writeInbound(Self.frame("text x"))
        try s.channel.writeInbound(Self.frame("ab", opcode: WebSocketWire.ping))
        try s.channel.writeInbound(Self.frame("text b", fin: false))
        try s.channel.writeInbound(Self.frame("text c", opcode: WebSocketWire.continuation))
        // Two frames in one buffer, cut in the middle of the second's header.
        var two = Self.frame("text y")
        var rest = Self.frame("text z")
        two.writeBytes(rest.readBytes(length: 3)!)
        try s.channel.writeInbound(two)
        try s.channel.writeInbound(rest)
        s.bridge.run()
        #expect(s.sink.applied == ["command \(WebCommand.text("x"))", "command \(WebCommand.text("y"))",
                                   "command \(WebCommand.text("z"))"], "\(s.sink.applied)")
        #expect(try s.channel.readOutbound(as: ByteBuffer.self).map { Array($0.readableBytesView) }
                == WebSocketWire.frame(opcode: WebSocketWire.pong, payload: Array("ab".utf8)))
        #expect(try s.channel.readInbound(as: ByteBuffer.self) == nil, "bytes went past the reader")
        #expect(s.channel.isActive)
        try s.channel.writeInbound(Self.frame("text a", rsv1: true))
        #expect(try s.channel.readOutbound(as: ByteBuffer.self).map { Array($0.readableBytesView) }
                == WebSocketWire.closeFrame(code: WebSocketWire.protocolError))
        #expect(!s.channel.isActive, "a frame with reserved bits left the socket open")
        s.bridge.run()
        #expect(s.sink.applied.last == "disconnected")
        _ = try? s.channel.finish()
    }

    /// 600 messages that may not be dropped, against a queue of 256: the reader stops reading at the
    /// first that does not fit, keeps what the socket had already given, and after the drain takes
    /// the queue, queues what it kept and reads again. Every message arrives, in order; the socket's
    /// end applies what is still queued or held, then releases.
    @Test func aFullQueueStopsReadingUntilTheDrainAndLosesNothing() throws {
        let s = try Setup()
        #expect(s.reads())
        let count = 600
        for i in 0..<300 { try s.channel.writeInbound(Self.frame("text w\(i)")) }
        #expect(!s.reads(), "a full queue left the socket reading")
        s.bridge.run()  // the drain: 256 applied; the reader is told, on its own loop
        #expect(s.sink.applied.count == InputQueue.capacity)
        s.channel.embeddedEventLoop.run()  // the reader queues what it held
        #expect(s.reads(), "the reader did not read again once what it held was queued")
        for i in 300..<count { try s.channel.writeInbound(Self.frame("text w\(i)")) }
        #expect(!s.reads())
        // The socket ends while the reader holds messages: they are applied, then the release.
        s.channel.pipeline.fireChannelInactive()
        s.bridge.run()
        let expected = (0..<count).map { "command \(WebCommand.text("w\($0)"))" } + ["disconnected"]
        let inOrder = s.sink.applied == expected
        #expect(inOrder, "\(s.sink.applied.count) applied of \(expected.count), ending \(s.sink.applied.suffix(2))")
        _ = try? s.channel.finish()
    }
}
