import ArgumentParser
import NIOCore
import NIOPosix

/// The entry point. Every command runs as Swift concurrency on one NIO event loop, never on Dispatch:
/// Swift's own async `main` calls `dispatch_main()`, which starts libdispatch's worker pool, and that
/// pool's monitor then wakes the process every second for good (an idle daemon must not wake at all).
/// So `main` is synchronous: it makes NIO's singleton group one loop, installs it as the global
/// executor, runs the command as a task there and waits (a condition variable: no wake-ups) for it.
/// The daemon's `Lifecycle` runs its Bridge, listeners and web tasks on that same loop, so a WebSocket
/// message goes from the socket to the X server without changing threads.
@main
enum Main {
    static func main() {
        NIOSingletons.groupLoopCountSuggestion = 1
        // False if something installed a global executor first, or if NIO's dlsym cannot find the hook:
        // it cannot when the Swift runtime is linked in statically (`--static-swift-stdlib` makes the
        // hook a local symbol). Tasks then run on Dispatch's pool: it works, without the two gains above.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let done = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
        done.completeWithTask { await Touchbridge.main() }
        // `Touchbridge.main()` exits by itself on an error or a non-zero exit code.
        _ = try? done.futureResult.wait()
    }
}
