// OSC 1.0 (Open Sound Control) read straight from a datagram's bytes: bundles, messages, arguments.
// Standard library only, nothing allocated: every value is a view into the caller's buffer.
//
// Layout (all big-endian, everything padded to a multiple of 4 bytes):
// - message: address string ("/…", NUL-terminated, padded), type-tag string (",iifs…", likewise),
//   then one argument per tag;
// - bundle: "#bundle\0", an 8-byte time tag, then elements, each an int32 size followed by that many
//   bytes holding a message or a bundle.

/// Why a datagram is not well-formed OSC (or not well-formed TUIO, see `TUIODecoder`).
public enum OSCDropReason: UInt8, Error, CaseIterable, Sendable, CustomStringConvertible {
    /// Larger than `TUIODecoder.maxPacketBytes`.
    case tooLarge
    /// Neither a message (address starting with `/`) nor a bundle (`#bundle`).
    case notOSC
    /// The data ends in the middle of something, or a size or length is not a multiple of 4.
    case truncated
    /// A string without its NUL terminator, or with non-NUL padding.
    case badString
    /// The type-tag string is missing or does not start with `,`.
    case badTypeTags
    /// A type tag outside OSC 1.0's `i f s b h t d S c r m T F N I`.
    case unsupportedType
    /// Bundles nested deeper than `OSCReader.maxBundleDepth`.
    case tooDeep
    /// A `/tuio/2Dcur` message whose command or arguments do not follow TUIO 1.1.
    case badTUIO

    public var description: String {
        switch self {
        case .tooLarge: return "OSC packet too large"
        case .notOSC: return "not an OSC message or bundle"
        case .truncated: return "truncated OSC data"
        case .badString: return "malformed OSC string"
        case .badTypeTags: return "missing OSC type tags"
        case .unsupportedType: return "unsupported OSC type tag"
        case .tooDeep: return "OSC bundles nested too deeply"
        case .badTUIO: return "malformed /tuio/2Dcur message"
        }
    }
}

/// One OSC argument, as a view into the datagram.
public enum OSCArgument {
    case int32(Int32)
    case float32(Float)
    /// The string's bytes, without its NUL and padding (`s` and `S`).
    case string(UnsafeRawBufferPointer)
    /// Anything else (blob, int64, time tag, double, char, colour, MIDI, true/false/nil/impulse).
    case other(UInt8)

    @inlinable public var int32: Int32? {
        if case .int32(let v) = self { return v }
        return nil
    }

    @inlinable public var float32: Float? {
        if case .float32(let v) = self { return v }
        return nil
    }

    /// Whether this is the string `text` (ASCII, compared byte for byte).
    public func isString(_ text: StaticString) -> Bool {
        guard case .string(let bytes) = self else { return false }
        return OSCReader.equal(bytes, text)
    }
}

/// A message's address and arguments, as views into the datagram. The arguments were checked to fit.
public struct OSCMessage {
    /// The address bytes, without NUL and padding.
    public let address: UnsafeRawBufferPointer
    /// The type tags after the `,`.
    public let typeTags: UnsafeRawBufferPointer
    /// The argument bytes.
    let arguments: UnsafeRawBufferPointer

    /// The number of arguments.
    public var count: Int { typeTags.count }

    /// Walks the arguments in order. Never fails: `OSCReader.message` checked them.
    public func makeCursor() -> OSCArgumentCursor { OSCArgumentCursor(message: self) }
}

/// Reads a message's arguments one after another.
public struct OSCArgumentCursor {
    let message: OSCMessage
    var tag = 0
    var offset = 0

    /// The next argument, nil after the last.
    public mutating func next() -> OSCArgument? {
        guard tag < message.typeTags.count else { return nil }
        let t = message.typeTags[tag]
        tag += 1
        let bytes = message.arguments
        switch t {
        case UInt8(ascii: "i"):
            defer { offset += 4 }
            return .int32(Int32(bitPattern: OSCReader.uint32(bytes, at: offset)))
        case UInt8(ascii: "f"):
            defer { offset += 4 }
            return .float32(Float(bitPattern: OSCReader.uint32(bytes, at: offset)))
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            // Checked by `OSCReader.argumentSize`.
            var end = offset
            while bytes[end] != 0 { end += 1 }
            let value = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
            offset = OSCReader.padded(end + 1)
            return .string(value)
        default:
            offset += OSCReader.argumentSize(t, bytes, at: offset) ?? 0
            return .other(t)
        }
    }
}

/// The OSC 1.0 reader: validates and walks packets without copying them.
public enum OSCReader {
    /// Bundles nested deeper than this are refused (the top-level bundle is depth 1).
    public static let maxBundleDepth = 8

    static let bundleTag: StaticString = "#bundle"

    /// Calls `body` with every message of the packet, in order (depth first through bundles), after
    /// checking that the whole packet is well formed: nothing is passed for a malformed packet.
    /// `body` may throw to stop the walk (its error is passed on).
    public static func forEachMessage(
        in bytes: UnsafeRawBufferPointer, _ body: (OSCMessage) throws(OSCDropReason) -> Void
    ) throws(OSCDropReason) {
        try walk(bytes, depth: 0) { _ throws(OSCDropReason) in }
        try walk(bytes, depth: 0, body)
    }

    private static func walk(
        _ bytes: UnsafeRawBufferPointer, depth: Int, _ body: (OSCMessage) throws(OSCDropReason) -> Void
    ) throws(OSCDropReason) {
        guard !bytes.isEmpty else { throw .truncated }
        if bytes[0] == UInt8(ascii: "/") {
            try body(try message(bytes))
            return
        }
        guard bytes[0] == UInt8(ascii: "#") else { throw .notOSC }
        // "#bundle\0" then an 8-byte time tag.
        guard bytes.count >= 16 else { throw .truncated }
        guard equal(UnsafeRawBufferPointer(rebasing: bytes[0..<7]), bundleTag), bytes[7] == 0 else { throw .notOSC }
        guard depth < maxBundleDepth else { throw .tooDeep }
        var offset = 16
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw .truncated }
            let size = Int(Int32(bitPattern: uint32(bytes, at: offset)))
            offset += 4
            guard size > 0, size % 4 == 0, size <= bytes.count - offset else { throw .truncated }
            try walk(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)]), depth: depth + 1, body)
            offset += size
        }
    }

    /// Reads one message, checking that every argument fits.
    public static func message(_ bytes: UnsafeRawBufferPointer) throws(OSCDropReason) -> OSCMessage {
        guard bytes.count % 4 == 0 else { throw .truncated }
        guard !bytes.isEmpty, bytes[0] == UInt8(ascii: "/") else { throw .notOSC }
        let (address, afterAddress) = try string(bytes, at: 0)
        // OSC 1.0 allows a message without type tags; TUIO always sends them, so we require them.
        guard afterAddress < bytes.count, bytes[afterAddress] == UInt8(ascii: ",") else { throw .badTypeTags }
        let (tagsWithComma, afterTags) = try string(bytes, at: afterAddress)
        let tags = UnsafeRawBufferPointer(rebasing: tagsWithComma[1...])
        let arguments = UnsafeRawBufferPointer(rebasing: bytes[afterTags...])
        var offset = 0
        for i in 0..<tags.count {
            guard let size = argumentSize(tags[i], arguments, at: offset) else {
                throw isKnownTag(tags[i]) ? .truncated : .unsupportedType
            }
            offset += size
        }
        guard offset == arguments.count else { throw .truncated }
        return OSCMessage(address: address, typeTags: tags, arguments: arguments)
    }

    /// A NUL-terminated string at `offset` whose padding is NUL: its bytes and the offset after the padding.
    static func string(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(OSCDropReason) -> (UnsafeRawBufferPointer, Int) {
        var end = offset
        while end < bytes.count, bytes[end] != 0 { end += 1 }
        guard end < bytes.count else { throw .badString }
        let next = padded(end + 1)
        guard next <= bytes.count else { throw .truncated }
        for i in end..<next where bytes[i] != 0 { throw .badString }
        return (UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), next)
    }

    static func isKnownTag(_ tag: UInt8) -> Bool {
        switch tag {
        case UInt8(ascii: "i"), UInt8(ascii: "f"), UInt8(ascii: "s"), UInt8(ascii: "S"), UInt8(ascii: "b"),
             UInt8(ascii: "h"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "c"), UInt8(ascii: "r"),
             UInt8(ascii: "m"), UInt8(ascii: "T"), UInt8(ascii: "F"), UInt8(ascii: "N"), UInt8(ascii: "I"):
            return true
        default:
            return false
        }
    }

    /// The size of the argument tagged `tag` at `offset`, or nil when it does not fit (or the tag is unknown).
    static func argumentSize(_ tag: UInt8, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        let left = bytes.count - offset
        switch tag {
        case UInt8(ascii: "i"), UInt8(ascii: "f"), UInt8(ascii: "c"), UInt8(ascii: "r"), UInt8(ascii: "m"):
            return left >= 4 ? 4 : nil
        case UInt8(ascii: "h"), UInt8(ascii: "t"), UInt8(ascii: "d"):
            return left >= 8 ? 8 : nil
        case UInt8(ascii: "T"), UInt8(ascii: "F"), UInt8(ascii: "N"), UInt8(ascii: "I"):
            return 0
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            var end = offset
            while end < bytes.count, bytes[end] != 0 { end += 1 }
            guard end < bytes.count else { return nil }
            let next = padded(end + 1)
            guard next <= bytes.count else { return nil }
            for i in end..<next where bytes[i] != 0 { return nil }
            return next - offset
        case UInt8(ascii: "b"):
            guard left >= 4 else { return nil }
            let length = Int(Int32(bitPattern: uint32(bytes, at: offset)))
            guard length >= 0, length <= left - 4 else { return nil }
            let size = 4 + padded(length)
            return size <= left ? size : nil
        default:
            return nil
        }
    }

    @inline(__always)
    static func padded(_ n: Int) -> Int { (n + 3) & ~3 }

    @inline(__always)
    static func uint32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// Whether `bytes` is exactly the ASCII text `text`.
    public static func equal(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        let start = text.utf8Start
        for i in 0..<bytes.count where bytes[i] != start[i] { return false }
        return true
    }
}
