// The phone's own keyboard, end to end: the real daemon on Xvfb (XTest), its page in a real
// headless Chromium, and the text read where a user reads it: a real X text client (xterm, `cat` behind
// a tty with echo off, so the tty's line discipline applies BackSpace and Return hands over the line).
// The keyboard is driven the way a phone's reaches the page: DevTools' input-method calls
// (`Input.imeSetComposition`, `Input.insertText`) and key events. Every line typed must arrive exactly as
// the page's field showed it, and the field must show what the page says the desktop has.
import Foundation
import Testing

/// xterm running `cat > file` with the tty's echo off: each line ends up in `file` when Return is typed.
final class TypedTextClient {
    let file: String
    private let child: ChildProcess

    /// Starts xterm at the top-left corner of `display`'s screen and returns once its `cat` runs and its
    /// window is viewable; the pointer must be over it (no window manager: the keyboard goes to the window
    /// under the pointer, and a key typed before the window is mapped goes to the root window, lost).
    init(display: String) throws {
        let name = "touchbridge-typed-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let base = NSTemporaryDirectory() + name
        file = base + ".txt"
        let ready = base + ".ready"
        child = try ChildProcess(
            name: "xterm", executable: "/usr/bin/xterm",
            arguments: ["-display", display, "-u8", "-title", name, "-geometry", "100x8+0+0", "-e", "sh", "-c",
                        "stty -echo iutf8 && : > \(ready) && exec cat > \(file)"],
            environment: ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"])
        let deadline = Date().addingTimeInterval(20)
        do {
            // xterm starts its shell before it flushes its map request: the shell's `ready` can come first.
            while try !FileManager.default.fileExists(atPath: ready) || !FileManager.default.fileExists(atPath: file)
                    || !Self.isViewable(title: name, display: display) {
                guard Date() < deadline, child.isRunning else {
                    throw RigError("xterm did not start its `cat` with its window viewable within 20 s\n" + child.outputTail())
                }
                usleep(20_000)
            }
        } catch {
            close()
            throw error
        }
        try? FileManager.default.removeItem(atPath: ready)
    }

    /// Whether the window named `title` is mapped and all its ancestors too (`xwininfo`'s map state; false
    /// while there is no such window).
    private static func isViewable(title: String, display: String) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/xwininfo")
        process.arguments = ["-display", display, "-name", title]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw RigError("xwininfo could not run (Debian: x11-utils): \(error)") }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.contains("Map State: IsViewable")
    }

    /// The lines handed over so far (each ended by Return).
    var lines: [String] {
        guard let data = FileManager.default.contents(atPath: file) else { return [] }
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Waits for line `index` (0-based) to be handed over; nil after `timeout` s.
    func waitForLine(_ index: Int, timeout: Double = 30) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let now = lines
            if now.count > index { return now[index] }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    func close() {
        _ = child.stop(timeout: 2)
        try? FileManager.default.removeItem(atPath: file)
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebKeyboardTests {
    /// A connected page in touchpad mode, an xterm under the pointer, the page's field focused and its
    /// messages kept (`window.tbSentLog`).
    final class Typing {
        let rig: Rig
        let browser: Browser
        let client: TypedTextClient
        let state: String
        var linesTyped = 0

        init() throws {
            let (rig, browser, state, _) = try WebRemoteTests.open(mode: "touchpad")
            self.rig = rig
            self.browser = browser
            self.state = state
            do {
                client = try TypedTextClient(display: rig.xvfb.display)
                try rig.observer.warp(x: 60, y: 40)
                _ = try browser.evaluate("""
                    window.tbSentLog = []; const plain = WebSocket.prototype.send;
                    WebSocket.prototype.send = function (s) { tbSentLog.push(s); return plain.call(this, s); };
                    document.getElementById('text').focus(); true
                    """)
            } catch {
                browser.close()
                rig.stop()
                try? FileManager.default.removeItem(atPath: state)
                throw error
            }
        }

        func close() {
            client.close()
            browser.close()
            rig.stop()
            try? FileManager.default.removeItem(atPath: state)
        }

        func compose(_ text: String, replacing range: Range<Int>? = nil) throws {
            var params: [String: Any] = ["text": text, "selectionStart": text.utf16.count, "selectionEnd": text.utf16.count]
            if let range { params["replacementStart"] = range.lowerBound; params["replacementEnd"] = range.upperBound }
            try browser.cdp("Input.imeSetComposition", params)
        }

        func insert(_ text: String) throws { try browser.cdp("Input.insertText", ["text": text]) }

        /// A key pressed and released on the phone's keyboard (`modifiers`: 2 is Ctrl).
        func key(_ name: String, code: String? = nil, _ virtualKey: Int, modifiers: Int = 0, commands: [String] = []) throws {
            var down: [String: Any] = ["type": "rawKeyDown", "key": name, "code": code ?? name, "windowsVirtualKeyCode": virtualKey, "modifiers": modifiers]
            if !commands.isEmpty { down["commands"] = commands }
            try browser.cdp("Input.dispatchKeyEvent", down)
            try browser.cdp("Input.dispatchKeyEvent", ["type": "keyUp", "key": name, "code": code ?? name, "windowsVirtualKeyCode": virtualKey, "modifiers": modifiers])
        }

        func backspace(ctrl: Bool = false) throws { try key("Backspace", 8, modifiers: ctrl ? 2 : 0) }

        var field: String { get throws { try browser.evaluate("document.getElementById('text').value") as? String ?? "<none>" } }

        /// The field shows `expected`, and the page says the desktop has it.
        func expectField(_ expected: String, _ what: String) throws {
            let q = WebRemoteTests.quoted(expected)
            try browser.wait(for: "document.getElementById('text').value === \(q) && tbLineSent() === \(q)",
                             "\(what): the field and what the page sent should both be \(expected.debugDescription); the field is \(try field.debugDescription)")
        }

        /// Enter on the phone's keyboard: the line goes to the desktop with Return, and the field clears.
        /// Returns the line the X client got.
        @discardableResult
        func enter(expecting expected: String, _ what: String) throws -> String {
            try key("Enter", 13)
            try browser.wait(for: "document.getElementById('text').value === '' && tbLineSent() === ''", "\(what): the field clears after Enter")
            let index = linesTyped
            linesTyped += 1
            guard let line = client.waitForLine(index) else {
                throw RigError("\(what): the X client got no line \(index + 1) within 30 s (it has \(client.lines))\n" + rig.daemon.outputTail())
            }
            #expect(line == expected, "\(what): the X client got \(line.debugDescription), the phone showed \(expected.debugDescription)")
            return line
        }
    }

    /// Every way a phone's keyboard fills a field, one line each, read back from xterm.
    @Test func everyWayAPhoneTypesArrivesAsTheFieldShowsIt() throws {
        let t = try Typing()
        defer { t.close() }

        // A predictive keyboard (Gboard's default): each word composed letter by letter, committed, then a
        // space. Before, this typed "wwoworworlworld".
        for word in ["hello", "world"] {
            for n in 1...word.count { try t.compose(String(word.prefix(n))) }
            try t.insert(word)
            try t.insert(" ")
        }
        try t.expectField("hello world ", "predictive")
        let words = try t.browser.evaluate("tbSentLog.filter(s => s.startsWith('edit ')).length") as? Int ?? 0
        #expect(words == 12, "one edit per letter and per space, none repeated: \(words) edits")
        try t.enter(expecting: "hello world ", "predictive")

        // Autocorrect replaces the word before the caret: by selection (as insertReplacementText does) …
        for c in ["t", "e", "h"] { try t.insert(c) }
        _ = try t.browser.evaluate("document.getElementById('text').setSelectionRange(0, 3); true")
        try t.insert("the")
        try t.insert(" cat")
        // … and by the input method replacing a range with a new composition.
        try t.insert(" sat teh")
        try t.compose("the", replacing: 12..<15)
        try t.insert("the")
        try t.expectField("the cat sat the", "autocorrect")
        try t.enter(expecting: "the cat sat the", "autocorrect")

        // Swipe: a whole word composed at once, a better guess, then committed.
        try t.compose("hello")
        try t.insert("hello")
        try t.insert(" ")
        try t.compose("wprld")
        try t.compose("world")
        try t.insert("world")
        try t.expectField("hello world", "swipe")
        try t.enter(expecting: "hello world", "swipe")

        // Voice: a phrase composed, rewritten as recognition improves, then committed.
        for guess in ["what", "what is", "what is the whether", "what is the weather", "What is the weather today"] {
            try t.compose(guess)
        }
        try t.insert("What is the weather today?")
        try t.expectField("What is the weather today?", "voice")
        try t.enter(expecting: "What is the weather today?", "voice")

        // Input methods: Japanese (kana, then kanji), Chinese (pinyin, then hanzi), Korean (jamo into syllables).
        for reading in ["に", "にほ", "にほん", "日本"] { try t.compose(reading) }
        try t.insert("日本")
        for pinyin in ["n", "ni", "nih", "niha", "nihao", "你好"] { try t.compose(pinyin) }
        try t.insert("你好")
        for jamo in ["ㅎ", "하", "한"] { try t.compose(jamo) }
        try t.insert("한")
        for jamo in ["ㄱ", "그", "글"] { try t.compose(jamo) }
        try t.insert("글")
        try t.expectField("日本你好한글", "input methods")
        try t.enter(expecting: "日本你好한글", "input methods")

        // Dead keys: the accent composes, the letter replaces it.
        for c in ["c", "a", "f"] { try t.insert(c) }
        try t.compose("´")
        try t.insert("é")
        try t.insert(" ")
        try t.compose("`")
        try t.insert("à")
        try t.compose("¨")
        try t.insert("ü")
        try t.expectField("café àü", "dead keys")
        try t.enter(expecting: "café àü", "dead keys")

        // Emoji (a surrogate pair, a ZWJ family, a skin tone, a flag) and a combining mark; then Backspace
        // deletes the last one, and the desktop deletes what the field deleted.
        let emoji = "😀 👨\u{200D}👩\u{200D}👧 👍🏽 🇫🇷 e\u{301}"
        try t.insert(emoji)
        try t.insert(" 👨\u{200D}👩\u{200D}👧")
        try t.expectField(emoji + " 👨\u{200D}👩\u{200D}👧", "emoji")
        try t.backspace()
        let afterBackspace = try t.field
        #expect(afterBackspace.hasPrefix(emoji) && afterBackspace != emoji + " 👨\u{200D}👩\u{200D}👧", "Backspace left \(afterBackspace.debugDescription)")
        try t.expectField(afterBackspace, "emoji, Backspace")
        try t.enter(expecting: afterBackspace, "emoji")

        // Backspace and Ctrl+Backspace (delete a word) inside the field; Backspace in an empty field still
        // deletes on the desktop: the New line button keeps the desktop's text and empties the field.
        try t.insert("one two three")
        try t.backspace(ctrl: true)
        try t.backspace()
        try t.expectField("one two", "delete word, delete")
        try WebRemoteTests.press(t.browser, "#newLine")
        try t.browser.wait(for: "document.getElementById('text').value === '' && tbLineSent() === ''", "New line empties the field")
        _ = try t.browser.evaluate("document.getElementById('text').focus(); true")
        try t.backspace()
        try t.backspace()
        try t.insert("!")
        try t.enter(expecting: "one t!", "Backspace in an empty field")

        // The Keys drawer keeps working: its BackSpace deletes on the desktop, and starts a new line.
        try t.insert("abc")
        try t.expectField("abc", "before the drawer")
        try WebRemoteTests.press(t.browser, "#keys [data-key='BackSpace']")
        try t.browser.wait(for: "document.getElementById('text').value === ''", "a drawer key starts a new line")
        _ = try t.browser.evaluate("document.getElementById('text').focus(); true")
        try t.insert("d")
        try t.enter(expecting: "abd", "the Keys drawer")

        // An edit in the middle of the field (the caret moved back): deleted back to it and typed again.
        try t.insert("helo world")
        _ = try t.browser.evaluate("document.getElementById('text').setSelectionRange(3, 3); true")
        try t.insert("l")
        try t.expectField("hello world", "an edit in the middle")
        try t.enter(expecting: "hello world", "an edit in the middle")
    }

    /// A 2,000-character paste (ASCII, Latin-1, € and CJK on borrowed keycodes, emoji) arrives complete and
    /// in order: the page splits it into edits of at most 256 characters.
    @Test func aLongPasteArrivesCompleteAndInOrder() throws {
        let t = try Typing()
        defer { t.close() }
        let piece = Array("The quick brown fox, 0123 éü€漢😀 jumps. ")
        var paste = ""
        var i = 0
        while paste.unicodeScalars.count < 2_000 { paste.append(piece[i % piece.count]); i += 1 }
        #expect(paste.unicodeScalars.count == 2_000 && paste.utf8.count < 4_000, "a tty line holds 4,095 bytes")
        try t.browser.grant(["clipboard-read", "clipboard-write"])
        _ = try t.browser.evaluate("window.tbClip = null; navigator.clipboard.writeText(\(WebRemoteTests.quoted(paste))).then(() => { tbClip = 'ok'; }, e => { tbClip = String(e); }); true")
        #expect(try t.browser.wait(for: "window.tbClip", "the clipboard written") as? String == "ok")
        try t.key("v", code: "KeyV", 86, modifiers: 2, commands: ["paste"])
        try t.expectField(paste, "the paste")
        let edits = try t.browser.evaluate("tbSentLog.filter(s => s.startsWith('edit ')).length") as? Int ?? 0
        #expect(edits == 8, "2,000 characters in edits of at most 256: \(edits) messages")
        try t.enter(expecting: paste, "a 2,000-character paste")
    }

    /// An edit over its bounds is dropped with a log line that says which bound, and counted; the next
    /// edit types as ever (what must happen, after what must not).
    @Test func anEditOverItsBoundsIsRefusedAndSaysWhy() throws {
        let t = try Typing()
        defer { t.close() }
        let log = t.rig.daemon.logMark
        _ = try t.browser.evaluate("tb.send('edit 300 x'); tb.send('edit 0 ' + 'y'.repeat(257)); tb.send('edit 0 ok'); tb.send('key Return'); true")
        let line = try t.rig.daemon.waitForLog(containing: "an edit of 300 backspaces (at most 256 a message)", since: log, "the refusal logged")
        #expect(line.contains("dropped a WebSocket message"), "\(line)")
        guard let typed = t.client.waitForLine(0) else {
            throw RigError("the edit after the refused ones typed nothing\n" + t.rig.daemon.outputTail())
        }
        #expect(typed == "ok", "the refused edits typed something: \(typed.debugDescription)")
    }

    /// WebKit (Safari, every iPhone browser) orders a composition's events differently from Chromium: it
    /// replaces the composition as `deleteCompositionText` then `insertFromComposition`, and fires
    /// `compositionend` before or after the last `input`. The page reads the field, not the events, so
    /// both orders type the same; replayed here on the page in Chromium as WebKit dispatches them.
    @Test func webKitsCompositionOrderTypesTheSame() throws {
        let t = try Typing()
        defer { t.close() }
        // The page's own listeners get each event as WebKit fires it, the field's value set as WebKit sets it.
        _ = try t.browser.evaluate("""
            window.tbWebKit = steps => { const f = document.getElementById('text');
              for (const [kind, type, value] of steps) {
                if (value !== null) f.value = value;
                if (kind === 'compositionstart' || kind === 'compositionupdate' || kind === 'compositionend')
                  f.dispatchEvent(new CompositionEvent(kind, {data: value || ''}));
                else { const e = new InputEvent(kind, {inputType: type, isComposing: type !== 'insertFromComposition', cancelable: kind === 'beforeinput'});
                  // Chromium keeps only the input types it implements: WebKit's own are set by hand.
                  if (e.inputType !== type) Object.defineProperty(e, 'inputType', {value: type});
                  f.dispatchEvent(e); }
              } return true; }; true
            """)
        func replay(_ steps: [(String, String, String?)]) throws {
            let js = steps.map { "[\(WebRemoteTests.quoted($0.0)), \(WebRemoteTests.quoted($0.1)), \($0.2.map(WebRemoteTests.quoted) ?? "null")]" }
            _ = try t.browser.evaluate("tbWebKit([\(js.joined(separator: ","))])")
        }
        // Kana composed, then converted: WebKit deletes the composition, inserts the conversion, then ends it.
        try replay([("compositionstart", "", nil), ("compositionupdate", "", "か"), ("beforeinput", "insertCompositionText", nil),
                    ("input", "insertCompositionText", "か"), ("compositionupdate", "", "かん"), ("input", "insertCompositionText", "かん"),
                    ("input", "deleteCompositionText", ""), ("input", "insertFromComposition", "漢"), ("compositionend", "", nil)])
        try t.expectField("漢", "WebKit: compositionend after the last input")
        // The other order: compositionend first, then the deletion and the insertion.
        try replay([("compositionstart", "", nil), ("input", "insertCompositionText", "漢じ"), ("compositionend", "", nil),
                    ("input", "deleteCompositionText", "漢"), ("input", "insertFromComposition", "漢字")])
        try t.expectField("漢字", "WebKit: compositionend before the last input")
        // iOS autocorrect: one insertReplacementText (the word and its space).
        try replay([("input", "insertText", "漢字 teh"), ("beforeinput", "insertReplacementText", nil), ("input", "insertReplacementText", "漢字 the")])
        try t.expectField("漢字 the", "WebKit: autocorrect")
        let edits = try t.browser.evaluate("tbSentLog.filter(s => s.startsWith('edit '))") as? [String] ?? []
        #expect(!edits.contains("edit 2"), "the composition's deletion was sent before its insertion: \(edits)")
        try t.enter(expecting: "漢字 the", "WebKit's order")
    }
}

/// The page in a real WebKit (WebKitGTK, the iPhone's engine), typed into by an input method: WebKit fires
/// its own composition and input events, in its own order, and the X client gets what the field shows.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebKitKeyboardTests {
    @Test func webKitTypesWhatItsFieldShows() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchpad")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let client = try TypedTextClient(display: rig.xvfb.display)
        defer { client.close() }
        try rig.observer.warp(x: 60, y: 40)
        let page = try WebKitPage(url: url, display: rig.xvfb.display)
        defer { page.close() }
        try page.wait(for: "document.body.dataset.state === 'connected' && window.tbReceived.includes('mode touchpad')", "WebKit's page connected")
        _ = try page.evaluate("document.getElementById('text').focus(); true")
        func expectField(_ expected: String, _ what: String) throws {
            let q = WebRemoteTests.quoted(expected)
            try page.wait(for: "document.getElementById('text').value === \(q) && tbLineSent() === \(q)",
                          "\(what): WebKit's field and what its page sent should both be \(expected.debugDescription)")
        }
        // A predictive keyboard: each word composed letter by letter, then committed.
        for word in ["hello", "world"] {
            for n in 1...word.count { try page.compose(String(word.prefix(n))) }
            try page.commit(word)
            if word == "hello" { try page.commit(" ") }
        }
        try expectField("hello world", "predictive")
        // A correction: the input method deletes the word before the caret and commits another.
        try page.commit(" teh")
        try expectField("hello world teh", "before the correction")
        try page.deleteSurrounding(offset: -3, count: 3)
        try page.commit("the")
        try expectField("hello world the", "a correction")
        // Japanese: kana composed, converted, committed; a dead key; emoji.
        for reading in ["に", "にほ", "にほん", "日本"] { try page.compose(reading) }
        try page.commit("日本")
        try page.compose("´")
        try page.commit("é")
        try page.commit("👨\u{200D}👩\u{200D}👧🇫🇷")
        let expected = "hello world the日本é👨\u{200D}👩\u{200D}👧🇫🇷"
        try expectField(expected, "input method, dead key, emoji")
        // The line ends (the page's Enter: Return, and a new line).
        _ = try page.evaluate("tb.enter(); true")
        guard let line = client.waitForLine(0) else {
            throw RigError("the X client got no line from WebKit's page within 30 s\n" + rig.daemon.outputTail())
        }
        #expect(line == expected, "the X client got \(line.debugDescription), WebKit's field showed \(expected.debugDescription)")
    }
}
