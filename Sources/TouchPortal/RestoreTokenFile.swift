// The portal's restore token, kept like the pairing secret: `$XDG_STATE_HOME/touchbridge/
// portal-restore-token`, private to the user (0600) in a private directory (0700), written whole or not
// at all (a temporary file renamed over the old one). Whatever is there that is not a token (a FIFO, a
// device, a large file, bytes that are not a token) is ignored: the dialog is shown, and the token
// Start then returns replaces it.
import Glibc

public enum RestoreTokenFile {
    /// The most bytes read: a token is a UUID; 256 leaves room.
    static let maxBytes = 256

    /// `$XDG_STATE_HOME/touchbridge/portal-restore-token` (default `~/.local/state/touchbridge/…`).
    public static func path(environment: [String: String]) -> String {
        let directory: String
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            directory = state + "/touchbridge"
        } else {
            let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/"
            directory = home + "/.local/state/touchbridge"
        }
        return directory + "/portal-restore-token"
    }

    /// The token kept at `path`; nil when there is none or what is there is not one (`why` says what).
    public static func read(_ path: String) -> (token: String?, why: String?) {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        if fd < 0 {
            let error = errno
            return (nil, error == ENOENT ? nil : "cannot be read (\(String(cString: strerror(error))))")
        }
        defer { Glibc.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return (nil, "is not a regular file") }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { return (nil, "cannot be read (\(String(cString: strerror(errno))))") }
            if n == 0 { break }
            count += n
        }
        guard count <= maxBytes else { return (nil, "is larger than \(maxBytes) bytes") }
        var text = bytes[0..<count]
        while let last = text.last, last == 0x0a || last == 0x0d || last == 0x20 { text.removeLast() }
        let token = String(decoding: text, as: UTF8.self)
        guard PortalRules.isUsableToken(token) else { return (nil, "does not hold a restore token") }
        return (token, nil)
    }

    /// Keeps `token` at `path`, 0600, replacing what was there; makes the directory (0700) when missing.
    /// Throws the reason, in words.
    public static func write(_ token: String, to path: String) throws(PortalFailure) {
        func fail(_ what: String) -> PortalFailure {
            PortalFailure(.unavailable, "cannot keep the portal's restore token in \(path): \(what) (\(String(cString: strerror(errno))))")
        }
        guard PortalRules.isUsableToken(token) else { throw PortalFailure(.unavailable, "the portal's restore token is not printable text: not kept") }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        // Each missing level, private (0700), as the pairing secret's directory is made.
        var made = ""
        for part in directory.split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o700) != 0, errno != EEXIST { throw fail("cannot make \(made)") }
        }
        let temporary = path + ".new"
        _ = unlink(temporary)
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw fail("cannot make \(temporary)") }
        let bytes = Array((token + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 {
                let failure = fail("cannot write \(temporary)")
                Glibc.close(fd)
                _ = unlink(temporary)
                throw failure
            }
            written += n
        }
        Glibc.close(fd)
        guard rename(temporary, path) == 0 else {
            let failure = fail("cannot rename \(temporary)")
            _ = unlink(temporary)
            throw failure
        }
    }
}
