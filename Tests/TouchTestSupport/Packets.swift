// Packets the tests and benchmarks send, written once: PoseAI JSON strings and TUIO/OSC datagrams.

/// The typical packet of the hot path: one to three events, a full TouchState, Orientation and a
/// few keys the decoder ignores.
public let typicalPacket = #"{"Timestamp":12345.678,"userName":"x","Touches":"0f/f/1AAAA0====","TouchState":"f/f/AAAA================================","Orientation":1,"ModelLatency":3,"Rig":"UE4"}"#

/// `count` position events cycling through the slots, as a Touches string.
public func touchesString(events count: Int) -> String {
    let digits = PoseAIText.alphabet
    var s = ""
    for i in 0..<count {
        s.append(Character(String(i % 10)))
        for k in 0..<4 { s.append(digits[(i * 7 + k * 13) % 64]) }
    }
    return s
}

/// The worst packet the benchmarks decode: 50 events and a full TouchState.
public let worstPacket = #"{"Timestamp":12345.678,"userName":"x","Touches":"\#(touchesString(events: 50))","TouchState":"f/f/AAAAf/f/AAAAf/f/AAAAf/f/AAAAf/f/AAAA","Orientation":1,"ModelLatency":3,"Rig":"UE4"}"#

/// A minimal OSC 1.0 writer (independent of the reader under test), and TUIO 1.1 frames as a TUIO app
/// sends them: an OSC bundle of /tuio/2Dcur source, alive, set…, fseq. Written from the OSC 1.0 and
/// TUIO 1.1 specifications.
public enum OSCWrite {
    public enum Arg { case i(Int32), f(Float), s(String), b([UInt8]), t }

    public static func pad(_ bytes: inout [UInt8]) { while bytes.count % 4 != 0 { bytes.append(0) } }

    public static func string(_ s: String) -> [UInt8] {
        var b = Array(s.utf8) + [0]
        pad(&b)
        return b
    }

    public static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    public static func message(_ address: String, _ args: [Arg]) -> [UInt8] {
        var tags = ","
        var data: [UInt8] = []
        for arg in args {
            switch arg {
            case .i(let v): tags += "i"; data += be(UInt32(bitPattern: v))
            case .f(let v): tags += "f"; data += be(v.bitPattern)
            case .s(let v): tags += "s"; data += string(v)
            case .b(let v): tags += "b"; data += be(UInt32(v.count)) + v; pad(&data)
            case .t: tags += "T"
            }
        }
        return string(address) + string(tags) + data
    }

    public static func bundle(_ elements: [[UInt8]]) -> [UInt8] {
        var out = string("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1]
        for e in elements { out += be(UInt32(e.count)) + e }
        return out
    }

    /// A TUIO 1.1 2Dcur frame: source, alive, one set per cursor, fseq.
    public static func frame(fseq: Int32, alive: [Int32], set: [(Int32, Float, Float)]) -> [UInt8] {
        var elements = [message("/tuio/2Dcur", [.s("source"), .s("test@127.0.0.1")]),
                        message("/tuio/2Dcur", [.s("alive")] + alive.map { .i($0) })]
        for (id, x, y) in set {
            elements.append(message("/tuio/2Dcur", [.s("set"), .i(id), .f(x), .f(y), .f(0), .f(0), .f(0)]))
        }
        elements.append(message("/tuio/2Dcur", [.s("fseq"), .i(fseq)]))
        return bundle(elements)
    }
}

