// The one file reader against every kind of thing a path can name, as a property: generated cases (the
// kind, its size against the limit, links followed or not), each compared with a model of what the reader
// must say, replayable by seed (TOUCHFILES_SEED=N). Whatever the case, the reader never waits (a FIFO
// with no writer, a device that never ends) and never reads past the limit.
import Foundation
import Glibc
import Testing
import TouchFiles
import TouchTestSupport

// Ten minutes, as the other suites: a time limit counts while the test waits for a thread of the cooperative
// pool, which the synchronous integration suites hold for minutes on 2 cores (five of these "took" 120 s).
@Suite(.timeLimit(.minutes(10)))
struct BoundedFileTests {
    /// What a path names in one case.
    enum Thing: CustomStringConvertible {
        case regular(size: Int)
        case fifo
        case device(String)
        case directory
        case socket
        case missing
        /// Open succeeds, fstat says regular, read fails (EIO): /proc/self/mem.
        case unreadable
        /// No permission to open (as a user other than root only: root reads anything).
        case forbidden(size: Int)
        indirect case link(to: Thing)
        case danglingLink

        var description: String {
            switch self {
            case .regular(let size): return "a regular file of \(size) bytes"
            case .fifo: return "a FIFO"
            case .device(let path): return "the device \(path)"
            case .directory: return "a directory"
            case .socket: return "a socket"
            case .missing: return "nothing"
            case .unreadable: return "/proc/self/mem"
            case .forbidden(let size): return "a mode 000 file of \(size) bytes"
            case .link(let target): return "a link to \(target)"
            case .danglingLink: return "a link to nothing"
            }
        }
    }

    /// What the reader must say.
    enum Outcome: Equatable, CustomStringConvertible {
        case bytes([UInt8])
        case refused(FileProblem.Reason)

        var description: String {
            switch self {
            case .bytes(let b): return "\(b.count) bytes"
            case .refused(let reason): return "refused: \(reason)"
            }
        }
    }

    /// The model: the reader's answer for `thing` with `limit`, links followed or not.
    static func expected(_ thing: Thing, limit: Int, following: Bool, content: [UInt8]) -> Outcome {
        switch thing {
        case .regular(let size): return size <= limit ? .bytes(content) : .refused(.tooLarge(limit: limit))
        case .fifo: return .refused(.notRegular(.fifo))
        // The device and /proc/self/mem are reached through a link (the test makes no device nodes).
        case .device: return following ? .refused(.notRegular(.characterDevice)) : .refused(.symbolicLink)
        case .directory: return .refused(.notRegular(.directory))
        // open(2) of a socket's name: ENXIO, before fstat could say what it is.
        case .socket: return .refused(.cannotOpen(Errno(ENXIO)))
        case .missing: return .refused(.missing)
        case .unreadable: return following ? .refused(.cannotRead(Errno(EIO))) : .refused(.symbolicLink)
        case .forbidden: return .refused(.cannotOpen(Errno(EACCES)))
        case .link(let target):
            return following ? expected(target, limit: limit, following: following, content: content) : .refused(.symbolicLink)
        case .danglingLink: return following ? .refused(.missing) : .refused(.symbolicLink)
        }
    }

    /// Makes `thing` at `path`; the bytes a regular file holds.
    static func make(_ thing: Thing, at path: String, in directory: String, using random: inout SplitMix64) throws -> [UInt8] {
        switch thing {
        case .regular(let size), .forbidden(let size):
            let content = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(FileManager.default.createFile(atPath: path, contents: Data(content)))
            if case .forbidden = thing { #expect(chmod(path, 0) == 0) }
            return content
        case .fifo:
            #expect(mkfifo(path, 0o600) == 0)
        case .device(let device):
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: device)
        case .directory:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case .socket:
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            #expect(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = b }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(bound == 0, "bind \(path): \(String(cString: strerror(errno)))")
        case .missing:
            break
        case .unreadable:
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/proc/self/mem")
        case .link(let target):
            let targetPath = path + ".target"
            let content = try make(target, at: targetPath, in: directory, using: &random)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: targetPath)
            return content
        case .danglingLink:
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory + "/nothing-here")
        }
        return []
    }

    static func randomThing(limit: Int, using random: inout SplitMix64, depth: Int = 0) -> Thing {
        // Sizes around the limit: under it, at it, one past it, far past it.
        let size = [0, Int.random(in: 0...max(0, limit), using: &random), limit, limit + 1, limit * 3 + 17].randomElement(using: &random)!
        var things: [Thing] = [.regular(size: size), .regular(size: size), .fifo, .device("/dev/zero"), .device("/dev/urandom"),
                               .device("/dev/null"), .directory, .socket, .missing, .unreadable, .danglingLink]
        if geteuid() != 0 { things.append(.forbidden(size: min(size, limit))) }
        if depth == 0 { things.append(.link(to: randomThing(limit: limit, using: &random, depth: 1))) }
        // A link to a link is covered by /proc/self/mem (a link to a magic link).
        return things.randomElement(using: &random)!
    }

    @Test func theReaderAnswersAsTheModelSaysForEveryKindOfFile() throws {
        let seed = ProcessInfo.processInfo.environment["TOUCHFILES_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let directory = NSTemporaryDirectory() + "tb-files-\(getpid())-\(seed)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var seen = Set<String>()
        for index in 0..<300 {
            let limit = [0, 1, 64, 4096, 70_000].randomElement(using: &random)!
            let thing = Self.randomThing(limit: limit, using: &random)
            let following = Bool.random(using: &random)
            let path = directory + "/case-\(index)"
            let content = try Self.make(thing, at: path, in: directory, using: &random)
            let expected = Self.expected(thing, limit: limit, following: following, content: content)
            let kind = FileKind(noun: "test file", maxBytes: limit)
            let got: Outcome
            do throws(FileProblem) {
                got = .bytes(try ReadableFile(path, as: kind, followingLinks: following).readAll())
            } catch {
                #expect(error.path == path)
                got = .refused(error.reason)
                // The exit status follows from the reason, as sysexits.h says.
                if case .tooLarge = error.reason { #expect(error.exitStatus == 65) } else { #expect(error.exitStatus == 66) }
            }
            #expect(got == expected, "seed \(seed), case \(index): \(thing), limit \(limit), links \(following ? "followed" : "refused"): \(got), not \(expected)")
            seen.insert("\(expected)".prefix(12).description)
        }
        // Every outcome was met (300 cases over 12 kinds).
        #expect(seen.count >= 6, "seed \(seed): only \(seen)")
    }

    /// The directory form (`openat`, what the pairing secret uses) answers the same.
    @Test func aNameInAnOpenDirectoryIsReadTheSameWay() throws {
        let directory = NSTemporaryDirectory() + "tb-files-dir-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "0123".write(toFile: directory + "/file", atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/link", withDestinationPath: directory + "/file")
        #expect(mkfifo(directory + "/fifo", 0o600) == 0)
        let open = try OpenDirectory(directory)
        #expect(open.status.type == .directory)
        let kind = FileKind(noun: "test file", maxBytes: 64)
        #expect(try ReadableFile("file", as: kind, in: open, followingLinks: false).readAll() == Array("0123".utf8))
        #expect(throws: FileProblem(path: directory + "/link", noun: "test file", reason: .symbolicLink)) {
            try ReadableFile("link", as: kind, in: open, followingLinks: false)
        }
        #expect(throws: FileProblem(path: directory + "/fifo", noun: "test file", reason: .notRegular(.fifo))) {
            try ReadableFile("fifo", as: kind, in: open, followingLinks: false)
        }
    }

    /// Standard input given as `-` (a pipe) is read to its end, and refused one byte past the limit.
    @Test func aStreamIsReadToItsLimit() throws {
        // The reader may close its end before the writer is done: an error for the writer, not a signal.
        signal(SIGPIPE, SIG_IGN)
        for (count, limit) in [(0, 10), (10, 10), (11, 10), (200_000, 150_000)] {
            var fds: [Int32] = [-1, -1]
            #expect(pipe(&fds) == 0)
            let (readEnd, writeEnd) = (fds[0], fds[1])
            let writer = Thread {
                let bytes = [UInt8](repeating: 0x41, count: count)
                var offset = 0
                while offset < count {
                    let n = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress! + offset, count - offset) }
                    if n <= 0 { break }
                    offset += n
                }
                close(writeEnd)
            }
            writer.start()
            defer { close(readEnd) }
            let kind = FileKind(noun: "recording", maxBytes: limit)
            if count <= limit {
                #expect(try BoundedFile.read(descriptor: readEnd, path: "standard input", as: kind).count == count)
            } else {
                #expect(throws: FileProblem(path: "standard input", noun: "recording", reason: .tooLarge(limit: limit))) {
                    try BoundedFile.read(descriptor: readEnd, path: "standard input", as: kind)
                }
            }
        }
    }

    /// The writer: a regular file gets every byte; /dev/full's error is said at the write; a FIFO nobody
    /// reads and a directory are refused at the open, which never waits.
    @Test func theWriterReportsWhatGoesWrong() throws {
        let directory = NSTemporaryDirectory() + "tb-files-w-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try WritableFile(creating: directory + "/out")
        #expect(try file.write(Array("line\n".utf8), stop: nil) == .done)
        try file.finish()
        #expect(try String(contentsOfFile: directory + "/out", encoding: .utf8) == "line\n")

        let full = try WritableFile(creating: "/dev/full")
        #expect(throws: FileProblem(path: "/dev/full", noun: "file to write", reason: .cannotWrite(Errno(ENOSPC)))) {
            try full.write(Array("line\n".utf8), stop: nil)
        }

        #expect(mkfifo(directory + "/fifo", 0o600) == 0)
        #expect(throws: FileProblem(path: directory + "/fifo", noun: "file to write", reason: .noReader)) {
            try WritableFile(creating: directory + "/fifo")
        }
        #expect(throws: FileProblem(path: directory, noun: "file to write", reason: .cannotCreate(Errno(EISDIR)))) {
            try WritableFile(creating: directory)
        }
    }

    /// A FIFO whose reader does not read: the write waits for room only until the stop descriptor is
    /// readable, then says `.interrupted`.
    @Test func aWriteWaitingForRoomEndsAtAStop() throws {
        let directory = NSTemporaryDirectory() + "tb-files-s-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        var stop: [Int32] = [-1, -1]
        #expect(pipe(&stop) == 0)
        defer { close(stop[0]); close(stop[1]) }
        let out = try WritableFile(creating: fifo)
        var byte: UInt8 = 15
        #expect(write(stop[1], &byte, 1) == 1)
        // More than any pipe holds by default (64 KiB): the write must wait, and the stop ends the wait.
        #expect(try out.write([UInt8](repeating: 0x41, count: 1 << 20), stop: stop[0]) == .interrupted)
        try out.finish()
    }
}
