// The decoder held to Foundation's JSONSerialization on a generated corpus.
//
// Reference = JSONSerialization.jsonObject(with:options: []) plus the touch-field rules applied to
// the dictionary it returns (written here again, independently, with Foundation and String APIs).
// Where JSONSerialization deliberately differs from the decoder, the reference states the decoder's
// rule explicitly instead of hiding the documents:
// - Encodings: JSONSerialization also detects UTF-16/32; the decoder reads UTF-8 only, so a document
//   with a NUL byte or a UTF-16 byte order mark is rejected (in UTF-8 a raw NUL is never valid).
// - Trailing commas (`{"a":1,}`), which JSONSerialization tolerates, are rejected.
// - JSONSerialization drops a raw U+FEFF at the start of a string; the reference first rewrites
//   every raw U+FEFF after the leading BOM as the escape \uFEFF, which JSON defines as the same.
// - A number beyond Double's range (1e400) rejects the document wherever it is. JSONSerialization
//   converts numbers only after parsing, so one under a key that a later duplicate overwrites
//   escapes its check; the reference reads every number token of the document with Double(_:).
// - `Orientation` integrality is judged from the number's exact decimal text (found in the raw
//   document), since JSONSerialization's Double/Decimal value can round (1e-400 reads as 0).

import Foundation
import Testing
import TouchCore
import TouchWire
import TouchTestSupport

// MARK: - Deterministic randomness

extension SplitMix64 {
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }
}

// MARK: - Corpus generation

struct CorpusGenerator {
    var rng: SplitMix64
    private var out: [UInt8] = []

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    static let alphabet = Array(PoseAIText.digits.unicodeScalars)
    static let alternativeDigits = Array("-._,".unicodeScalars)

    private mutating func emit(_ text: String) { out += text.utf8 }

    private mutating func whitespace() {
        guard rng.chance(25) else { return }
        for _ in 0..<rng.int(1...3) { emit(rng.pick([" ", "\t", "\n", "\r", " ", " "])) }
    }

    // Touch strings, as scalars.

    private mutating func digit() -> Unicode.Scalar {
        rng.chance(8) ? rng.pick(Self.alternativeDigits) : rng.pick(Self.alphabet)
    }

    private mutating func quad() -> [Unicode.Scalar] {
        switch rng.int(0...9) {
        case 0, 1: return Array("====".unicodeScalars)
        case 2: return Array("=0=0".unicodeScalars)
        default: return [digit(), digit(), digit(), digit()]
        }
    }

    private mutating func validTouches() -> [Unicode.Scalar] {
        let count = rng.chance(10) ? rng.int(7...60) : rng.int(0...6)
        var scalars: [Unicode.Scalar] = []
        for _ in 0..<count {
            scalars.append(Unicode.Scalar(UInt8(0x30 + rng.int(0...9))))
            scalars += quad()
        }
        return scalars
    }

    private mutating func validTouchState() -> [Unicode.Scalar] {
        (0..<10).flatMap { _ in quad() }
    }

    private static let badCharacters = Array(" =!*#é\u{0}\u{7F}😀\u{FEFF}a0".unicodeScalars)

    /// A touch string with one defect: a character dropped, added or replaced, or a marker mixed.
    private mutating func broken(_ valid: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var s = valid.isEmpty ? Array("0AAAA".unicodeScalars) : valid
        let p = rng.int(0...s.count - 1)
        switch rng.int(0...4) {
        case 0: s.remove(at: p)
        case 1: s.insert(rng.pick(Self.badCharacters + Self.alphabet), at: p)
        case 2: s[p] = rng.pick(Self.badCharacters)
        case 3: s.replaceSubrange(p..<min(p + 4, s.count), with: rng.pick(["=AAA", "A===", "=0==", "==0=", "=0=A"]).unicodeScalars)
        default: s[p] = rng.pick(Self.alphabet + Self.alternativeDigits + Array("=0123456789".unicodeScalars))
        }
        return s
    }

    // Strings.

    private static let textPool = Array(
        "abcXYZ019 _-.,/+=:{}[]\"\\\u{0}\u{1}\n\t\u{1F}\u{7F}\u{80}é中😀\u{FFFF}\u{FEFF}\u{2028}\u{0301}\u{10FFFF}".unicodeScalars)

    private mutating func text() -> [Unicode.Scalar] {
        (0..<rng.int(0...12)).map { _ in rng.chance(60) ? rng.pick(Self.alphabet) : rng.pick(Self.textPool) }
    }

    private mutating func hex4(_ value: UInt32) {
        let digits = rng.chance(50) ? "0123456789ABCDEF" : "0123456789abcdef"
        emit("\\u")
        for shift in stride(from: 12, through: 0, by: -4) {
            let d = Int((value >> UInt32(shift)) & 0xF)
            emit(String(digits[digits.index(digits.startIndex, offsetBy: d)]))
        }
    }

    /// A JSON string literal for `scalars`, escaping what must be and, at `escapePercent`, others.
    private mutating func stringLiteral(_ scalars: [Unicode.Scalar], escapePercent: Int = 0) {
        emit("\"")
        for scalar in scalars {
            let v = scalar.value
            if scalar == "\"" || scalar == "\\" || v < 0x20 || rng.chance(escapePercent) {
                switch scalar {
                case "\"": emit("\\\"")
                case "\\": emit("\\\\")
                case "/": emit(rng.chance(50) ? "\\/" : "/")
                case "\n" where rng.chance(50): emit("\\n")
                case "\t" where rng.chance(50): emit("\\t")
                default:
                    if v > 0xFFFF {
                        let u = v - 0x10000
                        hex4(0xD800 + (u >> 10))
                        hex4(0xDC00 + (u & 0x3FF))
                    } else {
                        hex4(v)
                    }
                }
            } else {
                emit(String(scalar))
            }
        }
        emit("\"")
    }

    /// Escapes and UTF-8 sequences at the edges of validity: surrogates, overlongs, the ends of each
    /// UTF-8 lead byte's range. About half are valid.
    static let edgeStringContents: [[UInt8]] = [
        #"\uD800"#, #"\uDC00"#, #"\uDFFFx"#, #"\uDC00\uD800"#, #"\uD83Dx"#, #"\uD800\uDBFF"#, #"\uD800\u0041"#,
        #"\uDBFF\uDFFF"#, #"\uD800\uDC00"#, #"\ud7ff"#, #"\ue000"#, #"\x"#, #"\'"#, #"\U0041"#, #"\u12G4"#,
        #"\u00"#, #"\"#, #"\u0000"#, #"\uFEFF"#,
    ].map { Array($0.utf8) } + [
        [0xFF], [0xFE], [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0x80, 0x80],
        [0xE0, 0x9F, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
        [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
        [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
        [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xE2, 0x28, 0xA1], [0x01], [0x1F], [0x7F],
    ]

    /// A string literal with one edge case from `edgeStringContents`, valid or not.
    private mutating func badStringLiteral() {
        emit("\"x")
        out += rng.pick(Self.edgeStringContents)
        emit("y\"")
    }

    // Numbers.

    static let edgeNumbers = [
        "0", "-0", "0.0", "-0.0", "0e0", "0E+0", "0e-5", "0.000e999999999999", "1e308", "1e309", "1e400", "-1e400",
        "1e-400", "-1e-400", "1.7976931348623157e308", "1.7976931348623158e308", "1.797693134862315807e308",
        "1.797693134862315808e308", "-1.797693134862315808e308", "17976931348623158079e289", "0.17976931348623158e310",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.99",
        "1" + String(repeating: "0", count: 308), "1" + String(repeating: "0", count: 309),
        "123456789012345678901234567890", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
        "-9223372036854775809", "9007199254740993", "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "1e-323", "0.1e1", "10e-1", "1E+2", "1e-0", "5e-1", "1e99999999999999999999", "1e-99999999999999999999",
        "0." + String(repeating: "0", count: 400) + "1", "1." + String(repeating: "0", count: 60) + "1",
    ]

    static let invalidNumbers = ["01", "-01", "00", "1.", ".5", "+1", "-", "1e", "1e+", "NaN", "Infinity", "-Infinity",
                                 "0x1", "1e+-1", "--1", "1.2.3", "1.e5", "1_0"]

    private mutating func digits(_ count: Int, leadingNonZero: Bool) -> String {
        var s = ""
        for k in 0..<count { s += String(leadingNonZero && k == 0 ? rng.int(1...9) : rng.int(0...9)) }
        return s
    }

    private mutating func number() -> String {
        switch rng.int(0...19) {
        case 0, 1: return rng.pick(Self.edgeNumbers)
        case 2: return digits(rng.int(18...400), leadingNonZero: true) + (rng.chance(50) ? "e" + String(rng.int(-400...0)) : "")
        default:
            var s = rng.chance(30) ? "-" : ""
            s += rng.chance(25) ? "0" : digits(rng.int(1...7), leadingNonZero: true)
            if rng.chance(40) { s += "." + digits(rng.int(1...8), leadingNonZero: false) }
            if rng.chance(25) {
                s += rng.pick(["e", "E"]) + rng.pick(["", "+", "-"]) + digits(rng.int(1...3), leadingNonZero: false)
            }
            return s
        }
    }

    private mutating func orientationValue() {
        switch rng.int(0...9) {
        case 0...3: emit(rng.pick(["0", "1", "2", "3", "4", "5", "6", "7", "9", "-1", "100", "-0"]))
        case 4: emit(rng.pick(["1.0", "1e0", "10e-1", "0.1e1", "3.000", "6e0", "0.0", "2E0", "300e-2", "0.00006e5",
                               "1e2", "-0.0", "4E+0", "50e-1"]))
        case 5: emit(rng.pick(["1.5", "0.5", "-0.5", "1.00000000000000001", "1e-1", "15e-1", "1e-400", "2.5e0",
                               "90071992547409935e-1", "6.000000000000000000000000000000000000001", "4.9e-324",
                               "1.0000000000000001"]))
        case 6: emit(number())
        case 7: emit(rng.pick(["\"1\"", "true", "false", "null", "[1]", "{}", "\"\""]))
        case 8: emit(rng.pick(["1e400", "1e300", "18446744073709551616", "-9223372036854775809", "1e-99999999999"]))
        default: value(depth: 2)
        }
    }

    // Values, keys, objects.

    private mutating func value(depth: Int) {
        switch rng.int(0...(depth > 0 ? 11 : 8)) {
        case 0: emit(rng.pick(["true", "false", "null"]))
        case 1, 2: emit(number())
        case 3, 4: stringLiteral(text(), escapePercent: rng.chance(20) ? 30 : 0)
        case 5: if rng.chance(15) { emit(rng.pick(Self.invalidNumbers)) } else { emit(number()) }
        case 6: if rng.chance(40) { badStringLiteral() } else { stringLiteral(text()) }
        case 7: emit(rng.pick(["[]", "{}", "[ ]", "{ }"]))
        case 8: stringLiteral(validTouches())
        case 9, 10:
            emit("[")
            let n = rng.int(0...4)
            for k in 0..<n {
                whitespace()
                value(depth: depth - 1)
                whitespace()
                if k < n - 1 { emit(",") }
            }
            emit("]")
        default:
            object(depth: depth - 1, topLevel: false)
        }
    }

    static let keyPool = ["Timestamp", "userName", "Rig", "ModelLatency", "Body", "Hands", "touches", "TOUCHES",
                          "Touches ", "Touche", "TouchStates", "orientation", "SessionUUID", "sessionUUI", "", "é",
                          "😀", "Touch\u{0}es", "Touches\u{301}", "\u{FEFF}Touches"]
    static let touchKeys = ["Touches", "TouchState", "Orientation", "sessionUUID"]

    private mutating func key(_ name: String) {
        let escape = rng.chance(12) ? rng.int(20...100) : 0
        stringLiteral(Array(name.unicodeScalars), escapePercent: escape)
    }

    private mutating func member(depth: Int, topLevel: Bool) {
        let useTouchKey = topLevel ? rng.chance(65) : rng.chance(10)
        let name = useTouchKey ? rng.pick(Self.touchKeys) : (rng.chance(70) ? rng.pick(Self.keyPool) : String(String.UnicodeScalarView(text())))
        key(name)
        whitespace()
        emit(":")
        whitespace()
        let escape = rng.chance(10) ? rng.int(10...60) : 0
        switch name {
        case "Touches":
            switch rng.int(0...9) {
            case 0...6: stringLiteral(validTouches(), escapePercent: escape)
            case 7, 8: stringLiteral(broken(validTouches()), escapePercent: escape)
            default: value(depth: depth)
            }
        case "TouchState":
            switch rng.int(0...9) {
            case 0...6: stringLiteral(validTouchState(), escapePercent: escape)
            case 7, 8: stringLiteral(broken(validTouchState()), escapePercent: escape)
            default: value(depth: depth)
            }
        case "Orientation":
            orientationValue()
        case "sessionUUID":
            if rng.chance(85) { stringLiteral(text(), escapePercent: escape) } else { value(depth: depth) }
        default:
            value(depth: depth)
        }
    }

    private mutating func object(depth: Int, topLevel: Bool) {
        emit("{")
        whitespace()
        let n = topLevel ? rng.int(0...7) : rng.int(0...3)
        for k in 0..<n {
            member(depth: depth, topLevel: topLevel)
            whitespace()
            if k < n - 1 {
                emit(",")
                whitespace()
            } else if rng.chance(2) {
                emit(",")  // a trailing comma
            }
        }
        emit("}")
    }

    /// A packet-like document: an object of touch keys and others, mostly valid.
    mutating func packet() -> [UInt8] {
        out = []
        if rng.chance(3) { out += [0xEF, 0xBB, 0xBF] }
        whitespace()
        object(depth: 3, topLevel: true)
        whitespace()
        return out
    }

    static let snippets: [[UInt8]] = [
        ",", "}", "]", "{", "[", "\"", "\\", "\\u", "\\uD800", "\\uDC00", "\\uD83D\\uDE00", "\\u0030", "\\/", " ", "\t",
        "\u{1}", "1e400", "01", "-", ".", "e5", "true", "nul", ",}", ",]", "\"x\":1,", "\"Touches\":\"0AAAA\",",
        "\"Orientation\":2,", "====", "=0=0", "é", "😀", "0", "A", "/", "=",
    ].map { Array($0.utf8) } + [[0xEF, 0xBB, 0xBF], [0x00], [0xFE, 0xFF]] + edgeStringContents

    static let interestingBytes: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A,
                                            0x2D, 0x2E, 0x30, 0x31, 0x65, 0x45, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xE0,
                                            0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0x3D, 0x41, 0x2F, 0x2B]

    /// `doc` with one to three random defects (or changes that keep it valid).
    mutating func mutate(_ original: [UInt8]) -> [UInt8] {
        var doc = original
        for _ in 0..<rng.int(1...3) {
            guard !doc.isEmpty else { return doc }
            let p = rng.int(0...doc.count - 1)
            switch rng.int(0...7) {
            case 0: doc[p] ^= 1 << UInt8(rng.int(0...7))
            case 1: doc[p] = rng.pick(Self.interestingBytes)
            case 2: doc.removeSubrange(p..<min(p + rng.int(1...4), doc.count))
            case 3: doc.insert(contentsOf: rng.pick(Self.snippets), at: p)
            case 4: doc.removeSubrange(p...)
            case 5:
                let end = min(p + rng.int(1...12), doc.count)
                doc.insert(contentsOf: doc[p..<end], at: rng.int(0...doc.count))
            case 6: doc[p] = UInt8(truncatingIfNeeded: rng.next())
            default: if p + 1 < doc.count { doc.swapAt(p, p + 1) }
            }
        }
        return doc
    }

    /// Documents the packet generator rarely makes: deep nesting, non-objects, encodings, size edges.
    mutating func special() -> [UInt8] {
        switch rng.int(0...9) {
        case 0, 1:
            let depth = rng.int(505...520)
            var open = "", close = ""
            for _ in 0..<depth {
                if rng.chance(50) { open += "["; close = "]" + close } else { open += "{\"k\":"; close = "}" + close }
            }
            let inner = open + "1" + (rng.chance(90) ? close : String(close.dropLast()))
            return Array((rng.chance(50) ? #"{"Touches":"0AAAA","deep":"# + inner + "}" : inner).utf8)
        case 2:
            return Array(rng.pick(["", " ", "[]", "[1,2]", "\"Touches\"", "1", "-0", "true", "null", "{}", " {} ",
                                   "[{\"Touches\":\"0AAAA\"}]", "{}{}", "{} x", "{\"a\":1}}"]).utf8)
        case 3:
            // UTF-16 or UTF-32 encodings of a packet, which JSONSerialization would read.
            let text = String(decoding: packet(), as: UTF8.self)
            let units = Array(text.utf16)
            switch rng.int(0...2) {
            case 0: return [0xFF, 0xFE] + units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            case 1: return units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            default: return text.unicodeScalars.flatMap { s in [UInt8(s.value & 0xFF), UInt8((s.value >> 8) & 0xFF), UInt8(s.value >> 16), 0] }
            }
        case 4:
            // A raw U+FEFF at the start of a touch string or key (JSONSerialization drops it).
            let bom = "\u{FEFF}"
            return Array(rng.pick([#"{"Touches":"\#(bom)0AAAA"}"#, #"{"\#(bom)Touches":"0AAAA"}"#,
                                   #"{"Touches":"0AAAA","x":"\#(bom)"}"#, #"{"Orientation":1,"\#(bom)":2}"#]).utf8)
        case 5:
            // Sizes around the limit: a long Touches or a long ignored string.
            let target = PoseAIDecoder.maxPacketBytes + rng.int(-3...3)
            if rng.chance(50) {
                let head = #"{"Touches":""#, tail = #""}"#
                let events = (target - head.utf8.count - tail.utf8.count) / 5
                var body = Array(head.utf8)
                for i in 0..<events { body += Array("\(i % 10)".utf8) + Array("AB/+".utf8) }
                body += Array(String(repeating: " ", count: target - body.count - tail.utf8.count).utf8)
                return body + Array(tail.utf8)
            } else {
                let head = #"{"Orientation":2,"pad":""#, tail = #""}"#
                return Array((head + String(repeating: "x", count: target - head.utf8.count - tail.utf8.count) + tail).utf8)
            }
        case 6:
            // Escapes everywhere, valid or not.
            out = []
            emit("{")
            key("Touches")
            emit(":")
            stringLiteral(validTouches(), escapePercent: 100)
            emit(",")
            key(rng.pick(Self.touchKeys))
            emit(":")
            badStringLiteral()
            emit("}")
            return out
        case 7:
            // Duplicate touch keys.
            out = []
            emit("{")
            for k in 0..<rng.int(2...6) {
                if k > 0 { emit(",") }
                member(depth: 1, topLevel: true)
            }
            emit("}")
            return out
        default:
            return mutate(mutate(packet()))
        }
    }

    mutating func document() -> [UInt8] {
        switch rng.int(0...99) {
        case 0..<45: return packet()
        case 45..<80: return mutate(packet())
        default: return special()
        }
    }
}

// MARK: - The reference

struct Outcome: Equatable, CustomStringConvertible {
    var events: [TouchEvent] = []
    var hasTouches = false
    var state: TouchState?
    var orientation: DeviceOrientation?
    var hasSessionUUID = false

    init() {}

    init(_ packet: TouchPacket) {
        events = packet.events
        hasTouches = packet.hasTouches
        state = packet.state
        orientation = packet.orientation
        hasSessionUUID = packet.hasSessionUUID
    }

    var description: String {
        let stateText = state.map { s in (0..<10).map { "\(s[$0])" }.joined(separator: " ") } ?? "nil"
        return "events \(events) hasTouches \(hasTouches) state [\(stateText)] orientation \(orientation.map { "\($0)" } ?? "nil") hasSessionUUID \(hasSessionUUID)"
    }
}

enum Verdict: CustomStringConvertible {
    case accepted(Outcome)
    case rejected(String)

    var isAccepted: Bool { if case .accepted = self { return true } else { return false } }

    func agrees(with other: Verdict) -> Bool {
        switch (self, other) {
        case (.accepted(let a), .accepted(let b)): return a == b
        case (.rejected, .rejected): return true
        default: return false
        }
    }

    var description: String {
        switch self {
        case .accepted(let o): return "accepted: \(o)"
        case .rejected(let why): return "rejected: \(why)"
        }
    }
}

enum Reference {
    static let maxBytes = 65_536
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    static let digitValues: [Unicode.Scalar: UInt16] = {
        var values: [Unicode.Scalar: UInt16] = [:]
        for (i, c) in CorpusGenerator.alphabet.enumerated() { values[c] = UInt16(i) }
        values["-"] = 62; values["."] = 62; values["_"] = 63; values[","] = 63
        return values
    }()

    /// Rules on the raw bytes that JSONSerialization would not apply (see the file comment).
    /// Returns the document to give JSONSerialization, or why it is rejected.
    static func prepare(_ doc: [UInt8]) -> Result<[UInt8], RejectReason> {
        if doc.count > maxBytes { return .failure(.init("larger than 64 KiB")) }
        if doc.contains(0) || doc.starts(with: [0xFF, 0xFE]) || doc.starts(with: [0xFE, 0xFF]) {
            return .failure(.init("not UTF-8 (NUL byte or UTF-16 BOM)"))
        }
        // Rewrite raw U+FEFF inside strings (not right after an escaping backslash, where it is an
        // invalid escape either way); outside strings it is invalid either way.
        var adjusted: [UInt8] = []
        adjusted.reserveCapacity(doc.count)
        var i = doc.starts(with: bom) ? 3 : 0
        adjusted += doc[..<i]
        var inString = false, escaped = false
        while i < doc.count {
            if inString && !escaped && doc[i...].starts(with: bom) {
                adjusted += Array(#"\uFEFF"#.utf8)
                i += 3
                continue
            }
            let b = doc[i]
            if escaped {
                escaped = false
            } else if b == UInt8(ascii: "\\") {
                escaped = inString
            } else if b == UInt8(ascii: "\"") {
                inString.toggle()
            }
            adjusted.append(b)
            i += 1
        }
        return .success(adjusted)
    }

    struct RejectReason: Error { var text: String; init(_ text: String) { self.text = text } }

    /// What JSONSerialization's result hides: trailing commas, and the text of the number that is
    /// the last top-level `Orientation` value. `doc` is known to be JSON to JSONSerialization.
    static func rawFacts(_ doc: [UInt8]) -> (hasTrailingComma: Bool, hasInfiniteNumber: Bool, orientationToken: String?) {
        var trailingComma = false
        var infiniteNumber = false
        var orientation: String? = nil
        var depth = 0
        var i = doc.starts(with: bom) ? 3 : 0
        func skipSpace(_ from: Int) -> Int {
            var j = from
            while j < doc.count, [0x20, 0x09, 0x0A, 0x0D].contains(doc[j]) { j += 1 }
            return j
        }
        while i < doc.count {
            switch doc[i] {
            case UInt8(ascii: "\""):
                var j = i + 1
                while j < doc.count && doc[j] != UInt8(ascii: "\"") { j += doc[j] == UInt8(ascii: "\\") ? 2 : 1 }
                let afterString = skipSpace(j + 1)
                if depth == 1 && afterString < doc.count && doc[afterString] == UInt8(ascii: ":") {
                    let literal = Array("[".utf8) + doc[i...min(j, doc.count - 1)] + Array("]".utf8)
                    let key = (try? JSONSerialization.jsonObject(with: Data(literal))) as? [String]
                    if key?.first == "Orientation" {
                        let start = skipSpace(afterString + 1)
                        var end = start
                        while end < doc.count, Array("+-.eE0123456789".utf8).contains(doc[end]) { end += 1 }
                        orientation = end > start ? String(decoding: doc[start..<end], as: UTF8.self) : nil
                    }
                }
                i = j + 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                i += 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var end = i
                while end < doc.count, Array("+-.eE0123456789".utf8).contains(doc[end]) { end += 1 }
                if let value = Double(String(decoding: doc[i..<end], as: UTF8.self)), !value.isFinite {
                    infiniteNumber = true
                }
                i = end
            case UInt8(ascii: ","):
                let next = skipSpace(i + 1)
                if next < doc.count && (doc[next] == UInt8(ascii: "}") || doc[next] == UInt8(ascii: "]")) {
                    trailingComma = true
                }
                i += 1
            default:
                i += 1
            }
        }
        return (trailingComma, infiniteNumber, orientation)
    }

    /// The exact value of a JSON number's text: whether it is an integer, and the integer when it
    /// is within -999...999.
    static func exactInteger(_ token: String) -> (isIntegral: Bool, small: Int?) {
        let chars = Array(token.utf8)
        var mantissa = chars[...]
        var exponent = 0
        if let e = chars.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            mantissa = chars[..<e]
            let text = String(decoding: chars[(e + 1)...], as: UTF8.self)
            exponent = Int(text) ?? (text.hasPrefix("-") ? -1_000_000_000 : 1_000_000_000)
        }
        let negative = mantissa.first == UInt8(ascii: "-")
        let unsigned = negative ? mantissa.dropFirst() : mantissa
        let parts = unsigned.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let integerDigits = parts[0].map { Int($0) - 48 }
        let digits = integerDigits + (parts.count > 1 ? parts[1].map { Int($0) - 48 } : [])
        guard let first = digits.firstIndex(where: { $0 != 0 }), let last = digits.lastIndex(where: { $0 != 0 })
        else { return (true, 0) }
        func power(_ k: Int) -> Int { integerDigits.count - 1 - k + exponent }
        guard power(last) >= 0 else { return (false, nil) }
        guard power(first) <= 2 else { return (true, nil) }
        var value = 0
        for k in first...last { value += digits[k] * [1, 10, 100][power(k)] }
        return (true, negative ? -value : value)
    }

    static func slotUpdate(_ s: ArraySlice<Unicode.Scalar>) -> SlotUpdate? {
        if Array(s) == Array("====".unicodeScalars) { return .ended }
        if Array(s) == Array("=0=0".unicodeScalars) { return .cancelled }
        let values = s.compactMap { digitValues[$0] }
        guard values.count == 4 else { return nil }
        return .position(DevicePoint(rawX: values[0] * 64 + values[1], rawY: values[2] * 64 + values[3]))
    }

    static func verdict(_ doc: [UInt8]) -> Verdict {
        let prepared: [UInt8]
        switch prepare(doc) {
        case .failure(let reason): return .rejected(reason.text)
        case .success(let bytes): prepared = bytes
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(prepared), options: [])
        } catch {
            return .rejected("JSONSerialization: \((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error)")
        }
        guard let dict = object as? [String: Any] else { return .rejected("not an object") }
        let raw = rawFacts(prepared)
        if raw.hasTrailingComma { return .rejected("trailing comma") }
        if raw.hasInfiniteNumber { return .rejected("number beyond Double") }

        var outcome = Outcome()
        if let value = dict["Touches"] {
            guard let text = value as? String else { return .rejected("Touches not a string") }
            outcome.hasTouches = true
            let scalars = Array(text.unicodeScalars)
            guard scalars.count % 5 == 0 else { return .rejected("Touches length") }
            for start in stride(from: 0, to: scalars.count, by: 5) {
                guard let slot = "0123456789".unicodeScalars.firstIndex(of: scalars[start]) else {
                    return .rejected("Touches slot")
                }
                guard let update = slotUpdate(scalars[(start + 1)..<(start + 5)]) else { return .rejected("Touches event") }
                let slotNumber = UInt8("0123456789".unicodeScalars.distance(from: "0123456789".unicodeScalars.startIndex, to: slot))
                outcome.events.append(TouchEvent(slot: slotNumber, update: update))
            }
        }
        if let value = dict["TouchState"] {
            guard let text = value as? String else { return .rejected("TouchState not a string") }
            let scalars = Array(text.unicodeScalars)
            guard scalars.count == 40 else { return .rejected("TouchState length") }
            var state = TouchState()
            for slot in 0..<10 {
                switch slotUpdate(scalars[(slot * 4)..<(slot * 4 + 4)]) {
                case .ended?: state[slot] = .free
                case .cancelled?: state[slot] = .cancelled
                case .position(let p)?: state[slot] = .down(p)
                case nil: return .rejected("TouchState slot")
                }
            }
            outcome.state = state
        }
        if let value = dict["Orientation"] {
            guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else {
                return .rejected("Orientation not a number")
            }
            guard let token = raw.orientationToken else {
                Issue.record("reference: no Orientation token found for \(number)")
                return .rejected("reference error")
            }
            let exact = exactInteger(token)
            let type = String(cString: number.objCType)
            if type == "q" || type == "Q" { #expect(exact.isIntegral, "reference: integer \(token) read as non-integral") }
            guard exact.isIntegral else { return .rejected("Orientation not integral") }
            if let small = exact.small {
                #expect(number.doubleValue == Double(small), "reference: \(token) read as \(small), Foundation \(number)")
                outcome.orientation = (0...6).contains(small) ? DeviceOrientation(rawValue: UInt8(small)) : .unknown
            } else {
                outcome.orientation = .unknown
            }
        }
        if let value = dict["sessionUUID"] {
            guard value is String else { return .rejected("sessionUUID not a string") }
            outcome.hasSessionUUID = true
        }
        return .accepted(outcome)
    }
}

// MARK: - The test

func printable(_ doc: [UInt8], limit: Int = 400) -> String {
    var s = ""
    for b in doc.prefix(limit) {
        switch b {
        case 0x20...0x7E where b != 0x5C: s.append(Character(Unicode.Scalar(b)))
        case 0x5C: s += "\\\\"
        default: s += String(format: "\\x%02X", b)
        }
    }
    return doc.count > limit ? s + "...(\(doc.count) bytes)" : s
}

/// The corpus is fixed: 8000 documents from a fixed seed. For a longer hunt, set
/// TOUCHWIRE_CORPUS_SIZE and TOUCHWIRE_CORPUS_SEED (e.g. `swift test -c release --filter decoderAgrees`).
@Test func decoderAgreesWithJSONSerializationOnAGeneratedCorpus() {
    let environment = ProcessInfo.processInfo.environment
    let seed = environment["TOUCHWIRE_CORPUS_SEED"].flatMap { UInt64($0) } ?? 0x7051_A1D0_2024_0001
    let corpusSize = environment["TOUCHWIRE_CORPUS_SIZE"].flatMap { Int($0) } ?? 8_000
    var generator = CorpusGenerator(seed: seed)
    var decoder = PoseAIDecoder()
    var accepted = 0, rejected = 0, disagreements = 0
    var rejectedByRule: [String: Int] = [:]
    var decoderReasons: [PoseAIDecodeError.Reason: Int] = [:]
    var withEvents = 0, withState = 0, withOrientation = 0, withSessionUUID = 0

    for index in 0..<corpusSize {
        let doc = generator.document()
        let expected = Reference.verdict(doc)
        let actual: Verdict
        do {
            try decoder.decode(doc)
            actual = .accepted(Outcome(decoder.packet))
        } catch {
            actual = .rejected("\(error)")
            decoderReasons[error.reason, default: 0] += 1
        }

        if case .accepted(let o) = expected {
            accepted += 1
            if !o.events.isEmpty { withEvents += 1 }
            if o.state != nil { withState += 1 }
            if o.orientation != nil { withOrientation += 1 }
            if o.hasSessionUUID { withSessionUUID += 1 }
        } else if case .rejected(let why) = expected {
            rejected += 1
            if ["trailing comma", "not UTF-8 (NUL byte or UTF-16 BOM)", "number beyond Double"].contains(why) {
                // Count what JSONSerialization alone would have accepted.
                if (try? JSONSerialization.jsonObject(with: Data(doc))) as? [String: Any] != nil {
                    rejectedByRule[why, default: 0] += 1
                }
            }
        }

        if !actual.agrees(with: expected) {
            disagreements += 1
            if disagreements <= 15 {
                Issue.record("""
                    document #\(index) (\(doc.count) bytes): \(printable(doc))
                    decoder:   \(actual)
                    reference: \(expected)
                    """)
            }
        }
    }

    let reasons = PoseAIDecodeError.Reason.allCases.compactMap { r in decoderReasons[r].map { "\(r.rawValue):\($0)" } }
    print("""
        differential corpus (seed \(seed)): \(corpusSize) documents, \(accepted) accepted, \(rejected) rejected, \(disagreements) disagreements
          accepted with events \(withEvents), TouchState \(withState), Orientation \(withOrientation), sessionUUID \(withSessionUUID)
          rejected though JSONSerialization alone accepts: \(rejectedByRule.sorted { $0.key < $1.key })
          decoder rejection reasons (raw value:count): \(reasons.joined(separator: " "))
        """)
    #expect(disagreements == 0)
    // The corpus must exercise both sides.
    #expect(accepted > corpusSize / 5 && rejected > corpusSize / 5)
}

@Test func referenceExactIntegerReading() {
    #expect(Reference.exactInteger("1").isIntegral && Reference.exactInteger("1").small == 1)
    #expect(Reference.exactInteger("10e-1").small == 1)
    #expect(Reference.exactInteger("0.1e1").small == 1)
    #expect(Reference.exactInteger("-0.0").small == 0)
    #expect(Reference.exactInteger("300e-2").small == 3)
    #expect(Reference.exactInteger("1e3").isIntegral && Reference.exactInteger("1e3").small == nil)
    #expect(!Reference.exactInteger("1e-400").isIntegral)
    #expect(!Reference.exactInteger("90071992547409935e-1").isIntegral)
    #expect(Reference.exactInteger("1e99999999999999999999").isIntegral)
}
