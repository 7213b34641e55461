// The web page's WebSocket messages, classified without Hummingbird (also the `web` fuzz target's entry).
import Testing
import TouchCore
import TouchWire

@Suite struct WebMessageTests {
    private func classify(_ bytes: [UInt8], _ decoder: inout PoseAIDecoder) -> WebMessage {
        bytes.withUnsafeBytes { WebMessage.classify($0, decoder: &decoder) }
    }

    @Test func packetsGoThroughThePoseAIDecoderAndTextMustBeACommand() {
        var decoder = PoseAIDecoder()
        #expect(classify(Array(#"{"Touches":"0AAAA"}"#.utf8), &decoder) == .packet)
        #expect(decoder.packet.events.count == 1)
        guard case .undecodablePacket(let error) = classify(Array(#"{"Touches":"0AA"}"#.utf8), &decoder) else {
            Issue.record("a bad packet was not refused")
            return
        }
        #expect(error.reason == .badTouches)
        #expect(decoder.packet.events.count == 1, "a refused packet changed the decoder's packet")
        #expect(classify(Array("click left".utf8), &decoder) == .command(.click(PointerButton(rawValue: 1))))
        #expect(classify(Array("text h\u{e9}".utf8), &decoder) == .command(.text("h\u{e9}")))
        #expect(classify([], &decoder) == .notACommand)
        #expect(classify(Array("click  left".utf8), &decoder) == .notACommand)
        #expect(classify(Array("surface nan 700".utf8), &decoder) == .notACommand)
        #expect(classify(Array("text ".utf8) + [0xFF, 0xFE], &decoder) == .notACommand, "invalid UTF-8 became a command")
        #expect(classify(Array(" {}".utf8), &decoder) == .notACommand)
    }
}
