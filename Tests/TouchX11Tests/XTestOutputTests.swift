// XTestOutput request by request, against a stand-in for the X server (`XTestRequests`): what each action
// asks, what it records as held, what every release path lets go, and how a failing request is taken. The
// same output against a real X server is IntegrationTests' (Xvfb, xobserve); here a failure can be made
// at any request, which no X server does on demand.
import Testing
import TouchCore
import TouchOutput
@testable import TouchX11

/// The X server as XTestOutput sees it: every request in words, in order; `failing` makes the requests
/// whose words start with it fail.
final class RecordedServer: XTestRequests {
    var requests: [String] = []
    var failing: String?
    var isLost = false

    private func ask(_ words: String) throws(X11Error) {
        if let failing, words.hasPrefix(failing) {
            requests.append(words + " (failed)")
            throw .requestFailed(words)
        }
        requests.append(words)
    }

    func fakeMotion(to point: PixelPoint) throws(X11Error) { try ask("move to \(point.x),\(point.y)") }
    func fakeRelativeMotion(dx: Int32, dy: Int32) throws(X11Error) { try ask("move by \(dx),\(dy)") }
    func fakeButton(_ button: PointerButton, pressed: Bool) throws(X11Error) { try ask("button \(button.rawValue) \(pressed ? "down" : "up")") }
    func fakeKey(_ code: KeyCode, pressed: Bool) throws(X11Error) { try ask("key \(code.rawValue) \(pressed ? "down" : "up")") }
    func keyCode(for keysym: KeySym) throws(X11Error) -> KeyCode { KeyCode(rawValue: UInt8(truncatingIfNeeded: keysym.rawValue & 0x7F) | 0x80) }
    func fakeDeviceMotion(_ device: OpenedDevice, to point: PixelPoint) throws(X11Error) { try ask("device move") }
    func fakeDeviceMotion(_ device: OpenedDevice, dx: Int32, dy: Int32) throws(X11Error) { try ask("device move") }
    func fakeDeviceButton(_ device: OpenedDevice, _ button: PointerButton, pressed: Bool) throws(X11Error) { try ask("device button") }
    func fakeDeviceKey(_ device: OpenedDevice, _ code: KeyCode, pressed: Bool) throws(X11Error) { try ask("device key") }
    func flushXTest() throws(X11Error) { try ask("flush xcb") }
    func flush() throws(X11Error) { try ask("flush xlib") }
    func sync() throws(X11Error) { try ask("sync") }

    /// The requests since the last call.
    func take() -> [String] {
        defer { requests.removeAll() }
        return requests
    }
}

/// A typist that types nothing and says so.
final class NoTypist: CharacterTypist {
    var typed: [KeySym] = []
    func typeLacking(_ keysym: KeySym) throws(OutputError) { typed.append(keysym) }
    func restoreKeymap() throws(OutputError) {}
}

/// US letters a…z (evdev 30…), `A` as Shift + a, Shift_L and Control_L.
let letters = Keymap([
    (KeySym(rawValue: 0x61), KeyPosition(evdevCode: 30)), (KeySym(rawValue: 0x41), KeyPosition(evdevCode: 30, shift: true)),
    (KeySym(rawValue: 0x63), KeyPosition(evdevCode: 46)),
    (KeySym.shiftL, KeyPosition(evdevCode: 42)), (KeySym.controlL, KeyPosition(evdevCode: 29)),
], canBorrow: true)

@Suite struct XTestOutputTests {
    let server = RecordedServer()
    let typist = NoTypist()

    /// A click and a chord: each action is its request, in order, and a batch of XTest requests only is
    /// flushed once, by xcb; the chord's modifiers by their keys (X keycode = evdev + 8); nothing held after.
    @Test func eachActionIsItsRequestAndTheBatchIsFlushedOnce() {
        let output = XTestOutput(display: server)
        output.setKeymap(letters)
        let errors = output.perform([.moveTo(PixelPoint(x: 10, y: 20)), .button(.left, pressed: true), .button(.left, pressed: false)]
                                    + [.key(.controlL, pressed: true), .key(KeySym(rawValue: 0x63), pressed: true),
                                       .key(KeySym(rawValue: 0x63), pressed: false), .key(.controlL, pressed: false)], typist: typist)
        #expect(errors.isEmpty)
        #expect(server.take() == ["move to 10,20", "button 1 down", "button 1 up", "key 37 down", "key 54 down", "key 54 up",
                                  "key 37 up", "flush xcb"])
        #expect(output.held.isEmpty && output.pressedButtons.isEmpty)
    }

    /// A key on its level: `A` is Shift and the `a` key, Shift let go after it.
    @Test func aKeyOnTheShiftLevelIsPressedWithShift() {
        let output = XTestOutput(display: server)
        output.setKeymap(letters)
        _ = output.perform([.key(KeySym(rawValue: 0x41), pressed: true)], typist: typist)
        #expect(server.take() == ["key 50 down", "key 38 down", "flush xcb"])
        #expect(output.held == ["keycode 50", "keycode 38"])
        _ = output.perform([.key(KeySym(rawValue: 0x41), pressed: false)], typist: typist)
        #expect(server.take() == ["key 38 up", "key 50 up", "flush xcb"])
        #expect(output.held.isEmpty)
    }

    /// What is held when the sender goes is released by `releaseAll`, buttons first, keys last pressed
    /// first, and the server is waited for; what it released is said for the log.
    @Test func releaseAllLetsGoOfEverythingHeldAndWaits() {
        let output = XTestOutput(display: server)
        output.setKeymap(letters)
        _ = output.perform([.button(.left, pressed: true), .button(.right, pressed: true), .key(.controlL, pressed: true),
                            .key(KeySym(rawValue: 0x61), pressed: true)], typist: typist)
        _ = server.take()
        let (released, errors) = output.releaseAll()
        #expect(errors.isEmpty)
        #expect(server.take() == ["button 1 up", "button 3 up", "key 38 up", "key 37 up", "sync"])
        #expect(released == ["button 1", "button 3", "keycode 38", "keycode 37"], "\(released)")
        #expect(output.held.isEmpty)
        // Twice: nothing more.
        _ = output.releaseAll()
        #expect(server.take() == ["sync"])
    }

    /// A press the server refused is not recorded as held (no release follows for it), and the rest of
    /// the batch is still tried and flushed; a release that fails is forgotten all the same, so nothing
    /// is released twice.
    @Test func aFailedPressIsNotHeldAndTheBatchGoesOn() {
        let output = XTestOutput(display: server)
        server.failing = "button 3 down"
        let errors = output.perform([.button(.right, pressed: true), .button(.left, pressed: true)], typist: typist)
        #expect(errors.count == 1)
        #expect(server.take() == ["button 3 down (failed)", "button 1 down", "flush xcb"])
        #expect(output.pressedButtons.holds(.left) && !output.pressedButtons.holds(.right))
        server.failing = "button 1 up"
        #expect(output.perform([.button(.left, pressed: false)], typist: typist).count == 1)
        #expect(output.pressedButtons.isEmpty)
        server.failing = nil
        _ = server.take()
        _ = output.releaseAll()
        #expect(server.take() == ["sync"])
    }

    /// What XTest cannot do (touches, the pen, smooth scrolling) is a counted failure each; the batch
    /// goes on, and is flushed by Xlib since it was not XTest requests only.
    @Test func whatXTestCannotDoIsAFailureAndTheRestGoes() {
        let output = XTestOutput(display: server)
        let errors = output.perform([.smoothScroll(dx: 0, dy: 30), .moveBy(dx: 3, dy: -4)], typist: typist)
        #expect(errors.count == 1)
        #expect(server.take() == ["move by 3,-4", "flush xlib"])
    }

    /// With the connection lost nothing is sent or released, and nothing is claimed released.
    @Test func aLostConnectionSendsAndReleasesNothing() {
        let output = XTestOutput(display: server)
        _ = output.perform([.button(.left, pressed: true)], typist: typist)
        _ = server.take()
        server.isLost = true
        let (released, errors) = output.releaseAll()
        #expect(released.isEmpty && errors.isEmpty && server.take().isEmpty)
    }

    /// With no keymap known a `.key` goes to the first keycode that carries its keysym; a character no
    /// key makes goes to the typist (the desktop's borrowed keycode), in the batch's order.
    @Test func withoutAKeymapAKeyGoesToItsFirstKeycodeAndTypingToTheTypist() {
        let output = XTestOutput(display: server)
        _ = output.perform([.key(KeySym(rawValue: 0x61), pressed: true), .key(KeySym(rawValue: 0x61), pressed: false),
                            .type(KeySym(rawValue: 0x20AC))], typist: typist)
        #expect(server.take() == ["key 225 down", "key 225 up", "flush xlib"])
        #expect(typist.typed == [KeySym(rawValue: 0x20AC)])
        #expect(output.held.isEmpty)
    }
}
