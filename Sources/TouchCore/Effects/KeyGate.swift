// Where key chords are refused: at the place that emits them, before anything is pressed.

/// The desktop's keymap as the emitters of keys see it: a chord with a key the keymap lacks is not
/// emitted at all (none of its presses, none of its releases, nothing it surrounds), and a character no
/// key makes is not typed when the keymap cannot borrow a key for it. Each refusal is kept, in order,
/// until the Bridge takes it (a counted, bounded log line; the page's `error …` for its own command).
///
/// Every emitter of keys holds or is handed one: the Bridge's commands and the Slides panel's keys
/// (`TouchPipeline.keys`), the touchpad's swipes and pinch (`TouchpadMode`, handed to `GestureMachine`),
/// the presenter's taps and swipes (`PresenterMode`). With no keymap (nil: the shell does not know it)
/// every chord is tried. Allocates nothing unless a chord is refused.
public struct KeyGate: Sendable {
    /// One refusal: the key no key of the keymap produces, and whether it was a character to type.
    public struct Refusal: Hashable, Sendable {
        public var key: KeySym
        /// A character to type (`.type`), not a chord's key.
        public var typing: Bool
    }

    /// The desktop's keymap; nil: unknown, every chord is tried.
    public internal(set) var keymap: Keymap?
    /// The refusals since they were last taken, in the order of the emissions.
    public private(set) var refusals: [Refusal] = []

    public init(keymap: Keymap? = nil) { self.keymap = keymap }

    /// The first key of `chord` the keymap cannot press, or nil when it can press them all.
    func lacking(_ chord: KeyChord) -> KeySym? {
        guard let keymap else { return nil }
        var i = 0
        while i < chord.count {
            if !keymap.canPress(chord[i]) { return chord[i] }
            i += 1
        }
        return nil
    }

    /// Presses every key of `chord` in order, then releases them in reverse; or, when the keymap lacks
    /// one of them, emits nothing and keeps the refusal. Returns whether it emitted.
    @discardableResult
    public mutating func emit(_ chord: KeyChord, into actions: inout [OutputAction]) -> Bool {
        if let k = lacking(chord) {
            refusals.append(Refusal(key: k, typing: false))
            return false
        }
        chord.emit(into: &actions)
        return true
    }

    /// Presses `chord`, emits what `between` makes (a click, wheel clicks), then releases the chord in
    /// reverse; or, when the keymap lacks one of its keys, emits nothing at all, `between` included, and
    /// keeps the refusal. Returns whether it emitted.
    @discardableResult
    public mutating func emit(_ chord: KeyChord, around between: (inout [OutputAction]) -> Void,
                              into actions: inout [OutputAction]) -> Bool {
        if let k = lacking(chord) {
            refusals.append(Refusal(key: k, typing: false))
            return false
        }
        var i = 0
        while i < chord.count { actions.append(.key(chord[i], pressed: true)); i += 1 }
        between(&actions)
        while i > 0 { i -= 1; actions.append(.key(chord[i], pressed: false)) }
        return true
    }

    /// Types the character `key`; or, when no key makes it and the keymap cannot borrow one, emits
    /// nothing and keeps the refusal.
    public mutating func type(_ key: KeySym, into actions: inout [OutputAction]) {
        if let keymap, !keymap.canBorrow, !keymap.canPress(key) {
            refusals.append(Refusal(key: key, typing: true))
            return
        }
        actions.append(.type(key))
    }

    /// The desktop's keymap changed (or became known, or unknown: nil).
    public mutating func setKeymap(_ keymap: Keymap?) { self.keymap = keymap }

    /// Appends the refusals kept here to `other`'s, in order, and forgets them.
    mutating func move(to other: inout KeyGate) {
        guard !refusals.isEmpty else { return }
        other.refusals.append(contentsOf: refusals)
        refusals.removeAll(keepingCapacity: true)
    }

    /// Forgets the refusals (they were taken).
    mutating func clearRefusals() {
        if !refusals.isEmpty { refusals.removeAll(keepingCapacity: true) }
    }
}
