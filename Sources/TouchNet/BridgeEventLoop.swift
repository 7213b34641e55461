#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// The Bridge's event loop: one thread asleep in `epoll_pwait2` on the UDP listeners' sockets and a
/// wake-up `eventfd`, with its timers as the wait's time-out (no `timerfd`).
///
/// Why not one of NIO's loops: per datagram, NIO's datagram channel makes an `AddressedEnvelope` whose
/// source address is formatted with `inet_ntop` into a `String`, sets up a `recvmmsg` per read, passes the
/// envelope down a pipeline, and its loop takes a lock to look at its task queue on every iteration. Here a
/// readable socket calls its listener, which reads with one `recvmmsg` into buffers made once and hands
/// the bytes and the raw source address to its handler; that turn of the loop takes no lock and
/// allocates nothing (README, the benchmark notes: the closed loop and the CPU rows).
///
/// It is an `EventLoop` for everything else that runs on the Bridge's loop: futures (`submit`), the
/// Bridge's timer (`scheduleTask`), `NIOLoopBound`. Jobs from other threads (the web server's drains, the
/// desktop's watcher, the lifecycle) queue under a lock and wake the loop through the `eventfd`, once per
/// batch; a job the loop gives itself queues without a lock.
///
/// It runs until `shutdown()`: scheduled tasks still waiting then fail with `EventLoopError.shutdown`,
/// and jobs given after it are dropped.
///
/// `@unchecked Sendable`: every stored property is a `let`; the mutable state is in `LoopState`, whose
/// fields are either under `pending`'s lock (`Pending`) or touched only on the loop's thread (the local
/// queue, the timers, the watches, asserted by `preconditionInEventLoop` where they are changed).
public final class BridgeEventLoop: EventLoop, @unchecked Sendable {
    private let state: LoopState
    /// The loop's thread: `inEventLoop` compares with it. Written once, before any job can exist.
    private let thread: pthread_t

    /// Starts the loop's thread, named `name` (cut to the kernel's 15 bytes). Nil when the system gives no
    /// `epoll`, `eventfd` or thread.
    public init?(name: String) {
        guard let state = LoopState() else { return nil }
        self.state = state
        guard let thread = NamedThread.start(name: name, { state.run() }) else {
            state.closeDescriptors()
            return nil
        }
        self.thread = thread
    }

    public var inEventLoop: Bool { pthread_equal(pthread_self(), thread) != 0 }

    public func execute(_ task: @escaping @Sendable () -> Void) {
        if inEventLoop {
            state.local.append(task)
        } else {
            state.enqueue(task)
        }
    }

    public func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise: EventLoopPromise<T> = makePromise()
        let timer = LoopTimer(deadline: deadline.uptimeNanoseconds) {
            // On the loop: the value stays on the loop that made the promise.
            do { promise.assumeIsolatedUnsafeUnchecked().succeed(try task()) } catch { promise.fail(error) }
        } cancelled: { error in
            promise.fail(error)
        }
        // On the loop directly: a cancel from another thread, queued behind it, cannot overtake it.
        if inEventLoop { state.add(timer) } else { state.enqueue { [state] in state.add(timer) } }
        return Scheduled(promise: promise) { [weak self, state] in
            guard let self else { return }
            if self.inEventLoop { state.cancel(timer) } else { state.enqueue { state.cancel(timer) } }
        }
    }

    public func scheduleTask<T>(in amount: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: .now() + amount, task)
    }

    public func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        shutdown()
        queue.async { callback(nil) }
    }

    /// Ends the loop after the jobs already given; the thread then closes the loop's own descriptors
    /// (not the watched ones: their owners close them). Returns at once.
    public func shutdown() { state.stop() }

    /// For the tests (`@testable`): the wake-up's count at its limit (`LoopState.signalWake`).
    func fillWakeCount() { state.fillWake() }

    // MARK: descriptors

    /// Calls `onReadable` on this loop each time `descriptor` is readable (level-triggered: until it has
    /// been read empty), until `unwatch`. On the loop only.
    public func watch(_ descriptor: Int32, onReadable: @escaping () -> Void) throws(IOError) {
        preconditionInEventLoop()
        try state.watch(descriptor, onReadable: onReadable)
    }

    /// Stops watching `descriptor` (before its owner closes it). On the loop only.
    public func unwatch(_ descriptor: Int32) {
        preconditionInEventLoop()
        state.unwatch(descriptor)
    }

    /// Also calls `onWritable` on this loop each time the watched `descriptor` can be written, until
    /// `stopWritable` (a socket whose output waits for room). On the loop only.
    public func watchWritable(_ descriptor: Int32, onWritable: @escaping () -> Void) throws(IOError) {
        preconditionInEventLoop()
        try state.watchWritable(descriptor, onWritable: onWritable)
    }

    /// Stops calling the watched `descriptor`'s `onWritable`. On the loop only.
    public func stopWritable(_ descriptor: Int32) {
        preconditionInEventLoop()
        state.stopWritable(descriptor)
    }
}

/// Starts the threads the daemon runs outside NIO: the Bridge's loop, the descriptor watchers.
public enum NamedThread {
    /// Runs `body` on a new detached thread (`pthread_create`; Foundation's `Thread` is not in
    /// FoundationEssentials) named `name`, cut to the kernel's 15 bytes, through `/proc/thread-self/comm`
    /// (Glibc's `pthread_setname_np` is a GNU extension Swift does not see). The thread's id, or nil when
    /// `pthread_create` failed.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t? {
        let start = Unmanaged.passRetained(Start(name: Array(name.utf8.prefix(15)), body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = start.name.withUnsafeBytes { write(comm, $0.baseAddress, $0.count) }
                close(comm)
            }
            start.body()
            return nil
        }, start)
        guard started == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            return nil
        }
        return thread
    }

    /// The thread's name and body, carried through `pthread_create`'s context pointer.
    private final class Start: Sendable {
        let name: [UInt8]
        let body: @Sendable () -> Void
        init(name: [UInt8], _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
