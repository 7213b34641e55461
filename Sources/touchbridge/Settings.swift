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

/// One setting of `serve`: its key (the long option's name, and the config file's key), how the file and the
/// command line give it, and how `config --print` shows it. `Setting.all` is the one table of settings.
struct Setting {
    enum Section: String {
        case general
        case touchpad = "touchpad mode"
        case presenter = "presenter mode"
    }

    /// One line of `config --print`: `toml` nil for an unset optional, printed as a comment with `example`.
    struct Shown {
        var key: String
        var toml: String?
        var example: String = ""
        var note: String?
    }

    let key: String
    let section: Section
    /// A TOML table of entries (`[swipe]`): printed after the plain keys.
    let isTable: Bool
    /// Applies the file's value; returns the keys it set (the key, or `key.entry` for a table's entries).
    /// A table's errors come with the entry's key and line.
    let applyFile: (FileValue, inout ServeSettings) throws(SettingError) -> [String]
    /// Applies the command line's value when it gave one; returns the keys it set.
    let applyCommandLine: (Serve, inout ServeSettings) throws(SettingError) -> [String]
    let show: (ServeSettings) -> [Shown]
}

extension Setting {
    /// A setting of one value: `parse` reads the file's value (and a command-line option given as text),
    /// `check` (a phrase, or nil when fine) is asked of the value from either.
    static func value<V>(
        _ key: String, section: Section = .general, _ path: WritableKeyPath<ServeSettings, V>,
        parse: @escaping (String) throws(SettingError) -> V,
        commandLine: @escaping (Serve) throws(SettingError) -> V?,
        check: @escaping (V) -> String? = { _ in nil },
        show: @escaping (V) -> String, note: String? = nil
    ) -> Setting {
        func set(_ value: V, _ settings: inout ServeSettings) throws(SettingError) -> [String] {
            if let phrase = check(value) { throw SettingError(phrase: phrase) }
            settings[keyPath: path] = value
            return [key]
        }
        return Setting(
            key: key, section: section, isTable: false,
            applyFile: { value, settings throws(SettingError) in
                switch value {
                case .scalar(let text): return try set(parse(text), &settings)
                case .bool(let flag): return try set(parse("\(flag)"), &settings)
                case .list: throw SettingError(phrase: "takes one value, not a list")
                case .table: throw SettingError(phrase: "takes one value, not a table")
                }
            },
            applyCommandLine: { serve, settings throws(SettingError) in
                guard let value = try commandLine(serve) else { return [] }
                return try set(value, &settings)
            },
            show: { settings in [Shown(key: key, toml: show(settings[keyPath: path]), note: note)] })
    }

    /// An option typed by ArgumentParser (`ExpressibleByArgument`): the file's text read the same way.
    static func typed<V: ExpressibleByArgument>(
        _ key: String, section: Section = .general, _ path: WritableKeyPath<ServeSettings, V>,
        commandLine: @escaping (Serve) -> V?, check: @escaping (V) -> String? = { _ in nil },
        show: @escaping (V) -> String, note: String? = nil
    ) -> Setting {
        value(key, section: section, path, parse: { text throws(SettingError) in
            guard let value = V(argument: text) else {
                let values = V.allValueStrings
                throw SettingError(phrase: values.isEmpty ? "\"\(text)\" is not a valid value"
                                   : "\"\(text)\" is not one of \(values.joined(separator: ", "))")
            }
            return value
        }, commandLine: { serve throws(SettingError) in commandLine(serve) }, check: check, show: show, note: note)
    }

    /// A name from a list, like `--mode` (a `String` raw value).
    static func choice<V: ExpressibleByArgument & RawRepresentable<String>>(
        _ key: String, section: Section = .general, _ path: WritableKeyPath<ServeSettings, V>,
        commandLine: @escaping (Serve) -> V?
    ) -> Setting {
        typed(key, section: section, path, commandLine: commandLine, show: { quoted($0.rawValue) })
    }

    /// A whole number in `range`.
    static func integer(_ key: String, _ path: WritableKeyPath<ServeSettings, Int>, in range: ClosedRange<Int>,
                        commandLine: @escaping (Serve) -> Int?) -> Setting {
        typed(key, path, commandLine: commandLine,
              check: { range.contains($0) ? nil : "must be \(rangeText(range)), not \($0)" }, show: { "\($0)" })
    }

    static func number(_ key: String, _ path: WritableKeyPath<ServeSettings, Double>, in range: ClosedRange<Double>,
                       commandLine: @escaping (Serve) -> Double?) -> Setting {
        typed(key, section: .touchpad, path, commandLine: commandLine,
              check: { range.contains($0) ? nil : "must be \(range.lowerBound.shortText)...\(range.upperBound.shortText), not \($0)" },
              show: { $0.tomlText })
    }

    /// A flag: `true`/`false` in the file; the command line's `--name` (and `--no-name` where it has one).
    static func flag(_ key: String, section: Section = .general, _ path: WritableKeyPath<ServeSettings, Bool>,
                     commandLine: @escaping (Serve) -> Bool?, note: String? = nil) -> Setting {
        Setting(
            key: key, section: section, isTable: false,
            applyFile: { value, settings throws(SettingError) in
                guard case .bool(let flag) = value else { throw SettingError(phrase: "must be true or false") }
                settings[keyPath: path] = flag
                return [key]
            },
            applyCommandLine: { serve, settings in
                guard let flag = commandLine(serve) else { return [] }
                settings[keyPath: path] = flag
                return [key]
            },
            show: { settings in [Shown(key: key, toml: "\(settings[keyPath: path])", note: note)] })
    }

    /// A string that may be unset (`--display`): unset, printed as a comment with `example`.
    static func optionalText(_ key: String, section: Section = .general, _ path: WritableKeyPath<ServeSettings, String?>, example: String,
                             unset: String, commandLine: @escaping (Serve) -> String?,
                             check: @escaping (String) -> String? = { _ in nil }) -> Setting {
        let setting = value(key, section: section, path, parse: { text throws(SettingError) in try Parse.text(text) },
                            commandLine: { serve throws(SettingError) in try commandLine(serve).map(Parse.text) },
                            check: { $0.flatMap(check) }, show: { $0.map(quoted) ?? "" })
        return Setting(key: key, section: section, isTable: false, applyFile: setting.applyFile,
                       applyCommandLine: setting.applyCommandLine, show: { settings in
            let value = settings[keyPath: path]
            return [Shown(key: key, toml: value.map(quoted), example: example, note: value == nil ? "unset: \(unset)" : nil)]
        })
    }

    /// A list (`allow = [...]`, a repeated option): the command line's list replaces the file's.
    static func list<Item>(_ key: String, _ path: WritableKeyPath<ServeSettings, [Item]>,
                           parse: @escaping (String) throws(SettingError) -> [Item],
                           commandLine: @escaping (Serve) -> [String], show: @escaping (Item) -> String,
                           emptyNote: String) -> Setting {
        func set(_ texts: [String], _ settings: inout ServeSettings) throws(SettingError) -> [String] {
            var items: [Item] = []
            for text in texts { items += try parse(text) }
            settings[keyPath: path] = items
            return [key]
        }
        return Setting(
            key: key, section: .general, isTable: false,
            applyFile: { value, settings throws(SettingError) in
                switch value {
                case .list(let texts): return try set(texts, &settings)
                case .scalar(let text): return try set([text], &settings)
                case .bool, .table: throw SettingError(phrase: "must be a list of strings")
                }
            },
            applyCommandLine: { serve, settings throws(SettingError) in
                let texts = commandLine(serve)
                return texts.isEmpty ? [] : try set(texts, &settings)
            },
            show: { settings in
                let items = settings[keyPath: path]
                return [Shown(key: key, toml: "[\(items.map(show).joined(separator: ", "))]",
                              note: items.isEmpty ? emptyNote : nil)]
            })
    }

    /// A table of bindings (`[swipe]`, repeated `--swipe NAME=CHORD`): each entry its own setting, so the
    /// command line's `--swipe 3-left=...` replaces the file's `3-left` and keeps its other entries.
    static func bindings(_ key: String, section: Section, names: [String],
                         bind: @escaping (_ name: String, _ chord: String, inout ServeSettings) throws(SettingError) -> String,
                         chord: @escaping (ServeSettings, String) -> KeyChord,
                         commandLine: @escaping (Serve) -> [String]) -> Setting {
        Setting(
            key: key, section: section, isTable: true,
            applyFile: { value, settings throws(SettingError) in
                guard case .table(let entries) = value else {
                    throw SettingError(phrase: "must be a table, like [\(key)] with lines NAME = \"CHORD\"")
                }
                var keys: [String] = []
                for entry in entries {
                    do throws(SettingError) {
                        keys.append("\(key).\(try bind(entry.key, entry.value, &settings))")
                    } catch {
                        throw SettingError(phrase: error.phrase, entry: (entry.key, entry.line))
                    }
                }
                return keys
            },
            applyCommandLine: { serve, settings throws(SettingError) in
                var keys: [String] = []
                for text in commandLine(serve) {
                    let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2 else { throw SettingError(phrase: bindingShapeError(key, text)) }
                    keys.append("\(key).\(try bind(parts[0], parts[1], &settings))")
                }
                return keys
            },
            show: { settings in names.map { Shown(key: "\(key).\($0)", toml: quoted(chord(settings, $0).description)) } })
    }

    /// The phrase for a binding that is not NAME=CHORD (thrown by `bind` for a bad NAME too).
    static func bindingShapeError(_ key: String, _ text: String) -> String {
        switch key {
        case "swipe":
            return "\"\(text)\" is not FINGERS-DIRECTION=CHORD with FINGERS 3 or 4 and DIRECTION left, right, up or down (like 3-left=alt+Right)"
        default:
            return "\"\(text)\" is not ACTION=CHORD with ACTION next, previous, blank, start or end (like next=Right)"
        }
    }
}

/// Readers of settings given as text, shared by the file and the command line.
enum Parse {
    /// Whether `scalar` is a control character a setting may not hold: C0 (NUL, newline, tab, ...), DEL and C1.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `s` with its control characters shown as `\u{..}`, for an error message.
    static func visible(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            if isControl(scalar) { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A string setting: any text without control characters.
    static func text(_ text: String) throws(SettingError) -> String {
        if let c = text.unicodeScalars.first(where: isControl) {
            throw SettingError(phrase: "\"\(visible(text))\" holds the control character \(hex(c)); settings cannot hold NUL or control characters")
        }
        return text
    }

    /// `make(text)`, or `phrase` as the error.
    private static func read<T>(_ text: String, _ make: (String) -> T?, else phrase: @autoclosure () -> String) throws(SettingError) -> T {
        guard let value = make(try Self.text(text)) else { throw SettingError(phrase: phrase()) }
        return value
    }

    /// `--bind`'s text: one numeric IPv4 or IPv6 address (no prefix, no zone, no host name), as the
    /// listeners bind it.
    static func address(_ text: String) throws(SettingError) -> String {
        let text = try Self.text(text)
        guard !text.contains("/"), CIDR(parsing: text) != nil else {
            throw SettingError(phrase: "\"\(text)\" is not an IPv4 or IPv6 address (like 0.0.0.0, 127.0.0.1 or ::)")
        }
        return text
    }

    static func surfaceAspect(_ text: String) throws(SettingError) -> SurfaceAspect {
        try read(text, SurfaceAspect.init(parsing:), else: "must be two positive numbers as long:short (like 19.5:9), not \"\(text)\"")
    }

    static func monitor(_ text: String) throws(SettingError) -> MonitorChoice {
        guard !text.isEmpty else { throw SettingError(phrase: "needs a monitor name, primary or all") }
        return MonitorChoice(parsing: try Self.text(text))
    }

    /// `--allow`'s text: CIDR ranges or `any`, comma-separated.
    static func allow(_ text: String) throws(SettingError) -> [AllowEntry] {
        var entries: [AllowEntry] = []
        for item in try Self.text(text).split(separator: ",").map({ $0.trimmingWhitespace() }) where !item.isEmpty {
            if item == "any" {
                entries.append(AllowEntry(description: item, ranges: [CIDR(parsing: "0.0.0.0/0")!, CIDR(parsing: "::/0")!]))
            } else if let range = CIDR(parsing: item) {
                entries.append(AllowEntry(description: item, ranges: [range]))
            } else {
                throw SettingError(phrase: "\"\(item)\" is not an address or CIDR range (like 192.168.1.0/24 or fe80::/10)")
            }
        }
        return entries
    }

    static func chord(_ text: String) throws(SettingError) -> KeyChord {
        try read(text, KeyChord.init(parsing:), else: "\"\(text)\" is not a key chord: names joined by +, like ctrl+alt+Right, super, alt+Left, or none")
    }

    /// `3-left` and a chord into the swipe bindings; returns the entry's name.
    static func swipe(_ name: String, _ chordText: String, _ settings: inout ServeSettings) throws(SettingError) -> String {
        let gesture = name.split(separator: "-").map(String.init)
        guard gesture.count == 2, let fingers = Int(gesture[0]), fingers == 3 || fingers == 4,
              let direction = SwipeDirection(rawValue: gesture[1].lowercased()) else {
            throw SettingError(phrase: Setting.bindingShapeError("swipe", "\(name)=\(chordText)"))
        }
        let chord = try Self.chord(chordText)
        if fingers == 3 { settings.touchpad.swipes.three[direction] = chord } else { settings.touchpad.swipes.four[direction] = chord }
        return "\(fingers)-\(direction.rawValue)"
    }

    /// `next` and a chord into the presenter's bindings; returns the entry's name.
    static func presenterKey(_ name: String, _ chordText: String, _ settings: inout ServeSettings) throws(SettingError) -> String {
        let action = name.lowercased()
        guard PresenterBindings.names.contains(action) else {
            throw SettingError(phrase: Setting.bindingShapeError("presenter-key", "\(name)=\(chordText)"))
        }
        settings.presenter.keys[action] = try chord(chordText)
        return action
    }
}

/// A TOML basic string: backslash and quote escaped, and any control character as \uXXXX (none gets here:
/// settings cannot hold them; escaping them keeps the output valid TOML regardless).
func quoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case _ where Parse.isControl(scalar): out += "\\u" + Parse.hex(scalar).dropFirst(2)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func rangeText(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)...\(range.upperBound)" }

extension Double {
    /// A TOML float: always with a point (`1.0`), so it reads back as a float.
    var tomlText: String { self == rounded() && abs(self) < 1e15 ? "\(Int(self)).0" : "\(self)" }
    /// `1` or `0.1`, for a range in a message.
    var shortText: String { self == rounded() && abs(self) < 1e15 ? "\(Int(self))" : "\(self)" }
}

extension Substring {
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

extension Setting {
    /// Every setting of `serve`, in `--help`'s order: the one table the file, the command line and
    /// `config --print` go by. (`--config` and the hidden `--debug-*` options are not settings.)
    static var all: [Setting] {
        let port = 0...65535
        return [
            optionalText("display", \.display, example: "\":0\"", unset: "the DISPLAY environment variable",
                         commandLine: \.display),
            integer("udp-port", \.udpPort, in: port, commandLine: \.udpPort.commandLine),
            integer("tuio-port", \.tuioPort, in: port, commandLine: \.tuioPort.commandLine),
            integer("http-port", \.httpPort, in: port, commandLine: \.httpPort.commandLine),
            flag("new-secret", \.newSecret, commandLine: { $0.newSecret ? true : nil }),
            optionalText("tls-cert", \.tlsCert, example: "\"/path/cert.pem\"", unset: "plain HTTP", commandLine: \.tlsCert),
            optionalText("tls-key", \.tlsKey, example: "\"/path/key.pem\"", unset: "plain HTTP", commandLine: \.tlsKey),
            value("bind", \.bind, parse: Parse.address, commandLine: { serve throws(SettingError) in
                try serve.bind.commandLine.map(Parse.address)
            }, show: quoted),
            list("allow", \.allow, parse: Parse.allow, commandLine: \.allow, show: { quoted($0.description) },
                 emptyNote: "empty: loopback, link-local and private ranges"),
            choice("mode", \.mode, commandLine: \.mode.commandLine),
            value("monitor", \.monitor, parse: Parse.monitor, commandLine: { serve throws(SettingError) in
                try serve.monitor.commandLine.map(Parse.monitor)
            }, show: { quoted($0.description) }),
            choice("fit", \.fit, commandLine: \.fit.commandLine),
            choice("orientation", \.orientation, commandLine: \.orientation.commandLine),
            value("surface-aspect", section: .touchpad, \.surfaceAspect, parse: Parse.surfaceAspect,
                  commandLine: { serve throws(SettingError) in try serve.surfaceAspect.map(Parse.surfaceAspect) },
                  show: { quoted($0.description) }),
            flag("multitouch", \.multitouch, commandLine: { $0.multitouch ? true : nil }),
            integer("people", \.people, in: 1...Person.most, commandLine: \.people.commandLine),
            choice("backend", \.backend, commandLine: \.backend.commandLine),
            choice("uinput-touchpad", \.uinputTouchpad, commandLine: \.uinputTouchpad.commandLine),
            flag("show-touches", \.showTouches, commandLine: { $0.showTouches ? true : nil }),
            integer("idle-release-ms", \.idleReleaseMs, in: 50...60_000, commandLine: \.idleReleaseMs.commandLine),
            flag("reconnect", \.reconnect, commandLine: { $0.reconnect ? true : nil }),
            flag("view", \.view, commandLine: \.view),
            integer("max-packets-per-second", \.maxPacketsPerSecond, in: 0...Int.max,
                    commandLine: \.maxPacketsPerSecond.commandLine),
            integer("max-bytes-per-second", \.maxBytesPerSecond, in: 0...Int.max,
                    commandLine: \.maxBytesPerSecond.commandLine),
            choice("log-level", \.logLevel, commandLine: \.logLevel.commandLine),
            number("surface-diagonal-mm", \.surfaceDiagonalMM, in: 20...1000, commandLine: \.touchpad.surfaceDiagonalMM),
            choice("accel", section: .touchpad, \.touchpad.accelProfile, commandLine: \.touchpad.accel),
            number("speed", \.touchpad.speed, in: -1...1, commandLine: \.touchpad.speed),
            choice("smoothing", section: .touchpad, \.touchpad.smoothing, commandLine: \.touchpad.smoothing),
            flag("tap", section: .touchpad, \.touchpad.tapToClick, commandLine: \.touchpad.tap),
            flag("drag-lock", section: .touchpad, \.touchpad.dragLock, commandLine: \.touchpad.dragLock),
            flag("natural-scroll", section: .touchpad, \.touchpad.naturalScroll, commandLine: \.touchpad.naturalScroll),
            number("scroll-speed", \.touchpad.scrollSpeed, in: 0.1...10, commandLine: \.touchpad.scrollSpeed),
            flag("kinetic-scroll", section: .touchpad, \.touchpad.kineticScroll, commandLine: \.touchpad.kineticScroll),
            bindings("swipe", section: .touchpad, names: [3, 4].flatMap { n in SwipeDirection.allCases.map { "\(n)-\($0.rawValue)" } },
                     bind: Parse.swipe, chord: { settings, name in
                         let fingers = name.hasPrefix("3") ? 3 : 4
                         let direction = SwipeDirection(rawValue: String(name.dropFirst(2)))!
                         return settings.touchpad.swipes.chord(fingers: fingers, direction: direction)
                     }, commandLine: \.touchpad.swipe),
            bindings("presenter-key", section: .presenter, names: PresenterBindings.names, bind: Parse.presenterKey,
                     chord: { settings, name in settings.presenter.keys[name] ?? .none }, commandLine: \.presenter.presenterKey),
            flag("draw", section: .presenter, \.presenter.drawing, commandLine: { $0.presenter.draw ? true : nil }),
            optionalText("impress-pin", section: .presenter, \.impressPin, example: "\"0427\"",
                         unset: "the PIN kept in $XDG_STATE_HOME/touchbridge/impress-pin", commandLine: \.presenter.impressPin,
                         check: { ImpressPIN(parsing: $0) == nil ? "\"\($0)\" is not a PIN: four digits, such as 0427" : nil }),
        ]
    }
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

    /// The TLS certificate and key, read as the web server will read them (`TouchFiles`): one that is not
    /// a regular file of at most 1 MiB ends `serve` at once with its exit status (66 or 65), before any
    /// listener is opened, rather than once the UDP port is bound.
    func checkTLSFiles() throws {
        guard let tlsCert, let tlsKey else { return }
        do {
            _ = try BoundedFile.read(tlsCert, as: .certificate)
            _ = try BoundedFile.read(tlsKey, as: .privateKey)
        } catch let problem as FileProblem {
            writeError("touchbridge serve: --tls-\(problem.noun == FileKind.certificate.noun ? "cert" : "key") \(problem)")
            throw ExitCode(problem.exitStatus)
        }
    }

    /// The rules between settings, which may come from the file and the command line apart.
    func checkTogether() throws {
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        if multitouch && backend == .uinput {
            throw ValidationError("--multitouch is for --backend xtest: with uinput every finger is already a real touch")
        }
    }

    /// The settings as a TOML config file that reads back to the same settings, each line's comment saying
    /// where its value came from (default, file, command line); generated from `Setting.all`.
    func toml(configPath: String?) -> String {
        let table = Setting.all
        // The path goes into a comment: a control character in it (from $XDG_CONFIG_HOME) is shown escaped.
        var out = "# touchbridge settings: the defaults, then \(configPath.map(Parse.visible) ?? "no config file"), "
            + "then the command line; each line's comment says which gave it\n"
        func line(_ shown: Setting.Shown, name: String) -> String {
            let note = shown.note.map { "; \($0)" } ?? ""
            guard let toml = shown.toml else { return "# \(name) = \(shown.example)  # \(source(of: shown.key).rawValue)\(note)\n" }
            return "\(name) = \(toml)  # \(source(of: shown.key).rawValue)\(note)\n"
        }
        for section in [Setting.Section.general, .touchpad, .presenter] {
            let settings = table.filter { $0.section == section && !$0.isTable }
            if section != .general && !settings.isEmpty { out += "\n# \(section.rawValue)\n" }
            for setting in settings {
                for shown in setting.show(self) { out += line(shown, name: shown.key) }
            }
        }
        for setting in table where setting.isTable {
            out += "\n[\(setting.key)]  # \(setting.section.rawValue)\n"
            for shown in setting.show(self) { out += line(shown, name: String(shown.key.dropFirst(setting.key.count + 1))) }
        }
        return out
    }
}
