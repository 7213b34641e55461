// Pairing: a random secret per install, kept under $XDG_STATE_HOME/touchbridge/, that a browser must
// present to open the WebSocket; a constant-time comparison; and a per-address limit on wrong attempts.
import Foundation
import NIOCore
import Synchronization

/// The install's pairing secret: 128 random bits as 32 lowercase hex digits.
public struct PairingSecret: Sendable, Equatable {
    public let value: String

    public init(value: String) { self.value = value }

    /// A new secret from the system's cryptographic generator (getrandom on Linux).
    public static func random() -> PairingSecret {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef")
        var text = ""
        for _ in 0..<32 { text.append(hex[Int(generator.next() % 16)]) }
        return PairingSecret(value: text)
    }

    /// `$XDG_STATE_HOME/touchbridge` (default `~/.local/state/touchbridge`).
    public static func stateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/touchbridge" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/touchbridge"
    }

    /// Reads the secret kept in `directory/pairing-secret`, or makes and keeps a new one when there is
    /// none, it is not a valid secret, or `rotate` is set. The file is private to the user (0600).
    public static func load(directory: String, rotate: Bool) throws -> (secret: PairingSecret, created: Bool) {
        let path = directory + "/pairing-secret"
        if !rotate, let data = FileManager.default.contents(atPath: path),
           let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
           text.count == 32, text.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) {
            return (PairingSecret(value: text), false)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let secret = random()
        let temporary = path + ".new"
        guard FileManager.default.createFile(atPath: temporary, contents: Data((secret.value + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw PairingError("cannot write \(temporary)")
        }
        if rename(temporary, path) != 0 { throw PairingError("cannot rename \(temporary) to \(path)") }
        return (secret, true)
    }

    /// Whether `candidate` is the secret, in time that depends only on the candidate's length (never on
    /// where the first difference is).
    public func matches(_ candidate: Substring) -> Bool {
        Self.constantTimeEqual(Array(candidate.utf8), Array(value.utf8))
    }

    /// Compares every byte whatever the differences found (no early exit).
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<a.count {
            difference |= a[i] ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}

public struct PairingError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Wrong pairing attempts per address: more than `maxFailures` within `window` refuses that address,
/// right or wrong secret, until the window has passed. Bounded: the oldest addresses are forgotten.
/// Shared by the server's connections (its own lock; the WebSocket upgrade is not a hot path).
public final class PairingAttempts: Sendable {
    public static let maxFailures = 5
    public static let window: TimeAmount = .seconds(60)
    static let maxAddresses = 1024

    private struct Entry {
        var failures: Int
        var since: NIODeadline
    }
    private let entries = Mutex<[String: Entry]>([:])

    public init() {}

    /// Whether `address` may try now.
    public func mayTry(_ address: String, now: NIODeadline = .now()) -> Bool {
        entries.withLock { entries in
            guard let entry = entries[address] else { return true }
            if now - entry.since > Self.window {
                entries[address] = nil
                return true
            }
            return entry.failures < Self.maxFailures
        }
    }

    /// Records a wrong secret from `address`.
    public func failed(_ address: String, now: NIODeadline = .now()) {
        entries.withLock { entries in
            if var entry = entries[address], now - entry.since <= Self.window {
                entry.failures += 1
                entries[address] = entry
            } else {
                if entries.count >= Self.maxAddresses, let oldest = entries.min(by: { $0.value.since < $1.value.since }) {
                    entries[oldest.key] = nil
                }
                entries[address] = Entry(failures: 1, since: now)
            }
        }
    }
}
