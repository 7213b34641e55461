// Every C call of the file layer, one Swift function each, in one place (as swift-system's
// Syscalls.swift): the readers and writers of touchbridge's files (TouchFiles' other files, the pairing
// secret's, the portal's restore token's, the standard streams') go through these and never call Glibc
// themselves. Each doc comment names its C function.
import Glibc

/// An `errno` value, worded by `strerror`.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` now.
    static var current: Errno { Errno(Glibc.errno) }

    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EAGAIN)
    public static let noEntry = Errno(ENOENT)
    public static let loop = Errno(ELOOP)
    public static let noDevice = Errno(ENXIO)
    public static let exists = Errno(EEXIST)
    public static let badDescriptor = Errno(EBADF)
    public static let invalid = Errno(EINVAL)

    public var description: String { FileCalls.errorText(rawValue) }
}

/// The C functions of the file layer, one wrapper each.
public enum FileCalls {
    /// Opens `path`; the descriptor. The corresponding C function is `open`.
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws(Errno) -> Int32 {
        let fd = Glibc.open(path, flags, mode)
        guard fd >= 0 else { throw Errno.current }
        return fd
    }

    /// Opens `name` in the directory open as `directory`; the descriptor. The corresponding C function
    /// is `openat`.
    public static func open(_ name: String, in directory: Int32, _ flags: Int32, _ mode: mode_t = 0) throws(Errno) -> Int32 {
        let fd = Glibc.openat(directory, name, flags, mode)
        guard fd >= 0 else { throw Errno.current }
        return fd
    }

    /// What `fd` is: its type and permission bits, owner and size. The corresponding C function is `fstat`.
    public static func status(_ fd: Int32) throws(Errno) -> FileStatus {
        var status = stat()
        guard Glibc.fstat(fd, &status) == 0 else { throw Errno.current }
        return FileStatus(status)
    }

    /// Reads at most `buffer.count` bytes; the count, 0 at the end. The corresponding C function is `read`.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        guard n >= 0 else { throw Errno.current }
        return n
    }

    /// Writes at most `bytes.count` bytes; the count written. The corresponding C function is `write`.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        let n = Glibc.write(fd, bytes.baseAddress, bytes.count)
        guard n >= 0 else { throw Errno.current }
        return n
    }

    /// Waits until what was written to `fd` is on the disk. The corresponding C function is `fsync`.
    public static func sync(_ fd: Int32) throws(Errno) {
        guard Glibc.fsync(fd) == 0 else { throw Errno.current }
    }

    /// Closes `fd`; the error it reports (a write that failed late, on NFS or a full disk). The
    /// descriptor is gone whatever it says. The corresponding C function is `close`.
    public static func close(_ fd: Int32) throws(Errno) {
        guard Glibc.close(fd) == 0 else { throw Errno.current }
    }

    /// Sets the permission bits of `fd`. The corresponding C function is `fchmod`.
    public static func setPermissions(_ fd: Int32, _ mode: mode_t) throws(Errno) {
        guard Glibc.fchmod(fd, mode) == 0 else { throw Errno.current }
    }

    /// Whether `fd` is an open descriptor. The corresponding C function is `fcntl` (`F_GETFD`).
    public static func isOpen(_ fd: Int32) -> Bool {
        Glibc.fcntl(fd, F_GETFD) >= 0
    }

    /// Waits until one of `descriptors` is ready as asked (`events`), at most `milliseconds` (-1: for as
    /// long as it takes); each one's `revents` says how. The corresponding C function is `poll`.
    public static func poll(_ descriptors: inout [pollfd], milliseconds: Int32) throws(Errno) -> Int {
        let n = Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        guard n >= 0 else { throw Errno.current }
        return Int(n)
    }

    /// Makes `new` a second name of `existing`; fails with EEXIST when `new` is there (even as a dangling
    /// link). The corresponding C function is `link`.
    public static func link(_ existing: String, _ new: String) throws(Errno) {
        guard Glibc.link(existing, new) == 0 else { throw Errno.current }
    }

    /// Gives `old` the name `new`, replacing what `new` named. The corresponding C function is `rename`.
    public static func rename(_ old: String, _ new: String) throws(Errno) {
        guard Glibc.rename(old, new) == 0 else { throw Errno.current }
    }

    /// Removes the name `path`. The corresponding C function is `unlink`.
    public static func unlink(_ path: String) throws(Errno) {
        guard Glibc.unlink(path) == 0 else { throw Errno.current }
    }

    /// Makes the directory `path`. The corresponding C function is `mkdir`.
    public static func makeDirectory(_ path: String, _ mode: mode_t) throws(Errno) {
        guard Glibc.mkdir(path, mode) == 0 else { throw Errno.current }
    }

    /// The user the process acts as. The corresponding C function is `geteuid`.
    public static func effectiveUser() -> uid_t {
        Glibc.geteuid()
    }

    /// The words of an `errno` value. The corresponding C function is `strerror`.
    public static func errorText(_ value: Int32) -> String {
        String(cString: Glibc.strerror(value))
    }
}
