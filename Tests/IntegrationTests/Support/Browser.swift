// A real headless Chromium (Debian `chromium`) driven by browser_driver.py (Playwright from PyPI, in
// .build/browser-venv, made by scripts/deps.sh): a 390x844 phone viewport with touch emulation, touches
// and pen events through DevTools.
import Foundation

final class Browser {
    private let child: ChildProcess
    private var answers = 0

    /// /usr/lib/chromium/chromium (not the /usr/bin wrapper), or $CHROMIUM_BIN. Missing is a failure:
    /// scripts/deps.sh installs it.
    static func chromium() throws -> String {
        if let path = ProcessInfo.processInfo.environment["CHROMIUM_BIN"] { return path }
        for path in ["/usr/lib/chromium/chromium", "/usr/lib/chromium/chrome"] where access(path, X_OK) == 0 { return path }
        throw RigError("no Chromium at /usr/lib/chromium/chromium: run scripts/deps.sh (Debian package chromium)")
    }

    /// The Python of the venv scripts/deps.sh makes with Playwright in it, or $BROWSER_PYTHON. Missing is
    /// a failure: scripts/deps.sh makes it.
    static func python() throws -> String {
        if let path = ProcessInfo.processInfo.environment["BROWSER_PYTHON"] { return path }
        let path = Binaries.packageRoot + "/.build/browser-venv/bin/python3"
        guard access(path, X_OK) == 0 else {
            throw RigError("no Playwright venv at \(path): run scripts/deps.sh (it installs PyPI's playwright there)")
        }
        return path
    }

    /// Opens `url` and waits until the page has loaded.
    init(url: String, flags: [String] = []) throws {
        let script = Binaries.packageRoot + "/Tests/IntegrationTests/Support/browser_driver.py"
        let python = try Self.python()
        child = try ChildProcess(name: "chromium", executable: python, arguments: [script, try Self.chromium(), url] + flags, stdin: true)
        guard child.stdout.waitFor(timeout: 30, { $0.text == "ready" }) != nil else {
            _ = child.stop(timeout: 2)
            throw RigError("Chromium did not open the page within 30 s\n" + child.outputTail())
        }
        answers = 1
    }

    /// Sends one command and returns its answer (a JSON object).
    @discardableResult
    func command(_ object: [String: Any], timeout: Double = 20) throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: object)
        try child.writeLine(String(decoding: data, as: UTF8.self))
        let index = answers
        guard let line = child.stdout.waitFor(from: index, timeout: timeout, { _ in true }) else {
            throw RigError("no answer from the DevTools client to \(object) within \(timeout) s\n" + child.outputTail())
        }
        answers += 1
        guard let answer = try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any] else {
            throw RigError("bad answer \(line.text)")
        }
        return answer
    }

    /// Waits until the JavaScript expression is truthy; throws with `what` after `timeout` s.
    @discardableResult
    func wait(for expression: String, timeout: Double = 10, _ what: String) throws -> Any? {
        let answer = try command(["cmd": "wait", "expr": expression, "timeout": timeout], timeout: timeout + 10)
        guard answer["ok"] as? Bool == true else {
            throw RigError("\(what): `\(expression)` not true within \(timeout) s (\(answer))")
        }
        return answer["value"]
    }

    func evaluate(_ expression: String) throws -> Any? {
        try command(["cmd": "eval", "expr": expression])["value"]
    }

    /// `Input.dispatchTouchEvent`: touchStart/touchMove list every finger down, touchEnd those lifted.
    func touch(_ type: String, _ points: [(x: Double, y: Double, id: Int)]) throws {
        let answer = try command(["cmd": "touch", "type": type, "points": points.map { ["x": $0.x, "y": $0.y, "id": $0.id] }])
        guard answer["ok"] as? Bool == true else { throw RigError("dispatchTouchEvent \(type): \(answer)") }
    }

    /// `Input.dispatchMouseEvent` with `pointerType: "pen"`: `type` is mouseMoved (hover, or a move while
    /// down), mousePressed or mouseReleased; `force` 0...1, tilts in degrees, `buttons` the Pointer Events
    /// bits (1 contact, 2 barrel), `button` left for contact, right for the barrel, none for a move.
    func pen(_ type: String, x: Double, y: Double, force: Double = 0, tiltX: Double = 0, tiltY: Double = 0,
             twist: Int = 0, buttons: Int = 0, button: String = "none") throws {
        let answer = try command(["cmd": "pen", "type": type, "x": x, "y": y, "force": force, "tiltX": tiltX,
                                  "tiltY": tiltY, "twist": twist, "buttons": buttons, "button": button])
        guard answer["ok"] as? Bool == true else { throw RigError("dispatchMouseEvent pen \(type): \(answer)") }
    }

    /// `Emulation.setDeviceMetricsOverride`: the phone turned, or a tablet.
    func viewport(width: Int, height: Int, scale: Double = 3) throws {
        let answer = try command(["cmd": "viewport", "width": width, "height": height, "scale": scale])
        guard answer["ok"] as? Bool == true else { throw RigError("viewport: \(answer)") }
    }

    /// Any DevTools call (`Input.imeSetComposition`, `Input.insertText`, `Input.dispatchKeyEvent`: what a
    /// phone's keyboard does to the page); its result.
    @discardableResult
    func cdp(_ method: String, _ params: [String: Any] = [:]) throws -> Any? {
        let answer = try command(["cmd": "cdp", "method": method, "params": params])
        guard answer["ok"] as? Bool == true else { throw RigError("\(method): \(answer)") }
        return answer["value"]
    }

    /// `Browser.grantPermissions` for the page's origin (e.g. `clipboard-read`, `clipboard-write`).
    func grant(_ permissions: [String]) throws {
        let answer = try command(["cmd": "grant", "permissions": permissions])
        guard answer["ok"] as? Bool == true else { throw RigError("grant \(permissions): \(answer)") }
    }

    func screenshot(to path: String) throws {
        let answer = try command(["cmd": "screenshot", "path": path])
        guard answer["ok"] as? Bool == true else { throw RigError("screenshot: \(answer)") }
    }

    func close() {
        _ = try? command(["cmd": "quit"], timeout: 5)
        child.closeStdin()
        if child.waitForExit(timeout: 10) == nil { _ = child.stop(timeout: 2) }
    }
}
