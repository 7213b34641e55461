import Testing
import TouchCore

@Suite struct ScreenMappingTests {
    let fullHD = ScreenMapping(width: 1920, height: 1080)

    @Test func cornersMapToCornerPixels() {
        #expect(fullHD.pixel(for: pt(0, 0)) == PixelPoint(x: 0, y: 0))
        #expect(fullHD.pixel(for: pt(4094, 0)) == PixelPoint(x: 1919, y: 0))
        #expect(fullHD.pixel(for: pt(0, 4094)) == PixelPoint(x: 0, y: 1079))
        #expect(fullHD.pixel(for: pt(4094, 4094)) == PixelPoint(x: 1919, y: 1079))
    }

    @Test func centreMapsToMiddlePixel() {
        #expect(fullHD.pixel(for: .centre) == PixelPoint(x: 960, y: 540))
    }

    @Test func rawMaxIsClampedToLastPixel() {
        #expect(fullHD.pixel(for: pt(4095, 4095)) == PixelPoint(x: 1919, y: 1079))
    }

    @Test func oddSizes() {
        let m = ScreenMapping(width: 1921, height: 1081)
        #expect(m.pixel(for: .centre) == PixelPoint(x: 960, y: 540))
        #expect(m.pixel(for: pt(4094, 4095)) == PixelPoint(x: 1920, y: 1080))
        #expect(m.pixel(for: pt(0, 0)) == PixelPoint(x: 0, y: 0))
        let tiny = ScreenMapping(width: 1, height: 3)
        #expect(tiny.pixel(for: pt(0, 0)) == PixelPoint(x: 0, y: 0))
        #expect(tiny.pixel(for: pt(4095, 4095)) == PixelPoint(x: 0, y: 2))
        #expect(tiny.pixel(for: .centre) == PixelPoint(x: 0, y: 1))
    }

    @Test func nonZeroOriginShiftsEveryPixel() {
        let right = ScreenMapping(x: 1920, y: 100, width: 1280, height: 1024)
        #expect(right.pixel(for: pt(0, 0)) == PixelPoint(x: 1920, y: 100))
        #expect(right.pixel(for: .centre) == PixelPoint(x: 1920 + 640, y: 100 + 512))
        #expect(right.pixel(for: pt(4095, 4095)) == PixelPoint(x: 1920 + 1279, y: 100 + 1023))
        let negative = ScreenMapping(x: -1280, y: 0, width: 1280, height: 1024)
        #expect(negative.pixel(for: pt(0, 4094)) == PixelPoint(x: -1280, y: 1023))
    }

    @Test(arguments: [1, 2, 3, 800, 1080, 1920, 1921, 3840, 4094])
    func everyPixelGetsAnEqualShareOfRawValues(width: Int32) {
        let m = ScreenMapping(width: width, height: 1)
        var counts = [Int](repeating: 0, count: Int(width))
        var previous: Int32 = 0
        for raw in 0...UInt16(4094) {
            let x = m.pixel(for: pt(raw, 0)).x
            #expect(x >= previous)  // monotonic
            previous = x
            counts[Int(x)] += 1
        }
        // Every pixel is reachable; shares differ by at most one raw value.
        #expect(counts.min()! >= 4095 / Int(width))
        #expect(counts.max()! - counts.min()! <= 1)
    }
}
