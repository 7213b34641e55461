// The restore token's file: where it is, private, replaced whole, and what is not a token ignored.
import Glibc
import Testing
import TouchPortal

@Suite struct RestoreTokenFileTests {
    /// A fresh private directory for one test, removed by the caller's `defer`.
    static func scratch() -> String {
        var template = Array("/tmp/touchbridge-token-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        return String(cString: made!)
    }

    static func remove(_ directory: String) {
        _ = system("rm -rf '\(directory)'")
    }

    static func mode(_ path: String) -> mode_t? {
        var s = stat()
        return stat(path, &s) == 0 ? s.st_mode & 0o7777 : nil
    }

    @Test func thePathIsInTheStateDirectoryLikeThePairingSecret() {
        #expect(RestoreTokenFile.path(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/touchbridge/portal-restore-token")
        #expect(RestoreTokenFile.path(environment: ["HOME": "/h"]) == "/h/.local/state/touchbridge/portal-restore-token")
        // A relative XDG_STATE_HOME is ignored, as the XDG base directory rules say.
        #expect(RestoreTokenFile.path(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]) == "/h/.local/state/touchbridge/portal-restore-token")
    }

    @Test func aWrittenTokenIsPrivateAndReadBackAndReplacedWhole() throws {
        let dir = Self.scratch()
        defer { Self.remove(dir) }
        let path = RestoreTokenFile.path(environment: ["XDG_STATE_HOME": dir + "/state"])
        let none = RestoreTokenFile.read(path)
        #expect(none.token == nil && none.why == nil, "no file is no token and nothing wrong")
        try RestoreTokenFile.write("first-token", to: path)
        #expect(Self.mode(path) == 0o600)
        #expect(Self.mode(dir + "/state/touchbridge") == 0o700)
        #expect(RestoreTokenFile.read(path).token == "first-token")
        try RestoreTokenFile.write("second-token", to: path)
        #expect(RestoreTokenFile.read(path).token == "second-token")
        #expect(Self.mode(path + ".new") == nil, "the temporary file is gone")
    }

    @Test func whatIsNotATokenIsIgnoredAndSaid() throws {
        let dir = Self.scratch()
        defer { Self.remove(dir) }
        let path = dir + "/portal-restore-token"
        // A FIFO: opened without waiting for a writer, and refused.
        #expect(mkfifo(path, 0o600) == 0)
        let fifo = RestoreTokenFile.read(path)
        #expect(fifo.token == nil && fifo.why == "is not a regular file")
        unlink(path)
        for (content, why) in [("two words\n", "does not hold a restore token"), (String(repeating: "a", count: 300), "is larger than 256 bytes")] {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = content.withCString { write(fd, $0, strlen($0)) }
            close(fd)
            let r = RestoreTokenFile.read(path)
            #expect(r.token == nil && r.why == why, "\(content.prefix(20)): \(r)")
        }
        // Writing over it replaces it.
        try RestoreTokenFile.write("good-token", to: path)
        #expect(RestoreTokenFile.read(path).token == "good-token")
    }

    @Test func aTokenThatIsNotPrintableIsNotKept() {
        let dir = Self.scratch()
        defer { Self.remove(dir) }
        #expect(throws: PortalFailure.self) { try RestoreTokenFile.write("bad\ntoken", to: dir + "/t") }
        #expect(Self.mode(dir + "/t") == nil)
    }
}

/// The token's rule around the portal's Start (`PortalBackend.startKeepingToken`), with Start's answers as
/// the portal gives them: the real conversation is the VM's (`make test-portal`: a stale token, Cancel,
/// then the dialog answered); here, what becomes of the file for each answer.
@Suite struct RestoreTokenRuleTests {
    /// The file's bytes, mode and modification time: what "left as it was" compares.
    static func snapshot(_ path: String) -> (String, mode_t, Int, Int)? {
        var s = stat()
        guard stat(path, &s) == 0 else { return nil }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 512)
        let n = read(fd, &bytes, bytes.count)
        return (String(decoding: bytes[0..<max(n, 0)], as: UTF8.self), s.st_mode & 0o7777, s.st_mtim.tv_sec, s.st_mtim.tv_nsec)
    }

    @Test func aStaleTokenIsSentAndLeftAsItWasWhenTheUserSaysNo() throws {
        let dir = RestoreTokenFileTests.scratch()
        defer { RestoreTokenFileTests.remove(dir) }
        let path = RestoreTokenFile.path(environment: ["XDG_STATE_HOME": dir])
        try RestoreTokenFile.write("0b6f4c1e-7d2a-4f43-9a51-3c8e2d7f9b10", to: path)
        let before = try #require(Self.snapshot(path))
        var given: [String?] = []
        let failure = try #require(throws: PortalFailure.self) {
            _ = try PortalBackend.startKeepingToken(tokenPath: path, log: { _ in }) { (token) throws(PortalFailure) -> (Int, String?) in
                given.append(token)
                throw PortalFailure(.refused, "the RemoteDesktop portal's Start was cancelled (response 1): the user said no")
            }
        }
        #expect(failure.kind == .refused)
        #expect(given == ["0b6f4c1e-7d2a-4f43-9a51-3c8e2d7f9b10"], "the kept token is what Start was given")
        let after = try #require(Self.snapshot(path))
        #expect(after == before, "the kept file changed though Start was refused: \(before) -> \(after)")
        #expect(RestoreTokenFileTests.mode(path + ".new") == nil)
    }

    @Test func aStaleTokenIsReplacedByTheOneTheAnsweredDialogReturns() throws {
        let dir = RestoreTokenFileTests.scratch()
        defer { RestoreTokenFileTests.remove(dir) }
        let path = RestoreTokenFile.path(environment: ["XDG_STATE_HOME": dir])
        try RestoreTokenFile.write("stale-token", to: path)
        let (started, sent) = try PortalBackend.startKeepingToken(tokenPath: path, log: { _ in }) { (token) throws(PortalFailure) -> (String, String?) in
            ("started with \(token ?? "none")", "new-token")
        }
        #expect(started == "started with stale-token" && sent)
        #expect(RestoreTokenFile.read(path).token == "new-token")
        #expect(RestoreTokenFileTests.mode(path) == 0o600)
    }

    @Test func noTokenReturnedLeavesTheFileAndWhatIsNotATokenIsNotSent() throws {
        let dir = RestoreTokenFileTests.scratch()
        defer { RestoreTokenFileTests.remove(dir) }
        let path = RestoreTokenFile.path(environment: ["XDG_STATE_HOME": dir])
        try RestoreTokenFile.write("kept-token", to: path)
        let before = try #require(Self.snapshot(path))
        _ = try PortalBackend.startKeepingToken(tokenPath: path, log: { _ in }) { (token) throws(PortalFailure) -> (Int, String?) in (1, nil) }
        #expect(Self.snapshot(path)! == before, "a Start that returned no token changed the file")
        // Bytes that are not a token: nothing is sent (the dialog asks), the reason is logged, and the
        // token the answer returns replaces them.
        let fd = open(path, O_WRONLY | O_TRUNC)
        _ = "two words\n".withCString { write(fd, $0, strlen($0)) }
        close(fd)
        var lines: [String] = []
        var given: [String?] = []
        let (_, sent) = try PortalBackend.startKeepingToken(tokenPath: path, log: { lines.append($0) }) { (token) throws(PortalFailure) -> (Int, String?) in
            given.append(token)
            return (1, "fresh-token")
        }
        #expect(given == [nil] && !sent)
        #expect(lines.contains { $0.contains("does not hold a restore token") }, "\(lines)")
        #expect(RestoreTokenFile.read(path).token == "fresh-token")
    }
}
