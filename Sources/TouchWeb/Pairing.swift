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

    /// What `touchbridge doctor` says of the kept secret, without making or replacing one: whether there
    /// is one, and the note when its mode was repaired (as `pair` does); throws what is wrong with the
    /// file or its directory, and what to do (as `load` would).
    public static func inspect(directory: String) throws(SecretFileError) -> (kept: Bool, note: String?) {
        guard let checked = try SecretFile.directory(directory),
              let kept = try SecretFile.read("pairing-secret", in: checked) else { return (false, nil) }
        return (true, kept.note)
    }

    /// Whether `candidate` is the secret: every byte of it compared, in time that depends only on the
    /// candidate's length (never on where the first difference is, nor on the secret).
    public func matches(_ candidate: Substring) -> Bool {
        Self.constantTimeEqual(Array(candidate.utf8), Array(value.utf8))
    }

    /// Whether `a` and `b` are the same bytes: every byte of `a` is compared whatever the differences
    /// found (no early exit), and a difference in length, whatever its size, is a difference.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        // The lengths' difference in full: cut to a byte, 32 and 288 (the secret and 256 bytes more)
        // would compare equal.
        var difference = UInt(bitPattern: a.count ^ b.count)
        for i in 0..<a.count {
            difference |= UInt(a[i] ^ (i < b.count ? b[i] : 0))
        }
        return difference == 0
    }
}

public struct PairingError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Wrong pairing secrets, counted per address (an IPv6 /64 counts as one) over `window`: the first
/// `maxFailures` are answered "wrong secret", the ones after it "too many tries" (the page then waits a
/// minute before it tries again). The right secret is never refused, from any address, whatever was
/// tried before: the secret has 128 bits, so no rate of guessing threatens it, and a limit that refused
/// the right secret too would let anyone who can reach the port lock the owner out (as one shared budget
/// for all addresses did: 180 wrong secrets from 30 addresses in 0.2 s refused the owner everywhere).
/// Bounded: at most `maxAddresses` addresses are remembered, the one counted longest ago forgotten first.
/// Owned by the server's loop: the upgrade gate runs there, and the `/pairing` route hops there
/// (`WebServer.start` holds it in a `NIOLoopBoundBox`), so it takes no lock. Time is an argument: the
/// loop's `now`.
public final class PairingAttempts {
    public static let maxFailures = 5
    public static let window: TimeAmount = .seconds(60)
    static let maxAddresses = 1024

    public enum Verdict: Equatable, Sendable {
        /// The secret: let in.
        case paired
        /// A wrong (or missing) secret.
        case wrongSecret
        /// A wrong secret from an address that sent more than `maxFailures` of them within `window`.
        case tooManyTries
    }

    /// Why an upgrade was refused, for the log (one line per reason per 10 s, with counts).
    public enum Refusal: Int, CaseIterable, Sendable {
        case wrongSecret, tooManyTries, foreignOrigin

        var text: String {
            switch self {
            case .wrongSecret: return "wrong or missing pairing secret"
            case .tooManyTries: return "too many wrong pairing secrets from that address (more than \(PairingAttempts.maxFailures) a minute; the right one is still let in)"
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
        var log = DropLog<3>()
    }
    private var state = State()

    public init() {}

    /// Whether `candidate`, from `host` at `now`, is the secret; a wrong one is counted.
    public func check(_ candidate: Substring, secret: PairingSecret, from host: HostKey, now: NIODeadline) -> Verdict {
        if secret.matches(candidate) { return .paired }
        return failed(host, now: now) > Self.maxFailures ? .tooManyTries : .wrongSecret
    }

    /// Records a wrong secret from `host`; returns how many it sent within the window, this one included.
    @discardableResult
    public func failed(_ host: HostKey, now: NIODeadline) -> Int {
        if var entry = state.entries[host], now - entry.since <= Self.window {
            entry.failures += 1
            state.entries[host] = entry
            return entry.failures
        }
        if state.entries[host] == nil, state.entries.count >= Self.maxAddresses,
           let oldest = state.entries.min(by: { $0.value.since < $1.value.since }) {
            state.entries[oldest.key] = nil
        }
        state.entries[host] = Entry(failures: 1, since: now)
        return 1
    }

    /// How many addresses are remembered (at most `maxAddresses`).
    var rememberedAddresses: Int { state.entries.count }

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
