// A validating JSON scanner over raw bytes: whitespace, strings, numbers, literals, and whole values
// skipped without recursion. It builds nothing: strings come back as byte ranges (`StringToken`),
// numbers as the few facts the decoder needs (`NumberFacts`). Standard library only.
//
// Past the end of the input `byte(at:)` reads as 0. A NUL byte is never valid where the scanner
// looks (outside strings it is no token, inside strings a raw control character), so every check
// that rejects 0 also rejects the end of the input, and no read can go out of bounds.

typealias DecodeError = PoseAIDecodeError

enum ASCII {
    static let quote: UInt8 = 0x22  // "
    static let backslash: UInt8 = 0x5C  // \
    static let slash: UInt8 = 0x2F  // /
    static let comma: UInt8 = 0x2C  // ,
    static let colon: UInt8 = 0x3A  // :
    static let openBrace: UInt8 = 0x7B  // {
    static let closeBrace: UInt8 = 0x7D  // }
    static let openBracket: UInt8 = 0x5B  // [
    static let closeBracket: UInt8 = 0x5D  // ]
    static let minus: UInt8 = 0x2D  // -
    static let plus: UInt8 = 0x2B  // +
    static let dot: UInt8 = 0x2E  // .
    static let zero: UInt8 = 0x30  // 0
    static let nine: UInt8 = 0x39  // 9
    static let lowerE: UInt8 = 0x65  // e
    static let upperE: UInt8 = 0x45  // E
    static let lowerU: UInt8 = 0x75  // u
    static let equals: UInt8 = 0x3D  // =
}

/// The content of a JSON string: the bytes between the quotes, `start..<end`.
struct StringToken {
    var start: Int
    var end: Int
    /// Whether the content contains backslash escapes (if not, the bytes are the characters).
    var hasEscapes: Bool
}

/// What the decoder needs to know about a JSON number, read exactly from its decimal text.
struct NumberFacts {
    /// The value is an integer (true for every spelling of zero, and for `1.0`, `1e0`, `10e-1`).
    var isIntegral: Bool
    /// The exact value when it is an integer in -9...9, else nil.
    var smallIntegerValue: Int?
}

struct JSONScanner {
    /// Containers nest at most this deep, the top-level object counting as 1. Foundation's
    /// JSONSerialization uses the same limit, so the two accept the same documents.
    static let maxDepth = 512

    let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    var index: Int = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The byte at `offset`, or 0 past the end.
    @inline(__always)
    func byte(at offset: Int) -> UInt8 {
        offset < bytes.count ? bytes[offset] : 0
    }

    @inline(__always)
    var current: UInt8 { byte(at: index) }

    var isAtEnd: Bool { index >= bytes.count }

    /// `notJSON` at the current offset: an unexpected byte, or the end of the input.
    var unexpected: DecodeError { DecodeError(.notJSON, at: min(index, bytes.count)) }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Skips a UTF-8 byte order mark at the very start, as JSONSerialization does.
    mutating func skipByteOrderMark() {
        if index == 0, byte(at: 0) == 0xEF, byte(at: 1) == 0xBB, byte(at: 2) == 0xBF {
            index = 3
        }
    }

    // MARK: Strings

    /// Scans the string starting at the current `"`, validating UTF-8 and escapes; leaves `index`
    /// after the closing quote.
    mutating func scanString() throws(DecodeError) -> StringToken {
        let start = index + 1
        var i = start
        var hasEscapes = false
        while true {
            // Plain ASCII goes eight bytes at a time; in the word with a special byte, straight to the
            // first one.
            while i + 8 <= bytes.count {
                let special = Self.specialStringBytes(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                if special == 0 {
                    i += 8
                } else {
                    i += special.trailingZeroBitCount >> 3
                    break
                }
            }
            guard i < bytes.count else { throw DecodeError(.notJSON, at: bytes.count) }
            let b = bytes[i]
            if b == ASCII.quote {
                index = i + 1
                return StringToken(start: start, end: i, hasEscapes: hasEscapes)
            } else if b == ASCII.backslash {
                hasEscapes = true
                i = try scanEscape(at: i)
            } else if b < 0x20 {
                throw DecodeError(.controlCharacter, at: i)
            } else if b < 0x80 {
                i += 1
            } else {
                i = try scanUTF8Sequence(at: i)
            }
        }
    }

    /// Whether any of the eight bytes of `word` needs a closer look inside a string: a quote, a
    /// backslash, a control character (< 0x20) or a non-ASCII byte (>= 0x80). Uses the classic
    /// "some byte is less than n" test, `(w - n * 0x01..) & ~w & 0x80..`, which is exact for n <= 0x80.
    @inline(__always)
    static func hasSpecialStringByte(_ word: UInt64) -> Bool { specialStringBytes(word) != 0 }

    /// The high bit of each byte of `word` (little-endian: the first byte lowest) that
    /// `hasSpecialStringByte` looks for. Exact for the lowest set byte (a borrow only runs upward,
    /// so a byte above a true one may be flagged falsely): its index is the first special byte.
    @inline(__always)
    static func specialStringBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)  // a zero byte where word has a quote
        let backslashes = word ^ (ones &* 0x5C)  // a zero byte where word has a backslash
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highBits
    }

    /// Validates the escape at `i` (a backslash) and returns the offset after it.
    private func scanEscape(at i: Int) throws(DecodeError) -> Int {
        switch byte(at: i + 1) {
        case ASCII.quote, ASCII.backslash, ASCII.slash,
             0x62, 0x66, 0x6E, 0x72, 0x74:  // b f n r t
            return i + 2
        case ASCII.lowerU:
            guard let unit = hex4(at: i + 2) else { throw DecodeError(.badEscape, at: i) }
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed at once by an escaped low surrogate.
                guard byte(at: i + 6) == ASCII.backslash, byte(at: i + 7) == ASCII.lowerU,
                      let low = hex4(at: i + 8), (0xDC00...0xDFFF).contains(low)
                else { throw DecodeError(.badSurrogate, at: i) }
                return i + 12
            case 0xDC00...0xDFFF:
                throw DecodeError(.badSurrogate, at: i)
            default:
                return i + 6
            }
        case 0 where i + 1 >= bytes.count:
            throw DecodeError(.notJSON, at: bytes.count)
        default:
            throw DecodeError(.badEscape, at: i)
        }
    }

    /// The 16-bit value of four hex digits at `i`, or nil.
    func hex4(at i: Int) -> UInt16? {
        var value: UInt16 = 0
        for k in 0..<4 {
            let b = byte(at: i + k)
            let nibble: UInt8
            switch b {
            case 0x30...0x39: nibble = b &- 0x30
            case 0x41...0x46: nibble = b &- 0x37
            case 0x61...0x66: nibble = b &- 0x57
            default: return nil
            }
            value = value << 4 | UInt16(nibble)
        }
        return value
    }

    /// Validates the multi-byte UTF-8 sequence whose lead byte (>= 0x80) is at `i` and returns the
    /// offset after it. Well-formed means Unicode's table 3-7: no overlongs, no surrogates, nothing
    /// above U+10FFFF, no stray continuation bytes.
    private func scanUTF8Sequence(at i: Int) throws(DecodeError) -> Int {
        let lead = byte(at: i)
        let second = byte(at: i + 1)
        let length: Int
        let secondRange: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: length = 2; secondRange = 0x80...0xBF
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; secondRange = 0x80...0xBF
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4; secondRange = 0x80...0xBF
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw DecodeError(.invalidUTF8, at: i)
        }
        guard secondRange.contains(second) else { throw DecodeError(.invalidUTF8, at: i) }
        for k in 2..<length where byte(at: i + k) & 0xC0 != 0x80 {
            throw DecodeError(.invalidUTF8, at: i)
        }
        return i + length
    }

    // MARK: Numbers

    /// Scans the number at the current byte (`-` or a digit) under JSON's strict grammar and
    /// rejects magnitudes that overflow a Double. Leaves `index` after the number.
    ///
    /// The value is judged exactly from its digits: with the first and last non-zero digits at
    /// decimal powers `high` and `low` of the mantissa and the exponent `e`, the value is integral
    /// when `low + e >= 0`, and overflows when it is at least 2^1024 - 2^970 (the point from which
    /// correctly rounded parsing gives infinity), which can only happen when `high + e >= 308`.
    mutating func scanNumber() throws(DecodeError) -> NumberFacts {
        let start = index
        var i = index
        if byte(at: i) == ASCII.minus { i += 1 }

        // Powers of ten of the first and last non-zero mantissa digits, and where the first is.
        var high = Int.min
        var low = 0
        var firstSignificant = -1

        // Integer part: "0" or a non-zero digit followed by digits.
        let integerStart = i
        switch byte(at: i) {
        case ASCII.zero:
            i += 1
            if isDigit(byte(at: i)) { throw DecodeError(.badNumber, at: i) }
        case 0x31...0x39:
            i += 1
            while isDigit(byte(at: i)) { i += 1 }
        default:
            throw DecodeError(.badNumber, at: i)
        }
        let integerDigits = i - integerStart
        for k in integerStart..<i where byte(at: k) != ASCII.zero {
            let power = integerDigits - 1 - (k - integerStart)
            if firstSignificant < 0 {
                firstSignificant = k
                high = power
            }
            low = power
        }

        // Fraction: a dot and at least one digit.
        if byte(at: i) == ASCII.dot {
            i += 1
            guard isDigit(byte(at: i)) else { throw DecodeError(.badNumber, at: i) }
            var power = 0
            while isDigit(byte(at: i)) {
                power -= 1
                if byte(at: i) != ASCII.zero {
                    if firstSignificant < 0 {
                        firstSignificant = i
                        high = power
                    }
                    low = power
                }
                i += 1
            }
        }
        let mantissaEnd = i

        // Exponent: e or E, an optional sign, at least one digit. Saturates far beyond any
        // meaningful exponent (mantissa powers stay within +-65536 in a 64 KiB packet).
        var exponent = 0
        if byte(at: i) == ASCII.lowerE || byte(at: i) == ASCII.upperE {
            i += 1
            var negative = false
            if byte(at: i) == ASCII.plus || byte(at: i) == ASCII.minus {
                negative = byte(at: i) == ASCII.minus
                i += 1
            }
            guard isDigit(byte(at: i)) else { throw DecodeError(.badNumber, at: i) }
            while isDigit(byte(at: i)) {
                exponent = min(exponent * 10 + Int(byte(at: i) &- ASCII.zero), 1_000_000_000)
                i += 1
            }
            if negative { exponent = -exponent }
        }
        index = i

        guard firstSignificant >= 0 else {
            // Every spelling of zero: 0, -0, 0.000, 0e999...
            return NumberFacts(isIntegral: true, smallIntegerValue: 0)
        }
        let top = high + exponent
        if top >= 309 || (top == 308 && !isBelowDoubleOverflow(from: firstSignificant, to: mantissaEnd)) {
            throw DecodeError(.numberOutOfRange, at: start)
        }
        let isIntegral = low + exponent >= 0
        var small: Int? = nil
        if isIntegral && top == 0 {
            // A single significant digit in the units place.
            let digit = Int(byte(at: firstSignificant) &- ASCII.zero)
            small = byte(at: start) == ASCII.minus ? -digit : digit
        }
        return NumberFacts(isIntegral: isIntegral, smallIntegerValue: small)
    }

    @inline(__always)
    private func isDigit(_ b: UInt8) -> Bool { b &- ASCII.zero < 10 }

    /// For a mantissa whose first significant digit is worth 10^308 (after the exponent): whether
    /// its digits, read from `first` to `end` skipping the dot, are below those of
    /// 2^1024 - 2^970, the smallest magnitude that rounds to infinity.
    private func isBelowDoubleOverflow(from first: Int, to end: Int) -> Bool {
        let threshold: StaticString =
            "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792"
        return threshold.withUTF8Buffer { digits -> Bool in
            var k = 0
            var i = first
            while i < end {
                let b = byte(at: i)
                i += 1
                if b == ASCII.dot { continue }
                guard k < digits.count else { return false }  // equal so far and longer: >= threshold
                if b != digits[k] { return b < digits[k] }
                k += 1
            }
            // Out of digits while equal: below the threshold only if the rest of it is not all zero.
            while k < digits.count {
                if digits[k] != ASCII.zero { return true }
                k += 1
            }
            return false
        }
    }

    // MARK: Whole values

    /// Expects `literal` (`true`, `false` or `null`) at the current byte and skips it.
    private mutating func scanLiteral(_ literal: StaticString) throws(DecodeError) {
        let matched = literal.withUTF8Buffer { text -> Bool in
            for k in 0..<text.count where byte(at: index + k) != text[k] { return false }
            return true
        }
        guard matched else { throw unexpected }
        index += literal.utf8CodeUnitCount
    }

    /// Expects an object member's key and colon at the current byte, and skips them and the
    /// whitespace after the colon.
    private mutating func skipKeyAndColon() throws(DecodeError) {
        guard current == ASCII.quote else { throw unexpected }
        _ = try scanString()
        skipWhitespace()
        guard current == ASCII.colon else { throw unexpected }
        index += 1
        skipWhitespace()
    }

    /// Validates and skips the value at the current byte, whatever its type, without recursion.
    /// `depth` is the nesting depth of the container holding the value (1: the top-level object).
    mutating func skipValue(depth: Int) throws(DecodeError) {
        // Bit n of `isObject` tells whether the container n + 1 levels below `depth` is an object.
        var isObject = InlineArray<8, UInt64>(repeating: 0)
        var nested = 0

        func setKind(_ level: Int, object: Bool, in bits: inout InlineArray<8, UInt64>) {
            let mask: UInt64 = 1 << UInt64(level & 63)
            if object { bits[level >> 6] |= mask } else { bits[level >> 6] &= ~mask }
        }

        while true {
            // One value, or the opening of a container.
            skipWhitespace()
            switch current {
            case ASCII.openBrace, ASCII.openBracket:
                guard depth + nested < Self.maxDepth else { throw DecodeError(.tooDeep, at: index) }
                let object = current == ASCII.openBrace
                setKind(nested, object: object, in: &isObject)
                nested += 1
                index += 1
                skipWhitespace()
                if current == (object ? ASCII.closeBrace : ASCII.closeBracket) {
                    index += 1
                    nested -= 1
                } else {
                    if object { try skipKeyAndColon() }
                    continue  // to the container's first value
                }
            case ASCII.quote:
                _ = try scanString()
            case ASCII.minus, ASCII.zero...ASCII.nine:
                _ = try scanNumber()
            case 0x74: try scanLiteral("true")
            case 0x66: try scanLiteral("false")
            case 0x6E: try scanLiteral("null")
            default:
                throw unexpected
            }

            // A value is complete: close every container it completes, then go on to the next value.
            while true {
                if nested == 0 { return }
                skipWhitespace()
                let level = nested - 1
                let inObject = isObject[level >> 6] & (1 << UInt64(level & 63)) != 0
                if current == ASCII.comma {
                    index += 1
                    skipWhitespace()
                    if inObject { try skipKeyAndColon() }
                    break
                } else if current == (inObject ? ASCII.closeBrace : ASCII.closeBracket) {
                    index += 1
                    nested -= 1
                } else {
                    throw unexpected
                }
            }
        }
    }
}
