// Losing the X server ends the daemon with a clear message and a non-zero code.
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct XServerLossTests {
    @Test func losingTheXServerMidDragExitsWithCode69AndSaysWhy() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        _ = try rig.fingerDown(x: 0.2, y: 0.2, "finger down before the X server goes away")

        let xvfbStatus = rig.xvfb.stop()
        #expect(xvfbStatus != nil, "Xvfb did not stop")
        // The daemon notices through its watch on the X connection, with no packet needed.
        let status = rig.daemon.waitForExit(timeout: 5)
        #expect(status == .exited(69), "touchbridge should exit 69 when the X server goes away, got \(String(describing: status))\n\(rig.daemon.outputTail())")
        let said = rig.daemon.logLines(containing: "lost the connection to the X server")
        #expect(!said.isEmpty, "touchbridge should say it lost the X server\n\(rig.daemon.outputTail())")
    }

    @Test func anUnreachableDisplayExitsWithCode69AndSaysWhy() throws {
        let binary = try Binaries.touchbridge()
        let child = try ChildProcess(name: "touchbridge", executable: binary,
                                     arguments: ["serve", "--display", ":4093", "--udp-port", "0", "--tuio-port", "0", "--http-port", "0", "--bind", "127.0.0.1"])
        let status = child.waitForExit(timeout: 10)
        #expect(child.stderr.waitClosed(timeout: 10), "the output did not end")  // the exit can come first
        #expect(status == .exited(69), "expected exit 69, got \(String(describing: status))\n\(child.outputTail())")
        let said = child.stderr.snapshot().contains { $0.text.contains("cannot open X display \":4093\"") }
        #expect(said, "touchbridge should name the display it cannot open\n\(child.outputTail())")
    }

    @Test func aBadCommandLineExitsWithCode64() throws {
        let binary = try Binaries.touchbridge()
        for arguments in [["serve", "--udp-port", "70000"], ["serve", "--allow", "300.1.1.1/8"], ["serve", "--mode", "joystick"]] {
            let child = try ChildProcess(name: "touchbridge", executable: binary, arguments: arguments)
            let status = child.waitForExit(timeout: 10)
            #expect(status == .exited(64), "\(arguments): expected exit 64, got \(String(describing: status))\n\(child.outputTail())")
        }
    }

    @Test func aPortInUseExitsWithCode71() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let binary = try Binaries.touchbridge()
        let child = try ChildProcess(name: "touchbridge", executable: binary, arguments: [
            "serve", "--display", rig.xvfb.display, "--udp-port", String(rig.daemon.port), "--bind", "127.0.0.1",
        ])
        let status = child.waitForExit(timeout: 10)
        #expect(status == .exited(71), "a second daemon on a port in use should exit 71, got \(String(describing: status))\n\(child.outputTail())")
    }

    @Test func withReconnectTheDaemonWaitsForTheDisplayAndDrivesTheNewServer() throws {
        let rig = try Rig.start(extraArguments: [
            "--reconnect", "--tuio-port", String(try freeUDPPort()), "--http-port", String(try freeTCPPort()),
        ])
        defer { rig.stop() }
        try rig.fingerDown(x: 0.2, y: 0.2, "finger down before the X server goes away")
        let number = rig.xvfb.number
        rig.observer.stop()
        _ = rig.xvfb.stop()

        try rig.daemon.waitForLog(containing: "waiting for X display", timeout: 5, "the daemon waits for the display")
        #expect(rig.daemon.isRunning, "with --reconnect the daemon should wait, not exit\n\(rig.daemon.outputTail())")
        #expect(!rig.daemon.logLines(containing: "lost the connection to the X server").isEmpty)

        let xvfb = try XvfbServer.start(number: number)
        defer { _ = xvfb.stop() }
        let observer = try Observer.start(display: xvfb.display)
        defer { observer.stop() }
        try rig.daemon.waitForLog(containing: "X display is back", timeout: 5, "the daemon reconnects")
        // The listeners stayed open across the loss (one lifecycle: only the X output was replaced), so
        // each was announced once, and the phone's next packet drives the new server on the same port.
        for kind in ["poseai-udp", "tuio-udp", "http"] {
            #expect(rig.daemon.logLines(containing: "listening \(kind) 127.0.0.1:").count == 1,
                    "\(kind) listener announced more than once\n\(rig.daemon.outputTail())")
        }

        let mark = observer.mark
        try rig.sender.send(touches: [.at(slot: 0, x: -0.4, y: 0.3)], state: [0: .at(x: -0.4, y: 0.3)])
        let target = rig.expectedPixel(x: -0.4, y: 0.3)
        guard observer.waitFor(from: mark, timeout: 20, { $0.isMotion(near: target.x, target.y, tolerance: 1) }) != nil else {
            Issue.record("no motion on the new X server\n\(observer.describe(from: mark))\n\(rig.daemon.outputTail())")
            return
        }
        #expect(observer.waitFor(from: mark, timeout: 20, { $0.isButton("press", 1) }) != nil, "no press on the new server")
        let end = observer.mark
        try rig.sender.send(touches: [.ended(slot: 0)], state: [:])
        #expect(observer.waitFor(from: end, timeout: 20, { $0.isButton("release", 1) }) != nil, "no release on the new server")
        #expect(rig.daemon.terminate() == .exited(0))
    }

    @Test func withReconnectAMissingDisplayIsAwaitedAndSIGTERMStillEndsIt() throws {
        let binary = try Binaries.touchbridge()
        let child = try ChildProcess(name: "touchbridge", executable: binary,
                                     arguments: ["serve", "--display", ":4093", "--udp-port", "0", "--tuio-port", "0", "--http-port", "0", "--bind", "127.0.0.1", "--reconnect"])
        defer { _ = child.stop(timeout: 2) }
        let waiting = child.stderr.waitFor(from: 0, timeout: 10) { $0.text.contains("waiting for X display \":4093\"") }
        #expect(waiting != nil, "no waiting line\n\(child.outputTail())")
        // It keeps waiting (it would exit 69 otherwise): SIGTERM finds it waiting, and it says so.
        child.signal(SIGTERM)
        let status = child.waitForExit(timeout: 5)
        #expect(status == .exited(0), "SIGTERM while waiting: \(String(describing: status))\n\(child.outputTail())")
        #expect(child.stderr.snapshot().contains { $0.text.contains("stopped by SIGTERM while waiting for the X display") },
                "the daemon was not waiting when SIGTERM came\n\(child.outputTail())")
    }
}
