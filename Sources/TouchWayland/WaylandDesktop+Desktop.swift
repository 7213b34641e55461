import TouchCore
import TouchOutput

/// The Wayland session as the daemon's `Desktop`: the outputs as monitors (the screen is the box around
/// them, in the compositor's logical layout), the seat keyboard's keymap, the connection to watch. No
/// overlay of its own (`OverlaidDesktop` lends Xwayland's). A client cannot change the compositor's
/// keymap: a character no key makes is typed on touchbridge's virtual keyboard where the compositor
/// offers one (`zwp_virtual_keyboard_v1`), and is a counted refusal where it does not (GNOME).
extension WaylandDesktop: Desktop {
    public var description: String { "Wayland display \(displayName)" }

    /// The box around every output's logical rectangle, moved to 0,0 (as an X screen is), and the
    /// outputs as monitors in it (none primary: the default `--monitor primary` is then the whole box).
    /// The touchscreen device spans the box; a compositor that maps it onto its whole layout (sway,
    /// unless told otherwise) puts its top-left corner at the layout's, wherever that is. With no
    /// output yet, 1920×1080.
    public func screen() throws(OutputError) -> (screen: PixelRect, monitors: [Monitor]) {
        let rects = outputs.map(\.logical).filter { !$0.isEmpty }
        guard let first = rects.first else { return (AbsentDesktop.defaultSize, []) }
        var x0 = first.x, y0 = first.y, x1 = first.x + first.width, y1 = first.y + first.height
        for r in rects.dropFirst() {
            x0 = min(x0, r.x); y0 = min(y0, r.y)
            x1 = max(x1, r.x + r.width); y1 = max(y1, r.y + r.height)
        }
        let monitors = outputs.map { o in
            Monitor(name: o.name, rect: PixelRect(x: o.logical.x - x0, y: o.logical.y - y0, width: o.logical.width, height: o.logical.height),
                    isPrimary: false)
        }
        return (PixelRect(x: 0, y: 0, width: x1 - x0, height: y1 - y0), monitors)
    }

    /// The keymap the compositor last sent the seat's keyboard (its active keyboard's: sway sends each
    /// keyboard's own when another one types). nil until one came; a keymap that could not be read is
    /// an error.
    public func keymap(keyboardNamed: String?) throws(OutputError) -> DesktopKeymap? {
        if var keymap {
            // A character no key makes can be typed when the compositor offers a virtual keyboard.
            keymap.canBorrow = canTypeLacking
            return DesktopKeymap(keymap: keymap, source: "the compositor's keymap (wl_keyboard)", ofNamedKeyboard: false)
        }
        if let keymapProblem { throw OutputError(origin: "Wayland", message: keymapProblem.description, kind: 6) }
        return nil
    }

    /// The compositor's connection, and the shared monitor's stream when one is attached.
    public var descriptors: [Int32] {
        guard fileDescriptor >= 0, !lost else { return [] }
        return [fileDescriptor] + (cast.map { [$0.descriptor] } ?? [])
    }

    public func readIncoming() -> DesktopChanges {
        var changes = DesktopChanges()
        guard !lost else { return changes }
        if let cast {
            // A newer picture, or the stream failed (the next frame says why).
            let news = cast.dispatch()
            changes.viewDamaged = news.newPicture || news.failure != nil
        }
        do {
            let seen = try readEvents()
            changes.screenChanged = seen.contains(.outputs)
            changes.keymapChanged = seen.contains(.keymap)
            changes.viewDamaged = changes.viewDamaged || seen.contains(.view)
        } catch {
            lost = true
            changes.errors.append(OutputError(origin: "Wayland", message: error.description, kind: 6))
        }
        return changes
    }

    public var isLost: Bool { lost }

    /// The screen copies' live view (`attachView`), when the compositor offers screen copy.
    public var view: (any ViewCapture)? { lost ? nil : pictureView }

    public var seats: (any PersonSeats)? { lost ? nil : personSeats }

    /// Events that `typeLacking`'s round trip read and nobody reported yet.
    public var hasQueuedEvents: Bool { !lost && hasPendingChanges }

    /// Types `keysym`, which no key of the compositor's keymap makes, on touchbridge's virtual keyboard
    /// (`WaylandDesktop.typeLacking`). Where the compositor offers none (GNOME's Mutter), refused:
    /// counted by the caller (the Bridge refuses it first, since the keymap then says `canBorrow` false).
    public func typeLacking(_ keysym: KeySym) throws(OutputError) {
        do throws(WaylandError) {
            try typeLacking(keysym.rawValue)
        } catch {
            if case .connectionLost = error { lost = true }
            let why = error == .typingUnavailable ? "\(error)" : "the virtual keyboard: \(error)"
            throw OutputError(origin: "Wayland", message: "\(KeyNames.name(of: keysym)) not typed: \(why)", kind: 6)
        }
    }

    /// Gives the virtual keyboard the compositor's keymap back (the Bridge's `.restoreKeymap`).
    public func restoreKeymap() throws(OutputError) {
        guard !lost else { return }
        do throws(WaylandError) {
            try restoreTyping()
        } catch {
            if case .connectionLost = error { lost = true }
            throw OutputError(origin: "Wayland", message: "giving the virtual keyboard the compositor's keymap back: \(error)", kind: 6)
        }
    }

    public func close() -> [OutputError] {
        closeConnection()
        return []
    }
}
