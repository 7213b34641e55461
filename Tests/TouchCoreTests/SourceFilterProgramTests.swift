// The kernel filter program agrees with the allow-list: it never drops a datagram the allow-list
// allows, and drops every IPv4 datagram it refuses. Checked by running the program in a small
// interpreter of the classic BPF instructions it uses, against an IPv4 header.
import Testing
import TouchCore

/// Runs `program` on a datagram whose IP header is `header` (what `SKF_NET_OFF` loads read).
/// Returns the value of `ret`: 0 drops the datagram.
func runFilter(_ program: [SourceFilterProgram.Instruction], header: [UInt8]) -> UInt32 {
    var a: UInt32 = 0
    var memory = [UInt32](repeating: 0, count: 16)
    var pc = 0
    var steps = 0
    while pc < program.count {
        steps += 1
        precondition(steps < 10_000, "the program loops")
        let i = program[pc]
        pc += 1
        let offset = Int(i.k &- SourceFilterProgram.netOffset)
        switch i.code {
        case 0x30: a = UInt32(header[offset])  // ldb [net+k]
        case 0x20: a = header[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }  // ld [net+k], big-endian
        case 0x54: a &= i.k  // and #k
        case 0x02: memory[Int(i.k)] = a  // st M[k]
        case 0x60: a = memory[Int(i.k)]  // ld M[k]
        case 0x15: pc += Int(a == i.k ? i.jt : i.jf)  // jeq #k
        case 0x06: return i.k  // ret #k
        default: preconditionFailure("unexpected instruction \(i.code)")
        }
    }
    preconditionFailure("ran off the end of the program")
}

func ipv4Header(source: UInt32) -> [UInt8] {
    var h = [UInt8](repeating: 0, count: 20)
    h[0] = 0x45
    h[12] = UInt8(source >> 24); h[13] = UInt8(source >> 16 & 0xff); h[14] = UInt8(source >> 8 & 0xff); h[15] = UInt8(source & 0xff)
    return h
}

@Suite struct SourceFilterProgramTests {
    static func allowList(_ texts: [String]) -> AllowList { AllowList(texts.map { CIDR(parsing: $0)! }) }

    @Test(arguments: [
        ["127.0.0.1"], ["127.0.0.0/8", "::1", "192.168.1.0/24"], ["10.1.2.3/32", "172.16.0.0/12", "fe80::/10"],
        ["0.0.0.0/1"], ["200.0.0.0/5", "1.2.3.4", "5.6.7.8/31"],
    ])
    func programAgreesWithTheAllowListForIPv4(rules: [String]) throws {
        let allow = Self.allowList(rules)
        let program = try #require(SourceFilterProgram.program(for: allow))
        var seed: UInt64 = 42
        var probes: [UInt32] = [0, 0xffff_ffff, 0x7F00_0001, 0x7F00_0002, 0xC0A8_0105, 0x0A01_0203, 0x0A01_0204, 0x0506_0708, 0x0506_0709, 0x0506_070A]
        for _ in 0..<20_000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            probes.append(UInt32(truncatingIfNeeded: seed >> 32))
        }
        for rule in allow.rules where rule.high == 0 && rule.low >> 32 == 0xffff {
            let network = UInt32(truncatingIfNeeded: rule.low)
            probes += [network, network &- 1, network | ~(UInt32.max << UInt32(128 - Int(rule.prefixLength)) ), network &+ 1]
        }
        var mismatches: [String] = []
        for source in probes {
            let allowed = allow.allows(SourceAddress(ipv4: source, port: 1))
            let passed = runFilter(program, header: ipv4Header(source: source)) != 0
            if allowed != passed && mismatches.count < 5 {
                mismatches.append("\(SourceAddress(ipv4: source, port: 1)): allow-list \(allowed), filter \(passed)")
            }
        }
        #expect(mismatches.isEmpty, "\(rules): \(mismatches)")
    }

    @Test func ipv6DatagramsAlwaysPassToUserspace() throws {
        let program = try #require(SourceFilterProgram.program(for: Self.allowList(["127.0.0.1"])))
        var header = [UInt8](repeating: 0, count: 40)
        header[0] = 0x60
        #expect(runFilter(program, header: header) != 0)
    }

    @Test func noProgramWhenEveryIPv4AddressIsAllowed() {
        #expect(SourceFilterProgram.program(for: Self.allowList(["0.0.0.0/0"])) == nil)
        #expect(SourceFilterProgram.program(for: Self.allowList(["::/0"])) == nil, "::/0 covers IPv4-mapped sources")
        #expect(SourceFilterProgram.program(for: Self.allowList(["::ffff:0:0/96"])) == nil)
        #expect(SourceFilterProgram.program(for: .defaultPrivate) != nil)
    }

    @Test func onlyIPv6RulesDropEveryIPv4Datagram() throws {
        let program = try #require(SourceFilterProgram.program(for: Self.allowList(["fe80::/10"])))
        #expect(runFilter(program, header: ipv4Header(source: 0x7F00_0001)) == 0)
    }

    @Test func tooManyRulesMeansNoProgram() {
        let many = (0..<(SourceFilterProgram.maxRules + 1)).map { "10.0.\($0).0/24" }
        #expect(SourceFilterProgram.program(for: Self.allowList(many)) == nil)
        let most = (0..<SourceFilterProgram.maxRules).map { "10.0.\($0).0/24" }
        #expect(SourceFilterProgram.program(for: Self.allowList(most)) != nil)
    }
}
