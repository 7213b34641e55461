// A child process with its stdout and stderr collected line by line into `LineStore`s, an optional
// stdin pipe, and bounded waits for its exit. Used for Xvfb, xobserve and the daemon.
import Foundation
import Glibc

/// How a child process ended (its status, or the signal that killed it); the daemon's own codes are
/// TouchDaemon's `ExitStatus`.
enum ChildExit: Equatable, CustomStringConvertible, Sendable {
    case exited(Int32)
    case signalled(Int32)

    var description: String {
        switch self {
        case .exited(let code): return "exit status \(code)"
        case .signalled(let sig): return "killed by signal \(sig)"
        }
    }
}

/// Spawned with `posix_spawn` rather than Foundation's `Process`, so that the child surely starts with
/// an empty signal mask and default handlers (a mask and ignored signals are inherited across exec,
/// and the test process ignores SIGPIPE). Seen here with `Process`: under `swift test`, Xvfb did not
/// exit on SIGTERM within 5 s; from a plain program, touchbridge did not. Only fds 0–2 are passed on.
// Sendable, proved: the reaper thread and the test share `exitStatus` and `stdinClosed`, and both are
// read and written only while holding `exitCondition`; every other stored property is a `let`
// (the two LineStores are themselves lock-protected).
final class ChildProcess: @unchecked Sendable {
    let name: String
    let commandLine: String
    let pid: pid_t
    let stdout = LineStore()
    let stderr = LineStore()
    private let stdinFD: Int32?
    private let exitCondition = NSCondition()
    private var exitStatus: ChildExit?
    private var stdinClosed = false
    /// The child's own home: `HOME`, `XDG_STATE_HOME` (`home/state`) and `XDG_CONFIG_HOME`
    /// (`home/config`) point into this fresh directory unless `environment` sets them, so no test ever
    /// reads or writes the real user's files (a pairing secret, a config file).
    let home: String

    /// Starts `executable` with `arguments`. With `stdin: false` the child's stdin is /dev/null.
    /// `environment` adds to (or replaces in) the test process's environment, after the private home.
    init(name: String, executable: String, arguments: [String], stdin: Bool = false,
         environment: [String: String] = [:]) throws {
        ignoreSIGPIPE()
        self.name = name
        self.commandLine = ([executable] + arguments).joined(separator: " ")

        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                throw RigError("\(name): pipe: \(String(cString: strerror(errno)))")
            }
            // The child gets them through dup2 (which clears the flag); the originals must not leak.
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }
        let out = try makePipe()
        let err = try makePipe()
        let input: (read: Int32, write: Int32)
        if stdin {
            input = try makePipe()
        } else {
            input = (open("/dev/null", O_RDONLY | O_CLOEXEC), -1)
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        // Descriptors the test process opened without O_CLOEXEC must not leak into the child.
        if let closeFrom = addCloseFrom { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD] {
            sigaddset(&defaults, sig)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var child: pid_t = 0
        var template = Array("/tmp/touchbridge-test-home-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw RigError("\(name): mkdtemp: \(String(cString: strerror(errno)))")
        }
        home = String(cString: made)
        var envText = ProcessInfo.processInfo.environment
        envText["HOME"] = home
        envText["XDG_STATE_HOME"] = home + "/state"
        envText["XDG_CONFIG_HOME"] = home + "/config"
        for (key, value) in environment { envText[key] = value }
        let envp: [UnsafeMutablePointer<CChar>?] = envText.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in envp { free(entry) } }
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        close(input.read)
        close(out.write)
        close(err.write)
        guard rc == 0 else {
            close(out.read)
            close(err.read)
            if input.write >= 0 { close(input.write) }
            throw RigError("\(name): cannot start \(commandLine): \(String(cString: strerror(rc)))")
        }
        pid = child
        stdinFD = input.write >= 0 ? input.write : nil

        stdout.startReading(fd: out.read, name: "\(name) stdout")
        stderr.startReading(fd: err.read, name: "\(name) stderr")
        // Reap exactly this child (never waitpid(-1): other children are not ours to reap).
        let childPid = child
        let reaper = Thread { [exitCondition, self] in
            var status: Int32 = 0
            while waitpid(childPid, &status, 0) < 0 && errno == EINTR {}
            let result: ChildExit = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
            exitCondition.lock()
            exitStatus = result
            exitCondition.broadcast()
            exitCondition.unlock()
        }
        reaper.name = "\(name) reaper"
        reaper.start()
    }

    /// The exit status if the child has exited.
    var status: ChildExit? {
        exitCondition.lock(); defer { exitCondition.unlock() }
        return exitStatus
    }

    var isRunning: Bool { status == nil }

    /// Waits at most `timeout` seconds for the child to exit. Once it has, also waits (at most 5 s more)
    /// until its stdout and stderr are read to their end: the exit can come before the reader threads
    /// have read the whole pipes, and a test reads the output right after.
    func waitForExit(timeout: Double) -> ChildExit? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        exitCondition.lock()
        while exitStatus == nil {
            if !exitCondition.wait(until: deadline) { break }
        }
        let status = exitStatus
        exitCondition.unlock()
        if status != nil {
            _ = stdout.waitClosed(timeout: 5)
            _ = stderr.waitClosed(timeout: 5)
        }
        return status
    }

    /// Sends `sig` unless the child has been reaped (its pid could then belong to another process).
    func signal(_ sig: Int32) {
        exitCondition.lock(); defer { exitCondition.unlock() }
        if exitStatus == nil { kill(pid, sig) }
    }

    /// Writes a line to the child's stdin.
    func writeLine(_ line: String) throws {
        guard let fd = stdinFD else { throw RigError("\(name): started without a stdin pipe") }
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                throw RigError("\(name): cannot write to its stdin (\(reason))\n" + outputTail())
            }
            bytes = bytes.dropFirst(n)
        }
    }

    func closeStdin() {
        exitCondition.lock(); defer { exitCondition.unlock() }
        if let fd = stdinFD, !stdinClosed {
            close(fd)
            stdinClosed = true
        }
    }

    /// SIGTERM, wait up to `timeout` s, then SIGKILL and wait again. Returns the final status.
    @discardableResult
    func stop(timeout: Double = 5) -> ChildExit? {
        if let status { return status }
        signal(SIGTERM)
        if let status = waitForExit(timeout: timeout) { return status }
        signal(SIGKILL)
        return waitForExit(timeout: 5)
    }

    /// The tails of stdout and stderr, for failure messages.
    func outputTail(_ lines: Int = 25) -> String {
        "\(name) (\(commandLine)) \(status.map { "\($0)" } ?? "still running")\n"
            + "  stdout:\n\(stdout.tail(lines))\n  stderr:\n\(stderr.tail(lines))"
    }

    deinit {
        // Not reachable while the reaper thread runs (it holds self); close what is left.
        if let fd = stdinFD, !stdinClosed { close(fd) }
        // The child is gone (it was reaped): its private home goes with it, or every run leaves
        // hundreds of directories in /tmp.
        try? FileManager.default.removeItem(atPath: home)
    }
}

/// glibc ≥ 2.34 `posix_spawn_file_actions_addclosefrom_np` (not visible to Swift without _GNU_SOURCE).
private let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
        return nil
    }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
}()

/// Writing to a pipe whose reader has exited must give an error, not kill the test process.
private let sigpipeIgnored: Bool = {
    signal(SIGPIPE, SIG_IGN)
    return true
}()

func ignoreSIGPIPE() { _ = sigpipeIgnored }

/// The full path of `program` from $PATH, or nil.
func findInPath(_ program: String) -> String? {
    if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for dir in path.split(separator: ":") {
        let candidate = "\(dir)/\(program)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}
