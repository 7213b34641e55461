import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Waits on the X connection and the signal pipe with `poll(2)` on one thread of its own, and
/// hands each readiness to the event loop.
///
/// Why not Dispatch read sources: once a Dispatch source runs, libdispatch's worker-pool monitor
/// wakes the process every second for good, and the idle daemon must not wake at all. This thread
/// sleeps in `poll` with no timeout; it runs only when the X server sends something (an error, an
/// event, or end of file when it goes away) or a signal arrives.
final class DescriptorWatcher {
    /// Written by `stop()`; the thread wakes on it and ends.
    private let stopWrite: Int32

    /// - Parameters:
    ///   - xConnection: the X connection's descriptor. `onX` must return only when what is there
    ///     has been read, or `poll` reports it again at once.
    ///   - signalPipe: the read end of `ShutdownSignals`' pipe; `onSignal` gets each signal number.
    init?(
        xConnection: Int32, signalPipe: Int32,
        onX: @escaping @Sendable () -> Void, onSignal: @escaping @Sendable (Int32) -> Void
    ) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let stopRead = fds[0]
        stopWrite = fds[1]
        let thread = Thread {
            var watched = [
                pollfd(fd: xConnection, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signalPipe, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0),
            ]
            var xOpen = true
            while true {
                for i in watched.indices { watched[i].revents = 0 }
                // -1: no timeout. The X descriptor is left out once it reported a hang-up, so a dead
                // connection cannot make the loop spin (the I/O error handler ends the process anyway).
                let n = poll(&watched, nfds_t(watched.count), -1)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                if watched[2].revents != 0 { return }
                if watched[1].revents & Int16(POLLIN) != 0 {
                    while let number = ShutdownSignals.take(from: signalPipe) { onSignal(number) }
                }
                if xOpen, watched[0].revents != 0 {
                    onX()
                    if watched[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                        xOpen = false
                        watched[0].fd = -1  // poll ignores negative descriptors
                    }
                }
            }
        }
        thread.name = "touchbridge-watch"
        thread.start()
    }

    /// Ends the thread (it exits at its next wake-up, which this causes).
    func stop() {
        var byte: UInt8 = 0
        _ = write(stopWrite, &byte, 1)
    }
}
