// The pairing secret's file, read by `serve` and `pair` through the one reader here. It trusts nothing
// about what it finds: the file must be the user's own (owned by the user, not a symbolic link, in a
// directory owned by the user that no one else can write), a regular file (a FIFO, a device, a directory
// is named and refused without being waited on), at most `maxBytes`; a mode other than 0600 is repaired
// and said. Only a missing file is made, and a file that is there is replaced only on request
// (`--new-secret`). Its files go through TouchFiles (opened without waiting, read bounded).
import Glibc
import TouchFiles

/// Why the secret file cannot be used: what is wrong with it, and what to do, worded for a person.
public struct SecretFileError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let problem: String
    /// What to do about it, one line.
    public let fix: String

    /// The fix for a file that is there but is not a usable secret.
    static let removeOrReplace = "remove it (a new secret is then made) or start touchbridge with --new-secret to replace it"

    init(path: String, problem: String, fix: String = SecretFileError.removeOrReplace) {
        self.path = path
        self.problem = problem
        self.fix = fix
    }

    public var description: String { "\(path) \(problem); \(fix)" }
}

enum SecretFile {
    /// The most bytes read from the file: 32 hex digits and a line end, with room for stray whitespace.
    /// A larger file is not a secret.
    static let maxBytes = FileKind.pairingSecret.maxBytes

    /// The directory `path` (the state directory), checked to be the user's own: owned by the user and
    /// writable by no one else. Nil when it is not there.
    static func directory(_ path: String) throws(SecretFileError) -> OpenDirectory? {
        let directory: OpenDirectory
        do throws(FileProblem) {
            directory = try OpenDirectory(path)
        } catch {
            if error.reason == .missing { return nil }
            throw SecretFileError(path: path, problem: "cannot be opened as a directory (\(error.phrase))",
                                  fix: "make it a directory of your own, or set XDG_STATE_HOME to one")
        }
        let me = FileCalls.effectiveUser()
        guard directory.status.owner == me else {
            throw SecretFileError(path: path, problem: "is owned by uid \(directory.status.owner), not by you (uid \(me)), so the pairing secret cannot be kept there",
                                  fix: "set XDG_STATE_HOME to a directory of your own, or make this one yours with chown")
        }
        guard directory.status.permissions & 0o022 == 0 else {
            let mode = FileStatus.octal(directory.status.permissions)
            throw SecretFileError(path: path, problem: "can be written by others (mode \(mode)), so the pairing secret in it cannot be trusted",
                                  fix: "make it private with: chmod 700 \(path)")
        }
        return directory
    }

    /// The secret kept as `name` in `directory`, or nil when there is no file; with a note when its mode
    /// was repaired. Throws when there is something else, or a file that is not the user's own.
    static func read(_ name: String, in directory: OpenDirectory) throws(SecretFileError) -> (secret: PairingSecret, note: String?)? {
        let path = directory.path + "/" + name
        let file: ReadableFile
        do throws(FileProblem) {
            file = try ReadableFile(name, as: .pairingSecret, in: directory, followingLinks: false)
        } catch {
            switch error.reason {
            case .missing: return nil
            case .notRegular(let type): throw SecretFileError(path: path, problem: "is \(type.phrase), not a file holding a secret")
            case .symbolicLink: throw SecretFileError(path: path, problem: "is a symbolic link, not a file of your own holding a secret")
            case .tooLarge: throw SecretFileError(path: path, problem: "is larger than \(maxBytes) bytes, so it is not a secret (32 lowercase hex digits)")
            default: throw SecretFileError(path: path, problem: error.phrase)
            }
        }
        let me = FileCalls.effectiveUser()
        guard file.status.owner == me else {
            throw SecretFileError(path: path, problem: "is owned by uid \(file.status.owner), not by you (uid \(me)), so it is not your secret")
        }
        let bytes: [UInt8]
        do throws(FileProblem) {
            bytes = try file.readAll()
        } catch {
            if case .tooLarge = error.reason {
                throw SecretFileError(path: path, problem: "is larger than \(maxBytes) bytes, so it is not a secret (32 lowercase hex digits)")
            }
            throw SecretFileError(path: path, problem: error.phrase)
        }
        let secret = try parse(bytes[...], path: path)
        let mode = file.status.permissions
        guard mode != 0o600 else { return (secret, nil) }
        do throws(Errno) {
            try file.setPermissions(0o600)
        } catch {
            throw SecretFileError(path: path, problem: "has mode \(FileStatus.octal(mode)), not 0600, and cannot be made private (\(error))",
                                  fix: "make it private with: chmod 600 \(path)")
        }
        let others = mode & 0o077 != 0
        let note = "\(path) had mode \(FileStatus.octal(mode)), not 0600: made it 0600"
            + (others ? " (others could read it: start touchbridge with --new-secret if they may have)" : "")
        return (secret, note)
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
    /// file, written, synced and closed with every step checked, then linked in when `replace` is false
    /// (so that a file that appeared in between, or a dangling link, is never replaced) or renamed over
    /// the old one when it is true. A failure here is the disk's or the directory's, not the old file's:
    /// its fix never suggests `--new-secret`.
    static func write(_ secret: PairingSecret, to path: String, replace: Bool) throws(SecretFileError) {
        try write(line: secret.value, to: path, replace: replace)
    }

    /// Writes `line` and a line end to `path`, as `write(_:to:replace:)` writes the secret (the Impress PIN too).
    static func write(line: String, to path: String, replace: Bool) throws(SecretFileError) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let writable = "check that \(directory) is yours and can be written, and that its disk has room"
        let temporary = path + ".new"
        // A temporary file left by an interrupted run is ours (the directory is private): start afresh.
        try? FileCalls.unlink(temporary)
        let fd: Int32
        do throws(Errno) {
            fd = try FileCalls.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        } catch {
            throw SecretFileError(path: temporary, problem: "cannot be made (\(error))", fix: writable)
        }
        let bytes = Array((line + "\n").utf8)
        var written = 0
        do throws(Errno) {
            while written < bytes.count {
                do throws(Errno) {
                    let n = try bytes.withUnsafeBytes { all in
                        Result { () throws(Errno) in try FileCalls.write(fd, UnsafeRawBufferPointer(rebasing: all[written...])) }
                    }.get()
                    if n == 0 { throw Errno(ENOSPC) }
                    written += n
                } catch where error == .interrupted {
                    continue
                }
            }
            try FileCalls.sync(fd)
        } catch {
            try? FileCalls.close(fd)
            try? FileCalls.unlink(temporary)
            throw SecretFileError(path: temporary, problem: "cannot be written (\(error))",
                                  fix: "free some space on its disk (df \(directory)) and start touchbridge again")
        }
        do throws(Errno) { try FileCalls.close(fd) } catch {
            try? FileCalls.unlink(temporary)
            throw SecretFileError(path: temporary, problem: "cannot be written (\(error))",
                                  fix: "free some space on its disk (df \(directory)) and start touchbridge again")
        }
        defer { try? FileCalls.unlink(temporary) }
        if replace {
            do throws(Errno) { try FileCalls.rename(temporary, path) } catch {
                throw SecretFileError(path: path, problem: "cannot be replaced (\(error))", fix: writable)
            }
        } else {
            do throws(Errno) { try FileCalls.link(temporary, path) } catch {
                if error == .exists {
                    throw SecretFileError(path: path, problem: "is there but cannot be opened (a link to nothing?)")
                }
                throw SecretFileError(path: path, problem: "cannot be made (\(error))", fix: writable)
            }
        }
    }
}
