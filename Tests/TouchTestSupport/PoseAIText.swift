// The PoseAI touch strings, written once for every test and benchmark that sends them: two base64 digits
// per 12-bit coordinate, five characters per `Touches` event, four per `TouchState` slot.

/// One event of the `Touches` string.
public enum PoseAITouch: Sendable {
    /// The finger in `slot` is at (x, y), each in -1…+1 (0,0 the centre).
    case at(slot: Int, x: Double, y: Double)
    /// The same with the 12-bit raw values (0…4095, 2047 = centre).
    case raw(slot: Int, x: Int, y: Int)
    /// `====`
    case ended(slot: Int)
    /// `=0=0`
    case cancelled(slot: Int)
}

/// One slot of `TouchState`.
public enum PoseAISlot: Sendable {
    case at(x: Double, y: Double)
    case raw(x: Int, y: Int)
    case cancelled
}

/// The PoseAI stream's text, as the phone writes it.
public enum PoseAIText {
    /// The base64 digits, value 0 first (the decoder also reads `-` `.` as `+`, `_` `,` as `/`).
    public static let digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    public static let alphabet = Array(digits)

    /// Two base64 digits for a value in -1…+1: raw = round((v+1)·2047) clamped to 0…4095.
    public static func encode(value: Double) -> String {
        encode(raw: Int(((value + 1) * 2047).rounded()))
    }

    /// Two base64 digits for a raw 12-bit value (clamped to 0…4095), high digit first.
    public static func encode(raw: Int) -> String {
        let r = min(max(raw, 0), 4095)
        return String([alphabet[r / 64], alphabet[r % 64]])
    }

    /// The `Touches` string: five characters per event.
    public static func touches(_ events: [PoseAITouch]) -> String {
        events.map { event -> String in
            switch event {
            case .at(let slot, let x, let y): return "\(slot)" + encode(value: x) + encode(value: y)
            case .raw(let slot, let x, let y): return "\(slot)" + encode(raw: x) + encode(raw: y)
            case .ended(let slot): return "\(slot)===="
            case .cancelled(let slot): return "\(slot)=0=0"
            }
        }.joined()
    }

    /// The 40-character `TouchState`: four characters per slot 0…9, `====` for a free slot.
    public static func touchState(_ slots: [Int: PoseAISlot]) -> String {
        (0..<10).map { slot -> String in
            switch slots[slot] {
            case nil: return "===="
            case .at(let x, let y): return encode(value: x) + encode(value: y)
            case .raw(let x, let y): return encode(raw: x) + encode(raw: y)
            case .cancelled: return "=0=0"
            }
        }.joined()
    }

    /// A packet as the phone sends it: `Touches` and `TouchState` (each left out when nil) plus
    /// the usual companions. The strings need no JSON escaping (base64 digits, `=`, slot digits).
    public static func packet(touches: String?, touchState: String?, timestamp: Double = 0) -> String {
        var fields: [String] = []
        if let touches { fields.append("\"Touches\":\"\(touches)\"") }
        if let touchState { fields.append("\"TouchState\":\"\(touchState)\"") }
        fields.append("\"Timestamp\":\(timestamp)")
        fields.append("\"PF\":1")
        return "{" + fields.joined(separator: ",") + "}"
    }
}
