// The page as a daily remote, end to end: the real daemon, a headless Chromium with a phone
// viewport and touch, and Xvfb. Every key of the keys drawer and every button of the Slides panel
// reaches X as the key it names (keycodes from the server's own map, `xmodmap -pke`); the laser button
// held shows the dot under the pad's finger (xwd screenshot); the live settings change what a drag or
// a scroll does, and come back after a reload; the RTT readout shows milliseconds; the manifest, icon
// and service-worker routes answer; a refusal says why.
import Foundation
import Testing

private typealias T = TouchpadIntegrationTests

@Suite(.serialized, .timeLimit(.minutes(10)))
struct WebRemoteTests {
    /// A connected page on a fresh rig.
    static func open(mode: String, extraArguments: [String] = [], view: Bool = false) throws -> (rig: Rig, browser: Browser, state: String, url: String) {
        let (rig, url, state) = try WebTouchpadTests.start(mode: mode, extraArguments: extraArguments, view: view)
        do {
            let browser = try Browser(url: url)
            try browser.wait(for: "document.body.dataset.state === 'connected' && window.tbReceived.includes('mode \(mode)')", "page connected")
            return (rig, browser, state, url)
        } catch {
            rig.stop()
            try? FileManager.default.removeItem(atPath: state)
            throw error
        }
    }

    static func press(_ browser: Browser, _ selector: String) throws {
        let found = try browser.evaluate("(() => { const b = document.querySelector(\(quoted(selector))); if (!b) return false; b.click(); return true; })()") as? Bool
        if found != true { throw RigError("no \(selector) on the page") }
    }

    /// A JavaScript array of numbers (whole ones arrive as integers).
    static func numbers(_ value: Any?) -> [Double]? {
        (value as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue }
    }

    static func quoted(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    @Test func everyKeyOfTheDrawerReachesXAsTheKeyItNames() throws {
        let (rig, browser, state, _) = try Self.open(mode: "touchpad")
        defer { browser.close(); rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let d = rig.xvfb.display
        try Self.press(browser, "#keysToggle")
        try browser.wait(for: "!document.getElementById('keys').hidden", "the keys drawer opens")
        // data-key → the X keysym name of each key, as xmodmap prints it (Page_Up is Prior there).
        var single: [(String, String)] = [
            ("Escape", "Escape"), ("Tab", "Tab"), ("Return", "Return"), ("BackSpace", "BackSpace"), ("Delete", "Delete"),
            ("Left", "Left"), ("Up", "Up"), ("Down", "Down"), ("Right", "Right"), ("Home", "Home"), ("End", "End"),
            ("Page_Up", "Prior"), ("Page_Down", "Next"),
            ("XF86AudioRaiseVolume", "XF86AudioRaiseVolume"), ("XF86AudioLowerVolume", "XF86AudioLowerVolume"),
            ("XF86AudioMute", "XF86AudioMute"), ("XF86AudioPlay", "XF86AudioPlay"), ("XF86AudioNext", "XF86AudioNext"),
            ("XF86AudioPrev", "XF86AudioPrev"),
        ]
        for n in 1...12 { single.append(("F\(n)", "F\(n)")) }
        let count = try browser.evaluate("document.querySelectorAll('#keys [data-key]').length") as? Int
        #expect(count == single.count + 3, "the drawer has \(count ?? -1) keys, the test knows \(single.count + 3)")
        for (dataKey, xName) in single {
            let code = try T.keycode(xName, display: d)
            let mark = rig.observer.mark
            try Self.press(browser, "#keys [data-key='\(dataKey)']")
            try T.waitForClicks(rig, since: mark, ["keypress \(code)", "keyrelease \(code)"], "the \(dataKey) key")
        }
        // Copy, paste and undo: Ctrl held around the letter.
        let control = try T.keycode("Control_L", display: d)
        for (chord, letter) in [("ctrl+c", "c"), ("ctrl+v", "v"), ("ctrl+z", "z")] {
            let code = try T.keycode(letter, display: d)
            let mark = rig.observer.mark
            try Self.press(browser, "#keys [data-key='\(chord)']")
            try T.waitForClicks(rig, since: mark, ["keypress \(control)", "keypress \(code)", "keyrelease \(code)", "keyrelease \(control)"], chord)
        }
        // Sticky Alt and Shift apply to the next key, then let go: the key after is plain.
        let alt = try T.keycode("Alt_L", display: d), shift = try T.keycode("Shift_L", display: d)
        let tab = try T.keycode("Tab", display: d)
        var mark = rig.observer.mark
        try Self.press(browser, "#keys [data-mod=alt]")
        try Self.press(browser, "#keys [data-mod=shift]")
        try Self.press(browser, "#keys [data-key=Tab]")
        try Self.press(browser, "#keys [data-key=Tab]")
        try T.waitForClicks(rig, since: mark, ["keypress \(alt)", "keypress \(shift)", "keypress \(tab)", "keyrelease \(tab)",
                                               "keyrelease \(shift)", "keyrelease \(alt)", "keypress \(tab)", "keyrelease \(tab)"],
                            "alt+shift+Tab, then a plain Tab")
        // Sticky Ctrl applies to the next click.
        mark = rig.observer.mark
        try Self.press(browser, "#keys [data-mod=ctrl]")
        try Self.press(browser, "#keys [data-click=left]")
        try T.waitForClicks(rig, since: mark, ["keypress \(control)", "press 1", "release 1", "keyrelease \(control)"], "ctrl+click")
        #expect(try browser.evaluate("document.querySelectorAll('.sticky[aria-pressed=true]').length") as? Int == 0,
                "the sticky keys let go after the click")
        // Each click vibrates briefly where the browser can (Chromium has navigator.vibrate).
        _ = try browser.evaluate("window.tbBuzz = []; navigator.vibrate = ms => { window.tbBuzz.push(ms); return true; }; true")
        mark = rig.observer.mark
        try Self.press(browser, "#left")
        try rig.waitForButton("release", 1, since: mark, "the Left click button")
        #expect(try browser.evaluate("window.tbBuzz.length === 1 && window.tbBuzz[0] > 0 && window.tbBuzz[0] <= 50") as? Bool == true,
                "a click vibrates once, briefly")
    }

    @Test func theSlidesPanelSendsItsKeysAndHoldsTheLaser() throws {
        let (rig, browser, state, _) = try Self.open(mode: "presenter", extraArguments: ["--presenter-key", "end=ctrl+Escape"], view: true)
        defer { browser.close(); rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let d = rig.xvfb.display
        let visible = try browser.evaluate("getComputedStyle(document.getElementById('slides')).display !== 'none'") as? Bool
        #expect(visible == true, "the Slides panel shows in Slides mode")
        let names = try browser.evaluate("""
            [...document.querySelectorAll('#slides button')].map(b => b.getAttribute('aria-label') || b.textContent.trim())
            """) as? [String] ?? []
        for name in ["Next", "Previous", "Blank", "Laser", "Draw", "Clear", "Start show", "End show", "Start timer", "Reset timer"] {
            #expect(names.contains(name), "no button named \(name): \(names)")
        }
        let small = try browser.evaluate("""
            [...document.querySelectorAll('button')].filter(b => b.offsetParent && (b.getBoundingClientRect().width < 44 || b.getBoundingClientRect().height < 44)).map(b => b.textContent)
            """) as? [String]
        #expect(small == [], "targets under 44 px: \(small ?? [])")
        // Slides mode asks for the Screen Wake Lock: held, or the panel says the screen may sleep.
        let wake = try browser.wait(for: "window.tbWake", "the wake lock asked for") as? String
        if wake != "held" {
            #expect(try browser.evaluate("!document.getElementById('wakeNote').hidden && /screen may turn off/.test(document.getElementById('wakeNote').textContent)") as? Bool == true,
                    "the wake lock was \(wake ?? "?") and the panel does not say so")
        }
        let control = try T.keycode("Control_L", display: d), escape = try T.keycode("Escape", display: d)
        for (id, xName) in [("next", "Next"), ("previous", "Prior"), ("blank", "b"), ("startShow", "F5")] {
            let code = try T.keycode(xName, display: d)
            let mark = rig.observer.mark
            try Self.press(browser, "#" + id)
            try T.waitForClicks(rig, since: mark, ["keypress \(code)", "keyrelease \(code)"], "the \(id) button")
        }
        let mark = rig.observer.mark
        try Self.press(browser, "#endShow")
        try T.waitForClicks(rig, since: mark, ["keypress \(control)", "keypress \(escape)", "keyrelease \(escape)", "keyrelease \(control)"],
                            "End show, rebound to ctrl+Escape")

        // Laser held (a finger on the button), a second finger drags on the pad, which shows the screen
        // live: the dot follows it, on the screen where the finger is on the picture; the button let go,
        // the dot goes.
        try browser.wait(for: "window.tbView.frames > 0", "the screen's picture on the pad in Slides mode")
        guard let r = (try browser.evaluate("""
            (() => { const l = document.getElementById('laser').getBoundingClientRect(); return [l.left + l.width / 2, l.top + l.height / 2]; })()
            """)).flatMap(Self.numbers), r.count == 2 else { throw RigError("no laser button") }
        let laserButton = (x: r[0], y: r[1], id: 1)
        let from = try WebViewTests.onPage(browser, rig.width / 4, rig.height / 2)
        let at = (x: rig.width * 3 / 4, y: rig.height / 2)
        let to = try WebViewTests.onPage(browser, at.x, at.y)
        try browser.touch("touchStart", [laserButton])
        try browser.wait(for: "document.getElementById('laser').getAttribute('aria-pressed') === 'true'", "the Laser button held")
        var finger = (x: from.x, y: from.y, id: 0)
        try browser.touch("touchStart", [laserButton, finger])
        for step in 1...10 {
            finger.x = from.x + (to.x - from.x) * Double(step) / 10
            try browser.touch("touchMove", [laserButton, finger])
            usleep(16_000)
        }
        try Screenshot.waitFor(display: d, "the laser dot under the dragged finger") {
            $0.count(near: at.x, at.y, radius: 60, OverlayIntegrationTests.laserRed) >= 100
        }
        let keysMark = rig.observer.mark
        try browser.touch("touchEnd", [laserButton])
        try browser.touch("touchEnd", [])
        try browser.wait(for: "document.getElementById('laser').getAttribute('aria-pressed') === 'false'", "the Laser button let go")
        try Screenshot.waitFor(display: d, "the laser dot gone") {
            $0.count(near: at.x, at.y, radius: 200, OverlayIntegrationTests.laserRed) == 0
        }
        // Pointing was no swipe and no tap: the next key seen is the Next button's.
        let next = try T.keycode("Next", display: d)
        try Self.press(browser, "#next")
        try T.waitForClicks(rig, since: keysMark, ["keypress \(next)", "keyrelease \(next)"], "only the Next button's key")

        // Draw toggles, and the page hears the daemon's state.
        try Self.press(browser, "#draw")
        try browser.wait(for: "document.getElementById('draw').getAttribute('aria-pressed') === 'true'", "drawing on")
        try Self.press(browser, "#draw")
        try browser.wait(for: "document.getElementById('draw').getAttribute('aria-pressed') === 'false'", "drawing off")

        // The timer counts while running.
        try Self.press(browser, "#timerRun")
        try browser.wait(for: "document.getElementById('elapsed').textContent === '0:01'", timeout: 5, "the timer counts")
        if ProcessInfo.processInfo.environment["TOUCHBRIDGE_UPDATE_SCREENSHOT"] == "1" {
            try browser.screenshot(to: Binaries.packageRoot + "/docs/web-slides.png")
        }
        try Self.press(browser, "#timerRun")
        try browser.wait(for: "document.getElementById('timerRun').textContent === 'Start timer'", "the timer paused")
        try Self.press(browser, "#timerReset")
        try browser.wait(for: "document.getElementById('elapsed').textContent === '0:00'", "the timer reset")
    }

    /// Drags one finger `dx` CSS px right across the pad, in 10 steps; returns the pointer's travel.
    static func drag(_ rig: Rig, _ browser: Browser, dx: Double) throws -> Int {
        // The page may still be handling the last change (a settings command and its reply): wait for
        // the pad to be laid out rather than reading it once.
        try browser.wait(for: "(() => { const p = document.getElementById('pad'); return !!p && p.getBoundingClientRect().width > 0; })()",
                         "the pad laid out")
        guard let r = Self.numbers(try browser.evaluate("""
            (() => { const p = document.getElementById('pad').getBoundingClientRect(); return [p.left, p.top, p.width, p.height]; })()
            """)), r.count == 4 else { throw RigError("no pad") }
        try rig.observer.warp(x: 200, y: rig.height / 2)
        let before = try rig.observer.query()
        var p = (x: r[0] + 20, y: r[1] + r[3] / 2, id: 0)
        try browser.touch("touchStart", [p])
        for _ in 0..<10 {
            p.x += dx / 10
            try browser.touch("touchMove", [p])
            usleep(20_000)
        }
        try browser.touch("touchEnd", [])
        try Self.barrier(rig, browser, "the drag applied")
        return try rig.observer.query().x - before.x
    }

    /// A ping from the page's own socket and its pong, then an xobserve sync (as `Rig.barrier` does for
    /// datagrams): when it returns, the daemon has handled everything the page sent before (one socket,
    /// in order), flushed the X requests it made, and xobserve has what the X server delivered.
    static func barrier(_ rig: Rig, _ browser: Browser, _ what: String) throws {
        let n = UInt32.random(in: 1_000_000...UInt32.max)
        _ = try browser.evaluate("window.tb.send('ping \(n)'); true")
        try browser.wait(for: "window.tbReceived.includes('pong \(n)')", "\(what): the page's ping \(n) answered")
        try rig.observer.sync()
    }

    @Test func liveSettingsChangeMotionAtOnceAndComeBackAfterAReload() throws {
        // Flat acceleration: the gain is 1 + 0.5 × speed, whatever the finger's speed.
        let (rig, browser, state, _) = try Self.open(mode: "touchpad", extraArguments: ["--accel", "flat"])
        defer { browser.close(); rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        func set(_ id: String, _ value: String) throws {
            _ = try browser.evaluate("(() => { const e = document.getElementById('\(id)'); e.value = '\(value)'; e.dispatchEvent(new Event('change')); return true; })()")
        }
        try set("speed", "-1")
        let slow = try Self.drag(rig, browser, dx: 200)
        try set("speed", "1")
        let fast = try Self.drag(rig, browser, dx: 200)
        #expect(slow > 0 && Double(fast) > 2.4 * Double(slow) && Double(fast) < 3.6 * Double(slow),
                "speed 1 (gain 1.5) should move 3 × as far as speed -1 (gain 0.5): \(fast) px vs \(slow) px")
        #expect(try browser.evaluate("JSON.parse(localStorage.getItem('touchbridge.settings')).speed") as? String == "1.0")

        // Natural scroll: two fingers down scroll up (button 4).
        _ = try browser.evaluate("(() => { const e = document.getElementById('natural'); e.checked = true; e.dispatchEvent(new Event('change')); return true; })()")
        let mark = rig.observer.mark
        var points = [(x: 150.0, y: 250.0, id: 0), (x: 240.0, y: 250.0, id: 1)]
        try browser.touch("touchStart", points)
        for _ in 0..<20 {
            points = points.map { (x: $0.x, y: $0.y + 12, id: $0.id) }
            try browser.touch("touchMove", points)
            usleep(16_000)
        }
        try browser.touch("touchEnd", [])
        let wheel = rig.observer.waitFor(from: mark, timeout: 5) { $0.isButton("press", 4) || $0.isButton("press", 5) }
        #expect(wheel?.button == 4, "natural scroll: fingers down scroll up\n\(rig.context(since: mark))")

        // After a reload (a new connection), the page sends its settings again: still fast.
        _ = try browser.evaluate("location.reload(); true")
        try browser.wait(for: "document.body && document.body.dataset.state === 'connected' && window.tbReceived.includes('mode touchpad') && window.tbRTT !== null",
                         timeout: 15, "page connected again")
        let reloaded = rig.observer.mark
        let again = try Self.drag(rig, browser, dx: 200)
        #expect(Double(again) > 2.4 * Double(slow),
                "the kept speed 1 applies after the reload: \(again) px vs \(slow) px\n\(rig.context(since: reloaded))")
    }

    @Test func theReadoutManifestAndIconAreThere() throws {
        let (rig, browser, state, _) = try Self.open(mode: "touchpad")
        defer { browser.close(); rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let rtt = try browser.wait(for: "/^\\d+ ms$/.test(document.getElementById('rtt').textContent) && document.getElementById('rtt').textContent",
                                   timeout: 10, "the RTT readout") as? String
        #expect(rtt?.hasSuffix(" ms") == true)
        // Within one ping the readout is the page's own measure, a whole number of ms.
        #expect(try browser.evaluate("Number.isInteger(window.tbRTT) && window.tbRTT >= 0") as? Bool == true)
        _ = try browser.evaluate("""
            window.tbFetched = null;
            Promise.all(['/manifest.webmanifest', '/icon.svg', '/sw.js'].map(u => fetch(u).then(async r => [r.status, r.headers.get('content-type'), await r.text()])))
              .then(v => { window.tbFetched = v; }, e => { window.tbFetched = String(e); }); true
            """)
        guard let fetched = try browser.wait(for: "window.tbFetched", "the manifest, icon and worker fetched") as? [[Any]], fetched.count == 3 else {
            throw RigError("fetch failed: \(String(describing: try? browser.evaluate("window.tbFetched")))")
        }
        #expect(fetched[0][0] as? Int == 200 && (fetched[0][1] as? String)?.hasPrefix("application/manifest+json") == true)
        let manifest = try JSONSerialization.jsonObject(with: Data((fetched[0][2] as? String ?? "").utf8)) as? [String: Any]
        #expect(manifest?["display"] as? String == "standalone")
        #expect(manifest?["name"] as? String == "touchbridge")
        #expect(manifest?["theme_color"] as? String == "#15171c")
        let icons = manifest?["icons"] as? [[String: Any]] ?? []
        #expect(icons.contains { $0["src"] as? String == "/icon.svg" && $0["type"] as? String == "image/svg+xml" })
        #expect(fetched[1][0] as? Int == 200 && fetched[1][1] as? String == "image/svg+xml")
        #expect((fetched[1][2] as? String)?.contains("<svg") == true)
        #expect(fetched[2][0] as? Int == 404, "no service worker over plain HTTP")
        #expect(try browser.evaluate("document.querySelector('link[rel=manifest]').href.endsWith('/manifest.webmanifest')") as? Bool == true)

        // Screenshots for the README: portrait (Pad), landscape, a tablet.
        if ProcessInfo.processInfo.environment["TOUCHBRIDGE_UPDATE_SCREENSHOT"] == "1" {
            try browser.screenshot(to: Binaries.packageRoot + "/docs/web-portrait.png")
            try browser.viewport(width: 844, height: 390)
            try browser.wait(for: "innerWidth === 844", "landscape")
            try browser.screenshot(to: Binaries.packageRoot + "/docs/web-landscape.png")
        }
        try browser.viewport(width: 844, height: 390)
        try browser.wait(for: "innerWidth === 844 && innerHeight === 390", "landscape")
        let fits = try browser.evaluate("""
            (() => { const inside = id => { const r = document.getElementById(id).getBoundingClientRect();
              return r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight && r.width >= 44 && r.height >= 44; };
              const p = document.getElementById('pad').getBoundingClientRect();
              return ['pad', 'left', 'right', 'keysToggle', 'fullscreen'].every(inside) && p.width * p.height > 0.35 * innerWidth * innerHeight; })()
            """) as? Bool
        #expect(fits == true, "the landscape layout does not fit 844x390")
        try browser.viewport(width: 820, height: 1180, scale: 2)
        try browser.wait(for: "innerWidth === 820 && innerHeight === 1180", "a tablet")
        let tablet = try browser.evaluate("""
            (() => { const inside = id => { const r = document.getElementById(id).getBoundingClientRect();
              return r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight && r.width >= 44 && r.height >= 44; };
              const p = document.getElementById('pad').getBoundingClientRect();
              return ['pad', 'left', 'right', 'keysToggle', 'fullscreen'].every(inside) && p.width * p.height > 0.5 * innerWidth * innerHeight; })()
            """) as? Bool
        #expect(tablet == true, "the tablet layout does not fit 820x1180")
    }

    @Test func aWrongSecretAndTooManyTriesAreSaid() throws {
        let (rig, url, state) = try WebTouchpadTests.start()
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let wrong = String(url.prefix(while: { $0 != "#" })) + "#k=" + String(repeating: "0", count: 32)
        let browser = try Browser(url: wrong)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'refused' && /wrong pairing secret/.test(document.getElementById('status').textContent)",
                         "the wrong secret said")
        // More wrong tries from this address than the limit: the next connection is refused for that.
        let log = rig.daemon.logMark
        _ = try browser.evaluate("Promise.all([1,2,3,4,5,6].map(() => fetch('/pairing?k=1'))).then(() => tb.connect()); true")
        try browser.wait(for: "/too many tries/.test(document.getElementById('status').textContent)", "too many tries said")
        try rig.daemon.waitForLog(containing: "too many wrong pairing secrets", since: log, "the refusal logged")
    }

    @Test func aPageRefusedAsBusySaysAnotherPhoneHoldsIt() throws {
        let (rig, browser, state, _) = try Self.open(mode: "touchscreen")
        defer { browser.close(); rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        // The page lets go of the session; the PoseAI stream takes it; the page connects again.
        let log = rig.daemon.logMark
        _ = try browser.evaluate("(s => { s.onclose = null; s.close(); return true; })(tb.socket())")
        try rig.daemon.waitForLog(containing: "gone: released everything", since: log, "the page's session ended")
        let mark = rig.observer.mark
        try T.fingers(rig, [0: (0.0, 0.0)])
        try rig.waitForButton("press", 1, since: mark, "the PoseAI finger down")
        _ = try browser.evaluate("tb.connect(); true")
        try browser.wait(for: "document.body.dataset.state === 'busy' && /another phone/.test(document.getElementById('status').textContent)",
                         "busy said")
        #expect(try browser.evaluate("getComputedStyle(document.getElementById('dot')).backgroundColor") as? String == "rgb(224, 72, 62)",
                "the dot is red")
        try T.lift(rig, [0])
    }

    @Test func overHTTPSAServiceWorkerOpensThePageOffline() throws {
        let fixtures = Binaries.packageRoot + "/Tests/IntegrationTests/Fixtures"
        let (rig, url, state) = try WebTouchpadTests.start(
            mode: "touchpad", extraArguments: ["--tls-cert", fixtures + "/tls-cert.pem", "--tls-key", fixtures + "/tls-key.pem"])
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        // The test certificate is self-signed: Chromium is told to take it as valid for 127.0.0.1.
        let browser = try Browser(url: url, flags: ["--ignore-certificate-errors", "--allow-insecure-localhost"])
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected' && location.protocol === 'https:'", "page over HTTPS")
        try browser.wait(for: "window.tbServiceWorker", timeout: 15, "the service worker registered")
        #expect(try browser.evaluate("window.tbServiceWorker") as? String == "ready")
        try browser.wait(for: "caches.keys().then(k => window.tbCaches = k) && window.tbCaches && window.tbCaches.includes('touchbridge-1')",
                         "the page cached")
        // The daemon goes; a reload still opens the page, which says it cannot reach touchbridge.
        _ = rig.daemon.terminate()
        _ = try browser.evaluate("location.reload(); true")
        try browser.wait(for: "document.getElementById('pad') && /cannot reach touchbridge/.test(document.getElementById('status').textContent)",
                         timeout: 20, "the page opened offline")
    }

    /// The page opens its connection again while the old one is still open (as after a Wi-Fi loss the
    /// phone did not tell the daemon of): the daemon closes the old one, which names the same tab (`t=`,
    /// web/connection.js), and with --people 4 the page is person 1 again, not a further person.
    @Test func aPageThatConnectsAgainIsTheSamePerson() throws {
        let (rig, browser, state, _) = try Self.open(mode: "touchscreen", extraArguments: ["--people", "4"])
        defer { browser.close(); rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        let told = "window.tbReceived.filter(l => l.startsWith('person '))"
        _ = try browser.evaluate("window.tb.send(\(Self.quoted(PeopleIntegrationTests.finger(0.5, 0.5))))")
        try browser.wait(for: "\(told).length === 1", "the page told its person")
        let log = rig.daemon.logMark
        _ = try browser.evaluate("window.tb.connect()")
        try rig.daemon.waitForLog(containing: "its page connected again (the same tab)", since: log, "the old connection closed")
        try browser.wait(for: "window.tbReceived.filter(l => l === 'hello touchbridge').length === 2", "the page greeted again")
        _ = try browser.evaluate("window.tb.send(\(Self.quoted(PeopleIntegrationTests.finger(-0.5, 0.5))))")
        try browser.wait(for: "\(told).length === 2", "the page told its person again")
        let people = try browser.evaluate("\(told).join('|')") as? String ?? ""
        #expect(people.split(separator: "|").allSatisfy { $0.hasPrefix("person 1 ") }, "the page was told: \(people)")
    }
}
