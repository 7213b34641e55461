// `touchbridge pair` never replaces a file it cannot read as a secret. The real
// binary, with private XDG directories, against each kind of file that is not a secret: it says what is
// wrong, exits 65, and the file is still there as it was. `serve` reads the same file the same way.
import Foundation
import Glibc
import Testing

@Suite(.timeLimit(.minutes(10)))
struct PairSecretFileTests {
    /// A private home with its state directory made; the secret file's path in it.
    static func home() throws -> (home: String, secretPath: String) {
        let home = NSTemporaryDirectory() + "touchbridge-pairfile-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: home + "/state/touchbridge", withIntermediateDirectories: true)
        return (home, home + "/state/touchbridge/pairing-secret")
    }

    static func environment(_ home: String) -> [String: String] {
        ["XDG_STATE_HOME": home + "/state", "XDG_CONFIG_HOME": home + "/config", "HOME": home]
    }

    /// Runs `touchbridge pair` against a secret file made by `make`; checks that it exits 65 within
    /// 10 s (a FIFO or /dev/zero must not hold it), says `problem` on stderr, prints no address, and
    /// leaves the file as it was (same inode, same type, no temporary file).
    static func expectRefusal(_ problem: String, _ make: (String) throws -> Void) throws {
        let (home, path) = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try make(path)
        let before = try FileManager.default.attributesOfItem(atPath: path)
        let pair = try ChildProcess(
            name: "touchbridge pair", executable: try Binaries.touchbridge(),
            arguments: ["pair", "--bind", "127.0.0.1", "--http-port", "8123"], environment: environment(home))
        let status = pair.waitForExit(timeout: 10)
        defer { _ = pair.stop(timeout: 2) }
        #expect(status == .exited(65), "touchbridge pair: \(status.map { "\($0)" } ?? "still running after 10 s")\n\(pair.outputTail())")
        let errors = pair.stderr.snapshot().map(\.text)
        #expect(errors.contains { $0.contains("touchbridge pair: \(path) \(problem)") && $0.contains("--new-secret") },
                "no line naming the problem (\(problem)):\n\(pair.outputTail())")
        #expect(!pair.stdout.snapshot().contains { $0.text.contains("#k=") }, "an address was printed:\n\(pair.outputTail())")
        let after = try FileManager.default.attributesOfItem(atPath: path)
        #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int, "the secret file was replaced")
        #expect(after[.type] as? FileAttributeType == before[.type] as? FileAttributeType, "the secret file was replaced")
        #expect(!FileManager.default.fileExists(atPath: path + ".new"), "a temporary file was left")
    }

    @Test func uppercaseHexIsNotReplaced() throws {
        try Self.expectRefusal("holds uppercase hex digits") {
            try "3F1C0000000000000000000000000ABC\n".write(toFile: $0, atomically: false, encoding: .utf8)
        }
    }

    @Test func garbageIsNotReplaced() throws {
        try Self.expectRefusal("holds something other than a secret") {
            try "password=hunter2\n".write(toFile: $0, atomically: false, encoding: .utf8)
        }
    }

    @Test func aFileTooLongIsNotReplaced() throws {
        try Self.expectRefusal("is larger than 64 bytes") {
            try (String(repeating: "0123456789abcdef", count: 2) + "\n" + String(repeating: "0", count: 1 << 20))
                .write(toFile: $0, atomically: false, encoding: .utf8)
        }
    }

    /// A FIFO nobody writes to: without O_NONBLOCK, opening it would wait for a writer for good.
    @Test func aFIFOIsNotReplacedAndDoesNotHang() throws {
        try Self.expectRefusal("is a FIFO") { #expect(mkfifo($0, 0o600) == 0) }
    }

    /// A link to /dev/zero: a link is not followed (the file must be the user's own), so the endless
    /// zeros are never opened.
    @Test func aLinkToDevZeroIsNotReplaced() throws {
        try Self.expectRefusal("is a symbolic link") {
            try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: "/dev/zero")
        }
    }

    /// No file at all: pair makes one and prints its address (the one case where it writes).
    @Test func aMissingFileIsMade() throws {
        let (home, path) = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let pair = try ChildProcess(
            name: "touchbridge pair", executable: try Binaries.touchbridge(),
            arguments: ["pair", "--bind", "127.0.0.1", "--http-port", "8123"], environment: Self.environment(home))
        let status = pair.waitForExit(timeout: 10)
        defer { _ = pair.stop(timeout: 2) }
        #expect(status == .exited(0), "\(pair.outputTail())")
        let secret = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pair.stdout.snapshot().first?.text == "http://127.0.0.1:8123/#k=\(secret)", "\(pair.outputTail())")
    }

    /// The daemon reads the file through the same reader: it says what is wrong and does not start the
    /// web touchpad (exit 71) rather than serving a secret no `pair` would print.
    @Test func serveRefusesTheSameFile() throws {
        let (home, path) = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try "3F1C0000000000000000000000000ABC\n".write(toFile: path, atomically: false, encoding: .utf8)
        let xvfb = try XvfbServer.start()
        defer { _ = xvfb.stop() }
        let serve = try ChildProcess(
            name: "touchbridge serve", executable: try Binaries.touchbridge(),
            arguments: ["serve", "--display", xvfb.display, "--udp-port", "0", "--tuio-port", "0", "--http-port", String(try freeTCPPort()),
                        "--bind", "127.0.0.1", "--backend", "xtest"],
            environment: Self.environment(home))
        let status = serve.waitForExit(timeout: 20)
        defer { _ = serve.stop(timeout: 2) }
        #expect(status == .exited(71), "\(serve.outputTail())")
        #expect(serve.stderr.snapshot().contains { $0.text.contains("\(path) holds uppercase hex digits") }, "\(serve.outputTail())")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "3F1C0000000000000000000000000ABC\n")
    }
}
