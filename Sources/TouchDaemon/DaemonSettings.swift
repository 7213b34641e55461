import TouchCore
import TouchOutput
import TouchUInput

/// What touchpad mode drives on the uinput backend (`--uinput-touchpad`).
public enum UInputTouchpadChoice: String, Sendable, CaseIterable {
    /// A touchpad device: the desktop's own touchpad settings make taps, scrolling and gestures.
    case native
    /// touchbridge's own recognizer, on a pointer with smooth (hi-res) wheels.
    case recognizer
}

/// Whether further people get a sway seat of their own (`--sway-seats`).
public enum SwaySeatsChoice: String, Sendable, CaseIterable {
    /// On sway 1.10 or later (an older sway makes a pointer-gestures global for every seat).
    case auto
    case always
    case never
}

/// Everything `touchbridge serve` runs with, as the command line and the config file gave it.
public struct DaemonSettings: Sendable {
    public var display: String?
    public var bind: String
    public var udpPort: Int
    /// 0: no TUIO listener.
    public var tuioPort: Int
    /// 0: no web touchpad.
    public var httpPort: Int
    public var newSecret: Bool
    public var tlsCertificate: String?
    public var tlsKey: String?
    public var allowList: AllowList
    public var rateLimits: SourceRateLimiter.Limits
    public var core: TouchPipeline.Configuration
    public var monitor: MonitorChoice
    public var reconnect: Bool
    public var backend: BackendChoice = .xtest
    /// How many people may drive at once, each with their own pointer where the output has one for each.
    public var people = 1
    public var uinputTouchpad: UInputTouchpadChoice = .native
    public var swaySeats: SwaySeatsChoice = .auto
    /// The uinput device node (`/dev/uinput`; tests name another to see the fallback).
    public var uinputPath: String = TouchUInput.uinputPath
    public var debugXErrorEvery: Int
    /// Whether the page may show the desktop's screen (`view = false`, `--no-view`: never).
    public var view: Bool = true
    /// The PIN for LibreOffice Impress (`--impress-pin`); nil: the one kept beside the pairing secret.
    public var impressPin: String?
    /// The port the Impress client connects to on 127.0.0.1 (Impress's: 1599; tests name their own; 0:
    /// no Impress client, the Slides panel's buttons stay keys).
    public var impressPort: UInt16 = 1599
    /// The version the PoseAI handshake names.
    public var version: String

    public init(display: String?, bind: String, udpPort: Int, tuioPort: Int, httpPort: Int, newSecret: Bool,
                tlsCertificate: String?, tlsKey: String?, allowList: AllowList, rateLimits: SourceRateLimiter.Limits,
                core: TouchPipeline.Configuration, monitor: MonitorChoice, reconnect: Bool, debugXErrorEvery: Int,
                version: String) {
        self.display = display
        self.bind = bind
        self.udpPort = udpPort
        self.tuioPort = tuioPort
        self.httpPort = httpPort
        self.newSecret = newSecret
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
        self.allowList = allowList
        self.rateLimits = rateLimits
        self.core = core
        self.monitor = monitor
        self.reconnect = reconnect
        self.debugXErrorEvery = debugXErrorEvery
        self.version = version
    }
}

extension DaemonSettings {
    /// The start line of the mode's own settings (touchpad, presenter), nil for the others; the pen's is
    /// said where the backend is known (`InputBackends.choose`).
    var modeSettingsLine: String? {
        switch core.mode {
        case .touchpad:
            let t = core.touchpad
            return "touchpad: surface \(t.surface), accel \(t.accelProfile.rawValue) speed \(t.speed), tap \(t.tapToClick ? "on" : "off"), drag lock \(t.dragLock ? "on" : "off"), \(t.naturalScroll ? "natural" : "traditional") scroll ×\(t.scrollSpeed), kinetic \(t.kineticScroll ? "on" : "off"), smoothing \(t.smoothing.rawValue)"
        case .presenter:
            let k = core.presenter.keys
            return "presenter: next \(k.next), previous \(k.previous), blank \(k.blank)"
        case .touchscreen, .pen:
            return nil
        }
    }
}
