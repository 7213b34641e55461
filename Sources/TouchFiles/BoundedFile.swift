// Every file touchbridge reads goes through `ReadableFile`: opened without blocking (O_NONBLOCK: opening
// a FIFO would otherwise wait for a writer, in `open`, where no signal handler gets a word in), checked
// with fstat to be a regular file (a FIFO, a device such as /dev/zero, a directory or a socket is refused
// before a byte is read), refused when larger than its kind's limit by its size alone, and read at most
// to that limit (a file that grows while read is not followed). So reading a file the user named never
// waits and never takes more memory than the limit, and a signal always ends the process.
import Glibc

/// A regular file, open for reading (closed when released).
public final class ReadableFile {
    public let path: String
    public let kind: FileKind
    /// What fstat said at the open.
    public let status: FileStatus
    private let fd: Int32

    /// Opens `path` (a name in `directory` when given) as a `kind`: refused unless it is a regular file
    /// no larger than `kind.maxBytes`. `followingLinks: false` refuses a symbolic link (O_NOFOLLOW).
    public init(_ path: String, as kind: FileKind, in directory: OpenDirectory? = nil,
                followingLinks: Bool = true) throws(FileProblem) {
        func problem(_ reason: FileProblem.Reason) -> FileProblem {
            FileProblem(path: directory.map { $0.path + "/" + path } ?? path, noun: kind.noun, reason: reason)
        }
        let flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW)
        let fd: Int32
        do throws(Errno) {
            if let directory {
                fd = try FileCalls.open(path, in: directory.descriptor, flags)
            } else {
                fd = try FileCalls.open(path, flags)
            }
        } catch {
            switch error {
            case .noEntry: throw problem(.missing)
            case .loop where !followingLinks: throw problem(.symbolicLink)
            default: throw problem(.cannotOpen(error))
            }
        }
        let status: FileStatus
        do throws(Errno) {
            status = try FileCalls.status(fd)
        } catch {
            try? FileCalls.close(fd)
            throw problem(.cannotOpen(error))
        }
        guard status.type == .regular else {
            try? FileCalls.close(fd)
            throw problem(.notRegular(status.type))
        }
        guard status.size <= kind.maxBytes else {
            try? FileCalls.close(fd)
            throw problem(.tooLarge(limit: kind.maxBytes))
        }
        self.path = directory.map { $0.path + "/" + path } ?? path
        self.kind = kind
        self.status = status
        self.fd = fd
    }

    deinit { try? FileCalls.close(fd) }

    /// The whole file, at most `kind.maxBytes`: refused if it has grown past them since the open.
    public func readAll() throws(FileProblem) -> [UInt8] {
        try BoundedFile.read(descriptor: fd, path: path, as: kind, sizeHint: status.size)
    }

    /// Sets the file's permission bits (`0o600`).
    public func setPermissions(_ permissions: mode_t) throws(Errno) {
        try FileCalls.setPermissions(fd, permissions)
    }
}

/// A directory, open so that the files in it are opened relative to what was checked (`openat`), not
/// to a path that may since name another directory.
public final class OpenDirectory {
    public let path: String
    public let status: FileStatus
    let descriptor: Int32

    /// Opens the directory at `path` (links in the path are followed).
    public init(_ path: String) throws(FileProblem) {
        func problem(_ reason: FileProblem.Reason) -> FileProblem {
            FileProblem(path: path, noun: "directory", reason: reason)
        }
        let fd: Int32
        do throws(Errno) {
            fd = try FileCalls.open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)
        } catch {
            if error == .noEntry { throw problem(.missing) }
            if error == Errno(ENOTDIR) { throw problem(.notRegular(.unknown)) }
            throw problem(.cannotOpen(error))
        }
        do throws(Errno) {
            status = try FileCalls.status(fd)
        } catch {
            try? FileCalls.close(fd)
            throw problem(.cannotOpen(error))
        }
        self.path = path
        descriptor = fd
    }

    deinit { try? FileCalls.close(descriptor) }
}

/// The readers' shared parts.
public enum BoundedFile {
    /// The whole regular file at `path`, as a `kind` (see `ReadableFile`).
    public static func read(_ path: String, as kind: FileKind) throws(FileProblem) -> [UInt8] {
        try ReadableFile(path, as: kind).readAll()
    }

    /// What is left to read of `descriptor` (standard input, given as `-`), at most `kind.maxBytes`:
    /// refused past them, or at a line longer than `kind.maxLineBytes` as soon as it is read. The
    /// descriptor may block (a pipe): it is the user's own stream.
    public static func read(descriptor: Int32, path: String, as kind: FileKind, sizeHint: Int = 0) throws(FileProblem) -> [UInt8] {
        func problem(_ reason: FileProblem.Reason) -> FileProblem {
            FileProblem(path: path, noun: kind.noun, reason: reason)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(kind.maxBytes, sizeHint) + 1)
        var chunk = [UInt8](repeating: 0, count: 65536)
        var line = 1, lineStart = 0
        while true {
            // At most one byte past the limit: enough to know the file is larger.
            let room = min(chunk.count, kind.maxBytes + 1 - bytes.count)
            let n: Int
            do throws(Errno) {
                n = try chunk.withUnsafeMutableBytes { buffer in
                    Result { () throws(Errno) in try FileCalls.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room])) }
                }.get()
            } catch {
                if error == .interrupted { continue }
                throw problem(.cannotRead(error))
            }
            if n == 0 { return bytes }
            let start = bytes.count
            bytes += chunk[0..<n]
            guard bytes.count <= kind.maxBytes else { throw problem(.tooLarge(limit: kind.maxBytes)) }
            if let maxLine = kind.maxLineBytes {
                for i in start..<bytes.count {
                    if bytes[i] == 0x0A {
                        line += 1
                        lineStart = i + 1
                    } else if i - lineStart >= maxLine {
                        throw problem(.lineTooLong(line: line, limit: maxLine))
                    }
                }
            }
        }
    }
}

/// A file written: a regular file, a character device (/dev/null, a terminal) or a FIFO that a reader
/// holds open, never waited on at the open; each write is checked, waits for room only while no stop is
/// asked for, and `finish` checks that everything reached the disk (`fsync`, then `close`).
public final class WritableFile {
    public let path: String
    private let fd: Int32
    /// Whether the descriptor is ours to close (not standard output).
    private let owned: Bool
    /// A regular file: never short of room, synced at the end.
    private let isRegular: Bool
    /// Whether our open made it non-blocking; standard output may block, so it is written in pieces a
    /// pipe takes whole once it has room.
    private let nonBlocking: Bool

    /// What a write came to.
    public enum Written: Equatable {
        case done
        /// The output had no room and a stop was asked for: the line may be cut short.
        case interrupted
    }

    /// Makes (or empties) `path` for writing (0644 before the umask), without waiting: a FIFO with no
    /// reader is refused (ENXIO) rather than waited on, and so is anything but a regular file, a
    /// character device or a FIFO (a block device, a socket).
    public init(creating path: String) throws(FileProblem) {
        func problem(_ reason: FileProblem.Reason) -> FileProblem {
            FileProblem(path: path, noun: "file to write", reason: reason)
        }
        let fd: Int32
        do throws(Errno) {
            fd = try FileCalls.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0o644)
        } catch {
            if error == .noDevice { throw problem(.noReader) }
            throw problem(.cannotCreate(error))
        }
        let status: FileStatus
        do throws(Errno) {
            status = try FileCalls.status(fd)
        } catch {
            try? FileCalls.close(fd)
            throw problem(.cannotCreate(error))
        }
        guard [.regular, .characterDevice, .fifo].contains(status.type) else {
            try? FileCalls.close(fd)
            throw FileProblem(path: path, noun: "file to write", reason: .notRegular(status.type))
        }
        self.path = path
        self.fd = fd
        owned = true
        isRegular = status.type == .regular
        nonBlocking = true
    }

    /// Standard output (`-`), as it was given: not closed at the end.
    public init(standardOutput name: String) {
        path = name
        fd = 1
        owned = false
        isRegular = (try? FileCalls.status(1))?.type == .regular
        nonBlocking = false
    }

    /// Writes all of `bytes`; when the output has no room, waits for it, or for `stop` (a descriptor that
    /// becomes readable when a stop is asked for: the signal pipe) and then returns `.interrupted`.
    public func write(_ bytes: [UInt8], stop: Int32?) throws(FileProblem) -> Written {
        func problem(_ error: Errno) -> FileProblem {
            FileProblem(path: path, noun: "file to write", reason: .cannotWrite(error))
        }
        var offset = 0
        while offset < bytes.count {
            if !isRegular {
                // Room first (a pipe's reader may not read): a stop asked for ends the wait.
                var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                if let stop { fds.append(pollfd(fd: stop, events: Int16(POLLIN), revents: 0)) }
                do throws(Errno) {
                    _ = try FileCalls.poll(&fds, milliseconds: -1)
                } catch {
                    if error == .interrupted { continue }
                    throw problem(error)
                }
                if fds.count > 1, fds[1].revents != 0 { return .interrupted }
                // An error or hang-up is said by the write itself.
                if fds[0].revents == 0 { continue }
            }
            // A blocking pipe takes PIPE_BUF bytes whole once it has room, so this write cannot wait.
            let piece = nonBlocking || isRegular ? bytes.count - offset : min(bytes.count - offset, Int(PIPE_BUF))
            let n: Int
            do throws(Errno) {
                n = try bytes.withUnsafeBytes { all in
                    Result { () throws(Errno) in try FileCalls.write(fd, UnsafeRawBufferPointer(rebasing: all[offset..<(offset + piece)])) }
                }.get()
            } catch {
                if error == .interrupted || error == .wouldBlock { continue }
                throw problem(error)
            }
            // write(2) returns 0 only for a zero-length write; treat it as no room.
            if n == 0 { throw problem(Errno(ENOSPC)) }
            offset += n
        }
        return .done
    }

    /// Ends the writing: a regular file is synced to the disk (where a full disk or an I/O error may be
    /// said only now), then closed (where NFS may say it); either failure is thrown.
    public func finish() throws(FileProblem) {
        func problem(_ error: Errno) -> FileProblem {
            FileProblem(path: path, noun: "file to write", reason: .cannotWrite(error))
        }
        if isRegular {
            do throws(Errno) { try FileCalls.sync(fd) } catch {
                if owned { try? FileCalls.close(fd) }
                throw problem(error)
            }
        }
        if owned {
            do throws(Errno) { try FileCalls.close(fd) } catch { throw problem(error) }
        }
    }
}

/// Descriptors 0, 1 and 2.
public enum StandardDescriptors {
    /// Opens /dev/null on each of 0, 1 and 2 that is closed, in that order (open takes the lowest free
    /// descriptor), so that no socket, event loop or file opened later becomes standard input, output or
    /// error and has log lines written into it. Call it first in `main`, before anything opens a file.
    /// Returns the descriptors it filled.
    @discardableResult
    public static func openClosedOnes() -> [Int32] {
        var filled: [Int32] = []
        for fd: Int32 in 0...2 where !FileCalls.isOpen(fd) {
            // Close-on-exec off: a child started later inherits its standard streams as they are.
            guard let opened = try? FileCalls.open("/dev/null", O_RDWR | O_NOCTTY) else { return filled }
            filled.append(opened)
        }
        return filled
    }
}
