// Pairing: a random secret per install, kept under $XDG_STATE_HOME/touchbridge/, that a browser must
// present to open the WebSocket; a constant-time comparison; and a per-address limit on wrong attempts.
import FoundationEssentials
import Glibc
import NIOCore
import Logging
import TouchCore

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
        let home = environment["HOME"] ?? (getpwuid(getuid())?.pointee.pw_dir).map { String(cString: $0) } ?? "/"
        return home + "/.local/state/touchbridge"
    }

    /// Reads the secret kept in `directory/pairing-secret`, or makes and keeps a new one when there is no
    /// file or `rotate` is set. A file that is there but is not a secret, or not the user's own (see
    /// `SecretFile.read`), is never replaced without `rotate`: it throws a `SecretFileError` saying what is
    /// wrong and what to do; so does a directory that is not the user's own. The file is private to the
    /// user (0600; `note` says when its mode was repaired). `serve` and `pair` both read the secret here.
    public static func load(directory: String, rotate: Bool) throws -> (secret: PairingSecret, created: Bool, note: String?) {
        if try SecretFile.directory(directory) == nil {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        guard let checked = try SecretFile.directory(directory) else {
            throw SecretFileError(path: directory, problem: "cannot be made", fix: "make it a directory of your own, or set XDG_STATE_HOME to one")
        }
        if !rotate, let kept = try SecretFile.read("pairing-secret", in: checked) {
            return (kept.secret, false, kept.note)
        }
        let secret = random()
        try SecretFile.write(secret, to: directory + "/pairing-secret", replace: rotate)
        return (secret, true, nil)
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

/// Wrong pairing attempts: more than `maxFailures` from one address (an IPv6 /64 counts as one) within
/// `window` refuses that address, right or wrong secret, until the window has passed; and wrong secrets
/// from all addresses together spend one budget of `globalBudget` per `window`, refilled evenly: when it
/// is spent, every address is refused until it refills, so many addresses (a whole /64, or spoofed
/// sources) gain nothing by taking turns. Bounded: past `maxAddresses` the oldest address is forgotten,
/// which the global budget makes harmless. Owned by the server's loop: the upgrade gate runs there,
/// and the `/pairing` route hops there (`WebServer.start` holds it in a `NIOLoopBoundBox`), so it
/// takes no lock. Time is an argument: the loop's `now`.
public final class PairingAttempts {
    public static let maxFailures = 5
    public static let window: TimeAmount = .seconds(60)
    /// Wrong secrets from all addresses together per `window`.
    public static let globalBudget = 100
    static let maxAddresses = 1024

    public enum Verdict: Equatable, Sendable {
        case yes
        case tooManyFromAddress
        case tooManyFromAll
    }

    /// Why an upgrade was refused, for the log (one line per reason per 10 s, with counts).
    public enum Refusal: Int, CaseIterable, Sendable {
        case wrongSecret, tooManyFromAddress, tooManyFromAll, foreignOrigin

        var text: String {
            switch self {
            case .wrongSecret: return "wrong or missing pairing secret"
            case .tooManyFromAddress: return "too many wrong pairing secrets from that address, wait a minute"
            case .tooManyFromAll: return "too many wrong pairing secrets from all addresses together (\(PairingAttempts.globalBudget) a minute), every address waits until the budget refills"
            case .foreignOrigin: return "the page's Origin is not this server"
            }
        }
    }

    private struct Entry {
        var failures: Int
        var since: NIODeadline
    }
    private struct State {
        var entries: [HostKey: Entry] = [:]
        /// Wrong secrets still allowed from all addresses, in thousandths (refilled continuously).
        var budgetMillis: Int64 = Int64(PairingAttempts.globalBudget) * 1000
        var refilledAt: NIODeadline?
        var log = DropLog<4>()
    }
    private var state = State()

    public init() {}

    private static func refill(_ state: inout State, now: NIODeadline) {
        let full = Int64(globalBudget) * 1000
        if let last = state.refilledAt, now > last {
            // globalBudget tokens per window: (elapsed / window) * globalBudget * 1000 thousandths.
            let elapsed = (now - last).nanoseconds
            let gained = elapsed / (window.nanoseconds / Int64(globalBudget) / 1000)
            state.budgetMillis = min(full, state.budgetMillis + gained)
        }
        state.refilledAt = now
    }

    /// Whether `host` may try now.
    public func mayTry(_ host: HostKey, now: NIODeadline) -> Verdict {
        Self.refill(&state, now: now)
        if state.budgetMillis < 1000 { return .tooManyFromAll }
        guard let entry = state.entries[host] else { return .yes }
        if now - entry.since > Self.window {
            state.entries[host] = nil
            return .yes
        }
        return entry.failures < Self.maxFailures ? .yes : .tooManyFromAddress
    }

    /// Records a wrong secret from `host`.
    public func failed(_ host: HostKey, now: NIODeadline) {
        Self.refill(&state, now: now)
        state.budgetMillis = max(0, state.budgetMillis - 1000)
        if var entry = state.entries[host], now - entry.since <= Self.window {
            entry.failures += 1
            state.entries[host] = entry
        } else {
            if state.entries.count >= Self.maxAddresses, let oldest = state.entries.min(by: { $0.value.since < $1.value.since }) {
                state.entries[oldest.key] = nil
            }
            state.entries[host] = Entry(failures: 1, since: now)
        }
    }

    /// The line to log for a refusal, or nil when this reason was logged less than 10 s ago.
    public func refusalLine(_ reason: Refusal, address: String, detail: String = "", now: NIODeadline) -> String? {
        let instant = Instant(nanoseconds: now.uptimeNanoseconds)
        guard let report = state.log.record(reasonIndex: reason.rawValue, at: instant) else { return nil }
        return "refused a WebSocket from \(address): \(reason.text)\(detail)\(report.countsSuffix)"
    }

    func logRefusal(_ reason: Refusal, address: String, now: NIODeadline, logger: Logger) {
        if let line = refusalLine(reason, address: address, now: now) { logger.warning("\(line)") }
    }

    func logOrigin(address: String, origin: String, now: NIODeadline, logger: Logger) {
        // The origin is the peer's text: quoted, control characters escaped, cut short.
        let shown = String(origin.prefix(100).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
        if let line = refusalLine(.foreignOrigin, address: address, detail: " (Origin: \"\(shown)\")", now: now) { logger.warning("\(line)") }
    }
}
