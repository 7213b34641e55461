// The page's text edits (`edit N TEXT`) in the random-sequence property test: its own file, so
// the generator's other cases and these merge apart.
import TouchCore

extension InputGenerator {
    /// Characters a phone's field holds: ASCII, Latin-1 and beyond, a combining mark, emoji (a surrogate
    /// pair on the page, a ZWJ joiner, a skin tone, a flag's regional indicators), CJK, a Tab.
    static let editPieces = ["a", "Z", " ", "é", "e\u{301}", "€", "😀", "👨\u{200D}👩\u{200D}👧", "👍🏽", "🇫🇷", "漢", "に", "\t"]

    /// An edit as the page sends it: backspaces, text, or both, within the bounds (and at them).
    mutating func edit() -> WebCommand {
        let backspaces = chance(10) ? WebCommand.maxEditBackspaces : chance(50) ? 0 : int(1...12)
        var text = ""
        if backspaces == 0 || chance(60) {
            if chance(5) {
                text = String(repeating: "x", count: WebCommand.maxEditScalars)
            } else {
                for _ in 0..<int(1...6) { text += Self.editPieces.randomElement(using: &rng)! }
            }
        }
        return .edit(backspaces: backspaces, text: text)
    }

    /// An `edit` line, valid or not (over a bound, a control character, a bad count), for the parser.
    mutating func editLine() -> String {
        let counts = ["0", "1", "3", "256", "257", "01", "-1", "", "1e2", "99999999999"]
        let texts = ["", " ", "  ", "hello", "world ", "\u{0}", "a\nb", "\u{7F}", "\t", "😀", "e\u{301}",
                     String(repeating: "é", count: 256), String(repeating: "é", count: 257)]
        let count = counts.randomElement(using: &rng)!
        return chance(20) ? "edit \(count)" : "edit \(count) \(texts.randomElement(using: &rng)!)"
    }
}
