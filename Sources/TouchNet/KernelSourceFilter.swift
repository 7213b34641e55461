// The allow-list's IPv4 rules as a classic BPF socket filter: datagrams from IPv4 sources outside
// `--allow` are dropped by the kernel before they reach the socket's receive queue, so a flood from
// refused sources neither wakes the daemon nor fills the queue in front of the phone's packets.

#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import TouchCore

/// A classic BPF program (`SO_ATTACH_FILTER`) that passes every datagram the allow-list might allow
/// and drops IPv4 datagrams whose source no IPv4 rule contains. The userspace check stays: the filter
/// only ever drops what it would drop too. IPv6 datagrams all pass to userspace.
public enum KernelSourceFilter {
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
    static let netOffset = UInt32(bitPattern: -0x100000)

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

    /// Attaches `program` to the socket `fd`. Returns errno on failure, 0 on success.
    ///
    /// `struct sock_filter` (`linux/filter.h`, not in Glibc's module) is 8 bytes: u16 code, u8 jt, u8 jf,
    /// u32 k; `struct sock_fprog` is a u16 length and, 8-byte aligned, a pointer to the instructions.
    /// Both are written byte by byte in the machine's order, so no Swift struct layout is assumed.
    static func attach(_ program: [Instruction], to fd: Int32) -> Int32 {
        let instructions = UnsafeMutableRawPointer.allocate(byteCount: 8 * program.count, alignment: 8)
        defer { instructions.deallocate() }
        for (i, instruction) in program.enumerated() {
            let at = instructions + 8 * i
            at.storeBytes(of: instruction.code, toByteOffset: 0, as: UInt16.self)
            at.storeBytes(of: instruction.jt, toByteOffset: 2, as: UInt8.self)
            at.storeBytes(of: instruction.jf, toByteOffset: 3, as: UInt8.self)
            at.storeBytes(of: instruction.k, toByteOffset: 4, as: UInt32.self)
        }
        let fprog = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
        defer { fprog.deallocate() }
        fprog.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
        fprog.storeBytes(of: UInt16(program.count), toByteOffset: 0, as: UInt16.self)
        fprog.storeBytes(of: instructions, toByteOffset: 8, as: UnsafeMutableRawPointer.self)
        let soAttachFilter: Int32 = 26  // SO_ATTACH_FILTER
        let rc = setsockopt(fd, SOL_SOCKET, soAttachFilter, fprog, 16)
        return rc == 0 ? 0 : errno
    }

    /// Datagrams the kernel dropped on the socket `fd`: refused by the filter, or the receive queue was
    /// full (`SO_MEMINFO`'s `SK_MEMINFO_DROPS`). Nil if the kernel does not say.
    public static func kernelDrops(_ fd: Int32) -> UInt32? {
        var info = [UInt32](repeating: 0, count: 16)
        var length = socklen_t(info.count * 4)
        let rc = info.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, 55 /* SO_MEMINFO */, $0.baseAddress, &length) }
        guard rc == 0, length >= 9 * 4 else { return nil }
        return info[8]
    }
}
