#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import TouchCore
import TouchImpress
import TouchNet

/// touchbridge as a client of LibreOffice Impress's remote server (Impress listens on TCP port 1599 of
/// every address when its remote control is on): it connects to 127.0.0.1, pairs as `touchbridge` with
/// the PIN, relays the show to the page (`ImpressDeck`'s lines) and sends the Slides panel's requests.
/// The protocol is `ImpressConnection`'s; this only connects, reads, writes and closes.
///
/// When it tries: only while a page holds the session in presenter mode (`want(true)`), at once and
/// then at most once per `retryInterval` while Impress is not there; when that ends (`want(false)`), the
/// connection is closed and no timer is left, so the idle daemon does not wake. A server that answers
/// something else than Impress's pairing, or nothing within `pairingAnswerLimit`, is closed (and tried
/// again a second later, as a refused connection is). One lifecycle: every end (the page leaves presenter
/// mode, Impress closes, a read or write fails, not Impress, the daemon stops) goes through `close`, which
/// tells the Bridge the slides are keys again and the page `impress off`.
///
/// On the Bridge's loop only.
final class ImpressLink {
    /// Impress's port.
    static let defaultPort: UInt16 = 1599
    /// The least time between two connection attempts.
    static let retryInterval = Interval.seconds(1)
    /// How long a server may take to answer the pair request (Impress answers at once, paired or
    /// waiting for the PIN).
    static let pairingAnswerLimit = Interval.seconds(5)
    /// The most bytes read in one turn of the loop.
    static let readBytes = 64 * 1024

    /// Why the link ended or failed, for its bounded log lines.
    private enum Failure: Int {
        case refused, notImpress, closed, readFailed, writeFailed, noAnswer
    }

    private let loop: BridgeEventLoop
    private let port: UInt16
    private let pin: ImpressPIN
    private let logger: Logger
    /// Told whether Impress takes the slides now (paired) or not.
    private let slidesByProtocol: (Bool) -> Void
    /// Given the page's lines.
    private let toPage: ([String]) -> Void

    private var wanted = false
    private var socket: Int32 = -1
    private var connected = false
    private var connection: ImpressConnection?
    private var deck: ImpressDeck
    private var lastAttempt: Instant?
    /// The retry, the pairing answer's deadline, or (paired) the held commands' settle deadline; at most one.
    private var timer: Scheduled<Void>?
    /// When the settle timer fires, while it is the one.
    private var settleTimerAt: Instant?
    private var outputs: [ImpressConnection.Output] = []
    private var lines: [String] = []
    private let buffer: UnsafeMutableRawPointer
    private var failures = DropLog<6>(interval: .seconds(60))
    private var refusalLines = DropLog<1>(interval: .seconds(10), burst: 8)

    init(loop: BridgeEventLoop, port: UInt16, pin: ImpressPIN, logger: Logger,
         slidesByProtocol: @escaping (Bool) -> Void, toPage: @escaping ([String]) -> Void) {
        self.loop = loop
        self.port = port
        self.pin = pin
        self.logger = logger
        self.slidesByProtocol = slidesByProtocol
        self.toPage = toPage
        deck = ImpressDeck(pin: pin)
        buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.readBytes, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Whether the link is open now (for the tests).
    var isOpen: Bool { socket >= 0 }

    /// A page holds the session in presenter mode (`true`), or no more. Cheap when nothing changes: the
    /// host calls it after every step.
    func want(_ on: Bool) {
        guard on != wanted else { return }
        loop.preconditionInEventLoop()
        wanted = on
        if on {
            scheduleAttempt()
        } else {
            close(nil)
            timer?.cancel()
            timer = nil
        }
    }

    /// Everything the page that now holds the session must be told (`impress off` when Impress is not there).
    func snapshot() -> [String] {
        var lines: [String] = []
        deck.snapshot(into: &lines)
        return lines
    }

    /// Sends the Slides panel's `request` to Impress, now or, while a show that just started settles,
    /// once it has (`ImpressConnection.send`). False when it cannot go (not paired, a slide out of the
    /// show, or too many held): the host then leaves it.
    @discardableResult
    func send(_ request: SlideRequest) -> Bool {
        loop.preconditionInEventLoop()
        guard connection != nil, socket >= 0 else { return false }
        let command: ImpressCommand = switch request {
        case .start: .presentationStart
        case .stop: .presentationStop
        case .next: .transitionNext
        case .previous: .transitionPrevious
        case .goto(let n): .gotoSlide(n)
        }
        switch connection?.send(command, at: now()) {
        case .write(let bytes)?:
            return write(bytes)
        case .held?:
            scheduleSettle()
            return true
        case .refused?, nil:
            return false
        }
    }

    /// While commands are held, a timer at the connection's settle deadline, moved when the deadline moves
    /// (the burst's end brings it forward, a show started again puts it back). The one timer: once paired,
    /// no retry or pairing deadline is pending.
    private func scheduleSettle() {
        guard connection?.state == .paired else { return }
        let deadline = connection?.settleDeadline
        guard deadline != settleTimerAt else { return }
        timer?.cancel()
        timer = nil
        settleTimerAt = deadline
        guard let deadline else { return }
        timer = loop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(deadline.nanoseconds)) { [self] in
            timer = nil
            settleTimerAt = nil
            outputs.removeAll(keepingCapacity: true)
            connection?.tick(at: now(), into: &outputs)
            lines.removeAll(keepingCapacity: true)
            handle(outputs)
            scheduleSettle()
        }
    }

    /// The daemon stops.
    func stop() {
        want(false)
    }

    // MARK: the connection

    private func now() -> Instant { Instant(nanoseconds: loop.now.uptimeNanoseconds) }

    private func scheduleAttempt() {
        guard wanted, socket < 0, timer == nil else { return }
        let at = lastAttempt.map { $0 + Self.retryInterval } ?? now()
        if at <= now() { return attempt() }
        timer = loop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(at.nanoseconds)) { [self] in
            timer = nil
            attempt()
        }
    }

    private func attempt() {
        guard wanted, socket < 0 else { return }
        lastAttempt = now()
        let fd = ImpressSocket.open()
        guard fd >= 0 else {
            close(.refused, "cannot make a socket (\(ImpressSocket.words(errno)))")
            return scheduleAttempt()
        }
        socket = fd
        connection = ImpressConnection(pin: pin)
        switch ImpressSocket.connect(fd, loopbackPort: port) {
        case .connected:
            do throws(IOError) {
                try loop.watch(fd) { [weak self] in self?.readable() }
            } catch {
                return close(.readFailed, "cannot watch the socket (\(error))")
            }
            didConnect()
        case .inProgress:
            do throws(IOError) {
                try loop.watch(fd) { [weak self] in self?.readable() }
                try loop.watchWritable(fd) { [weak self] in self?.writable() }
            } catch {
                return close(.readFailed, "cannot watch the socket (\(error))")
            }
        case .failed(let words):
            // Impress not running, or its remote control off: the usual case, logged once a minute.
            close(.refused, "no LibreOffice Impress remote server on 127.0.0.1:\(port) (\(words)): the Slides panel's buttons are keys")
        }
    }

    private func writable() {
        guard socket >= 0, !connected else { return }
        loop.stopWritable(socket)
        if let words = ImpressSocket.finishConnect(socket) {
            return close(.refused, "no LibreOffice Impress remote server on 127.0.0.1:\(port) (\(words)): the Slides panel's buttons are keys")
        }
        didConnect()
    }

    private func didConnect() {
        connected = true
        guard let connection, write(connection.pairRequest) else { return }
        logger.info("impress: connected to 127.0.0.1:\(port), pairing as \(ImpressConnection.clientName)")
        timer?.cancel()
        timer = loop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds((now() + Self.pairingAnswerLimit).nanoseconds)) { [self] in
            timer = nil
            guard self.connection?.state == .pairing else { return }
            close(.noAnswer, "the server on 127.0.0.1:\(port) did not answer the pair request within \(Self.pairingAnswerLimit): not LibreOffice Impress")
        }
    }

    private func readable() {
        guard socket >= 0 else { return }
        if !connected {
            // An error before the connection was made (the loop reports it as readable too).
            return writable()
        }
        let n = ImpressSocket.read(socket, into: buffer, count: Self.readBytes)
        if n == 0 { return close(.closed, "LibreOffice Impress closed the connection: the Slides panel's buttons are keys") }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return close(.readFailed, "reading from LibreOffice Impress failed (\(ImpressSocket.words(errno))): the Slides panel's buttons are keys")
        }
        outputs.removeAll(keepingCapacity: true)
        let at = now()
        connection?.receive(UnsafeRawBufferPointer(start: buffer, count: n), at: at, into: &outputs)
        lines.removeAll(keepingCapacity: true)
        handle(outputs)
        scheduleSettle()
    }

    /// What the connection handed out: events to the deck (and the page), held commands written,
    /// refusals logged; a server that is not Impress closed.
    private func handle(_ outputs: [ImpressConnection.Output]) {
        for output in outputs {
            switch output {
            case .event(let event):
                handle(event)
            case .refused(let reason, let report):
                if let report { logger.warning("impress: refused \(reason.words)\(report.countsSuffix)") }
            case .notImpress:
                return close(.notImpress, "the server on 127.0.0.1:\(port) is not LibreOffice Impress (its answer was no pairing): closed")
            case .write(let bytes):
                guard write(bytes) else { return }
            }
        }
        if !lines.isEmpty { toPage(lines) }
    }

    private func handle(_ event: ImpressEvent) {
        switch event {
        case .paired:
            timer?.cancel()
            timer = nil
            logger.info("impress: paired with LibreOffice Impress: the Slides panel drives it")
            slidesByProtocol(true)
        case .waitingForPin:
            timer?.cancel()
            timer = nil
            logger.notice("impress: LibreOffice Impress asks for the PIN \(pin.digits) (Slide Show › Impress Remote); it remembers the pairing")
        case .serverVersion(let version):
            logger.info("impress: LibreOffice \(version)")
        case .slideshowStarted(let count, let current):
            logger.debug("impress: show of \(count) slides at \(current + 1)")
        case .slideshowFinished, .slideUpdated, .slidePreview, .slideNotes, .slideshowTitle:
            break
        }
        deck.apply(event, into: &lines)
    }

    /// Writes `bytes` whole, or closes the link (a command is a few bytes: a socket without room for
    /// them is a server that reads nothing).
    private func write(_ bytes: [UInt8]) -> Bool {
        let n = ImpressSocket.write(socket, bytes)
        guard n == bytes.count else {
            close(.writeFailed, "writing to LibreOffice Impress failed (\(n < 0 ? ImpressSocket.words(errno) : "no room")): closed")
            return false
        }
        return true
    }

    /// The one end of a connection: unwatched and closed, the Bridge told the slides are keys, the page
    /// `impress off`; then, while still wanted, the next attempt a second after the last.
    private func close(_ failure: Failure?, _ words: String = "") {
        if let failure, let report = failures.record(reasonIndex: failure.rawValue, at: now()) {
            logger.info("impress: \(words)\(report.countsSuffix)")
        }
        guard socket >= 0 else { return }
        loop.unwatch(socket)
        // Impress closed first (it quit, or was killed): a reset frees its port at once (`reset`).
        if failure == .closed { ImpressSocket.reset(socket) } else { ImpressSocket.close(socket) }
        socket = -1
        let wasPaired = connection?.state == .paired
        connected = false
        connection = nil
        timer?.cancel()
        timer = nil
        settleTimerAt = nil
        if wasPaired { slidesByProtocol(false) }
        var lines: [String] = []
        deck.disconnected(into: &lines)
        if !lines.isEmpty { toPage(lines) }
        scheduleAttempt()
    }
}
