import Logging
import NIOCore
import TouchCore
import TouchNet
import TouchOutput
import TouchUInput
import TouchX11
import TouchWayland

/// One long-lived part of the daemon: started by the lifecycle (each kind its own way, since each needs
/// other things), stopped by `stop`. The lifecycle keeps the started ones on a `ServiceStack`.
protocol Service: AnyObject {
    /// What it is, for the log ("the web server").
    var name: String { get }
    /// Stops it, doing all it can even when a step fails; throws the first failure afterwards.
    /// `reason`: why the daemon stops, for the log.
    func stop(reason: String) async throws
}

/// The services started so far, in order: stopped in reverse by construction (each is pushed once it
/// runs, popped to stop), and every failure on the way down logged, none stopping the rest.
struct ServiceStack {
    private var running: [any Service] = []

    /// `service` runs: it is stopped before everything started before it.
    mutating func started(_ service: any Service) { running.append(service) }

    /// Stops every service, the last started first.
    mutating func stopAll(reason: String, logger: Logger) async {
        while let service = running.popLast() {
            do {
                try await service.stop(reason: reason)
            } catch {
                logger.error("\(reason): stopping \(service.name): \(error)")
            }
        }
    }
}

/// The signal watcher: a thread in `poll(2)` on the signal pipe, for the whole run.
final class SignalService: Service {
    let name = "the signal watcher"
    private let watcher: DescriptorWatcher

    init(watcher: DescriptorWatcher) { self.watcher = watcher }

    func stop(reason: String) async throws { watcher.stop() }
}

/// The uinput input output, when it is the one chosen: its kernel devices need no desktop, so they are
/// made before it and outlive a lost one (`--reconnect`). Stopped after the desktop: what they hold is
/// released (the host did so at detach; this is the last word), then the kernel destroys them.
final class UInputService: Service {
    let name = "the uinput devices"
    private let loop: any EventLoop
    let devices: NIOLoopBound<UInputBackend>
    private let logger: Logger

    init(loop: any EventLoop, devices: NIOLoopBound<UInputBackend>, logger: Logger) {
        self.loop = loop
        self.devices = devices
        self.logger = logger
    }

    func stop(reason: String) async throws {
        let devices = self.devices
        let (removed, errors) = try await loop.submit { () -> ([String], [OutputError]) in devices.value.close() }.get()
        logger.debug("\(reason): removed \(removed.joined(separator: ", "))")
        if let first = errors.first { throw first }
    }
}

/// The desktop connection: the desktop the choice named (X11, Wayland, or none), the XTest output when
/// that is the input (it lives on the desktop's connection), attached to the Bridge's host, and a
/// watcher per descriptor. Under `--reconnect` a lost desktop is closed (`close`) and opened again
/// (`open`) in place; the service stays on the stack.
final class DesktopService: Service {
    let name = "the desktop connection"
    private let loop: any EventLoop
    private let host: NIOLoopBound<BridgeHost>
    private let choice: OutputChoice
    private let uinput: NIOLoopBound<UInputBackend>?
    private let multitouch: Bool
    private let logger: Logger
    /// What is open now, on the loop: the desktop, and the XTest output on it when XTest is the input.
    private var opened: NIOLoopBound<(desktop: any Desktop, xtest: XTestOutput?)>?
    private var watchers: [DescriptorWatcher] = []

    init(loop: any EventLoop, host: NIOLoopBound<BridgeHost>, choice: OutputChoice, uinput: NIOLoopBound<UInputBackend>?,
         multitouch: Bool, logger: Logger) {
        self.loop = loop
        self.host = host
        self.choice = choice
        self.uinput = uinput
        self.multitouch = multitouch
        self.logger = logger
    }

    /// Why the desktop could not be opened; `waitable`: the display's name when it may yet come
    /// (`--reconnect` waits for it).
    struct OpenFailure: Error {
        var message: String
        var waitable: String?
    }

    /// What the log calls the desktop the choice names, before it is open ("X display").
    var kind: String {
        switch choice.desktop {
        case .x11: "X display"
        case .wayland: "Wayland display"
        case .absent: "desktop"
        }
    }

    /// Opens the desktop, makes the XTest output on it when that is the input, attaches both to the
    /// host and watches the desktop's descriptors. Returns the line that says what is driven.
    func open() async -> Result<String, OpenFailure> {
        let (loop, host, choice, uinput, multitouch, logger) = (self.loop, self.host, self.choice, self.uinput, self.multitouch, self.logger)
        let made: Result<(NIOLoopBound<(desktop: any Desktop, xtest: XTestOutput?)>, [Int32], String), OpenFailure>
        do {
            made = try await loop.submit { () -> Result<(NIOLoopBound<(desktop: any Desktop, xtest: XTestOutput?)>, [Int32], String), OpenFailure> in
                let desktop: any Desktop
                switch Self.makeDesktop(choice.desktop, logger: logger) {
                case .success(let d): desktop = d
                case .failure(let failure): return .failure(failure)
                }
                var xtest: XTestOutput?
                do throws(OutputError) {
                    let input: any InputOutput
                    if let uinput {
                        input = uinput.value
                    } else {
                        guard let x11 = desktop as? X11Desktop else {
                            throw OutputError(origin: "touchbridge", message: "XTest needs an X display", kind: 7)
                        }
                        let made = try XTestOutput(desktop: x11, multitouch: multitouch)
                        xtest = made
                        input = made
                    }
                    try host.value.attach(desktop: desktop, input: input)
                    let size = try desktop.screen().screen
                    let line = "\(desktop) \(size.width)x\(size.height), onto \(host.value.targetDescription)"
                    return .success((NIOLoopBound((desktop, xtest), eventLoop: loop), desktop.descriptors, line))
                } catch {
                    // Nothing attached: what was made is closed here.
                    for e in xtest?.close().errors ?? [] { logger.error("\(e)") }
                    for e in desktop.close() { logger.error("\(e)") }
                    return .failure(OpenFailure(message: "\(error)", waitable: nil))
                }
            }.get()
        } catch {
            return .failure(OpenFailure(message: "the event loop is gone: \(error)", waitable: nil))
        }
        switch made {
        case .failure(let failure): return .failure(failure)
        case .success(let (opened, descriptors, line)):
            self.opened = opened
            for fd in descriptors {
                let watcher = DescriptorWatcher(name: "touchbridge-desktop", descriptor: fd) {
                    // Waits until the loop has read what is there, so poll does not report it again.
                    do {
                        try loop.submit { host.value.desktopReadable() }.wait()
                    } catch {
                        logger.error("the desktop's watcher: the event loop is gone: \(error)")
                    }
                }
                if let watcher { watchers.append(watcher) } else { logger.error("cannot watch the desktop's descriptor \(fd): pipe(2) failed") }
            }
            return .success(line)
        }
    }

    /// The desktop the choice names, on the loop: X11 (what an earlier run left on that server is
    /// cleaned up and said), Wayland, or none.
    private static func makeDesktop(_ kind: OutputChoice.DesktopKind, logger: Logger) -> Result<any Desktop, OpenFailure> {
        switch kind {
        case .x11(let name):
            do throws(X11Error) {
                let (desktop, leftovers) = try X11Desktop.open(name: name)
                if !leftovers.masters.isEmpty {
                    logger.notice("removed pointers left over by an earlier run: \(leftovers.masters.map { "\"\($0)\"" }.joined(separator: ", "))")
                }
                if !leftovers.undone.isEmpty {
                    logger.notice("undid what an earlier run left: released \(leftovers.undone.joined(separator: ", "))")
                }
                return .success(desktop)
            } catch {
                if case .cannotOpenDisplay(let display) = error { return .failure(OpenFailure(message: "\(error)", waitable: display)) }
                return .failure(OpenFailure(message: "\(error)", waitable: nil))
            }
        case .wayland(let display, let overlayDisplay):
            return makeWaylandDesktop(display: display, overlayDisplay: overlayDisplay, logger: logger)
        case .absent:
            return .success(AbsentDesktop())
        }
    }

    /// The Wayland desktop (TouchWayland: outputs from wl_output and xdg-output, the keymap from
    /// xkbcommon, nothing to borrow), with the overlay on Xwayland's X display (`overlayDisplay`,
    /// DISPLAY) when the session has one (`OverlaidDesktop`); without it there is no overlay, said once
    /// by the choice. A compositor that cannot be reached is a failure to open, awaited with --reconnect.
    private static func makeWaylandDesktop(display: String, overlayDisplay: String?, logger: Logger) -> Result<any Desktop, OpenFailure> {
        let base: WaylandDesktop
        do throws(WaylandError) {
            base = try WaylandDesktop(name: display)
        } catch {
            return .failure(OpenFailure(message: "\(error)", waitable: display))
        }
        logger.info("Wayland display \(display): \(base.outputs.count) output(s)\(base.hasXdgOutput ? " (xdg-output)" : ""): \(base.outputs.map(\.summary).joined(separator: "; "))")
        guard let overlayDisplay else { return .success(base) }
        switch makeDesktop(.x11(display: overlayDisplay), logger: logger) {
        case .success(let xwayland): return .success(OverlaidDesktop(base: base, overlaySource: xwayland))
        case .failure(let failure):
            _ = base.close()
            return .failure(failure)
        }
    }

    /// Detaches the desktop from the host (what the Bridge held is released), closes the XTest output
    /// (its fingers' masters removed) and the desktop, and stops watching it. Nothing when none is open.
    func close(reason: String) async throws {
        for watcher in watchers { watcher.stop() }
        watchers.removeAll()
        guard let opened else { return }
        self.opened = nil
        let (host, logger) = (self.host, self.logger)
        let errors = try await loop.submit { () -> [OutputError] in
            host.value.detach(reason: reason)
            var errors: [OutputError] = []
            if let xtest = opened.value.xtest {
                let (removed, failed) = xtest.close()
                if !removed.isEmpty { logger.info("\(reason): removed \(removed.joined(separator: ", "))") }
                errors += failed
            }
            return errors + opened.value.desktop.close()
        }.get()
        for error in errors.dropFirst() { logger.error("\(reason): \(error)") }
        if let first = errors.first { throw first }
    }

    func stop(reason: String) async throws { try await close(reason: reason) }
}

/// The Bridge's hold on the desktop: started once the listeners run, stopped first, so whatever the
/// sender holds is released before anything else stops (and before a closing page could release it
/// as a page gone).
final class BridgeHoldService: Service {
    let name = "the Bridge's hold"
    private let loop: any EventLoop
    private let host: NIOLoopBound<BridgeHost>

    init(loop: any EventLoop, host: NIOLoopBound<BridgeHost>) {
        self.loop = loop
        self.host = host
    }

    func stop(reason: String) async throws {
        let host = self.host
        try await loop.submit { host.value.detach(reason: reason) }.get()
    }
}

/// The PoseAI UDP listener; stopping says how many datagrams the kernel dropped.
final class PoseAIListenerService: Service {
    let name = "the PoseAI listener"
    private let loop: any EventLoop
    let bound: PoseAIUDPListener.Bound
    private let logger: Logger

    init(loop: any EventLoop, bound: PoseAIUDPListener.Bound, logger: Logger) {
        self.loop = loop
        self.bound = bound
        self.logger = logger
    }

    func stop(reason: String) async throws {
        let socket = bound.socket
        // Read before the channel closes the socket.
        let drops = try await loop.submit { KernelSourceFilter.kernelDrops(socket) }.get()
        if let drops {
            logger.info("poseai-udp: \(drops) datagrams dropped by the kernel (sources outside --allow, or the receive queue was full)")
        }
        try await bound.channel.close()
    }
}

/// The TUIO UDP listener.
final class TUIOListenerService: Service {
    let name = "the TUIO listener"
    private let channel: any Channel

    init(channel: any Channel) { self.channel = channel }

    func stop(reason: String) async throws { try await channel.close() }
}

/// The web server (HTTP and WebSocket), a task on the web loop.
final class WebService: Service {
    let name = "the web server"
    private let task: Task<Void, any Error>

    init(task: Task<Void, any Error>) { self.task = task }

    func stop(reason: String) async throws {
        task.cancel()
        do {
            try await task.value
        } catch is CancellationError {
            // The way it was asked to end.
        }
    }
}
