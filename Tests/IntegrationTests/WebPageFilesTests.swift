// The page as files: web/'s index.html, stylesheet and JavaScript modules, embedded in the binary at build
// time (Plugins/PageEmbed) and type-checked by TypeScript's checker (`make test`).
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(5)))
struct WebPageFilesTests {
    /// The files of web/ the page is made of (the checker's tsconfig.json and .d.ts are not served), by the
    /// path each is served at.
    static func servedFiles() throws -> [(path: String, file: String)] {
        let web = Binaries.packageRoot + "/web"
        return try FileManager.default.contentsOfDirectory(atPath: web).sorted()
            .filter { !$0.hasSuffix(".d.ts") && ($0.hasSuffix(".html") || $0.hasSuffix(".css") || $0.hasSuffix(".js")) }
            .map { (path: $0 == "index.html" ? "/" : "/" + $0, file: web + "/" + $0) }
    }

    /// Copies the executable at `source` to `destination`, written through a close-on-exec descriptor:
    /// `FileManager.copyItem`'s is not, so a child another test spawns meanwhile inherited it open for
    /// writing, and running the copy failed with ETXTBSY ("Text file busy") for as long as that child lived.
    static func copyExecutable(_ source: String, to destination: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let fd = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw RigError("cannot create \(destination): errno \(errno)") }
        defer { close(fd) }
        var written = 0
        try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            while written < raw.count {
                let n = write(fd, raw.baseAddress! + written, raw.count - written)
                guard n > 0 else { throw RigError("cannot write \(destination): errno \(errno)") }
                written += n
            }
        }
    }

    /// A copy of the binary alone in an empty directory serves every file of the page, with its type: the
    /// page is in the binary, not looked up beside it. What a first load fetches weighs no more than the
    /// page did as one string (34,091 bytes; a feature that needs more raises this figure on purpose).
    @Test func theBinaryAloneServesEveryFileOfThePage() throws {
        let alone = NSTemporaryDirectory() + "touchbridge-alone-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: alone + "/bin", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: alone) }
        try Self.copyExecutable(try Binaries.touchbridge(), to: alone + "/bin/touchbridge")
        #expect(try FileManager.default.contentsOfDirectory(atPath: alone + "/bin") == ["touchbridge"])

        let xvfb = try XvfbServer.start(width: 640, height: 480)
        defer { xvfb.stop() }
        // --http-port 0 is no web server: a free port of its own.
        let port = try freeTCPPort()
        let daemon = try Daemon.start(
            display: xvfb.display, idleReleaseMs: 10_000, mode: "touchpad", extraArguments: ["--http-port", String(port)],
            environment: ["XDG_STATE_HOME": alone + "/state", "XDG_CONFIG_HOME": alone + "/config", "HOME": alone],
            binary: alone + "/bin/touchbridge")
        defer { _ = daemon.terminate() }
        #expect(try daemon.listeningPort("http") == port)

        var weight = 0
        for (path, file) in try Self.servedFiles() {
            let response = try Self.get(path, port: port)
            let type = path == "/" ? "text/html; charset=utf-8"
                : path.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"
            #expect(response.status == 200, "\(path)")
            #expect(response.headers["content-type"] == type, "\(path): \(response.headers)")
            #expect(response.headers["cache-control"] == "no-store", "\(path): \(response.headers)")
            let source = try String(contentsOfFile: file, encoding: .utf8)
            if path == "/" {
                #expect(response.body == source, "the page is web/index.html as it is")
            } else {
                // The served text is the file's, without its comments and indentation: each line served
                // is one of the file's lines.
                let lines = Set(source.split(separator: "\n").map { $0.drop { $0 == " " } })
                let foreign = response.body.split(separator: "\n").filter { !lines.contains($0[...]) }
                #expect(!response.body.isEmpty && foreign.isEmpty, "\(path) serves lines web/ does not have: \(foreign.prefix(3))")
            }
            weight += response.body.utf8.count
        }
        print("the page's first load: \(weight) bytes")
        // The one-string page weighed 34,091 bytes; the page's files with the live view (view.js, its CSS and
        // hooks) and the presenter's view (presenter.js, its markup and style) weighed 44,714; with the view in
        // Slides mode, its ResizeObserver and the landscape Slides layout, 44,880 (2026-12-05); with the
        // person's badge (its markup, style and `showPerson`), 45,629; with the page's tab (`t=`), 45,729.
        #expect(weight <= 45_800, "the page's files weigh \(weight) bytes, more than the 45,729 of the page with its tab")
        #expect(try Self.get("/nothing-here.js", port: port).status == 404)
    }

    /// `tsc --noEmit --checkJs --strict -p web` (make test's line) passes on web/, and fails on a copy of it
    /// with a type error added: the check is real.
    @Test func theCheckerPassesThePageAndCatchesATypeError() throws {
        guard let tsc = findInPath("tsc") else {
            Issue.record("no tsc: install Debian's node-typescript (scripts/deps.sh does)")
            return
        }
        let clean = try Self.run(tsc, ["--noEmit", "--checkJs", "--strict", "-p", Binaries.packageRoot + "/web"])
        #expect(clean.status == 0, "web/ does not type-check:\n\(clean.output)")

        let copy = NSTemporaryDirectory() + "touchbridge-web-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.copyItem(atPath: Binaries.packageRoot + "/web", toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        // A number where the connection takes a message: TS2345.
        let main = copy + "/main.js"
        try (try String(contentsOfFile: main, encoding: .utf8) + "connection.send(42);\n").write(toFile: main, atomically: true, encoding: .utf8)
        let broken = try Self.run(tsc, ["--noEmit", "--checkJs", "--strict", "-p", copy])
        #expect(broken.status != 0, "tsc passed a type error:\n\(broken.output)")
        #expect(broken.output.contains("main.js") && broken.output.contains("TS2345"), "\(broken.output)")
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// GET `path` from 127.0.0.1:`port`, read to the end (`Connection: close`): the status, the headers
    /// (names in lower case) and the body.
    static func get(_ path: String, port: UInt16) throws -> (status: Int, headers: [String: String], body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RigError("socket(): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RigError("connect: \(String(cString: strerror(errno)))") }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else {
                if n < 0 { throw RigError("recv \(path): \(String(cString: strerror(errno)))") }
                break
            }
            bytes += buffer[0..<n]
        }
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { throw RigError("no HTTP answer to GET \(path)") }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, String(decoding: bytes[end.upperBound...], as: UTF8.self))
    }
}
