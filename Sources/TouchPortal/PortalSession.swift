// The RemoteDesktop portal's conversation (org.freedesktop.portal.Desktop on the session bus):
// CreateSession, SelectDevices (with the kept restore token), Start (the dialog, unless the token
// restores the permission), ConnectToEIS: the descriptor libei sends input on. Each request's Response
// signal is subscribed to before the call, on the path the handle token makes it.
import Glibc

/// A started RemoteDesktop session: what the user granted, the new restore token, the EIS descriptor.
/// `close` ends it at the portal (org.freedesktop.portal.Session.Close).
public final class PortalSession {
    private let bus: DBusConnection
    /// The session's object path.
    public let handle: String
    /// What Start granted (what was asked when the portal did not say).
    public let devices: PortalDevices
    /// The token Start returned, for the next run; nil when none.
    public let restoreToken: String?
    /// The portal interface's version.
    public let version: UInt32
    /// The monitor the session shares (ScreenCast, for the live view) and the PipeWire descriptor its
    /// frames come over (`OpenPipeWireRemote`; the session's, closed with it); nil when none is shared.
    public let screen: (stream: PortalStream, remote: Int32)?
    private var closed = false

    static let destination = "org.freedesktop.portal.Desktop"
    static let objectPath = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.RemoteDesktop"
    static let screenCastInterface = "org.freedesktop.portal.ScreenCast"

    private init(bus: DBusConnection, handle: String, devices: PortalDevices, restoreToken: String?, version: UInt32,
                 screen: (stream: PortalStream, remote: Int32)? = nil) {
        self.bus = bus
        self.handle = handle
        self.devices = devices
        self.restoreToken = restoreToken
        self.version = version
        self.screen = screen
    }

    /// Why the portal cannot be used, from a D-Bus error met while asking `what`.
    private static func unavailable(_ what: String, _ error: DBusError) -> PortalFailure {
        if error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return PortalFailure(.unavailable, "no desktop portal on the session bus (\(destination) is not running): install xdg-desktop-portal and the desktop's backend (xdg-desktop-portal-gnome or -kde)")
        }
        if error.name == "org.freedesktop.DBus.Error.UnknownMethod" || error.name == "org.freedesktop.DBus.Error.UnknownInterface"
            || error.name == "org.freedesktop.DBus.Error.InvalidArgs" && what.hasPrefix("the version") {
            return PortalFailure(.unavailable, "the desktop portal has no RemoteDesktop input over EIS (\(what): \(error)): it needs xdg-desktop-portal 1.18 with GNOME 45 or Plasma 6.1, or later")
        }
        return PortalFailure(.unavailable, "the RemoteDesktop portal: \(what): \(error)")
    }

    /// The session bus (or `busAddress`), this connection's unique name, and what the RemoteDesktop
    /// interface offers: its version (at least 2, ConnectToEIS) and its device types
    /// (org.freedesktop.DBus.Properties.Get). Throws why the portal cannot be used. `touchbridge doctor`
    /// asks this too, and closes the bus.
    public static func interfaceOffer(busAddress: String? = nil) throws(PortalFailure)
        -> (bus: DBusConnection, sender: String, version: UInt32, available: UInt32?) {
        let bus: DBusConnection
        do throws(DBusError) {
            if let busAddress { bus = try DBusConnection(address: busAddress) } else { bus = try DBusConnection() }
        } catch { throw PortalFailure(.unavailable, error.message) }
        let sender: String
        do throws(DBusError) { sender = try bus.uniqueName() } catch { bus.close(); throw unavailable("the bus name", error) }
        func property(_ name: String) throws(DBusError) -> UInt32? {
            let call = try bus.methodCall(destination: destination, path: objectPath, interface: "org.freedesktop.DBus.Properties", member: "Get")
            try call.append(.string(interface))
            try call.append(.string(name))
            if case .uint32(let v) = try bus.call(call).readVariant() { return v }
            return nil
        }
        let version: UInt32
        let available: UInt32?
        do throws(DBusError) {
            version = try property("version") ?? 0
            available = try property("AvailableDeviceTypes")
        } catch { bus.close(); throw unavailable("the version of \(interface)", error) }
        guard version >= 2 else {
            bus.close()
            throw PortalFailure(.unavailable, "the desktop portal's RemoteDesktop is version \(version): input over EIS (ConnectToEIS) needs version 2 (xdg-desktop-portal 1.18 with GNOME 45 or Plasma 6.1, or later)")
        }
        return (bus, sender, version, available)
    }

    /// The ScreenCast interface's cursor modes (`AvailableCursorModes`), or why it cannot share a screen.
    private static func screenCastOffer(_ bus: DBusConnection) -> Result<UInt32?, DBusError> {
        do throws(DBusError) {
            let call = try bus.methodCall(destination: destination, path: objectPath, interface: "org.freedesktop.DBus.Properties", member: "Get")
            try call.append(.string(screenCastInterface))
            try call.append(.string("AvailableCursorModes"))
            if case .uint32(let v) = try bus.call(call).readVariant() { return .success(v) }
            return .success(nil)
        } catch { return .failure(error) }
    }

    /// Runs the conversation up to ConnectToEIS; returns the session and the EIS descriptor (the caller's).
    /// `restoreToken`: the token kept from a run before (the dialog is then skipped when the portal
    /// still honours it). `screen`: the session shares a monitor too (ScreenCast's SelectSources before
    /// Start, one dialog for both; then OpenPipeWireRemote), for the live view; a portal that cannot
    /// share one gives input alone, said in `log`. `stop`: asked about once a second while the dialog
    /// is up; true gives up.
    /// `log`: one line per step, for the debug log.
    /// `busAddress`: a bus other than the session bus (tests).
    public static func start(restoreToken: String?, screen: Bool = false, busAddress: String? = nil, stop: () -> Bool,
                             log: (String) -> Void) throws(PortalFailure) -> (PortalSession, Int32) {
        let (bus, sender, version, available) = try interfaceOffer(busAddress: busAddress)
        let wanted = PortalRules.devicesToAsk(available: available)
        log("portal: RemoteDesktop version \(version), offers \(available.map { PortalDevices(rawValue: $0).description } ?? "(unsaid)"); asking for \(wanted)")

        var counter = 0
        /// Calls `member` with `arguments` then the options (a handle token added) and waits for its
        /// Response: the results, or why not.
        func request(_ member: String, _ arguments: [DBusArgument], options: [(String, DBusArgument)],
                     on callee: String = interface) throws(PortalFailure) -> [String: DBusValue] {
            counter += 1
            let token = "touchbridge_\(getpid())_\(counter)"
            let path = PortalRules.requestPath(uniqueName: sender, handleToken: token)
            let response: DBusMessage?
            do throws(DBusError) {
                let subscription = try bus.subscribe(sender: destination, path: path, interface: "org.freedesktop.portal.Request", member: "Response")
                let call = try bus.methodCall(destination: destination, path: objectPath, interface: callee, member: member)
                for argument in arguments { try call.append(argument) }
                try call.append(.vardict([("handle_token", .string(token))] + options))
                let reply = try bus.call(call)
                let returned = try reply.readString()
                if returned != path { log("portal: \(member)'s request is \(returned), not \(path) (an old portal)") }
                let late = returned == path ? subscription : try bus.subscribe(sender: destination, path: returned, interface: "org.freedesktop.portal.Request", member: "Response")
                response = try bus.waitForSignal(late, stop: stop)
            } catch { throw unavailable(member, error) }
            guard let response else { throw PortalFailure(.refused, "stopped while the RemoteDesktop portal's \(member) was waiting for the user") }
            let code: UInt32
            let results: [String: DBusValue]
            do throws(DBusError) {
                code = try response.readUInt32()
                results = try response.readVardict()
            } catch { throw unavailable("\(member)'s response", error) }
            switch PortalRules.results(of: PortalResponse(code: code, results: results), step: member) {
            case .success(let results): return results
            case .failure(let failure): throw failure
            }
        }

        let created = try request("CreateSession", [], options: [("session_handle_token", .string("touchbridge_\(getpid())"))])
        let handle: String
        switch PortalRules.sessionHandle(created) {
        case .success(let h): handle = h
        case .failure(let failure): throw failure
        }
        log("portal: session \(handle)")
        // From here on the session exists at the portal: it is closed on every failure below.
        let session = PortalSession(bus: bus, handle: handle, devices: wanted, restoreToken: nil, version: version)
        do throws(PortalFailure) {
            var select: [(String, DBusArgument)] = [("types", .uint32(wanted.rawValue)), ("persist_mode", .uint32(2))]
            let sent = restoreToken.map { PortalRules.isUsableToken($0) } ?? false
            if sent, let restoreToken { select.append(("restore_token", .string(restoreToken))) }
            _ = try request("SelectDevices", [.objectPath(handle)], options: select)
            log(sent ? "portal: devices selected with the kept restore token; starting (no dialog while the portal still honours it; if it does not, the dialog asks, and only the token its answer returns replaces the kept one)"
                : "portal: devices selected, no restore token kept; starting (the dialog asks)")
            var sharing = false
            if screen {
                switch screenCastOffer(bus) {
                case .success(let cursorModes):
                    do throws(PortalFailure) {
                        _ = try request("SelectSources", [.objectPath(handle)], options: PortalRules.screenSources(cursorModes: cursorModes),
                                        on: screenCastInterface)
                        sharing = true
                        log("portal: a monitor asked for too (ScreenCast, cursor modes \(cursorModes.map(String.init) ?? "unsaid")): the view's pictures")
                    } catch { log("portal: no screen shared (SelectSources: \(error)): input only, the view has no picture") }
                case .failure(let error):
                    log("portal: no screen shared (the portal has no ScreenCast: \(error)): input only, the view has no picture")
                }
            }
            let results = try request("Start", [.objectPath(handle), .string("")], options: [])
            let started = PortalRules.started(results)
            let granted = started.devices ?? wanted
            var shared: (stream: PortalStream, remote: Int32)?
            if sharing {
                if let stream = PortalRules.sharedStream(results) {
                    do throws(DBusError) {
                        let call = try bus.methodCall(destination: destination, path: objectPath, interface: screenCastInterface, member: "OpenPipeWireRemote")
                        try call.append(.objectPath(handle))
                        try call.append(.vardict([]))
                        shared = (stream, try bus.call(call).readDescriptor())
                        log("portal: the shared monitor is PipeWire \(stream)")
                    } catch { log("portal: no screen shared (OpenPipeWireRemote: \(error)): the view has no picture") }
                } else {
                    log("portal: Start shared no stream: the view has no picture")
                }
            }
            let fd: Int32
            do throws(DBusError) {
                let call = try bus.methodCall(destination: destination, path: objectPath, interface: interface, member: "ConnectToEIS")
                try call.append(.objectPath(handle))
                try call.append(.vardict([]))
                fd = try bus.call(call).readDescriptor()
            } catch {
                if let shared { Glibc.close(shared.remote) }
                throw unavailable("ConnectToEIS", error)
            }
            session.closed = true  // this one is replaced by the one returned
            return (PortalSession(bus: bus, handle: handle, devices: granted, restoreToken: started.restoreToken, version: version,
                                  screen: shared), fd)
        } catch {
            session.close()
            throw error
        }
    }

    /// Ends the session at the portal (org.freedesktop.portal.Session.Close) and closes the bus
    /// connection. Idempotent; a failure is ignored (the portal ends the session when the connection goes).
    public func close() {
        guard !closed else { return }
        closed = true
        if let screen { Glibc.close(screen.remote) }
        do throws(DBusError) {
            let call = try bus.methodCall(destination: Self.destination, path: handle, interface: "org.freedesktop.portal.Session", member: "Close")
            _ = try bus.call(call, timeoutSeconds: 2)
        } catch {}
        bus.close()
    }

    deinit { close() }
}
