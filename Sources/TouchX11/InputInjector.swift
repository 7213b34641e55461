import TouchCore

/// Performs the core's `OutputAction`s on an `XDisplay` through XTest, and remembers what it has
/// pressed so that every exit path can release it.
///
/// Not thread-safe: owned by the same single thread as the `XDisplay`.
public final class InputInjector {
    public let display: XDisplay
    /// Bit `n` set = pointer button `n` is held down by us.
    public private(set) var pressedButtons: UInt32 = 0

    public init(display: XDisplay) {
        self.display = display
    }

    /// Whether any button we pressed is still down.
    public var holdsAnything: Bool { pressedButtons != 0 }

    /// Performs `actions` in order, then flushes once. Stops at the first failing request.
    public func perform(_ actions: [OutputAction]) throws(X11Error) {
        guard !actions.isEmpty else { return }
        for action in actions {
            switch action {
            case .moveTo(let point):
                try display.fakeMotion(to: point)
            case .button(let button, let pressed):
                try display.fakeButton(button, pressed: pressed)
                let bit = UInt32(1) << UInt32(button.rawValue & 31)
                if pressed { pressedButtons |= bit } else { pressedButtons &= ~bit }
            }
        }
        try display.flush()
    }

    /// Releases every button we hold, and waits until the server has processed the releases.
    /// Called on every exit path before anything else. Returns the buttons it released.
    @discardableResult
    public func releaseAll() throws(X11Error) -> [PointerButton] {
        var released: [PointerButton] = []
        for n in UInt8(1)...31 where pressedButtons & (UInt32(1) << UInt32(n)) != 0 {
            let button = PointerButton(rawValue: n)
            try display.fakeButton(button, pressed: false)
            released.append(button)
        }
        pressedButtons = 0
        try display.sync()
        return released
    }
}
