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

/// A timer of the loop: its deadline (`CLOCK_MONOTONIC` nanoseconds, as `NIODeadline`'s), what it runs,
/// and how it fails when it is cancelled or the loop ends first.
final class LoopTimer: @unchecked Sendable {
    // @unchecked Sendable: made on any thread, then only read and run on the loop's thread (it reaches
    // the loop through `execute`, which orders it after its making).
    let deadline: UInt64
    let fire: () -> Void
    let cancelled: (any Error) -> Void
    /// The order of timers with the same deadline: the order they were added.
    var sequence: UInt64 = 0

    init(deadline: UInt64, fire: @escaping () -> Void, cancelled: @escaping (any Error) -> Void) {
        self.deadline = deadline
        self.fire = fire
        self.cancelled = cancelled
    }
}

/// What `BridgeEventLoop`'s thread owns, and the queue other threads give it jobs through.
final class LoopState: @unchecked Sendable {
    // @unchecked Sendable: `pending` is a lock; every other `var` is touched only on the loop's thread
    // (`BridgeEventLoop` calls `local`, `add`, `cancel`, `watch`, `unwatch` there, and `run` is the thread).

    /// Jobs from other threads, and whether the loop has been woken for them already.
    private struct Pending {
        var jobs: [@Sendable () -> Void] = []
        var woken = false
        var stopping = false
        var stopped = false
    }

    private let pending = NIOLockedValueBox(Pending())
    private let epoll: Int32
    /// Written (once per batch of jobs from other threads) to wake the loop.
    private let wake: Int32
    /// The jobs the loop gave itself: run before it waits again.
    var local: [@Sendable () -> Void] = []
    /// Empty arrays with room, which change places with `local` and the queue's when they are run.
    private var spareLocal: [@Sendable () -> Void] = []
    private var spareJobs: [@Sendable () -> Void] = []
    /// Timers, soonest last (removed from the end).
    private var timers: [LoopTimer] = []
    private var timerSequence: UInt64 = 0
    /// What each watched descriptor calls, indexed by the descriptor (the epoll event's data): no
    /// hashing per event.
    private var watches: [(() -> Void)?] = []
    /// What each descriptor watched for room to write calls, indexed the same way.
    private var writeWatches: [(() -> Void)?] = []
    /// `epoll_pwait2` is Linux 5.11; before it, `epoll_wait` with milliseconds rounded up.
    private var nanosecondWait = true

    /// epoll events per wait.
    private static let eventsPerWait = 8

    init?() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { return nil }
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard wake >= 0 else {
            close(epoll)
            return nil
        }
        // Edge-triggered: each write to it is one event, and the loop never reads it (one syscall less
        // a wake-up, on the way from another thread's job to its run).
        guard control(EPOLL_CTL_ADD, wake, edgeTriggered: true) == 0 else {
            closeDescriptors()
            return nil
        }
    }

    /// `epoll_ctl(2)`: adds `descriptor` for reading (`EPOLLIN`, level-triggered unless `edgeTriggered`,
    /// the descriptor as the event's data), and for writing too when `writable` (`EPOLLOUT`), changes
    /// it, or deletes it. 0, or -1 and `errno`.
    private func control(_ operation: Int32, _ descriptor: Int32, edgeTriggered: Bool = false, writable: Bool = false) -> Int32 {
        let events = EPOLLIN.rawValue | (edgeTriggered ? EPOLLET.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
        var event = epoll_event(events: events, data: epoll_data_t(fd: descriptor))
        return epoll_ctl(epoll, operation, descriptor, &event)
    }

    func closeDescriptors() {
        close(wake)
        close(epoll)
    }

    /// A job from another thread: queued under the lock; the first of a batch wakes the loop.
    func enqueue(_ job: @escaping @Sendable () -> Void) {
        let wakeUp = pending.withLockedValue { pending -> Bool in
            guard !pending.stopped else { return false }
            pending.jobs.append(job)
            if pending.woken { return false }
            pending.woken = true
            return true
        }
        if wakeUp { signalWake() }
    }

    func stop() {
        let wakeUp = pending.withLockedValue { pending -> Bool in
            pending.stopping = true
            if pending.woken { return false }
            pending.woken = true
            return true
        }
        if wakeUp { signalWake() }
    }

    /// Adds 1 to the `eventfd`: one edge-triggered event. The loop does not read it, so its count only
    /// grows; at its limit (2^64 - 2 writes) the write says `EAGAIN`, and a read sets it back to zero first.
    private func signalWake() {
        if !addToWake(1) {
            resetWake()
            _ = addToWake(1)
        }
    }

    /// `write(2)` of `value` to the `eventfd`; false when it says `EAGAIN` (the count would pass its limit).
    private func addToWake(_ value: UInt64) -> Bool {
        var value = value
        return withUnsafeBytes(of: &value) { write(wake, $0.baseAddress, 8) } >= 0 || errno != EAGAIN
    }

    /// `read(2)` of the `eventfd`: its count back to zero.
    private func resetWake() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(wake, $0.baseAddress, 8) }
    }

    /// For the tests: the `eventfd`'s count at its limit, so that the next wake-up finds it full.
    func fillWake() {
        resetWake()
        _ = addToWake(0xffff_ffff_ffff_fffe)
    }

    func add(_ timer: LoopTimer) {
        timerSequence &+= 1
        timer.sequence = timerSequence
        // Soonest last; among equal deadlines the first added last.
        let index = timers.firstIndex { ($0.deadline, $0.sequence) < (timer.deadline, timer.sequence) } ?? timers.endIndex
        timers.insert(timer, at: index)
    }

    func cancel(_ timer: LoopTimer) {
        guard let index = timers.firstIndex(where: { $0 === timer }) else { return }
        timers.remove(at: index)
        timer.cancelled(EventLoopError.cancelled)
    }

    func watch(_ descriptor: Int32, onReadable: @escaping () -> Void) throws(IOError) {
        guard control(EPOLL_CTL_ADD, descriptor) == 0 else {
            throw IOError(errnoCode: errno, reason: "epoll_ctl(EPOLL_CTL_ADD)")
        }
        let index = Int(descriptor)
        if index >= watches.count { watches += Array(repeating: nil, count: index + 1 - watches.count) }
        watches[index] = onReadable
    }

    func unwatch(_ descriptor: Int32) {
        let index = Int(descriptor)
        guard index < watches.count, watches[index] != nil else { return }
        watches[index] = nil
        if index < writeWatches.count { writeWatches[index] = nil }
        _ = control(EPOLL_CTL_DEL, descriptor)
    }

    func watchWritable(_ descriptor: Int32, onWritable: @escaping () -> Void) throws(IOError) {
        let index = Int(descriptor)
        guard index < watches.count, watches[index] != nil else {
            throw IOError(errnoCode: EBADF, reason: "watchWritable: not watched")
        }
        guard control(EPOLL_CTL_MOD, descriptor, writable: true) == 0 else {
            throw IOError(errnoCode: errno, reason: "epoll_ctl(EPOLL_CTL_MOD)")
        }
        if index >= writeWatches.count { writeWatches += Array(repeating: nil, count: index + 1 - writeWatches.count) }
        writeWatches[index] = onWritable
    }

    func stopWritable(_ descriptor: Int32) {
        let index = Int(descriptor)
        guard index < writeWatches.count, writeWatches[index] != nil else { return }
        writeWatches[index] = nil
        _ = control(EPOLL_CTL_MOD, descriptor)
    }

    // MARK: the thread

    /// The loop: the jobs and timers that are due, then a wait until the next timer, a readable
    /// descriptor or a wake-up; until `stop`.
    func run() {
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Self.eventsPerWait)
        defer { events.deallocate() }
        while true {
            runLocal()
            var timeout: Int64 = -1  // nanoseconds; -1: none
            if !timers.isEmpty {
                // One reading of the clock a turn: the wait's time-out counts from before the due
                // timers ran, so the next timer fires at most their run's length (microseconds) late,
                // never early.
                let now = Self.monotonicNow()
                runDueTimers(now: now)
                runLocal()
                if let soonest = timers.last { timeout = soonest.deadline > now ? Int64(soonest.deadline - now) : 0 }
            }
            if !local.isEmpty { timeout = 0 }
            let count = wait(events, timeout: timeout)
            guard count >= 0 else { continue }  // EINTR
            for i in 0..<Int(count) {
                let descriptor = events[i].data.fd
                if descriptor == wake {
                    if takePending() { return finish() }
                } else {
                    let index = Int(descriptor)
                    let mask = events[i].events
                    // Room to write first: a socket's reader may close it (and unwatch it).
                    if mask & EPOLLOUT.rawValue != 0, index < writeWatches.count, let onWritable = writeWatches[index] {
                        onWritable()
                    }
                    if mask & ~EPOLLOUT.rawValue != 0, index < watches.count, let onReadable = watches[index] {
                        onReadable()
                    }
                }
            }
        }
    }

    /// Waits for events: `epoll_pwait2(2)` (`tb_epoll_pwait2`) with `timeout` nanoseconds (-1: none); where
    /// the kernel has none (before 5.11, or valgrind), `epoll_wait(2)` with milliseconds rounded up.
    private func wait(_ events: UnsafeMutablePointer<epoll_event>, timeout: Int64) -> Int32 {
        if nanosecondWait {
            var spec = timespec(tv_sec: Int(max(0, timeout) / 1_000_000_000), tv_nsec: Int(max(0, timeout) % 1_000_000_000))
            let count = withUnsafePointer(to: &spec) { tb_epoll_pwait2(epoll, events, Int32(Self.eventsPerWait), timeout < 0 ? nil : $0) }
            if count >= 0 || errno != ENOSYS { return count }
            nanosecondWait = false
        }
        let milliseconds = timeout < 0 ? -1 : Int32(min(Int64(Int32.max), (timeout + 999_999) / 1_000_000))
        return epoll_wait(epoll, events, Int32(Self.eventsPerWait), milliseconds)
    }

    /// Runs the jobs from other threads; true when the loop is to stop. The queue's array and a spare
    /// one change places under the lock: no copy, no allocation once both have grown.
    private func takePending() -> Bool {
        var jobs = spareJobs
        let stopping = pending.withLockedValue { pending -> Bool in
            swap(&pending.jobs, &jobs)
            pending.woken = false
            return pending.stopping
        }
        for job in jobs { job() }
        jobs.removeAll(keepingCapacity: true)
        spareJobs = jobs
        return stopping
    }

    private func runLocal() {
        // Jobs may queue more jobs: those run in the next round, after a look at the sockets. The two
        // arrays change places, as in `takePending`.
        guard !local.isEmpty else { return }
        var jobs = spareLocal
        swap(&local, &jobs)
        for job in jobs { job() }
        jobs.removeAll(keepingCapacity: true)
        spareLocal = jobs
    }

    private func runDueTimers(now: UInt64) {
        while let soonest = timers.last, soonest.deadline <= now {
            timers.removeLast()
            soonest.fire()
        }
    }

    /// The end: the jobs already given run, the timers left fail, nothing more is taken.
    private func finish() {
        runLocal()
        let jobs = pending.withLockedValue { pending -> [@Sendable () -> Void] in
            pending.stopped = true
            let jobs = pending.jobs
            pending.jobs = []
            return jobs
        }
        for job in jobs { job() }
        runLocal()
        let left = timers
        timers = []
        for timer in left { timer.cancelled(EventLoopError.shutdown) }
        closeDescriptors()
    }

    static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
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
