/// Why a datagram was dropped, and where in it the problem was found.
///
/// Thrown by `PoseAIDecoder.decode`. Creating or throwing one allocates nothing; only
/// `description` builds a string, for logging.
public struct PoseAIDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of problem. The raw values are stable and can be used as counter indices.
    public enum Reason: UInt8, CaseIterable, Sendable, CustomStringConvertible {
        /// The datagram is larger than `PoseAIDecoder.maxPacketBytes`. Checked before parsing.
        case tooLarge
        /// Not JSON: an unexpected byte, or the input ended in the middle of a value.
        case notJSON
        /// Valid so far, but the top-level value is not an object (an array, a string, a number...).
        case notAnObject
        /// Something other than whitespace follows the top-level object.
        case trailingGarbage
        /// A string contains bytes that are not well-formed UTF-8.
        case invalidUTF8
        /// A string contains a raw control character (U+0000...U+001F) instead of an escape.
        case controlCharacter
        /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
        case badEscape
        /// A `\uXXXX` escape of a surrogate that is not part of a high-low pair.
        case badSurrogate
        /// A number that breaks JSON's grammar (`01`, `1.`, `.5`, `+1`, `-`, `1e`...).
        case badNumber
        /// A number whose magnitude rounds to infinity as a Double (`1e400`).
        case numberOutOfRange
        /// Arrays and objects nested deeper than `PoseAIDecoder.maxDepth`.
        case tooDeep
        /// A key the decoder reads has a value of the wrong type: `Touches`, `TouchState` or
        /// `sessionUUID` not a string, or `Orientation` not a number with an integral value.
        case wrongType
        /// `Touches` is not a sequence of 5-character events (length, digit or end marker).
        case badTouches
        /// A `Touches` event does not start with a slot digit `0`...`9`.
        case badSlot
        /// `TouchState` is not 40 characters of ten 4-character slot states.
        case badTouchState

        /// A short human phrase, e.g. "packet larger than 64 KiB".
        public var description: String {
            switch self {
            case .tooLarge: return "packet larger than 64 KiB"
            case .notJSON: return "not valid JSON"
            case .notAnObject: return "top-level value is not an object"
            case .trailingGarbage: return "data after the top-level object"
            case .invalidUTF8: return "invalid UTF-8"
            case .controlCharacter: return "raw control character in a string"
            case .badEscape: return "invalid escape sequence"
            case .badSurrogate: return "unpaired surrogate escape"
            case .badNumber: return "malformed number"
            case .numberOutOfRange: return "number too large for a Double"
            case .tooDeep: return "nested too deeply"
            case .wrongType: return "known key with a value of the wrong type"
            case .badTouches: return "malformed Touches"
            case .badSlot: return "bad slot in Touches"
            case .badTouchState: return "malformed TouchState"
            }
        }
    }

    /// What was wrong.
    public var reason: Reason
    /// The byte offset in the datagram where the problem was found; 0 when not applicable.
    public var offset: Int

    @inlinable
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// For example "malformed Touches at byte 12".
    public var description: String { "\(reason) at byte \(offset)" }
}
