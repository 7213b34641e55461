// Every reason a datagram can be dropped, each triggered by at least one datagram.

import Testing
import TouchWire

/// Datagrams that must be dropped for each reason, with the offset reported (nil: not checked).
let dropExamples: [PoseAIDecodeError.Reason: [(bytes: [UInt8], offset: Int?)]] = [
    .tooLarge: [(Array(#"{"a":""#.utf8) + [UInt8](repeating: 0x61, count: 65_530) + Array(#""}"#.utf8), 65_536)],
    .notJSON: [
        ([], 0), (Array("   ".utf8), 3), (Array("{".utf8), 1), (Array(#"{"a""#.utf8), 4), (Array(#"{"a":}"#.utf8), 5),
        (Array(#"{"a":1,}"#.utf8), 7), (Array(#"{"a":[1,]}"#.utf8), 8), (Array(#"{"a":1 "b":2}"#.utf8), 7),
        (Array(#"{a:1}"#.utf8), 1), (Array(#"{'a':1}"#.utf8), 1), (Array(#"{"a":tru}"#.utf8), 5),
        (Array(#"{"a":nul}"#.utf8), 5), (Array(#"{"a":True}"#.utf8), 5), (Array(#"{"a":"x}"#.utf8), 8),
        (Array(#"{"a":[1}"#.utf8), 7), (Array(#"{"a":{]}"#.utf8), 6), (Array("x".utf8), 0),
        (Array(#"{"a":1}"#.utf8).dropLast(), 6), ([0xFF, 0xFE] + Array("{}".utf8), 0), ([0x7B, 0x00, 0x7D, 0x00], 1),
    ],
    .notAnObject: [
        (Array("[]".utf8), 0), (Array(#" "Touches""#.utf8), 1), (Array("1".utf8), 0), (Array("-1".utf8), 0),
        (Array("true".utf8), 0), (Array("null".utf8), 0), (Array(#"[{"Touches":"0AAAA"}]"#.utf8), 0),
    ],
    .trailingGarbage: [
        (Array(#"{"a":1}x"#.utf8), 7), (Array(#"{"a":1} {}"#.utf8), 8), (Array("{} \u{0}".utf8), 3),
        (Array(#"{}}"#.utf8), 2), (Array("{}\n,".utf8), 3),
    ],
    .invalidUTF8: [
        (Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8), 6),
        (Array(#"{"a":""#.utf8) + [0xC0, 0x80] + Array(#""}"#.utf8), 6),  // overlong NUL
        (Array(#"{"a":""#.utf8) + [0xE0, 0x80, 0xAF] + Array(#""}"#.utf8), 6),  // overlong '/'
        (Array(#"{"a":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), 6),  // UTF-8 encoded surrogate
        (Array(#"{"a":""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8), 6),  // above U+10FFFF
        (Array(#"{"a":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8), 6),  // truncated sequence
        (Array(#"{"a":""#.utf8) + [0x80] + Array(#""}"#.utf8), 6),  // stray continuation byte
        (Array(#"{""#.utf8) + [0xFE] + Array(#"":1}"#.utf8), 2),  // in a key
    ],
    .controlCharacter: [
        (Array("{\"a\":\"\u{0}\"}".utf8), 6), (Array("{\"a\":\"x\ty\"}".utf8), 7), (Array("{\"a\":\"\n\"}".utf8), 6),
        (Array("{\"Touches\":\"0AAAA\u{1F}\"}".utf8), 17),
    ],
    .badEscape: [
        (Array(#"{"a":"\x"}"#.utf8), 6), (Array(#"{"a":"\'"}"#.utf8), 6), (Array(#"{"a":"\u12"}"#.utf8), 6),
        (Array(#"{"a":"\u12G4"}"#.utf8), 6), (Array(#"{"a":"\U0041"}"#.utf8), 6), (Array(#"{"a":"\ "}"#.utf8), 6),
    ],
    .badSurrogate: [
        (Array(#"{"a":"\uD800"}"#.utf8), 6), (Array(#"{"a":"\uDC00"}"#.utf8), 6),
        (Array(#"{"a":"x\uDBFF\uDBFF"}"#.utf8), 7), (Array(#"{"\uD83D":1}"#.utf8), 2),
    ],
    .badNumber: [
        (Array(#"{"a":01}"#.utf8), 6), (Array(#"{"a":1.}"#.utf8), 7), (Array(#"{"a":-}"#.utf8), 6),
        (Array(#"{"a":1e}"#.utf8), 7), (Array(#"{"a":-a}"#.utf8), 6), (Array(#"{"a":1.e3}"#.utf8), 7),
    ],
    .numberOutOfRange: [(Array(#"{"a":1e400}"#.utf8), 5), (Array(#"{"a":[-1.8e308]}"#.utf8), 6)],
    .tooDeep: [(Array("{\"a\":".utf8) + [UInt8](repeating: 0x5B, count: 600), 516)],
    .wrongType: [
        (Array(#"{"Touches":5}"#.utf8), 11), (Array(#"{"Touches":null}"#.utf8), 11), (Array(#"{"TouchState":[]}"#.utf8), 14),
        (Array(#"{"Orientation":"1"}"#.utf8), 15), (Array(#"{"Orientation":1.5}"#.utf8), 15),
        (Array(#"{"sessionUUID":{}}"#.utf8), 15),
    ],
    .badTouches: [(Array(#"{"Touches":"0AAA"}"#.utf8), 12), (Array(#"{"Touches":"0AAAA1=AAA"}"#.utf8), 17)],
    .badSlot: [(Array(#"{"Touches":"0AAAAxAAAA"}"#.utf8), 17), (Array(#"{"Touches":"\u0041AAAA"}"#.utf8), 12)],
    .badTouchState: [
        (Array(#"{"TouchState":""}"#.utf8), 15), (Array(#"{"TouchState":"AAAA"}"#.utf8), 19),
        (Array(#"{"TouchState":"\#(String(repeating: "====", count: 10))="}"#.utf8), 55),
    ],
]

@Test(arguments: PoseAIDecodeError.Reason.allCases)
func everyDropReasonIsTriggered(reason: PoseAIDecodeError.Reason) throws {
    let examples = try #require(dropExamples[reason], "no example for \(reason)")
    #expect(!examples.isEmpty)
    for (bytes, offset) in examples {
        let error = dropError(bytes)
        let shown = String(decoding: bytes.prefix(80), as: UTF8.self)
        #expect(error?.reason == reason, "\(shown)")
        if let offset { #expect(error?.offset == offset, "\(shown)") }
    }
}

@Test func theEarliestBadFieldIsReported() {
    let error = dropError(Array(#"{"Orientation":"x","Touches":"0AAA","sessionUUID":1}"#.utf8))
    #expect(error == PoseAIDecodeError(.wrongType, at: 15))
    // A syntax error anywhere outranks bad fields: the document is not JSON at all.
    #expect(dropError(Array(#"{"Touches":"0AAA","a":01}"#.utf8))?.reason == .badNumber)
}

@Test func reasonsHaveShortPhrases() {
    for reason in PoseAIDecodeError.Reason.allCases {
        #expect(!reason.description.isEmpty && reason.description.count < 50)
    }
    #expect(PoseAIDecodeError(.badTouches, at: 12).description == "malformed Touches at byte 12")
}
