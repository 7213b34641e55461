// The view's PipeWire stream (PipeWireCast, CPipeWire's shim over libpipewire) against a real PipeWire:
// a private daemon, WirePlumber linking the stream as in a desktop session, and a video source of one
// colour (pipewire_rig.py). The portal's own streams (Mutter's, KWin's) are read in the VM stage
// (make test-portal).
import Glibc
import Testing
import TouchCore
import TouchOutput
import TouchPortal

/// pipewire_rig.py as a child: its stdin to send lines to, its stdout to read them from.
final class PipeWireRig {
    let runtimeDirectory: String
    let node: UInt32
    private let pid: pid_t
    private let toRig: Int32
    private let fromRig: UnsafeMutablePointer<FILE>

    init(colour: String) throws {
        let script = String(#filePath.dropLast("PipeWireCastTests.swift".count)) + "pipewire_rig.py"
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        guard pipe(&input) == 0, pipe(&output) == 0 else { throw BusSetupError(description: "pipe") }
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ["python3", script, colour]
        var cArgs = argv.map { a -> UnsafeMutablePointer<CChar>? in a.withCString { strdup($0) } } + [nil]
        defer { for a in cArgs { free(a) } }
        var p: pid_t = 0
        guard posix_spawnp(&p, "python3", &actions, nil, &cArgs, environ) == 0 else { throw BusSetupError(description: "cannot start python3") }
        close(input[0])
        close(output[1])
        pid = p
        toRig = input[1]
        fromRig = fdopen(output[0], "r")
        let ready = Self.line(fromRig).split(separator: " ")
        guard ready.count == 3, ready[0] == "ready", let node = UInt32(ready[2]) else {
            close(toRig)
            fclose(fromRig)
            waitpid(pid, nil, 0)
            throw BusSetupError(description: "pipewire_rig.py did not start PipeWire: \(ready.joined(separator: " "))")
        }
        runtimeDirectory = String(ready[1])
        self.node = node
    }

    private static func line(_ file: UnsafeMutablePointer<FILE>) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "" }
        return String(cString: buffer).trimmingCharacters(in: "\n")
    }

    /// Ends the video source (its node goes) and waits until it has.
    func stopSource() -> String {
        _ = "stop-source\n".withCString { write(toRig, $0, strlen($0)) }
        return Self.line(fromRig)
    }

    /// A new connection to the daemon, as the portal's OpenPipeWireRemote gives one.
    func connect() throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = runtimeDirectory + "/pipewire-0"
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            path.utf8CString.withUnsafeBytes { raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(raw.count - 1))) }
        }
        let r = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard r == 0 else { close(fd); throw BusSetupError(description: "connect \(path): \(String(cString: strerror(errno)))") }
        return fd
    }

    func stop() {
        close(toRig)
        fclose(fromRig)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}

private extension String {
    func trimmingCharacters(in set: Character) -> String { String(self.reversed().drop { $0 == set }.reversed()) }
}

@Suite(.serialized) struct PipeWireCastTests {
    /// The colour at the middle of the viewed rectangle, as 0xRRGGBB.
    static func centre(_ p: ScreenPicture) -> UInt32 {
        let x = Int(p.region.x + p.region.width / 2), y = Int(p.region.y + p.region.height / 2)
        return p.pixels.load(fromByteOffset: y * Int(p.stride) + x * 4, as: UInt32.self) & 0xFF_FFFF
    }

    /// Dispatches the stream as its watcher does until `what` says it is done (at most 10 s).
    static func dispatch(_ cast: PipeWireCast, until done: ((newPicture: Bool, failure: String?)) -> Bool) -> Bool {
        var pfd = pollfd(fd: cast.descriptor, events: Int16(POLLIN), revents: 0)
        for _ in 0..<100 {
            _ = poll(&pfd, 1, 100)
            if done(cast.dispatch()) { return true }
        }
        return false
    }

    @Test func theFirstPictureIsKeptOverAPauseAndNewerOnesComeWhileWatched() throws {
        let rig = try PipeWireRig(colour: "0xff203040")
        defer { rig.stop() }
        let area = PixelRect(x: 100, y: 50, width: 320, height: 240)  // a monitor at +100+50, scaled 2x in the stream
        let cast = try PipeWireCast(remote: try rig.connect(), node: rig.node, area: area)
        defer { cast.close() }
        // The stream starts at once; its first frame is held and the stream paused, nobody viewing.
        #expect(cast.pixelsHolding.hasSuffix("no frame yet"), "\(cast.pixelsHolding)")
        #expect(Self.dispatch(cast) { $0.newPicture }, "no first frame within 10 s")
        #expect(cast.pixelsHolding.contains("(BGRx 640x480) [connecting paused (640x480) streaming; 1 frames], paused, a frame held"), "\(cast.pixelsHolding)")
        // Viewing starts: the kept picture at once, the viewed rectangle placed in it.
        try cast.watchPixels(true)
        #expect(cast.pixelsHolding.hasSuffix("frames], a frame held"), "\(cast.pixelsHolding)")
        var seen: (w: Int32, h: Int32, region: String, colour: UInt32)?
        try cast.withPicture(of: PixelRect(x: 180, y: 110, width: 160, height: 120)) { p throws(OutputError) in
            seen = (p.width, p.height, "\(p.region)", Self.centre(p))
        }
        let picture = try #require(seen)
        #expect(picture.w == 640 && picture.h == 480)
        #expect(picture.region == "(x: 160.0, y: 120.0, width: 320.0, height: 240.0)")
        #expect(picture.colour == 0x203040, "centre \(String(picture.colour, radix: 16))")
        // While watched, newer frames come on the descriptor (10 a second from this source).
        #expect(Self.dispatch(cast) { $0.newPicture }, "no newer frame within 10 s while watched")
        // A rectangle the shared monitor does not show is a clear error.
        let outside = try #require(throws: OutputError.self) {
            try cast.withPicture(of: PixelRect(x: 0, y: 0, width: 100, height: 100)) { _ throws(OutputError) in }
        }
        #expect(outside.message.contains("does not show"), "\(outside)")
        // Paused again: the picture stays; watched again, newer ones come again.
        try cast.watchPixels(false)
        #expect(cast.pixelsHolding.hasSuffix("paused, a frame held"), "\(cast.pixelsHolding)")
        var kept: UInt32?
        try cast.withPicture(of: area) { p throws(OutputError) in kept = Self.centre(p) }
        #expect(kept == 0x203040)
        try cast.watchPixels(true)
        #expect(Self.dispatch(cast) { $0.newPicture }, "no newer frame within 10 s once watched again")
        // Pausing keeps the stream's format: it is never connected again for that.
        #expect(!cast.pixelsHolding.contains("no format") && !cast.pixelsHolding.contains("reconnected"), "\(cast.pixelsHolding)")
        cast.close()
        #expect(cast.descriptor == -1 && cast.pixelsHolding == "nothing")
    }

    /// The shared monitor turns or changes mode: the cast takes its rectangle from the desktop's monitors
    /// (the one at the place Start gave); frames not yet of its new shape are not there yet, not squeezed.
    @Test func aMonitorThatTurnsOrChangesModeIsFollowed() throws {
        let rig = try PipeWireRig(colour: "0xff406080")
        defer { rig.stop() }
        let given = PixelRect(x: 100, y: 50, width: 320, height: 240)  // the stream's 640x480 at scale 2
        let cast = try PipeWireCast(remote: try rig.connect(), node: rig.node, area: given)
        defer { cast.close() }
        try cast.watchPixels(true)
        #expect(Self.dispatch(cast) { $0.newPicture }, "no first frame within 10 s")
        // Turned: the monitor at +100+50 is 240x320 now; the stream's frames are still 640x480.
        let turned = PixelRect(x: 100, y: 50, width: 240, height: 320)
        cast.follow(monitors: [PixelRect(x: 0, y: 0, width: 100, height: 50), turned])
        #expect(cast.area == turned)
        let waiting = try #require(throws: OutputError.self) {
            try cast.withPicture(of: turned) { _ throws(OutputError) in }
        }
        #expect(waiting.notYet && waiting.message.contains("have not turned"), "\(waiting)")
        // A new mode, 640x480 at scale 1: the whole frame is the monitor.
        let moded = PixelRect(x: 100, y: 50, width: 640, height: 480)
        cast.follow(monitors: [moded])
        var region: String?
        try cast.withPicture(of: moded) { p throws(OutputError) in region = "\(p.region)" }
        #expect(region == "(x: 0.0, y: 0.0, width: 640.0, height: 480.0)")
        // No monitor at that place any more (unplugged, or moved): the last rectangle is kept.
        cast.follow(monitors: [PixelRect(x: 0, y: 0, width: 1280, height: 800)])
        #expect(cast.area == moded)
        #expect(PipeWireCast.followed(nil, among: [moded]) == nil, "a stream with no place given follows nothing")
    }

    @Test func aSourceThatGoesFailsTheStreamOnceAndItsDescriptorGoesQuiet() throws {
        let rig = try PipeWireRig(colour: "0xff00ff00")
        defer { rig.stop() }
        let cast = try PipeWireCast(remote: try rig.connect(), node: rig.node, area: nil)
        defer { cast.close() }
        try cast.watchPixels(true)
        #expect(Self.dispatch(cast) { $0.newPicture }, "no first frame within 10 s")
        var colour: UInt32?
        try cast.withPicture(of: PixelRect(x: 0, y: 0, width: 640, height: 480)) { p throws(OutputError) in colour = Self.centre(p) }
        #expect(colour == 0x00FF00)
        #expect(rig.stopSource() == "stopped")
        var failure: String?
        _ = Self.dispatch(cast) { failure = $0.failure; return failure != nil }
        let why = try #require(failure, "no failure within 10 s of the source going")
        #expect(why.contains("screen cast"), "\(why)")
        // Then nothing wakes the watcher: the loop's descriptor is quiet.
        var pfd = pollfd(fd: cast.descriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pfd, 1, 0) == 0)
        let error = try #require(throws: OutputError.self) {
            try cast.withPicture(of: PixelRect(x: 0, y: 0, width: 640, height: 480)) { _ throws(OutputError) in }
        }
        #expect(error.message.contains(why), "\(error)")
    }
}
