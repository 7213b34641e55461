import Glibc
import TouchNet

/// Waits on one descriptor with `poll(2)` on a thread of its own and calls `onReadable` each time it
/// becomes readable (or reports a hang-up), until `stop()`.
///
/// Why not Dispatch read sources: once a Dispatch source runs, libdispatch's worker-pool monitor
/// wakes the process every second for good, and the idle daemon must not wake at all. This thread
/// sleeps in `poll` with no timeout; it runs only when something arrives.
///
/// They watch the daemon: one on the signal pipe (for its whole life) and one per descriptor of the
/// desktop (the X connection, for each connection).
final class DescriptorWatcher: Sendable {
    /// Written by `stop()`; the thread wakes on it and ends.
    private let stopWrite: Int32

    /// - Parameters:
    ///   - descriptor: what to watch. `onReadable` must return only when what is there has been read,
    ///     or `poll` reports it again at once. After a hang-up (`POLLHUP`, `POLLERR`, `POLLNVAL`) the
    ///     descriptor is reported once more and then left alone, so a dead connection cannot spin.
    init?(name: String, descriptor: Int32, onReadable: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let stopRead = fds[0]
        stopWrite = fds[1]
        let body: @Sendable () -> Void = {
            var watched = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0),
            ]
            defer { close(stopRead) }
            while true {
                for i in watched.indices { watched[i].revents = 0 }
                let n = poll(&watched, nfds_t(watched.count), -1)  // -1: no timeout
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                if watched[1].revents != 0 { return }
                if watched[0].revents != 0 {
                    onReadable()
                    if watched[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                        watched[0].fd = -1  // poll ignores negative descriptors
                    }
                }
            }
        }
        guard NamedThread.start(name: name, body) != nil else {
            close(stopRead)
            close(stopWrite)
            return nil
        }
    }

    /// Ends the thread (it exits at its next wake-up, which this causes).
    func stop() {
        var byte: UInt8 = 0
        _ = write(stopWrite, &byte, 1)
        close(stopWrite)
    }
}
