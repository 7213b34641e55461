// The checked-in hostile corpus (Tests/Corpus/poseai-hostile), replayed through a decoder and a core
// as the daemon does: every datagram is rejected for the reason its MANIFEST gives, or applied with
// the number of events it gives; nothing traps, and nothing is held at the end.

import Testing
import TouchCore
import TouchWire

#if canImport(Glibc)
import Glibc
#endif

/// One line of a corpus MANIFEST.
struct CorpusEntry: Sendable, CustomStringConvertible {
    enum Outcome: Sendable, Equatable {
        case reject(String)
        case apply(events: Int)
        /// TUIO only: the datagram decodes and this many frames are dropped as late.
        case late(frames: Int)
    }
    var file: String
    var bytes: [UInt8]
    var outcome: Outcome
    var description: String { file }
}

enum HostileCorpus {
    /// Tests/Corpus/<name>, found from this source file.
    static func directory(_ name: String) -> String {
        var path = #filePath
        for _ in 0..<2 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/Corpus/" + name
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }

    static func load(_ name: String) throws -> [CorpusEntry] {
        let dir = directory(name)
        guard let manifest = readFile(dir + "/MANIFEST") else { throw CorpusError("no \(dir)/MANIFEST") }
        var entries: [CorpusEntry] = []
        for line in String(decoding: manifest, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count == 3, let bytes = readFile(dir + "/" + parts[0]) else {
                throw CorpusError("bad MANIFEST line or missing file: \(line)")
            }
            let outcome: CorpusEntry.Outcome
            switch parts[1] {
            case "reject": outcome = .reject(parts[2])
            case "apply":
                guard let n = Int(parts[2]) else { throw CorpusError("bad event count: \(line)") }
                outcome = .apply(events: n)
            case "late":
                guard let n = Int(parts[2]) else { throw CorpusError("bad frame count: \(line)") }
                outcome = .late(frames: n)
            default: throw CorpusError("bad outcome: \(line)")
            }
            entries.append(CorpusEntry(file: parts[0], bytes: bytes, outcome: outcome))
        }
        return entries
    }
}

struct CorpusError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

@Suite struct HostileCorpusTests {
    @Test func corpusCoversEveryKindOfHostilePacket() throws {
        let entries = try HostileCorpus.load("poseai-hostile")
        #expect(entries.count >= 60, "the corpus shrank to \(entries.count) datagrams")
        let kinds = ["truncated", "huge", "nested", "dup", "nul", "utf8", "number", "slot", "coordinate", "events-10000"]
        for kind in kinds {
            #expect(entries.contains { $0.file.contains(kind) }, "no \(kind) datagram in the corpus")
        }
        let reasons = Set(entries.compactMap { entry -> String? in
            if case .reject(let r) = entry.outcome { return r } else { return nil }
        })
        for reason in PoseAIDecodeError.Reason.allCases {
            #expect(reasons.contains(reason.caseName),
                    "no corpus datagram is rejected for \(reason.caseName)")
        }
        if let ten = entries.first(where: { $0.file.contains("events-10000") }) {
            #expect(ten.outcome == .apply(events: 10_000))
        }
    }

    @Test func everyDatagramIsRejectedOrAppliedAsTheManifestSays() throws {
        let entries = try HostileCorpus.load("poseai-hostile")
        var decoder = PoseAIDecoder()
        var core = TouchPipeline(configuration: .init(screen: ScreenMapping(x: 0, y: 0, width: 1920, height: 1080)))
        var actions: [OutputAction] = []
        var held = Set<UInt8>()
        var now = Instant(nanoseconds: 1_000_000_000)
        for entry in entries {
            now = now + .milliseconds(5)
            let before = decoder.packet
            var failure: PoseAIDecodeError? = nil
            do throws(PoseAIDecodeError) {
                try decoder.decode(entry.bytes)
            } catch {
                failure = error
            }
            switch (entry.outcome, failure) {
            case (.reject(let reason), let error?):
                #expect(error.reason.caseName == reason, "\(entry.file): rejected for \(error.reason.caseName), the manifest says \(reason)")
                #expect(error.offset >= 0 && error.offset <= max(entry.bytes.count, PoseAIDecoder.maxPacketBytes))
                #expect(decoder.packet.events == before.events && decoder.packet.hasTouches == before.hasTouches, "\(entry.file): a rejected datagram changed the packet")
            case (.reject(let reason), nil):
                Issue.record("\(entry.file): decoded (\(decoder.packet.events.count) events), the manifest says reject \(reason)")
            case (.apply(let events), let error?):
                Issue.record("\(entry.file): rejected (\(error)), the manifest says apply \(events)")
            case (.late, _):
                Issue.record("\(entry.file): `late` is a TUIO outcome")
            case (.apply(let events), nil):
                #expect(decoder.packet.events.count == events, "\(entry.file): \(decoder.packet.events.count) events, the manifest says \(events)")
                for event in decoder.packet.events {
                    #expect(event.slot <= 9)
                    if case .position(let p) = event.update { #expect(p.rawX <= 4095 && p.rawY <= 4095) }
                }
                actions.removeAll(keepingCapacity: true)
                core.handle(decoder.packet, at: now, into: &actions)
                for action in actions {
                    switch action {
                    case .button(let b, let pressed):
                        if pressed { held.insert(b.rawValue) } else { held.remove(b.rawValue) }
                    case .moveTo(let p):
                        #expect(p.x >= 0 && p.x < 1920 && p.y >= 0 && p.y < 1080, "\(entry.file): move off screen \(p)")
                    default: break
                    }
                }
            }
        }
        #expect(held.isEmpty, "buttons held after the corpus: \(held.sorted())")
        #expect(!core.hasContacts, "contacts left after the corpus")
    }
}

extension PoseAIDecodeError.Reason {
    /// The case's name as written in a MANIFEST (`tooLarge`, `notJSON`, ...).
    var caseName: String {
        switch self {
        case .tooLarge: "tooLarge"
        case .notJSON: "notJSON"
        case .notAnObject: "notAnObject"
        case .trailingGarbage: "trailingGarbage"
        case .invalidUTF8: "invalidUTF8"
        case .controlCharacter: "controlCharacter"
        case .badEscape: "badEscape"
        case .badSurrogate: "badSurrogate"
        case .badNumber: "badNumber"
        case .numberOutOfRange: "numberOutOfRange"
        case .tooDeep: "tooDeep"
        case .wrongType: "wrongType"
        case .badTouches: "badTouches"
        case .badSlot: "badSlot"
        case .badTouchState: "badTouchState"
        }
    }
}
