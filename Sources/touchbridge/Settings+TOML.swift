// `config --print`: the settings as a TOML config file that reads back to the same settings.

extension ServeSettings {
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
