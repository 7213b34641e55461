import Testing
import TouchCore

/// The device frame turned to the user's view, row by row of `DeviceOrientation.toUserView(_:)`'s table
/// (wire-format.md, Orientation).
@Suite struct OrientationTests {
    /// The device's four corners and centre, in the device's portrait frame.
    let topLeft = pt(0, 0), topRight = pt(4094, 0), bottomLeft = pt(0, 4094), bottomRight = pt(4094, 4094)

    @Test(arguments: [DeviceOrientation.portrait, .unknown, .faceUp, .faceDown])
    func portraitRowKeepsThePoint(o: DeviceOrientation) {
        #expect(o.toUserView(pt(100, 3000)) == pt(100, 3000))
        #expect(o.toUserView(topRight) == topRight)
    }

    @Test func upsideDownRowFlipsBothAxes() {
        let o = DeviceOrientation.portraitUpsideDown
        #expect(o.toUserView(pt(100, 3000)) == pt(3994, 1094))
        #expect(o.toUserView(topLeft) == bottomRight)
        #expect(o.toUserView(topRight) == bottomLeft)
    }

    /// Home button on the right: the device's top is on the user's left, device +Y points to the user's
    /// right, device +X points up.
    @Test func landscapeLeftRowTurnsDeviceYToUserRightAndDeviceXUp() {
        let o = DeviceOrientation.landscapeLeft
        #expect(o.toUserView(pt(100, 3000)) == pt(3000, 3994))
        #expect(o.toUserView(topRight) == topLeft)       // device top-right is the user's top-left
        #expect(o.toUserView(bottomRight) == topRight)
        #expect(o.toUserView(bottomLeft) == bottomRight)
        #expect(o.toUserView(topLeft) == bottomLeft)
        // A move towards the device's +Y goes right; towards +X goes up.
        #expect(o.toUserView(dx: 0, dy: 1) == (dx: 1, dy: 0))
        #expect(o.toUserView(dx: 1, dy: 0) == (dx: 0, dy: -1))
    }

    /// Home button on the left: device +Y points to the user's left, device +X points down.
    @Test func landscapeRightRowTurnsDeviceYToUserLeftAndDeviceXDown() {
        let o = DeviceOrientation.landscapeRight
        #expect(o.toUserView(pt(100, 3000)) == pt(1094, 100))
        #expect(o.toUserView(bottomLeft) == topLeft)      // device bottom-left is the user's top-left
        #expect(o.toUserView(topLeft) == topRight)
        #expect(o.toUserView(topRight) == bottomRight)
        #expect(o.toUserView(bottomRight) == bottomLeft)
        #expect(o.toUserView(dx: 0, dy: 1) == (dx: -1, dy: 0))
        #expect(o.toUserView(dx: 1, dy: 0) == (dx: 0, dy: 1))
    }

    @Test(arguments: DeviceOrientation.allCases)
    func centreStaysTheCentreAndRawMaxFlipsLikeTheEdge(o: DeviceOrientation) {
        #expect(o.toUserView(.centre) == .centre)
        let past = o.toUserView(pt(4095, 4095)), edge = o.toUserView(pt(4094, 4094))
        #expect(past == edge || (past.rawX == 4095 || past.rawY == 4095))
        #expect(past.rawX <= 4095 && past.rawY <= 4095)
    }

    @Test(arguments: DeviceOrientation.allCases)
    func pointAndMotionRulesAgree(o: DeviceOrientation) {
        // The motion rule is the derivative of the point rule.
        let a = o.toUserView(pt(1000, 1500)), b = o.toUserView(pt(1010, 1530))
        let d = o.toUserView(dx: 10, dy: 30)
        #expect(Double(Int(b.rawX) - Int(a.rawX)) == d.dx)
        #expect(Double(Int(b.rawY) - Int(a.rawY)) == d.dy)
    }

    @Test func definiteAndLandscape() {
        #expect(DeviceOrientation.allCases.filter(\.isDefinite) == [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight])
        #expect(DeviceOrientation.allCases.filter(\.isLandscape) == [.landscapeLeft, .landscapeRight])
    }
}
