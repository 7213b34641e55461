// TouchWayland against a real compositor: weston 10 (Debian `weston`) on its X11 backend, inside a private
// Xvfb whose keyboard layout it takes, with two outputs (one at scale 2), in a private XDG_RUNTIME_DIR.
// Weston is the compositor that runs here as root with a seat; sway is tested in the VM
// (Tests/VM/guest/waylandtest.py).
import Foundation
import Glibc
import Synchronization
import Testing
import TouchCore
@testable import TouchWayland

/// A child process started with `posix_spawn` (empty signal mask, default handlers: a child of
/// Foundation's `Process` under `swift test` inherits blocked signals and ignores SIGTERM), its output
/// to `log`.
struct Child {
    let pid: pid_t

    init(_ path: String, _ args: [String], environment: [String: String] = [:], log: String = "/dev/null") throws {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let argv = ([path] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        guard r == 0 else { throw WestonSession.SessionError("cannot start \(path): \(String(cString: strerror(r)))") }
        self.pid = pid
    }

    /// Waits for the exit, at most `seconds`; its status, nil on time-out.
    @discardableResult
    func wait(_ seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return status }
            usleep(20_000)
        }
        return nil
    }

    /// Whether it has exited (and is reaped), without waiting.
    func hasExited() -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    func stop() {
        kill(pid, SIGTERM)
        if wait(10) == nil {
            kill(pid, SIGKILL)
            wait(10)
        }
    }
}

/// A private Xvfb and a weston on it, stopped by `stop()`.
final class WestonSession {
    let display: String
    let runtimeDir: String
    let socket = "wayland-tb-test"
    private var xvfb: Child?
    private(set) var weston: Child?

    /// Sessions this process has started: suites run side by side, and two sessions started together
    /// must not share a display number or a runtime directory.
    private static let started = Mutex(0)

    /// Xvfb on a free display with `layout`, then weston (x11 backend, pixman, two 640x480 outputs; the
    /// one named X2 at scale 2), waited for until its socket answers.
    init(layout: String) throws {
        let index = Self.started.withLock { count -> Int in
            count += 1
            return count
        }
        runtimeDir = FileManager.default.temporaryDirectory.appendingPathComponent("tb-wl-\(getpid())-\(index)").path
        try FileManager.default.createDirectory(atPath: runtimeDir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        // A number free when looked at may be taken by another process before Xvfb starts: that Xvfb exits
        // at once, and another server answers on the number. Only a running Xvfb of this session counts.
        var n = 200 + Int(getpid() % 300) + 16 * index
        var server: (child: Child, display: String)?
        for _ in 0..<6 {
            while FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
                || FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") { n += 1 }
            let display = ":\(n)"
            let child = try Child("/usr/bin/Xvfb", [display, "-screen", "0", "1600x1200x24", "-noreset", "-nolisten", "tcp"])
            var exited = false
            try Self.waitUntil(30, "Xvfb \(display)") {
                exited = child.hasExited()
                return exited || (try? Child("/usr/bin/xdpyinfo", ["-display", display]).wait(10)) == 0
            }
            if !exited, !child.hasExited() {
                server = (child, display)
                break
            }
            n += 1
        }
        guard let server else { throw SessionError("Xvfb did not start on any of 6 display numbers") }
        xvfb = server.child
        display = server.display
        try setLayout(layout)
        let ini = runtimeDir + "/weston.ini"
        try "[core]\nshell=kiosk-shell.so\n[output]\nname=X2\nscale=2\n".write(toFile: ini, atomically: true, encoding: .utf8)
        weston = try Child("/usr/bin/weston", ["--backend=x11-backend.so", "--use-pixman", "--socket=\(socket)",
                                               "--width=640", "--height=480", "--output-count=2", "--config=\(ini)"],
                           environment: ["DISPLAY": display, "XDG_RUNTIME_DIR": runtimeDir],
                           log: runtimeDir + "/weston.log")
        try Self.waitUntil(30, "weston's socket") {
            guard FileManager.default.fileExists(atPath: self.runtimeDir + "/" + self.socket) else { return false }
            return (try? WaylandDesktop(name: self.runtimeDir + "/" + self.socket)) != nil
        }
    }

    /// The compositor's socket, as an absolute path (no environment needed).
    var socketPath: String { runtimeDir + "/" + socket }

    func setLayout(_ layout: String) throws {
        guard (try? Child("/usr/bin/setxkbmap", ["-display", display, layout]).wait(30)) == 0 else {
            throw SessionError("setxkbmap \(layout) failed")
        }
    }

    func stop() {
        weston?.stop()
        xvfb?.stop()
        weston = nil
        xvfb = nil
        try? FileManager.default.removeItem(atPath: runtimeDir)
    }

    deinit { stop() }

    struct SessionError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    static func waitUntil(_ seconds: Double, _ what: String, _ ready: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !ready() {
            guard Date() < deadline else { throw SessionError("\(what): not ready within \(seconds) s") }
            usleep(50_000)
        }
    }
}

/// Reads the desktop's events until `done` holds, at most `seconds`.
func readUntil(_ desktop: WaylandDesktop, _ seconds: Double, _ what: String, _ done: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !done() {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { throw WestonSession.SessionError("\(what): not within \(seconds) s") }
        var fd = pollfd(fd: desktop.fileDescriptor, events: Int16(POLLIN), revents: 0)
        if poll(&fd, 1, Int32(min(left, 1) * 1000)) > 0 { _ = try desktop.readEvents() }
    }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct WaylandDesktopTests {
    /// The outputs as weston lays them out (xdg-output), with their modes, scales and names; the seat
    /// keyboard's keymap (fr, from the X server weston runs on) as touchbridge's `Keymap`: z on KEY_W (17),
    /// a on KEY_Q (16), 2 on Shift+KEY_2, @ on AltGr+KEY_0; nothing borrowable.
    @Test func outputsAndTheFrenchKeymapOfAWestonSession() throws {
        let session = try WestonSession(layout: "fr")
        defer { session.stop() }
        let desktop = try WaylandDesktop(name: session.socketPath)
        defer { desktop.closeConnection() }
        #expect(desktop.hasXdgOutput)
        let outputs = desktop.outputs.sorted { $0.logical.x < $1.logical.x }
        #expect(outputs.count == 2, "\(desktop.outputs.map(\.summary))")
        guard outputs.count == 2 else { return }
        #expect(outputs[0].name == "X2")
        #expect(outputs[0].logical == PixelRect(x: 0, y: 0, width: 640, height: 480))
        #expect(outputs[0].modeWidth == 1280 && outputs[0].modeHeight == 960 && outputs[0].scale == 2)
        #expect(outputs[1].logical == PixelRect(x: 640, y: 0, width: 640, height: 480))
        #expect(outputs[1].modeWidth == 640 && outputs[1].scale == 1 && outputs[1].transform == .normal)
        #expect(outputs[1].monitor == Monitor(name: outputs[1].name, rect: outputs[1].logical, isPrimary: false))

        let keymap = try #require(desktop.keymap, "no keymap: \(String(describing: desktop.keymapProblem))")
        #expect(!keymap.canBorrow)
        #expect(keymap.position(of: KeySym(rawValue: 0x7a)) == KeyPosition(evdevCode: 17))
        #expect(keymap.position(of: KeySym(rawValue: 0x61)) == KeyPosition(evdevCode: 16))
        #expect(keymap.position(of: KeySym(rawValue: 0x32)) == KeyPosition(evdevCode: 3, shift: true))
        #expect(keymap.position(of: KeySym(rawValue: 0x40)) == KeyPosition(evdevCode: 11, levelThree: true))
        #expect(keymap.levelThreeKey == 100, "AltGr is the right Alt key (KEY_RIGHTALT)")
        #expect(keymap.shiftKey == 42)
    }

    /// `touchbridge monitors` in a Wayland session (WAYLAND_DISPLAY set, no `--display`) lists the
    /// compositor's outputs in its logical pixels, as `serve` maps onto them; with no compositor there it
    /// says so and exits 69.
    @Test func touchbridgeMonitorsListsTheCompositorsOutputs() throws {
        // The executable beside the test bundle (`swift test`), else the default debug build.
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/touchbridge"
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let binary = access(beside, X_OK) == 0 ? beside : root.path + "/.build/debug/touchbridge"
        let session = try WestonSession(layout: "us")
        defer { session.stop() }
        let out = session.runtimeDir + "/monitors.out"
        let listing = try Child(binary, ["monitors"], environment: ["WAYLAND_DISPLAY": session.socket, "XDG_RUNTIME_DIR": session.runtimeDir], log: out)
        let status = listing.wait(60)
        let lines = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        #expect(status == 0, "touchbridge monitors: status \(String(describing: status)): \(lines)")
        #expect(lines.contains("X2 640x480+0+0"), "\(lines)")
        #expect(lines.count == 2 && lines.contains { $0.hasSuffix(" 640x480+640+0") }, "\(lines)")

        let none = session.runtimeDir + "/none.out"
        let failing = try Child(binary, ["monitors"], environment: ["WAYLAND_DISPLAY": "no-such-socket", "XDG_RUNTIME_DIR": session.runtimeDir], log: none)
        let failed = failing.wait(60)
        #expect(failed.map { ($0 >> 8) & 0xff } == 69, "status \(String(describing: failed))")
        #expect(((try? String(contentsOfFile: none, encoding: .utf8)) ?? "").contains("touchbridge: "))
    }

    /// A layout change on the X server weston runs on reaches touchbridge as a new keymap (de: z on
    /// KEY_Y, 21), read from the compositor's `wl_keyboard.keymap` event.
    @Test func aNewKeymapIsFollowed() throws {
        let session = try WestonSession(layout: "fr")
        defer { session.stop() }
        let desktop = try WaylandDesktop(name: session.socketPath)
        defer { desktop.closeConnection() }
        #expect(desktop.keymap?.position(of: KeySym(rawValue: 0x7a))?.evdevCode == 17)
        try session.setLayout("de")
        try readUntil(desktop, 30, "the de keymap") { desktop.keymap?.position(of: KeySym(rawValue: 0x7a))?.evdevCode == 21 }
    }

    /// The compositor going away is a `connectionLost` error from `readEvents`, not a crash or a hang.
    /// Weston 10 offers no screen copy (as GNOME's and KDE's compositors): the live view says why, the
    /// desktop has no view, and a picture asked for anyway is a clear error, as is one of a rectangle no
    /// output shows. (The picture itself is tested against sway in the VM.)
    @Test func westonGivesTheViewNoPictureAndSaysWhy() throws {
        let session = try WestonSession(layout: "us")
        defer { session.stop() }
        let desktop = try WaylandDesktop(name: session.socketPath)
        defer { desktop.closeConnection() }
        #expect(desktop.viewProblem == "the compositor offers no screen copy (zwlr_screencopy_manager_v1)")
        #expect(desktop.view == nil)
        let first = try #require(desktop.outputs.first).logical
        let (screen, _) = try desktop.screen()
        for (rect, words) in [(PixelRect(x: 0, y: 0, width: first.width, height: first.height), "no screen copy"),
                              (PixelRect(x: screen.width + 10, y: 0, width: 10, height: 10), "no output shows")] {
            var called = false
            do {
                try desktop.withPicture(of: rect) { _ in called = true }
                Issue.record("a picture of \(rect) on weston")
            } catch {
                #expect("\(error)".contains(words), "\(error)")
            }
            #expect(!called)
        }
        #expect(desktop.pixelsHolding == "nothing")
    }

    @Test func theCompositorGoingAwayIsALostConnection() throws {
        let session = try WestonSession(layout: "us")
        defer { session.stop() }
        let desktop = try WaylandDesktop(name: session.socketPath)
        defer { desktop.closeConnection() }
        session.weston.map { kill($0.pid, SIGTERM) }
        var lost: WaylandError?
        do {
            try readUntil(desktop, 30, "the lost connection") { false }
        } catch let e as WaylandError {
            lost = e
        }
        guard case .connectionLost = lost else {
            Issue.record("want connectionLost, got \(String(describing: lost))")
            return
        }
    }

    /// No compositor at the name: a clear error naming it.
    @Test func noCompositorIsAClearError() {
        #expect(throws: WaylandError.self) { try WaylandDesktop(name: "/nonexistent/wayland-none") }
    }
}

/// The conversion of xkbcommon's levels into a `Keymap`, on levels written out by hand.
@Suite struct KeymapLevelsTests {
    static let shift: UInt32 = 1, mod5: UInt32 = 0x80, control: UInt32 = 4

    /// A level that only Control or NumLock selects is left out; the lowest level that Shift/AltGr select
    /// is kept; with no Shift key, shifted positions are dropped (the `Keymap` rule).
    @Test func levelsTheModifiersCannotSelectAreLeftOut() {
        let levels = [
            KeyLevel(code: 50, level: 0, keysym: 0xffe1, masks: [0]),                   // Shift_L
            KeyLevel(code: 108, level: 0, keysym: 0xfe03, masks: [0]),                  // ISO_Level3_Shift on RALT
            KeyLevel(code: 92, level: 0, keysym: 0xfe03, masks: [0]),                   // <LVL3>
            KeyLevel(code: 19, level: 0, keysym: 0xe0, masks: [0]),                     // fr: agrave on KEY_0
            KeyLevel(code: 19, level: 1, keysym: 0x30, masks: [Self.shift]),            // 0 on Shift
            KeyLevel(code: 19, level: 2, keysym: 0x40, masks: [Self.mod5]),             // @ on AltGr
            KeyLevel(code: 67, level: 1, keysym: 0x1008fe01, masks: [Self.control | 8]), // XF86Switch_VT_1: Ctrl+Alt
        ]
        let k = Keymap.compositors(levels, shiftMask: Self.shift, levelThreeMask: Self.mod5)
        #expect(k.position(of: KeySym(rawValue: 0x30)) == KeyPosition(evdevCode: 11, shift: true))
        #expect(k.position(of: KeySym(rawValue: 0x40)) == KeyPosition(evdevCode: 11, levelThree: true))
        #expect(k.position(of: KeySym(rawValue: 0x1008fe01)) == nil)
        #expect(k.levelThreeKey == 100, "the right Alt key, ahead of <LVL3>")
        #expect(!k.canBorrow)
        let noShift = Keymap.compositors(levels.filter { $0.keysym != 0xffe1 }, shiftMask: Self.shift, levelThreeMask: Self.mod5)
        #expect(noShift.position(of: KeySym(rawValue: 0x30)) == nil)
    }
}
