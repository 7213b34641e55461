// The allow-list's IPv4 rules as a classic BPF program, for a socket filter (`SO_ATTACH_FILTER`) that
// drops datagrams from IPv4 sources outside `--allow` in the kernel. Pure: TouchNet attaches it.

/// A classic BPF program that passes every datagram the allow-list might allow and drops IPv4 datagrams
/// whose source no IPv4 rule contains. The userspace check stays: the program only ever drops what
/// `AllowList.allows` refuses too. IPv6 datagrams all pass.
///
/// It reads the network header through `SKF_NET_OFF` (a UDP socket's filter sees the UDP header at 0):
/// ```
///   ldb [net+0]; and #0xf0; jeq #0x40 → else accept      not IPv4: to userspace
///   ld [net+12]; st M[0]                                  the IPv4 source address
///   per rule: ld M[0]; and #mask; jeq #network → accept
///   ret #0 (drop); accept: ret #0xffffffff
/// ```
public enum SourceFilterProgram {
    /// One instruction, as `struct sock_filter`.
    public struct Instruction: Hashable, Sendable {
        public var code: UInt16
        public var jt: UInt8
        public var jf: UInt8
        public var k: UInt32
    }

    /// At most this many IPv4 rules (jump offsets are 8 bits); with more, no filter is installed.
    public static let maxRules = 80

    /// Offset of the network header for `BPF_ABS` loads (`SKF_NET_OFF`).
    public static let netOffset = UInt32(bitPattern: -0x100000)

    /// The program for `allowList`, or nil when no filter can help: a rule allows every IPv4 address
    /// (such as `--allow any`), or there are more than `maxRules` IPv4 rules.
    public static func program(for allowList: AllowList) -> [Instruction]? {
        var rules: [(network: UInt32, mask: UInt32)] = []
        for rule in allowList.rules {
            let coversAllIPv4 = rule.prefixLength <= 96 && rule.contains(SourceAddress(ipv4: 0, port: 0))
            if coversAllIPv4 { return nil }
            guard rule.prefixLength >= 96, rule.high == 0, rule.low >> 32 == 0x0000_ffff else { continue }  // IPv6 only
            let bits = Int(rule.prefixLength) - 96
            let mask: UInt32 = bits == 0 ? 0 : UInt32.max << UInt32(32 - bits)
            rules.append((UInt32(truncatingIfNeeded: rule.low) & mask, mask))
        }
        guard rules.count <= maxRules else { return nil }

        let ldAbsB: UInt16 = 0x30, ldAbsW: UInt16 = 0x20, andK: UInt16 = 0x54, jeqK: UInt16 = 0x15
        let st: UInt16 = 0x02, ldMem: UInt16 = 0x60, retK: UInt16 = 0x06
        // Layout: 5 header instructions, 3 per rule, then `drop`, then `accept`.
        let dropIndex = 5 + 3 * rules.count
        let acceptIndex = dropIndex + 1
        var p: [Instruction] = [
            Instruction(code: ldAbsB, jt: 0, jf: 0, k: netOffset),                  // A = first byte of the IP header
            Instruction(code: andK, jt: 0, jf: 0, k: 0xf0),                          // A = version << 4
            Instruction(code: jeqK, jt: 0, jf: UInt8(acceptIndex - 3), k: 0x40),     // not IPv4: to userspace
            Instruction(code: ldAbsW, jt: 0, jf: 0, k: netOffset &+ 12),            // A = IPv4 source address
            Instruction(code: st, jt: 0, jf: 0, k: 0),                               // M[0] = A
        ]
        for rule in rules {
            p.append(Instruction(code: ldMem, jt: 0, jf: 0, k: 0))
            p.append(Instruction(code: andK, jt: 0, jf: 0, k: rule.mask))
            let next = p.count + 1
            p.append(Instruction(code: jeqK, jt: UInt8(acceptIndex - next), jf: 0, k: rule.network))
        }
        p.append(Instruction(code: retK, jt: 0, jf: 0, k: 0))               // drop
        p.append(Instruction(code: retK, jt: 0, jf: 0, k: 0xffff_ffff))     // accept, whole datagram
        return p
    }

}
