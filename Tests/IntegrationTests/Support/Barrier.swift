// Proving that something did not happen, without sleeping: after what must have no effect, send
// something that must have one and that the daemon handles after it (same socket, same event loop, in
// order), wait for that with a timeout, then look only at what was observed before it.
import Glibc

extension PoseAISender {
    /// A datagram already waiting on this socket, without waiting for one; nil if there is none.
    /// After a barrier on the same daemon, an answer it sent before the barrier's is already queued
    /// here: its answers leave one socket in order, and loopback queues each on the receiving socket
    /// as it is sent.
    func pending() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return n >= 0 ? Array(buffer[0..<n]) : nil
    }
}

extension Rig {
    /// A PoseAI hello → HANDSHAKE round trip from `sender` (the rig's own by default), then an xobserve
    /// sync. When it returns, the daemon has handled every datagram `sender` sent before the hello
    /// (one socket, one event loop, in order) and flushed the X requests they made before it answered,
    /// and xobserve has collected what the X server delivered. Returns the observer's mark after it:
    /// what the earlier datagrams did is in the events before that mark.
    @discardableResult
    func barrier(from sender: PoseAISender? = nil, timeout: Double = 20, _ what: String) throws -> Int {
        guard try (sender ?? self.sender).roundTrip(timeout: timeout) else {
            throw RigError("\(what): no HANDSHAKE for the barrier's hello within \(timeout) s\n" + daemon.outputTail())
        }
        try observer.sync()
        return observer.mark
    }

    /// X input events (motion, buttons, keys) observed from `mark` up to (not including) `end`.
    func inputEvents(from mark: Int, before end: Int) -> [ObservedEvent] {
        observer.events(from: mark).filter {
            $0.index < end && ["motion", "press", "release", "keypress", "keyrelease"].contains($0.kind)
        }
    }
}

extension Daemon {
    /// Waits until at least `count` lines of its output contain `text`; throws after `timeout` s.
    func waitForLogCount(containing text: String, atLeast count: Int, timeout: Double = 20, _ what: String) throws {
        let deadline = MonotonicClock.deadline(after: timeout)
        while logLines(containing: text).count < count {
            guard MonotonicClock.now() < deadline else {
                throw RigError("\(what): \(logLines(containing: text).count) lines containing \"\(text)\", "
                    + "\(count) expected within \(timeout) s\n" + outputTail())
            }
            // Each line arrives by itself; wait for the next one rather than poll.
            _ = try? waitForLog(containing: text, since: logMark, timeout: 0.1, what)
        }
    }
}
