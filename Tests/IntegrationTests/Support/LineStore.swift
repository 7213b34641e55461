// A thread-safe, append-only store of the lines a child process writes, with their arrival times,
// filled by a background reader thread and waited on with bounded timeouts.
import Foundation
import Glibc

// Sendable, proved: `lines` and `closed` (its only mutable state) are read and written only while
// holding `condition`.
final class LineStore: @unchecked Sendable {
    struct Line: Sendable {
        /// Position in the store, 0-based.
        var index: Int
        var text: String
        /// CLOCK_MONOTONIC ns when the reader thread got the line.
        var arrivalNs: UInt64
    }

    private let condition = NSCondition()
    private var lines: [Line] = []
    private var closed = false

    var count: Int {
        condition.lock(); defer { condition.unlock() }
        return lines.count
    }

    /// True once the writer closed its end (the child exited or closed the stream).
    var isClosed: Bool {
        condition.lock(); defer { condition.unlock() }
        return closed
    }

    func snapshot(from index: Int = 0) -> [Line] {
        condition.lock(); defer { condition.unlock() }
        return index < lines.count ? Array(lines[max(0, index)...]) : []
    }

    func append(_ text: String) {
        let now = MonotonicClock.now()
        condition.lock()
        lines.append(Line(index: lines.count, text: text, arrivalNs: now))
        condition.broadcast()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// The first line at or after `index` for which `predicate` holds, waiting at most `timeout`
    /// seconds for it. Nil on timeout or when the stream closed without such a line.
    func waitFor(from index: Int = 0, timeout: Double, _ predicate: (Line) -> Bool) -> Line? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var next = max(0, index)
        condition.lock(); defer { condition.unlock() }
        while true {
            while next < lines.count {
                if predicate(lines[next]) { return lines[next] }
                next += 1
            }
            if closed { return nil }
            if !condition.wait(until: deadline) {
                while next < lines.count {
                    if predicate(lines[next]) { return lines[next] }
                    next += 1
                }
                return nil
            }
        }
    }

    /// Waits until the writer closed its end, at most `timeout` seconds.
    @discardableResult
    func waitClosed(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock(); defer { condition.unlock() }
        while !closed {
            if !condition.wait(until: deadline) { return closed }
        }
        return true
    }

    /// The last `n` lines as text, for failure messages.
    func tail(_ n: Int) -> String {
        let all = snapshot()
        let shown = all.suffix(n)
        let skipped = all.count - shown.count
        let body = shown.map { "    \($0.text)" }.joined(separator: "\n")
        if all.isEmpty { return "    (nothing)" }
        return skipped > 0 ? "    … \(skipped) earlier lines\n\(body)" : body
    }

    /// Starts a thread that reads `fd` until EOF, splitting it into lines (without the newline).
    func startReading(fd: Int32, name: String) {
        let thread = Thread { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                var start = 0
                for i in 0..<n where buffer[i] == UInt8(ascii: "\n") {
                    pending.append(contentsOf: buffer[start..<i])
                    append(String(decoding: pending, as: UTF8.self))
                    pending.removeAll(keepingCapacity: true)
                    start = i + 1
                }
                pending.append(contentsOf: buffer[start..<n])
            }
            if !pending.isEmpty { append(String(decoding: pending, as: UTF8.self)) }
            Glibc.close(fd)
            close()
        }
        thread.name = name
        thread.start()
    }
}
