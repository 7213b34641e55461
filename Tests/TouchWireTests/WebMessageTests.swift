// The web page's language (TouchWire/WebMessage.swift): messages classified without Hummingbird (also the
// `web` fuzz target's entry), the commands' grammar, and the replies' words.
import Testing
import TouchCore
import TouchWire

@Suite struct WebMessageTests {
    private func classify(_ bytes: [UInt8], _ decoder: inout PoseAIDecoder) -> WebMessage {
        bytes.withUnsafeBytes { WebMessage.classify($0, decoder: &decoder) }
    }

    @Test func packetsGoThroughThePoseAIDecoderAndTextMustBeACommand() {
        var decoder = PoseAIDecoder()
        #expect(classify(Array(#"{"Touches":"0AAAA"}"#.utf8), &decoder) == .packet)
        #expect(decoder.packet.events.count == 1)
        guard case .undecodablePacket(let error) = classify(Array(#"{"Touches":"0AA"}"#.utf8), &decoder) else {
            Issue.record("a bad packet was not refused")
            return
        }
        #expect(error.reason == .badTouches)
        #expect(decoder.packet.events.count == 1, "a refused packet changed the decoder's packet")
        #expect(classify(Array("click left".utf8), &decoder) == .command(.click(PointerButton(rawValue: 1))))
        #expect(classify(Array("text h\u{e9}".utf8), &decoder) == .command(.text("h\u{e9}")))
        #expect(classify([], &decoder) == .notACommand)
        #expect(classify(Array("click  left".utf8), &decoder) == .notACommand)
        #expect(classify(Array("surface nan 700".utf8), &decoder) == .notACommand)
        #expect(classify(Array("text ".utf8) + [0xFF, 0xFE], &decoder) == .notACommand, "invalid UTF-8 became a command")
        #expect(classify(Array(" {}".utf8), &decoder) == .notACommand)
    }
}

@Suite struct WebCommandTests {
    @Test func commandsParse() {
        #expect(WebCommand(parsing: "surface 390 700") == .surface(width: 390, height: 700))
        #expect(WebCommand(parsing: "click left") == .click(PointerButton(rawValue: 1)))
        #expect(WebCommand(parsing: "click right") == .click(PointerButton(rawValue: 3)))
        #expect(WebCommand(parsing: "text héllo €") == .text("héllo €"))
        #expect(WebCommand(parsing: "key Return") == .key(KeyChord(.returnKey)))
        #expect(WebCommand(parsing: "mode touchscreen") == .mode(.touchscreen))
        #expect(WebCommand(parsing: "release") == .release)
    }

    @Test(arguments: ["", "surface", "surface 1 2", "surface -390 700", "surface nan 700", "surface 390 700 1",
                      "click", "click up", "text", "key F13", "mode joystick", "release now", "jump 3",
                      "text " + String(repeating: "x", count: 257)])
    func nonCommandsAreRefused(_ text: String) {
        #expect(WebCommand(parsing: Substring(text)) == nil)
    }
}

@Suite struct PageCommandParsingTests {
    @Test func keysChordsAndClicksWithModifiersParse() {
        #expect(WebCommand(parsing: "key ctrl+c") == .key(KeyChord(.controlL, KeySym(rawValue: 0x63))))
        #expect(WebCommand(parsing: "key XF86AudioRaiseVolume") == .key(KeyChord(KeySym(rawValue: 0x1008ff13))))
        #expect(WebCommand(parsing: "key XF86AudioLowerVolume") == .key(KeyChord(KeySym(rawValue: 0x1008ff11))))
        #expect(WebCommand(parsing: "key XF86AudioMute") == .key(KeyChord(KeySym(rawValue: 0x1008ff12))))
        #expect(WebCommand(parsing: "key XF86AudioPlay") == .key(KeyChord(KeySym(rawValue: 0x1008ff14))))
        #expect(WebCommand(parsing: "key XF86AudioNext") == .key(KeyChord(KeySym(rawValue: 0x1008ff17))))
        #expect(WebCommand(parsing: "key XF86AudioPrev") == .key(KeyChord(KeySym(rawValue: 0x1008ff16))))
        #expect(WebCommand(parsing: "key F1") == .key(KeyChord(KeySym(rawValue: 0xffbe))))
        #expect(WebCommand(parsing: "key shift+super+alt+Delete") == .key(KeyChord(.shiftL, .superL, .altL, KeySym(rawValue: 0xffff))))
        #expect(WebCommand(parsing: "click left ctrl") == .click(.left, modifiers: KeyChord(.controlL)))
        #expect(WebCommand(parsing: "click right shift+alt") == .click(.right, modifiers: KeyChord(.shiftL, .altL)))
    }

    @Test func slidesSettingsAndPingParse() {
        #expect(WebCommand(parsing: "slide next") == .presenter(.next))
        #expect(WebCommand(parsing: "slide start") == .presenter(.start))
        #expect(WebCommand(parsing: "slide laser-on") == .presenter(.laserOn))
        #expect(WebCommand(parsing: "slide laser-off") == .presenter(.laserOff))
        #expect(WebCommand(parsing: "slide draw") == .presenter(.draw))
        #expect(WebCommand(parsing: "slide clear") == .presenter(.clear))
        #expect(WebCommand(parsing: "set speed -0.5") == .tune(.speed(-0.5)))
        #expect(WebCommand(parsing: "set scroll-speed 2.5") == .tune(.scrollSpeed(2.5)))
        #expect(WebCommand(parsing: "set natural-scroll on") == .tune(.naturalScroll(true)))
        #expect(WebCommand(parsing: "set tap-to-click off") == .tune(.tapToClick(false)))
        #expect(WebCommand(parsing: "ping 0") == .ping(0))
        #expect(WebCommand(parsing: "ping 9007199254740991") == .ping(9_007_199_254_740_991))
    }

    @Test(arguments: ["key", "key ", "key none", "key ctrl+", "key a+b+c+d+e", "key ctrl c", "key XF86AudioLouder",
                      "click left c", "click left ctrl+c", "click left ctrl extra", "click left ",
                      "slide", "slide onward", "slide next now", "set", "set speed", "set speed 2", "set speed nan",
                      "set speed -1.01", "set scroll-speed 0", "set scroll-speed 11", "set natural-scroll yes",
                      "set tap-to-click", "set volume 3", "ping", "ping -1", "ping 1.5", "ping +1", "ping 9007199254740992",
                      "ping 12345678901234567890", "ping 0x10"])
    func badPageCommandsAreRefused(_ text: String) {
        #expect(WebCommand(parsing: Substring(text)) == nil)
    }

    @Test func repliesAreWordedForThePage() {
        #expect(BridgeReply.pong(7).pageText == "pong 7")
        #expect(BridgeReply.drawing(true).pageText == "drawing on")
        #expect(BridgeReply.drawing(false).pageText == "drawing off")
        // A character the desktop cannot type (GNOME, KDE Plasma 5: no virtual keyboard) is said apart from a chord.
        let cannot = BridgeReply.cannotType(KeySym(rawValue: 0x101F600)).pageText ?? ""
        #expect(cannot.hasPrefix("error this desktop cannot type ") && cannot.contains("GNOME") && cannot.contains("KDE Plasma 5"), "\(cannot)")
        #expect(cannot != BridgeReply.refused(KeySym(rawValue: 0x101F600)).pageText)
    }
}
