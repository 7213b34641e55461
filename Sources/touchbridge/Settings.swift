import ArgumentParser
import Logging
import TouchCore
import TouchDaemon
import TouchFiles
import TouchImpress
import TouchOutput

// The settings of `serve`: one table (`Setting.all`) by which the defaults, the config file and the options,
// parsed once by ArgumentParser, merge into one typed value that knows where each value came from.
//
// Not apple/swift-configuration (1.4.0 is on this machine's list): it reads JSON, YAML and property lists but
// not TOML, so the file format users have would change or need a provider of our own; its command-line
// provider is a second, untyped parser beside ArgumentParser (no --help, no --no- forms, no checks), and its
// values are looked up by key string and type at each read, so the typed value, the checks with the file's
// line, and `config --print` would still need this table. The merge itself is a dozen lines here.

/// Everything `serve` runs with, typed: the defaults, then the config file, then the command line, merged
/// once by `merged(_:)`. `config --print` prints it, `serve` turns it into `DaemonSettings`.
struct ServeSettings: Sendable {
    var display: String?
    var udpPort = 8080
    var tuioPort = 3333
    var httpPort = 8000
    var newSecret = false
    var tlsCert: String?
    var tlsKey: String?
    var bind = "0.0.0.0"
    /// Empty: loopback, link-local and private ranges.
    var allow: [AllowEntry] = []
    var mode: TouchMode = .touchpad
    var monitor: MonitorChoice = .primary
    var fit: Fit = .stretch
    var orientation: OrientationOption = .auto
    var surfaceAspect: SurfaceAspect = .phone
    var multitouch = false
    /// How many people may drive at once (`People`).
    var people = 4
    var backend: BackendChoice = .auto
    var uinputTouchpad: UInputTouchpadChoice = .native
    /// Whether further people get a sway seat of their own (`SwaySeatsChoice`).
    var swaySeats: SwaySeatsChoice = .auto
    var showTouches = false
    var idleReleaseMs = 500
    var reconnect = false
    var view = true
    var maxPacketsPerSecond = Int(SourceRateLimiter.Limits.default.packetsPerSecond)
    var maxBytesPerSecond = Int(SourceRateLimiter.Limits.default.bytesPerSecond)
    var logLevel: Logger.Level = .info
    var surfaceDiagonalMM = SurfaceSize.defaultDiagonalMM
    /// The touchpad's settings but its surface, which `touchpadSettings` makes from the two above.
    var touchpad = TouchpadSettings()
    var presenter = PresenterSettings()
    /// The PIN for LibreOffice Impress; nil: the one kept beside the pairing secret.
    var impressPin: String?

    /// Where each setting came from, by key (`swipe.3-left` for a table's entry); absent: the default.
    var sources: [String: SettingSource] = [:]

    static let defaults = ServeSettings()

    var touchpadSettings: TouchpadSettings {
        var settings = touchpad
        settings.surface = SurfaceSize(aspectLong: Double(surfaceAspect.long) / 1000,
                                       short: Double(surfaceAspect.short) / 1000, diagonalMM: surfaceDiagonalMM)
        return settings
    }

    var allowList: AllowList {
        allow.isEmpty ? .defaultPrivate : AllowList(allow.flatMap(\.ranges))
    }

    func source(of key: String) -> SettingSource { sources[key] ?? .default }
}

/// Where a setting's value came from.
enum SettingSource: String, Sendable {
    case `default` = "default"
    case file = "file"
    case commandLine = "command line"
}

/// One item of `--allow`: a CIDR range, or `any`; kept as written, for `config --print`.
struct AllowEntry: Sendable, CustomStringConvertible {
    var description: String
    var ranges: [CIDR]
}

/// A setting's value that is wrong: a phrase about the value, which the caller puts after the option
/// (`--speed must be -1...1, not 5.0`) or the file's key (`config.toml:2: key "speed": must be ...`).
struct SettingError: Error {
    var phrase: String
    /// For an entry of a table (`[swipe]`): its key and line, which the file's error names.
    var entry: (key: String, line: Int)? = nil

    /// The message for the command line's `--option`.
    func message(option: String) -> String {
        phrase.hasPrefix("must ") ? "--\(option) \(phrase)" : "--\(option): \(phrase)"
    }
}

/// A value of one key of the config file, as TOML gave it.
enum FileValue {
    /// A string, an integer or a float, as text (what a command-line option would take).
    case scalar(String)
    case bool(Bool)
    case list([String])
    /// A table's entries, in file order, each with its line.
    case table([(key: String, line: Int, value: String)])
}

extension ServeSettings {
    /// The defaults, then the config file (`--config FILE`, else `$XDG_CONFIG_HOME/touchbridge/config.toml`
    /// when it exists), then the options given, each through `Setting.all`; and the file's path.
    static func merged(_ options: Serve, environment: [String: String] = ConfigFile.environment) throws
        -> (settings: ServeSettings, file: String?)
    {
        var settings = ServeSettings()
        let table = Setting.all
        let path = try ConfigFile.location(given: options.config, environment: environment)
        if let path {
            for entry in try ConfigFile.entries(path: path) {
                guard let setting = table.first(where: { $0.key == entry.key }) else {
                    throw ConfigFile.error(path, entry.line, entry.key, entry.key == "config"
                        ? "the config file cannot name another config file" : "not a setting of touchbridge")
                }
                do throws(SettingError) {
                    for key in try setting.applyFile(entry.value, &settings) { settings.sources[key] = .file }
                } catch {
                    if let inner = error.entry {
                        throw ConfigFile.error(path, inner.line, "\(entry.key).\(inner.key)", error.phrase)
                    }
                    throw ConfigFile.error(path, entry.line, entry.key, error.phrase)
                }
            }
        }
        for setting in table {
            do throws(SettingError) {
                for key in try setting.applyCommandLine(options, &settings) { settings.sources[key] = .commandLine }
            } catch {
                throw ValidationError(error.message(option: setting.key))
            }
        }
        try settings.checkTogether()
        return (settings, path)
    }

    /// `merged(_:)` for a command: a config file that cannot be read (not there, not a regular file, too
    /// large) is said on standard error and ends the command with its exit status (66 or 65, as
    /// `sysexits.h` says), not a usage error's 64.
    static func read(_ options: Serve, command: String, environment: [String: String] = ConfigFile.environment) throws
        -> (settings: ServeSettings, file: String?)
    {
        do {
            return try merged(options, environment: environment)
        } catch let problem as FileProblem {
            writeError("touchbridge \(command): \(problem)")
            throw ExitCode(problem.exitStatus)
        }
    }
}
