import Glibc
import TouchCore
import TouchOutput

/// Further people's own seats under sway: each person's uinput devices go on a seat of their own
/// (`touchbridge-person-N`), with its own cursor and keyboard focus, through sway's IPC (`seat <name>
/// attach <identifier>`), asked before the devices are made. sway keeps the rule and applies it to a device
/// whenever it comes, so a person is ready once sway has said yes; its answer is read without holding the
/// event loop (`make` waits at most `answerWaitMs`, `isReady` not at all). A seat stays in sway after its
/// devices are gone (sway has no command to remove one).
///
/// A seat's pointer must not come and go under Xwayland. Xwayland answers a seat's new pointer capability
/// with `wl_seat.get_pointer` and `get_relative_pointer`, and it can be seconds late (it runs `xkbcomp`
/// for every keyboard that comes). When the pointer went meanwhile, wlroots 0.15 (sway 1.7) gives it an
/// inert `wl_pointer` and then dereferences that pointer's missing seat in `get_relative_pointer`: sway goes
/// down (seen in the VM: a core dump and Xwayland's own `WAYLAND_DEBUG` trace). So a person's devices stay
/// on their seat when they leave (`keepsDevices`), for whoever comes next at their place, and the cursor
/// of a seat nobody moves hides after `hideCursorMs`. When they all go, `beforeDevicesGo` first waits
/// until Xwayland holds a relative pointer for every seat that has a pointer (`xwaylandDevices`), or,
/// when Xwayland cannot be asked, until the newest seat is `settleMs` old.
///
/// A new seat's cursor enters the surface under it before the clients have bound the new `wl_seat`, and
/// wlroots 0.15 then never tells that client of this seat's pointer while the cursor stays on the same
/// surface (a fullscreen slide show, always). Hiding a cursor clears its focus, and the next motion enters
/// afresh: a new seat's cursor is first told to hide 100 ms after its last motion (sway's least), and its
/// timeout becomes `hideCursorMs` once sway lists the person's pointer on the seat and `cursorSettleMs`
/// have passed (sway arms the timer when the pointer comes: told earlier, the first hide would not come).
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public final class SwaySeats: PersonSeats {
    /// sway's IPC socket (`SWAYSOCK`).
    public let socketPath: String
    /// How a person's seat stands: asked (sway's answer not read yet), said yes, or failed.
    private enum Seat {
        case asked(SwayIPC.Exchange)
        case ready
        case failed
    }
    private var seats: [Person: Seat] = [:]
    /// The identifiers each person's seat has a rule for, asked for in this run.
    private var asked: [Person: Set<String>] = [:]
    /// What went wrong since the last `settle`, in words.
    private var notes: [String] = []
    /// When each person's seat was last asked for (`monotonicMilliseconds`).
    private var askedAt: [Person: UInt32] = [:]
    /// Where a new seat's cursor stands while it hides after 100 ms: sway's seats asked for (or to be asked)
    /// until the person's pointer is on it, then since when it is, then its timeout being set.
    private enum Cursor {
        case waitingForPointer(SwayIPC.Exchange?)
        case pointerSince(UInt32)
        case settingTimeout(SwayIPC.Exchange)
    }
    private var cursors: [Person: Cursor] = [:]
    /// Each person's pointer as sway names it (the first device `make` was given that is not a keyboard).
    private var pointers: [Person: String] = [:]
    /// How long after the pointer is on its seat its cursor keeps hiding after 100 ms: a program busy when
    /// the seat came binds it late (the VM's test client, compiling keymaps, seconds late under load). Any
    /// seat command makes sway count activity on the seat's devices, which shows the cursor on the surface
    /// under it: a program that binds the seat after the timeout is set hears of its pointer only once it
    /// has hidden after `hideCursorMs`.
    static let cursorSettleMs: UInt32 = 5_000
    /// How long `make` waits for sway's answer before it goes on (the answer is read later, at `isReady`).
    static let answerWaitMs: Int32 = 300
    /// How old the newest seat must be before the devices go, when Xwayland cannot be asked (it was 2 s
    /// late under load in the VM, and more than 5 s with both cores busy).
    static let settleMs: UInt32 = 5_000
    /// How long the devices wait at most for Xwayland to take every seat's pointer.
    static let xwaylandWaitMs: UInt32 = 15_000
    /// The longest `beforeDevicesGo` takes, asking included (what the daemon's stop allows it).
    public static let longestWait = Duration.milliseconds(Int(xwaylandWaitMs + xwaylandMarginMs) + 2_000)
    /// How often Xwayland's devices are asked for meanwhile.
    static let xwaylandAskEveryMs: UInt32 = 50
    /// How long after Xwayland has them the devices still wait (its requests are flushed to sway when it
    /// next sleeps, around the time it answers).
    static let xwaylandMarginMs: UInt32 = 100
    /// The names of Xwayland's enabled input devices (Xwayland's X display, the overlay's: XInput's
    /// `XIQueryDevice`), nil when it cannot be asked; set when the session has one. Xwayland makes a seat's
    /// `xwayland-relative-pointer:N` when it takes that seat's pointer (`get_pointer` and
    /// `get_relative_pointer`), and disables it when the pointer goes.
    public var xwaylandDevices: (() -> [String]?)?
    /// A further person's cursor hides after this long without moving (a place nobody holds shows none).
    static let hideCursorMs = 10_000

    public var keepsDevices: Bool { true }

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// sway's version (`GET_VERSION`), waiting at most `waitMs` for it; nil when sway did not answer.
    public static func version(socketPath: String, waitMs: Int32 = 1_000) -> (major: Int, minor: Int)? {
        guard let exchange = try? SwayIPC.Exchange(command: "", socketPath: socketPath, type: SwayIPC.getVersionType) else { return nil }
        defer { exchange.close() }
        guard let reply = try? exchange.reply(waitMs: waitMs) else { return nil }
        return parseVersion(reply)
    }

    /// The major and minor numbers of a `GET_VERSION` reply (`{"major": 1, "minor": 7, …}`).
    public static func parseVersion(_ reply: String) -> (major: Int, minor: Int)? {
        let fields = reply.split { $0 == "," || $0 == "{" || $0 == "}" }
        func number(_ key: String) -> Int? {
            let quoted = "\"\(key)\""
            guard let field = fields.first(where: { $0.drop { $0 == " " || $0 == "\n" }.hasPrefix(quoted) }),
                  let colon = field.firstIndex(of: ":") else { return nil }
            return Int(field[field.index(after: colon)...].drop { $0 == " " }.prefix { $0.isASCII && $0.isNumber })
        }
        guard let major = number("major"), let minor = number("minor") else { return nil }
        return (major, minor)
    }

    /// The seat's name for `person`.
    public static func seatName(_ person: Person) -> String { "touchbridge-person-\(person.rawValue)" }

    /// sway's identifier of a device: `vendor:product:name`, decimal, the name's spaces and unprintable
    /// characters as `_`.
    public static func identifier(_ device: SeatDevice) -> String {
        let name = String(device.name.unicodeScalars.map { $0 == " " || $0.value < 0x20 || $0.value >= 0x7f ? "_" : Character($0) })
        return "\(device.vendor):\(device.product):\(name)"
    }

    /// Asks sway to put `devices` on `person`'s seat, and waits a little for its answer; a slow sway's
    /// answer is read at a later `isReady` (the event loop is never held longer).
    public func make(_ person: Person, devices: [SeatDevice]) throws(OutputError) {
        let seat = Self.seatName(person)
        // sway keeps a seat's rules: a rule asked for once is not asked for again; a later run's devices
        // have names of their own (`DeviceNames`' run tag), so no earlier run's rule applies to them.
        let wanted = devices.map(Self.identifier).filter { !asked[person, default: []].contains($0) }
        guard !wanted.isEmpty else {
            seats[person] = .ready
            return
        }
        let rules = wanted.map { "seat \(seat) attach \"\($0)\"" }
        let fresh = asked[person] == nil
        let command = (fresh ? rules + ["seat \(seat) hide_cursor 100"] : rules).joined(separator: "; ")
        do throws(SwayIPCError) {
            let exchange = try SwayIPC.Exchange(command: command, socketPath: socketPath)
            seats[person] = .asked(exchange)
            asked[person, default: []].formUnion(wanted)
            askedAt[person] = monotonicMilliseconds()
            if fresh, let pointer = devices.first(where: { !$0.isKeyboard }) {
                pointers[person] = Self.identifier(pointer)
                cursors[person] = .waitingForPointer(nil)
            }
        } catch {
            throw OutputError(origin: "sway", message: "\(person)'s seat: \(error)", kind: 7)
        }
        _ = answer(person, waitMs: Self.answerWaitMs)
    }

    public func settle() -> [String] {
        defer { notes.removeAll() }
        return notes
    }

    /// Whether `person`'s seat is there; moves their new seat's cursor on (`Cursor`) meanwhile.
    public func isReady(_ person: Person) -> Bool {
        guard answer(person, waitMs: 0) else { return false }
        if cursors[person] != nil { advanceCursor(person) }
        return true
    }

    /// One step of a new seat's cursor, never waiting: asks sway's seats until the person's pointer is
    /// on theirs, lets `cursorSettleMs` pass, then sets the cursor's timeout to `hideCursorMs`.
    private func advanceCursor(_ person: Person) {
        let seat = Self.seatName(person)
        do throws(SwayIPCError) {
            switch cursors[person] {
            case nil:
                return
            case .waitingForPointer(nil):
                cursors[person] = .waitingForPointer(try SwayIPC.Exchange(command: "", socketPath: socketPath, type: SwayIPC.getSeatsType))
            case .waitingForPointer(let query?):
                guard let reply = try query.reply(waitMs: 0) else { return }
                query.close()
                let there = pointers[person].map { reply.contains("\"\($0)\"") } ?? true
                cursors[person] = there ? .pointerSince(monotonicMilliseconds()) : .waitingForPointer(nil)
            case .pointerSince(let since):
                guard monotonicMilliseconds() &- since >= Self.cursorSettleMs else { return }
                cursors[person] = .settingTimeout(try SwayIPC.Exchange(command: "seat \(seat) hide_cursor \(Self.hideCursorMs)", socketPath: socketPath))
            case .settingTimeout(let exchange):
                guard let reply = try exchange.reply(waitMs: 0) else { return }
                exchange.close()
                if !reply.contains("true") { notes.append("\(person): sway refused their cursor's timeout: \(reply.prefix(200))") }
                cursors[person] = nil
            }
        } catch {
            notes.append("\(person)'s cursor: \(error)")
            close(cursors.removeValue(forKey: person))
        }
    }

    private func close(_ cursor: Cursor?) {
        switch cursor {
        case .waitingForPointer(let query?): query.close()
        case .settingTimeout(let exchange): exchange.close()
        default: break
        }
    }

    /// Whether sway said yes to `person`'s seat, reading its answer when it came (waiting at most `waitMs`).
    private func answer(_ person: Person, waitMs: Int32) -> Bool {
        let exchange: SwayIPC.Exchange
        switch seats[person] {
        case nil, .failed: return false
        case .ready: return true
        case .asked(let asked): exchange = asked
        }
        do throws(SwayIPCError) {
            guard let reply = try exchange.reply(waitMs: waitMs) else { return false }
            exchange.close()
            if reply.contains("\"success\": false") || reply.contains("\"success\":false") || !reply.contains("true") {
                seats[person] = .failed
                notes.append("\(person): sway refused their seat: \(reply.prefix(200))")
                return false
            }
            seats[person] = .ready
            return true
        } catch {
            exchange.close()
            seats[person] = .failed
            notes.append("\(person)'s seat: \(error)")
            return false
        }
    }

    public func remove(_ person: Person) throws(OutputError) -> [String] {
        close(cursors.removeValue(forKey: person))
        guard let seat = seats.removeValue(forKey: person) else { return [] }
        if case .asked(let exchange) = seat { exchange.close() }
        return ["their devices from seat \(Self.seatName(person))"]
    }

    /// Waits until Xwayland has taken every seat's pointer, so that no pointer of a seat goes before
    /// Xwayland's `get_relative_pointer` for it reached sway (see the type's comment): until Xwayland holds
    /// as many enabled relative pointers as sway has seats with a pointer (at most `xwaylandWaitMs`). When
    /// Xwayland or sway cannot be asked, until the newest seat is `settleMs` old.
    public func beforeDevicesGo() -> String? {
        let start = monotonicMilliseconds()
        guard let youngest = askedAt.values.map({ start &- $0 }).min() else { return nil }
        if let xwaylandDevices, let seats = pointerSeats() {
            var held = Self.relativePointers(xwaylandDevices())
            while let have = held, have < seats, monotonicMilliseconds() &- start < Self.xwaylandWaitMs {
                pause(milliseconds: Self.xwaylandAskEveryMs)
                held = Self.relativePointers(xwaylandDevices())
            }
            if let have = held {
                let waited = monotonicMilliseconds() &- start
                guard have >= seats else {
                    return "(after waiting \(waited) ms, Xwayland holds the pointers of \(have) of sway's \(seats) seats with one; removing anyway)"
                }
                pause(milliseconds: Self.xwaylandMarginMs)
                return waited < Self.xwaylandAskEveryMs ? nil : "(after waiting \(waited) ms for Xwayland to take the pointers of sway's \(seats) seats with one)"
            }
        }
        guard youngest < Self.settleMs else { return nil }
        let wait = Self.settleMs - youngest
        pause(milliseconds: wait)
        return "(after waiting \(wait) ms: a seat \(youngest) ms old, whose pointer Xwayland may not have taken yet)"
    }

    /// How many of sway's seats have a pointer (`GET_SEATS`, waiting at most 1 s); nil when sway did not say.
    private func pointerSeats() -> Int? {
        guard let query = try? SwayIPC.Exchange(command: "", socketPath: socketPath, type: SwayIPC.getSeatsType) else { return nil }
        defer { query.close() }
        guard let reply = try? query.reply(waitMs: 1_000) else { return nil }
        return Self.seatsWithPointer(reply)
    }

    /// The seats of a `GET_SEATS` reply whose `capabilities` include the pointer (`WL_SEAT_CAPABILITY_POINTER`,
    /// 1); only a seat has that key.
    public static func seatsWithPointer(_ reply: String) -> Int {
        reply.split(separator: "\"capabilities\"").dropFirst().count { field in
            let digits = field.drop { $0 == ":" || $0 == " " }.prefix { $0.isASCII && $0.isNumber }
            return (Int(digits) ?? 0) & 1 == 1
        }
    }

    /// How many seats' relative pointers Xwayland holds, of its enabled devices' names; nil when it
    /// could not be asked, or is not Xwayland (no such device at all).
    public static func relativePointers(_ enabledDevices: [String]?) -> Int? {
        guard let names = enabledDevices, names.contains(where: { $0.hasPrefix("xwayland-") }) else { return nil }
        return names.count { $0.hasPrefix("xwayland-relative-pointer:") }
    }
}

/// What went wrong talking to sway's IPC socket.
public enum SwayIPCError: Error, CustomStringConvertible {
    case socket(String, Int32)
    case tooLong
    case noReply
    case badReply

    public var description: String {
        switch self {
        case .socket(let what, let code): "sway's IPC socket: \(what): \(String(cString: strerror(code)))"
        case .tooLong: "sway's IPC: the command is too long"
        case .noReply: "sway's IPC: the connection closed before the reply"
        case .badReply: "sway's IPC: a reply that is not i3-ipc"
        }
    }
}

/// sway's IPC (i3's): a message is `i3-ipc`, the payload's length and the message type (32-bit, the host's
/// byte order), then the payload. One connection per command (`Exchange`), closed after the reply.
enum SwayIPC {
    static let magic = Array("i3-ipc".utf8)
    static let runCommandType: UInt32 = 0
    static let getVersionType: UInt32 = 7
    static let getSeatsType: UInt32 = 101
    /// The longest reply read (a command's reply is a short JSON array).
    static let replyLimit = 64 * 1024

    /// One `RUN_COMMAND` and its reply: the command is sent at once; the reply is read as it comes
    /// (`reply(waitMs:)`), never waiting longer than asked.
    final class Exchange {
        private var fd: Int32
        private var received: [UInt8] = []

        init(command: String, socketPath: String, type: UInt32 = SwayIPC.runCommandType) throws(SwayIPCError) {
            let payload = Array(command.utf8)
            guard payload.count < 1 << 20 else { throw .tooLong }
            fd = try SwayIPC.connect(socketPath)
            var message = magic
            withUnsafeBytes(of: UInt32(payload.count)) { message += $0 }
            withUnsafeBytes(of: type) { message += $0 }
            message += payload
            do throws(SwayIPCError) {
                try SwayIPC.writeAll(fd, message)
            } catch {
                close()
                throw error
            }
        }

        deinit { close() }

        /// sway's reply once it has all come; nil while it has not (after waiting at most `waitMs`).
        func reply(waitMs: Int32) throws(SwayIPCError) -> String? {
            guard fd >= 0 else { throw .noReply }
            let header = magic.count + 8
            while true {
                if received.count >= header {
                    guard Array(received.prefix(magic.count)) == magic else { throw .badReply }
                    let length = received[magic.count..<magic.count + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
                    guard length <= replyLimit else { throw .badReply }
                    if received.count >= header + Int(length) {
                        return String(decoding: received[header..<header + Int(length)], as: UTF8.self)
                    }
                }
                guard try SwayIPC.receive(fd, into: &received, waitMs: waitMs) else { return nil }
            }
        }

        /// Closes the connection. Idempotent.
        func close() {
            guard fd >= 0 else { return }
            SwayIPC.closeSocket(fd)
            fd = -1
        }
    }

    /// Closes one of these sockets (the one call of `close`).
    fileprivate static func closeSocket(_ fd: Int32) {
        Glibc.close(fd)
    }

    /// A connected stream socket to `path`.
    fileprivate static func connect(_ path: String) throws(SwayIPCError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket("socket", errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            closeSocket(fd)
            throw .socket("connect \(path)", ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let code = errno
            closeSocket(fd)
            throw .socket("connect \(path)", code)
        }
        return fd
    }

    fileprivate static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SwayIPCError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .socket("send", errno)
            }
            sent += n
        }
    }

    /// Appends what has come to `received`, waiting at most `waitMs` for something; false when nothing
    /// came in that time. Throws when sway closed the connection before its whole reply.
    fileprivate static func receive(_ fd: Int32, into received: inout [UInt8], waitMs: Int32) throws(SwayIPCError) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, waitMs)
        if ready < 0 { if errno == EINTR { return false }; throw .socket("poll", errno) }
        guard ready > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return false }
            throw .socket("recv", errno)
        }
        guard n > 0 else { throw .noReply }
        received += chunk[0..<n]
        guard received.count <= replyLimit + 14 else { throw .badReply }
        return true
    }
}
