// The Bridge configured from what the output can do (`OutputCapabilities`), not from which output it is.
import Testing
import TouchCore

@Suite struct OutputCapabilitiesTests {
    static let screen = PixelRect(x: 0, y: 0, width: 1920, height: 1080)
    static let uinputLike = OutputCapabilities(realTouches: true, penTablet: true, nativeTouchpad: true, smoothScroll: true)
    static let xtestLike = OutputCapabilities(extraPointers: true)

    @Test func theConfigurationAdoptsEveryCapability() {
        var c = TouchPipeline.Configuration(mapping: AbsoluteMapping(target: Self.screen), multitouch: true)
        c.realTouches = true  // what the output cannot do is turned off, too
        let onXTest = c.adopting(Self.xtestLike)
        #expect(!onXTest.realTouches && !onXTest.penTablet && !onXTest.nativeTouchpad && !onXTest.touchpad.smoothScroll)
        #expect(onXTest.multitouch, "--multitouch kept where every finger can have a pointer")
        let onUInput = c.adopting(Self.uinputLike)
        #expect(onUInput.realTouches && onUInput.penTablet && onUInput.nativeTouchpad && onUInput.touchpad.smoothScroll)
        #expect(!onUInput.multitouch, "--multitouch dropped where no finger can have a pointer")
        #expect(onUInput.mapping == c.mapping && onUInput.mode == c.mode, "nothing else changes")
    }

    /// The same pen touch: tablet frames where the output has a pen tablet, button 1 where it has not.
    @Test(arguments: [true, false])
    func aPenTouchIsATabletFrameOnlyWithAPenTablet(tablet: Bool) {
        let c = TouchPipeline.Configuration(mapping: AbsoluteMapping(target: Self.screen), mode: .pen)
        var bridge = Bridge(configuration: c, capabilities: tablet ? Self.uinputLike : Self.xtestLike)
        var effects = BridgeEffects()
        bridge.start(screen: Self.screen, monitors: [], at: .milliseconds(1_000), into: &effects)
        effects.clear()
        let touch = PenSample(x: 0.5, y: 0.5, pressure: 0.5, tiltX: 0, tiltY: 0, twist: 0, touching: true, barrel: false, eraser: false)
        bridge.command(.pen(.near(touch)), from: SourceAddress(ipv4: 0x7f00_0001, port: 5000), at: .milliseconds(1_010), into: &effects)
        let frames = effects.actions.filter { if case .pen = $0 { true } else { false } }
        let presses = effects.actions.filter { if case .button(.left, pressed: true) = $0 { true } else { false } }
        #expect(frames.isEmpty == !tablet, "pen frames: \(effects.actions)")
        #expect(presses.isEmpty == tablet, "button 1 pressed: \(effects.actions)")
    }
}
