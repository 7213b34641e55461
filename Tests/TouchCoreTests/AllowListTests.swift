import Testing
import TouchCore

func v4(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, port: UInt16 = 5000) -> SourceAddress {
    SourceAddress(ipv4: a << 24 | b << 16 | c << 8 | d, port: port)
}

/// An IPv6 source from its text, through the public CIDR parser (a host rule is the address).
func v6(_ text: String, port: UInt16 = 5000) -> SourceAddress {
    let rule = CIDR(parsing: text)!
    return SourceAddress(high: rule.high, low: rule.low, port: port)
}

@Suite struct CIDRParsingTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"),
        ("127.0.0.1", "127.0.0.1/32"),
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("255.255.255.255/32", "255.255.255.255/32"),
        ("192.168.1.7/24", "192.168.1.0/24"),
        ("fe80::/10", "fe80::/10"),
        ("::1", "::1/128"),
        ("::", "::/128"),
        ("::/0", "::/0"),
        ("FE80::ABCD:1", "fe80::abcd:1/128"),
        ("2001:db8:0:0:0:0:0:1", "2001:db8::1/128"),
        ("2001:0db8:0000:0000:0001:0000:0000:0001/128", "2001:db8::1:0:0:1/128"),
        ("2001:db8::/32", "2001:db8::/32"),
        ("1::", "1::/128"),
        ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0/128"),
        ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8/128"),
        ("1:0:0:2:0:0:0:3", "1:0:0:2::3/128"),
        ("::ffff:192.168.1.2", "192.168.1.2/32"),
        ("::ffff:10.0.0.0/104", "10.0.0.0/8"),
        ("::ffff:0:0/96", "0.0.0.0/0"),
        ("64:ff9b::10.0.0.1", "64:ff9b::a00:1/128"),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304/128"),
        ("fc00::/7", "fc00::/7"),
    ])
    func validTextParses(text: String, canonical: String) throws {
        let rule = try #require(CIDR(parsing: text))
        #expect(rule.description == canonical)
        // The canonical form parses back to the same rule.
        #expect(CIDR(parsing: canonical) == rule)
    }

    @Test(arguments: [
        "", "/", "/8", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/08", "10.0.0.0/8/8",
        "10.0.0", "10.0.0.0.0", "256.0.0.1", "10.0.0.01", "1.2.3.-4", "1..2.3", " 10.0.0.1", "10.0.0.1 ",
        "a.b.c.d", "localhost", "::/129", "fe80::/1000", ":::", "1:::2", "1::2::3", ":1::", "1::2:", ":1:2:3:4:5:6:7:8",
        "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "12345::", "g::1",
        "fe80::1%eth0", "::ffff:1.2.3", "::ffff:1.2.3.4.5", "1.2.3.4::", "::1.2.3.4:5", "1:2:3:4:5:6:7:1.2.3.4",
        "[::1]", "::ffff:256.1.1.1",
    ])
    func invalidTextIsRejected(text: String) {
        #expect(CIDR(parsing: text) == nil)
    }

    @Test func hostBitsAfterPrefixAreCleared() {
        #expect(CIDR(parsing: "192.168.1.7/16") == CIDR(parsing: "192.168.0.0/16"))
        #expect(CIDR(parsing: "fe80::1234/10") == CIDR(parsing: "fe80::/10"))
    }

    @Test func allowListParsingReportsTheBadEntry() {
        #expect(throws: InvalidCIDR(text: "10.0.0/8")) {
            try AllowList(parsing: ["192.168.0.0/16", "10.0.0/8"])
        }
        let list = try? AllowList(parsing: ["192.168.0.0/16", "::1"])
        #expect(list?.rules.count == 2)
        #expect(list?.description == "192.168.0.0/16, ::1/128")
    }
}

@Suite struct SourceAddressTests {
    @Test func fourBytesAreIPv4() throws {
        let a = try #require(SourceAddress(bytes: [192, 168, 1, 2], port: 8080))
        #expect(a == v4(192, 168, 1, 2, port: 8080))
        #expect(a.isIPv4)
        #expect(a.ipv4 == 0xc0a8_0102)
        #expect(a.description == "192.168.1.2:8080")
    }

    @Test func sixteenBytesAreIPv6() throws {
        let bytes: [UInt8] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        let a = try #require(SourceAddress(bytes: bytes, port: 9))
        #expect(a == v6("fe80::1", port: 9))
        #expect(!a.isIPv4)
        #expect(a.ipv4 == nil)
        #expect(a.description == "[fe80::1]:9")
    }

    @Test func mappedIPv6BytesAreTheIPv4Address() throws {
        let bytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3]
        let a = try #require(SourceAddress(bytes: bytes, port: 1))
        #expect(a == v4(10, 1, 2, 3, port: 1))
        #expect(a.hashValue == v4(10, 1, 2, 3, port: 1).hashValue)
        #expect(a.description == "10.1.2.3:1")
    }

    @Test(arguments: [0, 1, 3, 5, 15, 17, 32])
    func otherByteCountsAreRejected(count: Int) {
        #expect(SourceAddress(bytes: [UInt8](repeating: 1, count: count), port: 1) == nil)
    }
}

@Suite struct AllowListTests {
    @Test func mappedIPv4SourceMatchesIPv4Rule() throws {
        let list = try AllowList(parsing: ["192.168.0.0/16"])
        #expect(list.allows(v6("::ffff:192.168.44.1")))
        #expect(list.allows(v4(192, 168, 44, 1)))
        #expect(!list.allows(v6("::ffff:192.169.0.1")))
        #expect(!list.allows(v6("::c0a8:2c01")))  // IPv4-compatible, not mapped: an IPv6 address
    }

    @Test func mappedIPv6RuleMatchesIPv4Source() throws {
        let list = try AllowList(parsing: ["::ffff:192.168.1.2"])
        #expect(list.allows(v4(192, 168, 1, 2)))
        #expect(!list.allows(v4(192, 168, 1, 3)))
    }

    @Test func hostRuleMatchesOnlyThatHost() throws {
        let list = try AllowList(parsing: ["127.0.0.1", "::1"])
        #expect(list.allows(v4(127, 0, 0, 1)))
        #expect(!list.allows(v4(127, 0, 0, 2)))
        #expect(list.allows(v6("::1")))
        #expect(!list.allows(v6("::2")))
    }

    @Test func emptyListAllowsNothing() {
        #expect(!AllowList([]).allows(v4(127, 0, 0, 1)))
    }

    @Test func everythingRulesAllowEverything() throws {
        let list = try AllowList(parsing: ["0.0.0.0/0", "::/0"])
        #expect(list.allows(v4(8, 8, 8, 8)))
        #expect(list.allows(v6("2001:4860::8888")))
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.255.0.9", true), ("::1", true),
        ("169.254.10.20", true), ("fe80::1", true), ("febf:ffff::1", true),
        ("10.200.3.4", true), ("172.16.0.1", true), ("172.31.255.255", true), ("192.168.178.20", true),
        ("fc00::1", true), ("fd12:3456::1", true), ("::ffff:10.0.0.7", true), ("::ffff:127.0.0.1", true),
        ("8.8.8.8", false), ("172.15.255.255", false), ("172.32.0.0", false), ("192.169.0.1", false),
        ("169.255.0.1", false), ("11.0.0.1", false), ("0.0.0.0", false), ("::", false), ("::2", false),
        ("fec0::1", false), ("fe00::1", false), ("2001:db8::1", false), ("fe::1", false), ("::ffff:8.8.8.8", false),
    ])
    func defaultPrivateAllowsLocalNetworksOnly(address: String, allowed: Bool) throws {
        let source: SourceAddress
        if address.contains(":") {
            source = v6(address)
        } else {
            let rule = try #require(CIDR(parsing: address))
            source = SourceAddress(high: rule.high, low: rule.low, port: 1)
        }
        #expect(AllowList.defaultPrivate.allows(source) == allowed)
    }

    @Test func defaultPrivateDescribesItsRules() {
        #expect(AllowList.defaultPrivate.description
            == "127.0.0.0/8, ::1/128, 169.254.0.0/16, fe80::/10, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7")
    }
}
