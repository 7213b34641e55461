// The recording format of `touchbridge record` and `touchbridge replay`: JSON lines.
//
//   {"recording":"touchbridge","format":1}                      first line (replay requires it)
//   {"t":0.016667,"from":"192.168.1.20:49152","packet":"{\"Touches\":\"0f/f/\"}"}
//   {"t":0.033333,"from":"192.168.1.20:49152","bytes":[123,34,0,255]}
//
// One line per datagram, in the order received: `t` is seconds since the first datagram, `from` the
// sender, `packet` the datagram as a JSON string when it is valid UTF-8, else `bytes` its octets.
// Replay requires the header as its first line (blank lines and `#` comments aside) and refuses any
// other format; after it, every line is a datagram: `t` and `packet` (a string) or `bytes` (octets).
// Replay sends the lines in file order: a `t` earlier than the line before it is sent at once, not
// reordered. A line replay cannot use (bad JSON, a lone UTF-16 surrogate, `t` outside 0...`maxSeconds`,
// a datagram larger than UDP carries) is an error naming its line number, never a crash.

enum RecordingFormat {
    static let header = #"{"recording":"touchbridge","format":1}"#

    /// The largest `t` replay accepts, in seconds (about 115 days): far past any recording, and small
    /// enough that every offset is a whole number of nanoseconds on CLOCK_MONOTONIC without overflow.
    static let maxSeconds: Double = 10_000_000

    /// The largest datagram: what one UDP datagram over IPv4 carries (65535 - 20 - 8 bytes).
    static let maxDatagramBytes = 65_507

    /// One line (without the newline) for a datagram received `seconds` after the first.
    static func line(seconds: Double, from source: String, datagram: UnsafeRawBufferPointer) -> String {
        var out = "{\"t\":"
        out += formatSeconds(seconds)
        out += ",\"from\":"
        appendString(Array(source.utf8)[...], to: &out)
        let bytes = Array(datagram)
        if String(validating: bytes, as: UTF8.self) != nil {
            out += ",\"packet\":"
            appendString(bytes[...], to: &out)
        } else {
            out += ",\"bytes\":["
            out += bytes.map { String($0) }.joined(separator: ",")
            out += "]"
        }
        out += "}"
        return out
    }

    /// Microsecond precision, no exponent.
    static func formatSeconds(_ seconds: Double) -> String {
        let micros = Int64((max(seconds, 0) * 1_000_000).rounded())
        let whole = micros / 1_000_000
        let fraction = String(micros % 1_000_000)
        return "\(whole)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// A JSON string of valid UTF-8 bytes: quotes, backslashes and control characters escaped.
    static func appendString(_ bytes: ArraySlice<UInt8>, to out: inout String) {
        var escaped: [UInt8] = [0x22]
        escaped.reserveCapacity(bytes.count + 8)
        let hex = Array("0123456789abcdef".utf8)
        for b in bytes {
            switch b {
            case 0x22: escaped += [0x5C, 0x22]
            case 0x5C: escaped += [0x5C, 0x5C]
            case 0x0A: escaped += [0x5C, 0x6E]
            case 0x0D: escaped += [0x5C, 0x72]
            case 0x09: escaped += [0x5C, 0x74]
            case 0..<0x20: escaped += [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: escaped.append(b)
            }
        }
        escaped.append(0x22)
        out += String(decoding: escaped, as: UTF8.self)
    }

    /// One datagram of a recording.
    struct Entry: Equatable {
        var seconds: Double
        var datagram: [UInt8]
    }

    struct ParseError: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    /// Parses a whole recording: the header first (blank lines and `#` comments aside; format 1, the
    /// one this replay reads), then one datagram per line, each with a numeric `t` and a `packet` string
    /// or a `bytes` array. Anything else is an error naming its line.
    static func parse(_ text: [UInt8]) throws(ParseError) -> [Entry] {
        var entries: [Entry] = []
        var lineNumber = 0
        var sawHeader = false
        for line in text.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            var parser = LineParser(bytes: Array(line))
            parser.skipSpace()
            if parser.atEnd || parser.peek == UInt8(ascii: "#") { continue }
            let fields: [String: Value]
            do throws(LineParser.Failure) {
                fields = try parser.object()
            } catch {
                throw ParseError(line: lineNumber, message: error.message)
            }
            if !sawHeader {
                guard case .string(let name) = fields["recording"], name == Array("touchbridge".utf8) else {
                    throw ParseError(line: lineNumber, message: "not a touchbridge recording: the first line must be the header \(header)")
                }
                guard case .number(let format) = fields["format"], format == 1 else {
                    throw ParseError(line: lineNumber, message: "a recording of format 1 is what this replay reads, the header says \(fields["format"].map(\.shown) ?? "none")")
                }
                sawHeader = true
                continue
            }
            let datagram: [UInt8]
            switch (fields["packet"], fields["bytes"]) {
            case (.string(let bytes)?, nil):
                datagram = bytes
            case (nil, .numbers(let numbers)?):
                guard numbers.allSatisfy({ $0 >= 0 && $0 <= 255 && $0 == $0.rounded() }) else {
                    throw ParseError(line: lineNumber, message: "\"bytes\" must hold integers 0...255")
                }
                datagram = numbers.map { UInt8($0) }
            case (nil, nil):
                throw ParseError(line: lineNumber, message: "a datagram needs \"packet\" (a string) or \"bytes\" (an array of octets)")
            case (_?, _?):
                throw ParseError(line: lineNumber, message: "a datagram has \"packet\" or \"bytes\", not both")
            case (_?, nil):
                throw ParseError(line: lineNumber, message: "\"packet\" must be a string")
            case (nil, _?):
                throw ParseError(line: lineNumber, message: "\"bytes\" must be an array of octets")
            }
            guard case .number(let t) = fields["t"], t >= 0, t <= maxSeconds else {
                throw ParseError(line: lineNumber, message: "a datagram needs \"t\", seconds from 0 to \(Int(maxSeconds))")
            }
            guard datagram.count <= maxDatagramBytes else {
                throw ParseError(line: lineNumber, message: "a datagram of \(datagram.count) bytes is larger than UDP carries (\(maxDatagramBytes))")
            }
            entries.append(Entry(seconds: t, datagram: datagram))
        }
        guard sawHeader else { throw ParseError(line: lineNumber, message: "empty: not even the header \(header)") }
        return entries
    }

    enum Value {
        case string([UInt8])
        case number(Double)
        case numbers([Double])
        case other

        /// The value in an error message.
        var shown: String {
            switch self {
            case .string(let bytes): return "\"" + String(decoding: bytes.prefix(40), as: UTF8.self) + "\""
            case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
            case .numbers: return "an array"
            case .other: return "true, false or null"
            }
        }
    }

    /// A flat JSON object of strings, numbers and arrays of numbers (other values are skipped only
    /// if they are true, false or null).
    struct LineParser {
        struct Failure: Error { var message: String }
        var bytes: [UInt8]
        var i = 0
        var atEnd: Bool { i >= bytes.count }
        var peek: UInt8 { bytes[i] }

        mutating func skipSpace() {
            while i < bytes.count, [0x20, 0x09, 0x0D].contains(bytes[i]) { i += 1 }
        }

        mutating func expect(_ c: Character) throws(Failure) {
            skipSpace()
            guard !atEnd, peek == c.asciiValue! else { throw Failure(message: "expected '\(c)' at column \(i + 1)") }
            i += 1
        }

        mutating func object() throws(Failure) -> [String: Value] {
            var fields: [String: Value] = [:]
            try expect("{")
            skipSpace()
            if !atEnd, peek == UInt8(ascii: "}") { i += 1; return fields }
            while true {
                skipSpace()
                let key = String(decoding: try string(), as: UTF8.self)
                try expect(":")
                fields[key] = try value()
                skipSpace()
                guard !atEnd else { throw Failure(message: "unterminated object") }
                if peek == UInt8(ascii: ",") { i += 1; continue }
                try expect("}")
                skipSpace()
                guard atEnd else { throw Failure(message: "text after the object at column \(i + 1)") }
                return fields
            }
        }

        mutating func value() throws(Failure) -> Value {
            skipSpace()
            guard !atEnd else { throw Failure(message: "missing value") }
            switch peek {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "["):
                i += 1
                var numbers: [Double] = []
                skipSpace()
                if !atEnd, peek == UInt8(ascii: "]") { i += 1; return .numbers(numbers) }
                while true {
                    numbers.append(try number())
                    skipSpace()
                    guard !atEnd else { throw Failure(message: "unterminated array") }
                    if peek == UInt8(ascii: ",") { i += 1; continue }
                    try expect("]")
                    return .numbers(numbers)
                }
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                for word in ["true", "false", "null"] where bytes[i...].starts(with: word.utf8) {
                    i += word.utf8.count
                    return .other
                }
                throw Failure(message: "unexpected value at column \(i + 1)")
            default:
                return .number(try number())
            }
        }

        mutating func number() throws(Failure) -> Double {
            skipSpace()
            let start = i
            while i < bytes.count, "+-0123456789.eE".utf8.contains(bytes[i]) { i += 1 }
            guard let n = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else {
                throw Failure(message: "bad number at column \(start + 1)")
            }
            return n
        }

        mutating func string() throws(Failure) -> [UInt8] {
            guard !atEnd, peek == UInt8(ascii: "\"") else { throw Failure(message: "expected a string at column \(i + 1)") }
            i += 1
            var out: [UInt8] = []
            while i < bytes.count {
                let b = bytes[i]
                i += 1
                if b == UInt8(ascii: "\"") { return out }
                guard b == UInt8(ascii: "\\") else { out.append(b); continue }
                guard i < bytes.count else { break }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    let column = i - 1
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate counts only with a low one right after it (JSON's UTF-16 pairs).
                        guard bytes[i...].starts(with: "\\u".utf8) else {
                            throw Failure(message: "\\u escape at column \(column): a high surrogate without a low one")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw Failure(message: "\\u escape at column \(column): a high surrogate without a low one")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let s = Unicode.Scalar(scalar) else {
                        throw Failure(message: "\\u escape at column \(column): a low surrogate without a high one")
                    }
                    out += Array(String(Character(s)).utf8)
                default: out.append(e)  // \" \\ \/
                }
            }
            throw Failure(message: "unterminated string")
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            // Four hex digits exactly (UInt32(_:radix:) alone would also take a sign).
            guard i + 4 <= bytes.count, bytes[i..<i + 4].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                  let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) else {
                throw Failure(message: "bad \\u escape at column \(i + 1)")
            }
            i += 4
            return v
        }
    }
}
