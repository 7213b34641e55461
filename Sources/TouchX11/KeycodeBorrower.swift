import TouchCore

/// What the borrower asks of the X server's keyboard map and root window: `XDisplay`'s calls of those names,
/// the one conformance that runs for real. The random-sequence property test (TouchCoreTests) runs the
/// borrower against a model keyboard of its own that a third party (`xmodmap`, `setxkbmap`) changes between
/// any two steps, which no X server could do a million times.
public protocol KeyboardMapping: AnyObject {
    /// The highest keycode that carries no keysym now; nil when every one carries some.
    func emptyKeyCode() throws(X11Error) -> KeyCode?
    /// The keysyms `code` carries now, `NoSymbol` (0) where a level has none.
    func keysyms(of code: KeyCode) throws(X11Error) -> [UInt]
    /// Maps `code` to `keysyms` (none: empty).
    func setKeysyms(_ keysyms: [UInt], of code: KeyCode) throws(X11Error)
    /// A press or a release of `code`.
    func fakeKey(_ code: KeyCode, pressed: Bool) throws(X11Error)
    /// Waits until the server has handled every request sent so far.
    func sync() throws(X11Error)
    /// The atom named `name`, made if needed.
    func atom(_ name: String) throws(X11Error) -> UInt
    /// The root window's CARDINAL property `atom`; nil when it has none.
    func rootCardinals(_ atom: UInt) throws(X11Error) -> [UInt32]?
    /// Sets the root window's CARDINAL property `atom` to `values`.
    func setRootCardinals(_ atom: UInt, _ values: [UInt32]) throws(X11Error)
    /// Deletes the root window's property `atom`.
    func deleteRootProperty(_ atom: UInt) throws(X11Error)
}

extension XDisplay: KeyboardMapping {}

/// Types a keysym no key produces by borrowing an empty keycode for the moment, and gives back what it
/// borrowed:
///
/// - it borrows only a keycode that is empty (carries no keysym at all) when it borrows, read from the
///   server then, not a spare noted at start: a keycode the user mapped since (`xmodmap -e "keycode 248 =
///   F13"`) is theirs;
/// - it types again on a keycode it holds only while that keycode still carries what it wrote there;
///   one the user changed meanwhile is theirs from then on: forgotten, not restored, and the next keysym
///   borrows another empty keycode;
/// - it takes turns on up to `maxBorrowed` keycodes (why: `maxBorrowed`), and a keysym it already
///   carries is typed with no remapping;
/// - giving back puts the original keysyms (none) back only on a keycode that still carries what it
///   wrote, and leaves alone one the user changed.
///
/// What it borrowed is also noted on the root window (`remappedProperty`) before it changes anything,
/// so that the next start on that X server can give it back after a crash (`recoverLeftovers`).
///
/// Presses only the keycode it borrowed, and releases it in the same call: nothing stays pressed.
/// Not thread-safe: owned by the same single thread as the `XDisplay`.
public final class KeycodeBorrower {
    public let display: any KeyboardMapping

    /// One keycode borrowed: what it carried before (given back), and what the borrower wrote there
    /// last (to know whether it is still the borrower's).
    public struct Borrowed: Sendable {
        public var code: KeyCode
        public var original: [UInt]
        public var wrote: [UInt]
    }

    /// The keycodes borrowed now, in borrowing order.
    public private(set) var borrowed: [Borrowed] = []

    /// The root window property where the borrowed keycodes are noted while they are borrowed: for
    /// each, its keycode, the number of its original keysyms, then those keysyms (CARDINAL, format 32).
    /// Written before the first change, deleted once everything is given back.
    public static let remappedProperty = "_TOUCHBRIDGE_REMAPPED"

    public init(display: any KeyboardMapping) {
        self.display = display
    }

    /// The keycodes borrowed now (the keymap leaves them out while they are).
    public var codes: Set<KeyCode> { Set(borrowed.map(\.code)) }

    /// Whether the keysyms `now` read back from the server are what was written (`wrote`): the same
    /// keysyms, whatever the padding with `NoSymbol` the server adds to fill its levels.
    static func carries(_ now: [UInt], _ wrote: [UInt]) -> Bool {
        let a = now.filter { $0 != 0 }, b = wrote.filter { $0 != 0 }
        return !b.isEmpty && Set(a) == Set(b)
    }

    /// The most keycodes borrowed at once. Typing takes turns on them: a client that reads a burst of
    /// key events at once looks each key up in the keymap as it is after the whole burst (Xlib applies
    /// XKB's map changes as it reads them), so remapping one keycode for the next character would turn
    /// the character before it into that one (日本 came out as 本本 in xterm). With turns, a keycode is
    /// remapped only after 15 other borrowed characters.
    public static let maxBorrowed = 16

    /// Which of `borrowed` is remapped next when a keysym needs a keycode and no more may be borrowed.
    private var nextTurn = 0

    /// Types `keysym` as a press and a release on a borrowed keycode mapped to it (any Unicode
    /// character: keysym 0x01000000 + code point). Nothing stays pressed.
    public func type(_ keysym: KeySym) throws(X11Error) {
        let symbols = [UInt(keysym.rawValue), UInt(keysym.rawValue)]
        let index: Int
        var fresh = false
        if let i = borrowed.firstIndex(where: { $0.wrote == symbols }) {
            index = i  // already carries it: no remapping
        } else if borrowed.count < Self.maxBorrowed, let empty = try display.emptyKeyCode() {
            if let i = borrowed.firstIndex(where: { $0.code == empty }) {
                // One already borrowed and still empty (writing it failed): not borrowed twice.
                index = i
            } else {
                // Noted here and on the root window before it changes (the server handles this connection's
                // requests in order, so the note is there before the change).
                borrowed.append(Borrowed(code: empty, original: try display.keysyms(of: empty).filter { $0 != 0 }, wrote: []))
                try noteBorrowed()
                index = borrowed.count - 1
                fresh = true
            }
        } else {
            guard !borrowed.isEmpty else { throw .requestFailed("no empty keycode to type \(keysym) on") }
            index = nextTurn % borrowed.count
            nextTurn = (index + 1) % borrowed.count
        }
        if !fresh, !(try owns(borrowed[index])) {
            // The user mapped something of their own there meanwhile: it is theirs now, and this keysym
            // takes another turn.
            borrowed.remove(at: index)
            try noteBorrowed()
            return try type(keysym)
        }
        if borrowed[index].wrote != symbols {
            // What it wrote is noted once written: a failed write leaves the keycode as it was, and its entry
            // saying so.
            try display.setKeysyms(symbols, of: borrowed[index].code)
            borrowed[index].wrote = symbols
            try display.sync()
        }
        try display.fakeKey(borrowed[index].code, pressed: true)
        try display.fakeKey(borrowed[index].code, pressed: false)
        // The next symbol may remap a keycode: the server must have handled these events first.
        try display.sync()
    }

    /// Whether `entry`'s keycode is still the borrower's: it carries what the borrower wrote there, or,
    /// nothing written yet (the write failed), it is as it was when borrowed.
    private func owns(_ entry: Borrowed) throws(X11Error) -> Bool {
        let now = try display.keysyms(of: entry.code)
        return entry.wrote.isEmpty ? now.filter { $0 != 0 } == entry.original : Self.carries(now, entry.wrote)
    }

    /// Forgets the borrowed keycodes the user mapped meanwhile (they no longer carry what the borrower
    /// wrote): they are the user's, never restored, and back in the keymap. Called when the keymap
    /// changed, before it is read. Returns the keycodes forgotten.
    @discardableResult
    public func forgetTheUsers() throws(X11Error) -> [KeyCode] {
        var forgotten: [KeyCode] = []
        for entry in borrowed where !(try owns(entry)) { forgotten.append(entry.code) }
        guard !forgotten.isEmpty else { return [] }
        borrowed.removeAll { forgotten.contains($0.code) }
        try noteBorrowed()
        return forgotten
    }

    /// Gives back every keycode borrowed that still carries what the borrower wrote (its original keysyms
    /// back), leaves alone one the user changed meanwhile, and removes the note on the root window.
    /// Returns what it did, for the log. Nothing when none is borrowed.
    @discardableResult
    public func restore() throws(X11Error) -> [String] {
        guard !borrowed.isEmpty else { return [] }
        // Past a failing one: what could not be put back stays noted (here and on the root window, for
        // the next start), the rest is given back.
        var firstError: X11Error?
        var left: [Borrowed] = []
        var done: [String] = []
        for entry in borrowed {
            do throws(X11Error) {
                if entry.wrote.isEmpty {
                    continue  // nothing was written there
                } else if Self.carries(try display.keysyms(of: entry.code), entry.wrote) {
                    try display.setKeysyms(entry.original, of: entry.code)
                    done.append("keycode \(entry.code.rawValue) restored")
                } else {
                    done.append("keycode \(entry.code.rawValue) left as the user mapped it")
                }
            } catch {
                if firstError == nil { firstError = error }
                left.append(entry)
            }
        }
        borrowed = left
        if let firstError {
            try? noteBorrowed()
            throw firstError
        }
        try display.deleteRootProperty(try display.atom(Self.remappedProperty))
        return done
    }

    /// Writes `borrowed` to the root window's note (deletes it when none is borrowed).
    private func noteBorrowed() throws(X11Error) {
        let atom = try display.atom(Self.remappedProperty)
        if borrowed.isEmpty {
            try display.deleteRootProperty(atom)
        } else {
            try display.setRootCardinals(atom, Self.encode(borrowed.map { ($0.code, $0.original) }))
        }
    }

    /// The property's values for `entries`.
    static func encode(_ entries: [(code: KeyCode, keysyms: [UInt])]) -> [UInt32] {
        var values: [UInt32] = []
        for (code, keysyms) in entries {
            values.append(UInt32(code.rawValue))
            values.append(UInt32(keysyms.count))
            values += keysyms.map { UInt32(truncatingIfNeeded: $0) }
        }
        return values
    }

    /// The entries in the property's `values`; stops at the first malformed one.
    static func decode(_ values: [UInt32]) -> [(code: KeyCode, keysyms: [UInt])] {
        var entries: [(code: KeyCode, keysyms: [UInt])] = []
        var i = 0
        while i + 1 < values.count {
            let code = values[i], n = Int(values[i + 1])
            guard (8...255).contains(code), n <= 64, i + 2 + n <= values.count else { break }
            entries.append((KeyCode(rawValue: UInt8(code)), values[(i + 2)..<(i + 2 + n)].map { UInt($0) }))
            i += 2 + n
        }
        return entries
    }

    /// The keycodes a run that could not give them back (killed, crashed) noted in `remappedProperty`,
    /// given their keysyms back; the note goes. Returns what it did, for the log.
    @discardableResult
    public static func recoverLeftovers(on display: any KeyboardMapping) throws(X11Error) -> [String] {
        var done: [String] = []
        let atom = try display.atom(remappedProperty)
        if let values = try display.rootCardinals(atom) {
            for (code, keysyms) in decode(values) {
                try display.setKeysyms(keysyms, of: code)
                done.append("keycode \(code.rawValue) restored")
            }
            try display.deleteRootProperty(atom)
        }
        try display.sync()
        return done
    }
}
