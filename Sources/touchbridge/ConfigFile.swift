import ArgumentParser
import Foundation
import TOMLKit
import TouchCore

/// The config file: TOML whose keys are the long option names of `serve` (`Setting.all`):
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
/// when the variable is unset) when it exists. Each key is read into `ServeSettings` by its entry of
/// `Setting.all`, the same reader the command line's text goes through, so a bad file gets an error that
/// names the file, the line and the key.
///
/// No setting may hold NUL or another control character (U+0000–U+001F, U+007F–U+009F: a newline in a
/// display name, a tab in a key chord): a string with one is rejected, in the file (with its file, line
/// and key) and on the command line, rather than cut short or passed on. So `config --print`, whose
/// strings are escaped as TOML basic strings, always writes a file that reads back to the same settings.
enum ConfigFile {
    /// One key of the file, in file order.
    struct Entry {
        var key: String
        var line: Int
        var value: FileValue
    }

    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The file to read: `given` (`--config`; it must exist), else the XDG path if it exists.
    static func location(given: String?, environment: [String: String]) throws -> String? {
        if let given {
            guard FileManager.default.fileExists(atPath: given) else { throw ValidationError("--config: \(given) does not exist") }
            return given
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
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// An error about `key` of the file at `path`, on `line`.
    static func error(_ path: String, _ line: Int, _ key: String, _ why: String) -> ValidationError {
        ValidationError("\(path):\(line): key \"\(key)\": \(why)")
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
            func scalar(_ value: any TOMLValueConvertible) -> String? {
                switch value.type {
                case .string: return value.string
                case .int: return value.int.map { "\($0)" }
                case .double: return value.double.map { "\($0)" }
                default: return nil
                }
            }
            let read: FileValue
            switch value.type {
            case .string, .int, .double: read = .scalar(scalar(value) ?? "")
            case .bool: read = .bool(value.bool ?? false)
            case .array:
                var items: [String] = []
                for element in value.array ?? [] {
                    guard let item = scalar(element) else { throw error(path, line, key, "a list may hold strings and numbers only") }
                    items.append(item)
                }
                read = .list(items)
            case .table:
                let inner = value.table ?? TOMLTable()
                var entries: [(key: String, line: Int, value: String)] = []
                for innerKey in inner.keys {
                    let innerLine = lineOf(key: innerKey, table: key, in: text)
                    guard let string = inner[innerKey]?.string else {
                        throw error(path, innerLine, "\(key).\(innerKey)", "expected a string")
                    }
                    entries.append((innerKey, innerLine, string))
                }
                read = .table(entries.sorted { $0.line < $1.line })
            default:
                throw error(path, line, key, "dates and times are not settings")
            }
            result.append(Entry(key: key, line: line, value: read))
        }
        return result.sorted { $0.line < $1.line }
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
        func firstControl(_ s: String) -> Unicode.Scalar? { s.unicodeScalars.first(where: Parse.isControl) }
        var offenders: [(line: Int, message: String)] = []
        func check(_ value: Any, key: String, table: String?) {
            let name = table.map { "\($0).\(key)" } ?? key
            let line = lineOf(key: key, table: table, in: text)
            func offend(_ scalar: Unicode.Scalar, _ what: String) {
                let code = Parse.hex(scalar)
                offenders.append((line, "\(path):\(line): key \"\(Parse.visible(name))\": \(what) holds the control character \(code); "
                    + "settings cannot hold NUL or control characters"))
            }
            if let c = firstControl(key) { offend(c, "the key"); return }
            switch value {
            case let s as String:
                if let c = firstControl(s) { offend(c, "the string \"\(Parse.visible(s))\"") }
            case let list as [Any]:
                for case let s as String in list {
                    if let c = firstControl(s) { offend(c, "the string \"\(Parse.visible(s))\""); return }
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
        let (settings, path) = try ServeSettings.merged(try Serve.parse(serveOptions))
        guard print else {
            Swift.print(path.map { "config file: \($0)" } ?? "no config file")
            return
        }
        Swift.print(settings.toml(configPath: path), terminator: "")
    }
}
