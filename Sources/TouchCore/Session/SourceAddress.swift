// Where a datagram came from, as a pure value (no sockaddr, no Foundation).

/// The IP address and UDP port a datagram came from.
///
/// Addresses are kept in one 128-bit IPv6 space: an IPv4 address a.b.c.d is stored as its IPv4-mapped
/// form `::ffff:a.b.c.d`. So `1.2.3.4` received on an IPv4 socket and `::ffff:1.2.3.4` received on a
/// dual-stack IPv6 socket are the same address (equal, same hash, same allow-list rules), and print the
/// same: `1.2.3.4:port`.
public struct SourceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The first 64 bits of the 128-bit address (network byte order: the first byte is the top byte).
    public let high: UInt64
    /// The last 64 bits of the 128-bit address.
    public let low: UInt64
    /// The UDP port.
    public let port: UInt16

    /// The top 64 bits and the `0000:ffff` of an IPv4-mapped IPv6 address, `::ffff:0:0/96`.
    @usableFromInline static let mappedHigh: UInt64 = 0
    @usableFromInline static let mappedLowPrefix: UInt64 = 0x0000_ffff_0000_0000

    /// An address from its 128 bits (IPv6; IPv4-mapped addresses are IPv4).
    @inlinable
    public init(high: UInt64, low: UInt64, port: UInt16) {
        self.high = high
        self.low = low
        self.port = port
    }

    /// An IPv4 address from its 32-bit value, a.b.c.d = `a << 24 | b << 16 | c << 8 | d`
    /// (host byte order: for a `sockaddr_in`, pass `UInt32(bigEndian: sin_addr.s_addr)`).
    @inlinable
    public init(ipv4: UInt32, port: UInt16) {
        self.init(high: Self.mappedHigh, low: Self.mappedLowPrefix | UInt64(ipv4), port: port)
    }

    /// An address from its bytes in network order: 4 bytes are IPv4, 16 bytes IPv6 (for example
    /// `withUnsafeBytes(of: sockaddr_in6.sin6_addr)`). Nil for any other count. Allocates nothing.
    @inlinable
    public init?<Bytes: Collection>(bytes: Bytes, port: UInt16) where Bytes.Element == UInt8 {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var count = 0
        for byte in bytes {
            guard count < 16 else { return nil }
            if count < 8 {
                high = high << 8 | UInt64(byte)
            } else {
                low = low << 8 | UInt64(byte)
            }
            count += 1
        }
        switch count {
        case 4: self.init(ipv4: UInt32(truncatingIfNeeded: high), port: port)
        case 16: self.init(high: high, low: low, port: port)
        default: return nil
        }
    }

    /// Whether this is an IPv4 address (including one received as IPv4-mapped IPv6).
    @inlinable
    public var isIPv4: Bool {
        high == Self.mappedHigh && low & 0xffff_ffff_0000_0000 == Self.mappedLowPrefix
    }

    /// The IPv4 value (a.b.c.d = `a << 24 | b << 16 | c << 8 | d`), or nil for an IPv6 address.
    @inlinable
    public var ipv4: UInt32? {
        isIPv4 ? UInt32(truncatingIfNeeded: low) : nil
    }

    /// The address without the port: `192.168.1.2` or `fe80::1` (RFC 5952 form). Allocates: for logs only.
    public var addressDescription: String {
        IPText.format(high: high, low: low)
    }

    /// `192.168.1.2:8080` or `[fe80::1]:8080`. Allocates: for logs only.
    public var description: String {
        isIPv4 ? "\(addressDescription):\(port)" : "[\(addressDescription)]:\(port)"
    }
}

/// Text forms of IP addresses: parsing (startup only) and printing (logs only). Both allocate.
enum IPText {
    /// A dotted quad `a.b.c.d`: exactly four decimal numbers 0...255 without leading zeros (so `010` is
    /// not silently read as octal or decimal).
    static func parseIPv4(_ text: ArraySlice<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var parts = 0
        for part in text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard parts < 4, let byte = parseDecimal(part, max: 255) else { return nil }
            value = value << 8 | UInt32(byte)
            parts += 1
        }
        return parts == 4 ? value : nil
    }

    /// A decimal number of 1 to 3 digits without leading zeros, at most `max`.
    static func parseDecimal(_ text: ArraySlice<UInt8>, max: Int) -> Int? {
        guard (1...3).contains(text.count) else { return nil }
        if text.count > 1 && text.first == UInt8(ascii: "0") { return nil }
        var value = 0
        for c in text {
            guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(c - UInt8(ascii: "0"))
        }
        return value <= max ? value : nil
    }

    /// A 16-bit group of 1 to 4 hexadecimal digits, either case.
    static func parseHexGroup(_ text: ArraySlice<UInt8>) -> UInt16? {
        guard (1...4).contains(text.count) else { return nil }
        var value: UInt16 = 0
        for c in text {
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// The groups of one side of an IPv6 address (no `::` inside): `1:2:3`, where the last group may be a
    /// dotted quad when `allowsIPv4` (it counts as two groups). An empty text is no groups.
    static func parseGroups(_ text: ArraySlice<UInt8>, allowsIPv4: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        var groups: [UInt16] = []
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        for (i, part) in parts.enumerated() {
            if i == parts.count - 1 && allowsIPv4 && part.contains(UInt8(ascii: ".")) {
                guard let v4 = parseIPv4(part) else { return nil }
                groups.append(UInt16(truncatingIfNeeded: v4 >> 16))
                groups.append(UInt16(truncatingIfNeeded: v4))
            } else {
                guard let group = parseHexGroup(part) else { return nil }
                groups.append(group)
            }
        }
        return groups
    }

    /// An IPv6 address in RFC 4291 text form: eight groups of 1 to 4 hex digits, at most one `::` for one
    /// or more zero groups, and optionally a dotted quad as the last 32 bits (`::ffff:192.168.1.2`,
    /// `64:ff9b::10.0.0.1`). Zone indices (`%eth0`) are not accepted.
    static func parseIPv6(_ text: ArraySlice<UInt8>) -> (high: UInt64, low: UInt64)? {
        let colon = UInt8(ascii: ":")
        var doubleColon: Int? = nil
        var i = text.startIndex
        while i < text.endIndex - 1 {
            if text[i] == colon && text[i + 1] == colon {
                doubleColon = i
                break
            }
            i += 1
        }

        var groups: [UInt16]
        if let dc = doubleColon {
            // A second `::` or a stray `:` next to this one leaves an empty group on one side: rejected there.
            let headText = text[text.startIndex..<dc]
            let tailText = text[(dc + 2)...]
            guard let head = parseGroups(headText, allowsIPv4: false),
                  let tail = parseGroups(tailText, allowsIPv4: true),
                  head.count + tail.count <= 7
            else { return nil }
            groups = head
            groups.append(contentsOf: repeatElement(0, count: 8 - head.count - tail.count))
            groups.append(contentsOf: tail)
        } else {
            guard let all = parseGroups(text, allowsIPv4: true), all.count == 8 else { return nil }
            groups = all
        }

        var high: UInt64 = 0
        var low: UInt64 = 0
        for k in 0..<4 { high = high << 16 | UInt64(groups[k]) }
        for k in 4..<8 { low = low << 16 | UInt64(groups[k]) }
        return (high, low)
    }

    /// `a.b.c.d` for IPv4-mapped addresses, else the RFC 5952 form: lower-case hex without leading zeros,
    /// the longest run (the first of equals) of two or more zero groups written `::`.
    static func format(high: UInt64, low: UInt64) -> String {
        if high == 0 && low & 0xffff_ffff_0000_0000 == 0x0000_ffff_0000_0000 {
            return formatIPv4(UInt32(truncatingIfNeeded: low))
        }
        var groups: [UInt16] = []
        for k in (0..<4).reversed() { groups.append(UInt16(truncatingIfNeeded: high >> (16 * UInt64(k)))) }
        for k in (0..<4).reversed() { groups.append(UInt16(truncatingIfNeeded: low >> (16 * UInt64(k)))) }

        var bestStart = -1, bestLength = 0
        var k = 0
        while k < 8 {
            if groups[k] == 0 {
                var end = k
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - k > bestLength { bestStart = k; bestLength = end - k }
                k = end
            } else {
                k += 1
            }
        }
        if bestLength < 2 { bestStart = -1 }

        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        if bestStart < 0 { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }

    static func formatIPv4(_ v: UInt32) -> String {
        "\(v >> 24).\(v >> 16 & 0xff).\(v >> 8 & 0xff).\(v & 0xff)"
    }
}
