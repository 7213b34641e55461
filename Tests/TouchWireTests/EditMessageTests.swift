// The page's text edits on the wire: `edit N [TEXT]`, its bounds, and the log's reason when
// an edit is refused.
import Testing
import TouchCore
import TouchWire

@Suite struct EditMessageTests {
    @Test func editsParse() {
        #expect(WebCommand(parsing: "edit 0 w") == .edit(backspaces: 0, text: "w"))
        #expect(WebCommand(parsing: "edit 3") == .edit(backspaces: 3, text: ""))
        #expect(WebCommand(parsing: "edit 2 the ") == .edit(backspaces: 2, text: "the "))
        // The text starts after exactly one space: a typed space is a space.
        #expect(WebCommand(parsing: "edit 0  ") == .edit(backspaces: 0, text: " "))
        #expect(WebCommand(parsing: "edit 0 \t") == .edit(backspaces: 0, text: "\t"))
        // Every scalar counts once: a ZWJ family is five, a flag two, e + combining acute two.
        let family = "👨\u{200D}👩\u{200D}👧"
        #expect(WebCommand(parsing: Substring("edit 1 " + family + "🇫🇷e\u{301}")) == .edit(backspaces: 1, text: family + "🇫🇷e\u{301}"))
        let most = String(repeating: "漢", count: WebCommand.maxEditScalars)
        #expect(WebCommand(parsing: Substring("edit 256 " + most)) == .edit(backspaces: 256, text: most))
    }

    @Test(arguments: ["edit", "edit ", "edit 0", "edit 0 ", "edit 3 ", "edit 257", "edit 01 a", "edit -1", "edit +1 a",
                      "edit 1e2", "edit 0x10 a", "edit 99999999999999999999 a", "edit a", "edit 1 a\nb", "edit 1 \r",
                      "edit 0 \u{7F}", "edit 0 \u{0}", "edit\t1 a", "edits 1 a",
                      "edit 0 " + String(repeating: "x", count: 257)])
    func editsOutOfTheirBoundsAreRefused(_ text: String) {
        #expect(WebCommand(parsing: Substring(text)) == nil, "\(text.debugDescription) parsed")
    }

    /// The log says which bound an edit broke; any other message is "not a command".
    @Test func aRefusedEditSaysWhy() {
        func why(_ text: String) -> String? { Array(text.utf8).withUnsafeBytes { WebCommand.refusal(of: $0) } }
        #expect(why("edit 300 a") == "an edit of 300 backspaces (at most 256 a message)")
        #expect(why("edit 0 " + String(repeating: "é", count: 300)) == "an edit of 300 characters (at most 256 a message)")
        #expect(why("edit 0 a\u{1B}") == "an edit with a control character (U+1B) in its text")
        #expect(why("edit x") == "an edit whose count of backspaces is not a decimal number")
        #expect(why("edit") == "an edit with no count of backspaces")
        #expect(why("edit 0") == "an edit that changes nothing")
        #expect(why("edit 2 ") == "an edit with a space and no text after it")
        #expect(why("edit 2 a") == nil, "a valid edit has no refusal")
        #expect(why("editor 2") == nil && why("texts 2") == nil)
        #expect(Array("edit 1 ".utf8 + [0xFF]).withUnsafeBytes { WebCommand.refusal(of: $0) } == "an edit that is not UTF-8")
    }

    /// `text` (the page before `edit`) refuses what `edit` refuses, and the log says why in the same words.
    @Test(arguments: ["text a\u{1B}[2J", "text \u{0}", "text \u{7F}", "text a\nb", "text \r", "text", "text ",
                      "text " + String(repeating: "x", count: 257)])
    func aTextCommandRefusesWhatAnEditRefuses(_ text: String) {
        #expect(WebCommand(parsing: Substring(text)) == nil, "\(text.debugDescription) parsed")
        #expect(Array(text.utf8).withUnsafeBytes { WebCommand.refusal(of: $0) } != nil, "\(text.debugDescription) has no reason")
    }

    @Test func aRefusedTextSaysWhy() {
        func why(_ text: String) -> String? { Array(text.utf8).withUnsafeBytes { WebCommand.refusal(of: $0) } }
        #expect(why("text a\u{1B}") == "a text command with a control character (U+1B) in its text")
        #expect(why("text \u{7F}") == "a text command with a control character (U+7F) in its text")
        #expect(why("text " + String(repeating: "é", count: 300)) == "a text command of 300 characters (at most 256 a message)")
        #expect(why("text") == "a text command with no text")
        #expect(why("text a\tb") == nil, "a valid text has no refusal")
        #expect(WebCommand(parsing: "text a\tb€") == .text("a\tb€"))
    }
}
