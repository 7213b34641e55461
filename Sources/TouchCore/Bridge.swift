// The one place that decides: every input of the daemon in, every effect out.

/// The daemon's decisions, pure: standard library only, time passed in.
///
/// Inputs: a packet from a source, a web command, a source gone, the timer, the screen or monitors
/// changed, start and shutdown. Effects out (`BridgeEffects`): input actions, overlay actions (the
/// overlay window itself included: `.overlay(.cover(rect))` and `.overlay(.remove)`), a reply, log
/// events, the next deadline and the sender after the input.
///
/// It holds the sender session (`SenderSession`: one phone at a time, takeover after silence), the
/// touch pipeline (`TouchPipeline`: tracker, watchdog, the active mode's machine), what `--monitor` asked
/// for and where it lands now, and the unit conversions of the web page (CSS pixels to millimetres,
/// characters to keysyms).
///
/// ```
///  packet(s, t) ─► session.admit((s, t)) ─ busy ──► reply busy (web) / nothing (UDP); event refusedBusy (bounded)
///                    │ accepted, new sender ─► release what the old sender held; event senderConnected
///                    ▼
///               hello? ─► reply handshake ;  else core.handle ─► actions; activity? ─► session.renew
///  ping N ─► reply pong N (no admission: not a sign of life)
///  command(s) ─► session.admit((s, web)) ─► click | text | key | mode (release, switch machine, overlay)
///                                    | surface | presenter button | tune (this sender's touchpad settings)
///                                    ─► activity? ─► session.renew
///  new sender, or the sender gone ─► its mode and tuning undone (the configured ones)
///  sourceGone(s == sender) ─► release all, session ends
///  timer ─► core.handleTimer (taps, kinetic, long press, fades; silence ⇒ release all)
///  screenChanged ─► resolve --monitor ─► core.setTarget, overlay cover(rect)
///  shutdown ─► release all, overlay remove
/// ```
public struct Bridge: Sendable {
    /// CSS pixels to millimetres on a phone: about 160 CSS pixels per inch (e.g. 390 px ≈ 62 mm).
    public static let millimetresPerCSSPixel = 25.4 / 160
    /// The least time between two log lines of one kind that a peer can cause: 10 s.
    public static let logInterval = Interval.seconds(10)
    /// The lines of ordinary use that a peer can still repeat at will (a sender connected or gone or
    /// silent, the page's mode and surface): at most `sessionLogBurst` of one kind per 10 s, the rest
    /// counted, so that a few switches are each logged and a flood of them is one line in 10 s.
    public static let sessionLogInterval = Interval.seconds(10)
    /// How many lines of one kind of ordinary use `sessionLogInterval` may hold.
    public static let sessionLogBurst = 10
    /// The most transitions logged a second (debug level), the rest counted.
    public static let transitionLogBurst = 100

    /// The touch pipeline (for tests and the start-up line).
    public internal(set) var core: TouchPipeline
    var session: SenderSession
    var busyLog = DropLog<1>(interval: Bridge.logInterval)
    var connectedLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    var goneLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    /// Silence comes at most once per `idleRelease` after a finger: up to 10 lines a second, the rest counted.
    var silentLog = DropLog<1>(interval: .seconds(1), burst: Bridge.sessionLogBurst)
    var modeLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    var restoredLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    var surfaceLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    var transitionLog = DropLog<1>(interval: .seconds(1), burst: Bridge.transitionLogBurst)
    /// What `--monitor` asked for, and where it lands now (nil until the shell reports the screen).
    public let monitorChoice: MonitorChoice
    public private(set) var target: MonitorChoice.Target?
    /// Whether the overlay window exists (as the Bridge asked the shell).
    public private(set) var overlayShown = false
    var stopped = false
    /// Whether the presentation program takes the Slides panel's buttons by protocol (the shell says so
    /// once LibreOffice Impress is paired, and no more once it is gone): Next, Previous, Start and End
    /// become `BridgeEffects.slides`, not keys.
    public private(set) var slidesByProtocol = false
    /// The touchpad settings of the configuration, restored when the page that tuned them goes.
    let configuredTouchpad: TouchpadSettings
    /// Whether the sender tuned the touchpad (`WebCommand.tune`).
    var tuned = false
    /// The mode of the configuration, back when the page that chose another no longer holds the session.
    let configuredMode: TouchMode
    /// What the output holds and shows because of the sender: every action goes through it, every end
    /// path ends in its `release`.
    public internal(set) var held = HeldRecord()
    /// The desktop's keymap, when the shell knows it: a chord with a key it lacks is refused.
    public internal(set) var keymap: Keymap?
    var chordLog = DropLog<1>(interval: Bridge.logInterval)
    /// The input being handled: where its actions start in the effects, how far `held` has seen them,
    /// its time, and whether a refused chord is answered (a web command).
    var batchObserved = 0
    var batchTime = Instant(nanoseconds: 0)
    var answerRefusal = false
    var refusedInBatch: KeySym?
    /// Whether that refusal was a character to type (`.cannotType`), not a chord.
    var refusedTyping = false
    /// `core.releases` when `held` last released after it.
    var coreReleasesSeen = 0

    public init(configuration: TouchPipeline.Configuration, monitor: MonitorChoice = .all,
                takeoverSilence: Interval = .seconds(10)) {
        core = TouchPipeline(configuration: configuration)
        configuredTouchpad = configuration.touchpad
        configuredMode = configuration.mode
        session = SenderSession(takeoverSilence: takeoverSilence)
        monitorChoice = monitor
    }

    /// A Bridge for an output that can do `capabilities`: the configuration adopts them
    /// (`TouchPipeline.Configuration.adopting`).
    public init(configuration: TouchPipeline.Configuration, capabilities: OutputCapabilities, monitor: MonitorChoice = .all,
                takeoverSilence: Interval = .seconds(10)) {
        self.init(configuration: configuration.adopting(capabilities), monitor: monitor, takeoverSilence: takeoverSilence)
    }

    /// The current sender (address, port and transport), if any.
    public var sender: Sender? { session.sender }

    /// Whether `source` is the current sender.
    public func isSender(_ source: Sender) -> Bool { session.sender == source }

    /// When the current sender last showed activity (`SenderSession.lastActive`).
    public var senderLastActive: Instant? { session.lastActive }

    /// How long the sender must show no activity before another source may take over.
    public var takeoverSilence: Interval { session.takeoverSilence }
    /// The presentation program takes the slides by protocol (`true`: LibreOffice Impress paired) or no
    /// more (`false`: it went, or the shell let it go). No effects: the next command is routed by it.
    public mutating func setSlidesByProtocol(_ on: Bool) { slidesByProtocol = on }

    /// Whether a page holds the session in presenter mode (`BridgeEffects.wantsSlides`).
    public var wantsSlides: Bool { !stopped && session.sender?.transport == .web && core.configuration.mode == .presenter }

    /// Turns the state machines' transition trace on or off (the shell: at debug log level).
    public mutating func setTracing(_ on: Bool) { core.setTracing(on) }

    // MARK: inputs

    /// The output is ready (the desktop is open, or open again after a reconnect): the screen is
    /// `screen` with `monitors`; map onto what `--monitor` picks, and create the overlay if needed.
    public mutating func start(screen: PixelRect, monitors: [Monitor], at now: Instant, into effects: inout BridgeEffects) {
        begin(at: now, effects)
        stopped = false
        overlayShown = false
        target = nil
        screenChanged(screen: screen, monitors: monitors, at: now, into: &effects)
    }

    /// A decoded packet from an allowed source.
    public mutating func packet(_ packet: TouchPacket, from source: SourceAddress, via transport: Transport,
                                at now: Instant, into effects: inout BridgeEffects) {
        begin(at: now, effects)
        guard !stopped, admit(Sender(source, via: transport), at: now, into: &effects) else { return finish(into: &effects) }
        if packet.isHello {
            effects.reply = .handshake
        } else {
            let before = effects.actions.count
            // Activity holds the session: a finger down or changed, or anything made.
            if core.handle(packet, at: now, into: &effects.actions) || effects.actions.count > before { session.renew(at: now) }
        }
        finish(into: &effects)
    }

    /// A command of the web page at `source`.
    public mutating func command(_ command: WebCommand, from source: SourceAddress, at now: Instant,
                                 into effects: inout BridgeEffects) {
        begin(at: now, effects)
        // A ping is answered whoever holds the session, and is not a sign of life for it: an idle page must
        // not hold the session against takeover.
        let isPing: Bool
        if case .ping = command { isPing = true } else { isPing = false }
        if !isPing {
            guard !stopped, admit(Sender(source, via: .web), at: now, into: &effects) else { return finish(into: &effects) }
            answerRefusal = true
        }
        // Activity (`session.renew`): whatever makes an action, changes a setting, or keeps the pen at
        // the glass; the same surface, mode or setting again, `release` with nothing held or `pen away`
        // with no pen near are not.
        let before = effects.actions.count
        var changed = false
        switch command {
        case .ping(let n):
            effects.reply = .pong(n)
        case .surface(let width, let height):
            let surface = SurfaceSize(widthMM: width * Self.millimetresPerCSSPixel,
                                      heightMM: height * Self.millimetresPerCSSPixel)
            changed = surface != core.configuration.touchpad.surface
            core.setSurface(surface)
            if let report = surfaceLog.record(reasonIndex: 0, at: now) {
                effects.events.append(.surface(width: width, height: height, surface, report))
            }
            effects.reply = .mode(core.configuration.mode)
        case .click(let button, let modifiers):
            // A sticky modifier the keymap lacks refuses the click whole: no bare click.
            core.gate.emit(modifiers, around: { actions in
                actions.append(.button(button, pressed: true))
                actions.append(.button(button, pressed: false))
            }, into: &effects.actions)
        case .text(let text):
            // The parser refuses control characters, as it does in `edit`.
            for scalar in text.unicodeScalars { core.gate.type(Self.keysym(for: scalar), into: &effects.actions) }
        case .edit(let backspaces, let text):
            edit(backspaces: backspaces, text: text, into: &effects)
        case .key(let chord):
            core.gate.emit(chord, into: &effects.actions)
        case .presenter(let button):
            if slidesByProtocol, let request = button.slideRequest {
                effects.slides = request
                changed = true
            } else if core.presenter(button, at: now, into: &effects.actions) {
                effects.reply = .drawing(core.drawingOn)
            }
        case .gotoSlide(let n):
            if slidesByProtocol {
                effects.slides = .goto(n)
                changed = true
            }
        case .tune(let tuning):
            changed = core.tune(tuning, into: &effects.actions)
            settle(into: &effects)
            tuned = tuned || changed
        case .mode(let kind):
            if kind != core.configuration.mode {
                changed = true
                core.setMode(kind, into: &effects.actions)
                settle(into: &effects)
                updateOverlay(into: &effects)
                if let report = modeLog.record(reasonIndex: 0, at: now) {
                    effects.events.append(.modeChanged(kind, by: source, report))
                }
            }
            effects.reply = .mode(kind)
        case .release:
            releaseEverything(keepingCancelled: true, into: &effects)
        case .pen(let report):
            core.pen(report, at: now, into: &effects.actions)
            if case .near = report { changed = true }
        case .view:
            break  // the live view's: the host's `ViewMachine` decides, with the sender after this step
        }
        if !isPing && (changed || effects.actions.count > before) { session.renew(at: now) }
        finish(into: &effects)
    }

    /// The connection of `source` closed (the web page went away). If it is the sender, whatever it
    /// held is released and the session ends, so another phone may connect at once.
    public mutating func sourceGone(_ source: SourceAddress, at now: Instant, into effects: inout BridgeEffects) {
        begin(at: now, effects)
        // Only the page's WebSocket closes: a datagram sender from the same address and port is not it.
        guard !stopped, session.sender == Sender(source, via: .web) else { return finish(into: &effects) }
        releaseEverything(into: &effects)
        restoreConfigured(at: now, into: &effects)
        session.end()
        if let report = goneLog.record(reasonIndex: 0, at: now) { effects.events.append(.sourceGone(source, report)) }
        finish(into: &effects)
    }

    /// The sender leaves, whatever its transport (`People`: a further person's datagrams fell silent, or
    /// a newcomer takes their place): whatever it held is released, its mode and tuning undone, and the
    /// session ends. Returns who left (nil: no sender, nothing done).
    @discardableResult
    public mutating func leave(at now: Instant, into effects: inout BridgeEffects) -> Sender? {
        begin(at: now, effects)
        guard !stopped, let left = session.sender else { finish(into: &effects); return nil }
        releaseEverything(into: &effects)
        restoreConfigured(at: now, into: &effects)
        session.end()
        finish(into: &effects)
        return left
    }

    /// The deadline passed (or an early call: nothing then happens).
    public mutating func timer(at now: Instant, into effects: inout BridgeEffects) {
        begin(at: now, effects)
        guard !stopped else { return finish(into: &effects) }
        let hadContacts = core.hasContacts
        core.handleTimer(at: now, into: &effects.actions)
        settle(into: &effects)
        observePending(in: &effects)
        held.sweep(at: now, into: &effects.actions)
        batchObserved = effects.actions.count
        if hadContacts && !core.hasContacts, let report = silentLog.record(reasonIndex: 0, at: now) {
            effects.events.append(.senderSilent(core.configuration.idleRelease, report))
        }
        finish(into: &effects)
    }

    /// The screen or its monitors changed: `--monitor` is resolved again; absolute mapping and the
    /// overlay follow what it lands on.
    public mutating func screenChanged(screen: PixelRect, monitors: [Monitor], at now: Instant,
                                       into effects: inout BridgeEffects) {
        begin(at: now, effects)
        guard !stopped else { return finish(into: &effects) }
        let new = monitorChoice.resolve(monitors: monitors, screen: screen)
        if new != target {
            let wasFallback = target?.fellBack ?? false
            let first = target == nil
            target = new
            core.setTarget(new.rect)
            if new.fellBack && !wasFallback {
                effects.events.append(.monitorMissing(monitorChoice, names: monitors.map(\.name), using: new))
            } else if !first {
                effects.events.append(.targetChanged(new))
            }
            if overlayShown { effects.actions.append(.overlay(.cover(new.rect))) }
        }
        updateOverlay(into: &effects)
        finish(into: &effects)
    }

    /// The daemon stops (any reason): everything pressed is released and the overlay removed. Every
    /// input after it does nothing until `start`.
    public mutating func shutdown(into effects: inout BridgeEffects) {
        begin(at: batchTime, effects)
        guard !stopped else { return finish(into: &effects) }
        releaseEverything(into: &effects)
        // The next start begins with no sender: the configured mode and settings.
        restoreConfigured(at: batchTime, updatingOverlay: false, into: &effects)
        if overlayShown {
            effects.actions.append(.overlay(.remove))
            core.overlayRemoved()
            overlayShown = false
        }
        session.end()
        stopped = true
        finish(into: &effects)
    }

    // MARK: what joins the inputs

    /// The overlay window exists exactly while the mode or `--show-touches` draws.
    mutating func updateOverlay(into effects: inout BridgeEffects) {
        guard let target, core.needsOverlay != overlayShown else { return }
        overlayShown = core.needsOverlay
        effects.actions.append(.overlay(overlayShown ? .cover(target.rect) : .remove))
        if !overlayShown { core.overlayRemoved() }
    }

    mutating func finish(into effects: inout BridgeEffects) {
        settle(into: &effects)
        effects.wantsSlides = wantsSlides
        observePending(in: &effects)
        if answerRefusal, let k = refusedInBatch, effects.reply == nil { effects.reply = refusedTyping ? .cannotType(k) : .refused(k) }
        if let report = core.takeSmoothingReport() { effects.events.append(.smoothing(report)) }
        // Reading `core.trace` copied the machines' optionals (2.9 kB a step, seen with gdb on `memmove`):
        // only when tracing.
        if core.tracing {
            let trace = core.trace
            if !trace.records.isEmpty {
                for t in trace.records {
                    if let report = transitionLog.record(reasonIndex: 0, at: batchTime) { effects.events.append(.transition(t, report)) }
                }
                core.clearTrace()
            }
        }
        var deadline = core.nextDeadline
        if let d = held.sweepDeadline { deadline = deadline.map { min($0, d) } ?? d }
        effects.deadline = stopped ? nil : deadline
        effects.sender = session.sender
    }
}
