// Runs the real touchbridge binary: `touchbridge serve …` on the test's display, on an ephemeral
// UDP port, and finds that port in the daemon's `listening poseai-udp` line.
import Foundation
import Glibc

final class Daemon {
    let host: String
    let port: UInt16
    let binary: String
    private let child: ChildProcess

    private init(child: ChildProcess, binary: String, host: String, port: UInt16) {
        self.child = child
        self.binary = binary
        self.host = host
        self.port = port
    }

    /// Starts `touchbridge serve --display <display> --udp-port 0 --bind 127.0.0.1 --mode touchscreen
    /// --idle-release-ms <ms> --log-level debug <extra…>` and waits for its listening line on stdout.
    /// `binary`: another copy of touchbridge than the one the rig finds.
    static func start(
        display: String, idleReleaseMs: Int, mode: String = "touchscreen", extraArguments: [String] = [],
        environment: [String: String] = [:], timeout: Double = 20, binary: String? = nil
    ) throws -> Daemon {
        let binary = try binary ?? Binaries.touchbridge()
        let arguments = [
            "serve", "--display", display, "--udp-port", "0", "--tuio-port", "0", "--http-port", "0", "--bind", "127.0.0.1", "--mode", mode,
            "--idle-release-ms", String(idleReleaseMs), "--log-level", "debug",
            // Xvfb reads no kernel devices: XTest, whatever --backend auto would find on this machine.
            "--backend", "xtest",
        ]
            // One person at a time, as every test before `--people` was written for, unless the test says.
            + (extraArguments.contains("--people") ? [] : ["--people", "1"])
            // No Impress client unless the test says: Impress's port, 1599, is one per machine, and a
            // daemon of another suite must not pair with (or wait on) the real Impress ImpressTests runs.
            + (extraArguments.contains("--debug-impress-port") ? [] : ["--debug-impress-port", "0"])
            + extraArguments
        let child = try ChildProcess(name: "touchbridge", executable: binary, arguments: arguments, environment: environment)
        let pattern = #/^listening poseai-udp (\S+):(\d+)/#
        let line = child.stdout.waitFor(timeout: timeout) { (try? pattern.prefixMatch(in: $0.text)) != nil }
        guard let line, let match = try? pattern.prefixMatch(in: line.text), let port = UInt16(match.2) else {
            let exited = child.waitForExit(timeout: 0.2)
            var hint = ""
            if child.stderr.snapshot().contains(where: { (try? pattern.prefixMatch(in: $0.text)) != nil }) {
                hint = "\n  (the line is on stderr; the contract wants it on stdout)"
            } else if exited == nil {
                hint = "\n  (still running: is stdout flushed after the line? a pipe makes C stdio buffer fully)"
            }
            child.stop(timeout: 2)
            throw RigError("touchbridge did not print `listening poseai-udp <addr>:<port>` on stdout within "
                + "\(timeout) s\(hint)\n" + child.outputTail())
        }
        var host = String(match.1)
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return Daemon(child: child, binary: binary, host: host, port: port)
    }

    /// The port of a `listening <kind> <addr>:<port>` line on stdout (e.g. kind `tuio-udp`).
    func listeningPort(_ kind: String, timeout: Double = 20) throws -> UInt16 {
        let pattern = try Regex("^listening \(kind) (\\S+):(\\d+)")
        let line = child.stdout.waitFor(timeout: timeout) { $0.text.firstMatch(of: pattern) != nil }
        guard let line, let match = line.text.firstMatch(of: pattern), let port = match.output[2].substring.flatMap({ UInt16($0) }) else {
            throw RigError("touchbridge printed no `listening \(kind) <addr>:<port>` line within \(timeout) s\n" + outputTail())
        }
        return port
    }

    /// The whole `listening <kind> …` line on stdout, waiting for it at most `timeout` s.
    func listeningLine(_ kind: String, timeout: Double = 20) throws -> String {
        guard let line = child.stdout.waitFor(timeout: timeout, { $0.text.hasPrefix("listening \(kind) ") }) else {
            throw RigError("touchbridge printed no `listening \(kind)` line within \(timeout) s\n" + outputTail())
        }
        return line.text
    }

    var isRunning: Bool { child.isRunning }
    var pid: pid_t { child.pid }
    var status: ChildExit? { child.status }

    /// `signal` (SIGTERM unless told) and wait at most `timeout` s for the exit. Nil if it did not exit
    /// (it is then killed).
    func terminate(timeout: Double = 15, signal: Int32 = SIGTERM) -> ChildExit? {
        if let status = child.status { return status }
        child.signal(signal)
        if let status = child.waitForExit(timeout: timeout) { return status }
        child.signal(SIGKILL)
        _ = child.waitForExit(timeout: 5)
        return nil
    }

    /// SIGINT and wait at most `timeout` s for the exit. Nil if it did not exit (it is then killed).
    func interrupt(timeout: Double = 15) -> ChildExit? {
        if let status = child.status { return status }
        child.signal(SIGINT)
        if let status = child.waitForExit(timeout: timeout) { return status }
        child.signal(SIGKILL)
        _ = child.waitForExit(timeout: 5)
        return nil
    }

    /// A cursor into the log (stderr): lines logged from now on have an index ≥ this.
    var logMark: Int { child.stderr.count }

    /// Waits for a log line (stderr) containing `text`, logged at or after `mark` (default: since the
    /// start); throws after `timeout` s.
    @discardableResult
    func waitForLog(containing text: String, since mark: Int = 0, timeout: Double = 20, _ what: String) throws -> String {
        if let line = child.stderr.waitFor(from: mark, timeout: timeout, { $0.text.contains(text) }) { return line.text }
        throw RigError("\(what): touchbridge logged no line containing \"\(text)\" within \(timeout) s\n" + outputTail())
    }

    /// The daemon's recent stdout and stderr, for failure messages.
    func outputTail(_ lines: Int = 30) -> String { child.outputTail(lines) }

    /// Lines of its stdout and stderr that contain `text`.
    func logLines(containing text: String) -> [String] {
        (child.stdout.snapshot() + child.stderr.snapshot()).map(\.text).filter { $0.contains(text) }
    }
}

extension Daemon {
    /// Waits at most `timeout` s for the daemon to exit by itself.
    func waitForExit(timeout: Double) -> ChildExit? { child.waitForExit(timeout: timeout) }
}
