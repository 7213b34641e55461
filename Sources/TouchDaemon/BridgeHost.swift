import Logging
import NIOCore
import TouchCore
import TouchNet
import TouchX11

/// The one owner of the `Bridge` and of the output: it hands every input to the Bridge and performs
/// what comes back (actions on the output, the log lines, the timer). It decides nothing.
///
/// Lives on one event loop: the UDP and TUIO handlers, the web server's messages, the timer, the X
/// connection's watcher and the lifecycle all call it there, so nothing here needs a lock. Reached
/// from other threads only through `NIOLoopBound`.
public final class BridgeHost: TouchSink {
    private let loop: any EventLoop
    private let logger: Logger
    private var bridge: Bridge
    /// Reused for every input: cleared, never reallocated once warm.
    private var effects = BridgeEffects()
    /// The X output while the display is open; nil while it is gone (`--reconnect`) or after shutdown.
    private var output: XOutput?
    /// The backend's input devices when they are not XTest (`--backend uinput`), handed to every output
    /// attached; made and destroyed by the lifecycle, so they outlive a lost display.
    private let devices: (any InputDevices)?
    /// The desktop's keymap as last read (nil: not read yet, or unreadable).
    private var keymap: Keymap?
    /// Where it was read from, in words (the core keyboard, or the uinput keyboard's X device).
    private var keymapSource = ""
    /// Whether it was read from the uinput keyboard's own X device (then a device coming or going is
    /// no reason to read it again).
    private var keymapFromOwnKeyboard = false
    private var timer: Scheduled<Void>?
    private var timerAt: Instant?
    private var xErrorsLogged = DropLog<8>()
    /// The input devices' failures (`--backend uinput`): one reason, bounded like the X errors.
    private var deviceErrorsLogged = DropLog<1>()
    /// Called once when the output's connection breaks (the X server went away).
    private let outputLost: @Sendable () -> Void
    /// Whether `outputLost` was called for the output attached now (reset by `attach`), so a lost
    /// connection is reported once, not after every input until the lifecycle detaches it.
    private var lossReported = false
    /// Test only (`--debug-x-error-every`): after every n-th packet, a request the X server rejects,
    /// to prove that X errors are logged and survived. 0: never.
    private let debugXErrorEvery: Int
    private var packetsSinceXError = 0

    public init(loop: any EventLoop, bridge: Bridge, logger: Logger, devices: (any InputDevices)? = nil,
                debugXErrorEvery: Int = 0, outputLost: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.devices = devices
        self.bridge = bridge
        self.logger = logger
        self.debugXErrorEvery = debugXErrorEvery
        self.outputLost = outputLost
        // Every state-machine transition is logged at debug level; off, recording costs nothing.
        self.bridge.setTracing(logger.logLevel <= .debug)
    }

    /// What absolute mode maps onto, in words, for the start-up line.
    public var targetDescription: String {
        "\(bridge.target.map(\.description) ?? "nothing yet") \(bridge.core.configuration.mapping.fit.rawValue)"
    }

    // MARK: the output

    /// Starts driving `output` (just opened): the Bridge maps onto its screen and makes the overlay if
    /// needed. Throws when the screen cannot be read.
    public func attach(_ output: XOutput) throws(X11Error) {
        loop.preconditionInEventLoop()
        let (screen, monitors) = try output.screen()
        self.output = output
        lossReported = false
        output.devices = devices
        sizeDevices(to: screen)
        readKeymap(from: output, atStart: true)
        step { bridge.start(screen: screen, monitors: monitors, at: now(), into: &$0) }
    }

    /// Reads the desktop's keymap and, when it differs from the one read last, hands it on
    /// (`keymapChanged`). At start, a keymap that cannot be read is said once: keys are then pressed
    /// where a US keyboard has them.
    private func readKeymap(from output: XOutput, atStart: Bool) {
        do {
            // The uinput keyboard's own map once X has the device (X translates its keys by it), else
            // the core keyboard's.
            let (read, device) = try output.keymap(keyboardNamed: devices?.keyboardName)
            let source = device.map { "X device \($0.id) \"\($0.name)\"" } ?? "the core keyboard"
            if keymapSource != source { logger.debug("keymap: read from \(source)") }
            keymapSource = source
            keymapFromOwnKeyboard = device != nil
            guard read != keymap else { return }
            keymap = read
            keymapChanged(read)
        } catch {
            logX11(error)
            if atStart, let devices {
                logger.warning("\(devices.name): cannot read the keyboard map (\(error)): keys are pressed where a US keyboard has them")
            }
        }
    }

    /// The one place where a new keymap of the desktop is known: at start and after every change the
    /// desktop reports (`setxkbmap`, a layout switch), once per actual change. Everything that presses
    /// or refuses keys by the keymap is told here.
    func keymapChanged(_ keymap: Keymap) {
        loop.preconditionInEventLoop()
        devices?.setKeymap(keymap)
        // The Bridge refuses chords whose keys the keymap lacks.
        step { bridge.keymapChanged(keymap, at: now(), into: &$0) }
        let z = keymap.position(of: KeySym(rawValue: 0x7a)).map { "evdev \($0.evdevCode)" } ?? "none"
        logger.info("keymap: \(keymap.count) keysyms from \(keymapSource); z on \(z), shift on \(keymap.shiftKey.map { "evdev \($0)" } ?? "none"), AltGr on \(keymap.levelThreeKey.map { "evdev \($0)" } ?? "none")")
    }

    /// Stops driving the output, whatever the reason (`reason` for the log): what the Bridge held is
    /// released, then the output releases what it pressed, removes what it made and closes.
    public func detach(reason: String) {
        loop.preconditionInEventLoop()
        let held = output?.held ?? []
        step { bridge.shutdown(into: &$0) }
        guard let output else { return }
        self.output = nil
        let lost = output.isLost
        let closing = output.close()
        let released = held + closing.released.filter { !held.contains($0) }
        if lost {
            logger.notice("\(reason): the X server is gone, nothing to release on it")
        } else {
            logger.info("\(reason): released \(released.isEmpty ? "nothing (nothing was pressed)" : released.joined(separator: ", "))")
            if !closing.removedMasters.isEmpty {
                logger.info("\(reason): removed \(closing.removedMasters.map { "\"\($0)\"" }.joined(separator: ", "))")
            }
        }
        for error in closing.errors { logger.error("\(reason): \(error)") }
        for error in closing.deviceErrors { logger.error("\(reason): \(error)") }
    }

    /// Destroys the backend's devices (teardown, after `detach` released what they held).
    public func destroyDevices() {
        loop.preconditionInEventLoop()
        devices?.close()
    }

    /// The X connection's descriptor became readable: errors, events, or the server went away.
    public func xConnectionReadable() {
        loop.preconditionInEventLoop()
        guard let output else { return }
        let (changed, report) = output.readIncoming()
        performed(report)
        // A device coming or going matters only until X has the uinput keyboard, whose map then counts.
        if report.keymapChanged || (report.devicesChanged && devices != nil && !keymapFromOwnKeyboard), !output.isLost {
            readKeymap(from: output, atStart: false)
        }
        if changed, !output.isLost {
            do {
                let (screen, monitors) = try output.screen()
                sizeDevices(to: screen)
                step { bridge.screenChanged(screen: screen, monitors: monitors, at: now(), into: &$0) }
            } catch {
                logX11(error)
            }
        }
        logProtocolErrors()
        checkLost()
        // Reading the screen or the keymap waits for replies, during which Xlib may queue further
        // events (a second layout change): they will not make the descriptor readable again.
        if output.hasQueuedEvents, !output.isLost { loop.assumeIsolated().execute { self.xConnectionReadable() } }
    }

    /// A direct touch device spans the X screen pixel for pixel: told the size at attach and at every
    /// change (a new size makes a new device).
    private func sizeDevices(to screen: PixelRect) {
        guard let devices else { return }
        do {
            try devices.setScreen(width: screen.width, height: screen.height)
        } catch {
            logger.error("\(devices.name): cannot make the touchscreen for a \(screen.width)x\(screen.height) screen: \(error)")
        }
    }

    /// Says how the overlay looks, when there is one.
    private func logOverlayLook() {
        switch output?.overlayLook {
        case .translucent: logger.info("overlay: a compositor is running: translucent drawing")
        case .shaped: logger.info("overlay: no compositor: the overlay is cut to what it draws")
        case nil: break
        }
    }

    // MARK: TouchSink

    public func packet(_ packet: TouchPacket, from source: SourceAddress, via transport: Transport,
                       at now: Instant) -> BridgeReply? {
        loop.preconditionInEventLoop()
        guard output != nil else { return nil }
        step { bridge.packet(packet, from: source, via: transport, at: now, into: &$0) }
        if debugXErrorEvery > 0 { injectXError() }
        return effects.reply
    }

    public func command(_ command: WebCommand, from source: SourceAddress, at now: Instant) -> BridgeReply? {
        loop.preconditionInEventLoop()
        guard output != nil else { return nil }
        step { bridge.command(command, from: source, at: now, into: &$0) }
        return effects.reply
    }

    public func sourceGone(_ source: SourceAddress, at now: Instant) {
        loop.preconditionInEventLoop()
        step { bridge.sourceGone(source, at: now, into: &$0) }
    }

    public func isSender(_ source: SourceAddress) -> Bool { bridge.isSender(source) }

    // MARK: performing

    /// Runs one Bridge step and performs its effects: the actions, the log lines, the timer.
    private func step(_ body: (inout BridgeEffects) -> Void) {
        effects.clear()
        body(&effects)
        for event in effects.events { log(event) }
        if !effects.actions.isEmpty, let output {
            if logger.logLevel <= .trace {
                for action in effects.actions { logger.trace("x11: \(action)") }
            }
            performed(output.perform(effects.actions))
            // Making a finger's master waits for replies, and Xlib may then have read events (a monitor
            // change) from the connection, which will not become readable again for them.
            if output.hasQueuedEvents { loop.assumeIsolated().execute { self.xConnectionReadable() } }
        }
        arm(effects.deadline)
        checkLost()
    }

    private func performed(_ report: XOutput.Report) {
        for error in report.errors { logX11(error) }
        for error in report.deviceErrors {
            if let counts = deviceErrorsLogged.record(reasonIndex: 0, at: now()) { logger.error("\(error)\(counts.countsSuffix)") }
        }
        if report.overlayLookChanged { logOverlayLook() }
    }

    /// Keeps one timer armed while the Bridge has a deadline and none when it has not: an idle daemon
    /// has no timer at all. While packets stream, the armed timer fires early, does nothing, and is armed
    /// again for the new deadline (one wake-up per `idleRelease`, not per packet).
    private func arm(_ deadline: Instant?) {
        guard let deadline else {
            timer?.cancel()
            timer = nil
            timerAt = nil
            return
        }
        if let armed = timerAt, armed <= deadline { return }
        timer?.cancel()
        timerAt = deadline
        timer = loop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(deadline.nanoseconds)) { [self] in
            timerAt = nil
            timer = nil
            step { bridge.timer(at: now(), into: &$0) }
        }
    }

    private func checkLost() {
        guard let output, output.isLost, !lossReported else { return }
        lossReported = true
        timer?.cancel()
        timer = nil
        timerAt = nil
        outputLost()
    }

    // MARK: the log

    /// Words one event of the Bridge.
    private func log(_ event: BridgeEvent) {
        switch event {
        case .senderConnected(let source, let transport):
            logger.info("phone connected from \(source)\(transport == .poseAI ? "" : " (\(transport))")")
        case .refusedBusy(let source, let transport, let report):
            logger.notice("ignoring \(source) (\(transport)): another phone is connected (it may take over after 10 s of silence)\(report.countsSuffix)")
        case .senderSilent(let interval):
            logger.info("phone silent for \(interval): released everything")
        case .sourceGone(let source):
            logger.info("web page from \(source) gone: released everything")
        case .modeChanged(let kind, let source):
            logger.info("web page: \(kind.rawValue) mode (from \(source))")
        case .surface(let width, let height, let surface):
            logger.info("web page surface \(Int(width))x\(Int(height)) CSS px: \(surface)")
        case .targetChanged(let target):
            logger.info("monitors changed: mapping onto \(target)")
        case .monitorMissing(let choice, let names, let target):
            logger.warning("no monitor named \"\(choice)\" (monitors: \(names.isEmpty ? "none" : names.joined(separator: ", "))); using \(target) until it appears")
        case .transition(let t):
            logger.debug("\(t)")
        case .chordRefused(let keysym, let report):
            logger.notice("refused a key chord: no key on the desktop's keyboard layout makes \(KeyNames.name(of: keysym)) (nothing was pressed)\(report.countsSuffix)")
        case .smoothing(let r):
            if r.engaged {
                logger.debug("smoothing engaged: packets arrive in bursts (jitter \(r.jitter) over a \(r.period) send period); moves play out \(r.delay) behind on a 120 Hz tick")
            } else {
                logger.debug("smoothing off again: packets arrive evenly (jitter \(r.jitter) over a \(r.period) send period)")
            }
        }
    }

    private func logX11(_ error: X11Error) {
        guard let report = xErrorsLogged.record(reasonIndex: error.kindIndex, at: now()) else { return }
        logger.error("X11: \(error)\(report.countsSuffix)")
    }

    private func logProtocolErrors() {
        guard let output else { return }
        let (errors, dropped) = output.takeErrors()
        for error in errors { logX11(.protocolError(error)) }
        if dropped > 0 { logger.error("\(dropped) more X errors not shown") }
    }

    private func injectXError() {
        packetsSinceXError += 1
        guard packetsSinceXError >= debugXErrorEvery, let output else { return }
        packetsSinceXError = 0
        do {
            try output.display.fakeRejectedRequest()
            try output.display.flush()
        } catch {
            logX11(error)
        }
    }

    private func now() -> Instant { Instant(nanoseconds: NIODeadline.now().uptimeNanoseconds) }
}
