// TUIO 1.1, profile /tuio/2Dcur, into the same `TouchPacket` the PoseAI decoder makes, so that both
// feed one contact tracker. Standard library only, nothing allocated once warm.
//
// A TUIO frame is `alive s_id…`, any number of `set s x y X Y m`, then `fseq f` (usually in one bundle,
// after an optional `source name@address`). As in the reference client (TUIO11_CPP `TuioClient`),
// `alive` and `set` are held until the frame's `fseq` and then applied together, and a frame is late,
// and dropped, when its `fseq` is positive and lower than the last one unless it is more than 100 lower
// (the sender restarted). There are no add or remove messages: a touch begins when its session id is
// `alive` and has a position, and ends when its id leaves `alive`.
//
// Session ids map onto the tracker's ten slots: a new id takes the lowest free slot; ids beyond ten
// live touches are ignored until a slot frees. Positions are 0…1 from the top-left corner and become
// the wire's 12-bit raw values (0 → 0, 1 → 4094). Every frame carries the full `TouchState` of the
// ten slots, so the tracker's state always equals the decoder's.

import TouchCore

/// Decodes TUIO 1.1 `/tuio/2Dcur` datagrams into a reused `TouchPacket`, one per frame.
public struct TUIODecoder: Sendable {
    /// Larger datagrams are dropped before parsing.
    public static let maxPacketBytes = 65_536
    /// How many ids one frame's `alive` may list, and how many `set` messages one frame may hold;
    /// more are ignored (a frame of a ten-finger phone is far smaller).
    public static let frameCapacity = 32
    /// The reference client accepts a lower `fseq` when it is this much lower (a restarted sender).
    public static let restartJump: Int32 = 100

    /// What one datagram did.
    public struct Outcome: Equatable, Sendable {
        /// Frames applied (each handed to the caller's closure).
        public var frames = 0
        /// Frames dropped as late.
        public var lateFrames = 0
        /// Messages to other addresses than /tuio/2Dcur (other profiles), ignored.
        public var ignoredMessages = 0

        public init(frames: Int = 0, lateFrames: Int = 0, ignoredMessages: Int = 0) {
            self.frames = frames
            self.lateFrames = lateFrames
            self.ignoredMessages = ignoredMessages
        }
    }

    /// The packet of the frame being handed out. Refilled for every frame.
    public private(set) var packet: TouchPacket

    /// The session id in each slot, nil when free; and its last position.
    private var ids: InlineArray<10, Int32?>
    private var points: InlineArray<10, DevicePoint>
    /// The last applied frame id (the reference client's `currentFrame`).
    public private(set) var currentFrame: Int32 = 0

    // The frame being collected.
    private var alive: InlineArray<32, Int32>
    private var aliveCount = 0
    private var hasAlive = false
    private var sets: InlineArray<32, (id: Int32, point: DevicePoint)>
    private var setCount = 0

    public init() {
        packet = TouchPacket(eventCapacity: 64)
        ids = InlineArray(repeating: nil)
        points = InlineArray(repeating: .centre)
        alive = InlineArray(repeating: 0)
        sets = InlineArray(repeating: (0, .centre))
    }

    /// Forgets every touch and the frame count (a new sender).
    public mutating func reset() {
        ids = InlineArray(repeating: nil)
        currentFrame = 0
        clearPending()
    }

    /// The number of touches live now.
    public var liveCount: Int {
        var n = 0
        for s in 0..<10 where ids[s] != nil { n += 1 }
        return n
    }

    /// Decodes one datagram; calls `frame` with `packet` after each frame it applies (on `fseq`).
    ///
    /// A malformed datagram throws before any of its frames is applied: nothing of it takes effect.
    /// Collected `alive`/`set` without a `fseq` wait for the next datagram, as in the reference client.
    public mutating func decode(
        _ bytes: UnsafeRawBufferPointer, frame: (borrowing TouchPacket) -> Void
    ) throws(OSCDropReason) -> Outcome {
        guard bytes.count <= Self.maxPacketBytes else { throw .tooLarge }
        // Validate everything first (OSC structure and every 2Dcur message), then apply.
        try OSCReader.forEachMessage(in: bytes) { message throws(OSCDropReason) in
            guard Self.is2Dcur(message) else { return }
            try Self.validate(message)
        }
        var outcome = Outcome()
        try OSCReader.forEachMessage(in: bytes) { message throws(OSCDropReason) in
            guard Self.is2Dcur(message) else {
                outcome.ignoredMessages += 1
                return
            }
            self.apply(message, outcome: &outcome, frame: frame)
        }
        return outcome
    }

    static let address2Dcur: StaticString = "/tuio/2Dcur"

    static func is2Dcur(_ message: OSCMessage) -> Bool {
        OSCReader.equal(message.address, address2Dcur)
    }

    /// Checks a /tuio/2Dcur message against TUIO 1.1: `source s`, `alive i…`, `set i f f f f f` (the
    /// velocity and acceleration may be missing), `fseq i`.
    static func validate(_ message: OSCMessage) throws(OSCDropReason) {
        var cursor = message.makeCursor()
        guard let command = cursor.next() else { throw .badTUIO }
        if command.isString("alive") {
            while let id = cursor.next() { guard id.int32 != nil else { throw .badTUIO } }
        } else if command.isString("set") {
            guard cursor.next()?.int32 != nil,
                  let x = cursor.next()?.float32, let y = cursor.next()?.float32,
                  x.isFinite, y.isFinite else { throw .badTUIO }
            while let more = cursor.next() { guard more.float32 != nil else { throw .badTUIO } }
        } else if command.isString("fseq") {
            guard cursor.next()?.int32 != nil, cursor.next() == nil else { throw .badTUIO }
        } else if command.isString("source") {
            guard case .string = cursor.next(), cursor.next() == nil else { throw .badTUIO }
        } else {
            throw .badTUIO
        }
    }

    /// Applies one validated /tuio/2Dcur message.
    private mutating func apply(_ message: OSCMessage, outcome: inout Outcome, frame: (borrowing TouchPacket) -> Void) {
        var cursor = message.makeCursor()
        let command = cursor.next()!
        if command.isString("alive") {
            hasAlive = true
            aliveCount = 0
            while let id = cursor.next()?.int32 {
                guard aliveCount < Self.frameCapacity else { break }
                alive[aliveCount] = id
                aliveCount += 1
            }
        } else if command.isString("set") {
            let id = cursor.next()!.int32!
            let x = cursor.next()!.float32!
            let y = cursor.next()!.float32!
            guard setCount < Self.frameCapacity else { return }
            sets[setCount] = (id, DevicePoint(rawX: Self.raw(x), rawY: Self.raw(y)))
            setCount += 1
        } else if command.isString("fseq") {
            let fseq = cursor.next()!.int32!
            if fseq > 0 {
                // The reference client: `(fseq >= currentFrame) || (currentFrame - fseq > 100)`.
                if fseq >= currentFrame || Int64(currentFrame) - Int64(fseq) > Int64(Self.restartJump) {
                    currentFrame = fseq
                } else {
                    outcome.lateFrames += 1
                    clearPending()
                    return
                }
            }
            commit()
            outcome.frames += 1
            frame(packet)
        }
        // `source`: one sender at a time is the Bridge's business (by address); nothing to keep.
    }

    /// 0…1 → 0…4094 (the wire's -1…+1), clamped to the 12-bit range.
    static func raw(_ v: Float) -> UInt16 {
        let r = (Double(v) * 2 * DevicePoint.rawScale).rounded()
        if !(r > 0) { return 0 }
        if r >= Double(DevicePoint.rawMax) { return DevicePoint.rawMax }
        return UInt16(r)
    }

    private func isAlive(_ id: Int32) -> Bool {
        for i in 0..<aliveCount where alive[i] == id { return true }
        return false
    }

    private func slot(of id: Int32) -> Int? {
        for s in 0..<10 where ids[s] == id { return s }
        return nil
    }

    /// Turns the collected frame into `packet`: ended for ids that left `alive`, then a position for
    /// every `set` of a live id (a new id takes the lowest free slot), then the full `TouchState`.
    private mutating func commit() {
        packet.reset()
        packet.hasTouches = true
        if hasAlive {
            for s in 0..<10 {
                if let id = ids[s], !isAlive(id) {
                    ids[s] = nil
                    packet.events.append(TouchEvent(slot: UInt8(s), update: .ended))
                }
            }
        }
        for i in 0..<setCount {
            let (id, point) = sets[i]
            var slot = slot(of: id)
            if slot == nil, !hasAlive || isAlive(id) {
                for s in 0..<10 where ids[s] == nil {
                    ids[s] = id
                    slot = s
                    break
                }
            }
            guard let s = slot else { continue }
            points[s] = point
            packet.events.append(TouchEvent(slot: UInt8(s), update: .position(point)))
        }
        var state = TouchState()
        for s in 0..<10 where ids[s] != nil { state[s] = .down(points[s]) }
        packet.state = state
        clearPending()
    }

    private mutating func clearPending() {
        aliveCount = 0
        hasAlive = false
        setCount = 0
    }
}
