// `touchbridge record` and `touchbridge replay`: a checked-in recording replayed against the real
// daemon on Xvfb, and a recording made by `record` replayed back into a second `record`.
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct RecordReplayTests {
    static let recordings = Binaries.packageRoot + "/Tests/IntegrationTests/Recordings"

    /// Runs `touchbridge <arguments>` to its end (at most `timeout` s) and returns it.
    static func runToEnd(_ arguments: [String], timeout: Double = 20) throws -> ChildProcess {
        let child = try ChildProcess(name: "touchbridge", executable: try Binaries.touchbridge(), arguments: arguments)
        if child.waitForExit(timeout: timeout) == nil {
            _ = child.stop(timeout: 2)
            throw RigError("touchbridge \(arguments.joined(separator: " ")) did not end within \(timeout) s\n" + child.outputTail())
        }
        _ = child.stdout.waitClosed(timeout: 2)
        return child
    }

    /// Starts `touchbridge record FILE --udp-port 0 --bind 127.0.0.1 --count N` and returns it with its port.
    static func startRecord(file: String, count: Int) throws -> (ChildProcess, UInt16) {
        let child = try ChildProcess(name: "touchbridge record", executable: try Binaries.touchbridge(), arguments: [
            "record", file, "--udp-port", "0", "--bind", "127.0.0.1", "--count", String(count),
        ])
        let pattern = #/^recording poseai-udp 127\.0\.0\.1:(\d+) to /#
        guard let line = child.stdout.waitFor(timeout: 20, { (try? pattern.prefixMatch(in: $0.text)) != nil }),
              let match = try? pattern.prefixMatch(in: line.text), let port = UInt16(match.1) else {
            _ = child.stop(timeout: 2)
            throw RigError("touchbridge record printed no `recording poseai-udp 127.0.0.1:<port>` line\n" + child.outputTail())
        }
        return (child, port)
    }

    /// The `packet` strings of a recording, parsed with Foundation (an independent JSON reader).
    static func packets(in file: String) throws -> [(t: Double, packet: String)] {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        return try text.split(separator: "\n").compactMap { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let packet = object?["packet"] as? String else { return nil }
            return ((object?["t"] as? NSNumber)?.doubleValue ?? -1, packet)
        }
    }

    @Test func checkedInDragRecordingReplayedDrivesTheXPointer() throws {
        let rig = try Rig.start()
        defer { rig.stop() }
        let observer = rig.observer
        try observer.warp(x: 1800, y: 100)
        let mark = observer.mark
        let replay = try Self.runToEnd([
            "replay", Self.recordings + "/drag.jsonl", "--to", "127.0.0.1:\(rig.daemon.port)",
        ])
        #expect(replay.status == .exited(0), "replay should exit 0\n\(replay.outputTail())")
        #expect(replay.stdout.snapshot().contains { $0.text.hasPrefix("replayed 23 of 23 datagrams") },
                "replay should report 23 datagrams\n\(replay.outputTail())")

        // The recording drags from (-0.5,-0.5) to (0.5,0.25), then lifts the finger.
        let first = rig.expectedPixel(x: -0.5, y: -0.5), last = rig.expectedPixel(x: 0.5, y: 0.25)
        let press = try rig.waitForButton("press", 1, since: mark, "replayed finger down")
        try rig.waitForMotion(to: first.x, first.y, since: mark, "replayed first position")
        try rig.waitForMotion(to: last.x, last.y, since: press.index, "replayed last position")
        try rig.waitForButton("release", 1, since: press.index, "replayed finger lifted")
        try observer.sync()
        let events = observer.events(from: mark)
        #expect(events.filter { $0.isButton("press", 1) }.count == 1, "one press\n\(rig.context(since: mark))")
        #expect(events.filter { $0.isButton("release", 1) }.count == 1, "one release\n\(rig.context(since: mark))")
        let motions = events.filter { $0.kind == "motion" }.count
        #expect(motions >= 21, "21 positions were replayed, X saw \(motions) motions\n\(rig.context(since: mark))")
        let pointer = try observer.query()
        #expect(abs(pointer.x - last.x) <= 1 && abs(pointer.y - last.y) <= 1 && pointer.buttons == 0,
                "pointer should rest at (\(last.x),\(last.y)) with no button: \(pointer)")
    }

    @Test func recordWritesWhatThePhoneSentAndReplaySendsTheSameBytes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("touchbridge-record-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = dir.appendingPathComponent("first.jsonl").path
        let second = dir.appendingPathComponent("second.jsonl").path

        // A phone: hello (answered with the handshake), then three packets, one with characters
        // that need escaping in JSON.
        let sent = [
            PoseAISender.hello(),
            PoseAIText.packet(touches: "0f/f/", touchState: "f/f/" + String(repeating: "====", count: 9)),
            #"{"Touches":"0AAAA","userName":"a \"quoted\" \\ name\tx","Orientation":1}"#,
            PoseAIText.packet(touches: "0====", touchState: String(repeating: "====", count: 10)),
        ]
        let (recorder, port) = try Self.startRecord(file: first, count: sent.count)
        defer { _ = recorder.stop(timeout: 2) }
        let phone = try PoseAISender(port: port)
        try phone.send(sent[0])
        let answer = phone.receive(timeout: 5).map { String(decoding: $0, as: UTF8.self) }
        #expect(answer?.hasPrefix(#"{"HANDSHAKE":"#) == true, "record should answer the hello: \(answer ?? "nothing")")
        for packet in sent.dropFirst() {
            usleep(30_000)  // pacing: the recording must keep these 30 ms gaps
            try phone.send(packet)
        }
        #expect(recorder.waitForExit(timeout: 5) == .exited(0), "record --count 4 should exit 0\n\(recorder.outputTail())")
        let recorded = try Self.packets(in: first)
        #expect(recorded.map(\.packet) == sent, "record should keep each datagram as sent")
        #expect(recorded.first?.t == 0 && recorded.last.map { $0.t >= 0.08 && $0.t < 2 } == true,
                "timestamps should start at 0 and keep the 30 ms gaps: \(recorded.map(\.t))")
        let header = try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n").first
        #expect(header == #"{"recording":"touchbridge","format":1}"#)

        // Replay it into a second recorder: the same bytes again, at about the same times.
        let (again, port2) = try Self.startRecord(file: second, count: sent.count)
        defer { _ = again.stop(timeout: 2) }
        // Its timing is read from its own send log (CLOCK_MONOTONIC just before each send), not from the
        // second recorder's receive times, which a loaded machine delays by hundreds of milliseconds: each
        // datagram goes no earlier than its recorded offset (replay sleeps until then), and not much later.
        let sendLog = second + ".sends"
        defer { try? FileManager.default.removeItem(atPath: sendLog) }
        let replay = try Self.runToEnd(["replay", first, "--to", "127.0.0.1:\(port2)", "--send-log", sendLog])
        #expect(replay.status == .exited(0), "replay should exit 0\n\(replay.outputTail())")
        #expect(again.waitForExit(timeout: 5) == .exited(0), "second record should exit 0\n\(again.outputTail())")
        let replayed = try Self.packets(in: second)
        #expect(replayed.map(\.packet) == sent, "replay should send the recorded bytes")
        let stamps = try String(contentsOfFile: sendLog, encoding: .utf8).split(separator: "\n")
            .compactMap { $0.split(separator: " ").last.flatMap { UInt64($0) } }
        #expect(stamps.count == recorded.count, "the send log should have a line per datagram: \(stamps)")
        if stamps.count == recorded.count, let t0 = recorded.first?.t, let s0 = stamps.first {
            for (entry, stamp) in zip(recorded, stamps) {
                let offset = entry.t - t0, sentAt = Double(stamp - s0) / 1e9
                #expect(sentAt >= offset - 0.001 && sentAt < offset + 1,
                        "replay should keep the recorded timing: recorded at \(offset) s, sent at \(sentAt) s")
            }
        }

        // --rate: fixed spacing, whatever the recording says.
        let (fixed, port3) = try Self.startRecord(file: second, count: sent.count)
        defer { _ = fixed.stop(timeout: 2) }
        let fast = try Self.runToEnd(["replay", first, "--to", "127.0.0.1:\(port3)", "--rate", "1000"])
        #expect(fast.status == .exited(0), "replay --rate should exit 0\n\(fast.outputTail())")
        #expect(fixed.waitForExit(timeout: 5) == .exited(0))
        let spaced = try Self.packets(in: second)
        #expect(spaced.map(\.packet) == sent)
        #expect((spaced.last?.t ?? 1) < 0.03, "at 1000 Hz four datagrams take about 3 ms: \(spaced.map(\.t))")
    }

    @Test func replayRefusesABrokenRecording() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(getpid()).jsonl").path
        try (Self.header + #"{"t":0,"packet":"{}"}\#n{"t":0.1,"packet":"unterminated}\#n"#).write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let replay = try Self.runToEnd(["replay", file, "--to", "127.0.0.1:9"])
        #expect(replay.status == .exited(65), "a broken recording is a data error (65)\n\(replay.outputTail())")
        #expect(replay.stderr.snapshot().contains { $0.text.contains("line 3") }, "the error should name line 3\n\(replay.outputTail())")
    }

    /// Hostile recordings. Each second line here crashed replay (a lone high surrogate:
    /// arithmetic overflow; a huge `t`: Double to UInt64) or was taken wrongly; now each is a 65 that
    /// names its line (3, after the header) and what is wrong, before anything is sent.
    @Test(arguments: [
        (#"{"t":0,"packet":"a\ud800\u0041"}"#, "a high surrogate without a low one"),
        (#"{"t":0,"packet":"\ud800\ud800"}"#, "a high surrogate without a low one"),
        (#"{"t":0,"packet":"\ud800x"}"#, "a high surrogate without a low one"),
        (#"{"t":0,"packet":"\udc00"}"#, "a low surrogate without a high one"),
        (#"{"t":0,"packet":"\u+abc"}"#, #"bad \u escape"#),
        (#"{"t":2e10,"packet":"{}"}"#, "seconds from 0 to 10000000"),
        (#"{"t":1e300,"packet":"{}"}"#, "seconds from 0 to 10000000"),
        (#"{"t":1e999,"packet":"{}"}"#, "seconds from 0 to 10000000"),
        (#"{"t":-1,"packet":"{}"}"#, "seconds from 0 to 10000000"),
        (#"{"t":"1","packet":"{}"}"#, "seconds from 0 to 10000000"),
        (#"{"t":0,"bytes":[1,1e999]}"#, "integers 0...255"),
        (#"{"t":0,"bytes":[-0.5]}"#, "integers 0...255"),
        ("{\"t\":0,\"bytes\":[" + Array(repeating: "0", count: 70_000).joined(separator: ",") + "]}", "larger than UDP carries"),
    ])
    func replayRefusesAHostileLine(line: String, problem: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jsonl").path
        try (Self.header + #"{"t":0,"packet":"{}"}"# + "\n" + line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let replay = try Self.runToEnd(["replay", file, "--to", "127.0.0.1:9"])
        #expect(replay.status == .exited(65), "a hostile line is a data error (65)\n\(replay.outputTail())")
        #expect(replay.stderr.snapshot().contains { $0.text.contains("line 3:") && $0.text.contains(problem) },
                "the error should name line 3 and say \"\(problem)\"\n\(replay.outputTail())")
    }

    /// A --rate so low that the second datagram's time is past any clock: refused as a usage error
    /// (it crashed converting infinity to UInt64 after the first datagram).
    @Test func replayRefusesARateTooLow() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("slow-\(getpid()).jsonl").path
        try (Self.header + #"{"t":0,"packet":"{}"}\#n{"t":0,"packet":"{}"}\#n"#).write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let replay = try Self.runToEnd(["replay", file, "--to", "127.0.0.1:9", "--rate", "1e-300"])
        #expect(replay.status == .exited(64), "\(replay.outputTail())")
        #expect(replay.stderr.snapshot().contains { $0.text.contains("--rate must be from 0.001 to 100000") }, "\(replay.outputTail())")
    }

    /// The header line `record` writes first, which replay requires.
    static let header = #"{"recording":"touchbridge","format":1}"# + "\n"

    /// An endless recording (/dev/zero) is refused by what it is, before a byte is read: under a 128 MiB
    /// limit on its data (`prlimit --data`) it exits 66 at once, where reading to the old 512 MiB bound
    /// took 566 MB.
    @Test func replayRefusesAnEndlessFile() throws {
        guard let prlimit = findInPath("prlimit") else { throw RigError("prlimit is not installed (Debian: util-linux)") }
        let child = try ChildProcess(name: "touchbridge", executable: prlimit, arguments: [
            "--data=134217728", try Binaries.touchbridge(), "replay", "/dev/zero", "--to", "127.0.0.1:9",
        ])
        let status = child.waitForExit(timeout: 30) ?? child.stop(timeout: 2)
        _ = child.stderr.waitClosed(timeout: 2)
        #expect(status == .exited(66), "\(child.outputTail())")
        #expect(child.stderr.snapshot().contains { $0.text.contains("/dev/zero is a character device, not a recording") }, "\(child.outputTail())")
    }

    /// An endless stream on standard input (`-`) is read no further than a line can be long: 65.
    @Test func replayRefusesAnEndlessLineOnStandardInput() throws {
        let child = try ChildProcess(name: "touchbridge", executable: "/bin/sh", arguments: [
            "-c", "exec \"$0\" replay - --to 127.0.0.1:9 < /dev/zero", try Binaries.touchbridge(),
        ])
        let status = child.waitForExit(timeout: 60) ?? child.stop(timeout: 2)
        _ = child.stderr.waitClosed(timeout: 2)
        #expect(status == .exited(65), "\(child.outputTail())")
        #expect(child.stderr.snapshot().contains { $0.text.contains("line 1: longer than 512 KiB") || $0.text.contains("larger than 512 MiB") },
                "\(child.outputTail())")
    }

    /// A FIFO is not waited on: it is no regular file, refused at once (66).
    @Test func replayOfAFIFOWithNoWriterEnds() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        guard mkfifo(fifo, 0o600) == 0 else { throw RigError("mkfifo: \(String(cString: strerror(errno)))") }
        defer { unlink(fifo) }
        let replay = try Self.runToEnd(["replay", fifo, "--to", "127.0.0.1:9"], timeout: 10)
        #expect(replay.status == .exited(66), "\(replay.outputTail())")
        #expect(replay.stderr.snapshot().contains { $0.text.contains("\(fifo) is a FIFO, not a recording") }, "\(replay.outputTail())")
    }

    /// Not a recording of this format: no header, another format, a `packet` that is no string, a line
    /// that is no datagram. Each is a 65 naming its line, before anything is sent.
    static let notRecordings: [(text: String, problem: String)] = {
        let h: String = header
        let datagram: String = #"{"t":0,"packet":"{}"}"# + "\n"
        var cases: [(text: String, problem: String)] = []
        cases.append((datagram, "line 1: not a touchbridge recording"))
        cases.append((#"{"recording":"touchbridge","format":2}"# + "\n" + datagram, "line 1: a recording of format 1"))
        cases.append((#"{"recording":"touchbridge"}"# + "\n", "line 1: a recording of format 1"))
        cases.append(("# a comment\n\n" + #"{"recording":"other","format":1}"# + "\n", "line 3: not a touchbridge recording"))
        cases.append((h + #"{"t":0,"packet":5}"# + "\n", #"line 2: "packet" must be a string"#))
        cases.append((h + #"{"t":0,"bytes":"AQI="}"# + "\n", #"line 2: "bytes" must be an array"#))
        cases.append((h + #"{"t":0,"packet":"{}","bytes":[1]}"# + "\n", "line 2: a datagram has"))
        cases.append((h + #"{"t":0}"# + "\n", "line 2: a datagram needs"))
        cases.append(("", "line 1: empty"))
        return cases
    }()

    @Test(arguments: notRecordings)
    func replayRefusesWhatIsNoRecording(text: String, problem: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("norec-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jsonl").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let replay = try Self.runToEnd(["replay", file, "--to", "127.0.0.1:9"])
        #expect(replay.status == .exited(65), "\(replay.outputTail())")
        #expect(replay.stderr.snapshot().contains { $0.text.contains(problem) }, "should say \"\(problem)\"\n\(replay.outputTail())")
    }

    /// Times out of order are not an error: the lines go in file order, a time earlier than the line
    /// before it at once.
    @Test func replaySendsLinesInFileOrderWhateverTheirTimes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("touchbridge-order-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("order.jsonl").path, out = dir.appendingPathComponent("out.jsonl").path
        try [#"{"recording":"touchbridge","format":1}"#, #"{"t":0.2,"packet":"A"}"#, #"{"t":0,"packet":"B"}"#, #"{"t":0.3,"packet":"C"}"#, #"{"t":0.1,"packet":"D"}"#]
            .joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let (recorder, port) = try Self.startRecord(file: out, count: 4)
        defer { _ = recorder.stop(timeout: 2) }
        let replay = try Self.runToEnd(["replay", file, "--to", "127.0.0.1:\(port)"])
        #expect(replay.status == .exited(0), "\(replay.outputTail())")
        #expect(recorder.waitForExit(timeout: 5) == .exited(0), "\(recorder.outputTail())")
        let recorded = try Self.packets(in: out)
        #expect(recorded.map(\.packet) == ["A", "B", "C", "D"])
        // A at 0, B at once, C 0.1 s after A, D at once.
        let times = recorded.map(\.t)
        #expect(times.count == 4 && times[1] < 0.05 && abs(times[2] - 0.1) < 0.05 && times[3] - times[2] < 0.05, "\(times)")
    }
}
