@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import NIOCore
import NIOPosix

/// Swift concurrency's default executor on one of the daemon's loops (NIO's singleton group), timed jobs included.
///
/// NIO's takeover (`Main`) puts every ready job on the loop, but with this toolchain `Task.sleep` asks
/// the default executor to run the job later (`SchedulingExecutor.enqueue(_:at:tolerance:clock:)`), and
/// the platform's default is libdispatch's (`DispatchGlobalTaskExecutor`): the first sleep (the web
/// server's WebSocket auto-ping) would start Dispatch's worker pool and its monitor, which wakes an idle
/// daemon every second for good. This executor runs jobs, and sleeps as loop timers, on a loop.
///
/// Uses Swift's custom-executor SPI (`ExecutorFactory`, `SchedulingExecutor`), still experimental:
/// `Main` installs it through `_createExecutors` before any task exists.
///
/// The release binary links the Swift runtime statically and exports no symbols, so NIO's takeover cannot
/// find its hook and every ready job comes here too: a job stays on the loop it was enqueued from (the web
/// server's work on the web server's loop), as NIO's takeover does (`EventLoopGroup.any()`), and a job
/// from another thread goes to the loops in turn.
final class LoopTaskExecutor: TaskExecutor, SchedulingExecutor {
    let group: MultiThreadedEventLoopGroup

    init(group: MultiThreadedEventLoopGroup) { self.group = group }

    func enqueue(_ job: consuming ExecutorJob) {
        // Handed over, not shared: the runtime gives the job to this executor once; it runs once.
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        group.any().execute { job.runSynchronously(on: executor) }
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        group.any().scheduleTask(in: .nanoseconds(Self.nanoseconds(clock.now.duration(to: instant)))) {
            job.runSynchronously(on: executor)
        }
    }

    /// A clock's duration in nanoseconds, at least 0 (the standard clocks' durations are `Duration`s;
    /// another clock's deadline is taken as now).
    private static func nanoseconds<D>(_ duration: D) -> Int64 {
        guard let d = duration as? Duration else { return 0 }
        let (seconds, attoseconds) = d.components
        let ns = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !ns.overflow else { return seconds > 0 ? .max : 0 }
        return max(0, ns.partialValue &+ attoseconds / 1_000_000_000)
    }
}

/// The executors `Main` installs: the platform's main executor, the loop's default executor.
enum LoopExecutors: ExecutorFactory {
    static let mainExecutor: any MainExecutor = PlatformExecutorFactory.mainExecutor
    static let defaultExecutor: any TaskExecutor = LoopTaskExecutor(group: MultiThreadedEventLoopGroup.singleton)
}
