// What the sender holds, and its one release: each input's actions recorded by `HeldRecord`, and the
// chords refused where they were emitted taken, logged and answered.

extension Bridge {
    /// The desktop's keymap is `keymap` (the shell read it at start, or it changed; nil: unknown, every
    /// chord is tried). From now on a chord whose keys it lacks is refused before anything is pressed.
    public mutating func keymapChanged(_ keymap: Keymap?, at now: Instant, into effects: inout BridgeEffects) {
        begin(at: now, effects)
        self.keymap = keymap
        core.setKeymap(keymap)
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

    /// Takes the chords refused where they were emitted (`KeyGate`: the commands', the Slides panel's,
    /// the machine's), each logged, bounded, the last kept for a web command's answer; then records the
    /// actions `held` has not seen yet.
    mutating func observePending(in effects: inout BridgeEffects) {
        core.collectRefusals()
        if !core.gate.refusals.isEmpty {
            for refusal in core.gate.refusals {
                refusedInBatch = refusal.key
                refusedTyping = refusal.typing
                if let report = chordLog.record(reasonIndex: 0, at: batchTime) {
                    effects.events.append(.chordRefused(refusal.key, report))
                }
            }
            core.gate.clearRefusals()
        }
        for i in batchObserved..<effects.actions.count { held.observe(effects.actions[i], at: batchTime) }
        batchObserved = effects.actions.count
    }
}
