import TouchCore
import TouchOutput

/// The XTest input output: performs the Bridge's input actions on an X display through XTest, and with
/// `--multitouch` drives the extra fingers through their own XInput2 master pointers. It works on the
/// X11 desktop's connection and so lives no longer than it: made after the desktop, closed before it.
///
/// Keys by level: a `.key` or `.type` is pressed on the key that produces its keysym in the desktop's
/// keymap (`setKeymap`, the same reading of X's map the uinput keyboard presses by), with Shift and/or
/// AltGr held around it when its level needs them (`KeyPresses`), so `1` on fr is Shift and the `&`
/// key. A `.type` of a character no key produces goes to the typist (the X11 desktop borrows an empty
/// keycode for it, on this same connection, so the order of the batch is kept); so does
/// `.restoreKeymap`. It performs no touch, touchpad contact or smooth scroll (those are uinput's): each
/// is a counted failure.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
public final class XTestOutput: InputOutput {
    private let display: XDisplay
    private let injector: InputInjector
    private let fingers: FingerPointers?
    private var closed = false

    /// Works on `desktop`'s connection; with `multitouch`, gets ready to make the fingers' masters.
    public init(desktop: X11Desktop, multitouch: Bool) throws(OutputError) {
        display = desktop.display
        do throws(X11Error) {
            fingers = multitouch ? try FingerPointers(display: display) : nil
        } catch {
            throw error.output
        }
        injector = InputInjector(display: display, fingers: fingers)
    }

    public var name: String { "xtest" }

    public var keyboardName: String? { nil }

    public func setScreen(width: Int32, height: Int32) throws(OutputError) {}

    /// The desktop's keymap: where each keysym is and which modifiers its level needs.
    public func setKeymap(_ keymap: Keymap) { injector.keymap = keymap }

    public func perform(_ actions: [OutputAction], typist: any CharacterTypist) -> [OutputError] {
        var errors: [OutputError] = []
        guard !actions.isEmpty, !closed else { return errors }
        for action in actions {
            switch action {
            case .overlay:
                continue  // drawing, not input: the desktop's overlay
            case .type(let keysym):
                do throws(X11Error) {
                    if !(try injector.typeOnItsKey(keysym)) {
                        do throws(OutputError) { try typist.typeLacking(keysym) } catch { errors.append(error) }
                    }
                } catch {
                    errors.append(error.output)
                }
            case .restoreKeymap:
                do throws(OutputError) { try typist.restoreKeymap() } catch { errors.append(error) }
            case .moveTo, .moveBy, .button, .key, .fingerMoveTo, .fingerButton, .touch, .smoothScroll, .padContact, .pen:
                do throws(X11Error) { try injector.perform(action) } catch { errors.append(error.output) }
            }
        }
        do throws(X11Error) { try display.flush() } catch { errors.append(error.output) }
        return errors
    }

    /// What is held down now (buttons, keys, the fingers' buttons), in words.
    public var held: [String] {
        var held: [String] = []
        for n in UInt8(1)...31 where injector.pressedButtons & (UInt32(1) << UInt32(n)) != 0 {
            held.append(PointerButton(rawValue: n).description)
        }
        for code in injector.pressedKeys { held.append("keycode \(code.rawValue)") }
        if fingers?.holdsAnything == true { held.append("the fingers' buttons") }
        return held
    }

    /// Releases every button and key still held, and the fingers' buttons. On a lost connection
    /// nothing can be sent: nothing is released.
    public func releaseAll() -> (released: [String], errors: [OutputError]) {
        guard !closed, !display.isLost else { return ([], []) }
        do throws(X11Error) { return (try injector.releaseAll(), []) } catch { return ([], [error.output]) }
    }

    /// Releases what is held and removes the fingers' masters. Safe to call twice.
    public func close() -> (removed: [String], errors: [OutputError]) {
        guard !closed else { return ([], []) }
        var errors = releaseAll().errors
        closed = true
        var removed: [String] = []
        if let fingers, !display.isLost {
            do throws(X11Error) { removed = try fingers.removeAll().map { "\"\($0)\"" } } catch { errors.append(error.output) }
        }
        return (removed, errors)
    }
}
