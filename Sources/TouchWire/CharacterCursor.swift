// Reading a validated JSON string token a character at a time, unescaping as it goes (the decoder's key
// and value comparisons).

/// Reads the characters of a validated string token one at a time, unescaping as it goes.
///
/// Everything the decoder compares against is ASCII, so the cursor yields ASCII characters as
/// their byte and any other character (raw or escaped) as `nonASCII`.
struct CharacterCursor {
    static let nonASCII: UInt8 = 0xFF

    let scanner: JSONScanner
    /// The offset of the next character.
    private(set) var offset: Int
    let end: Int

    init(_ token: StringToken, in scanner: JSONScanner) {
        self.scanner = scanner
        self.offset = token.start
        self.end = token.end
    }

    /// The next character, or nil at the end of the string.
    @inline(__always)
    mutating func next() -> UInt8? {
        guard offset < end else { return nil }
        let b = scanner.byte(at: offset)
        if b < 0x80 && b != ASCII.backslash {
            offset += 1
            return b
        }
        return nextSlowly()
    }

    /// `next()` for an escape or a non-ASCII character at `offset`.
    private mutating func nextSlowly() -> UInt8 {
        let b = scanner.byte(at: offset)
        if b == ASCII.backslash {
            let escaped = scanner.byte(at: offset + 1)
            offset += 2
            switch escaped {
            case 0x62: return 0x08  // b
            case 0x66: return 0x0C  // f
            case 0x6E: return 0x0A  // n
            case 0x72: return 0x0D  // r
            case 0x74: return 0x09  // t
            case ASCII.lowerU:
                let unit = scanner.hex4(at: offset) ?? 0xFFFF
                offset += 4
                if (0xD800...0xDBFF).contains(unit) { offset += 6 }  // the low half of the pair
                return unit < 0x80 ? UInt8(unit) : Self.nonASCII
            default: return escaped  // " \ /
            }
        }
        offset += 1
        while offset < end && scanner.byte(at: offset) & 0xC0 == 0x80 { offset += 1 }
        return Self.nonASCII
    }
}
