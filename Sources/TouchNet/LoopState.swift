#if canImport(Glibc)
import Glibc
#endif
import CLinux
import NIOConcurrencyHelpers
import NIOCore

// The Bridge's loop's thread: its `epoll` set, its wake-up `eventfd`, its timers and its queues of jobs,
// and the turn of the loop that runs them.

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
