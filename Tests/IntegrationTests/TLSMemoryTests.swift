// TLS costs a bounded amount of memory. The real daemon with --tls-cert/--tls-key and
// --allow 127.0.0.1/32 on a private Xvfb; eight clients (Support/tls_flood.py, Python's ssl) do TLS
// handshakes in a loop from the allowed address, which needs no secret, each leaving its connection
// mid-head, dropped later without a close_notify or evicted by the server. The daemon's resident memory
// (VmRSS) after the flood must be within 20 MB of what it was before.
//
// With NIOSSL (until 2026-12-06) and its default 5 s TLS shutdown wait, during which a closed connection is
// kept whole, this test's flood took the debug daemon from 39 MB to 72 MB (2057 handshakes); with the wait
// at 100 ms, from 38 MB to 45 MB (5360 handshakes). The TLS handler on the system's OpenSSL
// (TLSServerHandler.swift) sends its close_notify and closes at once: 36 MB to 39 MB (1994 handshakes, the
// machine busy with a build).
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct TLSMemoryTests {
    /// The daemon's resident set, in bytes, from /proc/PID/status.
    static func residentBytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else {
            throw RigError("no VmRSS in /proc/\(pid)/status")
        }
        return kilobytes * 1024
    }

    /// Runs `program arguments` to its end (at most `timeout` s); throws unless it exits 0.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], timeout: Double) throws -> ChildProcess {
        guard let path = findInPath(program) else {
            throw RigError("\(program) is not installed (scripts/deps.sh installs it); this test needs it and does not skip")
        }
        let child = try ChildProcess(name: program, executable: path, arguments: arguments)
        guard child.waitForExit(timeout: timeout) == .exited(0) else {
            _ = child.stop(timeout: 2)
            throw RigError("\(program) \(arguments.joined(separator: " ")) failed\n" + child.outputTail())
        }
        return child
    }

    @Test func aTLSHandshakeFloodEndsWithinTwentyMB() throws {
        // A throwaway P-256 certificate (cheaper handshakes than the RSA fixture: more of them per second).
        let dir = NSTemporaryDirectory() + "touchbridge-tlsflood-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                 "-subj", "/CN=localhost", "-days", "1", "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"],
                     timeout: 30)
        let port = try freeTCPPort()
        let xvfb = try XvfbServer.start(width: 640, height: 480)
        defer { xvfb.stop() }
        let daemon = try Daemon.start(
            display: xvfb.display, idleReleaseMs: 10_000,
            extraArguments: ["--http-port", String(port), "--allow", "127.0.0.1/32",
                             "--tls-cert", dir + "/cert.pem", "--tls-key", dir + "/key.pem", "--log-level", "info"])
        defer { _ = daemon.terminate() }
        _ = try daemon.listeningLine("http")
        let before = try Self.residentBytes(daemon.pid)

        let flood = try Self.run("python3", [Binaries.packageRoot + "/Tests/IntegrationTests/Support/tls_flood.py",
                                             String(port), "20", "8", "8"], timeout: 60)
        guard let line = flood.stdout.waitFor(timeout: 20, { $0.text.hasPrefix("handshakes ") }) else {
            throw RigError("the TLS flood printed no count\n" + flood.outputTail())
        }
        let handshakes = Int(line.text.split(separator: " ")[1]) ?? 0
        // The flood happened. Without the bound what is held grows with the handshake rate (rate x 5 s
        // connections): 2057 handshakes in these 20 s took the debug daemon from 39 to 72 MB; at fewer
        // than about 1200 (a machine busy with other work) the growth without the bound nears 20 MB, so
        // below 600 the flood proves nothing and the test says so.
        #expect(handshakes >= 600, "the flood made only \(handshakes) handshakes (\(line.text)): too few to show anything")

        // The daemon still serves (a plain request over TLS), and its memory is back within 20 MB.
        let check = try Self.run("python3", ["-c", """
            import socket, ssl, sys
            c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE
            with c.wrap_socket(socket.create_connection(("127.0.0.1", \(port)), timeout=10)) as s:
                s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n")
                sys.stdout.write(s.recv(4096).decode().splitlines()[0] + "\\n")
            """], timeout: 20)
        #expect(check.stdout.waitFor(timeout: 20, { $0.text.contains("200") }) != nil, "no answer after the flood\n\(check.outputTail())")
        let after = try Self.residentBytes(daemon.pid)
        print("TLS flood: \(handshakes) handshakes; daemon RSS \(before >> 20) MB before, \(after >> 20) MB after")
        #expect(after <= before + 20 << 20,
                "RSS went from \(before >> 20) MB to \(after >> 20) MB after \(handshakes) TLS handshakes")
        #expect(daemon.isRunning, "\(daemon.outputTail())")
    }

    /// A seeded random run of hostile connections at the TLS listener (tls_hostile.py: random bytes, a
    /// ClientHello cut short or followed by noise, noise after a whole handshake, TLS 1.0 and 1.1): each is
    /// closed by the server (the script waits for the close, at most 5 s each), the failures are logged as
    /// one counted line per 10 s, and a proper HTTPS request is answered after them; the daemon runs on.
    @Test func hostileBytesAtTheTLSListenerAreClosedCountedAndThePageStillServed() throws {
        let fixtures = Binaries.packageRoot + "/Tests/IntegrationTests/Fixtures"
        let port = try freeTCPPort()
        let xvfb = try XvfbServer.start(width: 640, height: 480)
        defer { xvfb.stop() }
        let daemon = try Daemon.start(
            display: xvfb.display, idleReleaseMs: 10_000,
            extraArguments: ["--http-port", String(port), "--allow", "127.0.0.1/32",
                             "--tls-cert", fixtures + "/tls-cert.pem", "--tls-key", fixtures + "/tls-key.pem", "--log-level", "info"])
        defer { _ = daemon.terminate() }
        _ = try daemon.listeningLine("http")
        let seed = UInt32.random(in: 0...UInt32.max)
        let run = try Self.run("python3", [Binaries.packageRoot + "/Tests/IntegrationTests/Support/tls_hostile.py",
                                           String(port), String(seed), "300"], timeout: 120)
        #expect(run.stdout.waitFor(timeout: 10, { $0.text.hasPrefix("rounds 300 answered HTTP/1.1 200") }) != nil,
                "seed \(seed): \(run.outputTail())")
        let lines = daemon.logLines(containing: "its TLS failed")
        #expect(!lines.isEmpty && lines.count <= 5, "seed \(seed): \(lines.count) lines for 300 hostile connections:\n\(lines.prefix(6).joined(separator: "\n"))")
        #expect(daemon.isRunning, "seed \(seed): \(daemon.outputTail())")
    }

}
