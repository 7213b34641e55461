import Testing
@testable import TouchImpress

private let pin = ImpressPIN(parsing: "0427")!

private func png(_ n: UInt8) -> [UInt8] { tinyPNG + [n] }

private func apply(_ deck: inout ImpressDeck, _ events: ImpressEvent...) -> [String] {
    var lines: [String] = []
    for e in events { deck.apply(e, into: &lines) }
    return lines
}

@Suite struct ImpressDeckTests {
    @Test func thePinIsShownWhileImpressWaitsForIt() {
        var deck = ImpressDeck(pin: pin)
        #expect(apply(&deck, .waitingForPin) == ["impress pin 0427"])
        #expect(apply(&deck, .paired) == ["impress on"])
    }

    @Test func theCurrentAndNextPicturesAndTheCurrentNotesFollowTheSlide() {
        var deck = ImpressDeck(pin: pin)
        var lines = apply(&deck, .paired, .slideshowStarted(count: 3, current: 0))
        #expect(lines == ["impress on", "impress show 3 0"])
        // Impress sends every slide's picture and notes after the start: the current and next go at once.
        lines = apply(&deck, .slidePreview(slide: 0, png: png(0)), .slideNotes(slide: 0, text: "zero"),
                      .slidePreview(slide: 1, png: png(1)), .slideNotes(slide: 1, text: "one"),
                      .slidePreview(slide: 2, png: png(2)), .slideNotes(slide: 2, text: "two"))
        #expect(lines == ["impress preview 0 \(base64(png(0)))", "impress notes 0 zero", "impress preview 1 \(base64(png(1)))"])
        // Then only the number changes: what was kept is told.
        lines = apply(&deck, .slideUpdated(current: 1))
        #expect(lines == ["impress show 3 1", "impress preview 1 \(base64(png(1)))", "impress preview 2 \(base64(png(2)))", "impress notes 1 one"])
        // A preview sent twice is told once.
        #expect(apply(&deck, .slidePreview(slide: 2, png: png(2))).isEmpty)
    }

    @Test func aPageThatComesLaterIsToldTheWholeState() {
        var deck = ImpressDeck(pin: pin)
        _ = apply(&deck, .paired, .slideshowStarted(count: 2, current: 1), .slideshowTitle("Deck"),
                  .slidePreview(slide: 1, png: png(1)), .slideNotes(slide: 1, text: "last"))
        var lines: [String] = []
        deck.snapshot(into: &lines)
        #expect(lines == ["impress on", "impress title Deck", "impress show 2 1", "impress preview 1 \(base64(png(1)))", "impress notes 1 last"])
    }

    @Test func theShowEndingOrImpressGoingForgetsEverything() {
        var deck = ImpressDeck(pin: pin)
        _ = apply(&deck, .paired, .slideshowStarted(count: 2, current: 0), .slidePreview(slide: 0, png: png(0)))
        #expect(apply(&deck, .slideshowFinished) == ["impress on"])
        #expect(deck.keptPreviewBytes == 0 && deck.show == nil)
        _ = apply(&deck, .slideshowStarted(count: 2, current: 0), .slidePreview(slide: 0, png: png(0)))
        var lines: [String] = []
        deck.disconnected(into: &lines)
        #expect(lines == ["impress off"])
        #expect(deck.keptPreviewBytes == 0 && deck.link == .off)
        lines = []
        deck.disconnected(into: &lines)
        #expect(lines.isEmpty)
    }

    @Test func whatIsKeptIsBounded() {
        var deck = ImpressDeck(pin: pin)
        _ = apply(&deck, .paired, .slideshowStarted(count: 100, current: 0))
        let big = tinyPNG + [UInt8](repeating: 7, count: ImpressConnection.maxPreviewBytes - tinyPNG.count)
        for slide in 0..<10 { _ = apply(&deck, .slidePreview(slide: slide, png: big)) }
        #expect(deck.keptPreviewBytes <= ImpressDeck.maxKeptPreviewBytes)
        // A picture past the bound is not kept: moving to its slide later has none to tell.
        let lines = apply(&deck, .slideUpdated(current: 9))
        #expect(!lines.contains { $0.hasPrefix("impress preview 9") })
    }
}
