import ArgumentParser
import TouchCore

// One setting of `serve`, and the builders that make each kind (a value, a choice, a flag, a list, a table
// of bindings) for the table, `Setting.all` (SettingTable.swift).

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
