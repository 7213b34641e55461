// The live view's scale step turns a turned output's framebuffer as the output shows it: a picture of
// four coloured quadrants, in a real cairo image, through ViewEncoder (cairo and libjpeg-turbo), for each
// of wl_output's eight transforms; the scaled picture (before the JPEG) is read back.
import Testing
import TouchCore
import TouchOutput
@testable import TouchX11

@Suite(.serialized) struct ViewEncoderTests {
    /// 0xRRGGBB of the quadrants of the framebuffer: top-left, top-right, bottom-left, bottom-right.
    static let quadrants: [UInt32] = [0xff0000, 0x00ff00, 0x0000ff, 0xffffff]

    /// A `width`×`height` framebuffer of the four quadrants.
    static func framebuffer(width: Int32, height: Int32) throws -> CairoSurface {
        let surface = try CairoSurface.image(width: width, height: height)
        try surface.flush()
        let (data, stride) = try surface.imagePixels()
        for y in 0..<Int(height) {
            for x in 0..<Int(width) {
                let q = (y < Int(height) / 2 ? 0 : 2) + (x < Int(width) / 2 ? 0 : 1)
                data.storeBytes(of: Self.quadrants[q], toByteOffset: y * Int(stride) + x * 4, as: UInt32.self)
            }
        }
        try surface.markDirty()
        return surface
    }

    /// The scaled picture's quadrants (their centres' colours), in the same order.
    static func quadrantsShown(_ encoder: ViewEncoder, width: Int, height: Int) throws -> [UInt32] {
        let scaled = try #require(encoder.scaled)
        try scaled.flush()
        let (data, stride) = try scaled.imagePixels()
        return [(width / 4, height / 4), (3 * width / 4, height / 4), (width / 4, 3 * height / 4), (3 * width / 4, 3 * height / 4)]
            .map { data.load(fromByteOffset: $0.1 * Int(stride) + $0.0 * 4, as: UInt32.self) & 0xffffff }
    }

    /// wl_output.transform: the framebuffer holds the shown picture turned counter-clockwise by 90° a
    /// step (4–7 flipped first, about the vertical axis), so the shown picture is the framebuffer turned
    /// back: turned 90° (1), the framebuffer's top-left quadrant is shown top-right.
    static let turns: [(Int32, [Int])] = [
        (0, [0, 1, 2, 3]), (1, [2, 0, 3, 1]), (2, [3, 2, 1, 0]), (3, [1, 3, 0, 2]),
        (4, [1, 0, 3, 2]), (5, [0, 2, 1, 3]), (6, [2, 3, 0, 1]), (7, [3, 1, 2, 0]),
    ]

    @Test(arguments: Self.turns)
    func aTurnedOutputIsShownAsItsMonitorShowsIt(transform: Int32, order: [Int]) throws {
        // libjpeg-turbo and libXdamage are loaded at run time, as the daemon loads them.
        let missing = XDisplay.loadCaptureLibraries()
        try #require(missing == nil, "\(missing ?? "")")
        let width: Int32 = 64, height: Int32 = 32
        let source = try Self.framebuffer(width: width, height: height)
        defer { source.destroy() }
        let turned = transform & 1 == 1
        let shown = turned ? (w: height, h: width) : (w: width, h: height)
        let encoder = ViewEncoder()
        defer { encoder.release() }
        var bytes = 0
        try encoder.encode(source, sourceWidth: width, sourceHeight: height, yInverted: false, transform: transform,
                           region: (0, 0, Double(shown.w), Double(shown.h)), cursor: nil,
                           size: ViewSize(width: Int(shown.w), height: Int(shown.h))) { bytes = $0.count }
        #expect(bytes > 0, "no JPEG")
        let seen = try Self.quadrantsShown(encoder, width: Int(shown.w), height: Int(shown.h))
        let want = order.map { Self.quadrants[$0] }
        #expect(seen == want, "transform \(transform): \(seen.map { String($0, radix: 16) }), want \(want.map { String($0, radix: 16) })")
    }
}
