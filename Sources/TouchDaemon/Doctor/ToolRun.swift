// Another program run to its end, bounded: `touchbridge doctor` asks the firewalls' own tools (nft, ufw,
// firewall-cmd). The program is found on PATH or in /usr/sbin and /sbin, reads /dev/null, and its output (standard output and
// error together) is read up to `maxBytes` within `seconds`; past either it is killed. The C calls
// (posix_spawn and its file actions, pipe, fcntl, poll, read, kill, waitpid) are each made here only.
import Glibc

public struct ToolRun: Sendable {
    /// The exit status, or nil when the program could not be started, was killed, or took too long.
    public var status: Int32?
    /// What it wrote, cut at `maxBytes`.
    public var output: String

    /// The program named `name`: the first executable file of that name in PATH's directories, then
    /// /usr/sbin and /sbin (where the firewalls' tools are, often not on a user's PATH).
    public static func locate(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        return directories.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// Runs `arguments` (the first the program's name, found by `locate`).
    public static func run(_ arguments: [String], seconds: Int32 = 3, maxBytes: Int = 256 << 10) -> ToolRun {
        guard let program = locate(arguments[0]) else { return ToolRun(status: nil, output: "\(arguments[0]): not installed") }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return ToolRun(status: nil, output: "pipe: \(String(cString: strerror(errno)))") }
        // Not inherited by the child beyond the descriptors its file actions give it.
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        defer { close(pipeEnds[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        let environment = Self.environmentStrings().filter { !$0.hasPrefix("LC_ALL=") && !$0.hasPrefix("LANG=") } + ["LC_ALL=C"]
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        close(pipeEnds[1])
        guard spawned == 0 else { return ToolRun(status: nil, output: "\(arguments[0]): \(String(cString: strerror(spawned)))") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        var remainingMS = seconds * 1000
        var killed = false
        while remainingMS > 0 {
            var p = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            let start = Self.milliseconds()
            let ready = poll(&p, 1, remainingMS)
            remainingMS -= Int32(clamping: Self.milliseconds() - start)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            let n = read(pipeEnds[0], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += buffer[..<min(n, maxBytes - bytes.count)]
            if bytes.count >= maxBytes { break }
        }
        if remainingMS <= 0 || bytes.count >= maxBytes {
            kill(pid, SIGKILL)
            killed = true
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        let output = String(decoding: bytes, as: UTF8.self)
        return ToolRun(status: killed || !exited ? nil : (status >> 8) & 0xff, output: output)
    }

    /// This process's environment, as NAME=value strings.
    private static func environmentStrings() -> [String] {
        var out: [String] = []
        var p = environ
        while let entry = p.pointee {
            out.append(String(cString: entry))
            p += 1
        }
        return out
    }

    /// A monotonic clock in milliseconds.
    private static func milliseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }
}
