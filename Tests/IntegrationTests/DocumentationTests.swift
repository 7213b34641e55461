// Every user-visible option is in --help, the man page and the docs (docs/configuration.md, made from --help), in
// the same words; the README opens with --help's description.
import Foundation
import Testing

@Suite struct DocumentationTests {
    /// One option of `--help`: its flag and its sentence, without ArgumentParser's "(default: …)" tail.
    struct HelpOption: CustomStringConvertible {
        var flag: String
        var text: String
        var description: String { "\(flag): \(text)" }
    }

    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Binaries.touchbridge())
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Parses the OPTIONS section of ArgumentParser's help: an option line starts with two spaces and
    /// a dash; its text starts at column 26 or on the next line, and continues on lines indented 26.
    static func helpOptions(_ help: String) -> [HelpOption] {
        var options: [HelpOption] = []
        var inOptions = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            // OPTIONS and every titled option group (e.g. TOUCHPAD MODE:).
            if line.hasSuffix(":"), !line.hasPrefix(" "), line == line.uppercased(), !line.hasPrefix("USAGE") {
                inOptions = true
                continue
            }
            guard inOptions else { continue }
            if line.hasPrefix("  -") {
                let body = line.dropFirst(2)
                let flagPart = body.prefix(while: { $0 != " " || false })
                var flag = String(flagPart)
                if flag.hasSuffix(",") {  // "-h, --help"
                    flag = String(body.split(separator: " ")[1])
                }
                // A label too long for the column (`--orientation <orientation>`) stands alone, and
                // the text starts on the next line.
                let rest = line.count > 26 && line.prefix(26).hasSuffix(" ") ? String(line.dropFirst(26)) : ""
                options.append(HelpOption(flag: flag, text: rest.trimmingCharacters(in: .whitespaces)))
            } else if line.hasPrefix(String(repeating: " ", count: 26)), !options.isEmpty {
                options[options.count - 1].text += " " + line.trimmingCharacters(in: .whitespaces)
            } else if !line.hasPrefix(" ") {
                inOptions = false
            }
        }
        return options.map { option in
            var text = normalise(option.text)
            // ArgumentParser appends "(default: x)" or "(values: a, b; default: a)".
            if let range = text.range(of: #" ?\((values: [^)]*|default: [^)]*)\)$"#, options: .regularExpression) {
                text.removeSubrange(range)
            }
            return HelpOption(flag: option.flag, text: text)
        }
    }

    static func normalise(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
    }

    /// The man page as plain words: escapes resolved, macro names dropped, quotes of macro
    /// arguments removed.
    static func manText() throws -> String {
        let roff = try String(contentsOfFile: Binaries.packageRoot + "/man/touchbridge.1", encoding: .utf8)
        var words: [String] = []
        for var line in roff.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix(".") {
                guard let space = line.firstIndex(of: " ") else { continue }
                line = String(line[line.index(after: space)...]).replacingOccurrences(of: "\"", with: "")
                line = line.replacingOccurrences(of: " ", with: " ")
            }
            for (escape, plain) in [("\\-", "-"), ("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\fP", ""), ("\\(aq", "'"), ("\\e", "\\"), ("\\&", "")] {
                line = line.replacingOccurrences(of: escape, with: plain)
            }
            words.append(line)
        }
        return normalise(words.joined(separator: " "))
    }

    static func readmeText() throws -> String { try markdownText("README.md") }

    /// A Markdown file of the package as plain words: code marks and table bars dropped (a bar escaped in a
    /// table cell, `\|`, is the text's own).
    static func markdownText(_ path: String) throws -> String {
        let markdown = try String(contentsOfFile: Binaries.packageRoot + "/" + path, encoding: .utf8)
        return normalise(markdown.replacingOccurrences(of: "`", with: "").replacingOccurrences(of: "\\|", with: "\u{1}")
            .replacingOccurrences(of: "|", with: " ").replacingOccurrences(of: "\u{1}", with: "|"))
    }

    /// The configuration reference, every command's options (made from --help by scripts/config-reference.py).
    static func referenceText() throws -> String { try markdownText("docs/configuration.md") }

    @Test func everyServeOptionIsInTheManPageAndTheConfigurationReferenceInTheSameWords() throws {
        let options = Self.helpOptions(try Self.run(["serve", "--help"]))
        #expect(options.count >= 8, "parsed too few options from --help: \(options)")
        #expect(options.contains { $0.flag == "--udp-port" })
        let man = try Self.manText()
        let reference = try Self.referenceText()
        for option in options where option.flag != "--help" {
            let inMan = (flag: man.contains(option.flag), text: man.contains(option.text))
            let inReference = (flag: reference.contains(option.flag), text: reference.contains(option.text))
            #expect(inMan.flag, "man page lacks \(option.flag)")
            #expect(inMan.text, "man page lacks the --help words of \(option)")
            #expect(inReference.flag, "docs/configuration.md lacks \(option.flag)")
            #expect(inReference.text, "docs/configuration.md lacks the --help words of \(option)")
        }
    }

    @Test(arguments: ["record", "replay"])
    func everyRecordAndReplayOptionIsInTheManPageAndTheConfigurationReferenceInTheSameWords(command: String) throws {
        let options = Self.helpOptions(try Self.run([command, "--help"]))
        #expect(options.count >= 4, "parsed too few options from \(command) --help: \(options)")
        let man = try Self.manText()
        let readme = try Self.referenceText()
        func has(_ text: String, _ words: String) -> Bool { text.contains(words) }
        for option in options where option.flag != "--help" {
            #expect(has(man, option.flag), "man page lacks \(command) \(option.flag)")
            #expect(has(man, option.text), "man page lacks the \(command) --help words of \(option)")
            #expect(has(readme, option.flag), "docs/configuration.md lacks \(command) \(option.flag)")
            #expect(has(readme, option.text), "docs/configuration.md lacks the \(command) --help words of \(option)")
        }
        // The command's own sentence, and its argument's.
        let help = try Self.run([command, "--help"])
        let overview = Self.normalise(help.components(separatedBy: "USAGE:")[0].replacingOccurrences(of: "OVERVIEW:", with: ""))
        #expect(has(man, overview), "man page lacks the \(command) overview: \(overview)")
        #expect(has(readme, overview), "docs/configuration.md lacks the \(command) overview: \(overview)")
        let arguments = help.components(separatedBy: "ARGUMENTS:").dropFirst().first?.components(separatedBy: "\n\n").first
        let argument = arguments.map { Self.normalise($0.replacingOccurrences(of: "<file>", with: "")) } ?? ""
        #expect(argument.count > 10, "no <file> argument parsed from \(command) --help")
        #expect(has(man, argument), "man page lacks the words of \(command)'s <file>: \(argument)")
        #expect(has(readme, argument), "docs/configuration.md lacks the words of \(command)'s <file>: \(argument)")
    }

    /// How typing from the phone works: docs/phones.md's paragraph is the man page's, word for word.
    @Test func typingIsSaidInTheSameWordsInTheManPageAndTheDocs() throws {
        let phones = try Self.markdownText("docs/phones.md")
        guard let start = phones.range(of: "the text field shows the line being typed"),
              let end = phones.range(of: "on a borrowed keycode.", range: start.upperBound..<phones.endIndex) else {
            Issue.record("docs/phones.md has no paragraph on typing")
            return
        }
        let words = String(phones[start.lowerBound..<end.upperBound])
        #expect(try Self.manText().contains(words), "the man page does not say how typing works in docs/phones.md's words: \(words)")
    }

    /// The portal's limits in `--help`'s words: besides the --backend option's row (the test above), once
    /// more where the man page and the docs say what each backend gives each desktop (the portal's
    /// paragraph, docs/desktops.md's backends table; the docs' --backend row is docs/configuration.md's).
    @Test func thePortalsLimitsAreSaidInHelpsWordsWhereEachBackendIsDescribed() throws {
        let help = Self.normalise(try Self.run(["serve", "--help"]))
        let limits = "no pen tablet (the pen is the pointer), the overlay needs Xwayland's DISPLAY, and on GNOME a character no key makes cannot be typed"
        #expect(help.contains("the portal's limits: " + limits), "--help does not state the portal's limits: \(limits)")
        let docs = try Self.markdownText("docs/desktops.md") + " " + Self.referenceText()
        for (name, text) in [("man page", try Self.manText()), ("docs", docs)] {
            #expect(text.components(separatedBy: "The portal's limits: " + limits).count == 2,
                    "the \(name) does not state the portal's limits, in --help's words, where it describes the portal backend")
            #expect(text.components(separatedBy: limits).count == 3, "the \(name) states the portal's limits other than twice")
        }
    }

    /// What touchbridge is, on every desktop: `--help`'s overview (its line and its paragraph) is the man
    /// page's NAME and DESCRIPTION and the README's opening, in the same words, and names both X11 and Wayland.
    @Test func theDescriptionIsInTheSameWordsInHelpTheManPageAndReadme() throws {
        let help = try Self.run(["--help"])
        let overview = Self.normalise(help.components(separatedBy: "USAGE:")[0].replacingOccurrences(of: "OVERVIEW:", with: ""))
        guard overview.hasPrefix("Use "), let split = overview.range(of: ". touchbridge receives") else {
            Issue.record("--help's overview is not \"Use …. touchbridge receives …\": \(overview)")
            return
        }
        let line = String(overview[overview.index(overview.startIndex, offsetBy: 4)..<split.lowerBound])
        let paragraph = "touchbridge receives" + overview[split.upperBound...]
        #expect(line.contains("X11") && line.contains("Wayland"), "the one-line description leaves a desktop out: \(line)")
        let man = try Self.manText()
        let readme = try Self.readmeText()
        #expect(man.contains("touchbridge - use \(line)"), "the man page's NAME is not --help's line: \(line)")
        #expect(man.contains(paragraph), "the man page's DESCRIPTION is not --help's paragraph: \(paragraph)")
        #expect(readme.contains("Use \(line)."), "the README does not open with --help's line: \(line)")
        #expect(readme.contains(paragraph), "the README does not say --help's paragraph: \(paragraph)")
    }

    @Test func everySubcommandIsInTheManPage() throws {
        let help = try Self.run(["--help"])
        let man = try Self.manText()
        var inSubcommands = false
        var names: [String] = []
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("SUBCOMMANDS:") { inSubcommands = true; continue }
            guard inSubcommands else { continue }
            if line.isEmpty { break }
            if line.hasPrefix("  "), !line.hasPrefix("    "), let name = line.split(separator: " ").first {
                names.append(String(name))
            }
        }
        #expect(!names.isEmpty, "no subcommands parsed from --help")
        for name in names {
            let found = man.contains(name)
            #expect(found, "man page lacks the \(name) command")
        }
    }

    @Test func versionMatchesTheManPage() throws {
        let version = try Self.run(["--version"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.hasPrefix("touchbridge "))
        let named = try Self.manText().contains(version)
        #expect(named, "man page header should name \(version)")
    }
}
