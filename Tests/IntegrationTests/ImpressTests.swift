// The presenter's view with the real thing: Debian's LibreOffice Impress (soffice) on the rig's Xvfb with
// a profile of the test's own (remote control on, touchbridge authorised with its PIN, so no dialog), a
// deck with notes made by the test (python3-odf), opened normally (not --show: under Xvfb without a
// window manager a show started so does not advance); the real daemon; a page on a raw WebSocket.
// Impress's port, 1599, is one per machine: the suite is serialized, and every other daemon of the tests runs
// with `--debug-impress-port 0` (no Impress client; Support/Daemon.swift).
// A missing soffice is a failure, not a skip.
import Foundation
import Glibc
import Testing

/// A LibreOffice Impress of the test's own: its profile and deck in `directory`, on `display`.
final class ImpressProcess {
    let child: ChildProcess
    let directory: String

    /// The profile's registry: the remote control on (Tools › Options › Impress › General), touchbridge
    /// authorised with `pin` (what a first pairing's dialog leaves), and no first-run dialogs.
    static func registry(pin: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
        <item oor:path="/org.openoffice.Office.Impress/Misc/Start"><prop oor:name="EnableSdremote" oor:op="fuse"><value>true</value></prop></item>
        <item oor:path="/org.openoffice.Office.Impress/Misc/AuthorisedRemotes"><node oor:name="touchbridge" oor:op="replace"><prop oor:name="PIN" oor:op="fuse"><value>\(pin)</value></prop></node></item>
        <item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
        <item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
        </oor:items>
        """
    }

    /// Starts soffice with a fresh profile and deck on `display`, and waits until its remote server
    /// listens on 127.0.0.1:1599 (seconds, or a minute on a loaded machine). `meanwhile` runs every 2 s of
    /// the wait: a page pings there, so that it is not closed as silent (10 s without a frame).
    static func start(display: String, pin: String, meanwhile: () -> Void = {}) throws -> ImpressProcess {
        guard let soffice = findInPath("soffice") else {
            throw RigError("soffice is not installed (Debian: libreoffice-impress; scripts/deps.sh test)")
        }
        let directory = NSTemporaryDirectory() + "touchbridge-impress-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory + "/profile/user", withIntermediateDirectories: true)
        try registry(pin: pin).write(toFile: directory + "/profile/user/registrymodifications.xcu", atomically: true, encoding: .utf8)
        let deck = directory + "/deck.odp"
        let maker = try ChildProcess(name: "impress_deck.py", executable: "/usr/bin/python3",
                                     arguments: [Binaries.packageRoot + "/Tests/IntegrationTests/Support/impress_deck.py", deck])
        _ = wait(timeout: 60, meanwhile: meanwhile) { maker.status != nil }
        guard maker.waitForExit(timeout: 0.1) == .exited(0), FileManager.default.fileExists(atPath: deck) else {
            throw RigError("the deck was not made (python3-odf installed?): \(maker.outputTail())")
        }
        let child = try ChildProcess(name: "soffice", executable: soffice,
                                     arguments: ["-env:UserInstallation=file://\(directory)/profile", "--norestore", "--nologo",
                                                 "--nodefault", "--impress", deck],
                                     environment: ["DISPLAY": display, "SAL_USE_VCLPLUGIN": "x11"])
        let impress = ImpressProcess(child: child, directory: directory)
        guard wait(timeout: 120, meanwhile: meanwhile, until: impress.listening) else {
            impress.stop()
            throw RigError("soffice's remote server did not listen on 1599 within 120 s: \(child.outputTail())")
        }
        return impress
    }

    /// Whether `done` came true within `timeout` s, looked at every 0.2 s; `meanwhile` runs first and then
    /// every 2 s.
    static func wait(timeout: Double, meanwhile: () -> Void, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var next = Date.distantPast
        while !done() {
            guard Date() < deadline else { return false }
            if Date() >= next {
                meanwhile()
                next = Date().addingTimeInterval(2)
            }
            usleep(200_000)
        }
        return true
    }

    private init(child: ChildProcess, directory: String) {
        self.child = child
        self.directory = directory
    }

    /// Whether something listens on 127.0.0.1:1599 (a connection made and closed at once: Impress's
    /// server takes it as a client that said nothing).
    func listening() -> Bool {
        guard let socket = try? LoopbackSocket.connect(port: 1599, timeout: 1) else { return false }
        socket.close()
        return true
    }

    /// The processes started under `pid`: Debian's soffice is a script whose oosplash runs soffice.bin,
    /// the process that listens, so a signal to the child alone reaches neither.
    static func descendants(of pid: pid_t) -> [pid_t] {
        var children: [pid_t: [pid_t]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let process = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, let parent = pid_t(fields[1]) else { continue }
            children[parent, default: []].append(process)
        }
        var found: [pid_t] = []
        var queue = [pid]
        while let next = queue.popLast() {
            for child in children[next] ?? [] {
                found.append(child)
                queue.append(child)
            }
        }
        return found
    }

    /// Kills soffice.bin and what started it (mid-show: no goodbye), by their process ids: the child's
    /// descendants, and every process whose command line names this profile (one that oosplash started
    /// again, or that left its parent, is not a descendant when the list is read), until none is left and
    /// nothing listens on 1599 (at most 30 s).
    /// `meanwhile` runs before each try (at most 5 s apart): a page pings there.
    func kill(meanwhile: () -> Void = {}) {
        let deadline = Date().addingTimeInterval(30)
        repeat {
            meanwhile()
            let found = Set(Self.descendants(of: child.pid) + Self.processes(naming: directory + "/profile"))
            for process in found { Glibc.kill(process, SIGKILL) }
            child.signal(SIGKILL)
            _ = child.waitForExit(timeout: 5)
            if Self.processes(naming: directory + "/profile").isEmpty && !listening() { return }
            usleep(200_000)
        } while Date() < deadline
    }

    /// The processes whose command line contains `text` (their arguments joined by spaces).
    static func processes(naming text: String) -> [pid_t] {
        var found: [pid_t] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let process = pid_t(entry), process != getpid(),
                  let bytes = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let line = String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            if line.contains(text) { found.append(process) }
        }
        return found
    }

    /// Stops soffice (killed if it does not end) and removes its profile and deck.
    func stop() {
        let processes = Self.descendants(of: child.pid)
        for process in processes { Glibc.kill(process, SIGTERM) }
        _ = child.stop(timeout: 10)
        for process in processes { Glibc.kill(process, SIGKILL) }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct ImpressTests {
    typealias Page = CancelledStaysCancelledTests.Page
    typealias L = ImpressLinkTests

    /// The slides' fills, as the deck has them.
    static let red = (0xc0, 0x20, 0x20), green = (0x20, 0xa0, 0x20)

    /// Waits until the middle of the screen is `fill`: Impress's editing view shows slide 1 there once
    /// its document is drawn, and its show fills the screen with the slide shown.
    static func waitForFill(_ rig: Rig, _ fill: (Int, Int, Int), timeout: Double = 60, _ what: String) throws {
        var last = (0, 0, 0)
        do {
            try Screenshot.waitFor(display: rig.xvfb.display, timeout: timeout, what) { shot in
                last = shot.rgb(shot.width / 2, shot.height / 2)
                return shot.count(near: shot.width / 2, shot.height / 2, radius: 20, fill, tolerance: 40) > 800
            }
        } catch {
            throw RigError("\(error); the middle of the screen was \(last)")
        }
    }

    /// Starts the daemon and a page in presenter mode, then Impress (after touchbridge), and waits until
    /// touchbridge found and paired it by itself (no dialog: the profile authorises touchbridge) and
    /// Impress's document is drawn.
    static func startAll() throws -> (rig: Rig, home: String, page: Page, impress: ImpressProcess) {
        let (rig, port, secret, home) = try WebHardeningTests.start(mode: "touchpad", extraArguments: ["--impress-pin", "0427", "--debug-impress-port", "1599"])
        do {
            var page = try Page.open(port, secret)
            // The page is told `impress off` (nothing there yet) with its switch to presenter mode.
            try page.send("mode presenter", awaiting: "mode presenter")
            let impress = try ImpressProcess.start(display: rig.xvfb.display, pin: "0427", meanwhile: { try? page.socket.send("ping 1") })
            do {
                // touchbridge tries once a second while the page is in presenter mode: it finds Impress by itself.
                _ = try L.read(&page, until: { $0 == "impress on" }, "impress on once Impress listens")
                // Impress draws its document in seconds, or minutes on a loaded machine: meanwhile the page
                // pings, as a real one does, so that it is not closed as silent (10 s without a frame).
                let drawn = Date().addingTimeInterval(120)
                while true {
                    do {
                        try Self.waitForFill(rig, Self.red, timeout: 5, "Impress's document (slide 1, red) drawn")
                        break
                    } catch where Date() < drawn {
                        try page.socket.send("ping 1")
                    }
                }
                // Each test starts with the page's 10 s of silence whole.
                try page.socket.send("ping 1")
                return (rig, home, page, impress)
            } catch {
                impress.stop()
                throw RigError("\(error)\n\(rig.daemon.outputTail(40))")
            }
        } catch {
            rig.stop()
            try? FileManager.default.removeItem(atPath: home)
            throw error
        }
    }

    /// Impress started after touchbridge is found and paired by itself, with no dialog; stopped, it leaves
    /// nothing held.
    @Test func impressStartedLaterIsFoundAndPaired() throws {
        let (rig, home, page, impress) = try Self.startAll()
        defer { impress.stop(); rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        let pointer = try rig.observer.query()
        #expect(pointer.buttons == 0, "a button held: \(pointer)")
        page.close()
    }

    /// Impress started after touchbridge is found and paired; killed, the page hears `impress off` at
    /// once and Next is a key again, nothing held; Impress's port is free at once (touchbridge answers
    /// the killed server's close with a reset, so no connection of port 1599 waits in TIME_WAIT), and an
    /// Impress started again is found and paired again. (Impress going away is tested with the test's own
    /// server in ImpressLinkTests, every time.)
    @Test
    func impressStartedLaterIsPairedAndKilledFallsBackToKeys() throws {
        var (rig, home, page, impress) = try Self.startAll()
        var again: ImpressProcess? = nil
        defer { again?.stop(); impress.stop(); rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        // The page pings while Impress is killed (seconds on a loaded machine), so that it is not closed as
        // silent before `impress off` could reach it.
        impress.kill(meanwhile: { try? page.socket.send("ping 1") })
        do {
            _ = try L.read(&page, until: { $0 == "impress off" }, "impress off once Impress is killed")
        } catch {
            throw RigError("\(error)\n\(rig.daemon.outputTail(40))")
        }
        let pageDown = try TouchpadIntegrationTests.keycode("Next", display: rig.xvfb.display)
        let mark = rig.observer.mark
        try page.socket.send("slide next")
        try TouchpadIntegrationTests.waitForClicks(rig, since: mark, PresenterIntegrationTests.stroke(pageDown), "Next as a key once Impress is gone")
        let pointer = try rig.observer.query()
        #expect(pointer.buttons == 0, "a button held: \(pointer)")
        do {
            try bindTCPPortWithoutReuse(1599)
        } catch {
            throw RigError("Impress's port is not free for an Impress started again: \(error)")
        }
        again = try ImpressProcess.start(display: rig.xvfb.display, pin: "0427", meanwhile: { try? page.socket.send("ping 1") })
        _ = try L.read(&page, until: { $0 == "impress on" }, "impress on once Impress listens again")
        page.close()
    }

    /// The page starts the show and turns slides in Impress (the slide numbers Impress reports, slide 2's
    /// green on its screen), and gets the notes as text and the previews as PNGs.
    ///
    /// The page sends Next as soon as it hears the show started: Impress would lose a transition that
    /// comes before the burst of previews and notes after `slideshow_started` ends, so touchbridge holds it
    /// until then (`ImpressConnection.send`). Without that hold this test fails: the show stays on slide 1.
    @Test
    func thePageStartsAndTurnsImpressSlides() throws {
        var (rig, home, page, impress) = try Self.startAll()
        defer { impress.stop(); rig.stop(); try? FileManager.default.removeItem(atPath: home) }
        try rig.observer.warp(x: rig.xvfb.width / 2, y: rig.xvfb.height / 2)
        try page.socket.send("slide start")
        var seen = try L.read(&page, until: { $0 == "impress show 3 0" }, "the show")
        try page.socket.send("slide next")
        seen += try L.read(&page, until: { $0 == "impress show 3 1" }, "slide 2 of 3")
        #expect(seen.contains("impress notes 0 Notes of slide 1 & more\nsecond line"), "\(seen.map { $0.prefix(60) })")
        let previews = seen.filter { $0.hasPrefix("impress preview ") }
        #expect(!previews.isEmpty, "no preview")
        for line in previews {
            let png = Data(base64Encoded: String(line.split(separator: " ")[3])) ?? Data()
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a preview that is not a PNG")
        }
        _ = try L.read(&page, until: { $0 == "impress notes 1 Notes of slide 2 & more\nsecond line" }, "slide 2's notes")
        try Self.waitForFill(rig, Self.green, "slide 2 (green) on Impress's screen")
        try page.socket.send("slide previous")
        _ = try L.read(&page, until: { $0 == "impress show 3 0" }, "slide 1 again")
        try page.socket.send("slide goto 2")
        _ = try L.read(&page, until: { $0 == "impress show 3 2" }, "slide 3 from the list")
        page.close()
    }
}
