import Testing
import TouchCore
@testable import TouchImpress

/// The bytes of a message as Impress writes it: its lines, then an empty line.
func message(_ lines: String...) -> [UInt8] { Array((lines.joined(separator: "\n") + "\n\n").utf8) }

/// A tiny PNG: the signature and a few bytes (the machine checks the signature, not the image).
let tinyPNG: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]

func base64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    var out = ""
    var i = 0
    while i < bytes.count {
        let n = min(3, bytes.count - i)
        let b0 = UInt32(bytes[i]), b1 = n > 1 ? UInt32(bytes[i + 1]) : 0, b2 = n > 2 ? UInt32(bytes[i + 2]) : 0
        let v = b0 << 16 | b1 << 8 | b2
        out.append(alphabet[Int(v >> 18 & 63)])
        out.append(alphabet[Int(v >> 12 & 63)])
        out.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : "=")
        out.append(n > 2 ? alphabet[Int(v & 63)] : "=")
        i += 3
    }
    return out
}

private let pin = ImpressPIN(parsing: "0427")!
private let t0 = Instant(nanoseconds: 1_000_000_000)

/// A connection fed `chunks`, and everything it handed out.
private func feed(_ connection: inout ImpressConnection, _ chunks: [UInt8]..., at now: Instant = t0) -> [ImpressConnection.Output] {
    var outputs: [ImpressConnection.Output] = []
    for chunk in chunks { connection.receive(chunk, at: now, into: &outputs) }
    return outputs
}

private func paired() -> ImpressConnection {
    var c = ImpressConnection(pin: pin)
    _ = feed(&c, message("LO_SERVER_SERVER_PAIRED"))
    return c
}

private func events(_ outputs: [ImpressConnection.Output]) -> [ImpressEvent] {
    outputs.compactMap { if case .event(let e) = $0 { e } else { nil } }
}

private func refusals(_ outputs: [ImpressConnection.Output]) -> [ImpressRefusal] {
    outputs.compactMap { if case .refused(let r, _) = $0 { r } else { nil } }
}

@Suite struct ImpressConnectionTests {
    @Test func pairRequestNamesTouchbridgeAndThePin() {
        let c = ImpressConnection(pin: pin)
        #expect(String(decoding: c.pairRequest, as: UTF8.self) == "LO_SERVER_CLIENT_PAIR\ntouchbridge\n0427\n\n")
    }

    @Test func commandsAreLinesEndedByAnEmptyLine() {
        #expect(String(decoding: ImpressCommand.transitionNext.bytes, as: UTF8.self) == "transition_next\n\n")
        #expect(String(decoding: ImpressCommand.transitionPrevious.bytes, as: UTF8.self) == "transition_previous\n\n")
        #expect(String(decoding: ImpressCommand.presentationStart.bytes, as: UTF8.self) == "presentation_start\n\n")
        #expect(String(decoding: ImpressCommand.presentationStop.bytes, as: UTF8.self) == "presentation_stop\n\n")
        #expect(String(decoding: ImpressCommand.gotoSlide(12).bytes, as: UTF8.self) == "goto_slide\n12\n\n")
    }

    @Test func pairedThenTheShowAsImpressSendsIt() {
        var c = ImpressConnection(pin: pin)
        let out = feed(&c, message("LO_SERVER_SERVER_PAIRED"), message("LO_SERVER_INFO", "7.4.7.2"),
                       message("slideshow_started", "3", "0"), message("slideshow_info", "Deck"),
                       message("slide_preview", "0", base64(tinyPNG)),
                       message("slide_notes", "0", "<html><body>First &amp; foremost<br/>say hello</body></html>"),
                       message("slide_updated", "1"), message("slideshow_finished"))
        #expect(events(out) == [.paired, .serverVersion("7.4.7.2"), .slideshowStarted(count: 3, current: 0),
                                .slideshowTitle("Deck"), .slidePreview(slide: 0, png: tinyPNG),
                                .slideNotes(slide: 0, text: "First & foremost\nsay hello"),
                                .slideUpdated(current: 1), .slideshowFinished])
        #expect(c.state == .paired)
        #expect(c.show == nil)
    }

    @Test func anyCutOfTheBytesGivesTheSameEvents() {
        let stream = message("LO_SERVER_SERVER_PAIRED") + message("slideshow_started", "5", "2")
            + message("slide_preview", "3", base64(tinyPNG)) + message("slide_updated", "4")
        var whole = ImpressConnection(pin: pin)
        let expected = feed(&whole, stream)
        for cut in 0...stream.count {
            var c = ImpressConnection(pin: pin)
            #expect(feed(&c, Array(stream[..<cut]), Array(stream[cut...])) == expected)
        }
        var byByte = ImpressConnection(pin: pin)
        var out: [ImpressConnection.Output] = []
        for b in stream { byByte.receive([b], at: t0, into: &out) }
        #expect(out == expected)
    }

    @Test func validatingPinThenPairedOnceTheUserTypesIt() {
        var c = ImpressConnection(pin: pin)
        #expect(events(feed(&c, message("LO_SERVER_VALIDATING_PIN"))) == [.waitingForPin])
        #expect(c.state == .waitingForPin)
        #expect(c.command(.transitionNext) == nil)
        #expect(events(feed(&c, message("LO_SERVER_SERVER_PAIRED"))) == [.paired])
        #expect(c.command(.transitionNext) == ImpressCommand.transitionNext.bytes)
    }

    @Test func aServerThatIsNotImpressIsRefusedAtItsFirstMessage() {
        var c = ImpressConnection(pin: pin)
        let out = feed(&c, Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n\n".utf8))
        #expect(out == [.notImpress])
        #expect(c.state == .notImpress)
        #expect(feed(&c, message("LO_SERVER_SERVER_PAIRED")).isEmpty)
        #expect(c.command(.transitionNext) == nil)
    }

    @Test func aServerThatTalksOnWithoutAnEmptyLineIsNotImpress() {
        var c = ImpressConnection(pin: pin)
        let out = feed(&c, Array(repeating: UInt8(ascii: "x"), count: 5000))
        #expect(out == [.notImpress])
    }

    @Test func theShowBeforePairingIsNotImpress() {
        var c = ImpressConnection(pin: pin)
        #expect(feed(&c, message("slideshow_started", "3", "0")) == [.notImpress])
    }

    @Test func gotoSlideGoesOnlyToAnotherSlideOfTheShow() {
        var c = paired()
        #expect(c.command(.gotoSlide(1)) == nil)  // no show known
        _ = feed(&c, message("slideshow_started", "3", "1"))
        #expect(c.command(.gotoSlide(0)) == ImpressCommand.gotoSlide(0).bytes)
        #expect(c.command(.gotoSlide(1)) == nil)  // the current one: Impress would answer nothing
        #expect(c.command(.gotoSlide(3)) == nil)
        #expect(c.command(.gotoSlide(-1)) == nil)
    }

    /// The burst Impress sends after `slideshow_started`: a preview and the notes of every slide.
    private static func burst(_ count: Int) -> [[UInt8]] {
        (0..<count).flatMap { [message("slide_preview", "\($0)", base64(tinyPNG)), message("slide_notes", "\($0)", "<html><body>n\($0)</body></html>")] }
    }

    private static func writes(_ outputs: [ImpressConnection.Output]) -> [String] {
        outputs.compactMap { if case .write(let b) = $0 { String(decoding: b, as: UTF8.self) } else { nil } }
    }

    /// Impress loses a transition asked for before the burst after `slideshow_started` ends: it is held,
    /// in order, and written `settleQuiet` after the last slide's notes.
    @Test func commandsWhileTheShowSettlesAreHeldUntilAfterTheLastSlidesNotes() {
        var c = paired()
        #expect(c.send(.presentationStart, at: t0) == .write(ImpressCommand.presentationStart.bytes))
        var out = feed(&c, message("slideshow_started", "3", "0"))
        #expect(c.send(.transitionNext, at: t0) == .held)
        #expect(c.send(.transitionPrevious, at: t0) == .held)
        #expect(c.settleDeadline == t0 + ImpressConnection.settleLimit(slides: 3))
        let burst = Self.burst(3)
        for part in burst.dropLast() { out += feed(&c, part) }
        let end = t0 + .milliseconds(200)
        out += feed(&c, burst.last!, at: end)
        #expect(events(out).last == .slideNotes(slide: 2, text: "n2"))
        #expect(Self.writes(out).isEmpty, "written before the burst ended and went quiet")
        #expect(c.settleDeadline == end + ImpressConnection.settleQuiet, "the burst's end brings the deadline forward")
        // Still settling: another one joins them.
        #expect(c.send(.transitionNext, at: end) == .held)
        out = []
        c.tick(at: end + ImpressConnection.settleQuiet, into: &out)
        #expect(Self.writes(out) == ["transition_next\n\ntransition_previous\n\ntransition_next\n\n"])
        #expect(c.settleDeadline == nil)
        // Settled: at once.
        #expect(c.send(.transitionNext, at: end + ImpressConnection.settleQuiet) == .write(ImpressCommand.transitionNext.bytes))
    }

    /// Held commands go at once when a slide changes (the show acts) or the show ends, or at the settle
    /// limit when the burst never ends; at most `maxHeld` are held.
    @Test func heldCommandsGoOnAChangeOrAtTheDeadlineAndAreBounded() {
        var c = paired()
        _ = feed(&c, message("slideshow_started", "3", "0"))
        #expect(c.send(.transitionNext, at: t0) == .held)
        #expect(Self.writes(feed(&c, message("slide_updated", "1"))) == ["transition_next\n\n"])

        _ = feed(&c, message("slideshow_started", "3", "0"), at: t0)
        #expect(c.send(.gotoSlide(2), at: t0) == .held)
        #expect(Self.writes(feed(&c, message("slideshow_finished"))) == ["goto_slide\n2\n\n"])

        _ = feed(&c, message("slideshow_started", "50", "0"), at: t0)
        for _ in 0..<ImpressConnection.maxHeld { #expect(c.send(.transitionNext, at: t0) == .held) }
        #expect(c.send(.transitionNext, at: t0) == .refused, "past maxHeld")
        let deadline = t0 + ImpressConnection.settleLimit(slides: 50)
        #expect(ImpressConnection.settleLimit(slides: 50) == .milliseconds(13_000))
        #expect(ImpressConnection.settleLimit(slides: 100_000) == .seconds(15))
        var out: [ImpressConnection.Output] = []
        c.tick(at: Instant(nanoseconds: deadline.nanoseconds - 1), into: &out)
        #expect(out.isEmpty, "written before the deadline")
        c.tick(at: deadline, into: &out)
        #expect(Self.writes(out) == [String(repeating: "transition_next\n\n", count: ImpressConnection.maxHeld)])
        // Past the limit, a command goes at once even with the burst still coming.
        _ = feed(&c, message("slideshow_started", "3", "0"), at: t0)
        #expect(c.send(.transitionNext, at: t0 + ImpressConnection.settleLimit(slides: 3)) == .write(ImpressCommand.transitionNext.bytes))
        // Not paired, or a slide out of the show: refused, never held.
        var unpaired = ImpressConnection(pin: pin)
        #expect(unpaired.send(.transitionNext, at: t0) == .refused)
        _ = feed(&c, message("slideshow_started", "3", "0"), at: t0)
        #expect(c.send(.gotoSlide(7), at: t0) == .refused)
    }

    @Test func badNumbersAreRefusedAndCounted() {
        var c = paired()
        _ = feed(&c, message("slideshow_started", "3", "0"))
        let out = feed(&c, message("slide_updated", "3"), message("slide_updated", "-1"), message("slide_updated", "1e2"),
                       message("slide_updated", ""), message("slide_updated", "99999999"),
                       message("slideshow_started", "0", "0"), message("slideshow_started", "2", "2"))
        // An empty number is an empty line: it ends the message, which then lacks its number.
        #expect(refusals(out) == [.badNumber, .badNumber, .badNumber, .malformed, .badNumber, .badNumber, .badNumber])
        #expect(events(out).isEmpty)
        #expect(c.refusals.totalCount(reasonIndex: ImpressRefusal.badNumber.rawValue) == 6)
        // One line now per reason, the rest counted until the interval passes.
        #expect(out.filter { if case .refused(_, let report?) = $0 { report.total > 0 } else { false } }.count == 2)
        #expect(c.show! == (3, 0))
    }

    @Test func badBase64AndNonPNGPreviewsAreRefused() {
        var c = paired()
        let notPNG = base64(Array("GIF89a..".utf8))
        let out = feed(&c, message("slide_preview", "0", "not base64!"), message("slide_preview", "0", "QQ="),
                       message("slide_preview", "0", "QR=="), message("slide_preview", "0", "QQ==QQ=="),
                       message("slide_preview", "0", notPNG), message("slide_preview", "0", base64(tinyPNG)))
        #expect(refusals(out) == Array(repeating: .badPreview, count: 5))
        #expect(events(out) == [.slidePreview(slide: 0, png: tinyPNG)])
    }

    @Test func unknownAndMalformedMessagesAreRefused() {
        var c = paired()
        let out = feed(&c, message("slide_wobble", "1"), message("slide_updated"), message("slideshow_finished", "x"),
                       message("LO_SERVER_SERVER_PAIRED"), message("slide_notes", "0", "a", "b"))
        #expect(refusals(out) == [.unknownMessage, .malformed, .malformed, .outOfOrder, .malformed])
    }

    @Test func aPreviewPastFourMebibytesIsRefusedUndecoded() {
        var c = paired()
        let big = [UInt8](repeating: UInt8(ascii: "A"), count: (ImpressConnection.maxPreviewBytes / 3 + 1) * 4)
        let out = feed(&c, Array("slide_preview\n0\n".utf8) + big + Array("\n\n".utf8), message("slide_updated", "1"))
        #expect(refusals(out) == [.previewTooLarge])
        #expect(events(out) == [.slideUpdated(current: 1)])
    }

    @Test func aMessagePastEightMebibytesIsDroppedToItsEndAndTheNextOneRead() {
        var c = paired()
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        var out: [ImpressConnection.Output] = []
        c.receive(Array("slide_notes\n0\n".utf8), at: t0, into: &out)
        for _ in 0..<10 { c.receive(line, at: t0, into: &out) }
        c.receive(Array("\n\n".utf8) + message("slide_updated", "2"), at: t0, into: &out)
        #expect(refusals(out) == [.messageTooLong])
        #expect(events(out) == [.slideUpdated(current: 2)])
    }

    @Test func notesPastSixtyFourKibibytesAreRefused() {
        var c = paired()
        let long = String(repeating: "a", count: ImpressConnection.maxNotesBytes + 1)
        let out = feed(&c, message("slide_notes", "0", long), message("slide_notes", "0", String(long.dropLast())))
        #expect(refusals(out) == [.notesTooLong])
        #expect(events(out).count == 1)
    }

    @Test func notesThatAreNotUTF8AreRefused() {
        var c = paired()
        let out = feed(&c, Array("slide_notes\n0\n".utf8) + [0xFF, 0xFE] + Array("\n\n".utf8))
        #expect(refusals(out) == [.malformed])
    }

    @Test func refusalsAreLoggedOncePerIntervalWithTheirCounts() {
        var c = paired()
        var lines = 0
        for s in 0..<100 {
            let out = feed(&c, message("nonsense"), at: Instant(nanoseconds: t0.nanoseconds + UInt64(s) * 100_000_000))
            for o in out { if case .refused(.unknownMessage, .some) = o { lines += 1 } }
        }
        #expect(lines == 1)
        let out = feed(&c, message("nonsense"), at: Instant(nanoseconds: t0.nanoseconds + 10_000_000_000))
        #expect(out == [.refused(.unknownMessage, .init(reasonIndex: ImpressRefusal.unknownMessage.rawValue, suppressed: 99, total: 101))])
    }

    @Test func emptyLinesBetweenMessagesAreNothing() {
        var c = paired()
        #expect(feed(&c, Array("\n\n\n".utf8) + message("slide_updated", "0") + Array("\n".utf8)) == [.event(.slideUpdated(current: 0))])
    }
}

@Suite struct ImpressPINTests {
    @Test func fourDigitsOnly() {
        #expect(ImpressPIN(parsing: "0042")?.digits == "0042")
        #expect(ImpressPIN(parsing: "123") == nil)
        #expect(ImpressPIN(parsing: "12345") == nil)
        #expect(ImpressPIN(parsing: "12a4") == nil)
        #expect(ImpressPIN(parsing: "١٢٣٤") == nil)
        #expect(ImpressPIN(value: 7).digits == "0007")
        #expect(ImpressPIN(value: 9999).digits == "9999")
    }
}

@Suite struct NotesTextTests {
    @Test func impressNotesBecomePlainText() {
        #expect(NotesText.plain(fromHTML: "<html><body>Hello<br/>world<br/></body></html>") == "Hello\nworld")
    }

    @Test func markupNeverSurvives() {
        let text = NotesText.plain(fromHTML: "<html><body><script>alert(1)</script><img src=x onerror=alert(2)>hi</body></html>")
        #expect(!text.contains("<script") && !text.contains("<img"))
        #expect(text == "alert(1)hi")
    }

    @Test func textImpressLeftUnescapedIsKeptAsText() {
        #expect(NotesText.plain(fromHTML: "<html><body>a < b && c > d; R&D</body></html>") == "a < b && c > d; R&D")
        #expect(NotesText.plain(fromHTML: "x <3 y") == "x <3 y")
    }

    @Test func entitiesAreDecodedOnce() {
        #expect(NotesText.plain(fromHTML: "&lt;b&gt; &amp;amp; &#65;&#x42; &quot;q&quot;") == "<b> &amp; AB \"q\"")
    }

    @Test func controlCharactersGoAndEmptyLinesAreBounded() {
        #expect(NotesText.plain(fromHTML: "a\u{1B}[31mb&#0;c&#x7;<br/><br/><br/><br/>d\u{2028}e\u{85}") == "a[31mbc\n\nde")
    }

    @Test func titlesAreOneLineAndBounded() {
        #expect(NotesText.oneLine("a<br/>b", maxBytes: 10) == "a b")
        #expect(NotesText.oneLine(String(repeating: "é", count: 200), maxBytes: 5) == "éé")
    }
}

@Suite struct Base64Tests {
    @Test func decodesEveryPadding() {
        for n in 0..<20 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Array(base64(bytes).utf8)) == bytes)
        }
    }

    @Test func refusesWhatIsNotStrict() {
        for bad in ["A", "AB", "ABC", "A===", "=AAA", "AB=A", "QR==", "QUJ=", "AAAA\nAAAA", "AA AA", "QQ==AAAA"] {
            #expect(Base64.decode(Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
