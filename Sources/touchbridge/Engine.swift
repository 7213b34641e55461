import Logging
import NIOCore
import TouchCore
import TouchNet
import TouchX11

/// The single owner of the core state and of the X connection. Lives on one event loop: the UDP
/// handler, the watchdog timer, the X-connection watcher and shutdown all run there, so nothing
/// here needs a lock. Reached from other threads only through `NIOLoopBound`.
final class Engine: PoseAIPacketSink {
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

    init(loop: any EventLoop, display: XDisplay, configuration: BridgeCore.Configuration, logger: Logger) {
        self.loop = loop
        self.logger = logger
        self.core = BridgeCore(configuration: configuration)
        self.injector = InputInjector(display: display)
        actions.reserveCapacity(64)
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
        guard !actions.isEmpty else { return }
        if logger.logLevel <= .trace {
            for action in actions { logger.trace("x11: \(action)") }
        }
        do {
            try injector.perform(actions)
        } catch {
            logX11(error)
        }
    }

    // MARK: the silence watchdog

    /// Keeps one timer armed while the core has a deadline and none when it has not: an idle
    /// daemon has no timer at all. While packets stream, the armed timer fires early, does nothing,
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
            let held = injector.holdsAnything
            apply { core.handleTimer(at: now, into: &$0) }
            if held && !injector.holdsAnything {
                logger.info("phone silent for \(core.configuration.idleRelease): released everything")
            }
            armWatchdog()
        }
    }

    // MARK: the X connection

    /// The X connection's descriptor became readable: errors, events, or the server went away.
    func xConnectionReadable() {
        guard !isShutDown else { return }
        do {
            try injector.display.drainIncoming()
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
        logger.error("X11: \(error)\(report.suppressed > 0 ? " (and \(report.suppressed) more since the last report)" : "")")
    }

    // MARK: shutdown

    /// Releases every button and key before anything else, then closes the X connection.
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
        injector.display.close()
    }
}
