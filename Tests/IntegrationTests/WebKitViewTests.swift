// The live view in a real WebKit (WebKitGTK 4.1, the iPhone's engine; webkit_driver.py) on a real Xvfb, as
// WebViewTests shows it in Chromium: a screen of known colours and windows (xsetroot's red root, xev's
// white window, xlogo painted solid blue) is in the page's picture where it is on the screen; a tap on
// xev's picture, a touch WebKit itself turns into the page's touch events, reaches xev at that point; a
// change appears. WebKit decodes the JPEG (createImageBitmap), lays out the canvas and maps the touch with
// its own code, none of which the Chromium tests run.
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebKitViewTests {
    @Test func webKitShowsTheScreenWhereItIsAndATapLandsWhereItShows() throws {
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", view: true)
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let d = rig.xvfb.display
        try WebViewTests.root("#ff0000", display: d)
        let x = WebViewTests.xevRect, l = WebViewTests.logoRect
        let xev = try WebViewTests.client("xev", ["-geometry", "\(x.w)x\(x.h)+\(x.x)+\(x.y)", "-event", "button", "-event", "structure"],
                                          display: d, ready: "MapNotify")
        defer { _ = xev.stop() }
        let logo = try WebViewTests.client("xlogo", ["-bg", "#0000ff", "-fg", "#0000ff", "-geometry", "\(l.w)x\(l.h)+\(l.x)+\(l.y)"], display: d)
        defer { _ = logo.stop() }

        // WebKit's window is off-screen: it is not on the screen it shows.
        let page = try WebKitPage(url: url, display: d)
        defer { page.close() }
        try page.wait(for: "document.body.dataset.state === 'connected' && window.tbReceived.includes('mode touchscreen')", "WebKit's page connected")
        try page.wait(for: "window.tbView.frames >= 1 && window.tbView.monitor[0] === \(rig.width) && window.tbView.monitor[1] === \(rig.height)",
                      timeout: 20, "a frame of the whole 1920x1080 monitor in WebKit")
        try page.wait(for: WebViewTests.shows(100, 100, (255, 0, 0)), timeout: 20, "the red root at (100, 100) in WebKit")
        try page.wait(for: WebViewTests.shows(x.x + 400, x.y + 250, (255, 255, 255)), timeout: 20, "xev's white window in WebKit")
        try page.wait(for: WebViewTests.shows(l.x + 200, l.y + 150, (0, 0, 255)), timeout: 20, "xlogo's blue window in WebKit")
        try page.wait(for: WebViewTests.shows(1000, 950, (255, 0, 0)), timeout: 20, "the red root below the windows in WebKit")
        let canvas = try page.evaluate("(() => { const r = document.getElementById('view').getBoundingClientRect(); return [r.width, r.height]; })()") as? [Double] ?? []
        #expect(canvas.count == 2 && canvas[0] > 0 && abs(canvas[0] * Double(rig.height) - canvas[1] * Double(rig.width)) <= Double(rig.width),
                "WebKit laid the canvas out at \(canvas), not the monitor's shape")

        // A tap on xev's picture, at (500, 420) of the screen: xev gets the press there.
        let target = (x: x.x + 300, y: x.y + 120)
        let p = try WebViewTests.onPage(page, target.x, target.y)
        let mark = xev.stdout.count
        try page.touch("begin", x: p.x, y: p.y)
        try page.touch("end", x: p.x, y: p.y)
        guard let press = xev.stdout.waitFor(from: mark, timeout: 20, { $0.text.contains("root:(") }) else {
            Issue.record("xev got no ButtonPress from WebKit's tap\n\(xev.outputTail())\n\(rig.daemon.outputTail())")
            return
        }
        // A CSS pixel of WebKit's 390 px wide picture is about 5 screen pixels.
        let numbers = press.text.split(separator: "root:(").last?.prefix { $0 != ")" }.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? []
        #expect(numbers.count == 2 && abs(numbers[0] - target.x) <= 6 && abs(numbers[1] - target.y) <= 6,
                "WebKit's tap landed at \(numbers), not near \(target)\n\(xev.outputTail())")

        // A change appears: the root turns green.
        try WebViewTests.root("#00ff00", display: d)
        try page.wait(for: WebViewTests.shows(1000, 950, (0, 255, 0)), timeout: 20, "the green root in WebKit")
    }
}
