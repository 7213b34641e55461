// The portal output's translation of the Bridge's actions into libei calls, on a recording of the calls
// (libei itself needs a compositor's EIS: the VM stage runs it).
import Testing
import TouchCore
import TouchOutput
import TouchPortal

/// Records what the output sends, in libei's terms; `paused` makes every call find no device.
final class RecordedDevices: EmulatedDevices {
    var offered: EICapabilities = [.pointer, .pointerAbsolute, .button, .scroll, .keyboard, .touch]
    var paused = false
    var calls: [String] = []
    var frames = 0
    var usable: EICapabilities { paused ? [] : offered }
    var regions: [PixelRect] = [PixelRect(x: 0, y: 0, width: 1920, height: 1080), PixelRect(x: 1920, y: 0, width: 1280, height: 1024)]

    private func record(_ cap: EICapabilities, _ what: String) -> Bool {
        guard usable.contains(cap) else { return false }
        calls.append(what)
        return true
    }
    func pointerMotion(dx: Double, dy: Double) -> Bool { record(.pointer, "motion \(Int(dx)),\(Int(dy))") }
    func pointerMotionAbsolute(x: Double, y: Double) -> Bool { record(.pointerAbsolute, "absolute \(Int(x)),\(Int(y))") }
    func button(_ code: UInt32, pressed: Bool) -> Bool { record(.button, "button 0x\(String(code, radix: 16)) \(pressed ? "down" : "up")") }
    func scrollDiscrete(dx: Int32, dy: Int32) -> Bool { record(.scroll, "discrete \(dx),\(dy)") }
    func scroll(dx: Double, dy: Double) -> Bool { record(.scroll, "delta \(dx),\(dy)") }
    func key(_ code: UInt32, pressed: Bool) -> Bool { record(.keyboard, "key \(code) \(pressed ? "down" : "up")") }
    func touch(slot: UInt8, x: Double, y: Double) -> Bool { record(.touch, "touch \(slot) \(Int(x)),\(Int(y))") }
    func touchUp(slot: UInt8) -> Bool { record(.touch, "touch \(slot) up") }
    func frame() { frames += 1 }
}

final class NoTypist: CharacterTypist {
    var asked: [KeySym] = []
    func typeLacking(_ keysym: KeySym) throws(OutputError) {
        asked.append(keysym)
        throw OutputError(origin: "Wayland", message: "cannot type \(keysym)", kind: 6)
    }
    func restoreKeymap() throws(OutputError) {}
}

@Suite struct PortalOutputTests {
    @Test func pointerButtonsAndTheWheelBecomeLibeiEventsInOneFrame() {
        let d = RecordedDevices()
        let out = PortalOutput(devices: d)
        let errors = out.perform([.moveBy(dx: 3, dy: -2), .button(.left, pressed: true), .button(.left, pressed: false),
                                  .button(.right, pressed: true), .button(.wheelDown, pressed: true), .button(.wheelDown, pressed: false),
                                  .button(.wheelLeft, pressed: true), .smoothScroll(dx: 0, dy: -30)], typist: NoTypist())
        #expect(errors.isEmpty)
        #expect(d.calls == ["motion 3,-2", "button 0x110 down", "button 0x110 up", "button 0x111 down",
                            "discrete 0,120", "discrete -120,0", "delta 0.0,-2.5"])
        #expect(d.frames == 1)
        #expect(out.held == ["button 3"])
    }

    @Test func absoluteMotionAndTouchesStayInsideTheCompositorsRegions() {
        let d = RecordedDevices()
        let out = PortalOutput(devices: d)
        _ = out.perform([.moveTo(PixelPoint(x: 100, y: 200)), .moveTo(PixelPoint(x: 2500, y: 1060)), .moveTo(PixelPoint(x: -5, y: 5000)),
                         .touch(slot: 0, phase: .began, at: PixelPoint(x: 3300, y: 10))], typist: NoTypist())
        // Inside a region: as is; below the second monitor: onto its edge; off to the left: the first's corner.
        #expect(d.calls == ["absolute 100,200", "absolute 2500,1023", "absolute 0,1079", "touch 0 3199,10"])
        #expect(out.held == ["touches 0x1"])
    }

    @Test func keysArePressedByTheDesktopsKeymapAndWhatNoKeyMakesGoesToTheDesktop() {
        let d = RecordedDevices()
        let out = PortalOutput(devices: d)
        let typist = NoTypist()
        // US fallback keymap: "A" is shift + the a key (evdev 42, 30).
        let errors = out.perform([.type(KeySym(rawValue: 0x41)), .type(KeySym(rawValue: 0x20ac))], typist: typist)
        #expect(d.calls == ["key 42 down", "key 30 down", "key 30 up", "key 42 up"])
        #expect(typist.asked == [KeySym(rawValue: 0x20ac)])
        #expect(errors.count == 1 && errors[0].origin == "Wayland")
        #expect(out.held.isEmpty)
    }

    @Test func releaseAllLetsGoOfEverythingHeldInOneFrame() {
        let d = RecordedDevices()
        let out = PortalOutput(devices: d)
        _ = out.perform([.button(.middle, pressed: true), .key(.controlL, pressed: true), .touch(slot: 2, phase: .began, at: PixelPoint(x: 5, y: 5))],
                        typist: NoTypist())
        d.calls = []
        let frames = d.frames
        let (released, errors) = out.releaseAll()
        #expect(errors.isEmpty)
        #expect(Set(released) == ["touches 0x4", "button 2", "evdev key 29"])
        #expect(Set(d.calls) == ["touch 2 up", "button 0x112 up", "key 29 up"])
        #expect(d.frames == frames + 1)
        #expect(out.held.isEmpty)
        // Nothing more to release: nothing sent.
        d.calls = []
        #expect(out.releaseAll().released.isEmpty && d.calls.isEmpty)
    }

    @Test func aPausedDeviceIsAFailureAndWhatItHeldIsForgottenOnRelease() {
        let d = RecordedDevices()
        let out = PortalOutput(devices: d)
        _ = out.perform([.button(.left, pressed: true)], typist: NoTypist())
        d.paused = true
        let failed = out.perform([.button(.right, pressed: true), .moveBy(dx: 1, dy: 1)], typist: NoTypist())
        #expect(failed.count == 2 && failed.allSatisfy { $0.origin == "portal" && $0.message.contains("paused") })
        #expect(out.held == ["button 1"], "a press that found no device is not held")
        let (_, errors) = out.releaseAll()
        #expect(errors.count == 1)
        #expect(out.held.isEmpty, "forgotten all the same: the compositor ended it with the pause")
    }

    @Test func whatLibeiHasNoDeviceForIsRefusedNotPerformed() {
        let out = PortalOutput(devices: RecordedDevices())
        let errors = out.perform([.padContact(.began(slot: 0, at: DevicePoint(rawX: 1, rawY: 1))),
                                  .extraPointerMove(.first, PixelPoint(x: 1, y: 1))], typist: NoTypist())
        #expect(errors.count == 2 && errors.allSatisfy { $0.message.contains("not performed") })
    }

    @Test func theCapabilitiesAreWhatTheCompositorOffered() {
        let all = portalCapabilities(offered: [.pointer, .pointerAbsolute, .button, .scroll, .keyboard, .touch])
        #expect(all == OutputCapabilities(realTouches: true, penTablet: false, nativeTouchpad: false, smoothScroll: true, extraPointers: false))
        let bare = portalCapabilities(offered: [.pointer, .button, .keyboard])
        #expect(bare == OutputCapabilities())
    }
}
