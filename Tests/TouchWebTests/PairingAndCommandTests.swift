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
        // A damaged file is replaced, not trusted.
        try "short\n".write(toFile: dir + "/pairing-secret", atomically: true, encoding: .utf8)
        #expect(try PairingSecret.load(directory: dir, rotate: false).created)
    }

    @Test func stateDirectoryFollowsXDG() {
        #expect(PairingSecret.stateDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/touchbridge")
        #expect(PairingSecret.stateDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/touchbridge")
        #expect(PairingSecret.stateDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]) == "/h/.local/state/touchbridge")
    }

    @Test func wrongAttemptsAreLimitedPerAddressWithinAWindow() {
        let attempts = PairingAttempts()
        let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
        for _ in 0..<PairingAttempts.maxFailures {
            #expect(attempts.mayTry("10.0.0.2", now: t0))
            attempts.failed("10.0.0.2", now: t0)
        }
        #expect(!attempts.mayTry("10.0.0.2", now: t0 + .seconds(30)))
        #expect(attempts.mayTry("10.0.0.3", now: t0 + .seconds(30)), "another address is not affected")
        #expect(attempts.mayTry("10.0.0.2", now: t0 + .seconds(61)), "the window passed")
    }

    @Test func theSecretIsReadFromTheQuery() {
        #expect(WebServer.queryValue("k", in: "/ws?k=abc") == "abc")
        #expect(WebServer.queryValue("k", in: "/ws?x=1&k=abc&y=2") == "abc")
        #expect(WebServer.queryValue("k", in: "/ws?kk=abc") == nil)
        #expect(WebServer.queryValue("k", in: "/ws") == nil)
        #expect(WebServer.queryValue("k", in: "/ws?k=") == "")
    }
}

@Suite struct WebCommandTests {
    @Test func commandsParse() {
        #expect(WebCommand(parsing: "surface 390 700") == .surface(width: 390, height: 700))
        #expect(WebCommand(parsing: "click left") == .click(PointerButton(rawValue: 1)))
        #expect(WebCommand(parsing: "click right") == .click(PointerButton(rawValue: 3)))
        #expect(WebCommand(parsing: "text héllo €") == .text("héllo €"))
        #expect(WebCommand(parsing: "key Return") == .key(.returnKey))
        #expect(WebCommand(parsing: "mode touchscreen") == .mode(.touchscreen))
        #expect(WebCommand(parsing: "release") == .release)
    }

    @Test(arguments: ["", "surface", "surface 1 2", "surface -390 700", "surface nan 700", "surface 390 700 1",
                      "click", "click up", "text", "key F13", "mode joystick", "release now", "jump 3",
                      "text " + String(repeating: "x", count: 257)])
    func nonCommandsAreRefused(_ text: String) {
        #expect(WebCommand(parsing: Substring(text)) == nil)
    }
}
