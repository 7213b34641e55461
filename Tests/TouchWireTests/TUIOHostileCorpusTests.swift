// The checked-in hostile TUIO corpus (Tests/Corpus/tuio-hostile), replayed through one TUIO decoder
// (kept across datagrams, as the listener keeps it per source) and a core: every datagram is rejected
// for the reason its MANIFEST gives with nothing of it applied, or applies (or drops as late) the number
// of frames it gives; every frame is in range; nothing traps, and nothing is held at the end.

import Testing
import TouchCore
import TouchWire

@Suite struct TUIOHostileCorpusTests {
    @Test func corpusCoversEveryKindOfHostileDatagram() throws {
        let entries = try HostileCorpus.load("tuio-hostile")
        #expect(entries.count >= 50, "the corpus shrank to \(entries.count) datagrams")
        let kinds = ["truncated", "size-", "huge-over-64k", "nested-2000", "set-int-coordinates", "alive-float-id",
                     "coordinate-nan", "coordinate-inf", "id-extremes", "ids-twelve", "alive-10000-ids", "fseq-late"]
        for kind in kinds {
            #expect(entries.contains { $0.file.contains(kind) }, "no \(kind) datagram in the corpus")
        }
        let reasons = Set(entries.compactMap { entry -> String? in
            if case .reject(let r) = entry.outcome { return r } else { return nil }
        })
        for reason in OSCDropReason.allCases {
            #expect(reasons.contains(reason.caseName), "no corpus datagram is rejected for \(reason.caseName)")
        }
    }

    @Test func everyDatagramIsRejectedOrAppliedAsTheManifestSays() throws {
        let entries = try HostileCorpus.load("tuio-hostile")
        var decoder = TUIODecoder()
        var core = TouchPipeline(configuration: .init(screen: ScreenMapping(x: 0, y: 0, width: 1920, height: 1080)))
        var actions: [OutputAction] = []
        var held = Set<UInt8>()
        var now = Instant(nanoseconds: 1_000_000_000)
        for entry in entries {
            let (liveBefore, frameBefore) = (decoder.liveCount, decoder.currentFrame)
            var frames = 0
            actions.removeAll(keepingCapacity: true)
            let result = entry.bytes.withUnsafeBytes { bytes -> Result<TUIODecoder.Outcome, OSCDropReason> in
                do throws(OSCDropReason) {
                    return .success(try decoder.decode(bytes) { packet in
                        frames += 1
                        now = now + .milliseconds(5)
                        for event in packet.events {
                            #expect(event.slot <= 9, "\(entry.file): slot \(event.slot)")
                            if case .position(let p) = event.update { #expect(p.rawX <= 4095 && p.rawY <= 4095) }
                        }
                        if let state = packet.state {
                            var down = 0
                            for s in 0..<TouchState.slotCount where state[s].point != nil { down += 1 }
                            #expect(down <= 10)
                        } else {
                            Issue.record("\(entry.file): a frame without its TouchState")
                        }
                        core.handle(packet, at: now, into: &actions)
                    })
                } catch {
                    return .failure(error)
                }
            }
            switch (entry.outcome, result) {
            case (.reject(let reason), .failure(let error)):
                #expect(error.caseName == reason, "\(entry.file): rejected for \(error.caseName), the manifest says \(reason)")
                #expect(frames == 0, "\(entry.file): a rejected datagram applied \(frames) frames")
                #expect(decoder.liveCount == liveBefore && decoder.currentFrame == frameBefore,
                        "\(entry.file): a rejected datagram changed the decoder")
            case (.reject(let reason), .success(let outcome)):
                Issue.record("\(entry.file): decoded (\(outcome.frames) frames), the manifest says reject \(reason)")
            case (.apply(let expected), .failure(let error)), (.late(let expected), .failure(let error)):
                Issue.record("\(entry.file): rejected (\(error.caseName)), the manifest says \(expected) frames")
            case (.apply(let expected), .success(let outcome)):
                #expect(outcome.frames == expected && frames == expected, "\(entry.file): \(outcome.frames) frames, the manifest says \(expected)")
                #expect(outcome.lateFrames == 0, "\(entry.file): \(outcome.lateFrames) late frames")
            case (.late(let expected), .success(let outcome)):
                #expect(outcome.lateFrames == expected && outcome.frames == 0 && frames == 0,
                        "\(entry.file): \(outcome.lateFrames) late and \(outcome.frames) applied frames, the manifest says \(expected) late")
            }
            #expect(decoder.liveCount <= 10)
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
        #expect(decoder.liveCount == 0, "\(decoder.liveCount) TUIO touches live after the corpus")
        #expect(held.isEmpty, "buttons held after the corpus: \(held.sorted())")
        #expect(!core.hasContacts, "contacts left after the corpus")
    }

    /// Eleven and more fingers: only ten take slots, the rest wait (the corpus's `ids-twelve-touches`).
    @Test func twelveAliveTouchesTakeTenSlots() throws {
        let entry = try #require(try HostileCorpus.load("tuio-hostile").first { $0.file.contains("ids-twelve-touches") })
        var decoder = TUIODecoder()
        var positions = 0
        _ = try entry.bytes.withUnsafeBytes { bytes throws(OSCDropReason) in
            try decoder.decode(bytes) { packet in
                for event in packet.events { if case .position = event.update { positions += 1 } }
            }
        }
        #expect(decoder.liveCount == 10)
        #expect(positions == 10)
    }
}

extension OSCDropReason {
    /// The case's name as written in a MANIFEST (`tooLarge`, `truncated`, ...).
    var caseName: String {
        switch self {
        case .tooLarge: "tooLarge"
        case .notOSC: "notOSC"
        case .truncated: "truncated"
        case .badString: "badString"
        case .badTypeTags: "badTypeTags"
        case .unsupportedType: "unsupportedType"
        case .tooDeep: "tooDeep"
        case .badTUIO: "badTUIO"
        }
    }
}
