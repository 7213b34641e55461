// The portal backend's plug-in: the RemoteDesktop session (the dialog once, then the kept restore
// token), libei on its EIS descriptor, the capabilities the compositor offered, and the output.
import Glibc
import TouchCore
import TouchOutput

/// The portal backend. Not thread-safe: owned by the loop (made on it: the dialog waits there, before
/// anything else runs on it).
public final class PortalBackend: BackendWithConnection {
    public let name = "portal"
    public let capabilities: OutputCapabilities
    /// What the compositor's devices offered when the backend was made.
    public let offered: EICapabilities
    /// What the user granted in the dialog (or the token restored).
    public let granted: PortalDevices
    /// Whether the dialog was skipped: the kept token restored the permission (Start returned at once
    /// is not proof; the token's being sent and a new one returned is what the log says).
    public let usedToken: Bool
    private let session: PortalSession
    private let ei: EIContext
    private var made: PortalOutput?
    private var closed = false

    private init(session: PortalSession, ei: EIContext, usedToken: Bool) {
        self.session = session
        self.ei = ei
        self.usedToken = usedToken
        granted = session.devices
        offered = ei.offered
        capabilities = portalCapabilities(offered: ei.offered)
    }

    public var descriptor: Int32 { ei.descriptor }

    /// The monitor the session shares for the view, in words; nil when none.
    public var sharedScreen: String? { session.screen.map { "PipeWire \($0.stream)" } }

    /// Takes the portal: the session (asking the user unless the token at `tokenPath` restores the
    /// permission), the new token kept at `tokenPath`, libei connected, and the compositor's devices
    /// awaited (up to `deviceWaitSeconds`). `screen`: a monitor is shared too, in the same session and
    /// dialog (the live view's pictures, `openPixelStream`). `stop`: asked about once a second while
    /// the dialog is up.
    public static func make(tokenPath: String, screen: Bool, stop: () -> Bool, deviceWaitSeconds: Int32 = 10,
                            log: (String) -> Void) -> Result<PortalBackend, PortalFailure> {
        let session: PortalSession
        let fd: Int32
        let sent: Bool
        do throws(PortalFailure) {
            ((session, fd), sent) = try startKeepingToken(tokenPath: tokenPath, log: log) { (token) throws(PortalFailure) in
                let started = try PortalSession.start(restoreToken: token, screen: screen, stop: stop, log: log)
                return (started, started.0.restoreToken)
            }
        } catch { return .failure(error) }
        let ei: EIContext
        do throws(PortalFailure) { ei = try EIContext(fd: fd, name: "touchbridge") } catch {
            session.close()
            return .failure(error)
        }
        // The devices come after the seat is bound: wait for them (libei's descriptor), at most a while.
        var pollfd = Glibc.pollfd(fd: ei.descriptor, events: Int16(POLLIN), revents: 0)
        var waitedMS: Int32 = 0
        // Every granted type's device (Mutter adds four, one after another), then quiet for 500 ms: the
        // capabilities are decided once, from all of them.
        var wanted: EICapabilities = []
        if session.devices.contains(.pointer) { wanted.insert(.pointer) }
        if session.devices.contains(.keyboard) { wanted.insert(.keyboard) }
        if session.devices.contains(.touchscreen) { wanted.insert(.touch) }
        var quietMS: Int32 = 0
        while waitedMS < deviceWaitSeconds * 1000 {
            if !ei.usable.isEmpty, ei.usable.isSuperset(of: wanted), quietMS >= 500 { break }
            let n = poll(&pollfd, 1, 100)
            waitedMS += 100
            quietMS += 100
            if n > 0 {
                quietMS = 0
                for event in ei.dispatch() {
                    switch event {
                    case .disconnected:
                        ei.close()
                        session.close()
                        return .failure(PortalFailure(.refused, "the compositor closed the EIS connection before giving any device"))
                    case .deviceAdded(let name, let caps): log("portal: device \"\(name)\" added: \(caps)")
                    case .deviceResumed(let name): log("portal: device \"\(name)\" resumed")
                    default: continue
                    }
                }
            }
        }
        guard !ei.offered.isEmpty else {
            ei.close()
            session.close()
            return .failure(PortalFailure(.unavailable, "the compositor gave no input device over EIS within \(deviceWaitSeconds) s"))
        }
        return .success(PortalBackend(session: session, ei: ei, usedToken: sent))
    }

    /// The restore token's rule around the portal's Start (`start`: given the kept token, or nil when
    /// there is none or the file holds none, which is logged; returns what it started and the token the
    /// portal returned): the file at `tokenPath` is replaced only once Start has been answered with a
    /// new token, so a token the portal no longer honours stays as it was when the user cancels the
    /// dialog that then asks again (or anything else fails), and is replaced after the dialog is
    /// answered. Returns what `start` returned and whether a kept token was given to it.
    public static func startKeepingToken<Started>(tokenPath: String, log: (String) -> Void,
                                           start: (String?) throws(PortalFailure) -> (Started, String?)) throws(PortalFailure) -> (Started, sent: Bool) {
        let kept = RestoreTokenFile.read(tokenPath)
        if let why = kept.why { log("portal: \(tokenPath) \(why): ignored (the dialog asks, and the new token replaces it)") }
        let (started, returned) = try start(kept.token)
        // The token is replaced only now, after Start was answered: a stale one stays until then.
        if let returned {
            do throws(PortalFailure) { try RestoreTokenFile.write(returned, to: tokenPath) } catch { log("portal: \(error)") }
        }
        return (started, kept.token != nil)
    }

    /// The output; the same one for every desktop (it needs none: the devices are the compositor's).
    public func output(on desktop: any Desktop) throws(OutputError) -> any InputOutput {
        if let made { return made }
        let output = PortalOutput(devices: ei)
        made = output
        return output
    }

    public func desktopClosing() -> (removed: [String], errors: [OutputError]) { ([], []) }

    /// Reads what the compositor sent: devices paused, resumed, removed; a disconnect ends the backend.
    public func readIncoming() -> BackendIncoming {
        var incoming = BackendIncoming()
        for event in ei.dispatch() {
            switch event {
            case .connected, .seatAdded: continue
            case .deviceAdded(let name, let caps): incoming.lines.append("portal: device \"\(name)\" added: \(caps)")
            case .deviceResumed(let name): incoming.lines.append("portal: device \"\(name)\" resumed")
            case .devicePaused(let name): incoming.lines.append("portal: device \"\(name)\" paused by the compositor: what it held ends there")
            case .deviceRemoved(let name): incoming.lines.append("portal: device \"\(name)\" removed by the compositor")
            case .disconnected:
                incoming.ended = "the compositor ended the remote desktop session (the EIS connection closed)"
            }
        }
        return incoming
    }

    /// Releases what the output holds, lets libei go and closes the portal session. Idempotent.
    public func close() -> (removed: [String], errors: [OutputError]) {
        guard !closed else { return ([], []) }
        closed = true
        let errors = made?.close().errors ?? []
        let what = "the portal's \(offered) devices"
        ei.close()
        session.close()
        return ([what], errors)
    }
}

extension PortalBackend: ScreenSharingBackend {
    /// The monitor the session shares, as a new PipeWire stream over a copy of the session's remote
    /// descriptor (each desktop opened gets its own stream and closes it).
    public func openPixelStream() -> Result<any PixelStream, OutputError> {
        guard let screen = session.screen else {
            return .failure(OutputError(origin: "portal", message: "the portal session shares no screen (its log lines say why)", kind: 7))
        }
        let remote = fcntl(screen.remote, F_DUPFD_CLOEXEC, 3)
        guard remote >= 0 else {
            return .failure(OutputError(origin: "portal", message: "dup of the PipeWire descriptor: \(String(cString: strerror(errno)))", kind: 7))
        }
        let stream = screen.stream
        let area = stream.size.map { PixelRect(x: stream.position?.x ?? 0, y: stream.position?.y ?? 0, width: $0.width, height: $0.height) }
        do throws(OutputError) {
            return .success(try PipeWireCast(remote: remote, node: stream.node, area: area))
        } catch { return .failure(error) }
    }
}
