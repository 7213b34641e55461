// Which sources may drive the pointer. Parsed at startup; checked for every datagram without allocating.

/// An IP network: an address and a prefix length, such as `10.0.0.0/8` or `fe80::/10`.
///
/// Like `SourceAddress`, a rule lives in the 128-bit IPv6 space with IPv4 as IPv4-mapped addresses
/// (`10.0.0.0/8` is `::ffff:10.0.0.0/104`), so IPv4 rules match IPv4-mapped IPv6 sources and
/// `::ffff:192.168.1.2` is the same rule as `192.168.1.2`. The one consequence to know: an IPv6 rule whose
/// prefix covers `::ffff:0:0/96` (in practice only `::/0`) matches IPv4 sources too.
public struct CIDR: Hashable, Sendable, CustomStringConvertible {
    /// The first 64 bits of the network address (host bits are zero).
    public let high: UInt64
    /// The last 64 bits of the network address (host bits are zero).
    public let low: UInt64
    /// The prefix length in the 128-bit space, 0...128 (96 + the IPv4 prefix for IPv4 rules).
    public let prefixLength: UInt8

    @usableFromInline let highMask: UInt64
    @usableFromInline let lowMask: UInt64

    /// The network of the 128-bit address `high`/`low` with its first `prefixLength` bits; host bits are
    /// cleared. - Precondition: `prefixLength <= 128`.
    public init(high: UInt64, low: UInt64, prefixLength: UInt8) {
        precondition(prefixLength <= 128, "CIDR prefix length above 128")
        let n = UInt64(prefixLength)
        // Shifts of 64 or more give 0 in Swift (smart shift), which is the wanted mask.
        highMask = n == 0 ? 0 : UInt64.max << (64 - min(n, 64))
        lowMask = n <= 64 ? 0 : UInt64.max << (128 - n)
        self.high = high & highMask
        self.low = low & lowMask
        self.prefixLength = prefixLength
    }

    /// Parses `address[/prefix]`:
    /// - IPv4: a dotted quad (`127.0.0.1`, decimal parts without leading zeros), prefix 0...32;
    /// - IPv6: RFC 4291 text (`fe80::/10`, `::1`, `2001:db8:0:0:0:0:0:1`, `::ffff:192.168.1.2`,
    ///   hex in either case, at most one `::`, an optional dotted quad as the last 32 bits), prefix 0...128.
    ///
    /// Without a prefix the rule is one host (/32 or /128). The prefix is decimal without leading zeros.
    /// Host bits after the prefix are cleared (`192.168.1.7/24` is `192.168.1.0/24`). No spaces and no
    /// zone index (`%eth0`). Returns nil for anything else. Allocates: for configuration, not the hot path.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        let slash = bytes.firstIndex(of: UInt8(ascii: "/"))
        let addressText = bytes[..<(slash ?? bytes.endIndex)]
        var prefix: Int? = nil
        if let slash {
            guard let p = IPText.parseDecimal(bytes[(slash + 1)...], max: 128) else { return nil }
            prefix = p
        }

        if addressText.contains(UInt8(ascii: ":")) {
            guard let (high, low) = IPText.parseIPv6(addressText) else { return nil }
            self.init(high: high, low: low, prefixLength: UInt8(prefix ?? 128))
        } else {
            guard let v4 = IPText.parseIPv4(addressText) else { return nil }
            let p = prefix ?? 32
            guard p <= 32 else { return nil }
            self.init(ipv4: v4, prefixLength: UInt8(p))
        }
    }

    /// The IPv4 network `ipv4/prefixLength` (a.b.c.d = `a << 24 | b << 16 | c << 8 | d`).
    /// - Precondition: `prefixLength <= 32`.
    public init(ipv4: UInt32, prefixLength: UInt8) {
        precondition(prefixLength <= 32, "IPv4 prefix length above 32")
        let a = SourceAddress(ipv4: ipv4, port: 0)
        self.init(high: a.high, low: a.low, prefixLength: 96 + prefixLength)
    }

    /// Whether this is an IPv4 rule: it lies inside `::ffff:0:0/96`.
    public var isIPv4: Bool {
        prefixLength >= 96 && high == 0 && low & 0xffff_ffff_0000_0000 == 0x0000_ffff_0000_0000
    }

    /// Whether `address` is inside this network (the port is not looked at). Allocates nothing.
    @inlinable
    public func contains(_ address: SourceAddress) -> Bool {
        address.high & highMask == high && address.low & lowMask == low
    }

    /// `10.0.0.0/8` or `fe80::/10`. Allocates: for logs only.
    public var description: String {
        let address = IPText.format(high: high, low: low)
        return "\(address)/\(isIPv4 ? prefixLength - 96 : prefixLength)"
    }
}

/// A text in an allow list that is not a CIDR.
public struct InvalidCIDR: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text as given.
    public var text: String
    public init(text: String) { self.text = text }
    public var description: String { "not an IP address or network: \"\(text)\"" }
}

/// The networks allowed to send touches. A source is allowed when any rule contains it; an empty list
/// allows nothing. The shell checks it before `SenderSession.admit`.
public struct AllowList: Hashable, Sendable, CustomStringConvertible {
    /// The networks, in the order given.
    public var rules: [CIDR]

    /// An allow list of these networks.
    public init(_ rules: [CIDR]) {
        self.rules = rules
    }

    /// Parses every text with `CIDR(parsing:)`; throws the first text that is not a CIDR.
    public init(parsing texts: [String]) throws(InvalidCIDR) {
        var rules: [CIDR] = []
        rules.reserveCapacity(texts.count)
        for text in texts {
            guard let rule = CIDR(parsing: text) else { throw InvalidCIDR(text: text) }
            rules.append(rule)
        }
        self.rules = rules
    }

    /// Loopback (`127.0.0.0/8`, `::1/128`), link-local (`169.254.0.0/16`, `fe80::/10`) and private
    /// networks (`10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, unique-local `fc00::/7`).
    public static let defaultPrivate = AllowList([
        CIDR(ipv4: 127 << 24, prefixLength: 8),
        CIDR(high: 0, low: 1, prefixLength: 128),
        CIDR(ipv4: 169 << 24 | 254 << 16, prefixLength: 16),
        CIDR(high: 0xfe80 << 48, low: 0, prefixLength: 10),
        CIDR(ipv4: 10 << 24, prefixLength: 8),
        CIDR(ipv4: 172 << 24 | 16 << 16, prefixLength: 12),
        CIDR(ipv4: 192 << 24 | 168 << 16, prefixLength: 16),
        CIDR(high: 0xfc00 << 48, low: 0, prefixLength: 7),
    ])

    /// Whether some rule contains `address`. Allocates nothing.
    @inlinable
    public func allows(_ address: SourceAddress) -> Bool {
        // Indices, not `for rule in`: unoptimised builds call the generic iterator, which allocates.
        for i in rules.indices where rules[i].contains(address) { return true }
        return false
    }

    /// The rules, comma-separated. Allocates: for logs only.
    public var description: String {
        rules.map(\.description).joined(separator: ", ")
    }
}
