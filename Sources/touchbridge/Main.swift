@_spi(ExperimentalCustomExecutors) import _Concurrency
import ArgumentParser
import NIOCore
import NIOPosix
import TouchDaemon

/// The entry point. Every command runs as Swift concurrency on one NIO event loop, never on Dispatch:
/// Swift's own async `main` calls `dispatch_main()`, which starts libdispatch's worker pool, and that
/// pool's monitor then wakes the process every second for good (an idle daemon must not wake at all).
/// So `main` is synchronous: it makes NIO's singleton group one loop, makes it Swift concurrency's
/// default executor, sleeping tasks included (`LoopExecutors`), installs it as the global executor too
/// (NIO's takeover), runs the command as a task there and waits (a condition variable: no wake-ups).
/// The daemon's `Lifecycle` runs the web server on that loop, and its Bridge and UDP listeners on a loop
/// of their own (`BridgeEventLoop`; see docs/architecture.md, Threads).
@main
enum Main {
    static func main() {
        // Before anything opens a descriptor: a closed standard stream gets /dev/null, not an event loop's
        // descriptor or a socket that log lines would then be written into.
        StandardStreams.openClosedOnes()
        NIOSingletons.groupLoopCountSuggestion = 1
        // Sleeping tasks on the loop too (see `LoopTaskExecutor`), before any task exists.
        _createExecutors(factory: LoopExecutors.self)
        // False if something installed a global executor first, or if NIO's dlsym cannot find the hook
        // (the release build: a statically linked Swift runtime, no exported symbols): ready jobs then reach
        // the loops through the default executor above instead.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let done = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
        done.completeWithTask { await Touchbridge.main() }
        // `Touchbridge.main()` exits by itself on an error or a non-zero exit code.
        _ = try? done.futureResult.wait()
    }
}
