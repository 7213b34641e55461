// The RemoteDesktop portal's pure rules: request paths, what to ask for, what each Response means.
import Testing
import TouchPortal

@Suite struct PortalRulesTests {
    @Test func theRequestPathIsTheSenderWithoutItsColonAndWithUnderscoresThenTheToken() {
        #expect(PortalRules.requestPath(uniqueName: ":1.42", handleToken: "touchbridge_7_1")
                == "/org/freedesktop/portal/desktop/request/1_42/touchbridge_7_1")
        #expect(PortalRules.requestPath(uniqueName: ":1.1203", handleToken: "t")
                == "/org/freedesktop/portal/desktop/request/1_1203/t")
    }

    @Test func itAsksForWhatThePortalOffersOfKeyboardPointerAndTouchscreen() {
        #expect(PortalRules.devicesToAsk(available: 7) == [.keyboard, .pointer, .touchscreen])
        #expect(PortalRules.devicesToAsk(available: 3) == [.keyboard, .pointer])
        // Bits the portal may add later are not asked for.
        #expect(PortalRules.devicesToAsk(available: 0xff) == .all)
        // Unsaid or none: keyboard and pointer, which every version has.
        #expect(PortalRules.devicesToAsk(available: nil) == [.keyboard, .pointer])
        #expect(PortalRules.devicesToAsk(available: 0) == [.keyboard, .pointer])
    }

    @Test func responseZeroGivesTheResults() throws {
        let results: [String: DBusValue] = ["session_handle": .string("/org/freedesktop/portal/desktop/session/1_42/touchbridge_7")]
        let r = PortalRules.results(of: PortalResponse(code: 0, results: results), step: "CreateSession")
        #expect(try r.get() == results)
    }

    @Test(arguments: [(1 as UInt32, "the user said no"), (2, "the desktop refused"), (3, "response 3")])
    func responsesOtherThanZeroAreARefusalSaidInWords(code: UInt32, words: String) throws {
        let r = PortalRules.results(of: PortalResponse(code: code, results: [:]), step: "Start")
        guard case .failure(let failure) = r else {
            Issue.record("response \(code) taken for success")
            return
        }
        #expect(failure.kind == .refused)
        #expect(failure.message.contains(words) && failure.message.contains("Start"), "\(failure.message)")
    }

    @Test func theSessionHandleIsTakenAsAStringOrAnObjectPath() throws {
        let path = "/org/freedesktop/portal/desktop/session/1_42/s"
        #expect(try PortalRules.sessionHandle(["session_handle": .string(path)]).get() == path)
        #expect(try PortalRules.sessionHandle(["session_handle": .objectPath(path)]).get() == path)
        for bad: [String: DBusValue] in [[:], ["session_handle": .uint32(3)], ["session_handle": .string("relative")]] {
            guard case .failure(let failure) = PortalRules.sessionHandle(bad) else {
                Issue.record("\(bad) gave a session handle")
                continue
            }
            #expect(failure.kind == .unavailable && failure.message.contains("session_handle"))
        }
    }

    @Test func startsResultsGiveTheGrantedDevicesAndTheNewToken() {
        let both = PortalRules.started(["devices": .uint32(3), "restore_token": .string("0b5e-4c"), "clipboard_enabled": .bool(false)])
        #expect(both.devices == [.keyboard, .pointer] && both.restoreToken == "0b5e-4c")
        let none = PortalRules.started(["restore_token": .string(""), "devices": .other(signature: "s")])
        #expect(none.devices == nil && none.restoreToken == nil)
    }

    @Test func onlyPrintableTokensAreSent() {
        #expect(PortalRules.isUsableToken("8f2c6f0e-3a55-4d8b-9a0e-0c7b5c1d2e3f"))
        #expect(!PortalRules.isUsableToken(""))
        #expect(!PortalRules.isUsableToken("two words"))
        #expect(!PortalRules.isUsableToken("line\nbreak"))
        #expect(!PortalRules.isUsableToken("é"))
        #expect(!PortalRules.isUsableToken(String(repeating: "a", count: 257)))
        #expect(PortalRules.isUsableToken(String(repeating: "a", count: 256)))
    }

    @Test func theDeviceTypesSayThemselvesInWords() {
        #expect(PortalDevices.all.description == "keyboard, pointer, touchscreen")
        #expect(PortalDevices().description == "nothing")
    }

    @Test func theViewAsksForOneMonitorWithTheCursorDrawnInWhereOffered() {
        let embedded = PortalRules.screenSources(cursorModes: 1 | 2 | 4)
        #expect(embedded.map(\.0) == ["types", "multiple", "cursor_mode"])
        #expect(embedded.map(\.1) == [.uint32(1), .bool(false), .uint32(2)])
        // Hidden only, or unsaid: the portal's default (hidden), not a mode it does not offer.
        #expect(PortalRules.screenSources(cursorModes: 1).map(\.0) == ["types", "multiple"])
        #expect(PortalRules.screenSources(cursorModes: nil).map(\.0) == ["types", "multiple"])
    }

    @Test func startsStreamsGiveTheSharedMonitor() {
        #expect(PortalRules.sharedStream([:]) == nil)
        #expect(PortalRules.sharedStream(["streams": .streams([])]) == nil)
        #expect(PortalRules.sharedStream(["streams": .other(signature: "a(ua{sv})")]) == nil)
        let two: [String: DBusValue] = ["streams": .streams([PortalStream(node: 7, size: (1920, 1080)), PortalStream(node: 9)])]
        #expect(PortalRules.sharedStream(two) == PortalStream(node: 7, size: (1920, 1080)))
        #expect(PortalStream(node: 9).description == "node 9 (size unsaid)")
    }
}
