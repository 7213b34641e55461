// Relative motion: deltas, no jumps, sub-pixel remainders, equal speed in X and Y, orientation.
import Testing
import TouchCore

@Suite struct TouchpadPointerTests {
    /// Flat profile at speed 0: exactly 12 px per mm, whatever the speed of the finger.
    static func flat(_ s: inout TouchpadSettings) { s.accelProfile = .flat; s.tapToClick = false }

    @Test func oneFingerMotionMovesPointerByDeltas() {
        var pad = Pad(Self.flat)
        #expect(pad.send(mm(0, 0, 0)) == [])
        let out = pad.stroke(from: 0, 0, by: 10, 5, steps: 10)
        #expect(out.allSatisfy { if case .moveBy = $0 { true } else { false } })
        let m = totalMotion(out)
        #expect(abs(m.dx - 120) <= 1 && abs(m.dy - 60) <= 1)
    }

    @Test func fingerLandingAnywhereDoesNotMovePointer() {
        var pad = Pad(Self.flat)
        #expect(pad.send(mm(0, -30, -60)) == [])
        _ = pad.send(ended(0))
        _ = pad.wait(500)
        #expect(pad.send(mm(0, 30, 60)) == [])
    }

    @Test func secondFingerJoiningOrLeavingDoesNotJump() {
        var pad = Pad(Self.flat)
        _ = pad.send(mm(0, 0, 0))
        _ = pad.stroke(from: 0, 0, by: 5, 0, steps: 5)
        // A second finger lands far away, then lifts: no pointer motion from either event.
        _ = pad.wait(16)
        #expect(pad.send(mm(1, -25, 40)) == [])
        _ = pad.wait(16)
        #expect(pad.send(ended(1)) == [])
        // It lands again, the first finger lifts: no jump either, and the second finger now moves the
        // pointer by exactly its own motion.
        _ = pad.wait(16)
        #expect(pad.send(mm(1, 20, 20)) == [])
        _ = pad.wait(16)
        #expect(pad.send(ended(0)) == [])
        let m = totalMotion(pad.stroke(1, from: 20, 20, by: 5, 0, steps: 5))
        #expect(abs(m.dx - 60) <= 1 && m.dy == 0)
    }

    @Test func slowMotionIsNotLostToRounding() {
        var pad = Pad(Self.flat)
        _ = pad.send(at(0, 2000, 2000))
        var out: [OutputAction] = []
        // 200 steps of one raw unit (0.016 mm, 0.19 px each): every step alone is under a pixel.
        for i in 1...200 {
            out += pad.wait(16)
            out += pad.send(at(0, UInt16(2000 + i), 2000))
        }
        let expected = 200 * surface.mmPerRawX * 12
        #expect(abs(Double(totalMotion(out).dx) - expected) <= 1)
    }

    @Test func motionIsEquallyFastInXAndY() {
        // The same 20 mm across and down give the same pixels, although 20 mm is 1261 raw steps across
        // and 582 down (each axis is normalised to its own edge).
        var a = Pad(Self.flat), b = Pad(Self.flat)
        _ = a.send(mm(0, -10, 0))
        let across = totalMotion(a.stroke(from: -10, 0, by: 20, 0, steps: 20))
        _ = b.send(mm(0, 0, -10))
        let down = totalMotion(b.stroke(from: 0, -10, by: 0, 20, steps: 20))
        #expect(abs(across.dx - down.dy) <= 2)
        #expect(abs(across.dx - 240) <= 2)
    }

    @Test func surfaceAspectSettingScalesEachAxis() {
        // A 4:3 tablet-like surface of the same diagonal is wider: the same raw motion is more mm.
        var wide = Pad { Self.flat(&$0); $0.surface = SurfaceSize(aspectLong: 4, short: 3, diagonalMM: 154.94) }
        var phone = Pad(Self.flat)
        _ = wide.send(at(0, 1000, 2000))
        _ = phone.send(at(0, 1000, 2000))
        var w: [OutputAction] = [], p: [OutputAction] = []
        for i in 1...10 {
            w += wide.wait(16); p += phone.wait(16)
            w += wide.send(at(0, UInt16(1000 + 100 * i), 2000))
            p += phone.send(at(0, UInt16(1000 + 100 * i), 2000))
        }
        #expect(Double(totalMotion(w).dx) / Double(totalMotion(p).dx) > 1.4)
    }

    @Test func surfaceReportedBySenderOverridesTheSetting() {
        // A sender reports a surface twice as wide: the same raw motion across is twice the millimetres.
        var pad = Pad(Self.flat)
        pad.core.setSurface(SurfaceSize(widthMM: 2 * surface.widthMM, heightMM: surface.heightMM))
        _ = pad.send(at(0, 1000, 2000))
        var out: [OutputAction] = []
        for i in 1...10 {
            out += pad.wait(16)
            out += pad.send(at(0, UInt16(1000 + 41 * i), 2000))
        }
        // 410 raw × 129.9 mm / 4094 = 13.0 mm × 12 px/mm = 156 px (78 with the default surface).
        #expect(abs(totalMotion(out).dx - 156) <= 1)
    }

    @Test(arguments: [
        (DeviceOrientation.portrait, 60, 0),
        (.portraitUpsideDown, -60, 0),
        (.landscapeLeft, 0, -60),
        (.landscapeRight, 0, 60),
    ])
    func orientationTurnsMotionToTheUsersView(orientation: DeviceOrientation, dx: Int, dy: Int) {
        // The finger moves 5 mm along the device's +X.
        var pad = Pad(Self.flat)
        pad.orientation = orientation
        _ = pad.send(mm(0, 0, 0))
        let m = totalMotion(pad.stroke(from: 0, 0, by: 5, 0, steps: 5))
        #expect(abs(m.dx - dx) <= 1 && abs(m.dy - dy) <= 1)
    }

    @Test func faceUpKeepsTheLastDefiniteOrientation() {
        var pad = Pad(Self.flat)
        pad.orientation = .landscapeLeft
        _ = pad.send(mm(0, 0, 0))
        pad.orientation = .faceUp
        let m = totalMotion(pad.stroke(from: 0, 0, by: 5, 0, steps: 5))
        #expect(abs(m.dx) <= 1 && abs(m.dy + 60) <= 1)
    }

    @Test func fastStrokeMovesFartherThanSlowStrokeWithAdaptiveAcceleration() {
        var slow = Pad { $0.tapToClick = false }, fast = Pad { $0.tapToClick = false }
        _ = slow.send(mm(0, -15, 0))
        _ = fast.send(mm(0, -15, 0))
        // 30 mm in 1 s (30 mm/s, factor 1) versus in 100 ms (300 mm/s, factor 3).
        let s = totalMotion(slow.stroke(from: -15, 0, by: 30, 0, steps: 60)).dx
        let f = totalMotion(fast.stroke(from: -15, 0, by: 30, 0, steps: 6)).dx
        #expect(abs(s - 360) <= 3)
        #expect(f > 2 * s)
        #expect(f <= 3 * 360 + 3)
    }

    @Test func verySlowMotionIsPrecise() {
        var pad = Pad { $0.tapToClick = false }
        _ = pad.send(mm(0, 0, 0))
        // 2 mm in 1 s: 2 mm/s, factor 0.3 + 0.7 × 2/7 = 0.5 → 12 px rather than 24.
        let m = totalMotion(pad.stroke(from: 0, 0, by: 2, 0, steps: 50, intervalMS: 20)).dx
        #expect(m >= 10 && m <= 14)
    }

    @Test func twoFingersDoNotMoveThePointer() {
        var pad = Pad(Self.flat)
        _ = pad.send(mm(0, 0, 0), mm(1, 15, 0))
        let out = pad.multiStroke([(0, 0, 0), (1, 15, 0)], by: 0, 1, steps: 2)
        #expect(totalMotion(out) == (0, 0))
    }
}

@Suite struct AccelerationCurveTests {
    static let speeds: [Double] = Array(stride(from: 0.0, through: 1000, by: 1))

    @Test(arguments: [-1.0, -0.5, 0, 0.5, 1])
    func adaptiveCurveIsMonotonicAndBounded(speed: Double) {
        let a = PointerAcceleration(profile: .adaptive, speed: speed)
        var previous = 0.0
        for v in Self.speeds {
            let f = a.factor(speedMMPerS: v)
            #expect(f >= previous)
            previous = f
        }
        let overall = 1 + 0.5 * speed
        #expect(a.factor(speedMMPerS: 0) == 0.3 * overall)
        #expect(a.factor(speedMMPerS: 1000) == (3 + speed) * overall)
    }

    @Test func defaultCurveHasItsDocumentedPoints() {
        let a = PointerAcceleration(profile: .adaptive, speed: 0)
        #expect(a.factor(speedMMPerS: 0) == 0.3)
        #expect(abs(a.factor(speedMMPerS: 3.5) - 0.65) < 1e-9)
        #expect(a.factor(speedMMPerS: 7) == 1)
        #expect(a.factor(speedMMPerS: 100) == 1)
        #expect(abs(a.factor(speedMMPerS: 200) - 2) < 1e-9)
        #expect(a.factor(speedMMPerS: 300) == 3)
        #expect(a.factor(speedMMPerS: 5000) == 3)
        #expect(a.pixelsPerMM(speedMMPerS: 50) == 12)
    }

    @Test func higherSpeedSettingIsFasterEverywhere() {
        for (lo, hi) in [(-1.0, -0.5), (-0.5, 0), (0, 0.5), (0.5, 1)] {
            let a = PointerAcceleration(profile: .adaptive, speed: lo)
            let b = PointerAcceleration(profile: .adaptive, speed: hi)
            for v in Self.speeds { #expect(b.factor(speedMMPerS: v) > a.factor(speedMMPerS: v)) }
            // The threshold moves down: acceleration starts earlier.
            #expect(b.factor(speedMMPerS: 120) / b.factor(speedMMPerS: 50)
                    >= a.factor(speedMMPerS: 120) / a.factor(speedMMPerS: 50))
        }
    }

    @Test func flatProfileIsConstant() {
        for s in [-1.0, 0, 1] {
            let a = PointerAcceleration(profile: .flat, speed: s)
            for v in Self.speeds { #expect(a.factor(speedMMPerS: v) == 1 + 0.5 * s) }
        }
    }

    @Test func speedSettingIsClamped() {
        #expect(PointerAcceleration(profile: .flat, speed: 7).speed == 1)
        #expect(PointerAcceleration(profile: .flat, speed: -7).speed == -1)
    }

    @Test func velocityIsMeasuredOverAtLeastFiftyMilliseconds() {
        var v = VelocityTracker()
        v.add(x: 0, y: 0, at: .milliseconds(0))
        v.add(x: 1, y: 0, at: .milliseconds(16))
        v.add(x: 2, y: 0, at: .milliseconds(32))
        v.add(x: 3, y: 0, at: .milliseconds(48))
        // Two packets bunched by the network: 1 ms apart.
        v.add(x: 4, y: 0, at: .milliseconds(49))
        let s = v.velocity().speed
        #expect(s > 60 && s < 100)
    }

    @Test func subpixelAccumulatorCarriesTheRemainder() {
        var acc = SubpixelAccumulator()
        var total = 0
        // Quarters are exact in binary: no rounding noise in the sums.
        for _ in 0..<10 { total += Int(acc.add(dx: 0.25, dy: -0.25).dx) }
        #expect(total == 2)
        #expect(acc.x == 0.5)
        var neg = 0
        for _ in 0..<10 { neg += Int(acc.add(dx: 0, dy: -0.25).dy) }
        // The first loop left -0.5 of its -2.5: with -2.5 more that is exactly -3.
        #expect(neg == -3)
        #expect(acc.y == 0)
    }

    @Test func defaultSurfaceIsA61InchPhoneAt19_5To9() {
        #expect(abs(surface.widthMM - 64.95) < 0.01)
        #expect(abs(surface.heightMM - 140.73) < 0.01)
    }
}
