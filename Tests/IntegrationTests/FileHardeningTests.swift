// Every file touchbridge reads or writes, through the real binary: a device or a FIFO where a config
// file, a certificate or a recording's output is expected; a full disk under `record`; the pairing secret
// in a file that is not the user's own; standard input, output and error closed. Each is refused at once
// with the file and the reason on stderr and sysexits' status (66 for an input that is not a regular
// file, 73 for an output that cannot be made, 74 for a write that failed), or, where the file is fine but
// its reader does not read, ends at a signal. Waits have deadlines that catch a hang; nothing sleeps to
// show that something did not happen.
import Foundation
import Glibc
import Testing

@Suite(.timeLimit(.minutes(10)))
struct FileHardeningTests {
    /// A fresh private directory (0700) for one test's files.
    static func scratch(_ name: String) throws -> String {
        let dir = NSTemporaryDirectory() + "tb-files-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return dir
    }

    /// Runs touchbridge with `arguments` to its end (at most `timeout` s: a hang is killed and fails the
    /// test); its status, stderr, and its peak resident memory in KiB (`wait4`'s `ru_maxrss`). `limit`:
    /// an address-space limit in bytes (so that a reader that does not stop fails quickly, not by taking
    /// the machine's memory).
    static func runMeasured(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 30,
                            limit: Int? = nil) throws -> (status: ChildExit?, stderr: String, peakKiB: Int) {
        let dir = try scratch("run")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var argv = [try Binaries.touchbridge()] + arguments
        if let limit {
            guard let prlimit = findInPath("prlimit") else { throw RigError("prlimit is not installed (Debian: util-linux)") }
            // prlimit sets the limit and execs the command: the same process, so wait4 measures touchbridge.
            argv = [prlimit, "--as=\(limit)"] + argv
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, dir + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, dir + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = dir
        env["XDG_STATE_HOME"] = dir + "/state"
        env["XDG_CONFIG_HOME"] = dir + "/config"
        for (key, value) in environment { env[key] = value }
        let pid = try spawn(argv, environment: env, actions: &actions)
        let (status, usage) = waitForExit(pid, timeout: timeout)
        let stderr = (try? String(contentsOfFile: dir + "/stderr", encoding: .utf8)) ?? ""
        return (status, stderr, usage.ru_maxrss)
    }

    /// posix_spawn with an empty signal mask and default handlers, as `ChildProcess` does.
    static func spawn(_ argv: [String], environment: [String: String], actions: inout posix_spawn_file_actions_t) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for arg in cArgs { free(arg) } }
        let cEnv: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in cEnv { free(entry) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, cEnv)
        guard rc == 0 else { throw RigError("cannot start \(argv.joined(separator: " ")): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// Waits at most `timeout` s for `pid` to exit (then kills it and reaps it: nil); its status and usage.
    static func waitForExit(_ pid: pid_t, timeout: Double) -> (ChildExit?, rusage) {
        let deadline = MonotonicClock.deadline(after: timeout)
        var status: Int32 = 0
        var usage = rusage()
        while MonotonicClock.now() < deadline {
            let r = wait4(pid, &status, WNOHANG, &usage)
            if r == pid {
                return (status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f), usage)
            }
            if r < 0 && errno != EINTR { return (nil, usage) }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        return (nil, usage)
    }

    // MARK: the config file

    /// An endless device as the config file: refused by what it is, before a byte is read, in bounded
    /// memory (it grew to 8.1 GB from /dev/zero, 4.3 GB from /dev/urandom, in 20 s). Under a 1 GiB
    /// address-space limit, so that reading without end fails fast instead of taking the machine.
    @Test(arguments: ["/dev/zero", "/dev/urandom"])
    func anEndlessDeviceAsTheConfigFileIsRefusedAtOnce(device: String) throws {
        for command in [["config", "--print", "--config", device], ["serve", "--config", device, "--display", ":nonexistent"]] {
            let run = try Self.runMeasured(command, timeout: 30, limit: 1 << 30)
            #expect(run.status == .exited(66), "\(command): \(run.status.map { "\($0)" } ?? "still running after 30 s")\n\(run.stderr)")
            #expect(run.stderr.contains("\(device) is a character device, not a config file"), "\(command):\n\(run.stderr)")
            // The peak a process spawned from this test reaches is at least what the spawn copied of the test
            // process before the exec (much more in a full run than alone): against `--version` spawned
            // the same way, at most 16 MiB more.
            let reference = try Self.runMeasured(["--version"], timeout: 30, limit: 1 << 30)
            print("\(command.joined(separator: " ")): peak RSS \(run.peakKiB) KiB, --version \(reference.peakKiB) KiB")
            #expect(run.peakKiB < reference.peakKiB + 16 << 10, "\(command): peak RSS \(run.peakKiB) KiB, --version \(reference.peakKiB) KiB")
        }
    }

    /// A FIFO as the config file, named by --config or found at $XDG_CONFIG_HOME/touchbridge/config.toml:
    /// `config`, `serve` and `pair` printed nothing and waited for a writer for good; now each says what it
    /// is and exits 66 at once.
    @Test func aFIFOAsTheConfigFileIsRefusedAtOnce() throws {
        let dir = try Self.scratch("fifo-config")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/config/touchbridge", withIntermediateDirectories: true)
        let xdgFIFO = dir + "/config/touchbridge/config.toml"
        let givenFIFO = dir + "/given.toml"
        #expect(mkfifo(xdgFIFO, 0o600) == 0 && mkfifo(givenFIFO, 0o600) == 0)
        let cases: [[String]] = [
            ["config", "--print", "--config", givenFIFO], ["serve", "--config", givenFIFO, "--display", ":nonexistent"],
            ["config", "--print"], ["serve", "--display", ":nonexistent"], ["pair"],
        ]
        for arguments in cases {
            let fifo = arguments.contains(givenFIFO) ? givenFIFO : xdgFIFO
            let child = try ChildProcess(name: "touchbridge \(arguments[0])", executable: try Binaries.touchbridge(),
                                         arguments: arguments, environment: ["XDG_CONFIG_HOME": dir + "/config"])
            let status = child.waitForExit(timeout: 10)
            defer { child.stop(timeout: 2) }
            #expect(status == .exited(66), "\(arguments): \(status.map { "\($0)" } ?? "still running after 10 s")\n\(child.outputTail())")
            #expect(child.stderr.snapshot().contains { $0.text.contains("\(fifo) is a FIFO, not a config file") },
                    "\(arguments):\n\(child.outputTail())")
        }
    }

    /// A missing --config is an input that is not there: 66, naming it.
    @Test func aMissingConfigFileIsNoInput() throws {
        let run = try Self.runMeasured(["config", "--print", "--config", "/nonexistent/touchbridge.toml"], timeout: 20)
        #expect(run.status == .exited(66), "\(run.stderr)")
        #expect(run.stderr.contains("/nonexistent/touchbridge.toml does not exist"), "\(run.stderr)")
    }

    /// A config file over 1 MiB (valid TOML: comments) is refused by its size: 65.
    @Test func aConfigFileOverOneMiBIsRefusedByItsSize() throws {
        let dir = try Self.scratch("large-config")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/config.toml"
        try (String(repeating: "# a comment line of a config file that is far too large for one\n", count: 20_000))
            .write(toFile: file, atomically: false, encoding: .utf8)
        let run = try Self.runMeasured(["config", "--print", "--config", file], timeout: 20)
        #expect(run.status == .exited(65), "\(run.stderr)")
        #expect(run.stderr.contains("\(file) is larger than 1 MiB, more than a config file may be"), "\(run.stderr)")
    }

    // MARK: the TLS certificate and key

    /// A FIFO as --tls-cert (or an endless device as --tls-key): `serve` bound UDP, then waited in
    /// `openat` for a writer for 11 minutes, deaf to SIGTERM. Now it says so and exits 66 before it
    /// listens on anything.
    @Test(arguments: [("fifo", "key"), ("cert", "/dev/urandom")])
    func aTLSFileThatIsNotARegularFileIsRefusedBeforeListening(cert: String, key: String) throws {
        let dir = try Self.scratch("tls")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fixtures = Binaries.packageRoot + "/Tests/IntegrationTests/Fixtures"
        let fifo = dir + "/cert.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let certPath = cert == "fifo" ? fifo : fixtures + "/tls-cert.pem"
        let keyPath = key == "key" ? fixtures + "/tls-key.pem" : key
        let xvfb = try XvfbServer.start()
        defer { _ = xvfb.stop() }
        let serve = try ChildProcess(
            name: "touchbridge serve", executable: try Binaries.touchbridge(),
            arguments: ["serve", "--display", xvfb.display, "--backend", "xtest", "--bind", "127.0.0.1", "--udp-port", "0",
                        "--tuio-port", "0", "--http-port", String(try freeTCPPort()), "--tls-cert", certPath, "--tls-key", keyPath])
        let status = serve.waitForExit(timeout: 20)
        defer { serve.stop(timeout: 2) }
        #expect(status == .exited(66), "\(status.map { "\($0)" } ?? "still running after 20 s")\n\(serve.outputTail())")
        let expected = cert == "fifo" ? "--tls-cert \(fifo) is a FIFO, not a certificate" : "--tls-key \(key) is a character device, not a private key"
        #expect(serve.stderr.snapshot().contains { $0.text.contains(expected) }, "\(serve.outputTail())")
        #expect(!serve.stdout.snapshot().contains { $0.text.hasPrefix("listening") }, "it listened first:\n\(serve.outputTail())")
    }

    /// A certificate file that holds no certificate, or a key that is not the certificate's (an EC key
    /// made for this test, tls-other-key.pem): the web listener is not opened, the reason is OpenSSL's
    /// in words, and serve exits 71, as for any listener that cannot start.
    @Test(arguments: [("not-pem", "no PEM certificate"), ("other-key", "the private key does not match the certificate")])
    func aTLSCertificateOrKeyThatCannotServeIsSaidAndNothingIsServed(what: String, expected: String) throws {
        let dir = try Self.scratch("tls-bad")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fixtures = Binaries.packageRoot + "/Tests/IntegrationTests/Fixtures"
        let notPEM = dir + "/cert.pem"
        try "not a certificate\n".write(toFile: notPEM, atomically: true, encoding: .utf8)
        let certPath = what == "not-pem" ? notPEM : fixtures + "/tls-cert.pem"
        let keyPath = fixtures + (what == "other-key" ? "/tls-other-key.pem" : "/tls-key.pem")
        let xvfb = try XvfbServer.start()
        defer { _ = xvfb.stop() }
        let port = try freeTCPPort()
        let serve = try ChildProcess(
            name: "touchbridge serve", executable: try Binaries.touchbridge(),
            arguments: ["serve", "--display", xvfb.display, "--backend", "xtest", "--bind", "127.0.0.1", "--udp-port", "0",
                        "--tuio-port", "0", "--http-port", String(port), "--tls-cert", certPath, "--tls-key", keyPath])
        let status = serve.waitForExit(timeout: 20)
        defer { serve.stop(timeout: 2) }
        #expect(status == .exited(71), "\(status.map { "\($0)" } ?? "still running after 20 s")\n\(serve.outputTail())")
        #expect(serve.stderr.snapshot().contains { $0.text.contains("cannot serve the web touchpad") && $0.text.contains(expected) },
                "\(serve.outputTail())")
        #expect(!serve.stdout.snapshot().contains { $0.text.hasPrefix("listening http") }, "it listened:\n\(serve.outputTail())")
    }

    // MARK: record's output

    /// A FIFO nobody reads as record's file: it hung in open(), deaf to SIGTERM and SIGINT. Now the open
    /// does not wait: refused, 73.
    @Test func recordToAFIFOWithNoReaderIsRefusedAtOnce() throws {
        let dir = try Self.scratch("record-fifo")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/out.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let record = try ChildProcess(name: "touchbridge record", executable: try Binaries.touchbridge(),
                                      arguments: ["record", fifo, "--bind", "127.0.0.1", "--udp-port", "0"])
        let status = record.waitForExit(timeout: 10)
        defer { record.stop(timeout: 2) }
        #expect(status == .exited(73), "\(status.map { "\($0)" } ?? "still running after 10 s")\n\(record.outputTail())")
        #expect(record.stderr.snapshot().contains { $0.text.contains("\(fifo) is a FIFO or socket that nobody reads") }, "\(record.outputTail())")
    }

    /// A FIFO whose reader stops reading: once the pipe is full, record's write used to wait for good,
    /// deaf to SIGTERM and SIGINT (their handlers restart the write). Now the wait for room ends at
    /// either signal: record stops, says the last line may be cut short, and exits 0.
    @Test(arguments: [SIGTERM, SIGINT])
    func recordToAFIFOWhoseReaderStallsEndsAtASignal(signal: Int32) throws {
        let dir = try Self.scratch("record-stall")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/out.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The reader: there, holding the FIFO open, never reading.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
        defer { close(reader) }
        let port = try freeUDPPort()
        let record = try ChildProcess(name: "touchbridge record", executable: try Binaries.touchbridge(),
                                      arguments: ["record", fifo, "--bind", "127.0.0.1", "--udp-port", String(port)])
        defer { record.stop(timeout: 2) }
        guard record.stdout.waitFor(timeout: 20, { $0.text.hasPrefix("recording poseai-udp") }) != nil else {
            throw RigError("record did not start\n" + record.outputTail())
        }
        // Datagrams until the pipe takes no more: what it holds stops growing (over 32 KiB, unchanged over
        // 50 more datagrams), while record still gets them: record now waits for room. (The pipe is full
        // before its nominal 64 KiB: the kernel fills its pages one line at a time.)
        let sender = try PoseAISender(port: port)
        let line = #"{"Touches":""# + String(repeating: "a", count: 1000) + #""}"#
        var queued: Int32 = 0, last: Int32 = -1, unchanged = 0
        let deadline = MonotonicClock.deadline(after: 20)
        while MonotonicClock.now() < deadline && unchanged < 50 {
            _ = try sender.send(line)
            usleep(5_000)
            _ = ioctl(reader, UInt(FIONREAD), &queued)
            unchanged = (queued == last && queued > 32_768) ? unchanged + 1 : 0
            last = queued
        }
        #expect(unchanged >= 50, "the pipe never filled (\(queued) bytes)\n\(record.outputTail())")
        record.signal(signal)
        let status = record.waitForExit(timeout: 5)
        #expect(status == .exited(0), "\(status.map { "\($0)" } ?? "still running 5 s after the signal")\n\(record.outputTail())")
        #expect(record.stderr.snapshot().contains { $0.text.contains("stopped by \(signal == SIGTERM ? "SIGTERM" : "SIGINT") while \(fifo) took no more") },
                "\(record.outputTail())")
    }

    /// Sends hellos to `port` until `child` exits (at most `timeout` s); its status.
    static func sendUntilExit(_ child: ChildProcess, port: UInt16, datagram: String, timeout: Double = 20) throws -> ChildExit? {
        let sender = try PoseAISender(port: port)
        let deadline = MonotonicClock.deadline(after: timeout)
        while MonotonicClock.now() < deadline {
            if let status = child.waitForExit(timeout: 0.05) { return status }
            _ = try? sender.send(datagram)
        }
        return child.waitForExit(timeout: 0.1)
    }

    /// record to /dev/full said "recorded 3 datagrams" and exited 0 with nothing written. Now the first
    /// write's error ends it: 74, with the reason.
    @Test func recordToDevFullFails() throws {
        let port = try freeUDPPort()
        let record = try ChildProcess(name: "touchbridge record", executable: try Binaries.touchbridge(),
                                      arguments: ["record", "/dev/full", "--bind", "127.0.0.1", "--udp-port", String(port), "--count", "3"])
        defer { record.stop(timeout: 2) }
        let status = try Self.sendUntilExit(record, port: port, datagram: PoseAISender.hello())
        #expect(status == .exited(74), "\(status.map { "\($0)" } ?? "still running after 20 s")\n\(record.outputTail())")
        #expect(record.stderr.snapshot().contains { $0.text.contains("/dev/full cannot be written (No space left on device)") }, "\(record.outputTail())")
        #expect(!record.stdout.snapshot().contains { $0.text.hasPrefix("recorded") }, "\(record.outputTail())")
    }

    /// A tmpfs of 16 KiB, mounted for `body` and always unmounted; nil when this machine does not let
    /// the test mount (not root, or no CAP_SYS_ADMIN in a container).
    static func withFullDisk<T>(_ body: (String) throws -> T) throws -> T? {
        let dir = try scratch("tmpfs")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=16k,mode=0700", "tmpfs", dir]
        mount.standardError = FileHandle.nullDevice
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { return nil }
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [dir]
            try? umount.run()
            umount.waitUntilExit()
        }
        return try body(dir)
    }

    /// A full filesystem under record: it wrote nothing and said "recorded 50 datagrams", exit 0. Now the
    /// write that finds no room ends it: 74, "No space left on device".
    @Test func recordToAFullFilesystemFails() throws {
        let ran: Void? = try Self.withFullDisk { disk in
            let port = try freeUDPPort()
            let file = disk + "/recording.jsonl"
            let record = try ChildProcess(name: "touchbridge record", executable: try Binaries.touchbridge(),
                                          arguments: ["record", file, "--bind", "127.0.0.1", "--udp-port", String(port), "--count", "50"])
            defer { record.stop(timeout: 2) }
            let status = try Self.sendUntilExit(record, port: port, datagram: #"{"Touches":""# + String(repeating: "b", count: 1000) + #""}"#)
            #expect(status == .exited(74), "\(status.map { "\($0)" } ?? "still running after 20 s")\n\(record.outputTail())")
            #expect(record.stderr.snapshot().contains { $0.text.contains("\(file) cannot be written (No space left on device)") }, "\(record.outputTail())")
        }
        #expect(ran != nil, "this machine does not let the test mount a tmpfs (the tests run as root in CI)")
    }

    // MARK: the pairing secret

    /// A private home for `pair` and `serve`: its state directory (`home/state/touchbridge`) made with
    /// `mode`; the secret file's path in it.
    static func secretHome(directoryMode: mode_t = 0o700) throws -> (home: String, directory: String, secret: String) {
        let home = try scratch("secret")
        let directory = home + "/state/touchbridge"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(chmod(directory, directoryMode) == 0)
        return (home, directory, directory + "/pairing-secret")
    }

    static func environment(_ home: String) -> [String: String] {
        ["XDG_STATE_HOME": home + "/state", "XDG_CONFIG_HOME": home + "/config", "HOME": home]
    }

    static let someSecret = "0123456789abcdef0123456789abcdef\n"
    /// A user that is not the test's (the tests run as root; any uid other than ours will do).
    static let otherUser: uid_t = 4242

    static func pair(_ home: String) throws -> ChildProcess {
        try ChildProcess(name: "touchbridge pair", executable: try Binaries.touchbridge(),
                         arguments: ["pair", "--bind", "127.0.0.1", "--http-port", "8123"], environment: environment(home))
    }

    /// `pair` refuses the secret file: 65, `problem` and `fix` on one line, no address printed.
    static func expectPairRefuses(_ home: String, _ problem: String, _ fix: String) throws {
        let pair = try pair(home)
        let status = pair.waitForExit(timeout: 10)
        defer { pair.stop(timeout: 2) }
        #expect(status == .exited(65), "\(status.map { "\($0)" } ?? "still running after 10 s")\n\(pair.outputTail())")
        #expect(pair.stderr.snapshot().contains { $0.text.contains(problem) && $0.text.contains(fix) },
                "no line saying \"\(problem)\" and \"\(fix)\":\n\(pair.outputTail())")
        #expect(!pair.stdout.snapshot().contains { $0.text.contains("#k=") }, "an address was printed:\n\(pair.outputTail())")
    }

    /// A 0666 secret in a 0777 directory: anyone could have written it. Refused with the fix.
    @Test func aSecretInADirectoryOthersCanWriteIsRefused() throws {
        let (home, directory, secret) = try Self.secretHome(directoryMode: 0o777)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try Self.someSecret.write(toFile: secret, atomically: false, encoding: .utf8)
        #expect(chmod(secret, 0o666) == 0)
        try Self.expectPairRefuses(home, "\(directory) can be written by others (mode 0777)", "chmod 700 \(directory)")
    }

    /// A symbolic link to another user's file holding a secret: refused (O_NOFOLLOW), whoever owns it.
    @Test func aSecretThatIsALinkToAnotherUsersFileIsRefused() throws {
        let (home, _, secret) = try Self.secretHome()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let theirs = home + "/theirs"
        try Self.someSecret.write(toFile: theirs, atomically: false, encoding: .utf8)
        #expect(chown(theirs, Self.otherUser, Self.otherUser) == 0)
        try FileManager.default.createSymbolicLink(atPath: secret, withDestinationPath: theirs)
        try Self.expectPairRefuses(home, "\(secret) is a symbolic link", "--new-secret")
    }

    /// A secret file owned by another user, in the user's own directory: refused.
    @Test func aSecretOwnedByAnotherUserIsRefused() throws {
        let (home, _, secret) = try Self.secretHome()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try Self.someSecret.write(toFile: secret, atomically: false, encoding: .utf8)
        #expect(chmod(secret, 0o600) == 0 && chown(secret, Self.otherUser, Self.otherUser) == 0)
        try Self.expectPairRefuses(home, "\(secret) is owned by uid \(Self.otherUser), not by you (uid \(geteuid()))", "--new-secret")
    }

    /// The user's own secret with mode 0644, in the user's own private directory: repaired to 0600, and
    /// said; the address is printed.
    @Test func aSecretWithALooseModeIsRepairedAndSaid() throws {
        let (home, _, secret) = try Self.secretHome()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try Self.someSecret.write(toFile: secret, atomically: false, encoding: .utf8)
        #expect(chmod(secret, 0o644) == 0)
        let pair = try Self.pair(home)
        let status = pair.waitForExit(timeout: 10)
        defer { pair.stop(timeout: 2) }
        #expect(status == .exited(0), "\(pair.outputTail())")
        #expect(pair.stderr.snapshot().contains { $0.text.contains("\(secret) had mode 0644, not 0600: made it 0600") }, "\(pair.outputTail())")
        let mode = (try FileManager.default.attributesOfItem(atPath: secret)[.posixPermissions] as? Int) ?? -1
        #expect(mode == 0o600, "mode \(String(mode, radix: 8))")
        #expect(pair.stdout.snapshot().first?.text == "http://127.0.0.1:8123/#k=0123456789abcdef0123456789abcdef", "\(pair.outputTail())")
    }

    /// `serve` reads the secret the same way: the 0777 directory is refused there too (the web touchpad
    /// does not start: 71), with the fix.
    @Test func serveRefusesASecretInADirectoryOthersCanWrite() throws {
        let (home, directory, secret) = try Self.secretHome(directoryMode: 0o777)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try Self.someSecret.write(toFile: secret, atomically: false, encoding: .utf8)
        #expect(chmod(secret, 0o666) == 0)
        let xvfb = try XvfbServer.start()
        defer { _ = xvfb.stop() }
        let serve = try ChildProcess(
            name: "touchbridge serve", executable: try Binaries.touchbridge(),
            arguments: ["serve", "--display", xvfb.display, "--udp-port", "0", "--tuio-port", "0", "--http-port", String(try freeTCPPort()),
                        "--bind", "127.0.0.1", "--backend", "xtest"],
            environment: Self.environment(home))
        let status = serve.waitForExit(timeout: 20)
        defer { serve.stop(timeout: 2) }
        #expect(status == .exited(71), "\(serve.outputTail())")
        #expect(serve.stderr.snapshot().contains { $0.text.contains("\(directory) can be written by others") && $0.text.contains("chmod 700") },
                "\(serve.outputTail())")
    }

    /// `serve --new-secret` on a full disk: the message said to start with --new-secret, which it was.
    /// Now it names the disk and what to do about it.
    @Test func aFullDiskUnderNewSecretIsWordedForTheDisk() throws {
        let ran: Void? = try Self.withFullDisk { disk in
            let directory = disk + "/touchbridge"
            #expect(mkdir(directory, 0o700) == 0)
            // Fill the disk.
            let filler = open(disk + "/filler", O_WRONLY | O_CREAT, 0o600)
            let block = [UInt8](repeating: 0, count: 4096)
            while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
            close(filler)
            let xvfb = try XvfbServer.start()
            defer { _ = xvfb.stop() }
            let serve = try ChildProcess(
                name: "touchbridge serve", executable: try Binaries.touchbridge(),
                arguments: ["serve", "--new-secret", "--display", xvfb.display, "--udp-port", "0", "--tuio-port", "0",
                            "--http-port", String(try freeTCPPort()), "--bind", "127.0.0.1", "--backend", "xtest"],
                environment: ["XDG_STATE_HOME": disk])
            let status = serve.waitForExit(timeout: 20)
            defer { serve.stop(timeout: 2) }
            #expect(status == .exited(71), "\(serve.outputTail())")
            let line = serve.stderr.snapshot().map(\.text).first { $0.contains("pairing-secret.new cannot be written") }
            #expect(line?.contains("No space left on device") == true && line?.contains("free some space") == true, "\(serve.outputTail())")
            #expect(line?.contains("--new-secret") == false, "it suggests --new-secret, which was given: \(line ?? "")")
        }
        #expect(ran != nil, "this machine does not let the test mount a tmpfs (the tests run as root in CI)")
    }

    // MARK: descriptors 0–2

    /// serve started with standard input, output and error closed: the event loop's descriptors took fds
    /// 0–2 and log lines were written into them. Now /dev/null holds each, and the daemon serves: the
    /// phone's hello is answered and the page's HTTP answer carries no log text.
    @Test func closedStandardStreamsBecomeDevNull() throws {
        let xvfb = try XvfbServer.start()
        defer { _ = xvfb.stop() }
        let home = try Self.scratch("closed-fds")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let udpPort = try freeUDPPort(), httpPort = try freeTCPPort()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addclose(&actions, fd) }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in Self.environment(home) { env[key] = value }
        let pid = try Self.spawn(
            [try Binaries.touchbridge(), "serve", "--display", xvfb.display, "--backend", "xtest", "--bind", "127.0.0.1",
             "--udp-port", String(udpPort), "--tuio-port", "0", "--http-port", String(httpPort), "--log-level", "trace"],
            environment: env, actions: &actions)
        var ended = false
        defer { if !ended { kill(pid, SIGKILL); _ = Self.waitForExit(pid, timeout: 5) } }
        // Serving: the hello is answered (sent again until it is, at most 20 s).
        let sender = try PoseAISender(port: udpPort)
        var answered = false
        let deadline = MonotonicClock.deadline(after: 20)
        while !answered && MonotonicClock.now() < deadline {
            _ = try sender.send(PoseAISender.hello())
            answered = sender.receive(timeout: 0.5) != nil
        }
        #expect(answered, "the daemon never answered the phone's hello")
        for fd in 0...2 {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) ?? "closed"
            #expect(target == "/dev/null", "fd \(fd) is \(target)")
        }
        // The page: a whole HTTP answer and nothing else on the connection.
        let answer = try Self.httpGet(port: httpPort, path: "/healthz")
        #expect(answer.hasPrefix("HTTP/1.1 200 ") && answer.hasSuffix("\r\n\r\nok\n"), "not the page's answer alone:\n\(answer.prefix(600))")
        kill(pid, SIGTERM)
        let (status, _) = Self.waitForExit(pid, timeout: 15)
        ended = true
        #expect(status == .exited(0), "\(status.map { "\($0)" } ?? "still running 15 s after SIGTERM")")
    }

    /// One HTTP/1.1 GET on 127.0.0.1:`port` with `Connection: close`; everything the server sent.
    static func httpGet(port: UInt16, path: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RigError("connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
