import Logging
import NIOCore
import Synchronization
import TouchOutput

/// Set once, read from any thread: whether the watcher already said the connection ended.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// The input backend's own connection (the portal's EIS descriptor), watched like the desktop's: a
/// thread in `poll(2)` that hands each wake-up to the loop, which reads what came (`readIncoming`) and
/// logs it; when the connection ends, its run ends the daemon's (exit 69) saying why. uinput and XTest
/// have no connection: nothing is watched for them.
final class BackendConnectionWatcher: Service {
    let name = "the input backend's connection watcher"
    private let watcher: DescriptorWatcher
    /// Why the connection ended, once.
    private let endings: AsyncStream<String>
    private let logger: Logger

    private init(watcher: DescriptorWatcher, endings: AsyncStream<String>, logger: Logger) {
        (self.watcher, self.endings, self.logger) = (watcher, endings, logger)
    }

    /// Starts watching `backend`'s descriptor when it has one; nil when it has none (or the watcher's
    /// pipe cannot be made, which is logged).
    static func start(loop: any EventLoop, backend: NIOLoopBound<any InputBackend>, logger: Logger) async -> BackendConnectionWatcher? {
        let descriptor = try? await loop.submit { () -> Int32? in
            (backend.value as? any BackendWithConnection)?.descriptor
        }.get()
        guard let descriptor else { return nil }
        let ended = StopFlag()
        let (endings, lost) = AsyncStream.makeStream(of: String.self)
        let watcher = DescriptorWatcher(name: "touchbridge-input", descriptor: descriptor) {
            do {
                // Waits until the loop has read what is there, so poll does not report it again.
                try loop.submit {
                    guard let connected = backend.value as? any BackendWithConnection else { return }
                    let incoming = connected.readIncoming()
                    for line in incoming.lines { logger.info("\(line)") }
                    if let why = incoming.ended, !ended.isSet {
                        ended.set()
                        lost.yield(why)
                        lost.finish()
                    }
                }.wait()
            } catch {
                logger.error("the input backend's watcher: the event loop is gone: \(error)")
            }
        }
        guard let watcher else {
            logger.error("cannot watch the input backend's descriptor \(descriptor): pipe(2) failed")
            return nil
        }
        return BackendConnectionWatcher(watcher: watcher, endings: endings, logger: logger)
    }

    /// Ends the daemon's run when the connection ends (the compositor or the session gone).
    func run() async -> Ending? {
        for await why in endings {
            logger.critical("\(why); exiting")
            return Ending(why: why, code: ExitStatus.display)
        }
        return nil
    }

    func stop(reason: String) async throws { watcher.stop() }
}
