import Foundation
import NIOCore
import Testing
import TouchCore
@testable import TouchWeb

@Suite struct PairingTests {
    @Test func constantTimeEqualIsEquality() {
        #expect(PairingSecret.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!PairingSecret.constantTimeEqual(Array("abd".utf8), Array("abc".utf8)))
        #expect(!PairingSecret.constantTimeEqual(Array("ab".utf8), Array("abc".utf8)))
        #expect(!PairingSecret.constantTimeEqual(Array("abcd".utf8), Array("abc".utf8)))
        #expect(!PairingSecret.constantTimeEqual([], Array("abc".utf8)))
        let secret = PairingSecret.random()
        #expect(secret.matches(Substring(secret.value)))
        #expect(!secret.matches(Substring(secret.value.dropLast())))
        #expect(secret.value.count == 32 && secret.value.allSatisfy(\.isHexDigit))
        #expect(PairingSecret.random() != secret)
    }

    @Test func theSecretIsKeptPrivateAndRotatedOnRequest() throws {
        let dir = NSTemporaryDirectory() + "tb-pairing-\(getpid())-\(UInt32.random(in: 0...UInt32.max))/touchbridge"
        defer { try? FileManager.default.removeItem(atPath: (dir as NSString).deletingLastPathComponent) }
        let first = try PairingSecret.load(directory: dir, rotate: false)
        #expect(first.created)
        let again = try PairingSecret.load(directory: dir, rotate: false)
        #expect(!again.created && again.secret == first.secret)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/pairing-secret")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let rotated = try PairingSecret.load(directory: dir, rotate: true)
        #expect(rotated.created && rotated.secret != first.secret)
        // A damaged file is refused, not trusted and not replaced; --new-secret (rotate) replaces it.
        try "short\n".write(toFile: dir + "/pairing-secret", atomically: true, encoding: .utf8)
        #expect(throws: SecretFileError.self) { try PairingSecret.load(directory: dir, rotate: false) }
        #expect(try String(contentsOfFile: dir + "/pairing-secret", encoding: .utf8) == "short\n")
        #expect(try PairingSecret.load(directory: dir, rotate: true).created)
    }

    /// A fresh private directory for one secret file.
    static func secretDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "tb-secretfile-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// What `load` says about a secret file made by `make`, and that the file is still what it was.
    static func refusal(_ make: (String) throws -> Void) throws -> String {
        let dir = try secretDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/pairing-secret"
        try make(path)
        let before = try FileManager.default.attributesOfItem(atPath: path)
        var problem = "accepted"
        do {
            let loaded = try PairingSecret.load(directory: dir, rotate: false)
            problem = "accepted (created: \(loaded.created))"
        } catch let error as SecretFileError {
            #expect(error.path == path)
            problem = error.problem
        }
        let after = try FileManager.default.attributesOfItem(atPath: path)
        #expect(after[.type] as? FileAttributeType == before[.type] as? FileAttributeType, "the file was replaced")
        #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int, "the file was replaced")
        #expect(!FileManager.default.fileExists(atPath: path + ".new"), "a temporary file was left")
        return problem
    }

    @Test func uppercaseHexIsRefusedAndKept() throws {
        let problem = try Self.refusal { try "3F1C0000000000000000000000000ABC\n".write(toFile: $0, atomically: false, encoding: .utf8) }
        #expect(problem.contains("uppercase hex"), "\(problem)")
    }

    @Test func garbageIsRefusedAndKept() throws {
        let problem = try Self.refusal { try "not a secret at all, 32 chars..\n".write(toFile: $0, atomically: false, encoding: .utf8) }
        #expect(problem.contains("something other than a secret"), "\(problem)")
        let short = try Self.refusal { try "abc123\n".write(toFile: $0, atomically: false, encoding: .utf8) }
        #expect(short.contains("6 hex digits"), "\(short)")
        let empty = try Self.refusal { try "\n".write(toFile: $0, atomically: false, encoding: .utf8) }
        #expect(empty.contains("empty"), "\(empty)")
    }

    @Test func aFileTooLongIsRefusedAndKept() throws {
        // A valid secret followed by more: not read as the secret it starts with.
        let problem = try Self.refusal {
            try (String(repeating: "0123456789abcdef", count: 2) + "\n" + String(repeating: "x", count: 1 << 20))
                .write(toFile: $0, atomically: false, encoding: .utf8)
        }
        #expect(problem.contains("larger than \(SecretFile.maxBytes) bytes"), "\(problem)")
    }

    /// A FIFO with no writer: refused at once (opening it must not wait for a writer). The limit is wide:
    /// every suite runs in one process on as many threads as cores, and the integration suites beside
    /// it block threads for long on a loaded machine (a 1-minute limit tripped at 92 s of waiting).
    @Test(.timeLimit(.minutes(10))) func aFIFOIsRefusedWithoutWaiting() throws {
        let problem = try Self.refusal { #expect(mkfifo($0, 0o600) == 0) }
        #expect(problem.contains("is a FIFO"), "\(problem)")
    }

    /// A link to /dev/zero: refused as a link (O_NOFOLLOW), without opening the endless zeros.
    @Test(.timeLimit(.minutes(10))) func aLinkToDevZeroIsRefused() throws {
        let problem = try Self.refusal { try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: "/dev/zero") }
        #expect(problem.contains("is a symbolic link"), "\(problem)")
    }

    @Test func aDirectoryIsRefusedAndKept() throws {
        let problem = try Self.refusal { try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: false) }
        #expect(problem.contains("is a directory"), "\(problem)")
    }

    /// A link to nothing is a name that is there: not replaced by a new secret.
    @Test func aDanglingLinkIsNotReplaced() throws {
        let dir = try Self.secretDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/pairing-secret"
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: dir + "/nowhere")
        #expect(throws: SecretFileError.self) { try PairingSecret.load(directory: dir, rotate: false) }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == dir + "/nowhere")
        #expect(!FileManager.default.fileExists(atPath: dir + "/nowhere"))
    }

    /// A secret with surrounding whitespace is read; a link to a file holding one is not followed (the
    /// secret must be the user's own file, not whatever a link names).
    @Test func aSecretIsReadThroughWhitespaceButNotThroughALink() throws {
        let dir = try Self.secretDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let value = String(repeating: "0123456789abcdef", count: 2)
        try ("  " + value + "\r\n\n").write(toFile: dir + "/kept", atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir + "/pairing-secret", withDestinationPath: dir + "/kept")
        #expect(throws: SecretFileError.self) { try PairingSecret.load(directory: dir, rotate: false) }
        try FileManager.default.removeItem(atPath: dir + "/pairing-secret")
        try FileManager.default.moveItem(atPath: dir + "/kept", toPath: dir + "/pairing-secret")
        let loaded = try PairingSecret.load(directory: dir, rotate: false)
        #expect(loaded.secret.value == value && !loaded.created)
    }

    @Test func stateDirectoryFollowsXDG() {
        #expect(PairingSecret.stateDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/touchbridge")
        #expect(PairingSecret.stateDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/touchbridge")
        #expect(PairingSecret.stateDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]) == "/h/.local/state/touchbridge")
    }

    static func v4(_ text: String) -> HostKey {
        let parts = text.split(separator: ".").map { UInt32($0)! }
        return HostKey(SourceAddress(ipv4: parts.reduce(0) { $0 << 8 | $1 }, port: 40000))
    }

    static func v6(_ high: UInt64, _ low: UInt64) -> HostKey {
        HostKey(SourceAddress(high: high, low: low, port: 40000))
    }

    static let secret = PairingSecret(value: "0123456789abcdef0123456789abcdef")

    @Test func wrongSecretsFromAnAddressAreCountedWithinAWindow() {
        let attempts = PairingAttempts()
        let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
        for _ in 0..<PairingAttempts.maxFailures {
            #expect(attempts.check("0123", secret: Self.secret, from: Self.v4("10.0.0.2"), now: t0) == .wrongSecret)
        }
        #expect(attempts.check("0123", secret: Self.secret, from: Self.v4("10.0.0.2"), now: t0 + .seconds(30)) == .tooManyTries)
        #expect(attempts.check("0123", secret: Self.secret, from: Self.v4("10.0.0.3"), now: t0 + .seconds(30)) == .wrongSecret,
                "another address is not affected")
        #expect(attempts.check("0123", secret: Self.secret, from: Self.v4("10.0.0.2"), now: t0 + .seconds(61)) == .wrongSecret,
                "the window passed")
    }

    @Test func anIPv6SlashSixtyFourCountsAsOneAddress() {
        let attempts = PairingAttempts()
        let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let prefix: UInt64 = 0x2001_0db8_0000_0001
        // Five wrong secrets, each from a different address of the same /64.
        for i in 0..<UInt64(PairingAttempts.maxFailures) {
            #expect(attempts.check("0", secret: Self.secret, from: Self.v6(prefix, 0x1000 + i), now: t0) == .wrongSecret)
        }
        #expect(attempts.check("0", secret: Self.secret, from: Self.v6(prefix, 0xffff_ffff), now: t0) == .tooManyTries, "a fresh address of that /64")
        #expect(attempts.check("0", secret: Self.secret, from: Self.v6(prefix + 1, 1), now: t0) == .wrongSecret, "the next /64 is another address")
        #expect(Self.v6(prefix, 1) == Self.v6(prefix, 2) && Self.v4("10.0.0.1") != Self.v4("10.0.0.2"))
    }

    /// The right secret is let in from every address, whatever came before: the storm of the report
    /// (180 wrong secrets from 30 addresses in 0.2 s), then the right one from a fresh address, from one
    /// of the storm's and from one over its count; and a storm from more addresses than are remembered
    /// keeps the memory bounded.
    @Test func theRightSecretIsNeverRefused() {
        let attempts = PairingAttempts()
        let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
        for i in 0..<180 {
            let host = Self.v4("127.0.1.\(i % 30 + 1)")
            _ = attempts.check("00000000000000000000000000000000", secret: Self.secret, from: host, now: t0 + .microseconds(Int64(i) * 1_000))
        }
        let now = t0 + .milliseconds(200)
        #expect(attempts.check("0", secret: Self.secret, from: Self.v4("127.0.1.1"), now: now) == .tooManyTries)
        for host in ["127.0.1.1", "127.0.0.1", "192.168.7.7"] {
            #expect(attempts.check(Substring(Self.secret.value), secret: Self.secret, from: Self.v4(host), now: now) == .paired,
                    "the right secret refused from \(host)")
        }
        for i in 0..<5_000 {
            _ = attempts.check("0", secret: Self.secret, from: Self.v6(0x2001_0db8_0000_0000 + UInt64(i), 1), now: now + .microseconds(Int64(i)))
        }
        #expect(attempts.rememberedAddresses <= 1_024)
        #expect(attempts.check(Substring(Self.secret.value), secret: Self.secret, from: Self.v6(0x2001_0db8, 1), now: now + .seconds(1)) == .paired)
    }

    /// Every other string is refused: the secret with anything after it (256 NULs: the lengths' difference,
    /// 256, was once cut to a byte, 0), before it, cut short, or in another case.
    @Test(arguments: [
        String(repeating: "\0", count: 256), "\0", "0", String(repeating: "0", count: 224),
    ])
    func theSecretWithAnythingAfterItIsRefused(tail: String) {
        let value = Self.secret.value
        #expect(!Self.secret.matches(Substring(value + tail)), "the secret followed by \(tail.utf8.count) bytes matched")
        #expect(!Self.secret.matches(Substring(tail + value)))
        #expect(!PairingSecret.constantTimeEqual(Array((value + tail).utf8), Array(value.utf8)))
        #expect(!PairingSecret.constantTimeEqual(Array(value.utf8), Array((value + tail).utf8)))
    }

    @Test func onlyTheSecretItselfMatches() {
        let value = Self.secret.value
        #expect(Self.secret.matches(Substring(value)))
        #expect(!Self.secret.matches(Substring(value.uppercased())))
        #expect(!Self.secret.matches(Substring(value.dropLast())))
        #expect(!Self.secret.matches(""))
    }

    @Test func refusalsAreLoggedOncePerTenSecondsWithCounts() {
        let attempts = PairingAttempts()
        let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let first = attempts.refusalLine(.wrongSecret, address: "10.0.0.2", now: t0)
        #expect(first == "refused a WebSocket from 10.0.0.2: wrong or missing pairing secret")
        for i in 1...50 { #expect(attempts.refusalLine(.wrongSecret, address: "10.0.0.2", now: t0 + .milliseconds(Int64(i) * 100)) == nil) }
        #expect(attempts.refusalLine(.tooManyTries, address: "10.0.0.3", now: t0 + .seconds(1)) != nil, "another reason has its own line")
        let later = attempts.refusalLine(.wrongSecret, address: "10.0.0.4", now: t0 + .seconds(11))
        #expect(later?.hasSuffix("(and 50 more since the last report; 52 in all)") == true, "\(later ?? "nil")")
    }

    @Test(arguments: [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", true),
        ("HTTP://LocalHost:8000", "localhost:8000", true),
        ("https://phone.example", "phone.example:443", true),
        ("http://phone.example", "phone.example", true),
        ("http://[::1]:8000", "[::1]:8000", true),
        (nil, "127.0.0.1:8000", true),
        ("http://evil.example", "127.0.0.1:8000", false),
        ("http://127.0.0.1:8001", "127.0.0.1:8000", false),
        ("http://127.0.0.1", "127.0.0.1:8000", false),
        ("null", "127.0.0.1:8000", false),
        ("file://", "127.0.0.1:8000", false),
        ("http://127.0.0.1:8000/x", "127.0.0.1:8000", false),
        ("http://127.0.0.1:8000", nil, false),
    ] as [(String?, String?, Bool)])
    func theWebSocketTakesOnlyThePagesOwnOrigin(origin: String?, host: String?, accepted: Bool) {
        #expect(WebServer.originMatches(origin: origin, host: host) == accepted)
    }

    @Test func theSecretIsReadFromTheQuery() {
        #expect(WebServer.queryValue("k", in: "/ws?k=abc") == "abc")
        #expect(WebServer.queryValue("k", in: "/ws?x=1&k=abc&y=2") == "abc")
        #expect(WebServer.queryValue("k", in: "/ws?kk=abc") == nil)
        #expect(WebServer.queryValue("k", in: "/ws") == nil)
        #expect(WebServer.queryValue("k", in: "/ws?k=") == "")
    }
}
