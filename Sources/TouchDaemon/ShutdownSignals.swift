#if canImport(Glibc)
import Glibc
#endif

/// The signals that stop touchbridge, turned into bytes on a pipe that the lifecycle watches (the
/// self-pipe trick). Each of them takes the one teardown path: release every button and key, remove
/// the fingers' masters, restore the keymap, close the display, exit 0.
///
/// - SIGINT: Ctrl-C in the terminal.
/// - SIGTERM: `kill`, systemd's stop.
/// - SIGHUP: the terminal of a foreground `touchbridge` closed, or its ssh session dropped. touchbridge
///   has nothing to reload (the config file is read at start), so hanging up means stop, as for a
///   terminal program; `systemctl --user restart touchbridge` is the way to re-read the settings.
/// - SIGQUIT (Ctrl-\): a stop too, not a crash dump: nothing may stay pressed.
/// - SIGUSR1, SIGUSR2, SIGALRM: their default action kills the process, which would leave buttons
///   pressed; touchbridge uses none of them, so they stop it cleanly instead.
///
/// Why not a Dispatch signal source (which swift-service-lifecycle's `ServiceGroup` uses): on Linux
/// it reads a `signalfd`, which only sees a signal that every thread blocks; threads created earlier
/// (the event loop, the Swift concurrency pool) do not, so a process-directed SIGTERM could be
/// delivered to one of them and be lost. A `sigaction` handler runs in whichever thread gets the
/// signal and does only what is async-signal-safe: one `write` of the signal number to a
/// non-blocking pipe.
public enum ShutdownSignals {
    /// Every signal that stops touchbridge.
    public static let all: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM]

    /// The pipe's write end, set once in `install` before any handler can run, and only read after.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// Installs the handlers for `signals`; returns the pipe's read end (non-blocking, close-on-exec),
    /// which becomes readable with one byte per signal received.
    public static func install(_ signals: [Int32] = all) -> Int32? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        writeEnd = fds[1]
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(ShutdownSignals.writeEnd, &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        return fds[0]
    }

    /// Reads one pending signal number from the pipe, or nil if none is there.
    public static func take(from readEnd: Int32) -> Int32? {
        var byte: UInt8 = 0
        return read(readEnd, &byte, 1) == 1 ? Int32(byte) : nil
    }

    public static func name(_ number: Int32) -> String {
        switch number {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        case SIGQUIT: return "SIGQUIT"
        case SIGUSR1: return "SIGUSR1"
        case SIGUSR2: return "SIGUSR2"
        case SIGALRM: return "SIGALRM"
        default: return "signal \(number)"
        }
    }
}
