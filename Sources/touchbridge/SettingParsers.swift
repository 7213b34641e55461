import ArgumentParser
import Logging
import TouchCore
import TouchDaemon
import TouchFiles
import TouchImpress
import TouchOutput

// The readers of settings given as text, shared by the config file and the command line.

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
