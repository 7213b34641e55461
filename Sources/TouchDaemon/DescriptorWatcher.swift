import Glibc

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
        guard Self.startThread(name: name, body) else {
            close(stopRead)
            close(stopWrite)
            return nil
        }
    }

    /// Runs `body` on a new detached thread (`pthread_create`; Foundation's `Thread` is not in
    /// FoundationEssentials) named `name`, cut to the kernel's 15 bytes, through `/proc/thread-self/comm`
    /// (Glibc's `pthread_setname_np` is a GNU extension Swift does not see).
    private static func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(name: Array(name.utf8.prefix(15)), body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = box.name.withUnsafeBytes { write(comm, $0.baseAddress, $0.count) }
                close(comm)
            }
            box.body()
            return nil
        }, box)
        guard started == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            return false
        }
        return true
    }

    /// The thread's name and body, carried through `pthread_create`'s context pointer.
    private final class Box: Sendable {
        let name: [UInt8]
        let body: @Sendable () -> Void
        init(name: [UInt8], _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Ends the thread (it exits at its next wake-up, which this causes).
    func stop() {
        var byte: UInt8 = 0
        _ = write(stopWrite, &byte, 1)
        close(stopWrite)
    }
}
