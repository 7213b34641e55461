// Impress's notes HTML as plain text: what the page shows is text, never markup.

/// Turns the notes Impress sends ("<html><body>" + the text, each newline made "<br/>", + "</body></html>")
/// into plain text. The text inside is not escaped by Impress, so a "<" that does not open a tag and an
/// "&" that does not begin a known entity are kept as they are.
public enum NotesText {
    /// The plain text of `html`: `<br>` and the end of a paragraph or a division a newline, every other
    /// tag dropped, the entities `&amp; &lt; &gt; &quot; &apos; &nbsp;` and numeric ones decoded; no
    /// control character but "\n" (a tab a space); no more than one empty line in a row; trimmed.
    public static func plain(fromHTML html: String) -> String {
        var out = String.UnicodeScalarView()
        let scalars = Array(html.unicodeScalars)
        var i = 0
        var newlines = 0  // newlines at the end of `out`
        var started = false  // anything but whitespace written

        func emit(_ s: Unicode.Scalar) {
            if s == "\n" {
                guard started, newlines < 2 else { return }
                newlines += 1
                out.append(s)
                return
            }
            var s = s
            if s == "\t" || s == "\u{A0}" { s = " " }
            // Control characters (C0, DEL, C1) and the line and paragraph separators go.
            if s.value < 0x20 || (0x7F...0x9F).contains(s.value) || s == "\u{2028}" || s == "\u{2029}" { return }
            if s == " " && !started { return }
            started = true
            newlines = 0
            out.append(s)
        }

        while i < scalars.count {
            let s = scalars[i]
            if s == "<", let end = tagEnd(scalars, from: i) {
                let name = tagName(scalars[(i + 1)..<end])
                if name == "br" || name == "/p" || name == "/div" || name == "/li" || name == "/h1" || name == "/h2" || name == "/h3" {
                    trimTrailingSpaces(&out)
                    emit("\n")
                }
                i = end + 1
                continue
            }
            if s == "&", let (decoded, next) = entity(scalars, from: i) {
                emit(decoded)
                i = next
                continue
            }
            emit(s == "\r" ? "\n" : s)
            i += 1
        }
        // Trailing whitespace and newlines go.
        while let last = out.last, last == " " || last == "\n" { out.removeLast() }
        return String(out)
    }

    /// `text` on one line: as `plain`, newlines made spaces, cut at `maxBytes` of UTF-8 at a character.
    public static func oneLine(_ text: String, maxBytes: Int) -> String {
        let flat = plain(fromHTML: text).replacing("\n", with: " ")
        var out = ""
        var bytes = 0
        for c in flat {
            bytes += c.utf8.count
            guard bytes <= maxBytes else { break }
            out.append(c)
        }
        return out
    }

    private static func trimTrailingSpaces(_ out: inout String.UnicodeScalarView) {
        while out.last == " " { out.removeLast() }
    }

    /// The index of the ">" that ends a tag opened at `start` ("<" then a letter, "/" or "!"), or nil when
    /// the "<" opens no tag (it is text then). A tag is at most 1,024 scalars long.
    private static func tagEnd(_ s: [Unicode.Scalar], from start: Int) -> Int? {
        guard start + 1 < s.count else { return nil }
        let first = s[start + 1]
        guard isASCIILetter(first) || first == "/" || first == "!" else { return nil }
        var j = start + 1
        while j < s.count, j - start <= 1024 {
            if s[j] == ">" { return j }
            if s[j] == "<" { return nil }
            j += 1
        }
        return nil
    }

    /// A tag's name in lower case, with its "/" if it closes ("br", "/p"); "" for a comment or doctype.
    private static func tagName(_ inner: ArraySlice<Unicode.Scalar>) -> String {
        var name = ""
        for (k, c) in inner.enumerated() {
            if k == 0 && c == "/" {
                name.unicodeScalars.append(c)
            } else if isASCIILetter(c) {
                name.unicodeScalars.append(Unicode.Scalar(UInt8(c.value) | 0x20))
            } else if k > 0 && c >= "0" && c <= "9" {
                name.unicodeScalars.append(c)
            } else {
                break
            }
        }
        return name
    }

    private static func isASCIILetter(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z")
    }

    /// The entity at `start` ("&...;") and the index after it, or nil when it is none known.
    private static func entity(_ s: [Unicode.Scalar], from start: Int) -> (Unicode.Scalar, Int)? {
        var j = start + 1
        var body = ""
        while j < s.count, j - start <= 10, s[j] != ";" {
            body.unicodeScalars.append(s[j])
            j += 1
        }
        guard j < s.count, s[j] == ";" else { return nil }
        let next = j + 1
        switch body {
        case "amp": return ("&", next)
        case "lt": return ("<", next)
        case "gt": return (">", next)
        case "quot": return ("\"", next)
        case "apos": return ("'", next)
        case "nbsp": return (" ", next)
        default: break
        }
        guard body.hasPrefix("#") else { return nil }
        let digits = body.dropFirst()
        let value: UInt32?
        if digits.hasPrefix("x") || digits.hasPrefix("X") {
            value = UInt32(digits.dropFirst(), radix: 16)
        } else {
            value = UInt32(digits, radix: 10)
        }
        guard let value, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, next)
    }
}
