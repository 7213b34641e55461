import Logging
import TouchCore
import TouchOutput
import TouchPortal
import TouchUInput
import TouchWayland
import TouchX11

#if canImport(Glibc)
import Glibc
#endif

/// The factory of each input backend `OutputChoice` can name: the one place in the daemon that knows
/// them all. A new backend is a module with its `InputBackend`, a case of `OutputChoice.Input` with its
/// rules in `choose`, and a line in `make`. The portal's is made on the loop before anything else runs
/// there: its dialog waits for the user (a stop signal ends the wait within a second).
enum InputBackends {
    /// Makes the backend `input` names, with the settings it needs. uinput's can fail (its devices are
    /// the proof that /dev/uinput works), and the portal's (the user or the desktop may say no: then
    /// `portalRefused`). `stop`: true once a stop signal came (the portal's dialog gives up then).
    static func make(_ input: OutputChoice.Input, settings s: DaemonSettings, logger: Logger,
                     stop: @escaping () -> Bool) -> Result<any InputBackend, OutputChoiceFailure> {
        switch input {
        case .uinput:
            return makeUInput(settings: s, logger: logger).mapError { OutputChoiceFailure("\($0)") }
        case .xtest:
            return .success(XTestBackend(multitouch: s.core.multitouch))
        case .portal:
            let path = RestoreTokenFile.path(environment: ["XDG_STATE_HOME": environment("XDG_STATE_HOME"), "HOME": environment("HOME")]
                .compactMapValues { $0 })
            logger.notice("portal: asking the desktop's RemoteDesktop portal for input (a dialog asks the first time; the permission is kept in \(path))")
            switch PortalBackend.make(tokenPath: path, screen: s.view, stop: stop, log: { logger.debug("\($0)") }) {
            case .success(let backend):
                logger.info("portal: \(backend.usedToken ? "the kept permission was sent" : "the user allowed remote control"); granted \(backend.granted); the compositor's devices: \(backend.offered)\(backend.offered.contains(.touch) ? "" : " (no touch device: touchscreen mode drives the pointer)")\(backend.sharedScreen.map { "; the view's monitor: \($0)" } ?? "")")
                if s.view, backend.sharedScreen == nil {
                    logger.notice("portal: the session shares no screen, so the view has no picture\(backend.usedToken ? " (the kept permission may have been given with --no-view: delete \(path) to be asked again, screen included)" : "")")
                }
                return .success(backend)
            case .failure(let failure):
                return .failure(OutputChoiceFailure("--backend portal: \(failure.message)", portalRefused: failure.kind == .refused))
            }
        }
    }

    /// The uinput backend's devices, made now.
    private static func makeUInput(settings s: DaemonSettings, logger: Logger?) -> Result<any InputBackend, OutputError> {
        let glass = s.core.touchpad.surface
        return UInputDevices.make(touchpadMM: s.uinputTouchpad == .native ? (width: glass.widthMM, height: glass.heightMM) : nil,
                                  penSurfaceMM: max(glass.widthMM, glass.heightMM), path: s.uinputPath,
                                  personSeats: s.people > 1 && seatsForPeople(s, logger: logger))
    }

    /// Whether the desktop gives further people's uinput devices a pointer of their own: Xorg (an X
    /// display and no Wayland one: XInput 2's masters) or sway (its IPC socket: seats, `SwaySeats`) as
    /// `--sway-seats` says: `auto` asks sway its version, since sway before 1.10 makes a
    /// `zwp_pointer_gestures_v1` global for every seat and a program may bind the new one (swaywm/sway
    /// 20c91335f). GNOME and KDE have one pointer for everyone.
    private static func seatsForPeople(_ s: DaemonSettings, logger: Logger?) -> Bool {
        let wayland = environment("WAYLAND_DISPLAY").map { !$0.isEmpty } ?? false
        guard wayland else { return (s.display ?? environment("DISPLAY")).map { !$0.isEmpty } ?? false }
        guard let sway = swaySocket, s.swaySeats != .never else { return false }
        if s.swaySeats == .always { return true }
        let always = "(--sway-seats always gives further people seats all the same)"
        guard let version = SwaySeats.version(socketPath: sway) else {
            logger?.notice("sway: no answer to its version: one person at a time \(always)")
            return false
        }
        if version.major > 1 || (version.major == 1 && version.minor >= 10) { return true }
        logger?.notice("sway \(version.major).\(version.minor): one person at a time: sway before 1.10 makes a pointer-gestures global for every seat, and a program started after a further person came may take theirs and lose pinch and swipe from the first person's touchpad \(always)")
        return false
    }

    /// sway's IPC socket (`SWAYSOCK`), when the session is sway's.
    static var swaySocket: String? { environment("SWAYSOCK").flatMap { $0.isEmpty ? nil : $0 } }

    /// The choice (`OutputChoice.choose`, from the settings and the environment) and the backend it
    /// names, made; on the loop that will own it. Says what the pen gives when it starts in pen mode.
    static func choose(_ s: DaemonSettings, logger: Logger, stop: @escaping () -> Bool) -> Result<(OutputChoice, any InputBackend), OutputChoiceFailure> {
        let choice: OutputChoice
        let proven: (any InputBackend)?
        switch OutputChoice.choose(facts(s), makeUInput: { makeUInput(settings: s, logger: logger) }) {
        case .failure(let failure): return .failure(failure)
        case .success(let (c, p)): (choice, proven) = (c, p)
        }
        // The backend the choice made to prove it works, else the one it names, made now.
        let backend: any InputBackend
        // Said before the portal's dialog, which may wait for the user.
        logger.info("\(choice.reason)")
        switch proven.map({ .success($0) }) ?? make(choice.input, settings: s, logger: logger, stop: stop) {
        case .success(let made): backend = made
        case .failure(let failure): return .failure(failure)
        }
        if s.core.mode == .pen {
            if backend.capabilities.penTablet {
                logger.info("pen: a pen tablet with pressure, tilt and the eraser")
            } else {
                logger.notice("pen: \(backend.name) has no tablet: the pen is the pointer (button 1 while it touches, button 3 for the barrel button), without pressure, tilt or eraser; --backend uinput makes a pen tablet")
            }
        }
        return .success((choice, backend))
    }

    /// The choice `serve` would make now, for `touchbridge doctor`, and whether /dev/uinput makes devices
    /// (nil: it does; they are made and removed at once, the same proof the choice uses; else why not).
    /// The portal is not asked for a session here (its dialog would wait for the user).
    static func doctorChoice(_ s: DaemonSettings) -> (choice: Result<OutputChoice, OutputChoiceFailure>, uinput: OutputError?) {
        let uinput: OutputError?
        switch makeUInput(settings: s, logger: nil) {
        case .success(let devices):
            _ = devices.close()
            uinput = nil
        case .failure(let error):
            uinput = error
        }
        let choice = OutputChoice.choose(facts(s)) { () -> Result<Void, OutputError> in
            uinput.map { .failure($0) } ?? .success(())
        }
        return (choice.map(\.choice), uinput)
    }

    /// What the output choice depends on, read from the settings and the environment.
    private static func facts(_ s: DaemonSettings) -> OutputFacts {
        let native = s.uinputTouchpad == .native
        let what = "a touchscreen, a pen tablet, \(native ? "a native touchpad, " : "")a pointer with hi-res wheels and a keyboard"
        return OutputFacts(backend: s.backend, multitouch: s.core.multitouch, display: s.display ?? environment("DISPLAY"),
                           waylandDisplay: environment("WAYLAND_DISPLAY"), uinputPath: s.uinputPath, uinputDevices: what,
                           sessionType: environment("XDG_SESSION_TYPE"))
    }

    /// The environment variable `name`, when set.
    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
