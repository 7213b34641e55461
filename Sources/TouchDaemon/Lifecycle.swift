import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchNet
import TouchOutput

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's one lifecycle: its long-lived parts are services, started in a declared order
/// (`startOrder`), run together until one ends the run, and stopped in reverse by construction (a
/// `ServiceStack`), each within a time limit, whatever the reason. The model is swift-service-lifecycle's
/// `ServiceGroup`; the parts (`LifecycleParts`) are the real ones, or a test's models.
///
/// ```
///  start ─► signal watcher ─► the input backend (InputBackends.choose, logged with its reason)
///        ─► desktop connection: the desktop opened (--reconnect: awaited, every second), the backend's
///           output on it, attached to the Bridge's host
///        ─► listeners: PoseAI UDP, TUIO UDP, web (HTTP + WebSocket), in that order ─► the Bridge's hold
///        (a stop asked for during the start ends it after the step under way) ───────────────┐
///  run every service until one ends the run: the signal watcher's, on a stop asked for ──────┤
///        the desktop connection's, when the desktop went away (--reconnect: awaited again) ──┤
///  a start step that failed (display 69, listener 71) ────────────────────────────────────────┤
///  stop, the stack in reverse ◄──────────────────────────────────────────────────────────────┘
///        ─► the Bridge's hold: everything released ─► web, TUIO, PoseAI listeners closed
///        ─► desktop connection: what the backend made on it closed (XTest's masters), overlay removed,
///           display closed ─► input backend closed (uinput's devices destroyed) ─► signal watcher
///        ─► exit code
/// ```
public final class Lifecycle {
    private let settings: DaemonSettings
    private let logger: Logger
    private let parts: LifecycleParts
    /// What asks the daemon to stop: its signals, or whoever holds it (the tests).
    let stops: StopRequests

    /// Everything started, in order.
    private var services: ServiceStack
    /// The Bridge's own loop (`BridgeEventLoop`): the Bridge, the UDP listeners and the outputs, made for
    /// this run and ended after its last service stopped. Nil when the system gave no thread or epoll
    /// (`run` then ends at once).
    private let bridgeLoop: BridgeEventLoop?
    /// The Bridge's loop, once `run` has found it made.
    private var loop: BridgeEventLoop { bridgeLoop! }
    /// A loop of NIO's singleton group (which also runs Swift concurrency's jobs): the web server's
    /// channels and tasks, so a burst of WebSocket frames is read beside the Bridge's work, not in its
    /// place. The singleton loops are never shut down: the process ends with them.
    private let webLoop: any EventLoop
    private var host: NIOLoopBound<BridgeHost>?
    private var desktop: DesktopService?

    public convenience init(settings: DaemonSettings, logger: Logger) {
        self.init(settings: settings, logger: logger, parts: .real)
    }

    init(settings: DaemonSettings, logger: Logger, parts: LifecycleParts, stops: StopRequests = StopRequests()) {
        self.settings = settings
        self.logger = logger
        self.parts = parts
        self.stops = stops
        services = ServiceStack(limit: parts.stopLimit, trace: parts.trace)
        bridgeLoop = BridgeEventLoop(name: "bridge-loop")
        webLoop = MultiThreadedEventLoopGroup.singleton.next()
    }

    /// Runs the daemon to its end; returns the exit code.
    public func run() async -> Int32 {
        guard let bridgeLoop else {
            logger.critical("cannot start the Bridge's event loop: the system gave no thread, epoll or eventfd")
            return ExitStatus.software
        }
        defer { bridgeLoop.shutdown() }
        let ending: Ending
        if let stopped = await start() { ending = stopped } else { ending = await serve() }
        await services.stopAll(reason: ending.why, logger: logger)
        logger.info("stopped by \(ending.why)")
        return ending.code
    }

    // MARK: start

    /// The start order: each step starts one service and pushes it on the stack, which stops them in
    /// reverse. A step returns nil when its service runs (or the settings turn it off), else why the
    /// daemon ends.
    private static var startOrder: [(Lifecycle) -> () async -> Ending?] {
        [watchSignals, chooseBackend, connectDesktop]
            + allListeners.map { listener in { lifecycle in { await lifecycle.listen(listener) } } }
            + [holdDesktop]
    }

    /// Runs the start order: nil when everything runs, else why it stopped: a step failed, or a stop was
    /// asked for (looked at after each step).
    private func start() async -> Ending? {
        for step in Self.startOrder {
            if let failed = await step(self)() { return failed }
            if let stop = stops.requested { return stop }
        }
        return nil
    }

    private func watchSignals() async -> Ending? {
        // Writing to an X server or a socket that went away must be an error, not a signal.
        signal(SIGPIPE, SIG_IGN)
        guard let watcher = SignalService.start(parts.signals, stops: stops) else {
            logger.critical("cannot set up the signal pipe")
            return Ending(why: "no signal pipe", code: ExitStatus.software)
        }
        services.started(watcher)
        if geteuid() == 0 {
            logger.warning("running as root, which touchbridge does not need: it needs only the X display (DISPLAY and XAUTHORITY) or write access to /dev/uinput, and a UDP port above 1023; run it as the desktop's user, so that a flaw reachable from the network cannot act beyond that user's session")
        }
        return nil
    }

    /// The backend, and the Bridge configured from its capabilities, on the loop that owns them; the
    /// backend's output may outlive a desktop (uinput's devices, under --reconnect).
    private func chooseBackend() async -> Ending? {
        let (loop, settings, logger, choose, stops) = (self.loop, self.settings, self.logger, parts.chooseBackend, self.stops)
        let (lostEvents, lost) = AsyncStream.makeStream(of: Void.self)
        let chosen: Result<(OutputChoice, NIOLoopBound<any InputBackend>, NIOLoopBound<BridgeHost>), OutputChoiceFailure>
        do {
            chosen = try await loop.submit {
                choose(settings, logger, { stops.requested != nil }).map { choice, backend in
                    let people = People(configuration: settings.core, capabilities: backend.capabilities, monitor: settings.monitor,
                                        people: settings.people)
                    if people.count > 1 {
                        logger.info("up to \(people.count) people at once: the first drives the pointer, each further one a pointer and keyboard of their own while connected")
                    } else if settings.people > 1 {
                        logger.notice("one person at a time: \(backend.name) has one pointer for everyone")
                    }
                    let host = BridgeHost(loop: loop, people: people, logger: logger, debugXErrorEvery: settings.debugXErrorEvery, view: settings.view,
                                          desktopLost: { lost.yield() })
                    return (choice, NIOLoopBound(backend, eventLoop: loop), NIOLoopBound(host, eventLoop: loop))
                }
            }.get()
        } catch {
            logger.critical("the event loop is gone: \(error)")
            return Ending(why: "the event loop gone", code: ExitStatus.software)
        }
        switch chosen {
        case .failure(let failure):
            if let stop = stops.requested {
                logger.info("stopped by \(stop.why) while the RemoteDesktop portal waited for the user")
                return stop
            }
            logger.critical("\(failure)")
            return failure.portalRefused ? Ending(why: "the portal's refusal", code: ExitStatus.portalRefused)
                : Ending(why: "no input backend", code: ExitStatus.display)
        case .success(let (choice, backend, host)):
            services.started(InputBackendService(loop: loop, backend: backend, logger: logger))
            if let watcher = await BackendConnectionWatcher.start(loop: loop, backend: backend, logger: logger) {
                services.started(watcher)
            }
            self.host = host
            desktop = DesktopService(loop: loop, host: host, choice: choice, backend: backend, settings: settings, logger: logger,
                                     parts: parts, stops: stops, lostEvents: lostEvents)
            return nil
        }
    }

    private func connectDesktop() async -> Ending? {
        guard let desktop else { return Ending(why: "no desktop service", code: ExitStatus.software) }
        switch await desktop.connect(firstTime: true) {
        case .connected:
            services.started(desktop)
            return nil
        case .stopped(let stop):
            logger.info("stopped by \(stop.why) while waiting for the \(desktop.kind)")
            return stop
        case .failed(let ending): return ending
        }
    }

    /// One listener (`allListeners`: PoseAI, TUIO, web), into the Bridge's host.
    private func listen(_ listener: any ListenerService.Type) async -> Ending? {
        guard let host else { return Ending(why: "no Bridge", code: ExitStatus.software) }
        do throws(ListenerFailure) {
            if let started = try await listener.start(settings, loop: loop, webLoop: webLoop, host: host,
                                                      stateDirectory: parts.stateDirectory, logger: logger) {
                services.started(started)
            }
            return nil
        } catch {
            logger.critical("\(error.message)")
            return Ending(why: "a listener failing", code: ExitStatus.listener)
        }
    }

    /// Last, so it is stopped first: whatever the sender holds is released before anything else stops.
    private func holdDesktop() async -> Ending? {
        guard let host else { return Ending(why: "no Bridge", code: ExitStatus.software) }
        services.started(BridgeHoldService(loop: loop, host: host))
        return nil
    }

    // MARK: running

    /// Runs every service (`Service.run`) until one ends the run: a stop asked for (the signal
    /// watcher's), or the desktop gone for good (the desktop connection's). The others' runs are then
    /// cancelled and awaited, so no run goes on while the stack stops.
    private func serve() async -> Ending {
        let running = services.running
        return await withTaskGroup(of: Ending?.self) { group in
            for service in running { group.addTask { await service.run() } }
            defer { group.cancelAll() }
            while let result = await group.next() {
                if let ending = result { return ending }
            }
            return Ending(why: "every service ending", code: ExitStatus.software)
        }
    }
}
