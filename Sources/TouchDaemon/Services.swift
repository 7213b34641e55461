import Logging
import NIOCore
import TouchCore
import TouchOutput
import TouchWeb
import TouchX11
import TouchWayland

/// One long-lived part of the daemon, as swift-service-lifecycle's `Service`: started by the lifecycle
/// (each kind its own way, since each needs other things), then `run` while the daemon runs, and
/// `stop`ped in reverse order, each within a time limit (`ServiceStack`).
protocol Service: AnyObject, Sendable {
    /// What it is, for the log ("the web server").
    var name: String { get }
    /// Runs while the daemon runs: returns why the daemon must stop when the service ends by itself
    /// (the desktop gone without `--reconnect`, a stop asked for), nil when it has nothing that can end
    /// by itself or its task is cancelled (the daemon stops for another reason).
    func run() async -> Ending?
    /// Stops it, doing all it can even when a step fails; throws the first failure afterwards.
    /// `reason`: why the daemon stops, for the log.
    func stop(reason: String) async throws
    /// How much longer than the stack's limit its stop may take (none but the desktop connection's).
    var stopAllowance: Duration { get }
}

extension Service {
    func run() async -> Ending? { nil }
    var stopAllowance: Duration { .zero }
}

/// What the lifecycle makes its parts with: the real ones (`real`), or a test's models, which run the
/// whole lifecycle in process (Tests/TouchDaemonTests).
struct LifecycleParts: Sendable {
    /// The output choice and the input backend it names, made (on the Bridge's loop).
    /// The third argument is true once a stop was asked for (the portal's dialog gives up then).
    var chooseBackend: @Sendable (DaemonSettings, Logger, @escaping @Sendable () -> Bool)
        -> Result<(OutputChoice, any InputBackend), OutputChoiceFailure> = InputBackends.choose
    /// Opens the desktop the choice names (on the Bridge's loop).
    var openDesktop: @Sendable (OutputChoice.DesktopKind, Logger) -> Result<any Desktop, DesktopService.OpenFailure> = DesktopService.makeDesktop
    /// The signals that stop the daemon (`ShutdownSignals`).
    var signals: [Int32] = ShutdownSignals.all
    /// Where the pairing secret is kept ($XDG_STATE_HOME/touchbridge).
    var stateDirectory: String = PairingSecret.stateDirectory()
    /// How long a service may take to stop before the next one is stopped without it.
    var stopLimit: Duration = .seconds(5)
    /// Told "started NAME", "stopped NAME" (or "NAME did not stop within …") as the stack changes.
    var trace: @Sendable (String) -> Void = { _ in }

    static var real: LifecycleParts { LifecycleParts() }
}

/// The services started so far, in order: stopped in reverse by construction (each is pushed once it
/// runs, popped to stop), each within `limit`, and every failure on the way down logged, none stopping
/// the rest.
struct ServiceStack {
    private(set) var running: [any Service] = []
    let limit: Duration
    let trace: @Sendable (String) -> Void

    /// `service` runs: it is stopped before everything started before it.
    mutating func started(_ service: any Service) {
        running.append(service)
        trace("started \(service.name)")
    }

    /// How long `service` may take to stop: the stack's limit and the service's allowance.
    func limit(for service: any Service) -> Duration { limit + service.stopAllowance }

    /// Stops every service, the last started first. One that takes longer than `limit` is left to
    /// finish on its own (its task goes on) while the rest stop: a stop must not hang the daemon.
    mutating func stopAll(reason: String, logger: Logger) async {
        while let service = running.popLast() {
            let (outcomes, sink) = AsyncStream.makeStream(of: (any Error)?.self)
            Task {
                do {
                    try await service.stop(reason: reason)
                    sink.yield(nil)
                } catch {
                    sink.yield(error)
                }
            }
            let limit = limit(for: service)
            let timer = Task {
                try await Task.sleep(for: limit)
                sink.yield(StopTimedOut(limit: limit))
            }
            var first = outcomes.makeAsyncIterator()
            let outcome = await first.next() ?? nil
            timer.cancel()
            if let outcome {
                logger.error("\(reason): stopping \(service.name): \(outcome)")
                trace(outcome is StopTimedOut ? "\(service.name) did not stop within \(limit)" : "stopped \(service.name) with an error")
            } else {
                trace("stopped \(service.name)")
            }
        }
    }
}

/// A service whose stop took longer than the stack's limit.
struct StopTimedOut: Error, CustomStringConvertible {
    var limit: Duration
    var description: String { "did not stop within \(limit); going on without it" }
}

/// The signal watcher: a thread in `poll(2)` on the signal pipe, for the whole run. A signal is a stop
/// request (`StopRequests`); its run ends with the first stop asked for, by a signal or otherwise.
final class SignalService: Service {
    let name = "the signal watcher"
    private let watcher: DescriptorWatcher
    private let stops: StopRequests

    private init(watcher: DescriptorWatcher, stops: StopRequests) {
        self.watcher = watcher
        self.stops = stops
    }

    /// Installs the handlers of `signals` (`ShutdownSignals`) and watches their pipe: each signal is
    /// asked of `stops` by its name. Nil when the pipe or its thread cannot be made.
    static func start(_ signals: [Int32], stops: StopRequests) -> SignalService? {
        guard let pipe = ShutdownSignals.install(signals),
              let watcher = DescriptorWatcher(name: "touchbridge-signals", descriptor: pipe, onReadable: {
                  while let number = ShutdownSignals.take(from: pipe) { stops.request(ShutdownSignals.name(number)) }
              }) else { return nil }
        return SignalService(watcher: watcher, stops: stops)
    }

    func run() async -> Ending? { await stops.wait() }

    func stop(reason: String) async throws { watcher.stop() }
}

/// The input backend the choice named, started before the desktop: what outlives a desktop (uinput's
/// kernel devices, which need none) outlives a lost one (`--reconnect`). Stopped after the desktop: what
/// it still holds is released (the host did so at detach; this is the last word) and it closes.
final class InputBackendService: Service {
    let name = "the input backend"
    private let loop: any EventLoop
    let backend: NIOLoopBound<any InputBackend>
    private let logger: Logger

    init(loop: any EventLoop, backend: NIOLoopBound<any InputBackend>, logger: Logger) {
        self.loop = loop
        self.backend = backend
        self.logger = logger
    }

    func stop(reason: String) async throws {
        let backend = self.backend
        let (removed, errors) = try await loop.submit { () -> ([String], [OutputError]) in backend.value.close() }.get()
        if !removed.isEmpty { logger.debug("\(reason): removed \(removed.joined(separator: ", "))") }
        if let first = errors.first { throw first }
    }
}

/// The desktop connection: the desktop the choice named (X11, Wayland, or none), the input backend's
/// output on it (whichever backend it is), attached to the Bridge's host, and a watcher per descriptor.
/// Its run follows the desktop: when it goes away (`lostEvents`, from the host), it is closed, and
/// under `--reconnect` opened again (`open`) in place, the service staying on the stack; without it,
/// the run ends and the daemon with it.
actor DesktopService: Service {
    nonisolated let name = "the desktop connection"
    /// Its close may wait for Xwayland to take sway's seats' pointers (`SwaySeats.beforeDevicesGo`).
    nonisolated let stopAllowance = SwaySeats.longestWait
    private let loop: any EventLoop
    private let host: NIOLoopBound<BridgeHost>
    private let choice: OutputChoice
    private let backend: NIOLoopBound<any InputBackend>
    private let settings: DaemonSettings
    private let logger: Logger
    private let openDesktop: @Sendable (OutputChoice.DesktopKind, Logger) -> Result<any Desktop, OpenFailure>
    private let stops: StopRequests
    /// The host's word that the desktop went away.
    private let lostEvents: AsyncStream<Void>
    /// The desktop open now, on the loop.
    private var opened: NIOLoopBound<any Desktop>?
    private var watchers: [DescriptorWatcher] = []

    init(loop: any EventLoop, host: NIOLoopBound<BridgeHost>, choice: OutputChoice, backend: NIOLoopBound<any InputBackend>,
         settings: DaemonSettings, logger: Logger, parts: LifecycleParts, stops: StopRequests, lostEvents: AsyncStream<Void>) {
        self.loop = loop
        self.host = host
        self.choice = choice
        self.backend = backend
        self.settings = settings
        self.logger = logger
        openDesktop = parts.openDesktop
        self.stops = stops
        self.lostEvents = lostEvents
    }

    enum Connection {
        case connected
        /// A stop was asked for while waiting for the desktop.
        case stopped(Ending)
        /// Why the run ends, and the exit code.
        case failed(Ending)
    }

    /// Opens the desktop and attaches it to the Bridge (`open`); with `--reconnect`, a display that
    /// cannot be opened is tried again every second until it can, or a stop is asked for.
    func connect(firstTime: Bool) async -> Connection {
        var waitingLogged = false
        while true {
            switch await open() {
            case .success(let description):
                if waitingLogged || !firstTime { logger.notice("\(kind) is back: connected") }
                logger.info("driving \(description) in \(settings.core.mode.rawValue) mode\(settings.core.multitouch ? " with every finger" : "")")
                if firstTime, let line = settings.modeSettingsLine { logger.info("\(line)") }
                return .connected
            case .failure(let failure):
                guard settings.reconnect, let name = failure.waitable else {
                    logger.critical("\(failure.message)")
                    return .failed(Ending(why: "the \(kind) failing", code: ExitStatus.display))
                }
                if !waitingLogged {
                    logger.notice("waiting for \(kind) \"\(name)\" (--reconnect): trying every second")
                    waitingLogged = true
                }
                if let stop = await stops.waitASecond() { return .stopped(stop) }
                if Task.isCancelled { return .stopped(Ending(why: "the run ending", code: ExitStatus.stopped)) }
            }
        }
    }

    /// Follows the desktop until it goes away for good (without `--reconnect`): each time it goes, it
    /// is closed (`lost`) and, with `--reconnect`, awaited and attached again.
    func run() async -> Ending? {
        for await _ in lostEvents {
            switch await lost() {
            case .connected: continue
            case .stopped(let stop): return stop
            case .failed(let ending): return ending
            }
        }
        return nil
    }

    /// The desktop went away: it is closed; without `--reconnect` that ends the run, with it the
    /// desktop is awaited and attached again (`connect`).
    func lost() async -> Connection {
        do {
            try await close(reason: "\(kind) gone")
        } catch {
            logger.error("\(kind) gone: \(error)")
        }
        let what = kind == "X display" ? "X server" : kind
        guard settings.reconnect else {
            logger.critical("lost the connection to the \(what); exiting")
            return .failed(Ending(why: "the \(kind) going away", code: ExitStatus.display))
        }
        logger.notice("lost the connection to the \(what); --reconnect: waiting for it")
        return await connect(firstTime: false)
    }

    /// Why the desktop could not be opened; `waitable`: the display's name when it may yet come
    /// (`--reconnect` waits for it).
    struct OpenFailure: Error {
        var message: String
        var waitable: String?
    }

    /// What the log calls the desktop the choice names, before it is open ("X display").
    nonisolated var kind: String {
        switch choice.desktop {
        case .x11: "X display"
        case .wayland: "Wayland display"
        case .absent: "desktop"
        }
    }

    /// Opens the desktop, takes the backend's output on it, attaches both to the host and watches the
    /// desktop's descriptors. Returns the line that says what is driven.
    func open() async -> Result<String, OpenFailure> {
        let (loop, host, choice, backend, logger, openDesktop) = (self.loop, self.host, self.choice, self.backend, self.logger, self.openDesktop)
        let viewOn = settings.view
        let made: Result<(NIOLoopBound<any Desktop>, [Int32], String), OpenFailure>
        do {
            made = try await loop.submit { () -> Result<(NIOLoopBound<any Desktop>, [Int32], String), OpenFailure> in
                let desktop: any Desktop
                switch openDesktop(choice.desktop, logger) {
                case .success(let d): desktop = d
                case .failure(let failure): return .failure(failure)
                }
                // The live view's capture, before the descriptors are taken.
                if viewOn { Self.openView(on: desktop, backend: backend.value, logger: logger) }
                do throws(OutputError) {
                    try host.value.attach(desktop: desktop, input: try backend.value.output(on: desktop))
                    let size = try desktop.screen().screen
                    let line = "\(desktop) \(size.width)x\(size.height), onto \(host.value.targetDescription)"
                    return .success((NIOLoopBound(desktop, eventLoop: loop), desktop.descriptors, line))
                } catch {
                    // Nothing attached: what was made on the desktop is closed here, and the desktop.
                    for e in backend.value.desktopClosing().errors { logger.error("\(e)") }
                    for e in desktop.close() { logger.error("\(e)") }
                    return .failure(OpenFailure(message: "\(error)", waitable: nil))
                }
            }.get()
        } catch {
            return .failure(OpenFailure(message: "the event loop is gone: \(error)", waitable: nil))
        }
        switch made {
        case .failure(let failure): return .failure(failure)
        case .success(let (opened, descriptors, line)):
            self.opened = opened
            for fd in descriptors {
                let watcher = DescriptorWatcher(name: "touchbridge-desktop", descriptor: fd) {
                    // Waits until the loop has read what is there, so poll does not report it again.
                    do {
                        try loop.submit { host.value.desktopReadable() }.wait()
                    } catch {
                        logger.error("the desktop's watcher: the event loop is gone: \(error)")
                    }
                }
                if let watcher { watchers.append(watcher) } else { logger.error("cannot watch the desktop's descriptor \(fd): pipe(2) failed") }
            }
            return .success(line)
        }
    }

    /// The live view's capture on `desktop`: X11's (MIT-SHM and XDamage, on a connection of its own), or
    /// a wlroots compositor's screen copy, its mark drawn through Xwayland when the session has it. A
    /// desktop that gives no picture is said once; the page then says so.
    static func openView(on desktop: any Desktop, backend: any InputBackend, logger: Logger) {
        if let x11 = desktop as? X11Desktop {
            x11.openView()
            if let problem = x11.viewProblem { logger.notice("view: \(x11) gives no picture (\(problem)): the page says so") }
            return
        }
        let overlay = (desktop as? OverlaidDesktop)?.overlaySource as? X11Desktop
        guard let wayland = (desktop as? WaylandDesktop) ?? (desktop as? OverlaidDesktop)?.base as? WaylandDesktop else { return }
        // GNOME and KDE copy no screen for a client: the monitor the portal session shares instead.
        var castProblem = ""
        if wayland.viewProblem != nil, let sharing = backend as? any ScreenSharingBackend {
            switch sharing.openPixelStream() {
            case .success(let stream):
                wayland.attachCast(stream)
                logger.info("view: the pictures come from the portal's screen cast (\(stream.pixelsHolding))")
            case .failure(let error): castProblem = ", nor does the portal's screen cast (\(error.message))"
            }
        }
        if let problem = wayland.viewProblem {
            // GNOME and KDE share their screen through the portal only: say how to get the picture there.
            let hint = backend is any ScreenSharingBackend ? "" : "; on GNOME 45+ and Plasma 6.1+, `--backend portal` gives the picture (the desktop asks once)"
            logger.notice("view: \(wayland) gives no picture (\(problem))\(castProblem): the page says so\(hint)")
            return
        }
        // The mark needs a window above everything: Xwayland's, as the overlay's.
        overlay?.openView()
        do throws(X11Error) {
            wayland.attachView(try PictureView.make(source: wayland, mark: overlay?.capture))
            if overlay?.capture == nil {
                logger.notice("view: no mark on the screen while it is viewed (\(overlay?.viewProblem ?? "no X server for a window above everything")): the log says who views")
            }
        } catch {
            logger.notice("view: \(wayland) gives no picture (\(error)): the page says so")
        }
    }

    /// The desktop the choice names, on the loop: X11 (what an earlier run left on that server is
    /// cleaned up and said), Wayland, or none.
    static func makeDesktop(_ kind: OutputChoice.DesktopKind, logger: Logger) -> Result<any Desktop, OpenFailure> {
        switch kind {
        case .x11(let name):
            do throws(X11Error) {
                let (desktop, leftovers) = try X11Desktop.open(name: name)
                if !leftovers.masters.isEmpty {
                    logger.notice("removed pointers left over by an earlier run: \(leftovers.masters.map { "\"\($0)\"" }.joined(separator: ", "))")
                }
                if !leftovers.undone.isEmpty {
                    logger.notice("undid what an earlier run left: released \(leftovers.undone.joined(separator: ", "))")
                }
                return .success(desktop)
            } catch {
                if case .cannotOpenDisplay(let display) = error { return .failure(OpenFailure(message: "\(error)", waitable: display)) }
                return .failure(OpenFailure(message: "\(error)", waitable: nil))
            }
        case .wayland(let display, let overlayDisplay):
            return makeWaylandDesktop(display: display, overlayDisplay: overlayDisplay, logger: logger)
        case .absent:
            return .success(AbsentDesktop())
        }
    }

    /// The Wayland desktop (TouchWayland: outputs from wl_output and xdg-output, the keymap from
    /// xkbcommon, nothing to borrow), with the overlay on Xwayland's X display (`overlayDisplay`,
    /// DISPLAY) when the session has one (`OverlaidDesktop`); without it there is no overlay, said once
    /// by the choice. A compositor that cannot be reached is a failure to open, awaited with --reconnect.
    private static func makeWaylandDesktop(display: String, overlayDisplay: String?, logger: Logger) -> Result<any Desktop, OpenFailure> {
        let base: WaylandDesktop
        do throws(WaylandError) {
            base = try WaylandDesktop(name: display)
        } catch {
            return .failure(OpenFailure(message: "\(error)", waitable: display))
        }
        // A seat of their own for each further person under sway, which asks Xwayland (below) before they go.
        let swaySeats = InputBackends.swaySocket.map { SwaySeats(socketPath: $0) }
        base.personSeats = swaySeats
        logger.info("Wayland display \(display): \(base.outputs.count) output(s)\(base.hasXdgOutput ? " (xdg-output)" : ""): \(base.outputs.map(\.summary).joined(separator: "; "))")
        guard let overlayDisplay else { return .success(base) }
        switch makeDesktop(.x11(display: overlayDisplay), logger: logger) {
        case .success(let xwayland):
            swaySeats?.xwaylandDevices = (xwayland as? X11Desktop).map { x in { x.enabledDeviceNames() } }
            return .success(OverlaidDesktop(base: base, overlaySource: xwayland))
        case .failure(let failure):
            _ = base.close()
            return .failure(failure)
        }
    }

    /// Detaches the desktop from the host (what the Bridge held is released), closes what the backend
    /// made on it (XTest: its fingers' masters removed) and the desktop, and stops watching it. Nothing
    /// when none is open.
    func close(reason: String) async throws {
        for watcher in watchers { watcher.stop() }
        watchers.removeAll()
        guard let opened else { return }
        self.opened = nil
        let (host, backend, logger) = (self.host, self.backend, self.logger)
        let errors = try await loop.submit { () -> [OutputError] in
            host.value.detach(reason: reason)
            let (removed, failed) = backend.value.desktopClosing()
            if !removed.isEmpty { logger.info("\(reason): removed \(removed.joined(separator: ", "))") }
            return failed + opened.value.close()
        }.get()
        for error in errors.dropFirst() { logger.error("\(reason): \(error)") }
        if let first = errors.first { throw first }
    }

    func stop(reason: String) async throws { try await close(reason: reason) }
}

/// The Bridge's hold on the desktop: started once the listeners run, stopped first, so whatever the
/// sender holds is released before anything else stops (and before a closing page could release it
/// as a page gone).
final class BridgeHoldService: Service {
    let name = "the Bridge's hold"
    private let loop: any EventLoop
    private let host: NIOLoopBound<BridgeHost>

    init(loop: any EventLoop, host: NIOLoopBound<BridgeHost>) {
        self.loop = loop
        self.host = host
    }

    func stop(reason: String) async throws {
        let host = self.host
        try await loop.submit { host.value.detach(reason: reason) }.get()
    }
}
