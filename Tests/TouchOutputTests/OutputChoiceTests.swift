// `OutputChoice.choose`: every row of its rules, with the uinput output stood in for by what making it
// returned (the real devices are made in the VM stage; this host has no /dev/uinput).
import Testing
import TouchCore
import TouchOutput

@Suite struct OutputChoiceTests {
    /// What making the uinput output gave, and how often it was asked.
    final class UInputProbe {
        let works: Bool
        var calls = 0
        init(works: Bool) { self.works = works }
        func make() -> Result<String, OutputError> {
            calls += 1
            return works ? .success("devices") : .failure(OutputError(origin: "uinput", message: "open(/dev/uinput): Permission denied (errno 13)", kind: 5))
        }
    }

    static func facts(_ backend: BackendChoice, display: String? = nil, wayland: String? = nil, multitouch: Bool = false) -> OutputFacts {
        OutputFacts(backend: backend, multitouch: multitouch, display: display, waylandDisplay: wayland,
                    uinputPath: "/dev/uinput", uinputDevices: "a pointer and a keyboard")
    }

    static func choose(_ facts: OutputFacts, uinputWorks: Bool) -> (Result<OutputChoice, OutputChoiceFailure>, devices: String?, calls: Int) {
        let probe = UInputProbe(works: uinputWorks)
        switch OutputChoice.choose(facts, makeUInput: probe.make) {
        case .success(let (choice, devices)): return (.success(choice), devices, probe.calls)
        case .failure(let failure): return (.failure(failure), nil, probe.calls)
        }
    }

    static func choice(_ r: Result<OutputChoice, OutputChoiceFailure>) -> OutputChoice? {
        if case .success(let c) = r { return c }
        return nil
    }

    static func failure(_ r: Result<OutputChoice, OutputChoiceFailure>) -> String? {
        if case .failure(let f) = r { return f.message }
        return nil
    }

    // MARK: --backend xtest

    @Test func xtestOnAnXDisplayNeverTouchesUInput() throws {
        let (r, devices, calls) = Self.choose(Self.facts(.xtest, display: ":5"), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .xtest && c.desktop == .x11(display: ":5"))
        #expect(c.reason == "backend: xtest (--backend xtest)")
        #expect(calls == 0 && devices == nil)
    }

    @Test func xtestInAWaylandSessionIsWhatWasAskedButSaysItReachesOnlyXwayland() throws {
        let (r, _, calls) = Self.choose(Self.facts(.xtest, display: ":0", wayland: "wayland-1"), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .xtest && c.desktop == .x11(display: ":0"))
        #expect(c.reason.hasPrefix("backend: xtest (--backend xtest)") && c.reason.contains("only Xwayland's X clients"), "\(c.reason)")
        #expect(calls == 0)
    }

    @Test(arguments: [nil, "wayland-1"] as [String?])
    func xtestWithoutADisplayIsAClearError(wayland: String?) throws {
        let (r, _, calls) = Self.choose(Self.facts(.xtest, wayland: wayland), uinputWorks: true)
        let message = try #require(Self.failure(r))
        #expect(message.contains("--backend xtest needs an X display"), "\(message)")
        #expect(message.contains("--backend uinput") == (wayland != nil), "\(message)")
        #expect(calls == 0)
    }

    @Test func anEmptyDisplayIsNone() throws {
        let (r, _, _) = Self.choose(Self.facts(.xtest, display: ""), uinputWorks: true)
        #expect(Self.failure(r) != nil)
    }

    // MARK: --backend uinput

    @Test func uinputOnXDrivesTheX11Desktop() throws {
        let (r, devices, calls) = Self.choose(Self.facts(.uinput, display: ":5"), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .uinput && c.desktop == .x11(display: ":5"))
        #expect(c.reason == "backend: uinput (--backend uinput): a pointer and a keyboard on /dev/uinput; desktop: X display :5")
        #expect(devices == "devices" && calls == 1)
    }

    @Test(arguments: [nil, ":0"] as [String?])
    func uinputInAWaylandSessionDrivesTheWaylandDesktop(display: String?) throws {
        let (r, _, _) = Self.choose(Self.facts(.uinput, display: display, wayland: "wayland-1"), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .uinput && c.desktop == .wayland(display: "wayland-1", overlayDisplay: display))
        if display == nil {
            #expect(c.reason.contains("no X display (DISPLAY) for the overlay"), "\(c.reason)")
        } else {
            #expect(c.reason.contains("the overlay on X display :0 (Xwayland)"), "\(c.reason)")
        }
    }

    @Test func uinputWithNoDisplayAtAllRunsWithNoDesktopAndSaysWhatTheTouchscreenSpans() throws {
        let (r, _, _) = Self.choose(Self.facts(.uinput), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .uinput && c.desktop == .absent)
        #expect(c.reason.contains("the touchscreen spans 1920x1080") && c.reason.contains("no overlay"), "\(c.reason)")
    }

    @Test func uinputThatCannotBeMadeIsAnErrorNamingTheUdevRule() throws {
        let (r, _, calls) = Self.choose(Self.facts(.uinput, display: ":5"), uinputWorks: false)
        let message = try #require(Self.failure(r))
        #expect(message.hasPrefix("--backend uinput: cannot make the input devices: open(/dev/uinput): Permission denied"), "\(message)")
        #expect(message.contains("udev rule") && message.contains("or use --backend xtest"), "\(message)")
        #expect(calls == 1)
        // In a Wayland session XTest is no way out: not offered.
        let (w, _, _) = Self.choose(Self.facts(.uinput, display: ":0", wayland: "wayland-1"), uinputWorks: false)
        let wMessage = try #require(Self.failure(w))
        #expect(!wMessage.contains("--backend xtest"), "\(wMessage)")
    }

    @Test func uinputWithMultitouchIsAnError() throws {
        let (r, _, calls) = Self.choose(Self.facts(.uinput, display: ":5", multitouch: true), uinputWorks: true)
        #expect(Self.failure(r) == "--multitouch is for --backend xtest")
        #expect(calls == 0)
    }

    // MARK: --backend auto

    @Test(arguments: [nil, ":0"] as [String?])
    func autoNeverPicksXTestInAWaylandSessionAndSaysWhy(display: String?) throws {
        let (r, devices, _) = Self.choose(Self.facts(.auto, display: display, wayland: "wayland-1"), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .uinput && c.desktop == .wayland(display: "wayland-1", overlayDisplay: display))
        #expect(c.reason.hasPrefix("backend: uinput (--backend auto): a Wayland session (WAYLAND_DISPLAY=wayland-1), where XTest would reach only Xwayland's X clients"), "\(c.reason)")
        #expect(devices == "devices")
    }

    @Test(arguments: [nil, ":0"] as [String?])
    func autoInAWaylandSessionWithoutUInputTakesThePortalNotXTest(display: String?) throws {
        let (r, devices, calls) = Self.choose(Self.facts(.auto, display: display, wayland: "wayland-1"), uinputWorks: false)
        let c = try #require(Self.choice(r))
        #expect(c.input == .portal && c.desktop == .wayland(display: "wayland-1", overlayDisplay: display))
        #expect(c.reason.hasPrefix("backend: portal (--backend auto): a Wayland session (WAYLAND_DISPLAY=wayland-1)"), "\(c.reason)")
        #expect(c.reason.contains("Permission denied") && c.reason.contains("RemoteDesktop portal"), "\(c.reason)")
        #expect(devices == nil && calls == 1)
    }

    @Test(arguments: [nil, ":0"] as [String?])
    func autoInASessionThatSaysWaylandWithoutWaylandDisplayTakesThePortal(display: String?) throws {
        var facts = Self.facts(.auto, display: display)
        facts.sessionType = "wayland"
        let (r, _, _) = Self.choose(facts, uinputWorks: false)
        let c = try #require(Self.choice(r))
        #expect(c.input == .portal, "\(c.reason)")
        #expect(c.desktop == (display.map { .x11(display: $0) } ?? .absent))
        #expect(c.reason.hasPrefix("backend: portal (--backend auto): a Wayland session (XDG_SESSION_TYPE=wayland)"), "\(c.reason)")
    }

    @Test func autoInAnX11SessionWithoutUInputStaysOnXTest() throws {
        var facts = Self.facts(.auto, display: ":0")
        facts.sessionType = "x11"
        let (r, _, _) = Self.choose(facts, uinputWorks: false)
        let c = try #require(Self.choice(r))
        #expect(c.input == .xtest, "\(c.reason)")
    }

    // MARK: --backend portal

    @Test(arguments: [(nil, nil), (":0", nil), (nil, "wayland-0"), (":1", "wayland-1")] as [(String?, String?)])
    func portalNeverTouchesUInputAndTakesTheSessionsDesktop(display: String?, wayland: String?) throws {
        let (r, devices, calls) = Self.choose(Self.facts(.portal, display: display, wayland: wayland), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .portal && calls == 0 && devices == nil)
        #expect(c.reason.hasPrefix("backend: portal (--backend portal)"), "\(c.reason)")
        let expected: OutputChoice.DesktopKind = wayland.map { .wayland(display: $0, overlayDisplay: display) }
            ?? display.map { .x11(display: $0) } ?? .absent
        #expect(c.desktop == expected)
    }

    @Test func portalWithMultitouchIsAnError() throws {
        let (r, _, calls) = Self.choose(Self.facts(.portal, wayland: "wayland-0", multitouch: true), uinputWorks: true)
        #expect(Self.failure(r) == "--multitouch is for --backend xtest" && calls == 0)
    }

    @Test func autoInAWaylandSessionWithMultitouchIsAnError() throws {
        let (r, _, calls) = Self.choose(Self.facts(.auto, display: ":0", wayland: "wayland-1", multitouch: true), uinputWorks: true)
        let message = try #require(Self.failure(r))
        #expect(message.contains("--multitouch needs XTest") && message.contains("--backend xtest"), "\(message)")
        #expect(calls == 0)
    }

    @Test func autoOnXWithMultitouchPicksXTestWithoutMakingDevices() throws {
        let (r, devices, calls) = Self.choose(Self.facts(.auto, display: ":5", multitouch: true), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .xtest && c.desktop == .x11(display: ":5"))
        #expect(c.reason == "backend: xtest (--backend auto): --multitouch gives every finger an X pointer, which only XTest does")
        #expect(calls == 0 && devices == nil)
    }

    @Test func autoOnXPicksUInputWhenItWorks() throws {
        let (r, devices, _) = Self.choose(Self.facts(.auto, display: ":5"), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .uinput && c.desktop == .x11(display: ":5"))
        #expect(c.reason == "backend: uinput (--backend auto): /dev/uinput is writable: a pointer and a keyboard; desktop: X display :5")
        #expect(devices == "devices")
    }

    @Test func autoOnXFallsBackToXTestAndSaysWhy() throws {
        let (r, devices, _) = Self.choose(Self.facts(.auto, display: ":5"), uinputWorks: false)
        let c = try #require(Self.choice(r))
        #expect(c.input == .xtest && c.desktop == .x11(display: ":5"))
        #expect(c.reason == "backend: xtest (--backend auto): /dev/uinput cannot be used (open(/dev/uinput): Permission denied (errno 13))")
        #expect(devices == nil)
    }

    @Test func autoWithNoDisplayAtAllRunsUInputWithNoDesktop() throws {
        let (r, _, _) = Self.choose(Self.facts(.auto), uinputWorks: true)
        let c = try #require(Self.choice(r))
        #expect(c.input == .uinput && c.desktop == .absent)
        #expect(c.reason.contains("no desktop (neither DISPLAY nor WAYLAND_DISPLAY is set)") && c.reason.contains("no overlay"), "\(c.reason)")
    }

    @Test func autoWithNoDisplayAndNoUInputIsAnError() throws {
        let (r, _, _) = Self.choose(Self.facts(.auto), uinputWorks: false)
        let message = try #require(Self.failure(r))
        #expect(message.hasPrefix("nothing to drive") && message.contains("udev rule"), "\(message)")
    }

    @Test func autoWithNoDisplayAndMultitouchIsAnError() throws {
        let (r, _, calls) = Self.choose(Self.facts(.auto, multitouch: true), uinputWorks: true)
        let message = try #require(Self.failure(r))
        #expect(message.contains("--multitouch needs an X display"), "\(message)")
        #expect(calls == 0)
    }

    // MARK: the absent desktop

    @Test func theAbsentDesktopSpansItsSizeHasNoKeymapAndRefusesToBorrow() throws {
        let desktop = AbsentDesktop()
        #expect(try desktop.screen().screen == AbsentDesktop.defaultSize)
        #expect(try desktop.keymap(keyboardNamed: "touchbridge keyboard") == nil)
        #expect(desktop.overlay == nil && desktop.descriptors.isEmpty && !desktop.isLost)
        #expect(throws: OutputError.self) { try desktop.typeLacking(KeySym(rawValue: 0x100_20ac)) }
        #expect(desktop.close().isEmpty)
    }

    /// A Wayland session's desktop drawn on through Xwayland: geometry and keymap from the base, the
    /// overlay and its descriptor from the other.
    @Test func anOverlaidDesktopTakesItsScreenFromTheBase() throws {
        let base = AbsentDesktop(size: PixelRect(x: 0, y: 0, width: 800, height: 600))
        let overlaid = OverlaidDesktop(base: base, overlaySource: AbsentDesktop())
        #expect(try overlaid.screen().screen == base.size)
        #expect(overlaid.description == "no desktop (the overlay on no desktop)")
        #expect(try overlaid.keymap(keyboardNamed: nil) == nil)
        #expect(throws: OutputError.self) { try overlaid.typeLacking(KeySym(rawValue: 0x100_2603)) }
        #expect(!overlaid.isLost && overlaid.close().isEmpty)
    }
}
