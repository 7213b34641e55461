import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchNet
import TouchOutput
import TouchUInput
import TouchWeb

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's one lifecycle: its long-lived parts are services, started in order and stopped in
/// reverse by construction (a `ServiceStack`), whatever the reason.
///
/// ```
///  start ─► signal watcher ─► the output choice (OutputChoice.choose, logged with its reason)
///        ─► uinput devices (when chosen) ─► desktop connection: the desktop opened (--reconnect: awaited,
///           every second), the XTest output on it (when chosen), attached to the Bridge's host
///        ─► listeners: PoseAI UDP, TUIO UDP, web (HTTP + WebSocket), in that order ─► the Bridge's hold
///        ─► run until: a signal ─────────────────────────────────────────────────────┐
///                      the desktop went away ─► --reconnect: close it, await it again, attach
///                                            └► otherwise ─────────────────────────────┤
///                      a start step failed (display 69, listener 71) ─────────────────┤
///  stop, the stack in reverse ◄────────────────────────────────────────────────────────┘
///        ─► the Bridge's hold: everything released ─► web, TUIO, PoseAI listeners closed
///        ─► desktop connection: XTest output closed (masters removed), overlay removed, display closed
///        ─► uinput devices destroyed ─► signal watcher stopped ─► exit code
/// ```
///
/// A start step that fails returns its exit code; what the steps before it started is on the stack, and
/// the same stop path stops it. Every failure on the way down is logged.
public final class Lifecycle {
    private let settings: DaemonSettings
    private let logger: Logger
    /// What ends a wait: a signal, the desktop going away, or (only while waiting for a display with
    /// `--reconnect`) a second passing.
    private enum Event: Sendable {
        case signal(Int32)
        case desktopLost
        case tick
    }
    /// Every event, from the watchers' threads, the loop and the tick task; read only by `run()`'s task.
    private var events: AsyncStream<Event>.Iterator
    private let eventSink: AsyncStream<Event>.Continuation

    /// Everything started, in order.
    private var services = ServiceStack()
    /// The Bridge's loop (NIO's singleton group's first), and the web server's (its second). The
    /// singleton loops are never shut down: the process ends with them.
    private var bridgeLoop: (any EventLoop)?
    private var webLoop: (any EventLoop)?
    private var host: NIOLoopBound<BridgeHost>?
    private var desktop: DesktopService?

    public init(settings: DaemonSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        let (stream, sink) = AsyncStream.makeStream(of: Event.self)
        events = stream.makeAsyncIterator()
        eventSink = sink
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

    /// The start path: nil when everything runs, else the exit code of the step that failed.
    private func start() async -> Int32? {
        // Writing to an X server or a socket that went away must be an error, not a signal.
        signal(SIGPIPE, SIG_IGN)
        let sink = eventSink
        guard let signalPipe = ShutdownSignals.install(),
              let watcher = DescriptorWatcher(name: "touchbridge-signals", descriptor: signalPipe, onReadable: {
                  while let number = ShutdownSignals.take(from: signalPipe) { sink.yield(.signal(number)) }
              }) else {
            logger.critical("cannot set up the signal pipe")
            return ExitStatus.software
        }
        services.started(SignalService(watcher: watcher))
        if geteuid() == 0 {
            logger.warning("running as root, which touchbridge does not need: it needs only the X display (DISPLAY and XAUTHORITY) or write access to /dev/uinput, and a UDP port above 1023; run it as the desktop's user, so that a flaw reachable from the network cannot act beyond that user's session")
        }

        // NIO's singleton group, which `main` makes two loops and Swift concurrency's executors: the
        // Bridge, the UDP listeners and the outputs on the first; the web server's channels and tasks
        // on the second, so a burst of WebSocket frames is read beside the Bridge's work, not in its place.
        var loops = MultiThreadedEventLoopGroup.singleton.makeIterator()
        guard let loop = loops.next() else { return ExitStatus.software }
        bridgeLoop = loop
        webLoop = loops.next() ?? loop
        let logger = self.logger
        let settings = self.settings

        // The choice, on the loop that owns what it makes (the uinput devices, which do not depend on
        // the desktop and outlive a lost one under --reconnect).
        let facts = Self.facts(settings)
        let chosen: Result<(OutputChoice, NIOLoopBound<UInputBackend>?, NIOLoopBound<BridgeHost>), OutputChoiceFailure>
        do {
            chosen = try await loop.submit { () -> Result<(OutputChoice, NIOLoopBound<UInputBackend>?, NIOLoopBound<BridgeHost>), OutputChoiceFailure> in
                let result = OutputChoice.choose(facts) { () -> Result<UInputBackend, OutputError> in
                    do throws(UInputError) {
                        let pad = settings.uinputTouchpad == .native ? (width: settings.core.touchpad.surface.widthMM, height: settings.core.touchpad.surface.heightMM) : nil
                        return .success(try UInputBackend(touchscreen: true, touchpadMM: pad, path: settings.uinputPath))
                    } catch {
                        return .failure(error.output)
                    }
                }
                switch result {
                case .failure(let failure): return .failure(failure)
                case .success(let (choice, devices)):
                    var core = settings.core
                    if choice.input == .uinput {
                        // Every finger a real touch in touchscreen mode, the native touchpad or hi-res
                        // wheels in touchpad mode, whatever mode the page switches to later.
                        core.realTouches = true
                        core.nativeTouchpad = settings.uinputTouchpad == .native
                        core.touchpad.smoothScroll = true
                    }
                    let bridge = Bridge(configuration: core, monitor: settings.monitor)
                    let host = BridgeHost(loop: loop, bridge: bridge, logger: logger, debugXErrorEvery: settings.debugXErrorEvery,
                                          desktopLost: { sink.yield(.desktopLost) })
                    return .success((choice, devices.map { NIOLoopBound($0, eventLoop: loop) }, NIOLoopBound(host, eventLoop: loop)))
                }
            }.get()
        } catch {
            logger.critical("the event loop is gone: \(error)")
            return ExitStatus.software
        }
        let choice: OutputChoice
        let uinput: NIOLoopBound<UInputBackend>?
        switch chosen {
        case .failure(let failure):
            logger.critical("\(failure)")
            return ExitStatus.display
        case .success(let (c, devices, h)):
            choice = c
            uinput = devices
            host = h
            logger.info("\(c.reason)")
        }
        if let uinput { services.started(UInputService(loop: loop, devices: uinput, logger: logger)) }
        guard let host else { return ExitStatus.software }

        let desktop = DesktopService(loop: loop, host: host, choice: choice, uinput: uinput, multitouch: settings.core.multitouch, logger: logger)
        self.desktop = desktop
        switch await connectDesktop(firstTime: true) {
        case .connected: services.started(desktop)
        case .stopped(let number):
            logger.info("stopped by \(ShutdownSignals.name(number)) while waiting for the \(desktop.kind)")
            return ExitStatus.stopped
        case .failed(let code): return code
        }
        if let code = await startListeners(loop: loop, host: host) { return code }
        services.started(BridgeHoldService(loop: loop, host: host))
        return nil
    }

    /// What the output choice depends on, read from the settings and the environment.
    private static func facts(_ s: DaemonSettings) -> OutputFacts {
        let native = s.uinputTouchpad == .native
        let what = "a touchscreen, \(native ? "a native touchpad, " : "")a pointer with hi-res wheels and a keyboard"
        return OutputFacts(backend: s.backend, multitouch: s.core.multitouch, display: s.display ?? environment("DISPLAY"),
                           waylandDisplay: environment("WAYLAND_DISPLAY"), uinputPath: s.uinputPath, uinputDevices: what)
    }

    /// The environment variable `name`, when set.
    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    private enum Connection {
        case connected
        case stopped(Int32)
        case failed(Int32)
    }

    /// Opens the desktop and attaches it to the Bridge; with `--reconnect`, a display that cannot be
    /// opened is tried again every second until it can, or a signal stops the wait.
    private func connectDesktop(firstTime: Bool) async -> Connection {
        guard let desktop else { return .failed(ExitStatus.software) }
        var waitingLogged = false
        while true {
            switch await desktop.open() {
            case .success(let description):
                if waitingLogged || !firstTime { logger.notice("\(desktop.kind) is back: connected") }
                logger.info("driving \(description) in \(settings.core.mode.rawValue) mode\(settings.core.multitouch ? " with every finger" : "")")
                if firstTime { logModeSettings() }
                return .connected
            case .failure(let failure):
                guard settings.reconnect, let name = failure.waitable else {
                    logger.critical("\(failure.message)")
                    return .failed(ExitStatus.display)
                }
                if !waitingLogged {
                    logger.notice("waiting for \(desktop.kind) \"\(name)\" (--reconnect): trying every second")
                    waitingLogged = true
                }
                if case .signal(let number) = await nextEvent(orTickAfter: .seconds(1)) { return .stopped(number) }
            }
        }
    }

    private func logModeSettings() {
        let c = settings.core
        switch c.mode {
        case .touchpad:
            let t = c.touchpad
            logger.info("touchpad: surface \(t.surface), accel \(t.accelProfile.rawValue) speed \(t.speed), tap \(t.tapToClick ? "on" : "off"), drag lock \(t.dragLock ? "on" : "off"), \(t.naturalScroll ? "natural" : "traditional") scroll ×\(t.scrollSpeed), kinetic \(t.kineticScroll ? "on" : "off"), smoothing \(t.smoothing.rawValue)")
        case .presenter:
            let k = c.presenter.keys
            logger.info("presenter: next \(k.next), previous \(k.previous), blank \(k.blank)")
        case .touchscreen:
            break
        }
    }

    /// The PoseAI, TUIO and web listeners, in that order: nil when all listen, else the exit code.
    private func startListeners(loop: any EventLoop, host: NIOLoopBound<BridgeHost>) async -> Int32? {
        let s = settings
        let logger = self.logger
        let handshake = PoseAIHandshake.reply(version: s.version)
        let udp: PoseAIUDPListener.Bound
        do {
            udp = try await PoseAIUDPListener.bind(group: loop, host: s.bind, port: s.udpPort, allowList: s.allowList) {
                PoseAIUDPHandler(allowList: s.allowList, rateLimits: s.rateLimits, sink: host.value, handshake: handshake, logger: logger)
            }
        } catch {
            logger.critical("cannot listen for UDP on \(s.bind):\(s.udpPort): \(error)")
            return ExitStatus.listener
        }
        services.started(PoseAIListenerService(loop: loop, bound: udp, logger: logger))
        logger.info("sources outside --allow: refused in userspace; IPv4 ones in the kernel too, kernel filter \(udp.kernelFilter)")
        let port = udp.channel.localAddress?.port ?? s.udpPort
        writeLine("listening poseai-udp \(s.bind):\(port) (phone: send to \(PhoneAddresses.describe(bind: s.bind, port: port, allowList: s.allowList)))")

        if s.tuioPort != 0 {
            do {
                let tuio = try await TUIOUDPListener.bind(group: loop, host: s.bind, port: s.tuioPort) {
                    TUIOUDPHandler(allowList: s.allowList, rateLimits: s.rateLimits, sink: host.value, logger: logger)
                }
                services.started(TUIOListenerService(channel: tuio))
            } catch {
                logger.critical("cannot listen for TUIO on \(s.bind):\(s.tuioPort): \(error)")
                return ExitStatus.listener
            }
            writeLine("listening tuio-udp \(s.bind):\(s.tuioPort) (TUIO app: send to \(PhoneAddresses.describe(bind: s.bind, port: s.tuioPort, allowList: s.allowList)))")
        }

        if s.httpPort != 0 {
            do {
                let (secret, created) = try PairingSecret.load(directory: PairingSecret.stateDirectory(), rotate: s.newSecret)
                if created { logger.notice("made a new pairing secret in \(PairingSecret.stateDirectory())/pairing-secret") }
                let input = try await loop.submit { NIOLoopBound(WebInput(sink: host.value, logger: logger), eventLoop: loop) }.get()
                let webSettings = WebServerSettings(host: s.bind, port: s.httpPort, secret: secret, allowList: s.allowList,
                                                    tlsCertificate: s.tlsCertificate, tlsKey: s.tlsKey)
                let (httpBound, task) = try await WebServer.start(settings: webSettings, loop: loop, serverLoop: webLoop ?? loop, input: input,
                                                                  logger: logger)
                services.started(WebService(task: task))
                // The secret stays out of the log (a service's stdout is its journal): `touchbridge pair`
                // prints the page's address with it; a terminal (a person watching) also gets the QR code.
                writeLine("listening http \(s.bind):\(httpBound) (phone: 'touchbridge pair' prints the page's address and QR code)")
                let urls = PhoneAddresses.pageURLs(scheme: s.tlsCertificate == nil ? "http" : "https", bind: s.bind,
                                                   port: httpBound, allowList: s.allowList, secret: secret)
                if isatty(1) == 1, let first = urls.first, let lines = QRCode.terminalLines(first) {
                    writeLine("scan with the phone's camera to open \(first):")
                    for line in lines { writeLine(line) }
                }
            } catch {
                logger.critical("cannot serve the web touchpad on \(s.bind):\(s.httpPort): \(error)")
                return ExitStatus.listener
            }
        }
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
            case .desktopLost?:
                guard let desktop else { return ("the desktop going away", ExitStatus.software) }
                let kind = desktop.kind
                do {
                    try await desktop.close(reason: "\(kind) gone")
                } catch {
                    logger.error("\(kind) gone: \(error)")
                }
                guard settings.reconnect else {
                    logger.critical("lost the connection to the \(kind == "X display" ? "X server" : kind); exiting")
                    return ("the \(kind) going away", ExitStatus.display)
                }
                logger.notice("lost the connection to the \(kind == "X display" ? "X server" : kind); --reconnect: waiting for it")
                switch await connectDesktop(firstTime: false) {
                case .connected: continue
                case .stopped(let number): return (ShutdownSignals.name(number), ExitStatus.stopped)
                case .failed(let code): return ("the \(kind) failing", code)
                }
            case nil:
                return ("the end of the event stream", ExitStatus.software)
            }
        }
    }

    /// The next signal, or `.tick` after `interval` without one.
    private func nextEvent(orTickAfter interval: Duration) async -> Event? {
        let sink = eventSink
        // Task.sleep is a timer on one of NIO's loops (`main` installs them as Swift concurrency's
        // executors, sleeps included): no Dispatch pool.
        let ticker = Task {
            do {
                try await Task.sleep(for: interval)
                sink.yield(.tick)
            } catch {
                // Cancelled: the wait ended on a signal first.
            }
        }
        defer { ticker.cancel() }
        while true {
            switch await events.next() {
            case .desktopLost?: continue  // not connected: nothing to lose
            case let event: return event
            }
        }
    }
}
