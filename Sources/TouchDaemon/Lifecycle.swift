import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchOutput

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's one lifecycle: its long-lived parts are services, started in a declared order
/// (`startOrder`) and stopped in reverse by construction (a `ServiceStack`), whatever the reason.
///
/// ```
///  start ─► signal watcher ─► the input backend (InputBackends.choose, logged with its reason)
///        ─► desktop connection: the desktop opened (--reconnect: awaited, every second), the backend's
///           output on it, attached to the Bridge's host
///        ─► listeners: PoseAI UDP, TUIO UDP, web (HTTP + WebSocket), in that order ─► the Bridge's hold
///        ─► run until: a signal ─────────────────────────────────────────────────────┐
///                      the desktop went away ─► --reconnect: close it, await it again, attach
///                                            └► otherwise ─────────────────────────────┤
///                      a start step failed (display 69, listener 71) ─────────────────┤
///  stop, the stack in reverse ◄────────────────────────────────────────────────────────┘
///        ─► the Bridge's hold: everything released ─► web, TUIO, PoseAI listeners closed
///        ─► desktop connection: what the backend made on it closed (XTest's masters), overlay removed,
///           display closed ─► input backend closed (uinput's devices destroyed) ─► signal watcher
///        ─► exit code
/// ```
///
/// A start step that fails returns its exit code; what the steps before it started is on the stack, and
/// the same stop path stops it. Every failure on the way down is logged.
public final class Lifecycle {
    private let settings: DaemonSettings
    private let logger: Logger
    /// What ends a wait: a signal, the desktop going away, a second passing.
    private let events = LifecycleEvents()

    /// Everything started, in order.
    private var services = ServiceStack()
    /// NIO's singleton group, which `main` makes two loops and Swift concurrency's executors: the
    /// Bridge, the UDP listeners and the outputs on the first; the web server's channels and tasks on
    /// the second, so a burst of WebSocket frames is read beside the Bridge's work, not in its place.
    /// The singleton loops are never shut down: the process ends with them.
    private let loop: any EventLoop
    private let webLoop: any EventLoop
    private var host: NIOLoopBound<BridgeHost>?
    private var desktop: DesktopService?
    /// Set by the first stop signal: what waits before the event loop serves (the portal's dialog) gives up.
    private let stopRequested = StopFlag()

    public init(settings: DaemonSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        var loops = MultiThreadedEventLoopGroup.singleton.makeIterator()
        loop = loops.next() ?? MultiThreadedEventLoopGroup.singleton.next()
        webLoop = loops.next() ?? loop
    }

    /// Runs the daemon to its end; returns the exit code.
    public func run() async -> Int32 {
        if let failure = await start() {
            await services.stopAll(reason: "startup failed", logger: logger)
            return failure
        }
        let (why, exitCode) = await serve()
        await services.stopAll(reason: why, logger: logger)
        logger.info("stopped by \(why)")
        return exitCode
    }

    // MARK: start

    /// The start order: each step starts one service and pushes it on the stack, which stops them in
    /// reverse. A step returns nil when it runs, else the exit code.
    private static var startOrder: [(Lifecycle) -> () async -> Int32?] {
        [watchSignals, chooseBackend, connectDesktop, listen, holdDesktop]
    }

    /// Runs the start order: nil when everything runs, else the exit code of the step that failed.
    private func start() async -> Int32? {
        for step in Self.startOrder {
            if let code = await step(self)() { return code }
        }
        return nil
    }

    private func watchSignals() async -> Int32? {
        // Writing to an X server or a socket that went away must be an error, not a signal.
        signal(SIGPIPE, SIG_IGN)
        let (sink, stopRequested) = (events.sink, self.stopRequested)
        guard let watcher = SignalService.start(onSignal: { stopRequested.set(); sink.yield(.signal($0)) }) else {
            logger.critical("cannot set up the signal pipe")
            return ExitStatus.software
        }
        services.started(watcher)
        if geteuid() == 0 {
            logger.warning("running as root, which touchbridge does not need: it needs only the X display (DISPLAY and XAUTHORITY) or write access to /dev/uinput, and a UDP port above 1023; run it as the desktop's user, so that a flaw reachable from the network cannot act beyond that user's session")
        }
        return nil
    }

    /// The backend, and the Bridge configured from its capabilities, on the loop that owns them; the
    /// backend's output may outlive a desktop (uinput's devices, under --reconnect).
    private func chooseBackend() async -> Int32? {
        let (loop, settings, logger, sink, stopRequested) = (self.loop, self.settings, self.logger, events.sink, self.stopRequested)
        let chosen: Result<(OutputChoice, NIOLoopBound<any InputBackend>, NIOLoopBound<BridgeHost>), OutputChoiceFailure>
        do {
            chosen = try await loop.submit {
                InputBackends.choose(settings, logger: logger, stop: { stopRequested.isSet }).map { choice, backend in
                    let bridge = Bridge(configuration: settings.core, capabilities: backend.capabilities, monitor: settings.monitor)
                    let host = BridgeHost(loop: loop, bridge: bridge, logger: logger, debugXErrorEvery: settings.debugXErrorEvery,
                                          desktopLost: { sink.yield(.desktopLost) })
                    return (choice, NIOLoopBound(backend, eventLoop: loop), NIOLoopBound(host, eventLoop: loop))
                }
            }.get()
        } catch {
            logger.critical("the event loop is gone: \(error)")
            return ExitStatus.software
        }
        switch chosen {
        case .failure(let failure):
            if stopRequested.isSet {
                logger.info("stopped by a signal while the RemoteDesktop portal waited for the user")
                return ExitStatus.stopped
            }
            logger.critical("\(failure)")
            return failure.portalRefused ? ExitStatus.portalRefused : ExitStatus.display
        case .success(let (choice, backend, host)):
            services.started(InputBackendService(loop: loop, backend: backend, logger: logger))
            if let watcher = await BackendConnectionWatcher.start(loop: loop, backend: backend, logger: logger,
                                                                 lost: { sink.yield(.inputLost($0)) }) {
                services.started(watcher)
            }
            self.host = host
            desktop = DesktopService(loop: loop, host: host, choice: choice, backend: backend, settings: settings, logger: logger)
            return nil
        }
    }

    private func connectDesktop() async -> Int32? {
        guard let desktop else { return ExitStatus.software }
        switch await desktop.connect(firstTime: true, waitASecond: events.waitASecond) {
        case .connected:
            services.started(desktop)
            return nil
        case .stopped(let number):
            logger.info("stopped by \(ShutdownSignals.name(number)) while waiting for the \(desktop.kind)")
            return ExitStatus.stopped
        case .failed(_, let code): return code
        }
    }

    /// The listeners (`allListeners`: PoseAI, TUIO, web), in that order, into the Bridge's host.
    private func listen() async -> Int32? {
        guard let host else { return ExitStatus.software }
        for listener in allListeners {
            do throws(ListenerFailure) {
                if let started = try await listener.start(settings, loop: loop, webLoop: webLoop, host: host, logger: logger) {
                    services.started(started)
                }
            } catch {
                logger.critical("\(error.message)")
                return ExitStatus.listener
            }
        }
        return nil
    }

    /// Last, so it is stopped first: whatever the sender holds is released before anything else stops.
    private func holdDesktop() async -> Int32? {
        guard let host else { return ExitStatus.software }
        services.started(BridgeHoldService(loop: loop, host: host))
        return nil
    }

    // MARK: running

    /// Waits for what ends the run: a signal, or the desktop going away (without `--reconnect`); with
    /// it, a lost desktop is closed, awaited and driven again. Returns the reason and the exit code.
    private func serve() async -> (String, Int32) {
        while true {
            switch await events.next() {
            case .tick?:
                continue  // a tick of an earlier wait, late
            case .signal(let number)?:
                return (ShutdownSignals.name(number), ExitStatus.stopped)
            case .inputLost(let why)?:
                logger.critical("\(why); exiting")
                return (why, ExitStatus.display)
            case .desktopLost?:
                guard let desktop else { return ("the desktop going away", ExitStatus.software) }
                switch await desktop.lost(waitASecond: events.waitASecond) {
                case .connected: continue
                case .stopped(let number): return (ShutdownSignals.name(number), ExitStatus.stopped)
                case .failed(let why, let code): return (why, code)
                }
            case nil:
                return ("the end of the event stream", ExitStatus.software)
            }
        }
    }
}
