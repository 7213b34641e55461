// A screenshot of an X display's root window, taken with `xwd -root` (Debian x11-apps) and read here:
// the XWD format is a big-endian header, a colour table, then the pixels.
import Foundation

struct Screenshot {
    let width: Int
    let height: Int
    private let pixels: [UInt32]  // 0xRRGGBB

    /// Runs `xwd -root -silent -display D` and parses its output (ZPixmap, 24 or 32 bits per pixel).
    static func take(display: String) throws -> Screenshot {
        guard let xwd = findInPath("xwd") else {
            throw RigError("xwd is not installed or not in PATH (Debian: apt-get install x11-apps)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: xwd)
        process.arguments = ["-root", "-silent", "-display", display]
        let pipe = Pipe(), errors = Pipe()
        process.standardOutput = pipe
        process.standardError = errors
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RigError("xwd -root -display \(display): exit status \(process.terminationStatus): \(message)")
        }
        var shot = try Screenshot(xwd: [UInt8](data))
        shot.xwd = data
        return shot
    }

    /// The XWD file it was read from (to keep, e.g. for the README's picture).
    var xwd = Data()

    init(xwd b: [UInt8]) throws {
        func u32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        guard b.count >= 100 else { throw RigError("xwd: \(b.count) bytes, no header") }
        let headerSize = u32(0), format = u32(8), width = u32(16), height = u32(20)
        let byteOrder = u32(28), bitsPerPixel = u32(44), bytesPerLine = u32(48), ncolors = u32(76)
        let redMask = u32(56), greenMask = u32(60), blueMask = u32(64)
        guard format == 2, bitsPerPixel == 32 || bitsPerPixel == 24 else {
            throw RigError("xwd: format \(format), \(bitsPerPixel) bits per pixel: not read here")
        }
        let start = headerSize + ncolors * 12
        guard b.count >= start + bytesPerLine * height else { throw RigError("xwd: truncated") }
        func shift(_ mask: Int) -> Int { mask == 0 ? 0 : mask.trailingZeroBitCount }
        let bpp = bitsPerPixel / 8
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let o = start + y * bytesPerLine + x * bpp
                var v = 0
                for k in 0..<bpp { v |= Int(b[o + k]) << (byteOrder == 0 ? 8 * k : 8 * (bpp - 1 - k)) }
                let r = (v & redMask) >> shift(redMask), g = (v & greenMask) >> shift(greenMask), bl = (v & blueMask) >> shift(blueMask)
                pixels[y * width + x] = UInt32(r << 16 | g << 8 | bl)
            }
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The pixel at (x, y) as (r, g, b).
    func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
        let v = pixels[y * width + x]
        return (Int(v >> 16 & 0xff), Int(v >> 8 & 0xff), Int(v & 0xff))
    }

    /// Whether (x, y) is within `tolerance` of (r, g, b) on every channel.
    func isColour(_ x: Int, _ y: Int, _ c: (Int, Int, Int), tolerance: Int = 24) -> Bool {
        let p = rgb(x, y)
        return abs(p.0 - c.0) <= tolerance && abs(p.1 - c.1) <= tolerance && abs(p.2 - c.2) <= tolerance
    }

    /// How many pixels in the square of half-side `r` around (x, y) are within tolerance of `c`.
    func count(near x: Int, _ y: Int, radius r: Int, _ c: (Int, Int, Int), tolerance: Int = 24) -> Int {
        var n = 0
        for yy in max(0, y - r)...min(height - 1, y + r) {
            for xx in max(0, x - r)...min(width - 1, x + r) where isColour(xx, yy, c, tolerance: tolerance) { n += 1 }
        }
        return n
    }

    /// Waits until `predicate` holds for a fresh screenshot, or throws after `timeout` s with `what`.
    @discardableResult
    static func waitFor(display: String, timeout: Double = 10, _ what: String,
                        _ predicate: (Screenshot) -> Bool) throws -> Screenshot {
        let deadline = Date().addingTimeInterval(timeout)
        var lastError: (any Error)? = nil
        while true {
            // xwd reads windows of another visual (the ARGB overlay) one by one, and fails with
            // BadMatch when one is unmapped meanwhile (a circle that just went): take another.
            do {
                let shot = try take(display: display)
                if predicate(shot) { return shot }
                lastError = nil
            } catch {
                lastError = error
            }
            guard Date() < deadline else {
                throw RigError("\(what): not seen on screen within \(timeout) s" + (lastError.map { " (\($0))" } ?? ""))
            }
            usleep(30_000)
        }
    }
}
