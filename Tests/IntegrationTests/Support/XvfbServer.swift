// A private Xvfb server on a free display number, started per test and always stopped.
import Foundation
import Glibc

final class XvfbServer {
    let display: String
    let number: Int
    let width: Int
    let height: Int
    private let child: ChildProcess

    private init(number: Int, width: Int, height: Int, child: ChildProcess) {
        self.number = number
        self.display = ":\(number)"
        self.width = width
        self.height = height
        self.child = child
    }

    /// Starts `Xvfb :N -screen 0 WxHx24 -noreset -nolisten tcp` on a free N and waits until it accepts
    /// connections. Throws (never skips) when Xvfb is missing or does not come up in `timeout` s.
    /// `number`: that display number only (to start a server again where one was stopped).
    static func start(width: Int = 1920, height: Int = 1080, number fixed: Int? = nil, timeout: Double = 15) throws -> XvfbServer {
        guard let xvfb = findInPath("Xvfb") else {
            throw RigError("Xvfb is not installed or not in PATH (Debian: apt-get install xvfb); "
                + "the integration tests need it and do not skip")
        }
        var failures: [String] = []
        var number = fixed ?? 90 + Int.random(in: 0..<400)
        for _ in 0..<(fixed == nil ? 6 : 1) {
            while fixed == nil && displayInUse(number) { number += 1 }
            let child = try ChildProcess(
                name: "Xvfb :\(number)", executable: xvfb,
                arguments: [":\(number)", "-screen", "0", "\(width)x\(height)x24", "-noreset", "-nolisten", "tcp"])
            let server = XvfbServer(number: number, width: width, height: height, child: child)
            switch server.waitUntilReady(timeout: timeout) {
            case .ready:
                return server
            case .exited:
                // Most likely another process took the number between our check and its start.
                failures.append(child.outputTail(10))
                number += 1
            case .timedOut(let detail):
                child.stop()
                throw RigError("Xvfb :\(number) did not accept connections within \(timeout) s (\(detail))\n"
                    + child.outputTail())
            }
        }
        throw RigError("Xvfb did not start on any of 6 display numbers:\n" + failures.joined(separator: "\n"))
    }

    private static func displayInUse(_ n: Int) -> Bool {
        access("/tmp/.X\(n)-lock", F_OK) == 0 || access("/tmp/.X11-unix/X\(n)", F_OK) == 0
    }

    private enum Readiness { case ready, exited, timedOut(String) }

    private func waitUntilReady(timeout: Double) -> Readiness {
        let deadline = MonotonicClock.deadline(after: timeout)
        let xdpyinfo = findInPath("xdpyinfo")
        var lastProbe = "no probe yet"
        while MonotonicClock.now() < deadline {
            if !child.isRunning { return .exited }
            if access("/tmp/.X11-unix/X\(number)", F_OK) == 0 {
                if let xdpyinfo {
                    // A full X handshake, not just a listening socket.
                    if let probe = try? ChildProcess(
                        name: "xdpyinfo", executable: xdpyinfo, arguments: ["-display", display, "-queryExtensions"])
                    {
                        let status = probe.waitForExit(timeout: 5) ?? { probe.stop(timeout: 1); return nil }()
                        if status == .exited(0) {
                            probe.stdout.waitClosed(timeout: 2)
                            let text = probe.stdout.snapshot().map(\.text).joined(separator: "\n")
                            if text.contains("XInputExtension") { return .ready }
                            lastProbe = "xdpyinfo lists no XInputExtension"
                        } else {
                            lastProbe = "xdpyinfo: \(status.map { "\($0)" } ?? "timed out")"
                        }
                    }
                } else if unixSocketAccepts("/tmp/.X11-unix/X\(number)") {
                    return .ready
                }
            }
            MonotonicClock.sleep(until: MonotonicClock.now() + 50_000_000)
        }
        return .timedOut(lastProbe)
    }

    private func unixSocketAccepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    var isRunning: Bool { child.isRunning }

    /// Kills the server and waits for it (SIGTERM, then SIGKILL after 5 s).
    @discardableResult
    func stop() -> ChildExit? { child.stop(timeout: 5) }

    func outputTail() -> String { child.outputTail() }
}
