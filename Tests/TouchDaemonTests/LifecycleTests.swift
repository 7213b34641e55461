// The daemon's whole lifecycle in process: the real `Lifecycle`, its real services and listeners on real
// sockets on 127.0.0.1, a private state directory, and the model backend, output and desktop
// (ModelParts.swift). Stops are asked of its `StopRequests`, as a signal does; no signal is installed.
// `make test` runs this target in its own `swift test`: its waits resume on Swift concurrency's
// cooperative pool (one thread per core), which the other targets' synchronous integration tests hold
// for minutes at a time; beside them, a 2-core machine starved these tests past their time limits.
import Foundation
import Logging
import Synchronization
import Testing
import TouchCore
import TouchOutput
import TouchTestSupport
@testable import TouchDaemon

/// The services in their start order, as the lifecycle names them.
let everyService = ["the signal watcher", "the input backend", "the desktop connection", "the PoseAI listener",
                    "the TUIO listener", "the web server", "the Bridge's hold"]

/// What the journal says of the services when `started` started and then stopped, all of them, in
/// reverse.
func startedThenStoppedInReverse(_ started: ArraySlice<String>) -> [String] {
    started.map { "started \($0)" } + started.reversed().map { "stopped \($0)" }
}

/// One daemon's run in process, with its journal and its stop button.
final class Rig: Sendable {
    let journal = Journal()
    let stops = StopRequests()
    private let faults: Mutex<Faults>
    /// The way to take away the desktop open now.
    private let loss = Mutex<Loss?>(nil)
    let stateDirectory: String

    init(_ faults: Faults = Faults()) {
        self.faults = Mutex(faults)
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("touchdaemon-tests-\(UUID().uuidString)").path
    }

    deinit { try? FileManager.default.removeItem(atPath: stateDirectory) }

    func setFaults(_ body: (inout Faults) -> Void) { faults.withLock { body(&$0) } }

    func parts(onDesktop: @escaping @Sendable () -> Void = {}) -> LifecycleParts {
        let journal = journal
        var parts = LifecycleParts()
        parts.chooseBackend = ModelBackend.choose(journal: journal, faults: faults.withLock { $0 })
        let open = openModelDesktop(journal: journal, faults: { self.faults.withLock { $0 } },
                                    opened: { loss in self.loss.withLock { $0 = loss } })
        parts.openDesktop = { kind, logger in
            onDesktop()
            return open(kind, logger)
        }
        parts.signals = []
        parts.stateDirectory = stateDirectory
        parts.trace = { journal.add($0) }
        return parts
    }

    /// Starts the lifecycle in a task; its exit code is the task's value.
    func start(_ settings: DaemonSettings, onDesktop: @escaping @Sendable () -> Void = {}) -> Task<Int32, Never> {
        var logger = Logger(label: "touchdaemon-test")
        logger.logLevel = .debug
        let lifecycle = Lifecycle(settings: settings, logger: logger, parts: parts(onDesktop: onDesktop), stops: stops)
        return Task { await lifecycle.run() }
    }

    /// Takes the desktop open now away.
    func loseTheDesktop() { loss.withLock { $0 }?.lose() }

    /// The run's exit code, or nil when it has not ended within `limit` (generous: the machine may be
    /// loaded); a stop is then asked for, so that a daemon that still heeds one frees its ports, but not
    /// waited for: a test fails, it does not hang.
    func exitCode(_ run: Task<Int32, Never>, within limit: Duration = .seconds(30)) async -> Int32? {
        let (outcomes, sink) = AsyncStream.makeStream(of: Int32?.self)
        Task { sink.yield(await run.value) }
        let timer = Task {
            try await Task.sleep(for: limit)
            sink.yield(nil)
        }
        var first = outcomes.makeAsyncIterator()
        let code = await first.next() ?? nil
        timer.cancel()
        if code == nil { stops.request("the test's time limit") }
        return code
    }

    /// Waits until every service runs.
    func running() async -> Bool {
        await journal.wait { $0.contains("started the Bridge's hold") }
    }
}

func settings(udp: Int, tuio: Int = 0, http: Int = 0, reconnect: Bool = false) throws -> DaemonSettings {
    // No silence watchdog within a test: what the finger holds is released by the stop, not by it.
    let core = TouchPipeline.Configuration(mapping: AbsoluteMapping(target: PixelRect(x: 0, y: 0, width: 1, height: 1)),
                                           idleRelease: .seconds(600))
    return DaemonSettings(display: nil, bind: "127.0.0.1", udpPort: udp, tuioPort: tuio, httpPort: http, newSecret: false,
                          tlsCertificate: nil, tlsKey: nil, allowList: try AllowList(parsing: ["127.0.0.1/32"]), rateLimits: .default,
                          core: core, monitor: .primary, reconnect: reconnect, debugXErrorEvery: 0, version: "test")
}

/// A finger down in the middle of the glass, as the phone sends it.
let fingerDown = PoseAIText.packet(touches: PoseAIText.touches([.at(slot: 0, x: 0, y: 0)]),
                                   touchState: PoseAIText.touchState([0: .at(x: 0, y: 0)]))

@Suite(.serialized, .timeLimit(.minutes(2)))
struct LifecycleTests {
    @Test func startsEveryServiceInOrderAndStopsThemInReverseReleasingWhatTheFingerHolds() async throws {
        let rig = Rig()
        let (udp, tuio, http) = (try Socket.freePort(.udp), try Socket.freePort(.udp), try Socket.freePort(.tcp))
        let run = rig.start(try settings(udp: udp, tuio: tuio, http: http))
        #expect(await rig.running())
        #expect(rig.journal.services == everyService.map { "started \($0)" })
        #expect(FileManager.default.fileExists(atPath: rig.stateDirectory + "/pairing-secret"), "the secret in the private state directory")

        // A datagram in, an action out of the model output: the pointer's button pressed by the finger.
        let phone = try Socket(.udp)
        let pressed = await rig.journal.wait { lines in
            try? phone.send(fingerDown, to: udp)
            return lines.contains { $0.hasPrefix("action") && $0.hasSuffix(" press") }
        }
        #expect(pressed, "\(rig.journal.all)")

        rig.stops.request("the test")
        #expect(await rig.exitCode(run) == ExitStatus.stopped)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService[...]))
        // What the finger held is released on the output before the output leaves the desktop.
        let lines = rig.journal.all
        let press = try #require(lines.firstIndex { $0.hasPrefix("action") && $0.hasSuffix(" press") })
        let release = try #require(lines.firstIndex { $0.hasPrefix("action") && $0.hasSuffix(" release") }, "\(lines)")
        let off = try #require(lines.firstIndex(of: "output off the desktop"))
        // By the Bridge's hold, stopped first: before any listener closes.
        let holdStopped = try #require(lines.firstIndex(of: "stopped the Bridge's hold"))
        #expect(press < release && release < holdStopped && holdStopped < off)
        #expect(lines.suffix(from: off).prefix(2) == ["output off the desktop", "desktop closed"])
        #expect(lines.contains("backend closed"))
        // Every port is closed: each can be bound again.
        for (kind, port) in [(Socket.Kind.udp, udp), (.udp, tuio), (.tcp, http)] {
            #expect(throws: Never.self, "\(kind) port \(port) free again") { try Socket(kind).bind(port) }
        }
    }

    /// A port already taken: the listeners started before it are stopped, then the rest, in reverse.
    @Test(arguments: [0, 1, 2])
    func aPortAlreadyTakenExitsListenerAndStopsWhatStartedInReverse(taken: Int) async throws {
        let rig = Rig()
        let kinds: [Socket.Kind] = [.udp, .udp, .tcp]
        let ports = try kinds.map { try Socket.freePort($0) }
        let squatter = try Socket(kinds[taken])
        try squatter.bind(ports[taken], listen: kinds[taken] == .tcp)
        let run = rig.start(try settings(udp: ports[0], tuio: ports[1], http: ports[2]))
        #expect(await rig.exitCode(run) == ExitStatus.listener)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService.prefix(3 + taken)))
        #expect(rig.journal.all.filter { $0.hasSuffix(" closed") } == ["desktop closed", "backend closed"])
    }

    @Test func aBackendThatCannotBeMadeExitsDisplay() async throws {
        let rig = Rig(Faults(backend: true))
        let run = rig.start(try settings(udp: try Socket.freePort(.udp)))
        #expect(await rig.exitCode(run) == ExitStatus.display)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService.prefix(1)))
    }

    @Test func aDesktopThatFailsToOpenExitsDisplayAndClosesTheBackend() async throws {
        let rig = Rig(Faults(desktop: true))
        let run = rig.start(try settings(udp: try Socket.freePort(.udp)))
        #expect(await rig.exitCode(run) == ExitStatus.display)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService.prefix(2)))
        #expect(rig.journal.all.contains("backend closed"))
    }

    @Test func anOutputThatFailsToOpenExitsDisplayAndClosesTheDesktopThenTheBackend() async throws {
        let rig = Rig(Faults(output: true))
        let run = rig.start(try settings(udp: try Socket.freePort(.udp)))
        #expect(await rig.exitCode(run) == ExitStatus.display)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService.prefix(2)))
        let lines = rig.journal.all.filter { !$0.hasPrefix("started") && !$0.hasPrefix("stopped") }
        #expect(lines == ["backend made", "desktop opened", "output failed on the model desktop", "output off the desktop",
                          "desktop closed", "backend closed"])
    }

    /// A stop asked for while the desktop opens: nothing after it starts, and what did stops in reverse.
    @Test func aStopDuringTheStartStopsWhatStartedInReverse() async throws {
        let rig = Rig()
        let udp = try Socket.freePort(.udp)
        let stops = rig.stops
        let run = rig.start(try settings(udp: udp), onDesktop: { stops.request("the test, while the desktop opens") })
        #expect(await rig.exitCode(run) == ExitStatus.stopped)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService.prefix(3)))
        #expect(throws: Never.self) { try Socket(.udp).bind(udp) }
    }

    /// A stop asked for while --reconnect waits for a display that is not there yet.
    @Test func aStopWhileWaitingForTheDesktopStopsTheBackendAndTheSignalWatcher() async throws {
        let rig = Rig(Faults(desktop: true, waitable: true))
        let run = rig.start(try settings(udp: try Socket.freePort(.udp), reconnect: true))
        // Tried at least twice: it waits.
        #expect(await rig.journal.wait { $0.filter { $0 == "desktop failed" }.count >= 2 })
        rig.stops.request("the test, while waiting")
        #expect(await rig.exitCode(run) == ExitStatus.stopped)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService.prefix(2)))
    }

    /// --reconnect: a display that comes after a while is driven.
    @Test func reconnectDrivesADesktopThatComesLater() async throws {
        let rig = Rig(Faults(desktop: true, waitable: true))
        let udp = try Socket.freePort(.udp)
        let run = rig.start(try settings(udp: udp, reconnect: true))
        #expect(await rig.journal.wait { $0.contains("desktop failed") })
        rig.setFaults { $0.desktop = false }
        #expect(await rig.running())
        let phone = try Socket(.udp)
        #expect(await rig.journal.wait { lines in
            try? phone.send(fingerDown, to: udp)
            return lines.contains { $0.hasPrefix("action") }
        })
        rig.stops.request("the test")
        #expect(await rig.exitCode(run) == ExitStatus.stopped)
        #expect(rig.journal.services == startedThenStoppedInReverse(everyService.prefix(4) + everyService.suffix(1)))
    }
}

extension LifecycleTests {
    /// The desktop gone without --reconnect: the run ends (69), everything stops in reverse, the desktop
    /// closed once.
    @Test func aDesktopGoneEndsTheRunWithoutReconnect() async throws {
        let rig = Rig()
        let run = rig.start(try settings(udp: try Socket.freePort(.udp)))
        #expect(await rig.running())
        rig.loseTheDesktop()
        #expect(await rig.exitCode(run) == ExitStatus.display)
        let started = everyService.prefix(4) + everyService.suffix(1)
        #expect(rig.journal.services == startedThenStoppedInReverse(started))
        #expect(rig.journal.all.filter { $0 == "desktop closed" }.count == 1)
    }

    /// The desktop gone with --reconnect: closed, opened again when it comes back, driven.
    @Test func aDesktopGoneIsDrivenAgainWithReconnect() async throws {
        let rig = Rig()
        let udp = try Socket.freePort(.udp)
        let run = rig.start(try settings(udp: udp, reconnect: true))
        #expect(await rig.running())
        rig.setFaults { $0.desktop = true; $0.waitable = true }
        rig.loseTheDesktop()
        #expect(await rig.journal.wait { $0.contains("desktop failed") })
        #expect(rig.journal.all.contains("desktop closed"))
        rig.setFaults { $0.desktop = false }
        #expect(await rig.journal.wait { $0.filter { $0 == "desktop opened" }.count == 2 })
        let reopened = rig.journal.all.count
        let phone = try Socket(.udp)
        #expect(await rig.journal.wait { lines in
            try? phone.send(fingerDown, to: udp)
            return lines.dropFirst(reopened).contains { $0.hasPrefix("action") }
        })
        rig.stops.request("the test")
        #expect(await rig.exitCode(run) == ExitStatus.stopped)
        let started = everyService.prefix(4) + everyService.suffix(1)
        #expect(rig.journal.services == startedThenStoppedInReverse(started))
    }
}

/// A service for the stack's own tests: journals its stop, which may hang until the test lets it end.
final class StubService: Service {
    let name: String
    private let journal: Journal
    private let hangs: Bool
    private let hanging = Mutex<CheckedContinuation<Void, Never>?>(nil)

    let stopAllowance: Duration

    init(_ name: String, journal: Journal, hangs: Bool = false, allowance: Duration = .zero) {
        self.name = name
        self.journal = journal
        self.hangs = hangs
        stopAllowance = allowance
    }

    func stop(reason: String) async throws {
        journal.add("stopping \(name)")
        guard hangs else { return }
        await withCheckedContinuation { waiter in hanging.withLock { $0 = waiter } }
        journal.add("\(name) ended at last")
    }

    /// Lets a hanging stop end.
    func letGo() { hanging.withLock { $0.take() }?.resume() }
}

@Suite(.timeLimit(.minutes(1))) struct ServiceStackTests {
    /// A stop that hangs is given up after the limit, and the services before it are still stopped.
    @Test func aStopThatHangsIsLeftAfterTheLimitAndTheRestStop() async {
        let journal = Journal()
        var stack = ServiceStack(limit: .milliseconds(300), trace: { journal.add($0) })
        let stuck = StubService("stuck", journal: journal, hangs: true)
        stack.started(StubService("first", journal: journal))
        stack.started(stuck)
        stack.started(StubService("last", journal: journal))
        // Waited for with a limit, not awaited: a stack without its own limit fails here, it does not hang.
        Task { [stack] in
            var stack = stack
            await stack.stopAll(reason: "the test", logger: Logger(label: "test"))
        }
        #expect(await journal.wait { $0.last == "stopped first" })
        #expect(journal.all == ["started first", "started stuck", "started last",
                                "stopping last", "stopped last",
                                "stopping stuck", "stuck did not stop within 0.3 seconds",
                                "stopping first", "stopped first"])
        // The stop left behind goes on, and may still end.
        stuck.letGo()
        #expect(await journal.wait { $0.last == "stuck ended at last" })
    }

    /// A service may be given more time than the stack's limit (the desktop connection, whose sway seats
    /// may wait for Xwayland); the rest get the limit.
    @Test func aServicesAllowanceLengthensItsLimitAlone() {
        let journal = Journal()
        let stack = ServiceStack(limit: .milliseconds(300), trace: { journal.add($0) })
        #expect(stack.limit(for: StubService("patient", journal: journal, allowance: .seconds(17))) == .milliseconds(17_300))
        #expect(stack.limit(for: StubService("plain", journal: journal)) == .milliseconds(300))
    }
}
