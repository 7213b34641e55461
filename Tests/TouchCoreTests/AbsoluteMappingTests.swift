import Testing
import TouchCore

/// Absolute mode's mapping, step by step (`AbsoluteMapping`'s documentation): orientation, fit, pixel.
/// The target is a monitor at a non-zero offset, 1920×1080 at +960+120.
@Suite struct AbsoluteMappingTests {
    let monitor = PixelRect(x: 960, y: 120, width: 1920, height: 1080)
    var stretch: AbsoluteMapping { AbsoluteMapping(target: monitor, fit: .stretch) }
    var contain: AbsoluteMapping { AbsoluteMapping(target: monitor, fit: .contain, aspect: .phone) }

    /// The device's corners and centre in its portrait frame.
    let corners = (tl: pt(0, 0), tr: pt(4094, 0), bl: pt(0, 4094), br: pt(4094, 4094))

    // MARK: step 3, the pixel: px = x0 + min(W - 1, raw * W / 4094)

    @Test func stretchPortraitCornersAreTheMonitorsCornerPixels() {
        let m = stretch
        #expect(m.pixel(for: corners.tl, orientation: .portrait) == PixelPoint(x: 960, y: 120))
        #expect(m.pixel(for: corners.tr, orientation: .portrait) == PixelPoint(x: 960 + 1919, y: 120))
        #expect(m.pixel(for: corners.bl, orientation: .portrait) == PixelPoint(x: 960, y: 120 + 1079))
        #expect(m.pixel(for: corners.br, orientation: .portrait) == PixelPoint(x: 960 + 1919, y: 120 + 1079))
        #expect(m.pixel(for: .centre, orientation: .portrait) == PixelPoint(x: 960 + 960, y: 120 + 540))
        #expect(m.pixel(for: pt(4095, 4095), orientation: .portrait) == PixelPoint(x: 960 + 1919, y: 120 + 1079))
    }

    // MARK: step 1, orientation, through the whole mapping (stretch)

    /// In each orientation, which device corner lands on the monitor's top-left, top-right, bottom-left
    /// and bottom-right pixel.
    @Test(arguments: [
        (DeviceOrientation.portrait, [0, 1, 2, 3]),
        (.portraitUpsideDown, [3, 2, 1, 0]),
        (.landscapeLeft, [1, 3, 0, 2]),
        (.landscapeRight, [2, 0, 3, 1]),
    ])
    func stretchEachOrientationPutsTheRightDeviceCornerOnEachMonitorCorner(o: DeviceOrientation, order: [Int]) {
        let device = [corners.tl, corners.tr, corners.bl, corners.br]
        let pixels = [
            PixelPoint(x: 960, y: 120), PixelPoint(x: 2879, y: 120),
            PixelPoint(x: 960, y: 1199), PixelPoint(x: 2879, y: 1199),
        ]
        for (userCorner, deviceCorner) in order.enumerated() {
            #expect(stretch.pixel(for: device[deviceCorner], orientation: o) == pixels[userCorner], "\(o) corner \(userCorner)")
        }
        #expect(stretch.pixel(for: .centre, orientation: o) == PixelPoint(x: 1920, y: 660))
    }

    @Test(arguments: [DeviceOrientation.unknown, .faceUp, .faceDown])
    func indefiniteOrientationsMapLikePortrait(o: DeviceOrientation) {
        for p in [corners.tl, corners.tr, corners.bl, corners.br, pt(123, 3456)] {
            #expect(stretch.pixel(for: p, orientation: o) == stretch.pixel(for: p, orientation: .portrait))
            #expect(contain.pixel(for: p, orientation: o) == contain.pixel(for: p, orientation: .portrait))
        }
    }

    // MARK: step 2, the fit

    @Test(arguments: DeviceOrientation.allCases)
    func stretchUsesTheWholeTarget(o: DeviceOrientation) {
        #expect(stretch.fittedRect(for: o) == monitor)
    }

    /// Portrait on a wide monitor: full height, width = round(1080 × 9 / 19.5) = round(498.46) = 498,
    /// centred: x0 = 960 + (1920 − 498) / 2 = 1671 (pillarboxed).
    @Test(arguments: [DeviceOrientation.portrait, .portraitUpsideDown, .unknown])
    func containPortraitOnAWideMonitorIsPillarboxedAndCentred(o: DeviceOrientation) {
        #expect(contain.fittedRect(for: o) == PixelRect(x: 1671, y: 120, width: 498, height: 1080))
    }

    @Test func containPortraitCornersAndCentre() {
        let m = contain
        #expect(m.pixel(for: corners.tl, orientation: .portrait) == PixelPoint(x: 1671, y: 120))
        #expect(m.pixel(for: corners.br, orientation: .portrait) == PixelPoint(x: 1671 + 497, y: 1199))
        #expect(m.pixel(for: .centre, orientation: .portrait) == PixelPoint(x: 1671 + 249, y: 660))
        // Upside down: the device's top-left is the user's bottom-right.
        #expect(m.pixel(for: corners.tl, orientation: .portraitUpsideDown) == PixelPoint(x: 1671 + 497, y: 1199))
    }

    /// Landscape on a 16:9 monitor (wider phone, 19.5:9): full width, height = round(1920 × 9 / 19.5)
    /// = round(886.15) = 886, centred: y0 = 120 + (1080 − 886) / 2 = 217 (letterboxed).
    @Test(arguments: [DeviceOrientation.landscapeLeft, .landscapeRight])
    func containLandscapeOnA16By9MonitorIsLetterboxedAndCentred(o: DeviceOrientation) {
        #expect(contain.fittedRect(for: o) == PixelRect(x: 960, y: 217, width: 1920, height: 886))
    }

    @Test func containLandscapeCornersAndCentre() {
        let m = contain
        // Landscape left: the device's top-right is the user's top-left.
        #expect(m.pixel(for: corners.tr, orientation: .landscapeLeft) == PixelPoint(x: 960, y: 217))
        #expect(m.pixel(for: corners.bl, orientation: .landscapeLeft) == PixelPoint(x: 2879, y: 217 + 885))
        // Landscape right: the device's bottom-left is the user's top-left.
        #expect(m.pixel(for: corners.bl, orientation: .landscapeRight) == PixelPoint(x: 960, y: 217))
        #expect(m.pixel(for: corners.tr, orientation: .landscapeRight) == PixelPoint(x: 2879, y: 217 + 885))
        #expect(m.pixel(for: .centre, orientation: .landscapeRight) == PixelPoint(x: 1920, y: 217 + 443))
    }

    @Test func containOnATallMonitorLetterboxesPortraitAndLandscape() {
        // A portrait-turned monitor 1080×1920 at +0+0; a 4:3 surface.
        let m = AbsoluteMapping(target: PixelRect(x: 0, y: 0, width: 1080, height: 1920), fit: .contain,
                                aspect: SurfaceAspect(parsing: "4:3")!)
        // Portrait 3:4 surface: target is taller (1080 × 4 = 4320 < 1920 × 3 = 5760): W = 1080, H = 1440.
        #expect(m.fittedRect(for: .portrait) == PixelRect(x: 0, y: 240, width: 1080, height: 1440))
        // Landscape 4:3: W = 1080, H = round(1080 × 3 / 4) = 810, y0 = (1920 − 810) / 2 = 555.
        #expect(m.fittedRect(for: .landscapeLeft) == PixelRect(x: 0, y: 555, width: 1080, height: 810))
    }

    @Test func containWithTheSameAspectIsStretch() {
        let m = AbsoluteMapping(target: PixelRect(x: 7, y: 9, width: 1600, height: 900), fit: .contain,
                                aspect: SurfaceAspect(parsing: "16:9")!)
        #expect(m.fittedRect(for: .landscapeRight) == PixelRect(x: 7, y: 9, width: 1600, height: 900))
        #expect(m.fittedRect(for: .portrait) == PixelRect(x: 7 + (1600 - 506) / 2, y: 9, width: 506, height: 900))
    }

    @Test func containNeverLeavesTheTargetOrBecomesEmpty() {
        let extreme = SurfaceAspect(long: 1_000_000, short: 1)
        for target in [PixelRect(x: -5, y: 3, width: 1, height: 1), PixelRect(x: 0, y: 0, width: 3, height: 5000),
                       PixelRect(x: 100, y: 0, width: 7680, height: 2)] {
            for o in DeviceOrientation.allCases {
                let r = AbsoluteMapping(target: target, fit: .contain, aspect: extreme).fittedRect(for: o)
                #expect(r.width >= 1 && r.height >= 1)
                #expect(r.x >= target.x && r.x + r.width <= target.x + target.width)
                #expect(r.y >= target.y && r.y + r.height <= target.y + target.height)
            }
        }
    }

    // MARK: the phone's shape

    @Test func surfaceAspectParsing() {
        #expect(SurfaceAspect(parsing: "19.5:9") == SurfaceAspect.phone)
        #expect(SurfaceAspect(parsing: "9:19.5") == SurfaceAspect.phone)
        #expect(SurfaceAspect(parsing: "16:9")?.description == "16:9")
        #expect(SurfaceAspect.phone.description == "19.5:9")
        #expect(SurfaceAspect(parsing: "2.125:1")?.description == "2.125:1")
        for bad in ["", "16", "16:", ":9", "16:9:1", "0:9", "a:b", "1.2345:1", "16x9", "-16:9", "1001:1", "1..5:1"] {
            #expect(SurfaceAspect(parsing: bad) == nil, "\(bad)")
        }
    }
}
