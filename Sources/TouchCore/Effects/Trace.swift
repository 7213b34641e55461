// Every state transition of the touchpad machines, recorded for the shell to log at debug level.

/// One transition of one state machine: `machine: from → event → to`.
///
/// Only `StaticString`s and an `Instant`: recording one copies a few words and allocates nothing.
public struct Transition: Sendable, CustomStringConvertible {
    public var machine: StaticString
    public var from: StaticString
    public var event: StaticString
    public var to: StaticString
    public var at: Instant

    public init(machine: StaticString, from: StaticString, event: StaticString, to: StaticString, at: Instant) {
        self.machine = machine
        self.from = from
        self.event = event
        self.to = to
        self.at = at
    }

    public var description: String { "\(machine): \(from) → \(event) → \(to) (\(at))" }
}

/// A bounded buffer of `Transition`s that the shell drains after each core step.
///
/// Off (the default): `record` returns at once and nothing is stored. On: records go into a buffer whose
/// capacity is reserved once (`capacity`); when it is full, further records of that step are not kept
/// (the buffer does not grow), so the hot path still allocates nothing.
public struct TransitionTrace: Sendable {
    public static let capacity = 128
    public private(set) var isEnabled = false
    public private(set) var records: [Transition] = []

    public init(enabled: Bool = false) { setEnabled(enabled) }

    public mutating func setEnabled(_ on: Bool) {
        isEnabled = on
        if on { records.reserveCapacity(Self.capacity) }
    }

    @inlinable
    public mutating func record(_ machine: StaticString, _ from: StaticString, _ event: StaticString,
                                _ to: StaticString, at now: Instant) {
        guard isEnabled else { return }
        append(Transition(machine: machine, from: from, event: event, to: to, at: now))
    }

    public mutating func append(_ t: Transition) {
        if records.count < Self.capacity { records.append(t) }
    }

    /// Forgets the records, keeping the buffer's capacity.
    public mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
    }
}
