import Synchronization

/// Why the daemon stops, and its exit code: a stop asked for (a signal, `StopRequests.request`), a
/// service that ended by itself (the desktop gone without `--reconnect`), or a start step that failed.
struct Ending: Sendable, Equatable {
    var why: String
    var code: Int32
}

/// What asks the daemon to stop: a signal (from the signal watcher's thread) or a caller of `request`
/// (any thread: the tests, which run the lifecycle in process). The first request is kept, so a start
/// looks at it between its steps (`requested`) and a wait that begins after it ends at once; only the
/// lifecycle's own task waits (`wait`, `waitASecond`).
final class StopRequests: Sendable {
    private struct State {
        var first: Ending?
        var waiters: [UInt64: CheckedContinuation<Ending?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = Mutex(State())

    init() {}

    /// Asks the daemon to stop, `why` for the log; the first request wins.
    func request(_ why: String, code: Int32 = ExitStatus.stopped) {
        let (first, waiters) = state.withLock { s in
            if s.first == nil { s.first = Ending(why: why, code: code) }
            defer { s.waiters = [:] }
            return (s.first, s.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: first) }
    }

    /// The first stop asked for, if one was.
    var requested: Ending? { state.withLock { $0.first } }

    /// Waits until a stop is asked for; nil when the waiting task is cancelled first.
    func wait() async -> Ending? {
        let id = state.withLock { s in
            defer { s.nextWaiter += 1 }
            return s.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Ending?, Never>) in
                let now: Ending?? = state.withLock { s in
                    if let first = s.first { return .some(first) }
                    // Cancelled before this waiter was kept: the handler below found nothing to end.
                    if Task.isCancelled { return .some(nil) }
                    s.waiters[id] = waiter
                    return .none
                }
                if let now { waiter.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Waits a second, or less when a stop is asked for first (then that stop; nil after the second, or
    /// when the waiting task is cancelled: the caller then looks at `Task.isCancelled`).
    func waitASecond() async -> Ending? {
        if let requested { return requested }
        // Task.sleep is a timer on one of NIO's loops (`main` installs them as Swift concurrency's
        // executors, sleeps included): no Dispatch pool.
        return await withTaskGroup(of: Ending?.self) { group in
            group.addTask { await self.wait() }
            group.addTask {
                try? await Task.sleep(for: .seconds(1))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? requested
        }
    }
}
