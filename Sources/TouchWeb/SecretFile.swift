// The pairing secret's file, read by `serve` and `pair` through the one reader here. It trusts nothing
// about what it finds: a FIFO, a device (a link to /dev/zero), a directory or a large file is named and
// refused without being read past `maxBytes` or waited on; only a missing file is made, and a file that
// is there is replaced only on request (`--new-secret`).
import Glibc

/// Why the secret file cannot be used: what is wrong with it, worded for a person.
public struct SecretFileError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let problem: String

    public var description: String {
        "\(path) \(problem); remove it (a new secret is then made) or start touchbridge with --new-secret to replace it"
    }
}

enum SecretFile {
    /// The most bytes read from the file: 32 hex digits and a line end, with room for stray whitespace.
    /// A larger file is not a secret.
    static let maxBytes = 64

    /// The secret kept in `path`, or nil when there is no file. Throws when there is something else.
    static func read(_ path: String) throws(SecretFileError) -> PairingSecret? {
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        let fd = openFile(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0)
        if fd < 0 {
            let error = errno
            if error == ENOENT { return nil }
            throw SecretFileError(path: path, problem: "cannot be read (\(describe(errno: error)))")
        }
        defer { closeFile(fd) }
        guard let mode = fileMode(fd) else {
            throw SecretFileError(path: path, problem: "cannot be read (\(describe(errno: errno)))")
        }
        guard mode & S_IFMT == S_IFREG else {
            throw SecretFileError(path: path, problem: "is \(kind(of: mode)), not a file holding a secret")
        }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { readSome(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[count...])) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw SecretFileError(path: path, problem: "cannot be read (\(describe(errno: errno)))") }
            if n == 0 { break }
            count += n
        }
        guard count <= maxBytes else {
            throw SecretFileError(path: path, problem: "is larger than \(maxBytes) bytes, so it is not a secret (32 lowercase hex digits)")
        }
        return try parse(bytes[0..<count], path: path)
    }

    /// The secret in a file's bytes: 32 lowercase hex digits, with whitespace around them allowed.
    static func parse(_ bytes: ArraySlice<UInt8>, path: String) throws(SecretFileError) -> PairingSecret {
        let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var text = Array(bytes.drop(while: { space.contains($0) }))
        while let last = text.last, space.contains(last) { text.removeLast() }
        let lowerHex: (UInt8) -> Bool = { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        if text.isEmpty { throw SecretFileError(path: path, problem: "is empty, not a secret (32 lowercase hex digits)") }
        if text.allSatisfy(lowerHex) {
            guard text.count == 32 else {
                throw SecretFileError(path: path, problem: "holds \(text.count) hex digits, not a secret (32 lowercase hex digits)")
            }
            return PairingSecret(value: String(decoding: text, as: UTF8.self))
        }
        if text.allSatisfy({ lowerHex($0) || (0x41...0x46).contains($0) }) {
            throw SecretFileError(path: path, problem: "holds uppercase hex digits, not a secret (32 lowercase hex digits)")
        }
        throw SecretFileError(path: path, problem: "holds something other than a secret (32 lowercase hex digits)")
    }

    /// Writes `secret` to `path`, private to the user (0600), whole or not at all: through a temporary
    /// file, then linked in when `replace` is false (so that a file that appeared in between, or a
    /// dangling link, is never replaced) or renamed over the old one when it is true.
    static func write(_ secret: PairingSecret, to path: String, replace: Bool) throws(SecretFileError) {
        let temporary = path + ".new"
        // A temporary file left by an interrupted run is ours (the directory is private): start afresh.
        _ = unlinkFile(temporary)
        let fd = openFile(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SecretFileError(path: temporary, problem: "cannot be made (\(describe(errno: errno)))") }
        let bytes = Array((secret.value + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { writeSome(fd, UnsafeRawBufferPointer(rebasing: $0[written...])) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let error = errno
                closeFile(fd)
                _ = unlinkFile(temporary)
                throw SecretFileError(path: temporary, problem: "cannot be written (\(describe(errno: error)))")
            }
            written += n
        }
        closeFile(fd)
        defer { _ = unlinkFile(temporary) }
        if replace {
            guard renameFile(temporary, path) == 0 else {
                throw SecretFileError(path: path, problem: "cannot be replaced (\(describe(errno: errno)))")
            }
        } else {
            guard linkFile(temporary, path) == 0 else {
                let error = errno
                if error == EEXIST {
                    throw SecretFileError(path: path, problem: "is there but cannot be opened (a link to nothing?)")
                }
                throw SecretFileError(path: path, problem: "cannot be made (\(describe(errno: error)))")
            }
        }
    }

    /// What kind of file `mode` describes, for the message.
    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    // MARK: the C calls, one call site each

    /// Opens `path`; the descriptor, or -1 with `errno` set. The corresponding C function is `open`.
    private static func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        Glibc.open(path, flags, mode)
    }

    /// The file type and permission bits of `fd`, or nil with `errno` set. The corresponding C function
    /// is `fstat`.
    private static func fileMode(_ fd: Int32) -> mode_t? {
        var status = stat()
        return Glibc.fstat(fd, &status) == 0 ? status.st_mode : nil
    }

    /// Reads at most `buffer.count` bytes; the count, 0 at the end, or -1 with `errno` set. The
    /// corresponding C function is `read`.
    private static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        Glibc.read(fd, buffer.baseAddress, buffer.count)
    }

    /// Writes at most `bytes.count` bytes; the count, or -1 with `errno` set. The corresponding C
    /// function is `write`.
    private static func writeSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        Glibc.write(fd, bytes.baseAddress, bytes.count)
    }

    /// The corresponding C function is `close`.
    private static func closeFile(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Makes `new` a second name of `existing`, failing with EEXIST when `new` is there (even as a
    /// dangling link). The corresponding C function is `link`.
    private static func linkFile(_ existing: String, _ new: String) -> Int32 {
        Glibc.link(existing, new)
    }

    /// Gives `old` the name `new`, replacing what `new` named. The corresponding C function is `rename`.
    private static func renameFile(_ old: String, _ new: String) -> Int32 {
        Glibc.rename(old, new)
    }

    /// Removes the name `path`. The corresponding C function is `unlink`.
    private static func unlinkFile(_ path: String) -> Int32 {
        Glibc.unlink(path)
    }

    /// The text of an `errno` value. The corresponding C function is `strerror`.
    private static func describe(errno value: Int32) -> String {
        String(cString: Glibc.strerror(value))
    }
}
