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
