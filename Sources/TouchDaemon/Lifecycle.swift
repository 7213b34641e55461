import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchNet
import TouchUInput
import TouchWeb
import TouchX11

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's one lifecycle: one start path and one teardown path, whatever the reason.
///
/// ```
///  start ─► signals watched ─► X output opened (--reconnect: awaited, every second) ─► Bridge attached
///        ─► listeners: PoseAI UDP, TUIO UDP, web (HTTP + WebSocket), in that order
///        ─► run until: a signal ─────────────────────────────────────────────┐
///                      the X server went away ─► --reconnect: detach, await the display again, attach
///                                              └► otherwise ──────────────────┤
///                      a start step failed (display 69, listener 71) ─────────┤
///  teardown (one path) ◄──────────────────────────────────────────────────────┘
///        ─► Bridge shut down and output closed: buttons and keys released, masters removed, overlay
///           removed, display closed ─► listeners closed (in reverse) ─► watchers stopped ─► exit code
/// ```
///
/// Resources are kept in the order they were made and released in reverse by `teardown`; each start
/// step that fails leaves the ones before it for the same teardown.
public final class Lifecycle {
    private let settings: DaemonSettings
    private let logger: Logger
    /// What ends a wait: a signal, the X server going away, or (only while waiting for a display with
    /// `--reconnect`) a second passing.
    private enum Event: Sendable {
        case signal(Int32)
        case outputLost
        case tick
    }
    /// Every event, from the watchers' threads, the loop and the tick task; read only by `run()`'s task.
    private var events: AsyncStream<Event>.Iterator
    private let eventSink: AsyncStream<Event>.Continuation

    // What the start path made, in order; teardown releases it in reverse.
    /// The Bridge's loop (NIO's singleton group's first), and the web server's (its second).
    private var bridgeLoop: (any EventLoop)?
    private var webLoop: (any EventLoop)?
    private var signalWatcher: DescriptorWatcher?
    private var host: NIOLoopBound<BridgeHost>?
    private var xWatcher: DescriptorWatcher?
    private var udp: PoseAIUDPListener.Bound?
    private var tuio: (any Channel)?
    private var web: Task<Void, any Error>?

    public init(settings: DaemonSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        let (stream, sink) = AsyncStream.makeStream(of: Event.self)
        events = stream.makeAsyncIterator()
        eventSink = sink
    }

    /// Runs the daemon to its end; returns the exit code.
    public func run() async -> Int32 {
        switch await start() {
        case .some(let failure):
            await teardown(reason: "startup failed")
            return failure
        case nil:
            let (why, exitCode) = await serve()
            await teardown(reason: why)
            logger.info("stopped by \(why)")
            return exitCode
        }
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
        signalWatcher = watcher
        if geteuid() == 0 {
            logger.warning("running as root, which touchbridge does not need: it needs only the X display (DISPLAY and XAUTHORITY) and a UDP port above 1023; run it as the desktop's user, so that a flaw reachable from the network cannot act beyond that user's session")
        }

        // NIO's singleton group, which `main` makes two loops and Swift concurrency's executors: the
        // Bridge, the UDP listeners and the output on the first; the web server's channels and tasks on
        // the second, so a burst of WebSocket frames is read beside the Bridge's work, not in its place.
        var loops = MultiThreadedEventLoopGroup.singleton.makeIterator()
        guard let loop = loops.next() else { return ExitStatus.software }
        bridgeLoop = loop
        webLoop = loops.next() ?? loop
        let logger = self.logger
        let settings = self.settings
        let debugXErrorEvery = settings.debugXErrorEvery
        // The backend's devices are made on the loop that owns them, before X: they do not depend on it
        // and outlive a lost display under --reconnect.
        let made = try? await loop.submit { () -> Result<NIOLoopBound<BridgeHost>, BackendFailure> in
            let devices: UInputBackend?
            switch Self.makeDevices(settings) {
            case .success(let (d, line)):
                devices = d
                logger.info("\(line)")
            case .failure(let failure):
                return .failure(failure)
            }
            var core = settings.core
            if devices != nil {
                // Every finger a real touch in touchscreen mode, the native touchpad or hi-res wheels in
                // touchpad mode, whatever mode the page switches to later.
                core.realTouches = true
                core.penTablet = true  // pen mode: the pen tablet (pressure, tilt, eraser)
                core.nativeTouchpad = settings.uinputTouchpad == .native
                core.touchpad.smoothScroll = true
            }
            if core.mode == .pen {
                // Said once, at start: what the pen gives on this backend.
                if devices == nil {
                    logger.notice("pen: XTest has no tablet: the pen is the pointer (button 1 while it touches, button 3 for the barrel button), without pressure, tilt or eraser; --backend uinput makes a pen tablet")
                } else {
                    logger.info("pen: a pen tablet with pressure, tilt and the eraser")
                }
            }
            let bridge = Bridge(configuration: core, monitor: settings.monitor)
            return .success(NIOLoopBound(BridgeHost(loop: loop, bridge: bridge, logger: logger, devices: devices,
                                                    debugXErrorEvery: debugXErrorEvery,
                                                    outputLost: { sink.yield(.outputLost) }), eventLoop: loop))
        }.get()
        switch made {
        case .success(let h)?: host = h
        case .failure(let failure)?:
            logger.critical("\(failure.message)")
            return ExitStatus.display
        case nil: return ExitStatus.software
        }

        switch await connectOutput(firstTime: true) {
        case .connected: break
        case .stopped(let number):
            logger.info("stopped by \(ShutdownSignals.name(number)) while waiting for the X display")
            return ExitStatus.stopped
        case .failed(let code): return code
        }
        if let code = await startListeners(loop: loop) { return code }
        return nil
    }

    /// `--backend uinput` could not make its devices.
    private struct BackendFailure: Error {
        var message: String
    }

    /// The uinput devices when the backend is uinput (or auto finds /dev/uinput writable), with the
    /// line that says which backend runs and why; nil devices: XTest.
    private static func makeDevices(_ s: DaemonSettings) -> Result<(UInputBackend?, String), BackendFailure> {
        let kind = s.uinputTouchpad
        func make() -> Result<UInputBackend, UInputError> {
            do throws(UInputError) {
                let pad = kind == .native ? (width: s.core.touchpad.surface.widthMM, height: s.core.touchpad.surface.heightMM) : nil
                return .success(try UInputBackend(touchscreen: true, touchpadMM: pad, path: s.uinputPath))
            } catch {
                return .failure(error)
            }
        }
        let what = "a touchscreen, a pen tablet, \(kind == .native ? "a native touchpad, " : "")a pointer with hi-res wheels and a keyboard"
        switch s.backend {
        case .xtest:
            return .success((nil, "backend xtest (--backend xtest)"))
        case .uinput:
            switch make() {
            case .success(let d): return .success((d, "backend uinput (--backend uinput): \(what) on \(s.uinputPath)"))
            case .failure(let e):
                return .failure(BackendFailure(message: "--backend uinput: cannot make the input devices: \(e); give the user write access to \(s.uinputPath) (the README's udev rule) or use --backend xtest"))
            }
        case .auto:
            if s.core.multitouch {
                return .success((nil, "backend xtest (--backend auto): --multitouch gives every finger an X pointer, which only XTest does"))
            }
            switch make() {
            case .success(let d): return .success((d, "backend uinput (--backend auto): \(s.uinputPath) is writable: \(what)"))
            case .failure(let e): return .success((nil, "backend xtest (--backend auto): \(s.uinputPath) cannot be used (\(e))"))
            }
        }
    }

    private enum Connection {
        case connected
        case stopped(Int32)
        case failed(Int32)
    }

    /// Opens the X output and attaches it to the Bridge; with `--reconnect`, a display that cannot be
    /// opened is tried again every second until it can, or a signal stops the wait.
    private func connectOutput(firstTime: Bool) async -> Connection {
        guard let host, let loop = bridgeLoop else { return .failed(ExitStatus.software) }
        let settings = self.settings
        let logger = self.logger
        var waitingLogged = false
        while true {
            let opened: Result<(Int32, String), X11Error> = (try? await loop.submit { () -> Result<(Int32, String), X11Error> in
                do throws(X11Error) {
                    let (output, leftovers) = try XOutput.open(name: settings.display, multitouch: settings.core.multitouch)
                    if !leftovers.masters.isEmpty {
                        logger.notice("removed pointers left over by an earlier run: \(leftovers.masters.map { "\"\($0)\"" }.joined(separator: ", "))")
                    }
                    if !leftovers.undone.isEmpty {
                        logger.notice("undid what an earlier run left: released \(leftovers.undone.joined(separator: ", "))")
                    }
                    do throws(X11Error) {
                        try host.value.attach(output)
                    } catch {
                        _ = output.close()
                        throw error
                    }
                    let fd = try output.display.connectionFileDescriptor()
                    let size = try output.display.screenSize()
                    return .success((fd, "\(output.display.name) \(size.width)x\(size.height), onto \(host.value.targetDescription)"))
                } catch {
                    return .failure(error)
                }
            }.get()) ?? .failure(.closed)
            switch opened {
            case .success(let (fd, description)):
                if waitingLogged || !firstTime { logger.notice("X display is back: connected") }
                let mode = settings.core.mode
                logger.info("driving X display \(description) in \(mode.rawValue) mode\(settings.core.multitouch ? " with every finger" : "")")
                if firstTime { logModeSettings() }
                xWatcher = DescriptorWatcher(name: "touchbridge-x", descriptor: fd) {
                    // Waits until the loop has read what is there, so poll does not report it again.
                    try? loop.submit { host.value.xConnectionReadable() }.wait()
                }
                return .connected
            case .failure(let error):
                guard settings.reconnect, case .cannotOpenDisplay(let name) = error else {
                    logger.critical("\(error)")
                    return .failed(ExitStatus.display)
                }
                if !waitingLogged {
                    logger.notice("waiting for X display \"\(name)\" (--reconnect): trying every second")
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
        case .pen:
            break  // said where the backend is known (`start`)
        }
    }

    /// The PoseAI, TUIO and web listeners, in that order: nil when all listen, else the exit code.
    private func startListeners(loop: any EventLoop) async -> Int32? {
        guard let host else { return ExitStatus.software }
        let s = settings
        let logger = self.logger
        let handshake = PoseAIHandshake.reply(version: s.version)
        do {
            udp = try await PoseAIUDPListener.bind(group: loop, host: s.bind, port: s.udpPort, allowList: s.allowList) {
                PoseAIUDPHandler(allowList: s.allowList, rateLimits: s.rateLimits, sink: host.value, handshake: handshake, logger: logger)
            }
        } catch {
            logger.critical("cannot listen for UDP on \(s.bind):\(s.udpPort): \(error)")
            return ExitStatus.listener
        }
        guard let udp else { return ExitStatus.software }
        logger.info("sources outside --allow: refused in userspace; IPv4 ones in the kernel too, kernel filter \(udp.kernelFilter)")
        let port = udp.channel.localAddress?.port ?? s.udpPort
        writeLine("listening poseai-udp \(s.bind):\(port) (phone: send to \(PhoneAddresses.describe(bind: s.bind, port: port, allowList: s.allowList)))")

        if s.tuioPort != 0 {
            do {
                tuio = try await TUIOUDPListener.bind(group: loop, host: s.bind, port: s.tuioPort) {
                    TUIOUDPHandler(allowList: s.allowList, rateLimits: s.rateLimits, sink: host.value, logger: logger)
                }
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
                web = task
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

    /// Waits for what ends the run: a signal, or the X server going away (without `--reconnect`);
    /// with it, a lost server is awaited and driven again. Returns the reason and the exit code.
    private func serve() async -> (String, Int32) {
        while true {
            switch await events.next() {
            case .tick?:
                continue  // a tick of an earlier wait, late
            case .signal(let number)?:
                return (ShutdownSignals.name(number), ExitStatus.stopped)
            case .outputLost?:
                await detachOutput(reason: "X server gone")
                guard settings.reconnect else {
                    logger.critical("lost the connection to the X server; exiting")
                    return ("the X server going away", ExitStatus.display)
                }
                logger.notice("lost the connection to the X server; --reconnect: waiting for it")
                switch await connectOutput(firstTime: false) {
                case .connected: continue
                case .stopped(let number): return (ShutdownSignals.name(number), ExitStatus.stopped)
                case .failed(let code): return ("the X display failing", code)
                }
            case nil:
                return ("the end of the event stream", ExitStatus.software)
            }
        }
    }

    /// The next signal, or `.tick` after `interval` without one.
    private func nextEvent(orTickAfter interval: TimeAmount) async -> Event? {
        let sink = eventSink
        // A timer on the loop, not `Task.sleep` (which would start Dispatch's pool and its 1 Hz monitor).
        let ticker = bridgeLoop?.scheduleTask(in: interval) { sink.yield(.tick) }
        defer { ticker?.cancel() }
        while true {
            switch await events.next() {
            case .outputLost?: continue  // not connected: nothing to lose
            case let event: return event
            }
        }
    }

    private func detachOutput(reason: String) async {
        xWatcher?.stop()
        xWatcher = nil
        guard let host, let loop = bridgeLoop else { return }
        try? await loop.submit { host.value.detach(reason: reason) }.get()
    }

    // MARK: teardown

    /// The one teardown path: the output first (release before anything else), then the listeners in
    /// reverse order, then the loop and the watchers.
    private func teardown(reason: String) async {
        await detachOutput(reason: reason)
        if let web {
            web.cancel()
            _ = try? await web.value
            self.web = nil
        }
        if let tuio {
            try? await tuio.close()
            self.tuio = nil
        }
        if let udp, let loop = bridgeLoop {
            let socket = udp.socket
            if let drops = try? await loop.submit({ KernelSourceFilter.kernelDrops(socket) }).get() {
                logger.info("poseai-udp: \(drops) datagrams dropped by the kernel (sources outside --allow, or the receive queue was full)")
            }
            try? await udp.channel.close()
            self.udp = nil
        }
        if let host, let loop = bridgeLoop {
            // After the output released what they held: the kernel destroys the devices.
            try? await loop.submit { host.value.destroyDevices() }.get()
        }
        host = nil
        bridgeLoop = nil  // the singleton loops are not shut down: the process ends with them
        webLoop = nil
        signalWatcher?.stop()
        signalWatcher = nil
    }
}

/// Writes one line to standard output at once (stdout may be a pipe read by a test or a service manager).
public func writeLine(_ line: String) {
    var text = line
    text.append("\n")
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(1, bytes.baseAddress! + offset, bytes.count - offset)
            if n <= 0 { break }
            offset += n
        }
    }
}
