// What the sender holds, and its one release: each input's actions recorded by `HeldRecord`, and the
// chords the desktop's keymap cannot press refused before anything is pressed.

extension Bridge {
    /// The desktop's keymap is `keymap` (the shell read it at start, or it changed; nil: unknown, every
    /// chord is tried). From now on a chord whose keys it lacks is refused before anything is pressed.
    public mutating func keymapChanged(_ keymap: Keymap?, at now: Instant, into effects: inout BridgeEffects) {
        begin(at: now, effects)
        self.keymap = keymap
        finish(into: &effects)
    }

    /// A new input: its actions start at the end of `effects`.
    mutating func begin(at now: Instant, _ effects: BridgeEffects) {
        batchObserved = effects.actions.count
        batchTime = max(batchTime, now)
        answerRefusal = false
        refusedInBatch = nil
        refusedTyping = false
    }

    /// Every contact cancelled, the machines released, then whatever the record still holds.
    mutating func releaseEverything(keepingCancelled: Bool = false, into effects: inout BridgeEffects) {
        core.releaseAll(keepingCancelled: keepingCancelled, into: &effects.actions)
        settle(into: &effects)
    }

    /// When the core released everything (a mode switch, a setting, silence, `releaseAll`), the record
    /// releases what is left, right after the machines' own releases.
    mutating func settle(into effects: inout BridgeEffects) {
        guard core.releases != coreReleasesSeen else { return }
        coreReleasesSeen = core.releases
        observePending(in: &effects)
        held.release(at: batchTime, into: &effects.actions)
        batchObserved = effects.actions.count
    }

    /// Checks the chords among the actions `held` has not seen yet against the keymap, then records them.
    mutating func observePending(in effects: inout BridgeEffects) {
        if let keymap { refuseUnpressable(from: batchObserved, keymap, in: &effects) }
        for i in batchObserved..<effects.actions.count { held.observe(effects.actions[i], at: batchTime) }
        batchObserved = effects.actions.count
    }

    /// Removes every chord (a run of key presses, up to the last release of its keys, with what lies
    /// between: a click's button) that has a key the keymap lacks, and every character to type that no
    /// key produces when the keymap cannot borrow one; logs it, bounded. The hot path only reads.
    mutating func refuseUnpressable(from start: Int, _ keymap: Keymap, in effects: inout BridgeEffects) {
        var i = start
        while i < effects.actions.count {
            let refused: KeySym
            var typing = false
            switch effects.actions[i] {
            case .key(let k, true) where !keymap.canPress(k):
                refused = k
                var runStart = i
                while runStart > start, case .key(_, true) = effects.actions[runStart - 1] { runStart -= 1 }
                var runEnd = i + 1
                while runEnd < effects.actions.count, case .key(_, true) = effects.actions[runEnd] { runEnd += 1 }
                var pending: [KeySym] = []
                for j in runStart..<runEnd { if case .key(let k, _) = effects.actions[j] { pending.append(k) } }
                var spanEnd = runEnd, j = runEnd
                while j < effects.actions.count && !pending.isEmpty {
                    if case .key(let k, false) = effects.actions[j], let p = pending.firstIndex(of: k) {
                        pending.remove(at: p)
                        spanEnd = j + 1
                    }
                    j += 1
                }
                effects.actions.removeSubrange(runStart..<spanEnd)
                i = runStart
            case .key(let k, false) where !keymap.canPress(k) && !held.holds(k):
                // The release of a press refused earlier.
                effects.actions.remove(at: i)
                continue
            case .type(let k) where !keymap.canBorrow && !keymap.canPress(k):
                refused = k
                typing = true
                effects.actions.remove(at: i)
            default:
                i += 1
                continue
            }
            refusedInBatch = refused
            refusedTyping = typing
            if let report = chordLog.record(reasonIndex: 0, at: batchTime) {
                effects.events.append(.chordRefused(refused, report))
            }
        }
    }
}
