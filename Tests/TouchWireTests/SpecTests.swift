// The wire format, case by case.

import Testing
import TouchCore
import TouchTestSupport
import TouchWire

@Suite("Touches")
struct TouchesTests {
    @Test func aaIsMinusOne() throws {
        let packet = try decoded(#"{"Touches":"0AAAA"}"#)
        #expect(packet.events == [TouchEvent(slot: 0, update: .position(point(0, 0)))])
        guard case .position(let p) = packet.events.first?.update else { Issue.record("no position"); return }
        #expect(p.x == -1)
        #expect(p.y == -1)
    }

    @Test func fSlashIsZero() throws {
        let packet = try decoded(#"{"Touches":"5f/f/"}"#)
        #expect(packet.events == [TouchEvent(slot: 5, update: .position(.centre))])
        guard case .position(let p) = packet.events.first?.update else { Issue.record("no position"); return }
        #expect(p.rawX == 2047 && p.rawY == 2047)
        #expect(p.x == 0 && p.y == 0)
    }

    @Test func slashSlashIsJustOverPlusOne() throws {
        let packet = try decoded(#"{"Touches":"9////"}"#)
        #expect(packet.events == [TouchEvent(slot: 9, update: .position(point(4095, 4095)))])
        guard case .position(let p) = packet.events.first?.update else { Issue.record("no position"); return }
        #expect(abs(p.x - 1.000489) < 1e-6)
    }

    @Test func xAndYAreSeparateTwoDigitNumbers() throws {
        // X = "BA" = 1*64+0 = 64, Y = "AB" = 0*64+1 = 1.
        let packet = try decoded(#"{"Touches":"1BAAB"}"#)
        #expect(packet.events == [TouchEvent(slot: 1, update: .position(point(64, 1)))])
    }

    @Test func everyDigitOfTheAlphabetHasItsValue() throws {
        for (value, digit) in PoseAIText.alphabet.enumerated() {
            let packet = try decoded(#"{"Touches":"0A\#(digit)\#(digit)A"}"#)
            #expect(packet.events == [TouchEvent(slot: 0, update: .position(point(UInt16(value), UInt16(value) * 64)))],
                    "digit \(digit)")
        }
    }

    @Test func alternativeDigitsMatchPlusAndSlash() throws {
        // '-' and '.' read as '+' (62), '_' and ',' as '/' (63).
        let standard = try decoded(#"{"Touches":"0+/+/1/+/+"}"#).events
        #expect(try decoded(#"{"Touches":"0-_.,1_-,."}"#).events == standard)
        #expect(try decoded(#"{"Touches":"0.,-_1,._-"}"#).events == standard)
        #expect(standard == [TouchEvent(slot: 0, update: .position(point(4031, 4031))),
                             TouchEvent(slot: 1, update: .position(point(4094, 4094)))])
    }

    @Test func endedAndCancelledMarkers() throws {
        let packet = try decoded(#"{"Touches":"3====4=0=0"}"#)
        #expect(packet.events == [TouchEvent(slot: 3, update: .ended), TouchEvent(slot: 4, update: .cancelled)])
    }

    @Test func severalEventsForOneSlotKeepOrder() throws {
        let packet = try decoded(#"{"Touches":"0AAAA0BBBB1CCCC0====0DDDD"}"#)
        #expect(packet.events == [
            TouchEvent(slot: 0, update: .position(point(0, 0))),
            TouchEvent(slot: 0, update: .position(point(65, 65))),
            TouchEvent(slot: 1, update: .position(point(130, 130))),
            TouchEvent(slot: 0, update: .ended),
            TouchEvent(slot: 0, update: .position(point(195, 195))),
        ])
    }

    @Test func emptyTouchesIsPresentWithNoEvents() throws {
        let packet = try decoded(#"{"Touches":""}"#)
        #expect(packet.hasTouches)
        #expect(packet.events.isEmpty)
    }

    @Test func absentTouchesIsNotPresent() throws {
        let packet = try decoded(#"{"Orientation":1}"#)
        #expect(!packet.hasTouches)
        #expect(packet.events.isEmpty)
    }

    @Test func fiftyEventsInOnePacket() throws {
        let packet = try decoded(#"{"Touches":"\#(touchesString(events: 50))"}"#)
        #expect(packet.events.count == 50)
        #expect(packet.events.map(\.slot) == (0..<50).map { UInt8($0 % 10) })
    }

    @Test(arguments: ["0AAA", "0AAAAA", "0AAAA0", "0====1===", "0=AAA", "0A===", "0==AA", "0=0=A", "0=0==",
                      "0====x", "0AA=A", "0AAA=", "0A A ", "0AA\u{e9}A", "0AAAA\u{1F600}AAAA"])
    func malformedTouchesAreDropped(touches: String) {
        let reason = dropReason(#"{"Touches":"\#(touches)"}"#)
        #expect(reason == .badTouches || reason == .badSlot, "\(touches)")
    }

    @Test(arguments: ["AAAAA", "aAAAA", "=====", "-AAAA", " AAAA", "\u{0660}AAAA"])
    func eventsMustStartWithASlotDigit(touches: String) {
        #expect(dropReason(#"{"Touches":"\#(touches)"}"#) == .badSlot)
    }
}

@Suite("TouchState")
struct TouchStateTests {
    @Test func allTenSlotsOfTouchState() throws {
        // Slot 0 down at (0,0), 1 free, 2 cancelled, 3 centre, 4..8 free, 9 at (4095,4095).
        let text = "AAAA" + "====" + "=0=0" + "f/f/" + String(repeating: "====", count: 5) + "////"
        let state = try #require(try decoded(#"{"TouchState":"\#(text)"}"#).state)
        var expected = TouchState()
        expected[0] = .down(point(0, 0))
        expected[2] = .cancelled
        expected[3] = .down(.centre)
        expected[9] = .down(point(4095, 4095))
        #expect(state == expected)
        for slot in [1, 4, 5, 6, 7, 8] { #expect(state[slot] == .free) }
    }

    @Test func everySlotDownAtItsOwnPoint() throws {
        let text = "AAAB" + "AAAC" + "AAAD" + "AAAE" + "AAAF" + "AAAG" + "AAAH" + "AAAI" + "AAAJ" + "BAAK"
        let state = try #require(try decoded(#"{"TouchState":"\#(text)"}"#).state)
        for slot in 0..<9 { #expect(state[slot] == .down(point(0, UInt16(slot + 1)))) }
        #expect(state[9] == .down(point(64, 10)))
    }

    @Test func alternativeDigitsInTouchState() throws {
        let a = try decoded(#"{"TouchState":"-_.,\#(String(repeating: "====", count: 9))"}"#).state
        let b = try decoded(#"{"TouchState":"+/+/\#(String(repeating: "====", count: 9))"}"#).state
        #expect(a != nil && a == b)
    }

    @Test func absentTouchStateIsNil() throws {
        #expect(try decoded(#"{"Touches":""}"#).state == nil)
    }

    @Test(arguments: [0, 4, 36, 39, 41, 44, 80])
    func touchStateOfWrongLengthIsDropped(length: Int) {
        let text = String(String(repeating: "AAAA", count: 20).prefix(length))
        #expect(dropReason(#"{"TouchState":"\#(text)"}"#) == .badTouchState)
    }

    @Test(arguments: ["=AAA", "A===", "==AA", "=0=A", "0=0=", "AA A", "AA=A", "AA\u{e9}A"])
    func touchStateWithBadSlotTextIsDropped(slotText: String) {
        let text = String(repeating: "====", count: 4) + slotText + String(repeating: "====", count: 5)
        #expect(dropReason(#"{"TouchState":"\#(text)"}"#) == .badTouchState)
    }
}

@Suite("Orientation and sessionUUID")
struct OrientationTests {
    @Test(arguments: [
        ("0", DeviceOrientation.unknown), ("1", .portrait), ("2", .portraitUpsideDown), ("3", .landscapeLeft),
        ("4", .landscapeRight), ("5", .faceUp), ("6", .faceDown),
        ("7", .unknown), ("9", .unknown), ("10", .unknown), ("-1", .unknown), ("-6", .unknown), ("255", .unknown),
        ("18446744073709551616", .unknown), ("-0", .unknown), ("0.0", .unknown), ("-0.0e7", .unknown),
        ("1.0", .portrait), ("1e0", .portrait), ("1E+0", .portrait), ("10e-1", .portrait), ("0.1e1", .portrait),
        ("3.000", .landscapeLeft), ("300e-2", .landscapeLeft), ("0.00006e5", .faceDown), ("6e0000", .faceDown),
        ("1e300", .unknown), ("1.5e1", .unknown), ("0e400", .unknown), ("1.7976931348623157e308", .unknown),
    ])
    func integralOrientationValues(text: String, expected: DeviceOrientation) throws {
        #expect(try decoded(#"{"Orientation":\#(text)}"#).orientation == expected, "\(text)")
    }

    @Test(arguments: ["1.5", "0.5", "-0.5", "1.00000000000000001", "6.000000000000000000000000000000000000001",
                      "1e-1", "1e-400", "15e-1", "90071992547409935e-1"])
    func nonIntegralOrientationIsDropped(text: String) {
        #expect(dropReason(#"{"Orientation":\#(text)}"#) == .wrongType, "\(text)")
    }

    @Test(arguments: [#""1""#, "true", "false", "null", "[1]", #"{"a":1}"#])
    func nonNumberOrientationIsDropped(value: String) {
        #expect(dropReason(#"{"Orientation":\#(value)}"#) == .wrongType)
    }

    @Test func absentOrientationIsNil() throws {
        #expect(try decoded(#"{"Touches":""}"#).orientation == nil)
    }

    @Test func sessionUUIDPresenceMakesAHello() throws {
        let hello = try decoded(#"{"sessionUUID":"{6B7C6A33-8E0B-4F4C-9B3E-5C1D2A3B4C5D}","version":"1.2"}"#)
        #expect(hello.hasSessionUUID)
        #expect(hello.isHello)
        #expect(try decoded(#"{"sessionUUID":""}"#).hasSessionUUID)
        #expect(!(try decoded(#"{"Touches":""}"#).hasSessionUUID))
        #expect(!(try decoded(#"{"sessionUUID":"x","Touches":""}"#).isHello))
    }

    @Test(arguments: ["1", "null", "true", "[]", "{}"])
    func nonStringSessionUUIDIsDropped(value: String) {
        #expect(dropReason(#"{"sessionUUID":\#(value)}"#) == .wrongType)
    }
}

@Suite("JSON handling")
struct JSONHandlingTests {
    @Test func typicalPacketDecodes() throws {
        let packet = try decoded(typicalPacket)
        #expect(packet.events == [TouchEvent(slot: 0, update: .position(.centre)),
                                  TouchEvent(slot: 1, update: .position(point(0, 0))),
                                  TouchEvent(slot: 0, update: .ended)])
        var state = TouchState()
        state[0] = .down(.centre)
        state[1] = .down(point(0, 0))
        #expect(packet.state == state)
        #expect(packet.orientation == .portrait)
        #expect(!packet.hasSessionUUID)
    }

    @Test func unknownKeysAreIgnored() throws {
        let json = #"""
        {"Timestamp": 12345.678, "userName": "x", "Body": {"Pelvis": [0.1, -2e-3, {"deep": [true, false, null]}]},
         "Touches": "0AAAA", "list": [], "obj": {}, "n": -0, "emoji": "\ud83d\ude00 \u00e9 é 😀", "touches": 5,
         "TOUCHES": [1], "Touches ": null, "Orientation2": "x"}
        """#
        let packet = try decoded(json)
        #expect(packet.events == [TouchEvent(slot: 0, update: .position(point(0, 0)))])
        #expect(packet.state == nil && packet.orientation == nil && !packet.hasSessionUUID)
    }

    @Test func keyOrderIsIrrelevant() throws {
        let members = [#""Touches":"0AAAA1////""#, #""TouchState":"\#(String(repeating: "f/f/", count: 10))""#,
                       #""Orientation":3"#, #""sessionUUID":"u""#, #""Timestamp":1.5"#]
        let reference = try decoded("{" + members.joined(separator: ",") + "}")
        for rotation in 1..<members.count {
            let rotated = Array(members[rotation...] + members[..<rotation])
            let packet = try decoded("{" + rotated.reversed().joined(separator: ",") + "}")
            #expect(packet.events == reference.events)
            #expect(packet.state == reference.state)
            #expect(packet.orientation == reference.orientation)
            #expect(packet.hasSessionUUID == reference.hasSessionUUID)
        }
    }

    @Test func whitespaceEverywhere() throws {
        let json = " \t\r\n{ \t\r\n\"Touches\" \t\r\n: \t\r\n\"0AAAA\" \t\r\n, \t\r\n\"x\"\n:\n[\n1\n,\n{\n\"y\"\n:\nnull\n}\n]\n,\"Orientation\"\r:\r2\r} \t\r\n"
        let packet = try decoded(json)
        #expect(packet.events.count == 1)
        #expect(packet.orientation == .portraitUpsideDown)
    }

    @Test(arguments: ["\u{0B}", "\u{0C}", "\u{A0}", "\u{2028}", "\u{FEFF}"])
    func onlyFourWhitespaceCharacters(space: String) {
        #expect(dropReason("{\(space)\"Touches\":\"\"}") == .notJSON)
    }

    @Test func escapedKeyIsRecognised() throws {
        #expect(try decoded(#"{"Touch\u0065s":"0AAAA"}"#).events.count == 1)
        #expect(try decoded(#"{"\u0054\u006F\u0075\u0063\u0068\u0065\u0073":"0AAAA"}"#).events.count == 1)
        #expect(try decoded(#"{"Orient\u0061tion":4}"#).orientation == .landscapeRight)
        #expect(try decoded(#"{"session\u0055UID":"x"}"#).hasSessionUUID)
        #expect(try decoded(#"{"Touch\u0053tate":"\#(String(repeating: "====", count: 10))"}"#).state == TouchState())
        // Escapes that spell something else are other keys.
        #expect(!(try decoded(#"{"Touches\u0000":"0AAAA"}"#).hasTouches))
        #expect(!(try decoded(#"{"Touch\u00e9s":"0AAAA"}"#).hasTouches))
        #expect(!(try decoded(#"{"\ud83d\ude00Touches":"0AAAA"}"#).hasTouches))
    }

    @Test func escapedTouchCharactersAreDecoded() throws {
        #expect(try decoded(#"{"Touches":"\u0030AAAA"}"#).events == [TouchEvent(slot: 0, update: .position(point(0, 0)))])
        #expect(try decoded(#"{"Touches":"0\/\/\/\/"}"#).events == [TouchEvent(slot: 0, update: .position(point(4095, 4095)))])
        #expect(try decoded(#"{"Touches":"0\u003d\u003D==1\u0041AAA"}"#).events
                == [TouchEvent(slot: 0, update: .ended), TouchEvent(slot: 1, update: .position(point(0, 0)))])
        let state = String(repeating: #"\u003d\u003d=="#, count: 10)
        #expect(try decoded(#"{"TouchState":"\#(state)"}"#).state == TouchState())
        // An escape that decodes to a character outside the alphabet is still bad.
        #expect(dropReason(#"{"Touches":"0\nAAA"}"#) == .badTouches)
        #expect(dropReason(#"{"Touches":"0A\u00c1AA"}"#) == .badTouches)
    }

    @Test func keysAreCaseSensitive() throws {
        let packet = try decoded(#"{"touches":"0AAAA","touchState":"x","orientation":"x","SessionUUID":"x","sessionuuid":1}"#)
        #expect(!packet.hasTouches && packet.state == nil && packet.orientation == nil && !packet.hasSessionUUID)
    }

    @Test func duplicateKeysLastOccurrenceWins() throws {
        #expect(try decoded(#"{"Touches":"0AAAA1AAAA","Touches":"2////"}"#).events
                == [TouchEvent(slot: 2, update: .position(point(4095, 4095)))])
        #expect(try decoded(#"{"Touches":"0AAAA","Touches":""}"#).events.isEmpty)
        #expect(try decoded(#"{"Orientation":1,"Orientation":5}"#).orientation == .faceUp)
        // A bad earlier value is replaced by a good later one...
        #expect(try decoded(#"{"Touches":"bad","Touches":"0AAAA"}"#).events.count == 1)
        #expect(try decoded(#"{"Touches":7,"Touch\u0065s":"0AAAA"}"#).events.count == 1)
        #expect(try decoded(#"{"Orientation":1.5,"Orientation":2}"#).orientation == .portraitUpsideDown)
        #expect(try decoded(#"{"sessionUUID":1,"sessionUUID":"x"}"#).hasSessionUUID)
        #expect(try decoded(#"{"TouchState":"","TouchState":"\#(String(repeating: "====", count: 10))"}"#).state != nil)
        // ...and a good earlier value by a bad later one.
        #expect(dropReason(#"{"Touches":"0AAAA","Touches":"bad"}"#) == .badSlot)
        #expect(dropReason(#"{"Orientation":1,"Orientation":"1"}"#) == .wrongType)
        #expect(dropReason(#"{"sessionUUID":"x","sessionUUID":null}"#) == .wrongType)
        #expect(dropReason(#"{"TouchState":"\#(String(repeating: "====", count: 10))","TouchState":""}"#) == .badTouchState)
    }

    @Test func leadingByteOrderMarkIsSkipped() throws {
        let body = Array(#"{"Touches":"0AAAA"}"#.utf8)
        #expect(try decoded([0xEF, 0xBB, 0xBF] + body).events.count == 1)
        #expect(try decoded([0xEF, 0xBB, 0xBF, 0x20, 0x0A] + body).events.count == 1)
        #expect(dropError([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + body)?.reason == .notJSON)
        #expect(dropError([0x20, 0xEF, 0xBB, 0xBF] + body)?.reason == .notJSON)
        #expect(dropError([0xEF, 0xBB] + body)?.reason == .notJSON)
    }

    @Test func byteOrderMarkInsideAStringIsACharacter() throws {
        // JSONSerialization drops a raw U+FEFF at the start of a string; here it is kept, so it is
        // not a slot digit.
        #expect(dropError(Array(#"{"Touches":""#.utf8) + [0xEF, 0xBB, 0xBF] + Array(#"0AAAA"}"#.utf8))?.reason == .badSlot)
        #expect(try decoded(Array(#"{"x":""#.utf8) + [0xEF, 0xBB, 0xBF] + Array(#""}"#.utf8)).events.isEmpty)
    }

    @Test func surrogatePairsAreAcceptedAndLoneSurrogatesAreNot() throws {
        _ = try decoded(#"{"a":"\ud83d\ude00","b":"\uD800\uDC00\uDBFF\uDFFF"}"#)
        for bad in [#"\uD800"#, #"\uDC00"#, #"\uD800x"#, #"\uD800\n"#, #"\uD800\uD800"#, #"\uD800\u0041"#,
                    #"\uDFFF\uD800"#, #"\ud83d"#] {
            #expect(dropReason(#"{"a":"\#(bad)"}"#) == .badSurrogate, "\(bad)")
        }
    }

    @Test func allSimpleEscapesAreAccepted() throws {
        _ = try decoded(#"{"a":"\"\\\/\b\f\n\r\t\u0000\u001f\uFFFF\uffff"}"#)
    }

    @Test(arguments: [#"{"a":0}"#, #"{"a":-0}"#, #"{"a":-0.0}"#, #"{"a":1.5e10}"#, #"{"a":1E-7}"#,
                      #"{"a":1e+05}"#, #"{"a":123456789012345678901234567890}"#, #"{"a":0.000}"#,
                      #"{"a":1e-400}"#, #"{"a":1.7976931348623157e308}"#, #"{"a":-1.797693134862315807e308}"#,
                      #"{"a":0e99999999999999999999}"#, #"{"a":[1,-1,0.5,-0.5]}"#])
    func validNumbersAreAccepted(json: String) throws {
        _ = try decoded(json)
    }

    @Test(arguments: ["01", "-01", "00", "1.", ".5", "-.5", "+1", "-", "1e", "1e+", "1E-", "1.e5", "0x10", "NaN",
                      "Infinity", "-Infinity", "1.5.2", "1e5e5", "--1", "1_000", "٣"])
    func invalidNumbersAreDropped(number: String) {
        let reason = dropReason(#"{"a":\#(number)}"#)
        #expect(reason == .badNumber || reason == .notJSON, "\(number)")
    }

    @Test(arguments: ["1e400", "-1e400", "1e309", "1.8e308", "1.797693134862315808e308", "1E99999999999999999999",
                      "17976931348623158079.3729e289"])
    func numbersBeyondDoubleAreDropped(number: String) {
        #expect(dropReason(#"{"a":\#(number)}"#) == .numberOutOfRange, "\(number)")
    }

    @Test func threeHundredAndNineDigitIntegersAreTheEdge() throws {
        _ = try decoded(#"{"a":1\#(String(repeating: "0", count: 308))}"#)
        #expect(dropReason(#"{"a":1\#(String(repeating: "0", count: 309))}"#) == .numberOutOfRange)
        // 2^1024 - 2^970 exactly rounds to infinity; one less does not.
        let threshold = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792"
        #expect(dropReason(#"{"a":\#(threshold)}"#) == .numberOutOfRange)
        #expect(dropReason(#"{"a":\#(threshold).0000}"#) == .numberOutOfRange)
        _ = try decoded(#"{"a":\#(threshold.dropLast())1}"#)
        _ = try decoded(#"{"a":\#(threshold.dropLast())1.999999}"#)
    }

    @Test func failedDecodeKeepsTheLastGoodPacket() throws {
        var decoder = PoseAIDecoder()
        try decoder.decode(Array(#"{"Touches":"0AAAA1////","Orientation":3}"#.utf8))
        let good = decoder.packet
        #expect(throws: PoseAIDecodeError.self) { try decoder.decode(Array(#"{"Touches":"2AAAA","Orientation":1.5}"#.utf8)) }
        #expect(decoder.packet.events == good.events)
        #expect(decoder.packet.orientation == .landscapeLeft)
        try decoder.decode(Array(#"{"Orientation":2}"#.utf8))
        #expect(decoder.packet.events.isEmpty && !decoder.packet.hasTouches && decoder.packet.orientation == .portraitUpsideDown)
    }

    @Test func eachDecodeStartsFromAnEmptyPacket() throws {
        var decoder = PoseAIDecoder()
        try decoder.decode(Array(#"{"Touches":"0AAAA","TouchState":"\#(String(repeating: "====", count: 10))","Orientation":1,"sessionUUID":"x"}"#.utf8))
        try decoder.decode(Array("{}".utf8))
        #expect(!decoder.packet.hasTouches && decoder.packet.events.isEmpty)
        #expect(decoder.packet.state == nil && decoder.packet.orientation == nil && !decoder.packet.hasSessionUUID)
    }

    @Test func packetOf64KiBIsAccepted() throws {
        let head = #"{"pad":""#, tail = #""}"#
        let json = head + String(repeating: "x", count: PoseAIDecoder.maxPacketBytes - head.utf8.count - tail.utf8.count) + tail
        #expect(json.utf8.count == PoseAIDecoder.maxPacketBytes)
        _ = try decoded(json)
    }

    @Test func packetOver64KiBIsDropped() {
        let head = #"{"pad":""#, tail = #""}"#
        let json = head + String(repeating: "x", count: PoseAIDecoder.maxPacketBytes + 1 - head.utf8.count - tail.utf8.count) + tail
        #expect(dropError(Array(json.utf8)) == PoseAIDecodeError(.tooLarge, at: PoseAIDecoder.maxPacketBytes))
    }

    @Test func packetFullOfEventsFitsTheReservedBuffer() throws {
        let head = #"{"Touches":""#, tail = #""}"#
        let count = (PoseAIDecoder.maxPacketBytes - head.utf8.count - tail.utf8.count) / 5
        var decoder = PoseAIDecoder()
        let capacity = decoder.packet.events.capacity
        #expect(capacity >= count)
        try decoder.decode(Array((head + touchesString(events: count) + tail).utf8))
        #expect(decoder.packet.events.count == count)
        try decoder.decode(Array((head + touchesString(events: count - 1) + tail).utf8))
        #expect(decoder.packet.events.count == count - 1)
        #expect(decoder.packet.events.capacity == capacity)
    }

    @Test func nestingUpToTheLimitIsAccepted() throws {
        // The top-level object is level 1; 511 arrays inside it make 512.
        let depth = PoseAIDecoder.maxDepth - 1
        _ = try decoded(#"{"a":\#(String(repeating: "[", count: depth))\#(String(repeating: "]", count: depth))}"#)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        _ = try decoded(#"{"a":\#(objects),"Touches":"0AAAA"}"#)
    }

    @Test func deepNestingIsDroppedWithoutCrash() {
        let depth = PoseAIDecoder.maxDepth
        #expect(dropReason(#"{"a":\#(String(repeating: "[", count: depth))\#(String(repeating: "]", count: depth))}"#) == .tooDeep)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(dropReason(#"{"a":\#(objects)}"#) == .tooDeep)
        // 60 KiB of brackets, inside the object and at the top level.
        let brackets = String(repeating: "[", count: 60 * 1024)
        #expect(dropReason(#"{"a":\#(brackets)"#) == .tooDeep)
        #expect(dropReason(#"{"a":\#(String(repeating: #"{"a":"#, count: 10_000))"#) == .tooDeep)
        #expect(dropReason(brackets) == .notAnObject)
    }
}
