// `--backend`: what auto chooses and why, and what an unusable uinput does. The uinput devices themselves
// are tested in the VM stage (Tests/VM/), which has /dev/uinput, udev, libinput and Xorg; here the host
// has Xvfb, which reads no kernel devices, and the device node is named with the hidden
// `--debug-uinput-path`, so the choice does not depend on this machine's /dev/uinput.
import Foundation
import Glibc
import Testing

// Ten minutes, like every suite here: a test's time counts from its start, and in one test process
// with as many threads as cores it can wait long behind the blocking integration suites (a loaded
// run of the whole suite takes over three minutes). A hang still ends well inside CI's budget.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct BackendChoiceTests {
    /// auto falls back to XTest when the node is missing, and when it opens but is no uinput device
    /// (/dev/null: the first ioctl fails); the log says which and why, and XTest then drives X.
    @Test(arguments: ["/nonexistent/uinput", "/dev/null"])
    func autoFallsBackToXTestAndSaysWhy(node: String) throws {
        let rig = try Rig.start(extraArguments: ["--backend", "auto", "--debug-uinput-path", node])
        defer { rig.stop() }
        // The log comes through the daemon's stderr, read by a thread of its own: wait for the line
        // (it is written before "listening", but a loaded run read it after).
        _ = try rig.daemon.waitForLog(containing: "backend: xtest (--backend auto): \(node) cannot be used", "the fallback's backend line")
        let said = rig.daemon.logLines(containing: "backend: xtest (--backend auto): \(node) cannot be used")
        #expect(said.count == 1, "auto should say once that it falls back to XTest and why\n\(rig.daemon.outputTail())")
        _ = try rig.fingerDown(x: 0.5, y: 0.5, "a finger through XTest after the fallback")
    }

    @Test func autoWithMultitouchChoosesXTestForItsPointers() throws {
        let rig = try Rig.start(extraArguments: ["--backend", "auto", "--multitouch", "--debug-uinput-path", "/dev/null"])
        defer { rig.stop() }
        // Waited for, as above: two suites side by side checked before the stderr reader had the line.
        _ = try rig.daemon.waitForLog(containing: "backend: xtest (--backend auto): --multitouch gives every finger an X pointer", "the backend line")
        let said = rig.daemon.logLines(containing: "backend: xtest (--backend auto): --multitouch gives every finger an X pointer")
        #expect(said.count == 1, "\(rig.daemon.outputTail())")
    }

    /// An explicit uinput that cannot be had is an error (69) that says what to do, not a silent XTest.
    @Test func uinputThatCannotBeOpenedExits69AndSaysWhatToDo() throws {
        let xvfb = try XvfbServer.start(width: 640, height: 480)
        defer { xvfb.stop() }
        let child = try ChildProcess(name: "touchbridge", executable: try Binaries.touchbridge(), arguments: [
            "serve", "--display", xvfb.display, "--udp-port", "0", "--tuio-port", "0", "--http-port", "0",
            "--bind", "127.0.0.1", "--backend", "uinput", "--debug-uinput-path", "/nonexistent/uinput",
        ])
        let status = child.waitForExit(timeout: 15)
        // The exit comes before the reader threads have read all of the pipes: the output is whole once
        // both are closed.
        #expect(child.stdout.waitClosed(timeout: 10) && child.stderr.waitClosed(timeout: 10), "the output did not end")
        #expect(status == .exited(69), "expected exit 69, got \(String(describing: status))\n\(child.outputTail())")
        let said = child.stderr.snapshot().contains {
            $0.text.contains("--backend uinput: cannot make the input devices") && $0.text.contains("udev rule")
                && $0.text.contains("--backend xtest")
        }
        #expect(said, "the error should name the udev rule and --backend xtest\n\(child.outputTail())")
        #expect(!child.stdout.snapshot().contains { $0.text.hasPrefix("listening") }, "nothing should listen\n\(child.outputTail())")
    }

    /// `--backend auto` in a Wayland session (WAYLAND_DISPLAY set, here beside a real X display) never
    /// picks XTest, which would reach only Xwayland's X clients: without uinput it takes the RemoteDesktop
    /// portal and says so on its `backend:` line. Here the session bus is a real private dbus-daemon with
    /// no portal on it: the portal backend says that clearly and exits 69, instead of driving the X display.
    @Test func autoInAWaylandSessionWithoutUInputTakesThePortalNotXTest() throws {
        let xvfb = try XvfbServer.start(width: 640, height: 480)
        defer { xvfb.stop() }
        // A session bus of this test's own (its config lists no services, so nothing is activated).
        let directory = NSTemporaryDirectory() + "touchbridge-bus-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/bus"
        let config = directory + "/session.conf"
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(socket)</listen>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            </busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try ChildProcess(name: "dbus-daemon", executable: "/usr/bin/dbus-daemon",
                                      arguments: ["--config-file=\(config)", "--nofork", "--nopidfile"])
        defer { _ = daemon.stop() }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: socket), Date() < deadline { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: socket), "dbus-daemon made no socket\n\(daemon.outputTail())")
        let child = try ChildProcess(name: "touchbridge", executable: try Binaries.touchbridge(), arguments: [
            "serve", "--display", xvfb.display, "--udp-port", "0", "--tuio-port", "0", "--http-port", "0",
            "--bind", "127.0.0.1", "--backend", "auto", "--debug-uinput-path", "/nonexistent/uinput",
        ], environment: ["WAYLAND_DISPLAY": "wayland-touchbridge-test", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(socket)"])
        let status = child.waitForExit(timeout: 60)
        #expect(child.stdout.waitClosed(timeout: 10) && child.stderr.waitClosed(timeout: 10), "the output did not end")
        #expect(status == .exited(69), "expected exit 69, got \(String(describing: status))\n\(child.outputTail())")
        let lines = child.stdout.snapshot() + child.stderr.snapshot()
        let chose = lines.filter { $0.text.contains("backend: portal (--backend auto): a Wayland session (WAYLAND_DISPLAY=wayland-touchbridge-test), where XTest would reach only Xwayland's X clients") }
        #expect(chose.count == 1 && chose[0].text.contains("/nonexistent/uinput cannot be used"), "one backend: line naming the portal and why\n\(child.outputTail())")
        #expect(lines.contains { $0.text.contains("no desktop portal on the session bus") }, "\(child.outputTail())")
        #expect(!child.stdout.snapshot().contains { $0.text.hasPrefix("listening") }, "nothing should listen\n\(child.outputTail())")
    }

    /// XTest with no X display at all (no --display, DISPLAY empty) is a clear error, not an attempt.
    @Test func xtestWithNoDisplayExits69AndSaysSo() throws {
        let child = try ChildProcess(name: "touchbridge", executable: try Binaries.touchbridge(), arguments: [
            "serve", "--udp-port", "0", "--tuio-port", "0", "--http-port", "0", "--bind", "127.0.0.1", "--backend", "xtest",
        ], environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        let status = child.waitForExit(timeout: 15)
        #expect(child.stdout.waitClosed(timeout: 10) && child.stderr.waitClosed(timeout: 10), "the output did not end")
        #expect(status == .exited(69), "expected exit 69, got \(String(describing: status))\n\(child.outputTail())")
        #expect(child.stderr.snapshot().contains { $0.text.contains("--backend xtest needs an X display, and neither --display nor DISPLAY is set") },
                "\(child.outputTail())")
    }

    @Test func multitouchWithUInputIsACommandLineError() throws {
        let child = try ChildProcess(name: "touchbridge", executable: try Binaries.touchbridge(),
                                     arguments: ["serve", "--backend", "uinput", "--multitouch"])
        let status = child.waitForExit(timeout: 10)
        #expect(child.stderr.waitClosed(timeout: 10), "the output did not end")
        #expect(status == .exited(64), "expected exit 64, got \(String(describing: status))\n\(child.outputTail())")
        #expect(child.stderr.snapshot().contains { $0.text.contains("--multitouch is for --backend xtest") }, "\(child.outputTail())")
    }
}
