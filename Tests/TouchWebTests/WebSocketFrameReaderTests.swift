// The WebSocket's frame reader (WebSocketReader.swift) on an EmbeddedChannel, with the Bridge's loop an
// EmbeddedEventLoop of its own: what it reads, what it passes on, how a full queue stops the socket and
// how the socket's end releases. Both loops move only when the test runs them: nothing here sleeps.
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
import TouchCore
import TouchTestSupport
import TouchWire
@testable import TouchWeb

@Suite struct WebSocketFrameReaderTests {
    /// A client's frame: masked, as a browser sends it.
    static func frame(_ text: String, opcode: WebSocketOpcode = .text, fin: Bool = true, rsv1: Bool = false) -> WebSocketFrame {
        let key: WebSocketMaskingKey = [0x12, 0x34, 0x56, 0x78]
        var data = ByteBuffer(string: text)
        data.webSocketMask(key)
        return WebSocketFrame(fin: fin, rsv1: rsv1, opcode: opcode, maskKey: key, data: data)
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
            channel = EmbeddedChannel(handlers: [counter, WebSocketFrameReader(connection: connection)])
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

    @Test func dataFramesAreReadHereAndControlFramesGoOn() throws {
        let s = try Setup()
        try s.channel.writeInbound(Self.frame("text x"))
        try s.channel.writeInbound(Self.frame("", opcode: .ping))
        try s.channel.writeInbound(Self.frame("text a", rsv1: true))
        try s.channel.writeInbound(Self.frame("text b", fin: false))
        try s.channel.writeInbound(Self.frame("text c", opcode: .continuation))
        s.bridge.run()
        #expect(s.sink.applied == ["command \(WebCommand.text("x"))"], "\(s.sink.applied)")
        let passed = [try s.channel.readInbound(as: WebSocketFrame.self), try s.channel.readInbound(as: WebSocketFrame.self)]
        #expect(passed.map { $0?.opcode } == [.ping, .text], "control frames and reserved bits go on to the WebSocket handler")
        #expect(passed[1]?.rsv1 == true)
        #expect(try s.channel.readInbound(as: WebSocketFrame.self) == nil, "a data frame went past the reader")
        _ = try s.channel.finish()
    }

    /// 600 messages that may not be dropped, against a queue of 256: the reader stops reading at the
    /// first that does not fit, holds what the socket had already given, and after the drain takes
    /// the queue, queues what it held and reads again. Every message arrives, in order; the socket's
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
