// A newcomer's first hour: `make run` installs what building and running need and nothing the tests use;
// the README is a user's document, the rest is in docs/, and every link among them leads somewhere;
// docs/configuration.md is what the binary's --help says.
import Foundation
import Testing

@Suite struct FirstHourTests {
    /// Runs a program to its end: its exit status, and its standard output and error together.
    static func run(_ executable: String, _ arguments: [String], in directory: String = Binaries.packageRoot) throws
        -> (status: Int32, out: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func file(_ path: String) throws -> String {
        try String(contentsOfFile: Binaries.packageRoot + "/" + path, encoding: .utf8)
    }

    static func packages(_ sets: [String]) throws -> Set<String> {
        let listed = try run(Binaries.packageRoot + "/scripts/deps.sh", ["--list"] + sets)
        #expect(listed.status == 0, "scripts/deps.sh --list \(sets) exited \(listed.status): \(listed.out)")
        return Set(listed.out.split(separator: "\n").map(String.init))
    }

    /// `make run`'s commands (make -n: printed, not run) call scripts/deps.sh only for the build set, and
    /// scripts/run.sh installs the run set itself when it starts Xvfb; neither set holds a package that
    /// only the tests use (qemu, Chromium, WebKitGTK, weston, lintian, …), and neither makes the venv.
    @Test func makeRunInstallsNoTestPackage() throws {
        let dryRun = try Self.run("/usr/bin/make", ["-n", "run"])
        #expect(dryRun.status == 0, "make -n run exited \(dryRun.status): \(dryRun.out)")
        let depsCalls = dryRun.out.split(separator: "\n").filter { $0.contains("deps.sh") }
        #expect(!depsCalls.isEmpty, "make -n run calls no scripts/deps.sh:\n\(dryRun.out)")
        var sets: Set<String> = []
        for call in depsCalls {
            let named = call.split(separator: " ").drop { !$0.hasSuffix("deps.sh") }.dropFirst().map(String.init)
            #expect(!named.isEmpty, "make run installs every set, the test rig's too: `\(call)`")
            sets.formUnion(named)
        }
        let runScript = try Self.file("scripts/run.sh")
        #expect(runScript.contains("deps.sh\" run"), "scripts/run.sh does not install the run set (Xvfb) where it starts Xvfb")
        sets.insert("run")
        #expect(sets.isSubset(of: ["build", "run"]), "make run installs the sets \(sets.sorted()), not only build and run")
        let runPackages = try Self.packages(sets.sorted())
        let testOnly = try Self.packages(["test"]).subtracting(try Self.packages(["build", "run", "package"]))
        #expect(testOnly.isSuperset(of: ["qemu-system-x86", "chromium", "gir1.2-webkit2-4.1", "weston", "lintian", "debootstrap", "python3-venv"]),
                "the test set lacks the test rig: \(testOnly.sorted())")
        let leaked = runPackages.intersection(testOnly)
        #expect(leaked.isEmpty, "make run installs packages only the tests use: \(leaked.sorted())")
        #expect(runPackages.contains("xvfb") && runPackages.contains("libx11-dev"), "make run's sets lack Xvfb or the X headers: \(runPackages.sorted())")
    }

    /// `make run` serves within minutes on a fresh machine: its one build (make -n: printed, not run) is the
    /// debug build of the daemon's product alone, with no optimiser, no static Swift runtime and no tests,
    /// and scripts/run.sh is given the binary that build makes. The release build stays `make build`'s.
    @Test func makeRunBuildsTheDebugProductOnly() throws {
        let dryRun = try Self.run("/usr/bin/make", ["-n", "run"])
        #expect(dryRun.status == 0, "make -n run exited \(dryRun.status): \(dryRun.out)")
        let lines = dryRun.out.split(separator: "\n").map(String.init)
        let builds = lines.filter { $0.split(separator: " ").first.map { $0.hasSuffix("swift") } == true && $0.contains(" build") }
        #expect(builds.count == 1, "make run runs \(builds.count) swift builds, not one:\n\(dryRun.out)")
        for build in builds {
            let words = Set(build.split(separator: " ").map(String.init))
            #expect(build.contains("--product touchbridge"), "make run's build is not of the product alone: `\(build)`")
            #expect(words.isDisjoint(with: ["-c", "--configuration", "release", "--static-swift-stdlib", "--build-tests"]),
                    "make run's build is not the quick debug build: `\(build)`")
        }
        let runs = lines.filter { $0.contains("scripts/run.sh") }
        #expect(runs.count == 1 && runs[0].contains("scripts/run.sh .build/debug/touchbridge"),
                "make run does not serve with the debug build's binary: \(runs)")
        let release = try Self.run("/usr/bin/make", ["-n", "build"])
        #expect(release.out.contains("build -c release --static-swift-stdlib"), "make build is no longer the release build:\n\(release.out)")
    }

    /// make run's build has no index store (a quarter of its time); the tests' debug builds (make test's,
    /// the VM stages', CI's before make test) keep it, as SwiftPM finds the tests through it on Linux, and all
    /// pass the same flags: a flag that differs between two of them recompiles every module (CI's own build
    /// and then make test's would be two whole builds).
    @Test func makeRunBuildsWithoutTheIndexStoreAndTheTestsBuildsAllAlike() throws {
        func builds(_ target: String) throws -> [String] {
            let dryRun = try Self.run("/usr/bin/make", ["-n", target])
            #expect(dryRun.status == 0, "make -n \(target) exited \(dryRun.status): \(dryRun.out)")
            return dryRun.out.split(separator: "\n").map(String.init).filter {
                $0.split(separator: " ").first.map { $0.hasSuffix("swift") } == true && $0.contains(" build") && !$0.contains(" -c release")
            }
        }
        let run = try builds("run")
        #expect(run.count == 1 && run[0].contains("--disable-index-store"), "make run's build keeps the index store: \(run)")
        var tests: [String] = []
        for target in ["test", "test-desktops", "test-portal"] { tests += try builds(target) }
        tests += try Self.file(".ci/run").split(separator: "\n").map(String.init).filter { $0.hasPrefix("swift build") }
        #expect(tests.count >= 4, "\(tests)")
        for build in tests {
            let words = Set(build.split(separator: " ").map(String.init))
            // What may differ: which products are built, not how.
            let flags = words.subtracting(["swift", "build", "--build-tests"]).filter { !$0.hasSuffix("/swift") }
            #expect(flags.isEmpty, "`\(build)` builds with \(flags.sorted()): the tests' builds must build alike")
        }
    }

    /// The README is for users: at most 250 lines, the two set-up commands within its first 40, then the
    /// sections in the issue's order, and every picture it shows is there.
    @Test func theReadmeIsAUsersDocument() throws {
        let readme = try Self.file("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        let count = readme.hasSuffix("\n") ? lines.count - 1 : lines.count
        #expect(count <= 250, "the README has \(count) lines (at most 250)")
        let opening = lines.prefix(40)
        #expect(opening.contains { $0.hasPrefix("make run ") }, "the README's first 40 lines lack `make run`")
        #expect(opening.contains { $0.hasPrefix("make test ") }, "the README's first 40 lines lack `make test`")
        let headings = lines.filter { $0.hasPrefix("## ") }.map { String($0.dropFirst(3)) }
        let order = ["Install the package", "Pair a phone", "The modes", "Desktops", "Troubleshooting", "Security"]
        let found = headings.filter { order.contains($0) }
        #expect(found == order, "the README's sections are \(headings), not in the order \(order)")
        let troubleshooting = readme.components(separatedBy: "## Troubleshooting").last?.components(separatedBy: "\n## ").first ?? ""
        let questions = troubleshooting.split(separator: "\n").filter { $0.hasPrefix("**") }.count
        #expect(questions >= 10, "the README's troubleshooting answers \(questions) questions (at least 10)")
        let pictures = Self.links(in: readme).filter { $0.hasSuffix(".png") }
        #expect(pictures.count >= 5, "the README shows \(pictures.count) pictures: \(pictures)")
    }

    /// Every relative link and picture in the README and the docs leads to a file that is there, and a
    /// `#anchor` to one of that file's headings (GitHub's slugs).
    @Test func everyLinkInTheDocsLeadsSomewhere() throws {
        let fm = FileManager.default
        var documents = ["README.md", "Benchmarks/README.md", "Tests/VM/README.md"]
        documents += try fm.contentsOfDirectory(atPath: Binaries.packageRoot + "/docs").filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        var broken: [String] = []
        for document in documents {
            let text = try Self.file(document)
            let directory = (document as NSString).deletingLastPathComponent
            for link in Self.links(in: text) where !link.contains("://") && !link.hasPrefix("mailto:") {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = parts[0].isEmpty ? document : ((directory.isEmpty ? parts[0] : directory + "/" + parts[0]) as NSString).standardizingPath
                guard fm.fileExists(atPath: Binaries.packageRoot + "/" + target) else {
                    broken.append("\(document): \(link) (no \(target))")
                    continue
                }
                if parts.count == 2, target.hasSuffix(".md") {
                    let anchors = Set(try Self.file(target).split(separator: "\n").filter { $0.hasPrefix("#") }.map { Self.slug(String($0)) })
                    if !anchors.contains(parts[1]) { broken.append("\(document): \(link) (no such heading in \(target))") }
                }
            }
        }
        #expect(broken.isEmpty, "links that lead nowhere:\n\(broken.joined(separator: "\n"))")
    }

    /// docs/configuration.md is what scripts/config-reference.py makes from the binary's --help and
    /// `config --print`, word for word.
    @Test func theConfigurationReferenceIsWhatTheBinarySays() throws {
        let check = try Self.run("/usr/bin/python3", [Binaries.packageRoot + "/scripts/config-reference.py", "--check",
                                                      Binaries.packageRoot + "/docs/configuration.md", try Binaries.touchbridge()])
        #expect(check.status == 0, "docs/configuration.md differs from the binary's --help (make config-reference):\n\(check.out)")
    }

    /// The targets of Markdown links `](target)` and HTML pictures `src="target"`, outside code blocks.
    static func links(in markdown: String) -> [String] {
        var links: [String] = []
        var inCode = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle(); continue }
            if inCode { continue }
            let text = String(line)
            for pattern in [#"\]\(([^)\s]+)\)"#, #"src="([^"]+)""#] {
                let regex = try! NSRegularExpression(pattern: pattern)
                for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    if let range = Range(match.range(at: 1), in: text) { links.append(String(text[range])) }
                }
            }
        }
        return links
    }

    /// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`.
    static func slug(_ heading: String) -> String {
        let title = heading.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
        return String(title.compactMap { c -> Character? in
            if c == " " { return "-" }
            if c.isLetter || c.isNumber || c == "-" || c == "_" { return c }
            return nil
        })
    }
}
