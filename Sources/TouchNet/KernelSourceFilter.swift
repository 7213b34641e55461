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
    public typealias Instruction = SourceFilterProgram.Instruction

    /// The program for `allowList` (see `SourceFilterProgram`), or nil when it would pass everything.
    public static func program(for allowList: AllowList) -> [Instruction]? { SourceFilterProgram.program(for: allowList) }

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
