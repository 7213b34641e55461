import ArgumentParser
import TouchDaemon
import TouchFiles

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
        let bytes: [UInt8]
        do throws(FileProblem) {
            bytes = try Self.readFile(file)
        } catch {
            writeError("touchbridge replay: \(error)")
            throw ExitCode(error.exitStatus)
        }
        let entries: [RecordingFormat.Entry]
        do {
            entries = try RecordingFormat.parse(bytes)
        } catch {
            writeError("touchbridge replay: \(file): \(error)")
            throw ExitCode(ExitStatus.dataError)
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
            do throws(FileProblem) {
                let log = try WritableFile(creating: sendLog)
                _ = try log.write(Array(text.utf8), stop: nil)
                try log.finish()
            } catch {
                writeError("touchbridge replay: \(error)")
                throw ExitCode(error.exitStatus)
            }
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

    /// The recording's bytes (`-`: standard input), read with bounded memory through TouchFiles: a
    /// regular file of at most 512 MiB (a larger one is refused by its size, before a byte is read; a
    /// FIFO, a device such as /dev/zero or a directory at once, without waiting), no line longer than
    /// 512 KiB (standard input is refused at such a line as soon as it is read).
    static func readFile(_ path: String) throws(FileProblem) -> [UInt8] {
        if path == "-" { return try BoundedFile.read(descriptor: 0, path: "standard input", as: .recording) }
        return try BoundedFile.read(path, as: .recording)
    }
}
