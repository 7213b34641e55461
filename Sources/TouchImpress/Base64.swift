// Base64 as Impress writes a slide preview (comphelper::Base64: the standard alphabet, "=" padding, no
// line breaks). Strict: anything else is refused, not skipped.

enum Base64 {
    /// The most bytes `count` characters of base64 decode to.
    static func decodedLength(_ count: Int) -> Int { count / 4 * 3 }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` in base64, padded (for the page, which decodes it with `atob`).
    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let v = UInt32(bytes[i]) << 16 | (n > 1 ? UInt32(bytes[i + 1]) << 8 : 0) | (n > 2 ? UInt32(bytes[i + 2]) : 0)
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A character's six bits, 64 for "=", 255 for anything else.
    private static func value(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        case UInt8(ascii: "="): 64
        default: 255
        }
    }

    /// The bytes `text` encodes, or nil when it is not strict base64: a length not a multiple of 4, a
    /// character outside the alphabet, padding anywhere but at the end, or bits set in the unused part
    /// of the last character before the padding.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let chars = Array(text)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(decodedLength(chars.count))
        var i = 0
        while i < chars.count {
            let a = value(chars[i]), b = value(chars[i + 1]), c = value(chars[i + 2]), d = value(chars[i + 3])
            let last = i + 4 == chars.count
            guard a < 64, b < 64, c <= 64, d <= 64 else { return nil }
            if c == 64 || d == 64 {
                // Padding: only in the last quad, "x=" or "==" at its end.
                guard last, d == 64 else { return nil }
                if c == 64 {
                    guard b & 0x0F == 0 else { return nil }
                    out.append(a << 2 | b >> 4)
                } else {
                    guard c & 0x03 == 0 else { return nil }
                    out.append(a << 2 | b >> 4)
                    out.append(b << 4 | c >> 2)
                }
            } else {
                out.append(a << 2 | b >> 4)
                out.append(b << 4 | c >> 2)
                out.append(c << 6 | d)
            }
            i += 4
        }
        return out
    }
}
