// The portal's restore token, kept like the pairing secret: `$XDG_STATE_HOME/touchbridge/
// portal-restore-token`, private to the user (0600) in a private directory (0700), written whole or not
// at all (a temporary file renamed over the old one). Whatever is there that is not a token (a FIFO, a
// device, a large file, bytes that are not a token) is ignored: the dialog is shown, and the token
// Start then returns replaces it.
import Glibc
import TouchFiles

public enum RestoreTokenFile {
    /// The most bytes read: a token is a UUID; 256 leaves room.
    static let maxBytes = FileKind.restoreToken.maxBytes

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
    /// Read through TouchFiles: a regular file of at most `maxBytes`, opened without waiting.
    public static func read(_ path: String) -> (token: String?, why: String?) {
        let bytes: [UInt8]
        do throws(FileProblem) {
            bytes = try BoundedFile.read(path, as: .restoreToken)
        } catch {
            switch error.reason {
            case .missing: return (nil, nil)
            case .notRegular: return (nil, "is not a regular file")
            case .tooLarge: return (nil, "is larger than \(maxBytes) bytes")
            default: return (nil, error.phrase)
            }
        }
        var text = bytes[...]
        while let last = text.last, last == 0x0a || last == 0x0d || last == 0x20 { text.removeLast() }
        let token = String(decoding: text, as: UTF8.self)
        guard PortalRules.isUsableToken(token) else { return (nil, "does not hold a restore token") }
        return (token, nil)
    }

    /// Keeps `token` at `path`, 0600, replacing what was there; makes the directory (0700) when missing.
    /// Throws the reason, in words.
    public static func write(_ token: String, to path: String) throws(PortalFailure) {
        func fail(_ what: String, _ error: Errno) -> PortalFailure {
            PortalFailure(.unavailable, "cannot keep the portal's restore token in \(path): \(what) (\(error))")
        }
        guard PortalRules.isUsableToken(token) else { throw PortalFailure(.unavailable, "the portal's restore token is not printable text: not kept") }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        // Each missing level, private (0700), as the pairing secret's directory is made.
        var made = ""
        for part in directory.split(separator: "/") {
            made += "/" + part
            do throws(Errno) { try FileCalls.makeDirectory(made, 0o700) } catch {
                if error != .exists { throw fail("cannot make \(made)", error) }
            }
        }
        let temporary = path + ".new"
        try? FileCalls.unlink(temporary)
        let fd: Int32
        do throws(Errno) {
            fd = try FileCalls.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        } catch {
            throw fail("cannot make \(temporary)", error)
        }
        let bytes = Array((token + "\n").utf8)
        var written = 0
        do throws(Errno) {
            while written < bytes.count {
                do throws(Errno) {
                    let n = try bytes.withUnsafeBytes { all in
                        Result { () throws(Errno) in try FileCalls.write(fd, UnsafeRawBufferPointer(rebasing: all[written...])) }
                    }.get()
                    if n == 0 { throw Errno(ENOSPC) }
                    written += n
                } catch where error == .interrupted {
                    continue
                }
            }
            try FileCalls.sync(fd)
        } catch {
            try? FileCalls.close(fd)
            try? FileCalls.unlink(temporary)
            throw fail("cannot write \(temporary)", error)
        }
        do throws(Errno) { try FileCalls.close(fd) } catch {
            try? FileCalls.unlink(temporary)
            throw fail("cannot write \(temporary)", error)
        }
        do throws(Errno) { try FileCalls.rename(temporary, path) } catch {
            try? FileCalls.unlink(temporary)
            throw fail("cannot rename \(temporary)", error)
        }
    }
}
