// String helpers of the settings: TOML's quoted strings and floats, and the ranges said in messages.

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
