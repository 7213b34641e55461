// One WebSocket's messages on their way to the Bridge's loop: decoded once, never applied late.
//
// The reader (`WebSocketReader`, driven on the Bridge's loop for a plain page, on the server's for a TLS one)
// decodes each whole message once (`MessageReader`: a PoseAI packet, a command, or why it is dropped),
// appends it to this connection's queue and schedules at most one drain task on the loop at a time; the
// drain applies what is there.
// While messages queue (the loop is busy, or the page sends faster than X takes it):
// - a touch packet that only moves fingers already down replaces a queued move of the same (or fewer)
//   fingers: only the newest position per finger matters;
// - a move that is older than `maxMoveAge` when drained is dropped (counted): the finger has moved on;
// - begins, ends, other packets and commands are kept, in order, and never dropped;
// - the queue holds at most `capacity` messages; when it is full of messages that cannot be dropped,
//   the reader stops reading the socket until the drain (TCP then pushes back on the page);
// - moves are applied at most once per `minMoveInterval` per connection (a phone's screen reports at
//   60-120 Hz): a faster stream only replaces the waiting move, so neither the loop nor the X server
//   ever holds a backlog that would be applied late.
// Times are the Bridge's loop's (`EventLoop.now`): the reader stamps a message with it, the drain
// compares against it, so a test's EmbeddedEventLoop moves both.
import NIOCore
import Synchronization
import TouchCore
import TouchWire

/// What a queued message is, as far as coalescing goes.
public enum QueuedKind: Equatable, Sendable {
    /// A touch packet whose every event moves a finger already down (no begin, end or cancel): the
    /// fingers it moves, as a bit per slot.
    case move(slots: UInt16)
    /// Anything that must be applied: a begin, an end, another packet, a command.
    case keep
    /// A message only counted as dropped (on the loop, by `WebInput`'s log): moves coalesce across it.
    case dropped
}

/// A message of the page as its reader decoded it: what the drain hands to the Bridge, or counts.
public enum PageInput: Sendable {
    case packet(TouchPacket)
    case command(WebCommand)
    case dropped(WebDrop, detail: String? = nil)
}

/// The reader's side of one WebSocket: decodes each whole message once (`WebMessage.classify`, the
/// same decoder as the UDP stream's) and tells moves from everything else, following the connection's
/// fingers (which slots are down).
public struct MessageReader: Sendable, WebSocketMessages {
    private var decoder = PoseAIDecoder()
    /// A bit per slot the connection holds down, from its own packets.
    public private(set) var down: UInt16 = 0

    public init() {}

    /// One whole message (a text or binary frame with `fin`), received at `received`.
    public mutating func read(_ buffer: ByteBuffer, received: Instant) -> InputQueue.Item {
        buffer.withUnsafeReadableBytes { read($0, received: received) }
    }

    /// One whole message's bytes (the payload of a text or binary frame with `fin`), received at `received`.
    public mutating func read(_ bytes: UnsafeRawBufferPointer, received: Instant) -> InputQueue.Item {
        guard bytes.count <= PoseAIDecoder.maxPacketBytes else {
            return .init(input: .dropped(.tooLarge), kind: .dropped, received: received)
        }
        let message = WebMessage.classify(bytes, decoder: &decoder)
        switch message {
        case .packet:
            let packet = decoder.packet
            return .init(input: .packet(packet), kind: classify(packet), received: received)
        case .command(let command):
            return .init(input: .command(command), kind: .keep, received: received)
        case .undecodablePacket(let failure):
            return .init(input: .dropped(.undecodablePacket, detail: failure.description), kind: .dropped, received: received)
        case .notACommand:
            // An edit over its bounds says which bound (WebMessage.swift); anything else is "not a command".
            let why = WebCommand.refusal(of: bytes)
            return .init(input: .dropped(.unknownCommand, detail: why), kind: .dropped, received: received)
        }
    }

    /// A fragment (or a continuation frame): the page never sends them. Dropped and counted.
    public func fragment(received: Instant) -> InputQueue.Item {
        .init(input: .dropped(.fragmented), kind: .dropped, received: received)
    }

    /// Whether `packet` only moves fingers already down, and which.
    private mutating func classify(_ packet: TouchPacket) -> QueuedKind {
        var moved: UInt16 = 0
        var pure = !packet.events.isEmpty && !packet.isHello
        var after = down
        for event in packet.events {
            let bit: UInt16 = event.slot < 16 ? 1 << UInt16(event.slot) : 0
            switch event.update {
            case .position:
                if down & bit == 0 { pure = false }
                moved |= bit
                after |= bit
            case .ended, .cancelled:
                pure = false
                after &= ~bit
            }
        }
        if let state = packet.state {
            // A packet whose state lifts or adds a finger is not a pure move either.
            var stateDown: UInt16 = 0
            for slot in 0..<TouchState.slotCount where state[slot].point != nil { stateDown |= 1 << UInt16(slot) }
            if stateDown != after { pure = false }
            after = stateDown
        }
        down = after
        return pure ? .move(slots: moved) : .keep
    }
}

/// The queue of one connection; shared by its reader (off the Bridge's loop) and the drain task (on
/// it): two threads, hence its lock.
public final class InputQueue: Sendable {
    public struct Item: Sendable {
        public var input: PageInput
        public var kind: QueuedKind
        public var received: Instant
    }

    /// A move older than this when drained is dropped.
    public static let maxMoveAge: Interval = .milliseconds(50)
    /// The shortest time between two applied moves of one connection (250 a second).
    public static let minMoveInterval: Interval = .milliseconds(4)
    /// Messages queued per connection at most.
    public static let capacity = 256

    private struct State {
        var items: [Item] = []
        var drainScheduled = false
        var coalesced: UInt64 = 0
        var waiters: [@Sendable () -> Void] = []
    }
    private let state: Mutex<State>
    let capacity: Int

    public init(capacity: Int = InputQueue.capacity) {
        self.capacity = capacity
        var initial = State()
        initial.items.reserveCapacity(capacity)
        state = Mutex(initial)
    }

    /// Moves replaced by a newer move before they were drained.
    public var coalescedCount: UInt64 { state.withLock { $0.coalesced } }
    public var count: Int { state.withLock { $0.items.count } }

    public enum AppendResult: Equatable {
        /// Appended (or merged); `scheduleDrain` says the caller must schedule the one drain task.
        case queued(scheduleDrain: Bool)
        /// Full of messages that cannot go: wait for the drain, then append again.
        case full
    }

    /// Appends `item`, merging a move into the queued move it supersedes; `evenIfFull` (the socket's end:
    /// what its reader still held) appends past the bound rather than say `.full`.
    @discardableResult
    public func append(_ item: Item, evenIfFull: Bool = false) -> AppendResult {
        state.withLock { state in
            if case .move(let slots) = item.kind,
               let index = state.items.lastIndex(where: { $0.kind != .dropped }),
               case .move(let queued) = state.items[index].kind, queued & ~slots == 0 {
                // The newer move covers every finger the queued one moves: it replaces it in place.
                state.items[index] = item
                state.coalesced &+= 1
            } else {
                if state.items.count >= capacity {
                    // Make room by dropping the oldest move; none: `.full` (the reader holds the item and stops reading).
                    if let oldest = state.items.firstIndex(where: { if case .move = $0.kind { return true }; return false }) {
                        state.items.remove(at: oldest)
                        state.coalesced &+= 1
                    } else if !evenIfFull {
                        return .full
                    }
                }
                state.items.append(item)
            }
            let schedule = !state.drainScheduled
            state.drainScheduled = true
            return .queued(scheduleDrain: schedule)
        }
    }

    /// Calls `body` at the next drain (after `append` said `.full`), on the drain's thread; at once if
    /// there is room already.
    public func whenDrained(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.items.count >= capacity else { return true }
            state.waiters.append(body)
            return false
        }
        if now { body() }
    }

    /// Takes everything queued (the drain task, on the loop); the next append schedules a new drain.
    public func take(into items: inout [Item]) {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            swap(&items, &state.items)
            state.drainScheduled = false
            let waiters = state.waiters
            state.waiters.removeAll()
            return waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Puts back, in front, what a drain did not apply yet (it was held by the pacing); the drain that
    /// held them has scheduled the next one, so appends meanwhile schedule none.
    public func requeue(_ held: ArraySlice<Item>) {
        state.withLock { state in
            state.items.insert(contentsOf: held, at: 0)
            state.drainScheduled = true
        }
    }

    /// Whether a drained item must be skipped: a move older than `maxMoveAge` at `now`.
    public static func isStale(_ item: Item, at now: Instant) -> Bool {
        if case .move = item.kind { return now - item.received > maxMoveAge }
        return false
    }
}
