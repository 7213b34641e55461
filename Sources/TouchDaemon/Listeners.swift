import Logging
import NIOCore
import TouchCore
import TouchImpress
import TouchNet
import TouchWeb

/// A listener that cannot start: the whole line to log (the daemon then exits `ExitStatus.listener`).
struct ListenerFailure: Error {
    var message: String
}

/// A transport's listener: started into the Bridge's host, in the order of `all`.
protocol ListenerService: Service {
    /// Starts it, or nil when the settings turn it off (port 0). `loop`: the Bridge's; `webLoop`: the
    /// web server's; `stateDirectory`: where the pairing secret is kept.
    static func start(_ s: DaemonSettings, loop: BridgeEventLoop, webLoop: any EventLoop, host: NIOLoopBound<BridgeHost>,
                      stateDirectory: String, logger: Logger) async throws(ListenerFailure) -> Self?
}

/// Every listener, in the order they start (and stop in reverse).
var allListeners: [any ListenerService.Type] { [PoseAIListenerService.self, TUIOListenerService.self, WebService.self] }

/// The PoseAI UDP listener; stopping says how many datagrams the kernel dropped.
final class PoseAIListenerService: ListenerService {
    let name = "the PoseAI listener"
    private let loop: BridgeEventLoop
    /// Read and closed on the loop only.
    private let listener: NIOLoopBound<UDPListener>
    private let logger: Logger

    private init(loop: BridgeEventLoop, listener: NIOLoopBound<UDPListener>, logger: Logger) {
        self.loop = loop
        self.listener = listener
        self.logger = logger
    }

    /// Listens on `--bind`:`--udp-port` and says where the phone sends to.
    static func start(_ s: DaemonSettings, loop: BridgeEventLoop, webLoop: any EventLoop, host: NIOLoopBound<BridgeHost>,
                      stateDirectory: String, logger: Logger) async throws(ListenerFailure) -> PoseAIListenerService? {
        let handshake = PoseAIHandshake.reply(version: s.version)
        let opened: (NIOLoopBound<UDPListener>, Int, String)
        do {
            opened = try await loop.submit {
                let handler = PoseAIUDPHandler(allowList: s.allowList, rateLimits: s.rateLimits, sink: host.value,
                                               handshake: handshake, logger: logger)
                let bound = try PoseAIUDPListener.bind(loop: loop, host: s.bind, port: s.udpPort, allowList: s.allowList,
                                                       handler: handler, logger: logger)
                return (NIOLoopBound(bound.listener, eventLoop: loop), bound.listener.port, bound.kernelFilter)
            }.get()
        } catch {
            throw ListenerFailure(message: "cannot listen for UDP on \(s.bind):\(s.udpPort): \(error)")
        }
        let (listener, port, kernelFilter) = opened
        logger.info("sources outside --allow: refused in userspace; IPv4 ones in the kernel too, kernel filter \(kernelFilter)")
        writeLine("listening poseai-udp \(s.bind):\(port) (phone: send to \(PhoneAddresses.describe(bind: s.bind, port: port, allowList: s.allowList)))")
        return PoseAIListenerService(loop: loop, listener: listener, logger: logger)
    }

    func stop(reason: String) async throws {
        let listener = self.listener
        let (drops, senderDrops) = try await loop.submit { () -> (UInt32?, UInt64) in
            // Read before the sockets close.
            let drops = KernelSourceFilter.kernelDrops(listener.value.socket)
            let senderDrops = listener.value.senderSocketDrops
            listener.value.close()
            return (drops, senderDrops)
        }.get()
        if let drops {
            logger.info("poseai-udp: \(drops) datagrams dropped by the kernel (sources outside --allow, or the receive queue was full); \(senderDrops) on the senders' own sockets")
        }
    }
}

/// The TUIO UDP listener.
final class TUIOListenerService: ListenerService {
    let name = "the TUIO listener"
    private let loop: BridgeEventLoop
    private let listener: NIOLoopBound<UDPListener>

    private init(loop: BridgeEventLoop, listener: NIOLoopBound<UDPListener>) {
        self.loop = loop
        self.listener = listener
    }

    /// Listens on `--bind`:`--tuio-port` (0: off) and says where a TUIO app sends to.
    static func start(_ s: DaemonSettings, loop: BridgeEventLoop, webLoop: any EventLoop, host: NIOLoopBound<BridgeHost>,
                      stateDirectory: String, logger: Logger) async throws(ListenerFailure) -> TUIOListenerService? {
        guard s.tuioPort != 0 else { return nil }
        let listener: NIOLoopBound<UDPListener>
        do {
            listener = try await loop.submit {
                let handler = TUIOUDPHandler(allowList: s.allowList, rateLimits: s.rateLimits, sink: host.value, logger: logger)
                return NIOLoopBound(try TUIOUDPListener.bind(loop: loop, host: s.bind, port: s.tuioPort, handler: handler, logger: logger),
                                    eventLoop: loop)
            }.get()
        } catch {
            throw ListenerFailure(message: "cannot listen for TUIO on \(s.bind):\(s.tuioPort): \(error)")
        }
        writeLine("listening tuio-udp \(s.bind):\(s.tuioPort) (TUIO app: send to \(PhoneAddresses.describe(bind: s.bind, port: s.tuioPort, allowList: s.allowList)))")
        return TUIOListenerService(loop: loop, listener: listener)
    }

    func stop(reason: String) async throws {
        let listener = self.listener
        try await loop.submit { listener.value.close() }.get()
    }
}

/// The web server (HTTP and WebSocket), a task on the web loop.
final class WebService: ListenerService {
    let name = "the web server"
    private let task: Task<Void, any Error>
    private let loop: BridgeEventLoop
    private let input: NIOLoopBound<WebInput>
    private let host: NIOLoopBound<BridgeHost>

    private init(task: Task<Void, any Error>, loop: BridgeEventLoop, input: NIOLoopBound<WebInput>, host: NIOLoopBound<BridgeHost>) {
        self.task = task
        self.loop = loop
        self.input = input
        self.host = host
    }

    /// The PIN for LibreOffice Impress: `--impress-pin`, else the one kept beside the pairing secret
    /// (made the first time, and said).
    static func impressPIN(_ s: DaemonSettings, stateDirectory: String, logger: Logger) throws -> ImpressPIN {
        if let given = s.impressPin, let pin = ImpressPIN(parsing: given) { return pin }
        let (digits, created, note) = try ImpressPINFile.load(directory: stateDirectory)
        if created { logger.notice("made a PIN for LibreOffice Impress in \(stateDirectory)/\(ImpressPINFile.name) ('touchbridge pair' prints it)") }
        if let note { logger.warning("\(note)") }
        return ImpressPIN(parsing: digits)!
    }

    /// Serves the page on `--bind`:`--http-port` (0: off) with the pairing secret (`PairingAnnouncement`),
    /// on `webLoop`; its input reaches the Bridge on `loop`. Says where it listens.
    static func start(_ s: DaemonSettings, loop: BridgeEventLoop, webLoop: any EventLoop, host: NIOLoopBound<BridgeHost>,
                      stateDirectory: String, logger: Logger) async throws(ListenerFailure) -> WebService? {
        guard s.httpPort != 0 else { return nil }
        do {
            let secret = try PairingAnnouncement.secret(directory: stateDirectory, rotate: s.newSecret, logger: logger)
            let input = try await loop.submit {
                let input = WebInput(sink: host.value, logger: logger)
                // The live view's frames go to the page's socket on this loop (the Bridge's).
                host.value.frameOutlet = { [weak input] source, frame in input?.sendFrame(frame, to: source) ?? false }
                // Lines for one page: what LibreOffice Impress shows, to the page that holds the session in
                // presenter mode; a person's number and colour, to the page that took a place.
                host.value.toPage = { [weak input] source, lines in input?.push(lines, to: source) }
                return NIOLoopBound(input, eventLoop: loop)
            }.get()
            try await startImpress(s, loop: loop, host: host, stateDirectory: stateDirectory, logger: logger)
            let webSettings = WebServerSettings(host: s.bind, port: s.httpPort, secret: secret, allowList: s.allowList,
                                                tlsCertificate: s.tlsCertificate, tlsKey: s.tlsKey)
            let (port, task) = try await WebServer.start(settings: webSettings, serverLoop: webLoop, input: input, logger: logger)
            PairingAnnouncement.listening(s, port: port, secret: secret)
            return WebService(task: task, loop: loop, input: input, host: host)
        } catch {
            throw ListenerFailure(message: "cannot serve the web touchpad on \(s.bind):\(s.httpPort): \(error)")
        }
    }

    /// The LibreOffice Impress client on 127.0.0.1:`impressPort`, pairing by the PIN. Without a PIN (its
    /// file unusable, the directory read-only) or with port 0 (tests: a daemon that never meets another
    /// test's Impress), none: the page works on, its Slides panel's buttons keys.
    private static func startImpress(_ s: DaemonSettings, loop: BridgeEventLoop, host: NIOLoopBound<BridgeHost>,
                                     stateDirectory: String, logger: Logger) async throws {
        guard s.impressPort != 0 else {
            logger.debug("impress: no client (port 0): the Slides panel's buttons stay keys")
            return
        }
        let pin: ImpressPIN
        do {
            pin = try impressPIN(s, stateDirectory: stateDirectory, logger: logger)
        } catch {
            logger.warning("impress: no PIN for LibreOffice Impress (\(error)): the Slides panel's buttons stay keys")
            return
        }
        try await loop.submit { host.value.startImpress(loop: loop, port: s.impressPort, pin: pin) }.get()
    }

    func stop(reason: String) async throws {
        task.cancel()
        do {
            try await task.value
        } catch is CancellationError {
            // The way it was asked to end.
        }
        // The pages whose sockets the Bridge's loop reads (BridgeWebSocket.swift): closed there.
        let (input, host) = (self.input, self.host)
        try await loop.submit {
            input.value.closeAll()
            host.value.stopImpress()
        }.get()
    }
}
