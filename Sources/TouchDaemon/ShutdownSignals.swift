#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM, turned into bytes on a pipe that the shell watches (the self-pipe trick).
///
/// Why not a Dispatch signal source: on Linux it reads a `signalfd`, which only sees a signal that
/// every thread blocks; threads created earlier (the event loop, the Swift concurrency pool) do not,
/// so a process-directed SIGTERM could be delivered to one of them and be lost. A `sigaction`
/// handler runs in whichever thread gets the signal and does only what is async-signal-safe: one
/// `write` of the signal number to a non-blocking pipe.
enum ShutdownSignals {
    /// The pipe's write end, set once in `install` before any handler can run, and only read after.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// Installs the handlers for `signals`; returns the pipe's read end (non-blocking, close-on-exec),
    /// which becomes readable with one byte per signal received.
    static func install(_ signals: [Int32]) -> Int32? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        writeEnd = fds[1]
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(ShutdownSignals.writeEnd, &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        return fds[0]
    }

    /// Reads one pending signal number from the pipe, or nil if none is there.
    static func take(from readEnd: Int32) -> Int32? {
        var byte: UInt8 = 0
        return read(readEnd, &byte, 1) == 1 ? Int32(byte) : nil
    }

    static func name(_ number: Int32) -> String {
        switch number {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        default: return "signal \(number)"
        }
    }
}
