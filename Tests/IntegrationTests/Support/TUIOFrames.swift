// TUIO 1.1 datagrams as a TUIO app sends them: an OSC bundle of /tuio/2Dcur source, alive, set…, fseq.
// Written here from the OSC 1.0 and TUIO 1.1 specifications, independently of the daemon's reader.
import Glibc

enum TUIOFrames {
    enum Arg { case i(Int32), f(Float), s(String) }

    static func pad(_ bytes: inout [UInt8]) { while bytes.count % 4 != 0 { bytes.append(0) } }

    static func string(_ s: String) -> [UInt8] {
        var b = Array(s.utf8) + [0]
        pad(&b)
        return b
    }

    static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func message(_ address: String, _ args: [Arg]) -> [UInt8] {
        var tags = ","
        var data: [UInt8] = []
        for arg in args {
            switch arg {
            case .i(let v): tags += "i"; data += be(UInt32(bitPattern: v))
            case .f(let v): tags += "f"; data += be(v.bitPattern)
            case .s(let v): tags += "s"; data += string(v)
            }
        }
        return string(address) + string(tags) + data
    }

    static func bundle(_ elements: [[UInt8]]) -> [UInt8] {
        var out = string("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1]
        for e in elements { out += be(UInt32(e.count)) + e }
        return out
    }

    /// One frame: `cursors` are (session id, x, y) with x, y in 0…1 from the top-left corner.
    static func frame(fseq: Int32, alive: [Int32], set cursors: [(Int32, Float, Float)]) -> [UInt8] {
        var elements = [message("/tuio/2Dcur", [.s("source"), .s("rig@127.0.0.1")]),
                        message("/tuio/2Dcur", [.s("alive")] + alive.map { .i($0) })]
        for (id, x, y) in cursors {
            elements.append(message("/tuio/2Dcur", [.s("set"), .i(id), .f(x), .f(y), .f(0), .f(0), .f(0)]))
        }
        elements.append(message("/tuio/2Dcur", [.s("fseq"), .i(fseq)]))
        return bundle(elements)
    }
}
