/// How input reaches the desktop (`--backend`).
public enum BackendChoice: String, Sendable, CaseIterable {
    /// The X server's XTest extension: needs only the display.
    case xtest
    /// Kernel input devices through /dev/uinput: needs write access to it.
    case uinput
    /// The RemoteDesktop portal and libei: input without root in a Wayland session whose compositor has
    /// EIS (GNOME 45, Plasma 6.1 and later); the permission is asked once, then remembered.
    case portal
    /// uinput when /dev/uinput can be used (and `--multitouch` is off); else, in a Wayland session, the
    /// portal; else XTest on an X display. Never XTest in a Wayland session.
    case auto
}

/// Which input output and which desktop the daemon runs, and the line that says why (logged at start).
/// Made by `choose`, the one place where this is decided.
public struct OutputChoice: Equatable, Sendable {
    /// The input output.
    public enum Input: Equatable, Sendable {
        case xtest
        case uinput
        case portal
    }

    /// The desktop.
    public enum DesktopKind: Equatable, Sendable {
        /// An X display (`--display`, else DISPLAY).
        case x11(display: String)
        /// A Wayland compositor (WAYLAND_DISPLAY); `overlayDisplay`: the X display (Xwayland) the
        /// overlay goes on, when DISPLAY is set too.
        case wayland(display: String, overlayDisplay: String?)
        /// Neither: `AbsentDesktop`.
        case absent
    }

    public var input: Input
    public var desktop: DesktopKind
    /// The line logged at start: which backend, on which desktop, and why.
    public var reason: String

    public init(input: Input, desktop: DesktopKind, reason: String) {
        self.input = input
        self.desktop = desktop
        self.reason = reason
    }
}

/// What the choice depends on besides /dev/uinput: the settings and the environment.
public struct OutputFacts: Sendable {
    /// `--backend`.
    public var backend: BackendChoice
    /// `--multitouch` (every finger its own X pointer: XTest only).
    public var multitouch: Bool
    /// `--display`, else DISPLAY; nil or empty: none.
    public var display: String?
    /// WAYLAND_DISPLAY; nil or empty: none.
    public var waylandDisplay: String?
    /// XDG_SESSION_TYPE ("wayland", "x11", "tty"); nil or empty: not said.
    public var sessionType: String?
    /// The uinput device node (`/dev/uinput`), for the log.
    public var uinputPath: String
    /// The devices the uinput output makes, in words, for the log.
    public var uinputDevices: String

    public init(backend: BackendChoice, multitouch: Bool, display: String?, waylandDisplay: String?,
                uinputPath: String, uinputDevices: String, sessionType: String? = nil) {
        self.sessionType = sessionType.flatMap { $0.isEmpty ? nil : $0 }
        self.backend = backend
        self.multitouch = multitouch
        self.display = display.flatMap { $0.isEmpty ? nil : $0 }
        self.waylandDisplay = waylandDisplay.flatMap { $0.isEmpty ? nil : $0 }
        self.uinputPath = uinputPath
        self.uinputDevices = uinputDevices
    }
}

/// No output can run with these settings here: the message says why and what to do.
public struct OutputChoiceFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    /// The RemoteDesktop portal refused (the user said no, or the desktop did): its own exit status.
    public var portalRefused: Bool
    public init(_ message: String, portalRefused: Bool = false) {
        self.message = message
        self.portalRefused = portalRefused
    }
    public var description: String { message }
}

extension OutputChoice {
    /// Chooses the input output and the desktop. The rules:
    ///
    /// | --backend | WAYLAND_DISPLAY | DISPLAY | uinput | choice |
    /// | --- | --- | --- | --- | --- |
    /// | xtest | any | set | — | XTest on X (in a Wayland session: said, it reaches only Xwayland's clients) |
    /// | xtest | any | none | — | error: XTest needs an X display |
    /// | uinput | — | — | fails | error: the udev rule |
    /// | uinput | set | any | works | uinput, Wayland desktop (overlay on DISPLAY's Xwayland when set) |
    /// | uinput | none | set | works | uinput, X11 desktop |
    /// | uinput | none | none | works | uinput, no desktop |
    /// | auto | set | any | works | uinput, Wayland desktop: never XTest in a Wayland session, said why |
    /// | auto | set | any | fails | the portal, Wayland desktop (the portal asks the user once) |
    /// | auto | none, XDG_SESSION_TYPE=wayland | any | fails | the portal, X11 desktop on DISPLAY, else none |
    /// | portal | set | any | — | the portal, Wayland desktop |
    /// | portal | none | set | — | the portal, X11 desktop (the compositor must have EIS) |
    /// | portal | none | none | — | the portal, no desktop |
    /// | auto | none | set | (multitouch) | XTest on X: every finger an X pointer |
    /// | auto | none | set | works | uinput, X11 desktop |
    /// | auto | none | set | fails | XTest on X, said why |
    /// | auto | none | none | works | uinput, no desktop |
    /// | auto | none | none | fails | error: nothing to drive |
    ///
    /// `--multitouch` with uinput or the portal, or where auto cannot use XTest, is an error.
    ///
    /// `makeUInput` makes the uinput output (its devices are the only proof that /dev/uinput works: a node
    /// can open and still be no uinput device); it is called only when the rules need to know, at most
    /// once, and what it made is returned with the choice, so nothing is made twice.
    public static func choose<Devices>(_ facts: OutputFacts, makeUInput: () -> Result<Devices, OutputError>)
        -> Result<(choice: OutputChoice, uinput: Devices?), OutputChoiceFailure> {
        let path = facts.uinputPath
        let what = facts.uinputDevices
        let wayland = facts.waylandDisplay
        let display = facts.display
        /// The uinput output's desktop: Wayland's when in a Wayland session, else X's, else none.
        func uinputDesktop() -> (DesktopKind, String) {
            if let wayland {
                let overlay = display.map { "; the overlay on X display \($0) (Xwayland)" } ?? "; no X display (DISPLAY) for the overlay: no visible touches, laser or drawing"
                return (.wayland(display: wayland, overlayDisplay: display), "desktop: Wayland display \(wayland)\(overlay)")
            }
            if let display { return (.x11(display: display), "desktop: X display \(display)") }
            let size = AbsentDesktop.defaultSize
            return (.absent, "no desktop (neither DISPLAY nor WAYLAND_DISPLAY is set): the touchscreen spans \(size.width)x\(size.height) device units, which the compositor maps onto its output; no overlay (no visible touches, laser or drawing); keys where a US keyboard has them")
        }
        let waylandNote = wayland.map { "a Wayland session (WAYLAND_DISPLAY=\($0)), where XTest would reach only Xwayland's X clients" }
            ?? (facts.sessionType == "wayland" ? "a Wayland session (XDG_SESSION_TYPE=wayland), where XTest would reach only Xwayland's X clients" : nil)
        /// The portal's desktop: Wayland's when WAYLAND_DISPLAY is set, else X's, else none.
        func portalDesktop() -> (DesktopKind, String) {
            if wayland != nil { return uinputDesktop() }
            if let display { return (.x11(display: display), "desktop: X display \(display)") }
            return (.absent, "no desktop (neither DISPLAY nor WAYLAND_DISPLAY is set): touches land where the compositor's regions say; no overlay; keys where a US keyboard has them")
        }

        switch facts.backend {
        case .xtest:
            guard let display else {
                return .failure(OutputChoiceFailure("--backend xtest needs an X display, and neither --display nor DISPLAY is set\(wayland == nil ? "" : " (in a Wayland session use --backend uinput)")"))
            }
            let note = waylandNote.map { "; note: \($0)" } ?? ""
            return .success((OutputChoice(input: .xtest, desktop: .x11(display: display), reason: "backend: xtest (--backend xtest)\(note)"), nil))

        case .uinput:
            if facts.multitouch { return .failure(OutputChoiceFailure("--multitouch is for --backend xtest")) }
            switch makeUInput() {
            case .success(let devices):
                let (desktop, clause) = uinputDesktop()
                return .success((OutputChoice(input: .uinput, desktop: desktop, reason: "backend: uinput (--backend uinput): \(what) on \(path); \(clause)"), devices))
            case .failure(let error):
                let orXTest = display != nil && wayland == nil ? " or use --backend xtest" : ""
                return .failure(OutputChoiceFailure("--backend uinput: cannot make the input devices: \(error.message); give the user write access to \(path) (the README's udev rule)\(orXTest)"))
            }

        case .portal:
            if facts.multitouch { return .failure(OutputChoiceFailure("--multitouch is for --backend xtest")) }
            let (desktop, clause) = portalDesktop()
            return .success((OutputChoice(input: .portal, desktop: desktop, reason: "backend: portal (--backend portal): the RemoteDesktop portal and libei; \(clause)"), nil))

        case .auto:
            if let waylandNote {
                if facts.multitouch {
                    return .failure(OutputChoiceFailure("--backend auto: \(waylandNote), and --multitouch needs XTest: drop --multitouch, or force XTest with --backend xtest"))
                }
                switch makeUInput() {
                case .success(let devices):
                    let (desktop, clause) = uinputDesktop()
                    return .success((OutputChoice(input: .uinput, desktop: desktop, reason: "backend: uinput (--backend auto): \(waylandNote); \(path) is writable: \(what); \(clause)"), devices))
                case .failure(let error):
                    let (desktop, clause) = portalDesktop()
                    return .success((OutputChoice(input: .portal, desktop: desktop, reason: "backend: portal (--backend auto): \(waylandNote), and \(path) cannot be used (\(error.message)): input through the RemoteDesktop portal and libei (the desktop asks once; a udev rule for \(path) gives the uinput backend instead); \(clause)"), nil))
                }
            }
            if let display {
                if facts.multitouch {
                    return .success((OutputChoice(input: .xtest, desktop: .x11(display: display), reason: "backend: xtest (--backend auto): --multitouch gives every finger an X pointer, which only XTest does"), nil))
                }
                switch makeUInput() {
                case .success(let devices):
                    return .success((OutputChoice(input: .uinput, desktop: .x11(display: display), reason: "backend: uinput (--backend auto): \(path) is writable: \(what); desktop: X display \(display)"), devices))
                case .failure(let error):
                    return .success((OutputChoice(input: .xtest, desktop: .x11(display: display), reason: "backend: xtest (--backend auto): \(path) cannot be used (\(error.message))"), nil))
                }
            }
            if facts.multitouch {
                return .failure(OutputChoiceFailure("--multitouch needs an X display, and neither --display, DISPLAY nor WAYLAND_DISPLAY is set"))
            }
            switch makeUInput() {
            case .success(let devices):
                let (desktop, clause) = uinputDesktop()
                return .success((OutputChoice(input: .uinput, desktop: desktop, reason: "backend: uinput (--backend auto): \(path) is writable: \(what); \(clause)"), devices))
            case .failure(let error):
                return .failure(OutputChoiceFailure("nothing to drive: neither --display, DISPLAY nor WAYLAND_DISPLAY is set, and without a display server only the uinput backend runs, but \(path) cannot be used (\(error.message)): give the user write access to it (the README's udev rule)"))
            }
        }
    }
}
