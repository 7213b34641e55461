// TouchPortal's D-Bus layer against a real message bus: a private `dbus-daemon --session` started by the
// test (its own XDG dirs), and the bus's own org.freedesktop.DBus methods and signals. The portal's
// conversation itself needs a desktop with the portal: the VM stage (make test-portal) runs it.
import Glibc
import Testing
import TouchPortal

/// Why the private bus could not be had.
struct BusSetupError: Error, CustomStringConvertible {
    var description: String
}

/// A private session bus for one test: `dbus-daemon --session --nofork --print-address`, stopped by `stop`.
final class PrivateBus {
    let address: String
    private let pid: pid_t
    private let directory: String

    init() throws {
        var template = Array("/tmp/touchbridge-dbus-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw BusSetupError(description: "mkdtemp") }
        directory = String(cString: made)
        let socket = directory + "/bus"
        let config = directory + "/session.conf"
        // The session bus's own configuration, listening on a socket of this test's directory only.
        let text = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(socket)</listen>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            </busconfig>
            """
        let fd = open(config, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        var p: pid_t = 0
        let argv = ["dbus-daemon", "--config-file=\(config)", "--nofork", "--nopidfile"]
        var cArgs = argv.map { a -> UnsafeMutablePointer<CChar>? in a.withCString { strdup($0) } } + [nil]
        defer { for a in cArgs { free(a) } }
        var environment = ["XDG_RUNTIME_DIR=\(directory)", "XDG_DATA_HOME=\(directory)/data", "XDG_CONFIG_HOME=\(directory)/config",
                           "HOME=\(directory)", "PATH=/usr/bin:/bin"].map { e -> UnsafeMutablePointer<CChar>? in e.withCString { strdup($0) } } + [nil]
        defer { for e in environment { free(e) } }
        guard posix_spawnp(&p, "dbus-daemon", nil, nil, &cArgs, &environment) == 0 else {
            throw BusSetupError(description: "cannot start dbus-daemon (Debian: dbus-daemon)")
        }
        pid = p
        address = "unix:path=\(socket)"
        // Ready when its socket accepts a client: generous, for a loaded machine.
        for _ in 0..<600 {
            if (try? DBusConnection(address: address)) != nil { return }
            usleep(50_000)
        }
        stop()
        throw BusSetupError(description: "dbus-daemon did not listen on \(socket) within 30 s")
    }

    func stop() {
        // SIGKILL: a spawned child inherits the test thread's signal mask, in which SIGTERM may be blocked.
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        _ = system("rm -rf '\(directory)'")
    }
}

@Suite(.serialized) struct DBusTests {
    @Test func aVardictIsMarshalledAsDBusReadsIt() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        let message = try connection.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "Hello")
        try message.append(.objectPath("/org/freedesktop/portal/desktop/session/1_2/t"))
        try message.append(.vardict([("handle_token", .string("touchbridge_1_1")), ("types", .uint32(7)),
                                     ("persist_mode", .uint32(2)), ("wanted", .bool(true))]))
        try message.sealAndRewind()
        #expect(try message.readString() == "/org/freedesktop/portal/desktop/session/1_2/t")
        #expect(try message.readVardict() == ["handle_token": .string("touchbridge_1_1"), "types": .uint32(7),
                                              "persist_mode": .uint32(2), "wanted": .bool(true)])
    }

    @Test func aCallGetsTheBusesReplyAndAVardictIsRead() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        let me = try connection.uniqueName()
        #expect(me.hasPrefix(":1."))
        // org.freedesktop.DBus.GetConnectionCredentials(s) -> a{sv}: the bus says who this process is.
        let call = try connection.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: "GetConnectionCredentials")
        try call.append(.string(me))
        let credentials = try connection.call(call).readVardict()
        #expect(credentials["ProcessID"] == .uint32(UInt32(getpid())), "\(credentials)")
        #expect(credentials["UnixUserID"] == .uint32(getuid()), "\(credentials)")
    }

    @Test func aSubscribedSignalIsWaitedForAndRead() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        // Subscribed before what makes the signal, as the portal's Response is.
        let subscription = try connection.subscribe(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                    interface: "org.freedesktop.DBus", member: "NameOwnerChanged")
        let other = try DBusConnection(address: bus.address)
        let otherName = try other.uniqueName()
        var seen: [String] = []
        while !seen.contains(otherName) {
            guard let signal = try connection.waitForSignal(subscription, timeoutSeconds: 60) else {
                Issue.record("no NameOwnerChanged for \(otherName) within 60 s; saw \(seen)")
                return
            }
            let name = try signal.readString()
            _ = try signal.readString()  // the old owner
            let owner = try signal.readString()
            #expect(name == owner, "a unique name owns itself")
            seen.append(name)
        }
        other.close()
    }

    @Test func waitingGivesUpWhenToldToStop() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        let subscription = try connection.subscribe(sender: nil, path: "/nothing", interface: "org.example.None", member: "Never")
        var asked = 0
        let got = try connection.waitForSignal(subscription, checkEverySeconds: 0.05) {
            asked += 1
            return asked >= 3
        }
        #expect(got == nil && asked == 3)
    }

    @Test func anErrorReplyCarriesItsName() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        let call = try connection.methodCall(destination: "org.freedesktop.portal.Desktop", path: "/org/freedesktop/portal/desktop",
                                             interface: "org.freedesktop.portal.RemoteDesktop", member: "CreateSession")
        try call.append(.vardict([]))
        let error = try #require(throws: DBusError.self) { try connection.call(call) }
        #expect(error.name == "org.freedesktop.DBus.Error.ServiceUnknown", "\(error)")
    }

    @Test func noPortalOnTheBusIsAClearFailureNotARefusal() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        var lines: [String] = []
        let failure = try #require(throws: PortalFailure.self) {
            _ = try PortalSession.start(restoreToken: nil, busAddress: bus.address, stop: { false }, log: { lines.append($0) })
        }
        #expect(failure.kind == .unavailable)
        #expect(failure.message.contains("no desktop portal on the session bus") && failure.message.contains("xdg-desktop-portal"), "\(failure.message)")
    }

    @Test func theScreenCastsStreamsAreReadFromStartsResponse() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        let path = "/org/freedesktop/portal/desktop/request/1_1/touchbridge_1_3"
        let subscription = try connection.subscribe(sender: nil, path: path, interface: "org.freedesktop.portal.Request", member: "Response")
        // Start's Response as a portal sends it, from another client (gdbus, GLib's marshalling).
        let results = "{'streams': <[(uint32 42, {'position': <(10, 20)>, 'size': <(1280, 800)>, 'source_type': <uint32 1>}), (uint32 43, {})]>, 'devices': <uint32 3>, 'restore_token': <'abc'>}"
        let status = system("DBUS_SESSION_BUS_ADDRESS='\(bus.address)' gdbus emit --session --object-path \(path) --signal org.freedesktop.portal.Request.Response 'uint32 0' \"\(results)\" > /dev/null")
        #expect(status == 0, "gdbus emit (Debian: libglib2.0-bin) exited \(status)")
        let signal = try #require(try connection.waitForSignal(subscription, timeoutSeconds: 60))
        #expect(try signal.readUInt32() == 0)
        let read = try signal.readVardict()
        #expect(read["devices"] == .uint32(3) && read["restore_token"] == .string("abc"), "\(read)")
        #expect(read["streams"] == .streams([PortalStream(node: 42, position: (10, 20), size: (1280, 800)), PortalStream(node: 43)]), "\(read)")
        let shared = try #require(PortalRules.sharedStream(read))
        #expect(shared.description == "node 42 (1280x800+10+20)")
    }

    @Test func noBusIsAClearFailure() throws {
        let failure = try #require(throws: PortalFailure.self) {
            _ = try PortalSession.start(restoreToken: nil, busAddress: "unix:path=/nonexistent/bus", stop: { false }, log: { _ in })
        }
        #expect(failure.kind == .unavailable && failure.message.contains("/nonexistent/bus"), "\(failure.message)")
    }
}
