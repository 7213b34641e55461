// Switching modes from the web page gives the new mode everything it needs: a daemon started as a
// touchpad has no overlay, and Slides (presenter mode) chosen on the page makes one, so a long press
// shows the laser dot on screen; back to Pad, the overlay goes.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebModeSwitchTests {
    @Test func padToSlidesThenALongPressShowsTheLaserDot() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchpad")
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        try browser.wait(for: "window.tbReceived.includes('mode touchpad')", "page told the mode")

        _ = try browser.evaluate("window.tbReceived.length = 0; document.querySelector('[data-mode=presenter]').click(); true")
        try browser.wait(for: "window.tbReceived.includes('mode presenter')", "mode switch to presenter")

        // One finger rests in the middle of the pad: after the long-press time the laser comes on, at
        // the finger's place through the absolute mapping (the pad's middle is the screen's middle).
        guard let pad = try browser.evaluate("""
            (() => { const r = document.getElementById('pad').getBoundingClientRect();
              return [r.left + r.width / 2, r.top + r.height / 2]; })()
            """) as? [Double], pad.count == 2 else {
            Issue.record("no pad on the page")
            return
        }
        let log = rig.daemon.logMark
        try browser.touch("touchStart", [(x: pad[0], y: pad[1], id: 0)])
        try rig.daemon.waitForLog(containing: "presenter: touching → longPress → pointing", since: log, "long press turns the laser on")
        let centre = (x: rig.width / 2, y: rig.height / 2)
        let shot = try Screenshot.waitFor(display: rig.xvfb.display, "the laser dot near the screen's middle") {
            $0.count(near: centre.x, centre.y, radius: 80, OverlayIntegrationTests.laserRed) >= 100
        }
        #expect(shot.count(near: 100, 100, radius: 80, OverlayIntegrationTests.laserRed) == 0, "a red dot where no finger is")
        try browser.touch("touchEnd", [])

        // Back to Pad: the presenter and its overlay go (nothing red is left on screen).
        _ = try browser.evaluate("window.tbReceived.length = 0; document.querySelector('[data-mode=touchpad]').click(); true")
        try browser.wait(for: "window.tbReceived.includes('mode touchpad')", "mode switch back to touchpad")
        try Screenshot.waitFor(display: rig.xvfb.display, "no laser dot after switching back to Pad") {
            $0.count(near: centre.x, centre.y, radius: 200, OverlayIntegrationTests.laserRed) == 0
        }
    }

    /// With a phone already driving (person 1), a page in Chromium is person 2: its header shows it in
    /// its colour, and its laser dot is drawn in that colour on the desktop, where person 1's would be red.
    @Test func aSecondPersonsPageShowsTheirColourAndTheirLaserIsDrawnInIt() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "presenter", extraArguments: ["--people", "2"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        try rig.sender.send(touches: [.at(slot: 0, x: -0.8, y: -0.8)], state: [0: .at(x: -0.8, y: -0.8)])
        try rig.daemon.waitForLog(containing: "person 1", "the phone is person 1")
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "window.tbReceived.includes('person 2 #00b359')", "the page told it is person 2")
        try browser.wait(for: """
            (() => { const b = document.getElementById('person');
              return !b.hidden && b.textContent === 'person 2' && getComputedStyle(b).backgroundColor === 'rgb(0, 179, 89)'; })()
            """, "the header's badge says person 2, in green")

        guard let pad = try browser.evaluate("""
            (() => { const r = document.getElementById('pad').getBoundingClientRect();
              return [r.left + r.width / 2, r.top + r.height / 2]; })()
            """) as? [Double], pad.count == 2 else {
            Issue.record("no pad on the page")
            return
        }
        try browser.touch("touchStart", [(x: pad[0], y: pad[1], id: 0)])
        let centre = (x: rig.width / 2, y: rig.height / 2)
        let green = (0, 179, 89)
        let shot = try Screenshot.waitFor(display: rig.xvfb.display, "person 2's laser dot, green, near the screen's middle") {
            $0.count(near: centre.x, centre.y, radius: 80, green) >= 100
        }
        #expect(shot.count(near: centre.x, centre.y, radius: 80, OverlayIntegrationTests.laserRed) == 0, "no red dot: that is person 1's")
        try browser.touch("touchEnd", [])

        // The connection drops: the page connects again, takes the place anew and is told so again.
        _ = try browser.evaluate("window.tbReceived.length = 0; window.tb.socket().close(); true")
        try browser.wait(for: "window.tbReceived.includes('person 2 #00b359')", timeout: 20, "told again after connecting again")

        // A full house: the page is still, the phone keeps moving, and after the takeover silence (10 s) a
        // newcomer takes the page's place. The page's next touch is answered busy, and its badge goes.
        let newcomer = try PoseAISender(port: rig.daemon.port, host: rig.daemon.host, source: "127.0.0.3")
        let quiet = ContinuousClock.now
        var step = 0
        while ContinuousClock.now - quiet < .milliseconds(10_500) {
            step += 1
            let x = -0.8 + Double(step % 2) * 0.05
            try rig.sender.send(touches: [.at(slot: 0, x: x, y: -0.8)], state: [0: .at(x: x, y: -0.8)])
            Thread.sleep(forTimeInterval: 0.25)
        }
        let log = rig.daemon.logMark
        try newcomer.send(touches: [.at(slot: 0, x: 0.5, y: 0.5)], state: [0: .at(x: 0.5, y: 0.5)])
        try rig.daemon.waitForLog(containing: "person 2", since: log, "the newcomer takes place 2")
        _ = try browser.evaluate("window.tbReceived.length = 0; true")
        try browser.touch("touchStart", [(x: pad[0], y: pad[1], id: 0)])
        try browser.touch("touchEnd", [])
        try browser.wait(for: "window.tbReceived.includes('busy') && document.getElementById('person').hidden",
                         "the page told busy, its badge gone")
    }
}
