#if canImport(Glibc)
import Glibc
#endif
import TouchFiles

/// Standard output or standard error.
public enum StandardStream: Int32, Sendable {
    case output = 1
    case error = 2
}

/// Writes one line to standard output (or `stream`) at once, whole: `write(2)` again after a partial
/// write and after an interrupted one (`EINTR`, a signal arriving: the daemon has handlers), given up
/// only on a real failure (a closed pipe: nobody reads it). Standard output may be a pipe read by a test
/// or a service manager, so nothing is buffered. The daemon's one writer for both streams.
public func writeLine(_ line: String, to stream: StandardStream = .output) {
    var text = line
    text.append("\n")
    text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = write(stream.rawValue, base + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Descriptors 0, 1 and 2.
public enum StandardStreams {
    /// Opens /dev/null on each of standard input, output and error that is closed (a service manager or
    /// a parent that closed them), so that the event loops' descriptors, sockets and files opened later
    /// never take 0–2 and have log lines written into them. The first thing `main` does, before anything
    /// opens a file.
    public static func openClosedOnes() {
        StandardDescriptors.openClosedOnes()
    }
}
