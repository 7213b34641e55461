// The live view's frame, as the page receives it: one binary WebSocket message (the page's messages
// and the daemon's other answers are text). Standard library only, like the rest of the page's language.
import TouchCore

/// One frame of the live view: a 10-byte header, then a baseline JPEG.
///
/// | bytes | what |
/// | --- | --- |
/// | 0 | `V` (0x56) |
/// | 1 | 1, the format's version |
/// | 2–3, 4–5 | the monitor's width and height in the desktop's pixels (big-endian), its shape |
/// | 6–7, 8–9 | the picture's width and height in pixels (big-endian): the monitor's shape fitted in the box the page asked for |
/// | 10… | the JPEG |
///
/// The page draws the picture at the monitor's shape, centred in its box, and maps a touch on it onto
/// the monitor (`surface W H` with the picture's size: the whole of it spans the monitor).
public enum ViewFrame {
    public static let magic: UInt8 = 0x56
    public static let version: UInt8 = 1
    public static let headerBytes = 10

    /// The frame of `jpeg` into `buffer` (emptied first, its capacity kept).
    public static func write(monitor: PixelRect, picture: ViewSize, jpeg: UnsafeRawBufferPointer, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(headerBytes + jpeg.count)
        buffer.append(magic)
        buffer.append(version)
        for side in [Int(monitor.width), Int(monitor.height), picture.width, picture.height] {
            let v = UInt16(clamping: side)
            buffer.append(UInt8(v >> 8))
            buffer.append(UInt8(v & 0xFF))
        }
        buffer.append(contentsOf: jpeg)
    }

    /// The header's sizes, or nil when `bytes` is not a frame of this version.
    public static func header(_ bytes: UnsafeRawBufferPointer) -> (monitor: ViewSize, picture: ViewSize)? {
        guard bytes.count > headerBytes, bytes[0] == magic, bytes[1] == version else { return nil }
        func side(_ i: Int) -> Int { Int(bytes[i]) << 8 | Int(bytes[i + 1]) }
        return (ViewSize(width: side(2), height: side(4)), ViewSize(width: side(6), height: side(8)))
    }
}
