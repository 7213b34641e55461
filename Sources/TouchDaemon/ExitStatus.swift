import TouchFiles
import TouchX11

/// Exit codes, as documented in the man page's EXIT STATUS (the numbers are `sysexits.h`'s).
public enum ExitStatus {
    /// A stop by any of `ShutdownSignals.all`, after releasing everything.
    public static let stopped: Int32 = 0
    /// A command line or config file the program cannot use.
    public static let usage: Int32 = 64
    /// An input's data is wrong: a recording that is not one, a file larger than its kind may be, a pairing
    /// secret file that is not a secret or not the user's own (`pair`). EX_DATAERR.
    public static let dataError: Int32 = FileExit.dataError
    /// An input file is not there or cannot be read as one: missing, unreadable, or not a regular file (a
    /// FIFO, a device, a directory): the config file, the TLS certificate or key, a recording. EX_NOINPUT.
    public static let noInput: Int32 = FileExit.noInput
    /// The X display could not be opened, lacks XTEST, or went away while running (without `--reconnect`);
    /// or `--backend uinput` could not make its devices; or the portal backend could not start (no portal,
    /// no RemoteDesktop with EIS, no libei) or the compositor ended its session.
    public static let display: Int32 = XErrorHandlers.lostServerExitCode
    /// A listener could not be opened (address in use, address not available).
    public static let listener: Int32 = 71
    /// An output file cannot be made: `record`'s file (or replay's `--send-log`) cannot be created, is a
    /// FIFO nobody reads, or is not a file, a character device or a FIFO. EX_CANTCREAT.
    public static let cannotCreate: Int32 = FileExit.cannotCreate
    /// Writing an output file failed (a full disk, /dev/full, an I/O error), at a write, `fsync` or
    /// `close`. EX_IOERR.
    public static let ioError: Int32 = FileExit.ioError
    /// `--backend portal` (or auto taking the portal): the user said no in the RemoteDesktop portal's
    /// dialog, or the desktop refused (the portal's response 1 or 2). EX_NOPERM.
    public static let portalRefused: Int32 = 77
    /// The process could not set itself up (a pipe or a thread).
    public static let software: Int32 = 70
}
