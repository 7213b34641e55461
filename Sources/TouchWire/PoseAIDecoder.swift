// The PoseAI decoder: one UDP datagram of JSON in, one `TouchPacket` out, on the hot path.
//
// Approach. A single forward pass over the raw bytes (`JSONScanner`) validates the whole document
// as strict RFC 8259 JSON in UTF-8 and, at the top level only, recognises the four keys touchbridge
// reads. Their values are decoded straight from the bytes; every other value is validated and
// skipped by an iterative scanner with a 512-bit stack of container kinds, so nesting costs no
// recursion. Keys are matched after unescaping (a fast path when a key has no backslash), numbers
// are judged exactly from their decimal digits, nothing is built: no String, no Array, no
// Foundation. Events go into a reserved buffer that is swapped into `packet` on success, so once
// warm a decode allocates nothing and a failed decode leaves the last good packet untouched.
//
// JSON semantics follow Foundation's JSONSerialization (a dictionary: the last duplicate key wins)
// with strict JSON where JSONSerialization is lenient: trailing commas and non-UTF-8 encodings
// (UTF-16/32, which it detects) are rejected, and a raw U+FEFF inside a string is a character
// (JSONSerialization drops one at the start of a string). Its other edges are matched on purpose:
// a leading UTF-8 BOM is skipped; a `\u` escape of a surrogate outside a high-low pair rejects the
// document; a number that overflows a Double (1e400, 1.8e308) rejects it wherever it is (Foundation
// misses one under a key that a later duplicate replaces) while underflow (1e-400) is fine; and
// containers nest at most 512 deep. The differential test holds the two together.

import TouchCore

/// Decodes PoseAI datagrams into a reused `TouchPacket`.
///
/// A value type holding two reserved event buffers: give each receiving loop its own decoder and
/// reuse it. Read `packet` in place; a copy of its `events` kept across decodes would make a later
/// decode allocate (copy-on-write).
///
/// Fields read, at the top level of the JSON object (keys case-sensitive, compared unescaped):
/// - `Touches`: a string of 5-character events, a slot `0`-`9` then X and Y as two base64 digits
///   each (raw = hi * 64 + lo, 0...4095), or `====` (ended) or `=0=0` (cancelled).
/// - `TouchState`: a string of ten 4-character slot states, `====` free, `=0=0` cancelled, or X Y.
/// - `Orientation`: a number with an integral value; 0...6 map to `DeviceOrientation`, any other
///   integer to `.unknown`.
/// - `sessionUUID`: any string; only its presence is recorded.
///
/// Any other key is ignored, but the whole datagram must be valid JSON or it is dropped.
public struct PoseAIDecoder: Sendable {
    /// Larger datagrams are dropped before parsing.
    public static let maxPacketBytes = 65_536
    /// Arrays and objects may nest this deep, the top-level object counting as 1 (as in Foundation).
    public static let maxDepth = JSONScanner.maxDepth
    /// The event capacity reserved up front: more than a `maxPacketBytes` datagram can hold
    /// (5 bytes per event), so the event buffers never grow.
    public static let eventCapacity = 13_108

    /// The packet of the last successful decode. Refilled in place by every successful decode;
    /// a decode that throws leaves it as it was.
    public private(set) var packet: TouchPacket

    /// The buffer the next decode writes its events into; swapped with `packet.events` on success.
    private var spareEvents: [TouchEvent]

    /// Creates a decoder with both event buffers reserved at `eventCapacity`.
    public init() {
        packet = TouchPacket(eventCapacity: Self.eventCapacity)
        spareEvents = []
        spareEvents.reserveCapacity(Self.eventCapacity)
    }

    /// Decodes one datagram into `packet`.
    ///
    /// Allocates nothing once warm: the events go into reserved capacity, and no String or Array is
    /// created. Never traps, whatever the bytes.
    ///
    /// - Throws: `PoseAIDecodeError` when the datagram is dropped; `packet` is then unchanged.
    public mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(PoseAIDecodeError) {
        guard bytes.count <= Self.maxPacketBytes else {
            throw PoseAIDecodeError(.tooLarge, at: Self.maxPacketBytes)
        }
        if !spareEvents.isEmpty { spareEvents.removeAll(keepingCapacity: true) }
        var fields = Fields()
        try parseDocument(JSONScanner(bytes), into: &fields)
        if let error = fields.firstError { throw error }

        swap(&packet.events, &spareEvents)
        packet.hasTouches = fields.hasTouches
        packet.state = fields.hasState ? fields.state : nil
        packet.orientation = fields.orientation
        packet.hasSessionUUID = fields.hasSessionUUID
    }

    /// Decodes one datagram held in an array (a convenience for tests and tools).
    public mutating func decode(_ bytes: [UInt8]) throws(PoseAIDecodeError) {
        let result = bytes.withUnsafeBytes { raw -> Result<Void, PoseAIDecodeError> in
            do throws(PoseAIDecodeError) {
                try decode(raw)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    // MARK: - The top-level object

    /// The fields of the datagram being decoded. Each reflects the last occurrence of its key;
    /// an occurrence with a bad value records an error that a later good occurrence clears.
    private struct Fields {
        var hasTouches = false
        var touchesError: PoseAIDecodeError?
        var hasState = false
        var state = TouchState()
        var stateError: PoseAIDecodeError?
        var orientation: DeviceOrientation?
        var orientationError: PoseAIDecodeError?
        var hasSessionUUID = false
        var sessionUUIDError: PoseAIDecodeError?

        /// The error of a field whose final value is bad, the earliest in the datagram if several.
        var firstError: PoseAIDecodeError? {
            if touchesError == nil && stateError == nil && orientationError == nil && sessionUUIDError == nil {
                return nil
            }
            return earlier(earlier(touchesError, stateError), earlier(orientationError, sessionUUIDError))
        }

        private func earlier(_ a: PoseAIDecodeError?, _ b: PoseAIDecodeError?) -> PoseAIDecodeError? {
            guard let a else { return b }
            guard let b else { return a }
            return b.offset < a.offset ? b : a
        }
    }

    private enum Key {
        case touches, touchState, orientation, sessionUUID, other
    }

    private mutating func parseDocument(_ scanner: JSONScanner, into fields: inout Fields) throws(PoseAIDecodeError) {
        var s = scanner
        s.skipByteOrderMark()
        s.skipWhitespace()
        switch s.current {
        case ASCII.openBrace:
            break
        case ASCII.openBracket, ASCII.quote, ASCII.minus, ASCII.zero...ASCII.nine,
             0x74, 0x66, 0x6E:  // t f n
            throw PoseAIDecodeError(.notAnObject, at: s.index)
        default:
            throw s.unexpected
        }
        s.index += 1
        s.skipWhitespace()

        if s.current == ASCII.closeBrace {
            s.index += 1
        } else {
            while true {
                guard s.current == ASCII.quote else { throw s.unexpected }
                let key = Self.key(try s.scanString(), in: s)
                s.skipWhitespace()
                guard s.current == ASCII.colon else { throw s.unexpected }
                s.index += 1
                s.skipWhitespace()

                try parseValue(for: key, &s, into: &fields)

                s.skipWhitespace()
                if s.current == ASCII.comma {
                    s.index += 1
                    s.skipWhitespace()
                } else if s.current == ASCII.closeBrace {
                    s.index += 1
                    break
                } else {
                    throw s.unexpected
                }
            }
        }

        s.skipWhitespace()
        guard s.isAtEnd else { throw PoseAIDecodeError(.trailingGarbage, at: s.index) }
    }

    /// Reads the value of one top-level member, at the current byte.
    private mutating func parseValue(for key: Key, _ s: inout JSONScanner, into fields: inout Fields) throws(PoseAIDecodeError) {
        let valueStart = s.index
        let wrongType = PoseAIDecodeError(.wrongType, at: valueStart)
        let isString = s.current == ASCII.quote

        switch key {
        case .other:
            // A string or a number directly (what skipValue would do for them, without its setup).
            if isString {
                _ = try s.scanString()
            } else if s.current == ASCII.minus || s.current &- ASCII.zero < 10 {
                _ = try s.scanNumber()
            } else {
                try s.skipValue(depth: 1)
            }

        case .touches:
            fields.hasTouches = true
            if !spareEvents.isEmpty { spareEvents.removeAll(keepingCapacity: true) }  // a later Touches replaces an earlier one
            if isString && Self.scanPlainTouches(&s, into: &spareEvents) {
                fields.touchesError = nil
            } else if isString {
                if !spareEvents.isEmpty { spareEvents.removeAll(keepingCapacity: true) }
                var cursor = CharacterCursor(try s.scanString(), in: s)
                fields.touchesError = Self.parseTouches(&cursor, into: &spareEvents)
            } else {
                try s.skipValue(depth: 1)
                fields.touchesError = wrongType
            }

        case .touchState:
            fields.hasState = true
            if isString && Self.scanPlainTouchState(&s, into: &fields.state) {
                fields.stateError = nil
            } else if isString {
                var cursor = CharacterCursor(try s.scanString(), in: s)
                fields.stateError = Self.parseTouchState(&cursor, into: &fields.state)
            } else {
                try s.skipValue(depth: 1)
                fields.stateError = wrongType
            }

        case .orientation:
            fields.orientation = nil
            if s.current == ASCII.minus || s.current &- ASCII.zero < 10 {
                let number = try s.scanNumber()
                if number.isIntegral {
                    fields.orientation = Self.orientation(number.smallIntegerValue)
                    fields.orientationError = nil
                } else {
                    fields.orientationError = wrongType
                }
            } else {
                try s.skipValue(depth: 1)
                fields.orientationError = wrongType
            }

        case .sessionUUID:
            if isString {
                _ = try s.scanString()
                fields.hasSessionUUID = true
                fields.sessionUUIDError = nil
            } else {
                try s.skipValue(depth: 1)
                fields.hasSessionUUID = false
                fields.sessionUUIDError = wrongType
            }
        }
    }

    /// Which of the keys the decoder reads, if any, a key string spells once unescaped.
    private static func key(_ token: StringToken, in scanner: JSONScanner) -> Key {
        if !token.hasEscapes {
            // The bytes are the characters: compared a word at a time, little-endian. The closing
            // quote follows them, so with 7 or more the 8 bytes from the start are in the buffer.
            let bytes = scanner.bytes, start = token.start
            switch token.end - start {
            case 7:
                let head = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
                return head & 0x00FF_FFFF_FFFF_FFFF == 0x73_65_68_63_75_6F_54 ? .touches : .other  // Touches
            case 10:
                let head = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
                let tail = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 8, as: UInt16.self))
                return head == 0x61_74_53_68_63_75_6F_54 && tail == 0x65_74 ? .touchState : .other  // TouchSta, te
            case 11:
                let head = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
                let tail = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 7, as: UInt32.self))
                if head == 0x74_61_74_6E_65_69_72_4F && tail == 0x6E_6F_69_74 { return .orientation }  // Orientat, tion
                if head == 0x55_6E_6F_69_73_73_65_73 && tail == 0x44_49_55_55 { return .sessionUUID }  // sessionU, UUID
                return .other
            default:
                return .other
            }
        }
        // Escaped: pack up to 11 ASCII characters into one integer, one byte each.
        var packed: UInt128 = 0
        var count = 0
        do {
            var cursor = CharacterCursor(token, in: scanner)
            while let c = cursor.next() {
                count += 1
                guard count <= 11, c != CharacterCursor.nonASCII else { return .other }
                packed = packed << 8 | UInt128(c)
            }
        }
        switch count {
        case 7 where packed == KeyName.touches: return .touches
        case 10 where packed == KeyName.touchState: return .touchState
        case 11 where packed == KeyName.orientation: return .orientation
        case 11 where packed == KeyName.sessionUUID: return .sessionUUID
        default: return .other
        }
    }

    /// The key names packed as `key(_:in:)` packs them: their ASCII bytes, first byte highest.
    private enum KeyName {
        static var touches: UInt128 { 0x54_6F_75_63_68_65_73 }  // Touches
        static var touchState: UInt128 { 0x54_6F_75_63_68_53_74_61_74_65 }  // TouchState
        static var orientation: UInt128 { 0x4F_72_69_65_6E_74_61_74_69_6F_6E }  // Orientation
        static var sessionUUID: UInt128 { 0x73_65_73_73_69_6F_6E_55_55_49_44 }  // sessionUUID
    }

    /// `DeviceOrientation` for an integral `Orientation`; `value` is nil when it is outside -9...9.
    private static func orientation(_ value: Int?) -> DeviceOrientation {
        guard let value, (0...6).contains(value) else { return .unknown }
        return DeviceOrientation(rawValue: UInt8(value)) ?? .unknown
    }

    // MARK: - Touch fields

    /// Parses a `Touches` string into `events` (appending, in order). Returns the problem, if any.
    private static func parseTouches(_ cursor: inout CharacterCursor, into events: inout [TouchEvent]) -> PoseAIDecodeError? {
        while true {
            let eventStart = cursor.offset
            guard let slotCharacter = cursor.next() else { return nil }
            let slot = slotCharacter &- ASCII.zero
            guard slot < 10 else { return PoseAIDecodeError(.badSlot, at: eventStart) }
            guard let update = readSlotUpdate(&cursor) else {
                return PoseAIDecodeError(.badTouches, at: eventStart)
            }
            events.append(TouchEvent(slot: slot, update: update))
        }
    }

    /// Parses a `TouchState` string: exactly ten 4-character slot states. Returns the problem, if any.
    private static func parseTouchState(_ cursor: inout CharacterCursor, into state: inout TouchState) -> PoseAIDecodeError? {
        for slot in 0..<TouchState.slotCount {
            let slotStart = cursor.offset
            switch readSlotUpdate(&cursor) {
            case .position(let point)?: state[slot] = .down(point)
            case .ended?: state[slot] = .free
            case .cancelled?: state[slot] = .cancelled
            case nil: return PoseAIDecodeError(.badTouchState, at: slotStart)
            }
        }
        let extra = cursor.offset
        return cursor.next() == nil ? nil : PoseAIDecodeError(.badTouchState, at: extra)
    }

    // MARK: - Touch fields in one pass
    //
    // The usual case: a well-formed touch string without escapes. Every character of a slot, an
    // event or a state (digits, base64 letters, `+ - . / _ ,`, `=`) is a plain string byte (no quote,
    // backslash, control or non-ASCII byte), so a string made of valid events or states and then the
    // closing quote is a valid JSON string whose bytes are its characters, and reading it once gives
    // what scanning it and then parsing it would. Anything else (an escape, a bad character, the
    // end) returns false with `index` unchanged, and the caller takes the general path, which
    // validates, unescapes and reports the error exactly as before.

    /// At the opening quote of a `Touches` string: appends its events and moves past the closing
    /// quote if it is plain and well formed; else returns false (`events` may then hold a part).
    @inline(__always)
    private static func scanPlainTouches(_ s: inout JSONScanner, into events: inout [TouchEvent]) -> Bool {
        let bytes = s.bytes
        let table = base64Table.utf8Start
        var i = s.index + 1
        // The events go to the array a chunk at a time, through a small buffer on the stack: one
        // `append` per element would check uniqueness and capacity every time.
        let chunkSize = 64
        let plain = withUnsafeTemporaryAllocation(of: TouchEvent.self, capacity: chunkSize) { chunk -> Bool in
            var n = 0
            // Five bytes of an event and at least one after them (the closing quote).
            while i &+ 5 < bytes.count {
                let slot = bytes[i] &- ASCII.zero
                guard slot < 10, let update = readSlotUpdate(bytes, at: i &+ 1, table) else { break }
                chunk.initializeElement(at: n, to: TouchEvent(slot: slot, update: update))  // a trivial type
                n &+= 1
                i &+= 5
                if n == chunkSize {
                    events.append(contentsOf: UnsafeBufferPointer(start: chunk.baseAddress, count: n))
                    n = 0
                }
            }
            if n > 0 { events.append(contentsOf: UnsafeBufferPointer(start: chunk.baseAddress, count: n)) }
            return i < bytes.count && bytes[i] == ASCII.quote
        }
        guard plain else { return false }
        s.index = i &+ 1
        return true
    }

    /// At the opening quote of a `TouchState` string: reads its ten states and moves past the closing
    /// quote if it is plain and well formed; else returns false (`state` may then hold a part).
    @inline(__always)
    private static func scanPlainTouchState(_ s: inout JSONScanner, into state: inout TouchState) -> Bool {
        let bytes = s.bytes
        let table = base64Table.utf8Start
        let start = s.index + 1
        let end = start + 4 * TouchState.slotCount
        guard end < bytes.count, bytes[end] == ASCII.quote else { return false }
        for slot in 0..<TouchState.slotCount {
            switch readSlotUpdate(bytes, at: start &+ 4 &* slot, table) {
            case .position(let point)?: state[slot] = .down(point)
            case .ended?: state[slot] = .free
            case .cancelled?: state[slot] = .cancelled
            case nil: return false
            }
        }
        s.index = end + 1
        return true
    }

    /// `readSlotUpdate(_:)` for the four bytes at `i`, which the caller checked are in the buffer.
    @inline(__always)
    private static func readSlotUpdate(_ bytes: UnsafeRawBufferPointer, at i: Int,
                                       _ table: UnsafePointer<UInt8>) -> SlotUpdate? {
        let c0 = bytes[i], c1 = bytes[i &+ 1], c2 = bytes[i &+ 2], c3 = bytes[i &+ 3]
        if c0 == ASCII.equals {
            if c1 == ASCII.equals && c2 == ASCII.equals && c3 == ASCII.equals { return .ended }
            if c1 == ASCII.zero && c2 == ASCII.equals && c3 == ASCII.zero { return .cancelled }
            return nil
        }
        let x1 = table[Int(c0)], x0 = table[Int(c1)], y1 = table[Int(c2)], y0 = table[Int(c3)]
        guard (x1 | x0 | y1 | y0) & 0x40 == 0 else { return nil }
        return .position(DevicePoint(rawX: UInt16(x1) << 6 | UInt16(x0), rawY: UInt16(y1) << 6 | UInt16(y0)))
    }

    /// `base64Digit(_:)` of every byte, 64 (`@`) for a byte that is none: one literal of 256 ASCII
    /// characters, so a lookup is one load from constant data.
    private static var base64Table: StaticString {
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@>?>>?456789:;<=@@@@@@@\u{0}\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{E}\u{F}\u{10}\u{11}\u{12}\u{13}\u{14}\u{15}\u{16}\u{17}\u{18}\u{19}@@@@?@\u{1A}\u{1B}\u{1C}\u{1D}\u{1E}\u{1F} !\"#$%&'()*+,-./0123@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@"
    }

    /// Reads four characters: `====` (ended or free), `=0=0` (cancelled), or X and Y as two
    /// base64 digits each. Nil if the string ends first or the characters are none of these.
    @inline(__always)
    private static func readSlotUpdate(_ cursor: inout CharacterCursor) -> SlotUpdate? {
        guard let c0 = cursor.next(), let c1 = cursor.next(), let c2 = cursor.next(), let c3 = cursor.next()
        else { return nil }
        if c0 == ASCII.equals {
            if c1 == ASCII.equals && c2 == ASCII.equals && c3 == ASCII.equals { return .ended }
            if c1 == ASCII.zero && c2 == ASCII.equals && c3 == ASCII.zero { return .cancelled }
            return nil
        }
        guard let x1 = base64Digit(c0), let x0 = base64Digit(c1), let y1 = base64Digit(c2), let y0 = base64Digit(c3)
        else { return nil }
        return .position(DevicePoint(rawX: x1 << 6 | x0, rawY: y1 << 6 | y0))
    }

    /// The value of one base64 digit: the standard alphabet, plus `-` and `.` for 62 and `_` and
    /// `,` for 63 as PoseAI's own decoder accepts.
    @inline(__always)
    private static func base64Digit(_ c: UInt8) -> UInt16? {
        switch c {
        case 0x41...0x5A: return UInt16(c &- 0x41)  // A-Z: 0...25
        case 0x61...0x7A: return UInt16(c &- 0x61) &+ 26  // a-z: 26...51
        case 0x30...0x39: return UInt16(c &- 0x30) &+ 52  // 0-9: 52...61
        case 0x2B, 0x2D, 0x2E: return 62  // + - .
        case 0x2F, 0x5F, 0x2C: return 63  // / _ ,
        default: return nil
        }
    }
}
