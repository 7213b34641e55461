import ArgumentParser
import FoundationEssentials
import Glibc
import TouchCore
import TouchFiles

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

    /// Whether there is a file (or anything) at `path`.
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The file to read: `given` (`--config`; the reader says when it is not there), else the XDG path
    /// if it exists.
    static func location(given: String?, environment: [String: String]) throws -> String? {
        if let given { return given }
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            base = xdg
        } else if let home = environment["HOME"], !home.isEmpty {
            base = home + "/.config"
        } else {
            return nil
        }
        let path = base + "/touchbridge/config.toml"
        return exists(path) ? path : nil
    }

    /// An error about `key` of the file at `path`, on `line`.
    static func error(_ path: String, _ line: Int, _ key: String, _ why: String) -> ValidationError {
        ValidationError("\(path):\(line): key \"\(key)\": \(why)")
    }

    /// Reads and checks the file at `path`: one entry per key, in file order. A path that is not a
    /// regular file of at most 1 MiB (a FIFO, /dev/zero, a directory) throws its `FileProblem` before a
    /// byte is read, without waiting (`TouchFiles`).
    static func entries(path: String) throws -> [Entry] {
        try entries(bytes: try BoundedFile.read(path, as: .config), path: path)
    }

    static func entries(bytes: [UInt8], path: String) throws -> [Entry] {
        let document: TOMLDocument
        do {
            document = try TOMLDocument(bytes: bytes)
        } catch {
            throw ValidationError("\(path):\(error.line): \(error.description)")
        }
        try rejectControlCharacters(in: document, path: path)
        func scalar(_ value: TOMLDocument.Value) -> String? {
            switch value {
            case .string(let s): return s
            case .integer(let i): return "\(i)"
            case .float(let d): return "\(d)"
            default: return nil
            }
        }
        var result: [Entry] = []
        for entry in document.entries {
            let key = entry.key, line = entry.line
            let read: FileValue
            switch entry.value {
            case .string, .integer, .float: read = .scalar(scalar(entry.value) ?? "")
            case .boolean(let b): read = .bool(b)
            case .array(let elements):
                var items: [String] = []
                for element in elements {
                    guard let item = scalar(element.value) else { throw error(path, line, key, "a list may hold strings and numbers only") }
                    items.append(item)
                }
                read = .list(items)
            case .table(let inner):
                var entries: [(key: String, line: Int, value: String)] = []
                for innerEntry in inner {
                    guard case .string(let string) = innerEntry.value else {
                        throw error(path, innerEntry.line, "\(key).\(innerEntry.key)", "expected a string")
                    }
                    entries.append((innerEntry.key, innerEntry.line, string))
                }
                read = .table(entries.sorted { $0.line < $1.line })
            case .dateTime:
                throw error(path, line, key, "dates and times are not settings")
            }
            result.append(Entry(key: key, line: line, value: read))
        }
        return result.sorted { $0.line < $1.line }
    }

    /// Throws for the first key or string value (in file order) that holds a control character, naming
    /// the file, the line and the key. (toml++ hands strings over whole, with their length, so a NUL
    /// inside one is seen here, not cut.)
    static func rejectControlCharacters(in document: TOMLDocument, path: String) throws {
        func firstControl(_ s: String) -> Unicode.Scalar? { s.unicodeScalars.first(where: Parse.isControl) }
        var offenders: [(line: Int, message: String)] = []
        func check(_ entry: TOMLDocument.Entry, table: String?) {
            let name = table.map { "\($0).\(entry.key)" } ?? entry.key
            let line = entry.line
            func offend(_ scalar: Unicode.Scalar, _ what: String) {
                let code = Parse.hex(scalar)
                offenders.append((line, "\(path):\(line): key \"\(Parse.visible(name))\": \(what) holds the control character \(code); "
                    + "settings cannot hold NUL or control characters"))
            }
            if let c = firstControl(entry.key) { offend(c, "the key"); return }
            switch entry.value {
            case .string(let s):
                if let c = firstControl(s) { offend(c, "the string \"\(Parse.visible(s))\"") }
            case .array(let elements):
                for case .string(let s) in elements.map(\.value) {
                    if let c = firstControl(s) { offend(c, "the string \"\(Parse.visible(s))\""); return }
                }
            case .table(let inner) where table == nil:
                for innerEntry in inner { check(innerEntry, table: entry.key) }
            default:
                break
            }
        }
        for entry in document.entries { check(entry, table: nil) }
        if let first = offenders.min(by: { $0.line < $1.line }) { throw ValidationError(first.message) }
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
        let (settings, path) = try ServeSettings.read(try Serve.parse(serveOptions), command: "config")
        guard print else {
            Swift.print(path.map { "config file: \($0)" } ?? "no config file")
            return
        }
        Swift.print(settings.toml(configPath: path), terminator: "")
    }
}
