import TouchCore
import TouchOutput

/// The Wayland session as the daemon's `Desktop`: the outputs as monitors (the screen is the box around
/// them, in the compositor's logical layout), the seat keyboard's keymap, the connection to watch. No
/// overlay of its own (`OverlaidDesktop` lends Xwayland's) and nothing to borrow: a client cannot change
/// the compositor's keymap, so a character no key makes is a counted refusal.
extension WaylandDesktop: Desktop {
    public var description: String { "Wayland display \(displayName)" }

    /// The box around every output's logical rectangle, and the outputs as monitors (none primary: the
    /// default `--monitor primary` is then the whole box). With no output yet, 1920×1080 at 0,0.
    public func screen() throws(OutputError) -> (screen: PixelRect, monitors: [Monitor]) {
        let rects = outputs.map(\.logical).filter { !$0.isEmpty }
        guard let first = rects.first else { return (AbsentDesktop.defaultSize, []) }
        var x0 = first.x, y0 = first.y, x1 = first.x + first.width, y1 = first.y + first.height
        for r in rects.dropFirst() {
            x0 = min(x0, r.x); y0 = min(y0, r.y)
            x1 = max(x1, r.x + r.width); y1 = max(y1, r.y + r.height)
        }
        return (PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0), outputs.map(\.monitor))
    }

    /// The keymap the compositor last sent the seat's keyboard (its active keyboard's: sway sends each
    /// keyboard's own when another one types). nil until one came; a keymap that could not be read is
    /// an error.
    public func keymap(keyboardNamed: String?) throws(OutputError) -> DesktopKeymap? {
        if let keymap { return DesktopKeymap(keymap: keymap, source: "the compositor's keymap (wl_keyboard)", ofNamedKeyboard: false) }
        if let keymapProblem { throw OutputError(origin: "Wayland", message: keymapProblem.description, kind: 6) }
        return nil
    }

    public var descriptors: [Int32] { fileDescriptor >= 0 && !lost ? [fileDescriptor] : [] }

    public func readIncoming() -> DesktopChanges {
        var changes = DesktopChanges()
        guard !lost else { return changes }
        do {
            let seen = try readEvents()
            changes.screenChanged = seen.contains(.outputs)
            changes.keymapChanged = seen.contains(.keymap)
        } catch {
            lost = true
            changes.errors.append(OutputError(origin: "Wayland", message: error.description, kind: 6))
        }
        return changes
    }

    public var isLost: Bool { lost }

    /// A Wayland client cannot give a key a new keysym (the compositor owns the keymap): refused, counted
    /// by the caller.
    public func typeLacking(_ keysym: KeySym) throws(OutputError) {
        throw OutputError(origin: "Wayland", message: "no key makes \(KeyNames.name(of: keysym)) in the compositor's keymap, and a Wayland client cannot change it: not typed", kind: 6)
    }

    public func close() -> [OutputError] {
        closeConnection()
        return []
    }
}
