import ArgumentParser
import TouchCore
import TouchWire

/// The options of presenter mode; `settings()` turns them into the core's `PresenterSettings`. (The
/// config file's `[presenter-key]` table arrives as `--presenter-key` options: see `ConfigFile`.)
struct PresenterOptions: ParsableArguments {
    @Option(name: .customLong("presenter-key"), help: ArgumentHelp(
        "Bind a presenter action to a key chord, as ACTION=CHORD with ACTION next (one-finger tap, swipe left), previous (swipe right), blank (two-finger tap), start or end (the web page's Start show and End show buttons) (e.g. next=Right, blank=period); repeatable. Defaults: next=Page_Down, previous=Page_Up, blank=b, start=F5, end=Escape.",
        valueName: "binding"))
    var presenterKey: [String] = []

    @Flag(help: ArgumentHelp("In presenter mode, start with drawing on: each finger strokes its path on the monitor, strokes kept until a three-finger tap clears them; a two-finger long press turns drawing on and off."))
    var draw = false

    func settings() throws -> PresenterSettings {
        var s = PresenterSettings()
        s.drawing = draw
        for binding in presenterKey { try Self.bind(binding, in: &s.keys, source: "--presenter-key") }
        return s
    }

    /// Applies `next=Right` to `bindings`.
    static func bind(_ text: String, in bindings: inout PresenterBindings, source: String) throws {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, PresenterBindings.names.contains(parts[0].lowercased()) else {
            throw ValidationError("\(source): \"\(text)\" is not ACTION=CHORD with ACTION next, previous, blank, start or end (like next=Right)")
        }
        guard let chord = KeyChord(parsing: parts[1]) else {
            throw ValidationError("\(source): \"\(parts[1])\" is not a key chord: names joined by +, like ctrl+alt+Right, super, alt+Left, or none")
        }
        bindings[parts[0].lowercased()] = chord
    }
}
