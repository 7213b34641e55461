import Logging
import NIOCore
import TouchCore
import TouchNet
import TouchWeb
import TouchUInput
import TouchX11

/// The single owner of the core state and of the X connection. Lives on one event loop: the UDP
/// handler, the watchdog timer, the X-connection watcher and shutdown all run there, so nothing
/// here needs a lock. Reached from other threads only through `NIOLoopBound`.
final class Engine: PoseAIPacketSink, WebClientSink {
    private let loop: any EventLoop
    private let logger: Logger
    private var core: BridgeCore
    private var session = SenderSession()
    private let injector: InputInjector
    /// Reused for every packet: cleared, never reallocated once warm.
    private var actions: [OutputAction] = []
    private var watchdog: Scheduled<Void>?
    private var watchdogAt: Instant?
    private var xErrorsLogged = DropLog<8>()
    private(set) var isShutDown = false
    /// Test only (`--debug-x-error-every`): after every n-th applied packet, a request the X server
    /// rejects, to prove that X errors are logged and survived. 0: never.
    var debugXErrorEvery = 0
    private var appliedSinceXError = 0
    /// What `--monitor` asked for; resolved again whenever the monitors change.
    private let monitorChoice: MonitorChoice
    /// The rectangle absolute mode maps onto now (a monitor or the whole screen).
    private(set) var target: MonitorChoice.Target
    /// The overlay window (`--show-touches`, presenter mode's laser), over `target`; destroyed in
    /// `shutdown`.
    private let overlay: Overlay?
    /// `--backend uinput`: input goes to kernel devices instead of XTest (typed text stays on X).
    private let uinput: UInputBackend?

    /// The configuration's target is replaced by what `monitorChoice` resolves to on `display` now.
    init(
        loop: any EventLoop, display: XDisplay, configuration: BridgeCore.Configuration,
        monitorChoice: MonitorChoice, fingers: FingerPointers?, logger: Logger, uinput: UInputBackend? = nil
    ) throws(X11Error) {
        // The last step that can fail comes first, so nothing made here is left behind by a throw.
        let target = try Self.resolveTarget(monitorChoice, on: display)
        let needsOverlay = configuration.showTouches || configuration.mode == .presenter
        self.overlay = needsOverlay ? try Overlay(display: display, rect: target.rect) : nil
        self.loop = loop
        self.logger = logger
        self.monitorChoice = monitorChoice
        self.target = target
        var configuration = configuration
        configuration.mapping.target = target.rect
        self.core = BridgeCore(configuration: configuration)
        // Every state-machine transition is logged at debug level; off, recording costs nothing.
        core.setTracing(logger.logLevel <= .debug)
        self.injector = InputInjector(display: display, fingers: fingers)
        self.uinput = uinput
        actions.reserveCapacity(64)
        if target.fellBack { warnMissingMonitor(on: display) }
    }

    /// What absolute mode maps onto, in words, for the start-up line.
    var targetDescription: String {
        "\(target) \(core.configuration.mapping.fit.rawValue)"
    }

    private static func resolveTarget(_ choice: MonitorChoice, on display: XDisplay) throws(X11Error) -> MonitorChoice.Target {
        let size = try display.screenSize()
        let monitors = try display.monitors()
        return choice.resolve(monitors: monitors, screen: PixelRect(x: 0, y: 0, width: size.width, height: size.height))
    }

    private func warnMissingMonitor(on display: XDisplay) {
        let names = ((try? display.monitors()) ?? []).map(\.name).joined(separator: ", ")
        logger.warning("no monitor named \"\(monitorChoice)\" (monitors: \(names.isEmpty ? "none" : names)); using \(target) until it appears")
    }

    /// The screen or its monitors may have changed: resolve `--monitor` again and map onto the result.
    private func screenChanged() {
        do {
            let display = injector.display
            let new = try Self.resolveTarget(monitorChoice, on: display)
            guard new != target else { return }
            let wasFallback = target.fellBack
            target = new
            core.setTarget(new.rect)
            try overlay?.setRect(new.rect)
            if new.fellBack && !wasFallback {
                warnMissingMonitor(on: display)
            } else {
                logger.info("monitors changed: mapping onto \(new)")
            }
        } catch {
            logX11(error)
        }
    }

    // MARK: packets

    func receive(_ packet: TouchPacket, from source: SourceAddress, at now: Instant) -> PacketVerdict {
        loop.preconditionInEventLoop()
        guard !isShutDown else { return .applied }
        switch session.admit(source, at: now) {
        case .busy(let firstRefusal):
            if firstRefusal {
                logger.notice("ignoring \(source): another phone is connected (it may take over after 10 s of silence)")
            }
            return .refusedBusy
        case .accepted(let isNewSender):
            if isNewSender {
                // A new sender: whatever the previous one held is released first.
                apply { core.releaseAll(into: &$0) }
                logger.info("phone connected from \(source)")
            }
        }
        if packet.isHello { return .answerHello }
        apply { core.handle(packet, at: now, into: &$0) }
        armWatchdog()
        if debugXErrorEvery > 0 {
            appliedSinceXError += 1
            if appliedSinceXError >= debugXErrorEvery {
                appliedSinceXError = 0
                do {
                    try injector.display.fakeRejectedRequest()
                    try injector.display.flush()
                } catch {
                    logX11(error)
                }
            }
        }
        return .applied
    }

    /// Runs one core step and performs what it returned.
    private func apply(_ step: (inout [OutputAction]) -> Void) {
        actions.removeAll(keepingCapacity: true)
        step(&actions)
        if core.trace.isEnabled && (!core.trace.records.isEmpty || core.trace.dropped > 0) {
            for t in core.trace.records { logger.debug("\(t)") }
            if core.trace.dropped > 0 { logger.debug("\(core.trace.dropped) more transitions not shown") }
            core.clearTrace()
        }
        guard !actions.isEmpty else { return }
        if logger.logLevel <= .trace {
            for action in actions { logger.trace("x11: \(action)") }
        }
        // Drawing first: a circle is on screen before the click under it (which passes through). A
        // drawing that fails must not keep the input from X.
        if let overlay {
            let before = overlay.composited
            do { try overlay.perform(actions) } catch { logX11(error) }
            if overlay.composited != before { logOverlayMode() }
        }
        if let uinput {
            do { try uinput.perform(actions) } catch { logger.error("uinput: \(error)") }
        } else {
            do {
                try injector.perform(actions)
            } catch {
                logX11(error)
            }
        }
        // Making a finger's master waits for replies, and Xlib may then have read events (a monitor
        // change) from the connection, which will not become readable again for them.
        if injector.display.hasQueuedEvents() { xConnectionReadable() }
    }

    // MARK: the web page

    /// CSS pixels to millimetres on a phone: about 160 CSS pixels per inch (e.g. 390 px ≈ 62 mm).
    static let millimetresPerCSSPixel = 25.4 / 160

    func webCommand(_ command: WebCommand, from source: SourceAddress, at now: Instant) -> String? {
        loop.preconditionInEventLoop()
        guard !isShutDown else { return nil }
        switch session.admit(source, at: now) {
        case .busy:
            return "busy"
        case .accepted(let isNewSender):
            if isNewSender {
                apply { core.releaseAll(into: &$0) }
                logger.info("phone connected from \(source) (web page)")
            }
        }
        switch command {
        case .surface(let width, let height):
            let surface = SurfaceSize(widthMM: width * Self.millimetresPerCSSPixel, heightMM: height * Self.millimetresPerCSSPixel)
            core.setSurface(surface)
            logger.info("web page surface \(Int(width))x\(Int(height)) CSS px: \(surface)")
            return "mode \(core.configuration.mode.rawValue)"
        case .click(let button):
            apply { $0.append(.button(button, pressed: true)); $0.append(.button(button, pressed: false)) }
        case .text(let text):
            for scalar in text.unicodeScalars {
                typeKeysym(Self.keysym(for: scalar))
            }
        case .key(let keysym):
            typeKeysym(keysym)
        case .mode(let name):
            guard let kind = OutputModeKind(rawValue: name) else {
                return "error \(name) mode is not available in this build"
            }
            apply { core.setMode(kind, into: &$0) }
            logger.info("web page: \(name) mode")
            armWatchdog()
            return "mode \(kind.rawValue)"
        case .release:
            apply { core.releaseAll(into: &$0) }
            armWatchdog()
        }
        return nil
    }

    func webDisconnected(_ source: SourceAddress, at now: Instant) {
        loop.preconditionInEventLoop()
        guard !isShutDown, session.sender == source else { return }
        apply { core.releaseAll(into: &$0) }
        session.end()
        armWatchdog()
        logger.info("web page from \(source) gone: released everything")
    }

    /// The keysym of a character: Latin-1 is its own keysym; any other code point is 0x01000000 + it.
    static func keysym(for scalar: Unicode.Scalar) -> KeySym {
        switch scalar.value {
        case 0x0A, 0x0D: return .returnKey
        case 0x09: return .tab
        case 0x20...0x7E, 0xA0...0xFF: return KeySym(rawValue: scalar.value)
        default: return KeySym(rawValue: 0x0100_0000 + scalar.value)
        }
    }

    private func typeKeysym(_ keysym: KeySym) {
        do {
            try injector.type(keysym)
        } catch {
            logX11(error)
        }
    }

    /// Says how the overlay looks: translucent with a compositor, cut to shape without one.
    func logOverlayMode() {
        guard let overlay else { return }
        logger.info(overlay.composited
            ? "overlay: a compositor is running: translucent drawing"
            : "overlay: no compositor: the overlay is cut to what it draws")
    }

    // MARK: the core's timer (silence watchdog, tap and drag timeouts, kinetic scroll ticks)

    /// Keeps one timer armed while the core has a deadline and none when it has not: an idle
    /// daemon has no timer at all (a coasting kinetic scroll asks for a tick every 16 ms, only while it
    /// coasts). While packets stream, the armed timer fires early, does nothing,
    /// and is armed again for the new deadline (one wake-up per `idleRelease`, not per packet).
    private func armWatchdog() {
        guard let deadline = core.nextDeadline else {
            watchdog?.cancel()
            watchdog = nil
            watchdogAt = nil
            return
        }
        if let armed = watchdogAt, armed <= deadline { return }
        watchdog?.cancel()
        watchdogAt = deadline
        watchdog = loop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(deadline.nanoseconds)) { [self] in
            watchdogAt = nil
            watchdog = nil
            let now = Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds)
            let hadContacts = core.hasContacts
            apply { core.handleTimer(at: now, into: &$0) }
            if hadContacts && !core.hasContacts {
                logger.info("phone silent for \(core.configuration.idleRelease): released everything")
            }
            armWatchdog()
        }
    }

    // MARK: the X connection

    /// Handles what Xlib read while the engine was being made (start-up queries wait for replies, and
    /// events that came meanwhile sit in Xlib's queue). Call once, on the loop, after the X connection's
    /// watcher is set up.
    func started() {
        if injector.display.hasQueuedEvents() { xConnectionReadable() }
    }

    /// The X connection's descriptor became readable: errors, events, or the server went away.
    func xConnectionReadable() {
        guard !isShutDown else { return }
        do {
            // Reading the monitors waits for replies, during which Xlib may queue further events (a
            // `--delmonitor` then `--setmonitor` comes as two): go on until none is left.
            while true {
                let incoming = try injector.display.drainIncoming()
                // A window mapped or raised above the overlay: the overlay goes back on top.
                if incoming.windowsRestacked { try overlay?.raiseIfShown() }
                guard incoming.screenChanged else { break }
                screenChanged()
                if !injector.display.hasQueuedEvents() { break }
            }
        } catch {
            logX11(error)
        }
        let (errors, dropped) = injector.display.takeErrors()
        for error in errors { logX11(.protocolError(error)) }
        if dropped > 0 { logger.error("\(dropped) more X errors not shown") }
    }

    private func logX11(_ error: X11Error) {
        let now = Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds)
        guard let report = xErrorsLogged.record(reasonIndex: error.kindIndex, at: now) else { return }
        logger.error("X11: \(error)\(report.countsSuffix)")
    }

    // MARK: shutdown

    /// Releases every button and key before anything else, then removes the extra fingers' masters,
    /// then closes the X connection.
    func shutdown(reason: String) {
        guard !isShutDown else { return }
        isShutDown = true
        watchdog?.cancel()
        watchdog = nil
        apply { core.releaseAll(into: &$0) }
        do {
            let released = try injector.releaseAll()
            logger.info("\(reason): released \(released.isEmpty ? "nothing (nothing was pressed)" : released.joined(separator: ", "))")
        } catch {
            logger.error("\(reason): could not release: \(error)")
        }
        if let uinput {
            do {
                let released = try uinput.releaseAll()
                if !released.isEmpty { logger.info("\(reason): uinput released \(released.joined(separator: ", "))") }
            } catch {
                logger.error("\(reason): could not release the uinput devices: \(error)")
            }
            uinput.close()
        }
        if let fingers = injector.fingers {
            do {
                let removed = try fingers.removeAll()
                if !removed.isEmpty { logger.info("\(reason): removed \(removed.map { "\"\($0)\"" }.joined(separator: ", "))") }
            } catch {
                logger.error("\(reason): could not remove the finger pointers: \(error)")
            }
        }
        overlay?.destroy()
        injector.display.close()
    }
}
