// The config file through the real binary: `config --print`, the command line winning, and errors that
// name the file, the line and the key.
import Foundation
import Testing
import TouchCore

@Suite struct ConfigFileTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs touchbridge with `arguments`, `XDG_CONFIG_HOME` pointing at `xdg` (an empty directory by
    /// default, so a config file of the machine never leaks in).
    static func run(_ arguments: [String], xdg: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Binaries.touchbridge())
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = xdg ?? "/nonexistent-touchbridge-test"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                   stderr: String(decoding: e, as: UTF8.self))
    }

    /// A fresh directory for one test's files.
    static func directory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("tb-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func write(_ text: String, in dir: URL, name: String = "config.toml") throws -> String {
        let file = dir.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test func printShowsTheDefaultsAsAValidConfigFile() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let printed = try Self.run(["config", "--print"])
        #expect(printed.status == 0, "\(printed.stderr)")
        for line in ["udp-port = 8080", "mode = \"touchpad\"", "accel = \"adaptive\"", "speed = 0.0", "tap = true",
                     "natural-scroll = false", "kinetic-scroll = true", "surface-aspect = \"19.5:9\"",
                     "[swipe]", "3-left = \"alt+Right\"", "4-down = \"ctrl+alt+Down\""] {
            #expect(printed.stdout.contains(line + "\n") || printed.stdout.contains(line + "  #"), "missing \(line) in:\n\(printed.stdout)")
        }
        // Read back, it gives the same settings.
        let file = try Self.write(printed.stdout, in: dir)
        let again = try Self.run(["config", "--print", "--config", file])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.settingsOnly(again.stdout) == Self.settingsOnly(printed.stdout))
    }

    /// The printed settings without the header and without each line's comment of where it came from
    /// (which a file read back changes to `file`).
    static func settingsOnly(_ printed: String) -> String {
        printed.split(separator: "\n").dropFirst().map { line -> String in
            var line = String(line)
            if let comment = line.range(of: "  # ", options: .backwards),
               ["default", "file", "command line"].contains(where: { line[comment.upperBound...].hasPrefix($0) }) {
                line.removeSubrange(comment.lowerBound...)
            }
            return line
        }.joined(separator: "\n")
    }

    @Test func printSaysWhereEachSettingCameFrom() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try Self.write("udp-port = 9000\nspeed = 0.5\nallow = [\"10.0.0.0/8\"]\n[swipe]\n3-left = \"super\"\n3-up = \"ctrl+Up\"\n", in: dir)
        let printed = try Self.run(["config", "--print", "--config", file, "--speed=-0.25", "--swipe", "3-up=alt+Up",
                                    "--display", ":7"])
        #expect(printed.status == 0, "\(printed.stderr)")
        for line in ["udp-port = 9000  # file", "speed = -0.25  # command line", "tuio-port = 3333  # default",
                     "allow = [\"10.0.0.0/8\"]  # file", "display = \":7\"  # command line",
                     // A table's entries each on their own: the command line's 3-up, the file's 3-left kept.
                     "3-left = \"super\"  # file", "3-up = \"alt+Up\"  # command line", "3-down = \"Escape\"  # default",
                     "# tls-cert = \"/path/cert.pem\"  # default; unset: plain HTTP"] {
            #expect(printed.stdout.contains(line + "\n"), "missing \(line) in:\n\(printed.stdout)")
        }
    }

    /// `--mode` takes every mode of the core's `TouchMode`, named in `--help`, and each reads back.
    @Test func everyModeOfTheCoreIsAnOption() throws {
        let help = try DocumentationTests.run(["serve", "--help"])
        let values = TouchMode.allCases.map(\.rawValue).joined(separator: ", ")
        #expect(DocumentationTests.normalise(help).contains("(values: \(values); default: touchpad)"), "\(help)")
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for mode in TouchMode.allCases {
            let printed = try Self.expectReadsBack(["--mode", mode.rawValue], in: dir)
            #expect(printed.contains("mode = \"\(mode.rawValue)\"  # command line\n"), "\(printed)")
        }
    }

    @Test func fileSettingsApplyAndTheCommandLineWins() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let xdg = dir.path
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("touchbridge"), withIntermediateDirectories: true)
        _ = try Self.write("""
            udp-port = 9000
            speed = 0.5
            natural-scroll = true
            tap = false
            allow = ["192.168.1.0/24", "10.0.0.0/8"]

            [swipe]
            3-left = "ctrl+Page_Down"
            """, in: dir.appendingPathComponent("touchbridge"))
        // Found in $XDG_CONFIG_HOME/touchbridge/config.toml without --config.
        let fromFile = try Self.run(["config", "--print"], xdg: xdg)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        for line in ["udp-port = 9000", "speed = 0.5", "natural-scroll = true", "tap = false",
                     "allow = [\"192.168.1.0/24\", \"10.0.0.0/8\"]", "3-left = \"ctrl+Page_Down\"", "3-right = \"alt+Left\""] {
            #expect(fromFile.stdout.contains(line), "missing \(line) in:\n\(fromFile.stdout)")
        }
        let overridden = try Self.run(["config", "--print", "--udp-port", "9100", "--no-natural-scroll", "--tap",
                                       "--allow", "127.0.0.1", "--swipe", "3-left=super"], xdg: xdg)
        #expect(overridden.status == 0, "\(overridden.stderr)")
        for line in ["udp-port = 9100", "speed = 0.5", "natural-scroll = false", "tap = true",
                     "allow = [\"127.0.0.1\"]", "3-left = \"super\""] {
            #expect(overridden.stdout.contains(line), "missing \(line) in:\n\(overridden.stdout)")
        }
    }

    @Test(arguments: [
        ("udp-port = 9000\n\nspeeed = 3\n", "config.toml:3: key \"speeed\": not a setting of touchbridge"),
        ("udp-port = 70000\n", "config.toml:1: key \"udp-port\": must be 0...65535, not 70000"),
        ("multitouch = \"yes\"\n", "config.toml:1: key \"multitouch\": must be true or false"),
        ("mode = \"pencil\"\n", "config.toml:1: key \"mode\": \"pencil\" is not one of touchpad"),
        ("debug-x-error-every = 3\n", "config.toml:1: key \"debug-x-error-every\": not a setting of touchbridge"),
        ("[presenter-key]\nnext = \"Right\"\nnope = \"Left\"\n", "config.toml:3: key \"presenter-key.nope\""),
        ("udp-port = \"many\"\n", "config.toml:1: key \"udp-port\""),
        ("mode = \"touchpad\"\nspeed = 5\n", "config.toml:2: key \"speed\""),
        ("accel = \"fast\"\n", "config.toml:1: key \"accel\""),
        ("mode = \"touchpad\"\n[swipe]\n3-left = \"super\"\n3-up = \"ctrl+banana\"\n", "config.toml:4: key \"swipe.3-up\""),
        ("tap = yes\n", "config.toml:1:"),
    ])
    func badFileErrorNamesTheLineAndTheKey(text: String, expected: String) throws {
        try Self.expectRejected(text, naming: [expected])
    }

    /// A config file of `text`, read by `config --print` and by `serve`: both exit 64 and name every one of `words`.
    static func expectRejected(_ text: String, naming words: [String]) throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try Self.write(text, in: dir)
        for arguments in [["config", "--print", "--config", file], ["serve", "--config", file, "--display", ":nonexistent"]] {
            let run = try Self.run(arguments)
            #expect(run.status == 64, "\(arguments): status \(run.status)\n\(run.stderr)")
            #expect(words.allSatisfy { run.stderr.contains($0) }, "\(arguments): stderr should name \(words):\n\(run.stderr)")
        }
    }

    /// An input file that is not there: EX_NOINPUT (66), as sysexits.h says.
    @Test func missingExplicitFileIsAnError() throws {
        let run = try Self.run(["config", "--print", "--config", "/nonexistent/touchbridge.toml"])
        #expect(run.status == 66)
        #expect(run.stderr.contains("/nonexistent/touchbridge.toml"))
    }

    // NUL and control characters in strings are rejected with the file, line and key
    // (a NUL used to cut the value short: "touchscreen\u0000xyz" read as touchscreen).
    @Test(arguments: [
        (#"mode = "touchscreen\u0000xyz""# + "\n", #"config.toml:1: key "mode""#, "U+0000"),
        ("udp-port = 9000\n" + #"display = ":1\nx""# + "\n", #"config.toml:2: key "display""#, "U+000A"),
        ("mode = \"touchpad\"\n\n" + #"allow = ["127.0.0.1", "10.0.0.0/8\t"]"# + "\n", #"config.toml:3: key "allow""#, "U+0009"),
        ("[swipe]\n" + #"3-left = "ctrl\u001b+Right""# + "\n", #"config.toml:2: key "swipe.3-left""#, "U+001B"),
        ("monitor = \"\"\"\nLEFT\nRIGHT\"\"\"\n", #"config.toml:1: key "monitor""#, "U+000A"),
        (#"monitor = "A\u0085""# + "\n", #"config.toml:1: key "monitor""#, "U+0085"),
        (#"tls-cert = "/tmp/a\u007f""# + "\n" + #"tls-key = "/tmp/b""# + "\n", #"config.toml:1: key "tls-cert""#, "U+007F"),
        (#""udp\u0001port" = 9000"# + "\n", #"key "udp\u{1}port""#, "U+0001"),
    ])
    func controlCharactersInStringsAreRejectedWithTheFileLineAndKey(text: String, expected: String, character: String) throws {
        try Self.expectRejected(text, naming: [expected, character])
    }

    @Test func controlCharactersOnTheCommandLineAreRejected() throws {
        for (option, value) in [("--display", ":1\nx"), ("--monitor", "LEFT\t"), ("--allow", "127.0.0.1\u{85}")] {
            for command in [["config", "--print"], ["serve"] + (option == "--display" ? [] : ["--display", ":nonexistent"])] {
                let run = try Self.run(command + [option, value])
                #expect(run.status == 64, "\(command) \(option): status \(run.status)\n\(run.stderr)")
                #expect(run.stderr.contains("control character"), "\(command) \(option):\n\(run.stderr)")
            }
        }
    }

    /// `--bind` must be an IPv4 or IPv6 address, on the command line and in the file
    /// (`999.1.1.1` printed and exited 0; serve failed only when it bound).
    @Test func aBindThatIsNoAddressIsRefused() throws {
        for value in ["999.1.1.1", "localhost", "10.0.0.0/8", "1.2.3", "::g"] {
            for command in [["config", "--print"], ["serve", "--display", ":nonexistent"]] {
                let run = try Self.run(command + ["--bind", value])
                #expect(run.status == 64, "\(command) --bind \(value): status \(run.status)\n\(run.stderr)")
                #expect(run.stderr.contains("is not an IPv4 or IPv6 address"), "\(command) --bind \(value):\n\(run.stderr)")
            }
        }
        try Self.expectRejected(#"bind = "999.1.1.1""# + "\n", naming: [#"config.toml:1: key "bind""#, "is not an IPv4 or IPv6 address"])
        for value in ["0.0.0.0", "127.0.0.1", "::", "::1", "fe80::1"] {
            let run = try Self.run(["config", "--print", "--bind", value])
            #expect(run.status == 0 && run.stdout.contains(#"bind = "\#(value)""#), "--bind \(value): \(run.status)\n\(run.stderr)")
        }
    }

    /// `config --print` with `arguments`, read back from a file: the same settings (every line after
    /// the first, the comment naming the file). Returns the first output.
    @discardableResult
    static func expectReadsBack(_ arguments: [String], xdg: String? = nil, in dir: URL) throws -> String {
        let printed = try Self.run(["config", "--print"] + arguments, xdg: xdg)
        #expect(printed.status == 0, "\(arguments): \(printed.stderr)")
        let lines = printed.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count > 1 && lines[0].hasPrefix("# touchbridge settings:") && lines[1].contains("display = "),
                "the first line is one comment:\n\(printed.stdout)")
        let file = try Self.write(printed.stdout, in: dir, name: "printed.toml")
        let again = try Self.run(["config", "--print", "--config", file])
        #expect(again.status == 0, "\(arguments): the printed file does not read back: \(again.stderr)\n\(printed.stdout)")
        #expect(Self.settingsOnly(again.stdout) == Self.settingsOnly(printed.stdout),
                "\(arguments): read back differently:\n\(printed.stdout)\n---\n\(again.stdout)")
        return printed.stdout
    }

    @Test func printedSettingsReadBackWithHostileStrings() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Quotes, backslashes, TOML's own delimiters, unicode beyond the BMP, from the command line.
        let hostile = #":1 "quoted" \back\slash ''' """ \u0041 ünïcödé 😀 # not a comment"#
        let printed = try Self.expectReadsBack(
            ["--display", hostile, "--monitor", #"a"b\c'd"#, "--tls-cert", #"/tmp/"x"\y.pem"#, "--tls-key", "/tmp/ключ 🔑.pem"], in: dir)
        #expect(printed.contains(#"display = ":1 \"quoted\" \\back\\slash ''' \"\"\" \\u0041 ünïcödé 😀 # not a comment""#), "\(printed)")
        // The same from a file, in every TOML string form.
        let file = try Self.write(#"""
            display = ":1 \"q\" \\ \u00e9 \U0001F600"
            monitor = 'C:\literal "path"'
            tls-cert = """
            /tmp/multi "line" \
              continued.pem"""
            tls-key = '''/tmp/'k'.pem'''
            """#, in: dir)
        let fromFile = try Self.expectReadsBack(["--config", file], in: dir)
        #expect(fromFile.contains(#"display = ":1 \"q\" \\ é 😀""#), "\(fromFile)")
        #expect(fromFile.contains(#"monitor = "C:\\literal \"path\"""#), "\(fromFile)")
        #expect(fromFile.contains(#"tls-cert = "/tmp/multi \"line\" continued.pem""#), "\(fromFile)")
        // A config directory whose name holds a newline: the header comment stays one line.
        let odd = dir.appendingPathComponent("x\ny")
        try FileManager.default.createDirectory(at: odd.appendingPathComponent("touchbridge"), withIntermediateDirectories: true)
        _ = try Self.write("udp-port = 9001\n", in: odd.appendingPathComponent("touchbridge"))
        let fromOdd = try Self.expectReadsBack([], xdg: odd.path, in: dir)
        #expect(fromOdd.contains("udp-port = 9001  # file\n"), "\(fromOdd)")
    }

    @Test func everyServeOptionHasAKeyInThePrintedSettings() throws {
        let options = DocumentationTests.helpOptions(try DocumentationTests.run(["serve", "--help"]))
        let printed = try Self.run(["config", "--print"]).stdout
        for option in options where !["--help", "--version", "--config"].contains(option.flag) {
            let name = option.flag.split(separator: "/").first!.dropFirst(2)
            #expect(printed.contains("\n\(name) = ") || printed.contains("# \(name) = ") || printed.contains("[\(name)]"),
                    "config --print lacks \(name)")
        }
    }
}
