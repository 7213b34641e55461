import ArgumentParser
import Foundation
import TOMLKit
import TouchCore

/// The config file: TOML whose keys are the long option names of `serve`, so every option — including
/// ones added later — can live in the file with no extra code:
///
/// ```toml
/// udp-port = 8080              # --udp-port 8080
/// natural-scroll = true        # --natural-scroll   (false: --no-natural-scroll)
/// allow = ["192.168.1.0/24"]   # --allow, repeated
/// [swipe]                      # a table: --swipe 3-left=alt+Right for each key
/// 3-left = "alt+Right"
/// ```
///
/// The file is read from `--config FILE`, else `$XDG_CONFIG_HOME/touchbridge/config.toml` (`~/.config`
/// when the variable is unset) when it exists. Its settings become command-line options placed before
/// the real ones, and an option given on the command line replaces the file's value (lists included).
/// Each key is checked on its own by the same parser as the command line, so a bad file gets an error
/// that names the file, the line and the key.
///
/// No setting may hold NUL or another control character (U+0000–U+001F, U+007F–U+009F: a newline in a
/// display name, a tab in a key chord): a string with one is rejected, in the file (with its file, line
/// and key) and on the command line, rather than cut short or passed on. So `config --print`, whose
/// strings are escaped as TOML basic strings, always writes a file that reads back to the same settings.
enum ConfigFile {
    struct Entry {
        var key: String
        var line: Int
        var arguments: [String]
    }

    /// The file to read: `--config FILE` / `--config=FILE` among `arguments`, else the XDG path if it
    /// exists. `explicit` tells whether the user named it (then it must exist).
    static func location(in arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (path: String, explicit: Bool)?
    {
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a == "--" { break }
            if a == "--config", i + 1 < arguments.count { return (arguments[i + 1], true) }
            if a.hasPrefix("--config=") { return (String(a.dropFirst("--config=".count)), true) }
            i += 1
        }
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            base = xdg
        } else if let home = environment["HOME"], !home.isEmpty {
            base = home + "/.config"
        } else {
            return nil
        }
        let path = base + "/touchbridge/config.toml"
        return FileManager.default.fileExists(atPath: path) ? (path, false) : nil
    }

    /// Reads and checks the file at `path`: one entry per key, in file order.
    static func entries(path: String) throws -> [Entry] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("\(path): cannot read the config file: \(error.localizedDescription)")
        }
        return try entries(text: text, path: path)
    }

    static func entries(text: String, path: String) throws -> [Entry] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ValidationError("\(path):\(error.source.begin.line): \(error.description)")
        }
        try rejectControlCharacters(in: table, text: text, path: path)
        var result: [Entry] = []
        for key in table.keys {
            guard let value = table[key] else { continue }
            let line = lineOf(key: key, table: nil, in: text)
            func bad(_ why: String) -> ValidationError {
                ValidationError("\(path):\(line): key \"\(key)\": \(why)")
            }
            if key == "config" { throw bad("the config file cannot name another config file") }
            var arguments: [String] = []
            switch value.type {
            case .string: arguments = ["--\(key)=\(value.string!)"]
            case .int: arguments = ["--\(key)=\(value.int!)"]
            case .double: arguments = ["--\(key)=\(value.double!)"]
            case .bool: arguments = [value.bool! ? "--\(key)" : "--no-\(key)"]
            case .array:
                for element in value.array! {
                    switch element.type {
                    case .string: arguments.append("--\(key)=\(element.string!)")
                    case .int: arguments.append("--\(key)=\(element.int!)")
                    case .double: arguments.append("--\(key)=\(element.double!)")
                    default: throw bad("a list may hold strings and numbers only")
                    }
                }
            case .table:
                // Each entry of a table checked alone, so its error names its own line.
                let inner = value.table!
                for innerKey in inner.keys {
                    let innerLine = lineOf(key: innerKey, table: key, in: text)
                    func badEntry(_ why: String) -> ValidationError {
                        ValidationError("\(path):\(innerLine): key \"\(key).\(innerKey)\": \(why)")
                    }
                    guard let s = inner[innerKey]?.string else { throw badEntry("expected a string") }
                    let argument = "--\(key)=\(innerKey)=\(s)"
                    do {
                        _ = try Serve.parse([argument])
                    } catch {
                        throw badEntry(Serve.message(for: error))
                    }
                    arguments.append(argument)
                }
            default:
                throw bad("dates and times are not settings")
            }
            // Each key alone through the command-line parser: unknown keys and bad values fail here. A key
            // that needs a partner to validate (--tls-cert and --tls-key go together) is checked with a
            // stand-in for it; the pair itself is checked when the whole command line is parsed.
            let partner = ["tls-cert": ["--tls-key=-"], "tls-key": ["--tls-cert=-"]][key] ?? []
            do {
                _ = try Serve.parse(arguments + partner)
            } catch {
                if value.type == .bool, value.bool == false, (try? Serve.parse(["--\(key)"])) != nil {
                    // A plain flag with no --no- form: false is its default.
                    arguments = []
                } else {
                    var message = Serve.message(for: error)
                    if message.hasPrefix("Unknown option") { message = "not a setting of touchbridge (\(message))" }
                    throw bad(message)
                }
            }
            result.append(Entry(key: key, line: line, arguments: arguments))
        }
        return result.sorted { $0.line < $1.line }
    }

    /// Whether `scalar` is a control character a setting may not hold: C0 (NUL, newline, tab, ...), DEL
    /// and C1.
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

    /// Throws for the first key or string value (in file order) that holds a control character, naming
    /// the file, the line and the key.
    ///
    /// TOMLKit hands strings over as C strings, cut at the first NUL (`"touchscreen\u0000xyz"` would
    /// read as `touchscreen`), so the strings checked here come whole from the parser's own JSON
    /// rendering of the table, which escapes every control character.
    static func rejectControlCharacters(in table: TOMLTable, text: String, path: String) throws {
        // Unicode strings allowed: otherwise toml++ writes non-ASCII as TOML's `\U0001F600`, which JSON lacks.
        let json = table.convert(to: .json, options: [.quoteDateAndTimes, .quoteInfinitesAndNaNs, .allowUnicodeStrings])
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw ValidationError("\(path): cannot check the strings of the config file")
        }
        func firstControl(_ s: String) -> Unicode.Scalar? { s.unicodeScalars.first(where: isControl) }
        var offenders: [(line: Int, message: String)] = []
        func check(_ value: Any, key: String, table: String?) {
            let name = table.map { "\($0).\(key)" } ?? key
            let line = lineOf(key: key, table: table, in: text)
            func offend(_ scalar: Unicode.Scalar, _ what: String) {
                let code = String(format: "U+%04X", scalar.value)
                offenders.append((line, "\(path):\(line): key \"\(visible(name))\": \(what) holds the control character \(code); "
                    + "settings cannot hold NUL or control characters"))
            }
            if let c = firstControl(key) { offend(c, "the key"); return }
            switch value {
            case let s as String:
                if let c = firstControl(s) { offend(c, "the string \"\(visible(s))\"") }
            case let list as [Any]:
                for case let s as String in list {
                    if let c = firstControl(s) { offend(c, "the string \"\(visible(s))\""); return }
                }
            case let inner as [String: Any] where table == nil:
                for (innerKey, innerValue) in inner { check(innerValue, key: innerKey, table: key) }
            default:
                break
            }
        }
        for (key, value) in object { check(value, key: key, table: nil) }
        if let first = offenders.min(by: { $0.line < $1.line }) { throw ValidationError(first.message) }
    }

    /// The first line (1-based) that sets `key`, in `[table]` when given; 0 if not found.
    static func lineOf(key: String, table: String?, in text: String) -> Int {
        var current: String? = nil
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                current = String(line.dropFirst().prefix { $0 != "]" }).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard current == table else { continue }
            for candidate in [key, "\"\(key)\"", "'\(key)'"] where line.hasPrefix(candidate) {
                let rest = line.dropFirst(candidate.count).drop { $0 == " " || $0 == "\t" }
                if rest.hasPrefix("=") { return i + 1 }
            }
        }
        return 0
    }

    /// `serveArguments` (the command line after `serve`) with the config file's settings in front,
    /// except those the command line gives itself.
    /// An argument holding a control character is rejected, as it would be in the file.
    static func apply(to serveArguments: [String]) throws -> (arguments: [String], path: String?) {
        for argument in serveArguments {
            if let c = argument.unicodeScalars.first(where: isControl) {
                throw ValidationError("the option \"\(visible(argument))\" holds the control character U+\(String(format: "%04X", c.value)); "
                    + "settings cannot hold NUL or control characters")
            }
        }
        guard let (path, explicit) = location(in: serveArguments) else { return (serveArguments, nil) }
        if explicit && !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("--config: \(path) does not exist")
        }
        let given = Set(serveArguments.prefix { $0 != "--" }.compactMap { a -> String? in
            guard a.hasPrefix("--") else { return nil }
            var name = String(a.dropFirst(2).prefix { $0 != "=" })
            if name.hasPrefix("no-") { name.removeFirst(3) }
            return name
        })
        var fromFile: [String] = []
        for entry in try entries(path: path) where !given.contains(entry.key) {
            fromFile += entry.arguments
        }
        return (fromFile + serveArguments, path)
    }
}

/// `touchbridge config --print`: the effective settings as TOML.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the effective settings: the defaults, then the config file, then the options given.",
        discussion: """
            Takes the same options as serve (and --config FILE). The output is a valid config file.
            """
    )

    @Flag(help: "Print the effective settings as TOML.")
    var print = false

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Options of serve, as they would be given to it.", valueName: "serve-options"))
    var serveOptions: [String] = []

    func run() throws {
        let (arguments, path) = try ConfigFile.apply(to: serveOptions)
        let serve = try Serve.parse(arguments)
        guard print else {
            Swift.print(path.map { "config file: \($0)" } ?? "no config file")
            return
        }
        Swift.print(try serve.effectiveSettingsTOML(configPath: path), terminator: "")
    }
}

extension Serve {
    /// The settings `serve` would run with, as a TOML config file that reads back to the same settings.
    /// Every option of `serve` has a line here (a test checks it against `--help`).
    func effectiveSettingsTOML(configPath: String?) throws -> String {
        let tp = try touchpad.settings(surfaceAspect: surfaceAspect)
        let pr = try presenter.settings()
        // A TOML basic string: backslash and quote escaped, and any control character as \uXXXX (none
        // gets here: `ConfigFile` rejects them; escaping them keeps the output valid TOML regardless).
        func q(_ s: String) -> String {
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\\": out += "\\\\"
                case "\"": out += "\\\""
                case _ where ConfigFile.isControl(scalar): out += String(format: "\\u%04X", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        func num(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : "\(d)" }
        // The path goes into a comment: a control character in it (from $XDG_CONFIG_HOME) is shown escaped.
        var out = "# touchbridge settings: the defaults, then \(configPath.map(ConfigFile.visible) ?? "no config file"), then the command line\n"
        out += display.map { "display = \(q($0))\n" } ?? "# display = \":0\"  # unset: the DISPLAY environment variable\n"
        out += "udp-port = \(udpPort)\n"
        out += "tuio-port = \(tuioPort)\n"
        out += "http-port = \(httpPort)\n"
        out += "new-secret = \(newSecret)\n"
        out += tlsCert.map { "tls-cert = \(q($0))\n" } ?? "# tls-cert = \"/path/cert.pem\"  # unset: plain HTTP\n"
        out += tlsKey.map { "tls-key = \(q($0))\n" } ?? "# tls-key = \"/path/key.pem\"\n"
        out += "bind = \(q(bind))\n"
        out += "allow = [\(allow.map(q).joined(separator: ", "))]\(allow.isEmpty ? "  # empty: loopback, link-local and private ranges" : "")\n"
        out += "mode = \(q(mode.rawValue))\n"
        out += "monitor = \(q(monitor))\n"
        out += "fit = \(q(fit.rawValue))\n"
        out += "orientation = \(q(orientation.rawValue))\n"
        out += "multitouch = \(multitouch)\n"
        out += "show-touches = \(showTouches)\n"
        out += "backend = \(q(backend.rawValue))\n"
        out += "uinput-touchpad = \(q(uinputTouchpad.rawValue))\n"
        out += "draw = \(pr.drawing)  # presenter mode\n"
        out += "idle-release-ms = \(idleReleaseMs)\n"
        out += "reconnect = \(reconnect)\n"
        out += "max-packets-per-second = \(maxPacketsPerSecond)\n"
        out += "max-bytes-per-second = \(maxBytesPerSecond)\n"
        out += "log-level = \(q(logLevel.rawValue))\n"
        out += "\n# touchpad mode\n"
        out += "surface-aspect = \(q(surfaceAspect ?? "19.5:9"))\n"
        out += "surface-diagonal-mm = \(num(tp.surface.diagonalMM))\n"
        out += "accel = \(q(tp.accelProfile.rawValue))\n"
        out += "speed = \(num(tp.speed))\n"
        out += "smoothing = \(q(tp.smoothing.rawValue))\n"
        out += "tap = \(tp.tapToClick)\n"
        out += "drag-lock = \(tp.dragLock)\n"
        out += "natural-scroll = \(tp.naturalScroll)\n"
        out += "scroll-speed = \(num(tp.scrollSpeed))\n"
        out += "kinetic-scroll = \(tp.kineticScroll)\n"
        out += "\n[swipe]\n"
        for (fingers, table) in [(3, tp.swipes.three), (4, tp.swipes.four)] {
            for direction in SwipeDirection.allCases {
                out += "\(fingers)-\(direction.rawValue) = \(q((table[direction] ?? .none).description))\n"
            }
        }
        out += "\n# presenter mode\n[presenter-key]\n"
        for name in PresenterBindings.names {
            out += "\(name) = \(q((pr.keys[name] ?? .none).description))\n"
        }
        return out
    }
}

extension SurfaceSize {
    var diagonalMM: Double { ((widthMM * widthMM + heightMM * heightMM).squareRoot() * 1000).rounded() / 1000 }
}
