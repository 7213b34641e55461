// `touchbridge doctor` names each cause made on purpose, with its fix: no display and no uinput, an X
// display that does not answer, one that does, a port another program holds, a touchbridge already
// serving, a state directory others can write, a firewall that drops the page's port (nftables in a
// network namespace of its own), and no portal. The real binary, with a private home.
import Foundation
import Glibc
import Testing

@Suite(.timeLimit(.minutes(10)))
struct DoctorTests {
    /// `touchbridge doctor` with `arguments` (serve's options) and `environment` over a private home;
    /// its exit status and standard output's lines. DISPLAY and WAYLAND_DISPLAY are unset unless given.
    static func doctor(_ arguments: [String], environment: [String: String] = [:], executable: String? = nil,
                       prefix: [String] = []) throws -> (status: ChildExit?, lines: [String], all: String) {
        let child = try ChildProcess(
            name: "touchbridge doctor", executable: executable ?? (try Binaries.touchbridge()),
            arguments: prefix + ["doctor"] + arguments,
            environment: ["DISPLAY": "", "WAYLAND_DISPLAY": "", "XDG_SESSION_TYPE": ""].merging(environment) { $1 })
        let status = child.waitForExit(timeout: 30)
        defer { _ = child.stop(timeout: 2) }
        let lines = child.stdout.snapshot().map(\.text)
        return (status, lines, child.outputTail(60))
    }

    /// Whether `lines` has a line starting with `status` and `topic` (as doctor pads them) that contains
    /// `text` (any such line when `text` is empty: `contains("")` is false).
    static func has(_ lines: [String], _ status: String, _ topic: String, _ text: String) -> Bool {
        lines.contains { $0.hasPrefix(status.padding(8) + topic.padding(10)) && (text.isEmpty || $0.contains(text)) }
    }

    /// The fix line right after the finding that contains `text`.
    static func fix(after text: String, in lines: [String]) -> String? {
        guard let at = lines.firstIndex(where: { $0.contains(text) }), at + 1 < lines.count,
              lines[at + 1].trimmingCharacters(in: .whitespaces).hasPrefix("fix: ") else { return nil }
        return lines[at + 1]
    }

    @Test func noDisplayAndNoUInputIsAProblemWithItsFix() throws {
        let (status, lines, all) = try Self.doctor(["--debug-uinput-path", "/nonexistent/uinput", "--http-port", "0", "--tuio-port", "0",
                                                     "--udp-port", String(try freeUDPPort())])
        #expect(status == .exited(1), "doctor: \(status.map { "\($0)" } ?? "still running")\n\(all)")
        #expect(Self.has(lines, "note", "display", "neither DISPLAY nor WAYLAND_DISPLAY is set"), "\(all)")
        #expect(Self.has(lines, "problem", "backend", "nothing to drive"), "\(all)")
        #expect(Self.has(lines, "problem", "uinput", "/nonexistent/uinput cannot make devices"), "\(all)")
        #expect(Self.fix(after: "/nonexistent/uinput cannot make devices", in: lines)?.contains("udev rule") == true, "\(all)")
        #expect(lines.last?.hasSuffix("problems found") == true, "\(all)")
    }

    @Test func anXDisplayThatDoesNotAnswerIsNamed() throws {
        // A display number no server has (its socket is not there).
        var number = 6000 + Int.random(in: 0..<3000)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") { number += 1 }
        let (status, lines, all) = try Self.doctor(["--debug-uinput-path", "/nonexistent/uinput", "--http-port", "0", "--tuio-port", "0",
                                                     "--udp-port", String(try freeUDPPort())],
                                                    environment: ["DISPLAY": ":\(number)"])
        #expect(status == .exited(1), "\(all)")
        #expect(Self.has(lines, "problem", "display", "X display :\(number) does not answer"), "\(all)")
        #expect(Self.fix(after: "X display :\(number) does not answer", in: lines) != nil, "\(all)")
    }

    @Test func anXDisplayThatAnswersGivesXTestAndSaysWhy() throws {
        let xvfb = try XvfbServer.start(width: 800, height: 600)
        defer { _ = xvfb.stop() }
        let (_, lines, all) = try Self.doctor(["--debug-uinput-path", "/nonexistent/uinput", "--http-port", "0", "--tuio-port", "0",
                                                "--udp-port", String(try freeUDPPort())],
                                               environment: ["DISPLAY": xvfb.display])
        #expect(Self.has(lines, "ok", "display", "X display \(xvfb.display) answers"), "\(all)")
        #expect(Self.has(lines, "ok", "backend", "backend: xtest (--backend auto): /nonexistent/uinput cannot be used"), "\(all)")
        #expect(Self.has(lines, "note", "uinput", "/nonexistent/uinput cannot make devices"), "\(all)")
        #expect(!Self.has(lines, "problem", "display", ""), "\(all)")
    }

    @Test func aPortAnotherProgramHoldsIsNamedWithHowToFindIt() throws {
        let port = try freeUDPPort()
        let held = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(held) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(held, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        #expect(bound == 0)
        let (status, lines, all) = try Self.doctor(["--bind", "127.0.0.1", "--udp-port", String(port), "--http-port", "0", "--tuio-port", "0",
                                                     "--debug-uinput-path", "/nonexistent/uinput"])
        #expect(status == .exited(1), "\(all)")
        #expect(Self.has(lines, "problem", "port", "UDP \(port) (PoseAI apps) is in use by another program"), "\(all)")
        #expect(Self.fix(after: "UDP \(port) (PoseAI apps)", in: lines)?.contains("ss -lunp 'sport = :\(port)'") == true, "\(all)")
    }

    @Test func aTouchbridgeAlreadyServingIsANoteNotAProblem() throws {
        let xvfb = try XvfbServer.start(width: 800, height: 600)
        defer { _ = xvfb.stop() }
        let http = try freeTCPPort()
        let daemon = try Daemon.start(display: xvfb.display, idleReleaseMs: 1000, extraArguments: ["--http-port", String(http)])
        defer { _ = daemon.terminate() }
        _ = try daemon.listeningPort("http")
        let (_, lines, all) = try Self.doctor(["--bind", "127.0.0.1", "--http-port", String(http), "--udp-port", "0", "--tuio-port", "0",
                                                "--debug-uinput-path", "/nonexistent/uinput"],
                                               environment: ["DISPLAY": xvfb.display])
        #expect(Self.has(lines, "note", "port", "TCP \(http) (the page) is in use: a touchbridge answers"), "\(all)")
        #expect(!Self.has(lines, "problem", "port", ""), "\(all)")
    }

    @Test func aStateDirectoryOthersCanWriteIsAProblemWithItsFix() throws {
        let home = NSTemporaryDirectory() + "touchbridge-doctor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/state/touchbridge", withIntermediateDirectories: true)
        chmod(home + "/state/touchbridge", 0o777)
        let (status, lines, all) = try Self.doctor(["--bind", "127.0.0.1", "--http-port", String(try freeTCPPort()), "--udp-port", "0", "--tuio-port", "0",
                                                     "--debug-uinput-path", "/nonexistent/uinput"],
                                                    environment: ["XDG_STATE_HOME": home + "/state", "HOME": home])
        #expect(status == .exited(1), "\(all)")
        #expect(Self.has(lines, "problem", "pairing", "\(home)/state/touchbridge can be written by others (mode 0777)"), "\(all)")
        #expect(Self.fix(after: "can be written by others", in: lines)?.contains("chmod 700 \(home)/state/touchbridge") == true, "\(all)")
    }

    /// In a network namespace of its own (root, `unshare -n`): an nftables input chain that drops what it
    /// does not accept and accepts the UDP ports only; doctor names the page's TCP port and the rule that
    /// opens it; with that rule added, the firewall is fine. Needs root, unshare and nft (the test set).
    @Test func aFirewallThatDropsThePagesPortIsNamedWithTheRule() throws {
        try #require(getuid() == 0, "this test makes a network namespace and needs root (CI runs as root)")
        let nft = try #require(findInPath("nft") ?? (FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft") ? "/usr/sbin/nft" : nil),
                               "nft is missing: install nftables (scripts/deps.sh's test set)")
        let binary = try Binaries.touchbridge()
        let doctor = "\(binary) doctor --bind 127.0.0.1 --http-port 8123 --udp-port 8124 --tuio-port 0 --debug-uinput-path /nonexistent/uinput"
        let script = """
            set -e
            ip link set lo up
            \(nft) add table inet filter
            \(nft) add chain inet filter input '{ type filter hook input priority 0; policy drop; }'
            \(nft) add rule inet filter input iif lo ct state established,related accept
            \(nft) add rule inet filter input udp dport '{ 3333, 8124 }' accept
            \(doctor) || true
            echo ==== with the rule
            \(nft) add rule inet filter input tcp dport 8123 accept
            \(doctor) || true
            """
        let unshare = try #require(findInPath("unshare"), "unshare is missing (util-linux)")
        let (_, lines, all) = try Self.doctor([], executable: unshare, prefix: ["-n", "sh", "-c", script, "sh"])
        guard let split = lines.firstIndex(of: "==== with the rule") else {
            Issue.record("the script did not run both doctors:\n\(all)")
            return
        }
        let before = Array(lines[..<split]), after = Array(lines[split...])
        #expect(Self.has(before, "problem", "firewall", "nftables: chain inet filter input drops what it does not accept, and accepts no TCP 8123"), "\(all)")
        #expect(Self.fix(after: "accepts no TCP 8123", in: before)?.contains("sudo nft add rule inet filter input tcp dport 8123 accept") == true, "\(all)")
        #expect(Self.has(after, "ok", "firewall", "nftables: no input chain drops TCP 8123, UDP 8124"), "\(all)")
        #expect(!Self.has(after, "problem", "firewall", ""), "\(all)")
    }

    @Test func thePortalWithNoBusIsAProblemWhenItIsTheBackend() throws {
        let (status, lines, all) = try Self.doctor(["--backend", "portal", "--http-port", "0", "--tuio-port", "0", "--udp-port", String(try freeUDPPort())],
                                                    environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        #expect(status == .exited(1), "\(all)")
        #expect(Self.has(lines, "ok", "backend", "backend: portal (--backend portal)"), "\(all)")
        #expect(Self.has(lines, "problem", "portal", ""), "\(all)")
    }
}

private extension String {
    /// Padded with spaces to `width` (at least one), as doctor's columns.
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: Swift.max(1, width - count)) }
}
