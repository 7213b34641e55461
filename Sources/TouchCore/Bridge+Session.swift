// The Bridge's admission: the session's answer for a sender, and what a new sender or the sender's going
// undoes (what was held, the page's mode and tuning).

extension Bridge {
    /// The session's answer for `sender`; on a new sender, what the previous one held is released and
    /// the configured mode and settings come back.
    mutating func admit(_ sender: Sender, at now: Instant, into effects: inout BridgeEffects) -> Bool {
        switch session.admit(sender, at: now) {
        case .busy:
            if sender.transport == .web { effects.reply = .busy }
            if let report = busyLog.record(reasonIndex: 0, at: now) {
                effects.events.append(.refusedBusy(sender.address, sender.transport, report))
            }
            return false
        case .accepted(let isNewSender):
            if isNewSender {
                releaseEverything(into: &effects)
                restoreConfigured(at: now, into: &effects)
                if let report = connectedLog.record(reasonIndex: 0, at: now) {
                    effects.events.append(.senderConnected(sender.address, sender.transport, report))
                }
            }
            return true
        }
    }

    /// A page's mode and tuning last while it holds the session: when it goes or another sender takes
    /// over, the configured ones come back. Returns whether the mode changed.
    @discardableResult
    mutating func restoreConfigured(at now: Instant, updatingOverlay: Bool = true, into effects: inout BridgeEffects) -> Bool {
        if tuned {
            tuned = false
            core.restoreTuning(from: configuredTouchpad, into: &effects.actions)
            settle(into: &effects)
        }
        guard core.configuration.mode != configuredMode else { return false }
        core.setMode(configuredMode, into: &effects.actions)
        settle(into: &effects)
        if updatingOverlay { updateOverlay(into: &effects) }
        if let report = restoredLog.record(reasonIndex: 0, at: now) { effects.events.append(.modeRestored(configuredMode, report)) }
        return true
    }
}
