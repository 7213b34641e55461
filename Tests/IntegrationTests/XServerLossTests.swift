// Losing the X server ends the daemon with a clear message and a non-zero code.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(1)))
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
                                     arguments: ["serve", "--display", ":4093", "--udp-port", "0", "--bind", "127.0.0.1"])
        let status = child.waitForExit(timeout: 10)
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
}
