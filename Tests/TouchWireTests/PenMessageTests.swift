// The page's pen message: `pen away`, `pen hover|touch X Y P TX TY TW FLAGS`, and what is not one.
import Testing
import TouchCore
import TouchWire

@Suite struct PenMessageTests {
    @Test func parsesHoverTouchAndAway() {
        #expect(WebCommand(parsing: "pen away") == .pen(.away))
        #expect(WebCommand(parsing: "pen hover 0.25 0.5 0 -30 45 90 -")
                == .pen(.near(PenSample(x: 0.25, y: 0.5, pressure: 0, tiltX: -30, tiltY: 45, twist: 90, touching: false))))
        #expect(WebCommand(parsing: "pen touch 1 0 0.725 0 0 0 be")
                == .pen(.near(PenSample(x: 1, y: 0, pressure: 0.725, touching: true, barrel: true, eraser: true))))
        #expect(WebCommand(parsing: "pen touch 0 0 1 90 -90 360 e")
                == .pen(.near(PenSample(x: 0, y: 0, pressure: 1, tiltX: 90, tiltY: -90, twist: 360, touching: true, eraser: true))))
    }

    @Test(arguments: [
        "pen", "pen ", "pen away now", "pen Away", "pen hover", "pen press 0 0 0 0 0 0 -",
        "pen touch 0.5 0.5 0.5 0 0 0", "pen touch 0.5 0.5 0.5 0 0 0 - extra", "pen touch 0.5  0.5 0.5 0 0 0 -",
        "pen touch 1.01 0.5 0.5 0 0 0 -", "pen touch 0.5 -0.01 0.5 0 0 0 -", "pen touch 0.5 0.5 1.5 0 0 0 -",
        "pen touch 0.5 0.5 0.5 91 0 0 -", "pen touch 0.5 0.5 0.5 0 -91 0 -", "pen touch 0.5 0.5 0.5 0 0 361 -",
        "pen touch nan 0.5 0.5 0 0 0 -", "pen touch 0.5 inf 0.5 0 0 0 -", "pen touch 0.5 0.5 0.5 0 0 0 bb",
        "pen touch 0.5 0.5 0.5 0 0 0 x", "pen touch 0.5 0.5 0.5 0 0 0 ", "pen touch 0.5 0.5 0.5 0 0 0 bex",
        "pen touch 0x1 0.5 0.5 0 0 0 -",
    ])
    func refusesWhatIsNotOne(_ line: String) {
        #expect(WebCommand(parsing: Substring(line)) == nil)
    }
}
