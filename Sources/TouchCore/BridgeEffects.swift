// What goes into the Bridge and what comes out: where an input came from, the replies, the events worth a
// log line, and the effects of one input in the order the shell performs them.

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
    /// Who joined in this step, with more than one person (every join, whatever the log keeps): the shell
    /// tells a page its person and colour.
    public var joined: [PersonJoin] = []
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
        if !joined.isEmpty { joined.removeAll(keepingCapacity: true) }
        slides = nil
        wantsSlides = false
    }
}

/// A sender that became a person (`BridgeEffects.joined`).
public struct PersonJoin: Hashable, Sendable {
    public var person: Person
    public var sender: Sender
    @inlinable public init(person: Person, sender: Sender) {
        self.person = person
        self.sender = sender
    }

    /// What the joined page is told: `person 2 #1f78f2`, its number and colour.
    public var pageText: String { "person \(person.rawValue) \(person.colourHex)" }
}
