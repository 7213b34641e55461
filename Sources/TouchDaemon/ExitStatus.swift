import TouchX11

/// Exit codes, as documented in the man page's EXIT STATUS.
public enum ExitStatus {
    /// A stop by any of `ShutdownSignals.all`, after releasing everything.
    public static let stopped: Int32 = 0
    /// A command line or config file the program cannot use.
    public static let usage: Int32 = 64
    /// The X display could not be opened, lacks XTEST, or went away while running (without `--reconnect`);
    /// or `--backend uinput` could not make its devices; or the portal backend could not start (no portal,
    /// no RemoteDesktop with EIS, no libei) or the compositor ended its session.
    public static let display: Int32 = XErrorHandlers.lostServerExitCode
    /// A listener could not be opened (address in use, address not available).
    public static let listener: Int32 = 71
    /// `--backend portal` (or auto taking the portal): the user said no in the RemoteDesktop portal's
    /// dialog, or the desktop refused (the portal's response 1 or 2). EX_NOPERM.
    public static let portalRefused: Int32 = 77
    /// The process could not set itself up (a pipe or a thread).
    public static let software: Int32 = 70
}

