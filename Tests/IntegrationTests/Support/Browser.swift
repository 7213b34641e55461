// A real headless Chromium (Debian `chromium`) driven over the DevTools protocol by cdp_touch.py
// (Python standard library, --remote-debugging-pipe): a 390x844 phone viewport with touch emulation.
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

    /// Opens `url` and waits until the page has loaded.
    init(url: String, flags: [String] = []) throws {
        let script = Binaries.packageRoot + "/Tests/IntegrationTests/Support/cdp_touch.py"
        guard let python = findInPath("python3") else { throw RigError("python3 not found") }
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

    /// `Emulation.setDeviceMetricsOverride`: the phone turned, or a tablet.
    func viewport(width: Int, height: Int, scale: Double = 3) throws {
        let answer = try command(["cmd": "viewport", "width": width, "height": height, "scale": scale])
        guard answer["ok"] as? Bool == true else { throw RigError("viewport: \(answer)") }
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
