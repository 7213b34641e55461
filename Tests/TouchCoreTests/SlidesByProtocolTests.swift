// The Slides panel while a presentation program takes it by protocol (LibreOffice Impress, paired): the
// Bridge asks the shell for it only while a page holds the session in presenter mode, and routes the
// buttons to it instead of keys only while the shell says it is paired.
import Testing
import TouchCore
import TouchWire

@Suite struct SlidesByProtocolTests {
    @Test func thePresenterPageWantsSlidesOtherwiseNothingDoes() {
        var h = Harness(mode: .touchpad)
        #expect(!h.command(.surface(width: 390, height: 700), from: phone, at: 0).wantsSlides, "touchpad mode")
        #expect(h.command(.mode(.presenter), from: phone, at: 1).wantsSlides)
        #expect(h.command(.ping(1), from: phone, at: 2).wantsSlides, "still the page in presenter mode")
        #expect(!h.command(.mode(.touchpad), from: phone, at: 3).wantsSlides)
        _ = h.command(.mode(.presenter), from: phone, at: 4)
        var fx = BridgeEffects()
        h.bridge.sourceGone(phone, at: ms(5), into: &fx)
        #expect(!fx.wantsSlides, "the page went")
    }

    @Test func aPresenterDatagramSenderWantsNoSlides() {
        var h = Harness(mode: .presenter)
        #expect(!h.send(down, from: tablet, at: 0).wantsSlides, "not a page: its buttons are keys anyway")
    }

    @Test func pairedTheButtonsGoByProtocolAndKeysAgainOnceNot() {
        var h = Harness(mode: .presenter)
        #expect(h.command(.gotoSlide(3), from: phone, at: 0).slides == nil, "no list without the program")
        h.bridge.setSlidesByProtocol(true)
        for (button, request) in [(PresenterCommand.next, SlideRequest.next), (.previous, .previous), (.start, .start), (.end, .stop)] {
            let e = h.command(.presenter(button), from: phone, at: 10)
            #expect(e.slides == request)
            #expect(e.actions.isEmpty, "no key for \(button) while the program takes it")
        }
        #expect(h.command(.gotoSlide(3), from: phone, at: 20).slides == .goto(3))
        // Blank stays a key (Impress's show takes it too), the laser the overlay's.
        #expect(h.command(.presenter(.blank), from: phone, at: 30).slides == nil)
        h.bridge.setSlidesByProtocol(false)
        let e = h.command(.presenter(.next), from: phone, at: 40)
        #expect(e.slides == nil)
        #expect(e.actions == [.key(.pageDown, pressed: true), .key(.pageDown, pressed: false)])
    }

    @Test func anotherSendersRequestGoesNowhere() {
        var h = Harness(mode: .presenter)
        h.bridge.setSlidesByProtocol(true)
        _ = h.command(.mode(.presenter), from: phone, at: 0)
        #expect(h.command(.presenter(.next), from: tablet, at: 10).slides == nil, "busy: the tablet holds nothing")
    }

    @Test func theGotoCommandsGrammar() {
        #expect(WebCommand(parsing: "slide goto 0") == .gotoSlide(0))
        #expect(WebCommand(parsing: "slide goto 99999") == .gotoSlide(99_999))
        for bad in ["slide goto", "slide goto -1", "slide goto 100000", "slide goto 1x", "slide goto +1", "slide goto  1", "slide goto ١"] {
            #expect(WebCommand(parsing: bad[...]) == nil, "\(bad)")
        }
    }
}
