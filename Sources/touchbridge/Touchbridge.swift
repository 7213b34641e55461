import ArgumentParser
import Logging
import NIOCore
import NIOPosix
import TouchCore
import TouchDaemon
import TouchNet
import TouchOutput
import TouchWayland
import TouchWeb
import TouchX11

#if canImport(Glibc)
import Glibc
#endif

/// The command line (run by `Main`).
struct Touchbridge: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "touchbridge",
        abstract: "Use a phone as a touchpad, touchscreen, pen or presentation remote for a Linux desktop: X11 through XTest or uinput, Wayland through uinput or the RemoteDesktop portal.",
        discussion: """
            touchbridge receives the touches a phone streams over the network (the PoseAI touch \
            stream over UDP, TUIO 1.1, or the web page it serves), tracks every finger, recognises \
            gestures, and drives the desktop's pointer, keys, touches and pen: on X11 through XTest or \
            kernel input devices (uinput), on Wayland through uinput or, without a uinput grant, the \
            RemoteDesktop portal (libei).
            """,
        version: "touchbridge \(version)",
        subcommands: [Serve.self, Monitors.self, ConfigCommand.self, Record.self, Replay.self, Pair.self, DoctorCommand.self],
        defaultSubcommand: Serve.self
    )
}

/// `--mode`: the core's own modes, so a new one is an option value at once.
extension TouchMode: ExpressibleByArgument {}
extension Fit: ExpressibleByArgument {}
extension BackendChoice: ExpressibleByArgument {}
extension UInputTouchpadChoice: ExpressibleByArgument {}
extension SwaySeatsChoice: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `--orientation`: the core's orientations and `auto`.
enum OrientationOption: String, ExpressibleByArgument, CaseIterable, Sendable {
    case auto, portrait
    case landscapeLeft = "landscape-left"
    case landscapeRight = "landscape-right"
    case upsideDown = "upside-down"

    /// The override for the core, nil for `auto`.
    var orientation: DeviceOrientation? {
        switch self {
        case .auto: return nil
        case .portrait: return .portrait
        case .landscapeLeft: return .landscapeLeft
        case .landscapeRight: return .landscapeRight
        case .upsideDown: return .portraitUpsideDown
        }
    }
}

/// An option's value: the default (which `--help` shows), or what the command line gave.
enum Given<Value: ExpressibleByArgument & Sendable>: ExpressibleByArgument, Sendable {
    case unset(Value)
    case commandLine(Value)

    init?(argument: String) {
        guard let value = Value(argument: argument) else { return nil }
        self = .commandLine(value)
    }

    /// The value when the command line gave it.
    var commandLine: Value? {
        if case .commandLine(let value) = self { return value }
        return nil
    }

    var defaultValueDescription: String {
        switch self {
        case .unset(let value), .commandLine(let value): return value.defaultValueDescription
        }
    }

    static var allValueStrings: [String] { Value.allValueStrings }
    static var defaultCompletionKind: CompletionKind { Value.defaultCompletionKind }
}

/// `serve`: its options are parsed once, merged over the config file and the defaults into
/// `ServeSettings` (see `Setting.all`), and run.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Receive a phone's touches and drive the desktop (the default command)."
    )

    @Option(help: ArgumentHelp("X display to drive (default: the DISPLAY environment variable).", valueName: "name"))
    var display: String?

    @Option(name: .customLong("udp-port"), help: ArgumentHelp("UDP port for the PoseAI touch stream; 0 picks a free port and prints it.", valueName: "port"))
    var udpPort: Given<Int> = .unset(ServeSettings.defaults.udpPort)

    @Option(name: .customLong("tuio-port"), help: ArgumentHelp("UDP port for TUIO 1.1 touch apps (OSC, profile /tuio/2Dcur); 0 turns it off.", valueName: "port"))
    var tuioPort: Given<Int> = .unset(ServeSettings.defaults.tuioPort)

    @Option(name: .customLong("http-port"), help: ArgumentHelp("TCP port for the web touchpad (a page for any phone's browser, and its WebSocket); 0 turns it off.", valueName: "port"))
    var httpPort: Given<Int> = .unset(ServeSettings.defaults.httpPort)

    @Flag(name: .customLong("new-secret"), help: ArgumentHelp("Make a new pairing secret for the web touchpad (kept in $XDG_STATE_HOME/touchbridge/pairing-secret); pages opened with the old address are refused."))
    var newSecret = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate (chain) to serve the web touchpad over HTTPS and WSS; needs --tls-key.", valueName: "file"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(help: ArgumentHelp("Local address to listen on: 0.0.0.0 is every IPv4 interface, :: every IPv6 one.", valueName: "address"))
    var bind: Given<String> = .unset(ServeSettings.defaults.bind)

    @Option(help: ArgumentHelp(
        "Source addresses allowed to send, as CIDR ranges, comma-separated or repeated; 'any' allows every address (default: loopback, link-local and private ranges).",
        valueName: "cidr"))
    var allow: [String] = []

    @Option(help: ArgumentHelp("What touches do: touchpad moves the pointer by the fingers' motion like a laptop touchpad (taps click, two fingers scroll or pinch, three and four fingers swipe); touchscreen maps the phone's screen onto the desktop's screen and the first finger drives button 1; presenter makes the phone a presentation remote (a tap or a swipe left shows the next slide, a swipe right the previous one, a two-finger tap blanks the screen, a long press toggles the laser pointer); pen makes the page's stylus a pen on the chosen monitor (a pen tablet with pressure and tilt under --backend uinput, the pointer under XTest) and fingers do nothing.", valueName: "mode"))
    var mode: Given<TouchMode> = .unset(ServeSettings.defaults.mode)

    @Option(help: ArgumentHelp(
        "What the phone's screen maps onto: a monitor's name (see 'touchbridge monitors'), primary (the primary monitor, else the whole screen) or all (the whole screen). Followed when monitors change.",
        valueName: "monitor"))
    var monitor: Given<String> = .unset(ServeSettings.defaults.monitor.description)

    @Option(help: ArgumentHelp("How the phone's screen fits the monitor: stretch (edge to edge) or contain (the phone's shape kept, centred, with bars).", valueName: "fit"))
    var fit: Given<Fit> = .unset(ServeSettings.defaults.fit)

    @Option(help: ArgumentHelp(
        "Which way up the phone is held: auto (from the phone's Orientation field), portrait, landscape-left (home button on the right), landscape-right (home button on the left) or upside-down.",
        valueName: "orientation"))
    var orientation: Given<OrientationOption> = .unset(ServeSettings.defaults.orientation)

    @Option(name: .customLong("surface-aspect"), help: ArgumentHelp(
        "Aspect ratio of the phone's touch surface, long side to short side (default: 19.5:9).",
        valueName: "long:short"))
    var surfaceAspect: String?

    @Flag(help: ArgumentHelp("In touchscreen mode, give every finger its own X pointer: an XInput2 master named 'touchbridge finger N', made when first needed and removed on exit. Without it only the first finger acts."))
    var multitouch = false

    @Option(help: ArgumentHelp("How input reaches the desktop: xtest (the X server's XTest extension; needs only the display), uinput (kernel input devices through /dev/uinput: every finger a real touch in touchscreen mode, the desktop's own touchpad or smooth scrolling in touchpad mode; needs write access to /dev/uinput), portal (the desktop's RemoteDesktop portal and libei, without root, in a Wayland session of GNOME 45, Plasma 6.1 or later: pointer, buttons, smooth scrolling, keys, and real touches where the compositor offers a touchscreen; the desktop asks once, and the permission is kept in $XDG_STATE_HOME/touchbridge/portal-restore-token; needs libei1; the portal's limits: no pen tablet (the pen is the pointer), the overlay needs Xwayland's DISPLAY, and on GNOME a character no key makes cannot be typed) or auto (uinput when /dev/uinput can be opened for writing and --multitouch is off; else, in a Wayland session, portal; else xtest; never xtest in a Wayland session, where XTest reaches only the X clients of Xwayland). uinput needs no display server: it runs with no DISPLAY at all.", valueName: "backend"))
    var backend: Given<BackendChoice> = .unset(ServeSettings.defaults.backend)

    @Option(name: .customLong("uinput-touchpad"), help: ArgumentHelp("With the uinput backend, what touchpad mode drives: native (a touchpad device; the desktop's own touchpad settings make taps, scrolling, pinch and swipe gestures) or recognizer (touchbridge's own recognizer and its touchpad options, on a pointer with smooth scrolling).", valueName: "kind"))
    var uinputTouchpad: Given<UInputTouchpadChoice> = .unset(ServeSettings.defaults.uinputTouchpad)

    /// Not for users: the uinput device node, so a test can see --backend auto fall back. Hidden from --help,
    /// not a setting of the config file.
    @Option(name: .customLong("debug-uinput-path"), help: ArgumentHelp(visibility: .hidden))
    var debugUInputPath: String = "/dev/uinput"

    @Flag(name: .customLong("show-touches"), help: ArgumentHelp("Draw a translucent circle under every finger on the mapped monitor, one colour per finger, fading out when it lifts (any mode). The overlay never takes clicks."))
    var showTouches = false

    @Option(help: ArgumentHelp("How many people may drive at once, each from their own phone (page, PoseAI or TUIO sender): the first drives the pointer, each further one gets a pointer and keyboard of their own while connected (on X an XInput2 master named 'touchbridge person N', under sway a seat of their own, see --sway-seats; GNOME and KDE have one pointer). 1: one phone at a time.", valueName: "n"))
    var people: Given<Int> = .unset(ServeSettings.defaults.people)

    @Option(name: .customLong("sway-seats"), help: ArgumentHelp("Under sway, whether each further person gets a seat of their own (their own cursor and keyboard focus): auto (on sway 1.10 or later), always (sway before 1.10 makes a pointer-gestures global for every seat, and a program started after it may take that one and lose pinch and swipe from the first person's touchpad, until sway restarts) or never (one person at a time).", valueName: "when"))
    var swaySeats: Given<SwaySeatsChoice> = .unset(ServeSettings.defaults.swaySeats)

    @Option(name: .customLong("idle-release-ms"), help: ArgumentHelp("Release every finger and button when the phone has been silent this many milliseconds.", valueName: "ms"))
    var idleReleaseMs: Given<Int> = .unset(ServeSettings.defaults.idleReleaseMs)

    @Flag(help: ArgumentHelp("When the X display cannot be opened or goes away, wait for it and connect again (checked every second) instead of exiting with status 69."))
    var reconnect = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp("Show the mapped monitor live on the web page in touchscreen, pen and presenter mode, to the paired page that holds the session only, while the desktop shows a mark in its corner (default: on; --no-view never shows the screen)."))
    var view: Bool?

    @Option(name: .customLong("max-packets-per-second"), help: ArgumentHelp(
        "Most datagrams per second accepted from one source address, in bursts of one second's worth; more are dropped before decoding (0: no limit).",
        valueName: "n"))
    var maxPacketsPerSecond: Given<Int> = .unset(ServeSettings.defaults.maxPacketsPerSecond)

    @Option(name: .customLong("max-bytes-per-second"), help: ArgumentHelp(
        "Most bytes per second accepted from one source address, in bursts of one second's worth; more are dropped before decoding (0: no limit).",
        valueName: "n"))
    var maxBytesPerSecond: Given<Int> = .unset(ServeSettings.defaults.maxBytesPerSecond)

    /// Not for users: the X error survival test makes every n-th applied packet also send a request the
    /// X server rejects. Hidden from --help, not a setting of the config file.
    @Option(name: .customLong("debug-x-error-every"), help: ArgumentHelp(visibility: .hidden))
    var debugXErrorEvery: Int = 0

    /// Not for users: the port the LibreOffice Impress client connects to on 127.0.0.1 (tests run a server
    /// of their own there; 0: no Impress client, so a test's daemon never meets another test's Impress).
    /// Hidden from --help, not a setting of the config file.
    @Option(name: .customLong("debug-impress-port"), help: ArgumentHelp(visibility: .hidden))
    var debugImpressPort: Int = 1599

    @Option(name: .customLong("log-level"), help: ArgumentHelp("How much to log to standard error: trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: Given<Logger.Level> = .unset(ServeSettings.defaults.logLevel)

    @OptionGroup(title: "Touchpad mode")
    var touchpad: TouchpadOptions

    @OptionGroup(title: "Presenter mode")
    var presenter: PresenterOptions

    @Option(help: ArgumentHelp(
        "Read settings from this TOML file, keys named like the long options (default: $XDG_CONFIG_HOME/touchbridge/config.toml when it exists); options given on the command line win.",
        valueName: "file"))
    var config: String?

    func run() async throws {
        let settings: ServeSettings
        do {
            settings = try ServeSettings.read(self, command: "serve").settings
            try settings.checkTLSFiles()
        } catch {
            Serve.exit(withError: error)
        }
        try await serve(settings)
    }

    /// Builds the daemon's settings and runs its lifecycle (see `Lifecycle`).
    func serve(_ settings: ServeSettings) async throws {
        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "touchbridge")
        logger.logLevel = level
        let daemon = daemonSettings(settings)
        let code = await Lifecycle(settings: daemon, logger: logger).run()
        if code != ExitStatus.stopped { throw ExitCode(code) }
    }

    /// The daemon's settings from `settings` (the config file and the options), as `serve` runs with them
    /// and `doctor` checks them.
    func daemonSettings(_ settings: ServeSettings) -> DaemonSettings {
        var core = TouchPipeline.Configuration(
            mapping: AbsoluteMapping(target: PixelRect(x: 0, y: 0, width: 1, height: 1), fit: settings.fit,
                                     aspect: settings.surfaceAspect),
            orientationOverride: settings.orientation.orientation, multitouch: settings.multitouch,
            idleRelease: .milliseconds(UInt64(settings.idleReleaseMs)),
            mode: settings.mode,
            touchpad: settings.touchpadSettings,
            presenter: settings.presenter)
        core.showTouches = settings.showTouches
        var daemon = DaemonSettings(
            display: settings.display, bind: settings.bind, udpPort: settings.udpPort, tuioPort: settings.tuioPort,
            httpPort: settings.httpPort, newSecret: settings.newSecret, tlsCertificate: settings.tlsCert,
            tlsKey: settings.tlsKey, allowList: settings.allowList,
            rateLimits: SourceRateLimiter.Limits(packetsPerSecond: UInt64(settings.maxPacketsPerSecond),
                                                 bytesPerSecond: UInt64(settings.maxBytesPerSecond)),
            core: core, monitor: settings.monitor, reconnect: settings.reconnect,
            debugXErrorEvery: max(0, debugXErrorEvery), version: Touchbridge.version)
        daemon.backend = settings.backend
        daemon.people = settings.people
        daemon.uinputTouchpad = settings.uinputTouchpad
        daemon.swaySeats = settings.swaySeats
        daemon.uinputPath = debugUInputPath
        daemon.view = settings.view
        daemon.impressPin = settings.impressPin
        daemon.impressPort = UInt16(clamping: debugImpressPort)
        return daemon
    }
}

struct Monitors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the monitors: the X display's (RandR), or in a Wayland session the compositor's outputs: name, geometry WxH+X+Y, and primary.",
        discussion: "One line per monitor, in the server's order, e.g. 'HDMI-1 1920x1080+0+0 primary'. These names are what --monitor takes."
    )

    @Option(help: ArgumentHelp("X display to list (default: the DISPLAY environment variable; in a Wayland session, without this option, the compositor's outputs).", valueName: "name"))
    var display: String?

    func run() async throws {
        // A Wayland session's outputs are what `serve` maps onto there (its desktop is the compositor's).
        if display == nil, getenv("WAYLAND_DISPLAY") != nil {
            let wayland: WaylandDesktop
            do throws(WaylandError) { wayland = try WaylandDesktop() } catch {
                writeError("touchbridge: \(error)")
                throw ExitCode(ExitStatus.display)
            }
            defer { _ = wayland.close() }
            // In the compositor's logical pixels (xdg-output), as `serve` maps onto them.
            do throws(OutputError) {
                for monitor in try wayland.screen().monitors { writeLine(monitor.description) }
            } catch {
                writeError("touchbridge: \(error)")
                throw ExitCode(ExitStatus.display)
            }
            return
        }
        do throws(X11Error) {
            let x = try XDisplay(name: display)
            defer { x.close() }
            guard let version = try x.randrVersion(), version.major > 1 || version.minor >= 5 else {
                writeError("touchbridge: the X display \(x.name) has no RandR 1.5 monitors; absolute mode uses the whole screen")
                return
            }
            for monitor in try x.monitors() { writeLine(monitor.description) }
        } catch {
            writeError("touchbridge: \(error)")
            throw ExitCode(ExitStatus.display)
        }
    }
}

/// Writes one line to standard error at once (the daemon's one writer, which retries `EINTR`).
func writeError(_ line: String) {
    writeLine(line, to: .error)
}
