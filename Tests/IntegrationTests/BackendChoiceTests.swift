// `--backend`: what auto chooses and why, and what an unusable uinput does. The uinput devices themselves
// are tested in the VM stage (scripts/vm/), which has /dev/uinput, udev, libinput and Xorg; here the host
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
        let said = rig.daemon.logLines(containing: "backend xtest (--backend auto): \(node) cannot be used")
        #expect(said.count == 1, "auto should say once that it falls back to XTest and why\n\(rig.daemon.outputTail())")
        _ = try rig.fingerDown(x: 0.5, y: 0.5, "a finger through XTest after the fallback")
    }

    @Test func autoWithMultitouchChoosesXTestForItsPointers() throws {
        let rig = try Rig.start(extraArguments: ["--backend", "auto", "--multitouch", "--debug-uinput-path", "/dev/null"])
        defer { rig.stop() }
        let said = rig.daemon.logLines(containing: "backend xtest (--backend auto): --multitouch gives every finger an X pointer")
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
    /// picks XTest, which would reach only Xwayland's X clients: without uinput it exits 69 and says why,
    /// instead of driving the X display.
    @Test func autoInAWaylandSessionWithoutUInputExits69InsteadOfPickingXTest() throws {
        let xvfb = try XvfbServer.start(width: 640, height: 480)
        defer { xvfb.stop() }
        let child = try ChildProcess(name: "touchbridge", executable: try Binaries.touchbridge(), arguments: [
            "serve", "--display", xvfb.display, "--udp-port", "0", "--tuio-port", "0", "--http-port", "0",
            "--bind", "127.0.0.1", "--backend", "auto", "--debug-uinput-path", "/nonexistent/uinput",
        ], environment: ["WAYLAND_DISPLAY": "wayland-touchbridge-test"])
        let status = child.waitForExit(timeout: 15)
        #expect(child.stdout.waitClosed(timeout: 10) && child.stderr.waitClosed(timeout: 10), "the output did not end")
        #expect(status == .exited(69), "expected exit 69, got \(String(describing: status))\n\(child.outputTail())")
        let said = child.stderr.snapshot().contains {
            $0.text.contains("a Wayland session (WAYLAND_DISPLAY=wayland-touchbridge-test), where XTest would reach only Xwayland's X clients")
                && $0.text.contains("needs the uinput backend") && $0.text.contains("/nonexistent/uinput cannot be used")
        }
        #expect(said, "the error should say why XTest is not picked and what uinput lacks\n\(child.outputTail())")
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
