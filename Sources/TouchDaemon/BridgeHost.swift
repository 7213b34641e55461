import Logging
import NIOCore
import TouchCore
import TouchImpress
import TouchNet
import TouchOutput
import TouchWire

/// The one owner of the `Bridge` while the daemon runs, and the one place its effects are performed: it
/// hands every input to the Bridge and performs what comes back (input actions on the `InputOutput`,
/// overlay actions on the desktop's overlay, the log lines, the timer). It decides nothing, and makes
/// and closes nothing: the lifecycle attaches a desktop and an input output, and closes them after
/// `detach`.
///
/// Lives on one event loop: the UDP and TUIO handlers, the web server's messages, the timer, the
/// desktop's watcher and the lifecycle all call it there, so nothing here needs a lock. Reached from
/// other threads only through `NIOLoopBound`.
public final class BridgeHost: TouchSink {
    let loop: any EventLoop
    let logger: Logger
    /// The people driving (one `Bridge` each; with `people = 1` the one Bridge).
    var people: People
    /// Reused for every input: cleared, never reallocated once warm.
    var effects = BridgeEffects()
    /// The desktop while attached; nil while it is gone (`--reconnect`) or after shutdown.
    var desktop: (any Desktop)?
    /// The input output while attached.
    var input: (any InputOutput)?
    /// The desktop's keymap as last read (nil: not read yet, or unreadable).
    var keymap: Keymap?
    /// Where it was read from, in words (the core keyboard, or the uinput keyboard's X device).
    var keymapSource = ""
    /// Whether it was read from the input output's own keyboard device (then a device coming or going
    /// is no reason to read it again).
    var keymapFromOwnKeyboard = false
    var timer: Scheduled<Void>?
    var timerAt: Instant?
    /// Armed while the view waits to try again a capture that had no picture (`ViewMachine.retryAt`).
    var viewTimer: Scheduled<Void>?
    /// The outputs' and the desktop's failures, one bounded reason per `OutputError.kind`.
    var outputErrorsLogged = DropLog<8>()
    /// Called once when the desktop's connection breaks (its server went away).
    let desktopLost: @Sendable () -> Void
    /// Whether `desktopLost` was called for the desktop attached now (reset by `attach`), so a lost
    /// connection is reported once, not after every input until the lifecycle detaches it.
    var lossReported = false
    /// Test only (`--debug-x-error-every`): after every n-th packet, a request the X server rejects,
    /// to prove that X errors are logged and survived. 0: never.
    let debugXErrorEvery: Int
    var packetsSinceXError = 0
    /// The UDP gates, handed the sender after every step that changes it.
    var senderWatchers = SenderWatchers()
    /// Whether each action is logged (`--log-level trace`): the level is set once, at start, so it is
    /// read once, not per step.
    let traceActions: Bool
    /// The most actions logged a second at trace level; the rest are counted in the next line.
    static let actionLogBurst = 500
    var actionsLogged = DropLog<1>(interval: .seconds(1), burst: BridgeHost.actionLogBurst)
    /// The client of LibreOffice Impress's remote server, when the lifecycle made one: told after every
    /// step whether a page holds the session in presenter mode, and handed the Slides panel's requests.
    private(set) var impress: ImpressLink?
    /// The page that holds the session in presenter mode, told what Impress shows.
    var slidesPage: SourceAddress?
    /// One person's run of actions when several people act in one step (`performByPerson`), kept.
    private var personRun: [OutputAction] = []
    /// How lines reach a page (the web server's, set when it starts): nil, no web page.
    var toPage: ((SourceAddress, [String]) -> Void)?

    /// The live view's decisions (who gets frames, when to capture).
    var view: ViewMachine
    /// The refused view requests' log lines, one bounded reason per `ViewRefusal`.
    var viewRefusalsLogged = DropLog<4>()
    /// The live view's capture failures (one bounded reason).
    var viewErrorsLogged = DropLog<1>()
    /// Sends a frame (a binary WebSocket message) to the page at an address; false when it is not there
    /// (set by the web listener; nil without one).
    public var frameOutlet: ((SourceAddress, [UInt8]) -> Bool)?
    /// Frames and bytes sent since the start (the tests read them in the log at debug level).
    var framesSent: UInt64 = 0, frameBytesSent: UInt64 = 0
    /// The frame's bytes, reused (the header, then the JPEG).
    var frameBuffer: [UInt8] = []

    public convenience init(loop: any EventLoop, bridge: Bridge, logger: Logger, debugXErrorEvery: Int = 0, view: Bool = true,
                            desktopLost: @escaping @Sendable () -> Void) {
        self.init(loop: loop, people: People(bridge), logger: logger, debugXErrorEvery: debugXErrorEvery, view: view,
                  desktopLost: desktopLost)
    }

    public init(loop: any EventLoop, people: People, logger: Logger, debugXErrorEvery: Int = 0, view: Bool = true,
                desktopLost: @escaping @Sendable () -> Void) {
        self.view = ViewMachine(enabled: view, available: false)
        self.loop = loop
        self.people = people
        self.logger = logger
        self.debugXErrorEvery = debugXErrorEvery
        self.desktopLost = desktopLost
        traceActions = logger.logLevel <= .trace
        // Every state-machine transition is logged at debug level; off, recording costs nothing.
        self.people.setTracing(logger.logLevel <= .debug)
    }

    /// What absolute mode maps onto, in words, for the start-up line.
    public var targetDescription: String {
        "\(people.target.map(\.description) ?? "nothing yet") \(people.core.configuration.mapping.fit.rawValue)"
    }

    // MARK: the desktop and the input output

    /// Starts driving `desktop` (just opened) with `input`: the Bridge maps onto the desktop's screen
    /// and makes the overlay if needed. Throws when the screen cannot be read (nothing is attached then).
    public func attach(desktop: any Desktop, input: any InputOutput) throws(OutputError) {
        loop.preconditionInEventLoop()
        let (screen, monitors) = try desktop.screen()
        self.desktop = desktop
        self.input = input
        lossReported = false
        sizeInput(to: screen)
        readKeymap(atStart: true)
        step { people.start(screen: screen, monitors: monitors, at: now(), into: &$0) }
        _ = view.setAvailable(desktop.view != nil)
    }

    /// Reads the desktop's keymap and, when it differs from the one read last, hands it on
    /// (`keymapChanged`). At start, a keymap that cannot be read is said once: keys are then pressed
    /// where a US keyboard has them.
    private func readKeymap(atStart: Bool) {
        guard let desktop, let input else { return }
        do throws(OutputError) {
            // The input output's own keyboard's map once the desktop has the device (X translates its
            // keys by it), else the desktop's default one.
            guard let read = try desktop.keymap(keyboardNamed: input.keyboardName) else {
                if atStart, input.keyboardName != nil {
                    logger.notice("keymap: \(desktop) has none: keys are pressed where a US keyboard has them")
                }
                return
            }
            if keymapSource != read.source { logger.debug("keymap: read from \(read.source)") }
            keymapSource = read.source
            keymapFromOwnKeyboard = read.ofNamedKeyboard
            guard read.keymap != keymap else { return }
            keymap = read.keymap
            keymapChanged(read.keymap)
        } catch {
            logOutput(error)
            if atStart, input.keyboardName != nil {
                logger.warning("\(input.name): cannot read the keyboard map (\(error)): keys are pressed where a US keyboard has them")
            }
        }
    }

    /// The one place where a new keymap of the desktop is known: at start and after every change the
    /// desktop reports (`setxkbmap`, a layout switch), once per actual change. Everything that presses
    /// or refuses keys by the keymap is told here.
    func keymapChanged(_ keymap: Keymap) {
        loop.preconditionInEventLoop()
        input?.setKeymap(keymap)
        // The Bridge refuses chords whose keys the keymap lacks.
        step { people.keymapChanged(keymap, at: now(), into: &$0) }
        let z = keymap.position(of: KeySym(rawValue: 0x7a)).map { "evdev \($0.evdevCode)" } ?? "none"
        logger.info("keymap: \(keymap.count) keysyms from \(keymapSource); z on \(z), shift on \(keymap.shiftKey.map { "evdev \($0)" } ?? "none"), AltGr on \(keymap.levelThreeKey.map { "evdev \($0)" } ?? "none")")
    }

    /// Stops driving the desktop, whatever the reason (`reason` for the log): what the Bridge held is
    /// released through its own actions, then the input output releases whatever it still holds. The
    /// lifecycle closes what it attached afterwards. Nothing when nothing is attached.
    public func detach(reason: String) {
        loop.preconditionInEventLoop()
        guard let desktop, let input else { return }
        let held = input.held
        step { people.shutdown(into: &$0) }
        if view.setAvailable(false) { viewStopped(reason) }
        self.desktop = nil
        self.input = nil
        timer?.cancel()
        timer = nil
        timerAt = nil
        armViewRetry()
        let (releasedNow, errors) = input.releaseAll()
        let released = held + releasedNow.filter { !held.contains($0) }
        if desktop.isLost && released.isEmpty {
            logger.notice("\(reason): \(desktop) is gone, nothing to release on it")
        } else {
            logger.info("\(reason): released \(released.isEmpty ? "nothing (nothing was pressed)" : released.joined(separator: ", "))")
        }
        for error in errors { logger.error("\(reason): \(error)") }
    }

    /// The desktop's descriptor became readable: errors, events, or its server went away.
    public func desktopReadable() {
        loop.preconditionInEventLoop()
        guard let desktop else { return }
        let changes = desktop.readIncoming()
        for error in changes.errors { logOutput(error) }
        if changes.overlayLookChanged { logOverlayLook() }
        // A person's master removed by someone else is forgotten, and made again at their next action.
        if changes.devicesChanged, !desktop.isLost, let input {
            for note in input.devicesChanged() { logger.notice("\(note)") }
        }
        // A device coming or going matters only until the desktop has the input output's keyboard,
        // whose map then counts.
        if changes.keymapChanged || (changes.devicesChanged && input?.keyboardName != nil && !keymapFromOwnKeyboard), !desktop.isLost {
            readKeymap(atStart: false)
        }
        if changes.screenChanged, !desktop.isLost {
            do throws(OutputError) {
                let (screen, monitors) = try desktop.screen()
                sizeInput(to: screen)
                step { people.screenChanged(screen: screen, monitors: monitors, at: now(), into: &$0) }
                // The picture follows the monitor (size, rotation) with the next frame, and the mark its corner.
                if view.viewing, let capture = self.desktop?.view, let target = people.target?.rect {
                    do throws(OutputError) { try capture.showMark(in: target) } catch { logOutput(error) }
                }
                performView(view.damage(at: now()))
            } catch {
                logOutput(error)
            }
        }
        if changes.viewDamaged { performView(view.damage(at: now())) }
        logProtocolErrors()
        checkLost()
        // Reading the screen or the keymap waits for replies, during which Xlib may queue further
        // events (a second layout change): they will not make the descriptor readable again.
        if desktop.hasQueuedEvents, !desktop.isLost { loop.assumeIsolated().execute { self.desktopReadable() } }
    }

    /// A direct touch device spans the desktop's screen pixel for pixel: told the size at attach and at
    /// every change (a new size makes a new device).
    private func sizeInput(to screen: PixelRect) {
        guard let input else { return }
        do throws(OutputError) {
            try input.setScreen(width: screen.width, height: screen.height)
        } catch {
            logger.error("\(input.name): cannot make the touchscreen for a \(screen.width)x\(screen.height) screen: \(error)")
        }
    }

    /// Says how the overlay looks, when there is one.
    private func logOverlayLook() {
        switch desktop?.overlay?.look {
        case .translucent: logger.info("overlay: a compositor is running: translucent drawing")
        case .shaped: logger.info("overlay: no compositor: the overlay is cut to what it draws")
        case nil: break
        }
    }

    // MARK: TouchSink

    public func packet(_ packet: TouchPacket, from source: SourceAddress, via transport: Transport,
                       at now: Instant) -> BridgeReply? {
        loop.preconditionInEventLoop()
        guard desktop != nil else { return nil }
        // `step` written out (the hot path): the same three parts, without the closure.
        effects.clear()
        people.packet(packet, from: source, via: transport, at: now, into: &effects)
        performEffects()
        if debugXErrorEvery > 0 { injectXError() }
        return effects.reply
    }

    public func command(_ command: WebCommand, from source: SourceAddress, at now: Instant) -> BridgeReply? {
        loop.preconditionInEventLoop()
        guard desktop != nil else { return nil }
        step { people.command(command, from: source, at: now, into: &$0) }
        if case .view(let request) = command, effects.reply == nil {
            return viewRequest(request, from: Sender(source, via: .web), at: now)
        }
        return effects.reply
    }

    public func sourceGone(_ source: SourceAddress, at now: Instant) {
        loop.preconditionInEventLoop()
        step { people.sourceGone(source, at: now, into: &$0) }
    }

    /// The gate's listener is on this loop (it calls `packet` here), so the hand-over is a plain call
    /// at the end of the step: no lock, no task on another loop, and no datagram between a change and
    /// its hand-over.
    public func watchSender(_ watcher: any SenderWatcher) {
        loop.preconditionInEventLoop()
        senderWatchers.add(watcher, current: people.sender)
    }

    // MARK: performing

    /// Runs one Bridge step and performs its effects: the actions, the log lines, the timer.
    private func step(_ body: (inout BridgeEffects) -> Void) {
        effects.clear()
        body(&effects)
        performEffects()
    }

    /// Performs the effects of the step just taken: the log lines, the actions, the timer; then hands
    /// the sender over.
    private func performEffects() {
        for event in effects.events { log(event) }
        // A page that became a person is told which, and their colour.
        for join in effects.joined where join.sender.transport == .web { toPage?(join.sender.address, [join.pageText]) }
        // A further person's own devices are made as they come (uinput's need a while to reach their seat).
        if let input, desktop?.isLost == false {
            for join in effects.joined where join.person != .first {
                for error in input.personJoined(join.person) { logOutput(error) }
            }
        }
        if !effects.actions.isEmpty || !effects.people.isEmpty, let desktop, let input {
            if traceActions {
                // Bounded as every line a peer can cause: at most `actionLogBurst` a second, the rest counted.
                for action in effects.actions {
                    if let report = actionsLogged.record(reasonIndex: 0, at: now()) {
                        logger.trace("\(input.name): \(action)\(report.countsSuffix)")
                    }
                }
            }
            // The overlay first (a circle is on screen before the click under it, which passes
            // through), then the input; a drawing that fails does not keep the input back.
            if effects.people.isEmpty {
                perform(effects.actions, desktop: desktop, input: input)
            } else {
                performByPerson(desktop: desktop, input: input)
            }
            // Making a finger's master waits for replies, and Xlib may then have read events (a monitor
            // change) from the connection, which will not become readable again for them.
            if desktop.hasQueuedEvents { loop.assumeIsolated().execute { self.desktopReadable() } }
        }
        arm(effects.deadline)
        if let impress { relaySlides(impress) }
        checkLost()
        // After the output is flushed, and before the next datagram is read on this loop.
        senderWatchers.hand(effects.sender)
        // The view is the holder's only: a new holder, or none, ends the old one's.
        if effects.sender != view.holder, view.holderChanged(to: effects.sender) { viewStopped("the page no longer holds the session") }
        // The pointer moved or clicked: XDamage does not see the cursor, the picture must.
        if view.viewing, !effects.actions.isEmpty { performView(view.damage(at: now())) }
    }

    /// `person`'s actions: the overlay's (in the person's colours), then the input's (person 1's on the
    /// main pointer, a further person's on their own).
    func perform(_ actions: [OutputAction], as person: Person = .first, desktop: any Desktop, input: any InputOutput) {
        if let overlay = desktop.overlay {
            let (errors, lookChanged) = overlay.perform(actions, as: person)
            for error in errors { logOutput(error) }
            if lookChanged { logOverlayLook() }
        }
        let errors = person == .first ? input.perform(actions, typist: desktop) : input.perform(actions, as: person, typist: desktop)
        for error in errors { logOutput(error) }
    }

    /// Several people's actions, each run on its person's pointer and drawn in their colour on the
    /// overlay (`BridgeEffects.people`); a person who leaves has their pointer removed once what they
    /// released is performed.
    private func performByPerson(desktop: any Desktop, input: any InputOutput) {
        var person = Person.first
        var from = 0
        func run(upTo end: Int) {
            guard end > from else { return }
            // One person's run, in a buffer kept across steps (no allocation once warm).
            personRun.removeAll(keepingCapacity: true)
            personRun.append(contentsOf: effects.actions[from..<end])
            from = end
            perform(personRun, as: person, desktop: desktop, input: input)
        }
        for mark in effects.people {
            run(upTo: mark.start)
            if mark.leaves {
                let (removed, errors) = input.personLeft(mark.person)
                for error in errors { logOutput(error) }
                if !removed.isEmpty { logger.info("\(mark.person) left: removed \(removed.joined(separator: ", "))") }
                person = .first
            } else {
                person = mark.person
            }
        }
        run(upTo: effects.actions.count)
    }

    /// LibreOffice Impress: its client looks for it while a page holds the session in presenter mode,
    /// and sends that page's Slides requests; a page that comes to it is told the show.
    private func relaySlides(_ impress: ImpressLink) {
        if let request = effects.slides, !impress.send(request) {
            logger.notice("impress: LibreOffice Impress did not take the Slides panel's \(request) (it went meanwhile)")
        }
        let page = effects.wantsSlides ? effects.sender?.address : nil
        impress.want(page != nil)
        if page != slidesPage {
            slidesPage = page
            if let page { toPage?(page, impress.snapshot()) }
        }
    }

    /// Makes the Impress client (`--impress-pin`'s PIN, Impress's `port`). On the loop, once.
    func startImpress(loop: BridgeEventLoop, port: UInt16, pin: ImpressPIN) {
        loop.preconditionInEventLoop()
        impress = ImpressLink(loop: loop, port: port, pin: pin, logger: logger,
                              slidesByProtocol: { [unowned self] on in people.setSlidesByProtocol(on) },
                              toPage: { [unowned self] lines in if let slidesPage { toPage?(slidesPage, lines) } })
    }

    /// Closes the Impress client (the daemon stops). On the loop.
    func stopImpress() {
        loop.preconditionInEventLoop()
        impress?.stop()
        impress = nil
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
            step { people.timer(at: now(), into: &$0) }
        }
    }

    private func checkLost() {
        guard let desktop, desktop.isLost, !lossReported else { return }
        lossReported = true
        timer?.cancel()
        timer = nil
        timerAt = nil
        desktopLost()
    }

    func now() -> Instant { Instant(nanoseconds: loop.now.uptimeNanoseconds) }
}
