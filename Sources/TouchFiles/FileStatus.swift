import Glibc

/// What kind of thing a path names.
public enum FileType: Equatable, Sendable {
    case regular, directory, fifo, characterDevice, blockDevice, socket, symbolicLink, unknown

    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFSOCK: self = .socket
        case S_IFLNK: self = .symbolicLink
        default: self = .unknown
        }
    }

    /// "a FIFO", "a character device": for a message.
    public var phrase: String {
        switch self {
        case .regular: return "a regular file"
        case .directory: return "a directory"
        case .fifo: return "a FIFO"
        case .characterDevice: return "a character device"
        case .blockDevice: return "a block device"
        case .socket: return "a socket"
        case .symbolicLink: return "a symbolic link"
        case .unknown: return "not a regular file"
        }
    }
}

/// What `fstat` says of an open file, in the words the checks use.
public struct FileStatus: Equatable, Sendable {
    public var type: FileType
    /// The permission bits (`0o600`), without the type.
    public var permissions: mode_t
    public var owner: uid_t
    /// In bytes (a regular file's; 0 for most others).
    public var size: Int

    init(_ status: stat) {
        type = FileType(mode: status.st_mode)
        permissions = status.st_mode & 0o7777
        owner = status.st_uid
        size = Int(status.st_size)
    }

    /// `0o644` as "0644".
    public static func octal(_ permissions: mode_t) -> String {
        let digits = String(permissions, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// What a file is read as, with the most bytes such a file may hold: one larger is refused by its size
/// before a byte is read, and never read past the limit if it grows.
public struct FileKind: Sendable, Equatable {
    /// "config file", for a message.
    public let noun: String
    public let maxBytes: Int
    /// For a file of lines: the longest line, refused as soon as it is read (an endless stream without
    /// a newline on standard input stops there, not at `maxBytes`).
    public let maxLineBytes: Int?

    public init(noun: String, maxBytes: Int, maxLineBytes: Int? = nil) {
        self.noun = noun
        self.maxBytes = maxBytes
        self.maxLineBytes = maxLineBytes
    }

    /// `--config`, `$XDG_CONFIG_HOME/touchbridge/config.toml`.
    public static let config = FileKind(noun: "config file", maxBytes: 1 << 20)
    /// `--tls-cert`: a PEM chain.
    public static let certificate = FileKind(noun: "certificate", maxBytes: 1 << 20)
    /// `--tls-key`.
    public static let privateKey = FileKind(noun: "private key", maxBytes: 1 << 20)
    /// `replay FILE` (a day of a phone at 60 Hz is about 1 GB of lines: split it).
    /// Its lines: the largest datagram as record writes it (65,507 octets as a `bytes` array, or as a
    /// `packet` string of `\u00XX` escapes, under 400 KB) with room to spare.
    public static let recording = FileKind(noun: "recording", maxBytes: 512 << 20, maxLineBytes: 512 << 10)
    /// `$XDG_STATE_HOME/touchbridge/pairing-secret`: 32 hex digits and a line end, with room for stray
    /// whitespace.
    public static let pairingSecret = FileKind(noun: "pairing secret", maxBytes: 64)
    /// `$XDG_STATE_HOME/touchbridge/portal-restore-token`: a UUID, with room.
    public static let restoreToken = FileKind(noun: "restore token", maxBytes: 256)

    /// "1 MiB", "512 MiB", "64 bytes".
    public static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

/// Why a file could not be read or written: the path, what is wrong, and the exit status `sysexits.h`
/// gives it.
public struct FileProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// Nothing at the path.
        case missing
        /// `open` failed (permissions, a component not a directory, ...).
        case cannotOpen(Errno)
        /// The path is a symbolic link, where one is not followed.
        case symbolicLink
        /// A FIFO, a device, a directory, a socket: never read (a FIFO or a device may never end).
        case notRegular(FileType)
        /// Larger than the kind's limit.
        case tooLarge(limit: Int)
        /// A line (counted from 1) longer than the kind's line limit.
        case lineTooLong(line: Int, limit: Int)
        /// `read` failed.
        case cannotRead(Errno)
        /// A FIFO (or socket) to write to that nobody reads.
        case noReader
        /// An output that cannot be made or opened.
        case cannotCreate(Errno)
        /// A write, `fsync` or `close` of an output failed.
        case cannotWrite(Errno)
    }

    public let path: String
    /// What the file was to be ("config file").
    public let noun: String
    public let reason: Reason

    public init(path: String, noun: String, reason: Reason) {
        self.path = path
        self.noun = noun
        self.reason = reason
    }

    /// What is wrong, after the path: "is a FIFO, not a config file (only a regular file is read)".
    public var phrase: String {
        switch reason {
        case .missing: return "does not exist"
        case .cannotOpen(let error): return "cannot be opened (\(error))"
        case .symbolicLink: return "is a symbolic link, which a \(noun) may not be"
        case .notRegular(let type): return "is \(type.phrase), not a \(noun) (only a regular file is read)"
        case .tooLarge(let limit): return "is larger than \(FileKind.size(limit)), more than a \(noun) may be"
        case .lineTooLong(let line, let limit): return "line \(line): longer than \(FileKind.size(limit)), longer than a \(noun)'s line may be"
        case .cannotRead(let error): return "cannot be read (\(error))"
        case .noReader: return "is a FIFO or socket that nobody reads"
        case .cannotCreate(let error): return "cannot be made (\(error))"
        case .cannotWrite(let error): return "cannot be written (\(error))"
        }
    }

    public var description: String { "\(path) \(phrase)" }

    /// `sysexits.h`'s word for it: an input that is not there or cannot be read is `EX_NOINPUT` (66),
    /// one too large to be what it says `EX_DATAERR` (65); an output that cannot be made
    /// `EX_CANTCREAT` (73), one whose writing failed `EX_IOERR` (74).
    public var exitStatus: Int32 {
        switch reason {
        case .missing, .cannotOpen, .symbolicLink, .notRegular, .cannotRead: return FileExit.noInput
        case .tooLarge, .lineTooLong: return FileExit.dataError
        case .noReader, .cannotCreate: return FileExit.cannotCreate
        case .cannotWrite: return FileExit.ioError
        }
    }
}

/// The exit statuses of file problems, from `sysexits.h` (TouchDaemon's `ExitStatus` names them too).
public enum FileExit {
    /// EX_DATAERR: the input's data is wrong (too large, not what it should hold).
    public static let dataError: Int32 = 65
    /// EX_NOINPUT: an input file is not there, or cannot be read as one.
    public static let noInput: Int32 = 66
    /// EX_CANTCREAT: an output file cannot be made.
    public static let cannotCreate: Int32 = 73
    /// EX_IOERR: writing an output file failed.
    public static let ioError: Int32 = 74
}
