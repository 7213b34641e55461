// The one place that decides: every input of the daemon in, every effect out.

/// Where an input came from, for the log.
public enum Transport: String, Hashable, Sendable, CustomStringConvertible {
    /// The PoseAI touch stream over UDP.
    case poseAI = "PoseAI"
    /// TUIO 1.1 over UDP.
    case tuio = "TUIO"
    /// The web page's WebSocket.
    case web = "web page"

    public var description: String { rawValue }
}

/// What the shell sends back to the source of an input.
/// (How the page reads each: `BridgeReply.pageText`, TouchWire/WebMessage.swift.)
public enum BridgeReply: Hashable, Sendable {
    /// The source said hello: answer with the PoseAI handshake.
    case handshake
    /// Another sender holds the session: the input was ignored.
    case busy
    /// The mode in use (after the page's `surface` or `mode` command).
    case mode(TouchMode)
    /// The answer to `ping N`.
    case pong(UInt64)
    /// Whether presenter drawing is on (after the page's laser and draw buttons).
    case drawing(Bool)
    /// The command's key chord was refused: no key on the desktop's keymap produces this keysym.
    /// Nothing was pressed.
    case refused(KeySym)
    /// A character to type was refused: no key on the desktop's keymap produces it and the desktop
    /// cannot type it otherwise (`Keymap.canBorrow` false: a Wayland compositor without a virtual
    /// keyboard, such as GNOME's or KDE Plasma 5's). The rest of the text was typed.
    case cannotType(KeySym)
    /// The live view's request got no picture (the `ViewMachine`'s answer, given by the host).
    case viewRefused(ViewRefusal)
}

/// Something worth a log line; the shell words it. Every event a peer can cause comes through a
/// `DropLog` first, so it is bounded per reason in time (at any log level) and carries its counts.
public enum BridgeEvent: Sendable {
    /// A source became the sender (first, after a takeover, or after the previous one left); at most
    /// `Bridge.sessionLogBurst` lines per `Bridge.sessionLogInterval`.
    case senderConnected(SourceAddress, Transport, DropLog<1>.Report)
    /// A source was ignored because another sender holds the session (at most one line per
    /// `Bridge.logInterval`, with the counts since the last).
    case refusedBusy(SourceAddress, Transport, DropLog<1>.Report)
    /// The sender was silent for `idleRelease` with fingers down: everything was released (at most
    /// `Bridge.sessionLogBurst` lines a second).
    case senderSilent(Interval, DropLog<1>.Report)
    /// The sender's connection closed (the web page went away): everything was released.
    case sourceGone(SourceAddress, DropLog<1>.Report)
    /// The mode changed at a source's request.
    case modeChanged(TouchMode, by: SourceAddress, DropLog<1>.Report)
    /// The page that chose the mode no longer holds the session: the configured mode is back.
    case modeRestored(TouchMode, DropLog<1>.Report)
    /// The web page reported its surface, in CSS pixels, and what it is in millimetres.
    case surface(width: Double, height: Double, SurfaceSize, DropLog<1>.Report)
    /// Absolute mapping now lands on `target`.
    case targetChanged(MonitorChoice.Target)
    /// The monitor `--monitor` names is missing: the whole screen is used until it appears.
    case monitorMissing(MonitorChoice, names: [String], using: MonitorChoice.Target)
    /// A state machine's transition (only when tracing is on: debug log level; at most
    /// `Bridge.transitionLogBurst` a second, the rest counted).
    case transition(Transition, DropLog<1>.Report)
    /// Motion smoothing engaged (packets come in bursts) or let go (even again), with what it measured
    /// (at most one a second: `MotionSmoother.minimumHold`).
    case smoothing(SmoothingReport)
    /// A key chord (a command's, a binding's, or a character to type) was refused before anything was
    /// pressed: no key on the desktop's keymap produces `keysym` (at most one line per
    /// `Bridge.logInterval`, with the counts since the last).
    case chordRefused(KeySym, DropLog<1>.Report)
    /// With more than one person (`People`): a sender became `Person` (at most
    /// `Bridge.sessionLogBurst` lines per `Bridge.sessionLogInterval`, with `personLeft`).
    case personJoined(Person, Sender, DropLog<2>.Report)
    /// With more than one person: `Person`'s sender left, and what it held was released; a further
    /// person's own pointer goes with them.
    case personLeft(Person, Sender, PersonLeaving, DropLog<2>.Report)
}

/// What one input asks the shell to do, in this order: perform `actions` (input and overlay), send
/// `reply` to the source, log `events`, and arm the timer for `deadline` (or disarm it when nil).
///
/// The buffers are reused by the caller across inputs: cleared, never shrunk, so the hot path does
/// not allocate once warm.
public struct BridgeEffects: Sendable {
    public var actions: [OutputAction] = []
    public var reply: BridgeReply?
    public var events: [BridgeEvent] = []
    /// When the shell must call `Bridge.timer` next; nil: no timer (the idle daemon sleeps).
    public var deadline: Instant?
    /// The sender after this input (nil: none): the shell hands it to the UDP handlers' gates
    /// (`SenderWatchers`, which tell them its address only when it sends datagrams). Carried here so that
    /// the shell need not read `Bridge.sender`, whose call copies the whole Bridge out of the shell's
    /// class (10.9 kB a step, seen with gdb on `memmove`).
    public var sender: Sender?
    /// Whose the actions are, with more than one person (`People`): empty, every action is person 1's
    /// (always so with one person); else each mark says that the actions from its `start` on are its
    /// person's, or that its person leaves there (their own pointer goes once the actions before it are done).
    public var people: [PersonMark] = []
    /// What the Slides panel asked of the presentation program taken by protocol (`Bridge.slidesByProtocol`):
    /// the shell sends it there, in place of the keys.
    public var slides: SlideRequest?
    /// Whether a page holds the session in presenter mode: the shell then looks for the presentation
    /// program's remote server (LibreOffice Impress), and lets it go when this turns false.
    public var wantsSlides = false

    public init() {
        actions.reserveCapacity(64)
        events.reserveCapacity(8)
        people.reserveCapacity(8)
    }

    /// Empties the effects for the next input, keeping the capacity.
    public mutating func clear() {
        actions.removeAll(keepingCapacity: true)
        events.removeAll(keepingCapacity: true)
        reply = nil
        deadline = nil
        sender = nil
        if !people.isEmpty { people.removeAll(keepingCapacity: true) }
        slides = nil
        wantsSlides = false
    }
}

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
    public private(set) var core: TouchPipeline
    private var session: SenderSession
    private var busyLog = DropLog<1>(interval: Bridge.logInterval)
    private var connectedLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    private var goneLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    /// Silence comes at most once per `idleRelease` after a finger: up to 10 lines a second, the rest counted.
    private var silentLog = DropLog<1>(interval: .seconds(1), burst: Bridge.sessionLogBurst)
    private var modeLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    private var restoredLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    private var surfaceLog = DropLog<1>(interval: Bridge.sessionLogInterval, burst: Bridge.sessionLogBurst)
    private var transitionLog = DropLog<1>(interval: .seconds(1), burst: Bridge.transitionLogBurst)
    /// What `--monitor` asked for, and where it lands now (nil until the shell reports the screen).
    public let monitorChoice: MonitorChoice
    public private(set) var target: MonitorChoice.Target?
    /// Whether the overlay window exists (as the Bridge asked the shell).
    public private(set) var overlayShown = false
    private var stopped = false
    /// Whether the presentation program takes the Slides panel's buttons by protocol (the shell says so
    /// once LibreOffice Impress is paired, and no more once it is gone): Next, Previous, Start and End
    /// become `BridgeEffects.slides`, not keys.
    public private(set) var slidesByProtocol = false
    /// The touchpad settings of the configuration, restored when the page that tuned them goes.
    private let configuredTouchpad: TouchpadSettings
    /// Whether the sender tuned the touchpad (`WebCommand.tune`).
    private var tuned = false
    /// The mode of the configuration, back when the page that chose another no longer holds the session.
    private let configuredMode: TouchMode
    /// What the output holds and shows because of the sender: every action goes through it, every end
    /// path ends in its `release`.
    public private(set) var held = HeldRecord()
    /// The desktop's keymap, when the shell knows it: a chord with a key it lacks is refused.
    public private(set) var keymap: Keymap?
    private var chordLog = DropLog<1>(interval: Bridge.logInterval)
    /// The input being handled: where its actions start in the effects, how far `held` has seen them,
    /// its time, and whether a refused chord is answered (a web command).
    private var batchObserved = 0
    private var batchTime = Instant(nanoseconds: 0)
    private var answerRefusal = false
    private var refusedInBatch: KeySym?
    /// Whether that refusal was a character to type (`.cannotType`), not a chord.
    private var refusedTyping = false
    /// `core.releases` when `held` last released after it.
    private var coreReleasesSeen = 0

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
            for i in 0..<modifiers.count { effects.actions.append(.key(modifiers[i], pressed: true)) }
            effects.actions.append(.button(button, pressed: true))
            effects.actions.append(.button(button, pressed: false))
            for i in (0..<modifiers.count).reversed() { effects.actions.append(.key(modifiers[i], pressed: false)) }
        case .text(let text):
            // The parser refuses control characters, as it does in `edit`.
            for scalar in text.unicodeScalars { effects.actions.append(.type(Self.keysym(for: scalar))) }
        case .edit(let backspaces, let text):
            edit(backspaces: backspaces, text: text, into: &effects)
        case .key(let chord):
            chord.emit(into: &effects.actions)
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

    // MARK: -

    /// The session's answer for `sender`; on a new sender, what the previous one held is released and
    /// the configured mode and settings come back.
    private mutating func admit(_ sender: Sender, at now: Instant, into effects: inout BridgeEffects) -> Bool {
        switch session.admit(sender, at: now) {
        case .busy:
            if sender.transport == .web { effects.reply = .busy }
            if let report = busyLog.record(reasonIndex: 0, at: now) {
                effects.events.append(.refusedBusy(sender.address, sender.transport, report))
            }
            return false
        case .accepted(let isNewSender):
            if isNewSender {
                releaseEverything(into: &effects)
                restoreConfigured(at: now, into: &effects)
                if let report = connectedLog.record(reasonIndex: 0, at: now) {
                    effects.events.append(.senderConnected(sender.address, sender.transport, report))
                }
            }
            return true
        }
    }

    /// A page's mode and tuning last while it holds the session: when it goes or another sender takes
    /// over, the configured ones come back. Returns whether the mode changed.
    @discardableResult
    private mutating func restoreConfigured(at now: Instant, updatingOverlay: Bool = true, into effects: inout BridgeEffects) -> Bool {
        if tuned {
            tuned = false
            core.restoreTuning(from: configuredTouchpad, into: &effects.actions)
            settle(into: &effects)
        }
        guard core.configuration.mode != configuredMode else { return false }
        core.setMode(configuredMode, into: &effects.actions)
        settle(into: &effects)
        if updatingOverlay { updateOverlay(into: &effects) }
        if let report = restoredLog.record(reasonIndex: 0, at: now) { effects.events.append(.modeRestored(configuredMode, report)) }
        return true
    }

    /// The overlay window exists exactly while the mode or `--show-touches` draws.
    private mutating func updateOverlay(into effects: inout BridgeEffects) {
        guard let target, core.needsOverlay != overlayShown else { return }
        overlayShown = core.needsOverlay
        effects.actions.append(.overlay(overlayShown ? .cover(target.rect) : .remove))
        if !overlayShown { core.overlayRemoved() }
    }

    private mutating func finish(into effects: inout BridgeEffects) {
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

    // MARK: what is held, and its one release

    /// The desktop's keymap is `keymap` (the shell read it at start, or it changed; nil: unknown, every
    /// chord is tried). From now on a chord whose keys it lacks is refused before anything is pressed.
    public mutating func keymapChanged(_ keymap: Keymap?, at now: Instant, into effects: inout BridgeEffects) {
        begin(at: now, effects)
        self.keymap = keymap
        finish(into: &effects)
    }

    /// A new input: its actions start at the end of `effects`.
    private mutating func begin(at now: Instant, _ effects: BridgeEffects) {
        batchObserved = effects.actions.count
        batchTime = max(batchTime, now)
        answerRefusal = false
        refusedInBatch = nil
        refusedTyping = false
    }

    /// Every contact cancelled, the machines released, then whatever the record still holds.
    private mutating func releaseEverything(keepingCancelled: Bool = false, into effects: inout BridgeEffects) {
        core.releaseAll(keepingCancelled: keepingCancelled, into: &effects.actions)
        settle(into: &effects)
    }

    /// When the core released everything (a mode switch, a setting, silence, `releaseAll`), the record
    /// releases what is left, right after the machines' own releases.
    private mutating func settle(into effects: inout BridgeEffects) {
        guard core.releases != coreReleasesSeen else { return }
        coreReleasesSeen = core.releases
        observePending(in: &effects)
        held.release(at: batchTime, into: &effects.actions)
        batchObserved = effects.actions.count
    }

    /// Checks the chords among the actions `held` has not seen yet against the keymap, then records them.
    private mutating func observePending(in effects: inout BridgeEffects) {
        if let keymap { refuseUnpressable(from: batchObserved, keymap, in: &effects) }
        for i in batchObserved..<effects.actions.count { held.observe(effects.actions[i], at: batchTime) }
        batchObserved = effects.actions.count
    }

    /// Removes every chord (a run of key presses, up to the last release of its keys, with what lies
    /// between: a click's button) that has a key the keymap lacks, and every character to type that no
    /// key produces when the keymap cannot borrow one; logs it, bounded. The hot path only reads.
    private mutating func refuseUnpressable(from start: Int, _ keymap: Keymap, in effects: inout BridgeEffects) {
        var i = start
        while i < effects.actions.count {
            let refused: KeySym
            var typing = false
            switch effects.actions[i] {
            case .key(let k, true) where !keymap.canPress(k):
                refused = k
                var runStart = i
                while runStart > start, case .key(_, true) = effects.actions[runStart - 1] { runStart -= 1 }
                var runEnd = i + 1
                while runEnd < effects.actions.count, case .key(_, true) = effects.actions[runEnd] { runEnd += 1 }
                var pending: [KeySym] = []
                for j in runStart..<runEnd { if case .key(let k, _) = effects.actions[j] { pending.append(k) } }
                var spanEnd = runEnd, j = runEnd
                while j < effects.actions.count && !pending.isEmpty {
                    if case .key(let k, false) = effects.actions[j], let p = pending.firstIndex(of: k) {
                        pending.remove(at: p)
                        spanEnd = j + 1
                    }
                    j += 1
                }
                effects.actions.removeSubrange(runStart..<spanEnd)
                i = runStart
            case .key(let k, false) where !keymap.canPress(k) && !held.holds(k):
                // The release of a press refused earlier.
                effects.actions.remove(at: i)
                continue
            case .type(let k) where !keymap.canBorrow && !keymap.canPress(k):
                refused = k
                typing = true
                effects.actions.remove(at: i)
            default:
                i += 1
                continue
            }
            refusedInBatch = refused
            refusedTyping = typing
            if let report = chordLog.record(reasonIndex: 0, at: batchTime) {
                effects.events.append(.chordRefused(refused, report))
            }
        }
    }

    /// The page's text field changed (`WebCommand.edit`): BackSpace taps, then the characters, each a
    /// press and a release, so nothing stays held between two edits; a character no key makes borrows a
    /// keycode, which `held` gives back on every end path. The parser bounds both counts; a command made
    /// elsewhere is held to the same bounds here.
    private func edit(backspaces: Int, text: String, into effects: inout BridgeEffects) {
        for _ in 0..<max(0, min(backspaces, WebCommand.maxEditBackspaces)) {
            effects.actions.append(.key(.backSpace, pressed: true))
            effects.actions.append(.key(.backSpace, pressed: false))
        }
        for scalar in text.unicodeScalars.prefix(WebCommand.maxEditScalars) where !WebCommand.isControl(scalar) {
            effects.actions.append(.type(Self.keysym(for: scalar)))
        }
    }

    /// The keysym of a character: Latin-1 is its own keysym; any other code point is 0x01000000 + it.
    public static func keysym(for scalar: Unicode.Scalar) -> KeySym {
        switch scalar.value {
        case 0x0A, 0x0D: return .returnKey
        case 0x09: return .tab
        case 0x20...0x7E, 0xA0...0xFF: return KeySym(rawValue: scalar.value)
        default: return KeySym(rawValue: 0x0100_0000 + scalar.value)
        }
    }
}
