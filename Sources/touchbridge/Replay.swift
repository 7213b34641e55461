import ArgumentParser
import TouchDaemon

#if canImport(Glibc)
import Glibc
#endif

/// `touchbridge replay FILE --to HOST:PORT [--rate HZ]`: sends a recording's datagrams again, with
/// their recorded timing or at a fixed rate. The benchmarks' and tests' phone.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a recording made by record to a touchbridge, with its own timing or at a fixed rate."
    )

    @Argument(help: ArgumentHelp("Recording to send (JSON lines, as record writes them).", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Where to send: host:port, [IPv6]:port.", valueName: "host:port"))
    var to: String

    @Option(help: ArgumentHelp("Send this many datagrams per second instead of keeping the recorded timing.", valueName: "hz"))
    var rate: Double?

    @Option(name: .customLong("send-log"), help: ArgumentHelp("Write one line per datagram sent to this file: its index and the CLOCK_MONOTONIC nanoseconds just before it was sent.", valueName: "file"))
    var sendLog: String?

    func validate() throws {
        // At least one datagram per 1000 s: a rate such as 1e-300 would put the second datagram past any clock.
        if let rate, !(rate >= 0.001 && rate <= 100_000) { throw ValidationError("--rate must be from 0.001 to 100000, not \(rate)") }
        guard Self.split(to) != nil else { throw ValidationError("--to must be host:port or [IPv6]:port, not \(to)") }
    }

    static func split(_ text: String) -> (host: String, port: UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    func run() throws {
        let entries: [RecordingFormat.Entry]
        do {
            entries = try RecordingFormat.parse(try Self.readFile(file))
        } catch {
            writeError("touchbridge replay: \(file): \(error)")
            throw ExitCode(65)
        }
        let (host, port) = Self.split(to)!
        var target: sockaddr_storage
        let socket: UDPSocket
        do {
            target = try UDPSocket.resolve(host: host, port: port, passive: false)
            socket = try UDPSocket(for: target)
        } catch {
            writeError("touchbridge replay: \(to): \(error)")
            throw ExitCode(68)
        }
        var stamps = [UInt64](repeating: 0, count: entries.count)
        let began = monotonicNanoseconds()
        // The schedule runs from the first datagram's send, not from here: a first send that came late
        // (the process preempted) would otherwise shorten every gap after it.
        var start = began
        let t0 = entries.first?.seconds ?? 0
        var failed = 0
        for (index, entry) in entries.enumerated() {
            let offset = rate.map { Double(index) / $0 } ?? (entry.seconds - t0)
            Self.sleep(until: Self.deadline(start: start, offset: offset))
            stamps[index] = monotonicNanoseconds()
            if index == 0 { start = stamps[0] }
            if !socket.send(entry.datagram, to: &target) { failed += 1 }
        }
        if let sendLog {
            var text = ""
            text.reserveCapacity(stamps.count * 24)
            for (index, stamp) in stamps.enumerated() { text += "\(index) \(stamp)\n" }
            let fd = open(sendLog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                writeError("touchbridge replay: cannot write \(sendLog): \(String(cString: strerror(errno)))")
                throw ExitCode(73)
            }
            writeAll(fd, text)
            close(fd)
        }
        let seconds = Double(monotonicNanoseconds() - began) / 1e9
        writeLine("replayed \(entries.count - failed) of \(entries.count) datagrams to \(UDPSocket.describe(target)) in \(RecordingFormat.formatSeconds(seconds)) s")
        if failed > 0 { throw ExitCode.failure }
    }

    /// `start` plus `offset` seconds, in nanoseconds: a negative or NaN offset is none, and the sum
    /// stops at UInt64's largest value (a very low `--rate` over many datagrams) instead of trapping.
    static func deadline(start: UInt64, offset: Double) -> UInt64 {
        guard offset > 0 else { return start }
        let nanoseconds = offset * 1e9
        guard nanoseconds < 9e18 else { return UInt64.max }
        let (sum, overflow) = start.addingReportingOverflow(UInt64(nanoseconds))
        return overflow ? UInt64.max : sum
    }

    /// Sleeps until CLOCK_MONOTONIC reaches `deadline` (absolute, so errors do not accumulate).
    static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// The largest recording read (a day of a phone at 60 Hz is about 1 GB of lines: split it). A larger
    /// one is refused rather than read until memory runs out.
    static let maxFileBytes = 512 << 20

    /// The longest line read: the largest datagram as record writes it (65,507 octets as a `bytes` array,
    /// or as a `packet` string of `\u00XX` escapes, under 400 KB) with room to spare. A longer line, or an
    /// endless file without newlines such as /dev/zero, is refused once this much of it is read.
    static let maxLineBytes = 512 << 10

    /// The file's bytes, read with bounded memory: refused past `maxFileBytes`, or at a line longer than
    /// `maxLineBytes`. Opened without blocking, so that a FIFO with no writer is not waited on: it reads
    /// as empty (and is refused for lacking the header); one whose writer is there is read to its end.
    /// A directory is refused.
    static func readFile(_ path: String) throws -> [UInt8] {
        struct Failure: Error, CustomStringConvertible { var description: String }
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        defer { if fd != 0 { close(fd) } }
        if fd != 0 {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw Failure(description: String(cString: strerror(errno))) }
            guard info.st_mode & S_IFMT != S_IFDIR else { throw Failure(description: "a directory, not a recording") }
            // The open did not wait for a FIFO's writer; reading may (a writer that is there and slow).
            // A FIFO that had no writer at the open reads as its end at once.
            let flags = fcntl(fd, F_GETFL)
            if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        }
        var result: [UInt8] = []
        var lineStart = 0, line = 1
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
            if n == 0 { return result }
            guard result.count + n <= maxFileBytes else {
                throw Failure(description: "larger than \(maxFileBytes >> 20) MiB, more than replay reads: split it")
            }
            let base = result.count
            result += chunk[0..<n]
            for i in base..<result.count where result[i] == 0x0A {
                line += 1
                lineStart = i + 1
            }
            guard result.count - lineStart <= maxLineBytes else {
                throw Failure(description: "line \(line): longer than \(maxLineBytes >> 10) KiB, longer than any recorded datagram's line")
            }
        }
    }
}
