import ArgumentParser
import TouchCore
import TouchDaemon
import TouchFiles
import TouchNet
import TouchWire

#if canImport(Glibc)
import Glibc
#endif

/// `touchbridge record FILE`: listens like `serve`, answers the phone's hello so that it streams, and
/// writes every datagram with its arrival time to FILE (see RecordingFormat). Drives no display.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write what a phone sends, with timestamps, to a file of JSON lines (for bug reports and tests)."
    )

    @Argument(help: ArgumentHelp("File to write; - is standard output.", valueName: "file"))
    var file: String

    @Option(name: .customLong("udp-port"), help: ArgumentHelp("UDP port for the PoseAI touch stream; 0 picks a free port and prints it.", valueName: "port"))
    var udpPort: Int = 8080

    @Option(help: ArgumentHelp("Local address to listen on: 0.0.0.0 is every IPv4 interface, :: every IPv6 one.", valueName: "address"))
    var bind: String = "0.0.0.0"

    @Option(help: ArgumentHelp("Stop after this many datagrams (default: until SIGINT or SIGTERM).", valueName: "n"))
    var count: Int?

    func validate() throws {
        guard (0...65535).contains(udpPort) else { throw ValidationError("--udp-port must be 0...65535, not \(udpPort)") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() throws {
        // Writing to a pipe whose reader went, or past a file size limit (ulimit -f), is an error the
        // writes report, not a signal that ends the process before it can say so.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
        guard let signals = ShutdownSignals.install([SIGINT, SIGTERM]) else { throw ExitCode(ExitStatus.software) }
        let socket: UDPSocket
        do {
            socket = try UDPSocket(bindingTo: bind, port: UInt16(udpPort))
        } catch {
            writeError("touchbridge record: cannot listen for UDP on \(bind):\(udpPort): \(error)")
            throw ExitCode(ExitStatus.listener)
        }
        // Opened without waiting (a FIFO nobody reads is refused), every write checked (TouchFiles).
        let out: WritableFile
        if file == "-" {
            out = WritableFile(standardOutput: "standard output")
        } else {
            do throws(FileProblem) {
                out = try WritableFile(creating: file)
            } catch {
                writeError("touchbridge record: \(error)")
                throw ExitCode(error.exitStatus)
            }
        }
        var written = 0
        /// Writes `text`; false when a signal came while the output had no room. A failed write ends the
        /// command with the reason (74).
        func put(_ text: String) throws -> Bool {
            do throws(FileProblem) {
                return try out.write(Array(text.utf8), stop: signals) == .done
            } catch {
                writeError("touchbridge record: \(error); \(written) datagrams were recorded before")
                try? out.finish()
                throw ExitCode(error.exitStatus)
            }
        }
        var stoppedWhileFull: Int32?
        if try put(RecordingFormat.header + "\n") {
            let message = "recording poseai-udp \(socket.localDescription) to \(file)"
            if file == "-" { writeError(message) } else { writeLine(message) }
        } else {
            stoppedWhileFull = ShutdownSignals.take(from: signals) ?? SIGTERM
        }

        let handshake = PoseAIHandshake.reply(version: Touchbridge.version)
        var decoder = PoseAIDecoder()
        var buffer = [UInt8](repeating: 0, count: PoseAIDecoder.maxPacketBytes + 1)
        var first: UInt64?
        while stoppedWhileFull == nil, count.map({ written < $0 }) ?? true {
            var fds = [pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw ExitCode.failure
            }
            if fds[1].revents != 0, ShutdownSignals.take(from: signals) != nil { break }
            guard fds[0].revents != 0 else { continue }
            guard let received = socket.receive(into: &buffer) else { continue }
            let now = monotonicNanoseconds()
            let start = first ?? now
            first = start
            let line = buffer.withUnsafeBytes { all in
                RecordingFormat.line(
                    seconds: Double(now - start) / 1e9, from: received.source,
                    datagram: UnsafeRawBufferPointer(rebasing: all[0..<received.count]))
            }
            guard try put(line + "\n") else {
                stoppedWhileFull = ShutdownSignals.take(from: signals) ?? SIGTERM
                break
            }
            written += 1
            // Answer a hello, as serve does, so that a phone goes on to stream its touches.
            let isHello = buffer.withUnsafeBytes { all -> Bool in
                do throws(PoseAIDecodeError) {
                    try decoder.decode(UnsafeRawBufferPointer(rebasing: all[0..<received.count]))
                    return decoder.packet.isHello
                } catch {
                    return false
                }
            }
            if isHello { socket.reply(handshake) }
        }
        // Everything on the disk, or the reason it is not (a full disk may say so only at fsync or close).
        do throws(FileProblem) {
            try out.finish()
        } catch {
            writeError("touchbridge record: \(error); the \(written) datagrams recorded may not all be in it")
            throw ExitCode(error.exitStatus)
        }
        if let signal = stoppedWhileFull {
            writeError("touchbridge record: stopped by \(ShutdownSignals.name(signal)) while \(file) took no more (its reader does not read): "
                + "\(written) datagrams recorded, the last line may be cut short")
        }
        if file != "-" { writeLine("recorded \(written) datagrams to \(file)") }
    }
}

func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A plain blocking UDP socket for record and replay (no event loop: neither is on a hot path
/// shared with X).
final class UDPSocket {
    struct Failure: Error, CustomStringConvertible { var description: String }

    let fd: Int32
    private var lastSource = sockaddr_storage()
    private var lastSourceLength = socklen_t(0)

    /// Binds to `host:port` (an IPv4 or IPv6 literal or a name).
    init(bindingTo host: String, port: UInt16) throws(Failure) {
        let address = try Self.resolve(host: host, port: port, passive: true)
        fd = socket(Int32(address.ss_family), Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        var storage = address
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, Self.length(of: address)) }
        }
        guard bound == 0 else {
            let text = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: text)
        }
    }

    /// An unbound socket of the family of `target` (the system picks the source port on first send).
    init(for target: sockaddr_storage) throws(Failure) {
        fd = socket(Int32(target.ss_family), Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        var size: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    static func length(of address: sockaddr_storage) -> socklen_t {
        socklen_t(address.ss_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    static func resolve(host: String, port: UInt16, passive: Bool) throws(Failure) -> sockaddr_storage {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { dst in
            dst.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return storage
    }

    /// "address:port" (IPv6 in brackets).
    static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        let length = length(of: storage)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                            NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard status == 0 else { return "?" }
        func text(_ chars: [CChar]) -> String {
            String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let h = text(host), s = text(service)
        return storage.ss_family == sa_family_t(AF_INET6) ? "[\(h)]:\(s)" : "\(h):\(s)"
    }

    var localDescription: String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Self.describe(storage)
    }

    /// Reads one datagram; nil on an error worth ignoring (EINTR, ICMP errors).
    func receive(into buffer: inout [UInt8]) -> (count: Int, source: String)? {
        lastSourceLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &lastSource) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, bytes.baseAddress, bytes.count, 0, $0, &lastSourceLength)
                }
            }
        }
        guard n >= 0 else { return nil }
        return (n, Self.describe(lastSource))
    }

    /// Sends `bytes` to the source of the last datagram received.
    func reply(_ bytes: [UInt8]) {
        var target = lastSource
        send(bytes, to: &target)
    }

    /// Sends one datagram; returns whether all of it went.
    @discardableResult
    func send(_ bytes: [UInt8], to target: inout sockaddr_storage) -> Bool {
        let length = Self.length(of: target)
        let sent = bytes.withUnsafeBytes { buf in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, buf.baseAddress, buf.count, 0, $0, length) }
            }
        }
        return sent == bytes.count
    }
}
