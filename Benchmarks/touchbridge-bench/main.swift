// touchbridge-bench: the in-process benchmarks of `make bench` (decode, core, X11 output).
// Prints one JSON object per measurement on stdout; Benchmarks/run.py runs it and the rest.
//
//   touchbridge-bench decode                       decoder vs JSONSerialization vs JSONDecoder
//   touchbridge-bench core                         TouchPipeline, 1, 2 and 10 fingers; People.packet
//   touchbridge-bench inject --display :N          XTestOutput: one move + XFlush per event
//
// Harness: each case is warmed up, then timed in `repetitions` runs of `iterations` operations;
// a run's figure is ns per operation; we report the median, min and max of the runs. Allocations
// are counted on this thread (AllocationCounter interposes malloc in this binary) over the
// measured runs, per operation.
import AllocationCounter
import Foundation
import TouchCore
import TouchTestSupport
import TouchWire
import TouchOutput
import TouchX11

// MARK: harness

/// The clock of the timed repetitions: the wall's (monotonic), or with `BENCH_CLOCK=thread` the calling
/// thread's CPU time, which leaves out the time other processes had the core (to compare two builds on a
/// loaded machine; the in-process rows run on one thread).
let benchClock = ProcessInfo.processInfo.environment["BENCH_CLOCK"] == "thread" ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC

func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(benchClock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

struct Result {
    var group: String
    var name: String
    var unit = "ns/op"
    var runs: [Double]
    var allocationsPerOp: Double?
    var iterations: Int

    var sorted: [Double] { runs.sorted() }
    var median: Double { let s = sorted; return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2 }

    func json() -> String {
        var fields: [String: Any] = [
            "group": group, "name": name, "unit": unit, "median": median, "min": sorted.first!, "max": sorted.last!,
            "repetitions": runs.count, "iterations": iterations,
        ]
        if let allocationsPerOp { fields["allocations_per_op"] = allocationsPerOp }
        let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Times `body(iterations)` (which must do `iterations` operations) `repetitions` times after
/// `warmup` untimed calls.
func measure(_ group: String, _ name: String, iterations: Int, repetitions: Int = 15, warmup: Int = 2,
             _ body: (Int) -> Void) -> Result {
    for _ in 0..<warmup { body(iterations) }
    var runs: [Double] = []
    runs.reserveCapacity(repetitions)
    let a0 = allocation_counter_thread_count()
    for _ in 0..<repetitions {
        let t0 = nowNs()
        body(iterations)
        let t1 = nowNs()
        runs.append(Double(t1 - t0) / Double(iterations))
    }
    let allocations = allocation_counter_thread_count() - a0
    // The runs array's own growth is reserved above; what is left is the body's.
    let result = Result(group: group, name: name, runs: runs,
                        allocationsPerOp: Double(allocations) / Double(iterations * repetitions), iterations: iterations)
    FileHandle.standardOutput.write(Data((result.json() + "\n").utf8))
    return result
}

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

// MARK: packets

/// What the Foundation decoders must produce to match ours: the events of `Touches`, the ten slots of
/// `TouchState`, the orientation. The strings are parsed by the same small function for both.
struct Codable_Packet: Decodable {
    var Touches: String?
    var TouchState: String?
    var Orientation: Int?
}

@inline(__always) func digit(_ c: UInt8) -> Int {
    switch c {
    case 65...90: return Int(c) - 65
    case 97...122: return Int(c) - 71
    case 48...57: return Int(c) + 4
    case 43, 45, 46: return 62
    default: return 63
    }
}

/// Parses the touch strings into `events` and `slots` (reused storage), as our decoder's packet holds them.
func parseTouchStrings(touches: String?, state: String?, events: inout [TouchEvent], slots: inout TouchCore.TouchState) {
    events.removeAll(keepingCapacity: true)
    if var touches {
        touches.withUTF8 { b in
            var i = 0
            while i + 5 <= b.count {
                let slot = UInt8(b[i] &- 48)
                if b[i + 1] == 61 {
                    events.append(TouchEvent(slot: slot, update: b[i + 2] == 48 ? .cancelled : .ended))
                } else {
                    let x = UInt16(digit(b[i + 1]) * 64 + digit(b[i + 2])), y = UInt16(digit(b[i + 3]) * 64 + digit(b[i + 4]))
                    events.append(TouchEvent(slot: slot, update: .position(DevicePoint(rawX: x, rawY: y))))
                }
                i += 5
            }
        }
    }
    if var state {
        state.withUTF8 { b in
            var s = 0
            while s < 10 && s * 4 + 4 <= b.count {
                let i = s * 4
                if b[i] == 61 {
                    slots[s] = b[i + 1] == 48 ? .cancelled : .free
                } else {
                    slots[s] = .down(DevicePoint(rawX: UInt16(digit(b[i]) * 64 + digit(b[i + 1])),
                                                 rawY: UInt16(digit(b[i + 2]) * 64 + digit(b[i + 3]))))
                }
                s += 1
            }
        }
    }
}

func benchDecode() {
    for (label, text) in [("typical", typicalPacket), ("50 events", worstPacket)] {
        let bytes = Array(text.utf8)
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        raw.copyBytes(from: bytes)
        let buffer = UnsafeRawBufferPointer(raw)
        let data = Data(bytes)
        let n = label == "typical" ? 20_000 : 5_000

        var decoder = PoseAIDecoder()
        // Check that all three read the same packet.
        try! decoder.decode(buffer)
        var events: [TouchEvent] = []
        events.reserveCapacity(64)
        var slots = TouchCore.TouchState()
        let c = try! JSONDecoder().decode(Codable_Packet.self, from: data)
        parseTouchStrings(touches: c.Touches, state: c.TouchState, events: &events, slots: &slots)
        precondition(events == decoder.packet.events && slots == decoder.packet.state!, "decoders disagree on \(label)")

        _ = measure("decode", "\(label): touchbridge PoseAIDecoder", iterations: n) { n in
            for _ in 0..<n {
                do { try decoder.decode(buffer) } catch { fatalError("\(error)") }
                blackHole(decoder.packet.events.count)
            }
        }
        _ = measure("decode", "\(label): JSONSerialization", iterations: n / 10, repetitions: 9) { n in
            for _ in 0..<n {
                let object = try! JSONSerialization.jsonObject(with: data) as! [String: Any]
                parseTouchStrings(touches: object["Touches"] as? String, state: object["TouchState"] as? String,
                                  events: &events, slots: &slots)
                blackHole((object["Orientation"] as? Int, events.count))
            }
        }
        let jsonDecoder = JSONDecoder()
        _ = measure("decode", "\(label): JSONDecoder", iterations: n / 10, repetitions: 9) { n in
            for _ in 0..<n {
                let p = try! jsonDecoder.decode(Codable_Packet.self, from: data)
                parseTouchStrings(touches: p.Touches, state: p.TouchState, events: &events, slots: &slots)
                blackHole((p.Orientation, events.count))
            }
        }
        raw.deallocate()
    }
}

// MARK: core

/// A cycle of 256 packets for `fingers` fingers: all down, 254 moves of every finger, all up.
func coreCycle(fingers: Int) -> [TouchPacket] {
    (0..<256).map { i in
        var packet = TouchPacket(eventCapacity: 16)
        var state = TouchCore.TouchState()
        for f in 0..<fingers {
            let x = UInt16(200 + (i * 13 + f * 300) % 3600), y = UInt16(300 + (i * 7 + f * 250) % 3400)
            if i == 255 {
                packet.events.append(TouchEvent(slot: UInt8(f), update: .ended))
            } else {
                packet.events.append(TouchEvent(slot: UInt8(f), update: .position(DevicePoint(rawX: x, rawY: y))))
                state[f] = .down(DevicePoint(rawX: x, rawY: y))
            }
        }
        packet.hasTouches = true
        packet.state = state
        packet.orientation = .portrait
        return packet
    }
}

func benchCore() {
    for mode in [TouchMode.touchscreen, .touchpad] {
    for fingers in [1, 2, 10] {
        let cycle = coreCycle(fingers: fingers)
        var core = TouchPipeline(configuration: .init(screen: ScreenMapping(width: 1920, height: 1080), mode: mode))
        var actions: [OutputAction] = []
        actions.reserveCapacity(64)
        var t = UInt64(1_000_000_000)
        _ = measure("core", "\(mode), \(fingers) finger\(fingers == 1 ? "" : "s"): TouchPipeline.handle", iterations: 25_600) { n in
            for i in 0..<n {
                actions.removeAll(keepingCapacity: true)
                t &+= 8_333_333
                core.handle(cycle[i & 255], at: Instant(nanoseconds: t), into: &actions)
                blackHole(actions.count)
            }
        }
    }
    }
}

/// The daemon's step for a packet, as `BridgeHost.packet` takes it: `People` with the default `--people 4`
/// (every packet goes through the places), person 1 streaming one finger. A copy of the whole `People` on
/// every packet (11.5 kB, a non-mutating method called from the mutating step, until 2026-12-07) shows here.
func benchPeople() {
    let configuration = TouchPipeline.Configuration(screen: ScreenMapping(width: 1920, height: 1080), mode: .touchscreen)
    var people = People(configuration: configuration, capabilities: OutputCapabilities(personPointers: true),
                        monitor: .all, people: 4)
    var effects = BridgeEffects()
    let screen = PixelRect(x: 0, y: 0, width: 1920, height: 1080)
    people.start(screen: screen, monitors: [], at: Instant(nanoseconds: 1_000_000_000), into: &effects)
    let phone = SourceAddress(ipv4: 0x7f00_0001, port: 40_000)
    let cycle = coreCycle(fingers: 1)
    var t = UInt64(1_000_000_000)
    var moved = 0
    _ = measure("core", "touchscreen, 1 finger, 4 places: People.packet (the daemon's step)", iterations: 25_600) { n in
        for i in 0..<n {
            effects.clear()
            t &+= 8_333_333
            people.packet(cycle[i & 255], from: phone, via: .poseAI, at: Instant(nanoseconds: t), into: &effects)
            moved &+= effects.actions.count
        }
    }
    precondition(moved > 0, "core: People.packet gave no action")
}

// MARK: X11 output

/// The bench moves the pointer only: nothing is typed, so a typist is never asked.
final class NoTypist: CharacterTypist {
    func typeLacking(_ keysym: KeySym) throws(OutputError) { throw OutputError(origin: "bench", message: "the bench types nothing", kind: 7) }
    func restoreKeymap() throws(OutputError) {}
}

func benchInject(display name: String) {
    let display: XDisplay
    do { display = try XDisplay(name: name) } catch { fatalError("cannot open \(name): \(error)") }
    let output = XTestOutput(display: display)
    var actions: [OutputAction] = [.moveTo(PixelPoint(x: 0, y: 0))]
    actions.reserveCapacity(4)
    var k: Int32 = 0
    _ = measure("inject", "touchbridge XTestOutput (move + XFlush), then XSync", iterations: 2_000, repetitions: 11) { n in
        for _ in 0..<n {
            k &+= 1
            actions[0] = .moveTo(PixelPoint(x: 100 + (k % 1000), y: 100 + (k % 700)))
            let errors = output.perform(actions, typist: NoTypist())
            precondition(errors.isEmpty, "inject: \(errors)")
        }
        try! display.sync()
    }
    display.close()
}

let arguments = CommandLine.arguments
switch arguments.count > 1 ? arguments[1] : "" {
case "decode": benchDecode()
case "core":
    benchCore()
    benchPeople()
case "inject":
    guard arguments.count > 3, arguments[2] == "--display" else { fatalError("usage: touchbridge-bench inject --display :N") }
    benchInject(display: arguments[3])
default:
    FileHandle.standardError.write(Data("usage: touchbridge-bench decode | core | inject --display :N\n".utf8))
    exit(64)
}
