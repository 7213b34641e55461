// A real WebKit (Debian's WebKitGTK 4.1, the iPhone's engine) driven by webkit_driver.py under Debian's
// /usr/bin/python3 (python3-gi): the page in an off-screen view on the test's X display, and an input
// method of the test's own that composes and commits text, so WebKit fires its own composition events; and
// touches given to the view as a touchscreen's, so WebKit fires its own touch events.
import Foundation

final class WebKitPage {
    private let child: ChildProcess
    private var answers = 0

    /// Opens `url` on `display` and waits until the page has loaded. Missing WebKitGTK is a failure:
    /// scripts/deps.sh installs it (gir1.2-webkit2-4.1, python3-gi).
    init(url: String, display: String) throws {
        let script = Binaries.packageRoot + "/Tests/IntegrationTests/Support/webkit_driver.py"
        child = try ChildProcess(name: "webkit", executable: "/usr/bin/python3", arguments: [script, url], stdin: true,
                                 environment: ["DISPLAY": display, "GDK_BACKEND": "x11"])
        guard child.stdout.waitFor(timeout: 60, { $0.text == "ready" }) != nil else {
            _ = child.stop(timeout: 2)
            throw RigError("WebKitGTK did not open the page within 60 s (scripts/deps.sh installs gir1.2-webkit2-4.1 and python3-gi)\n" + child.outputTail())
        }
        answers = 1
    }

    @discardableResult
    func command(_ object: [String: Any], timeout: Double = 20) throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: object)
        try child.writeLine(String(decoding: data, as: UTF8.self))
        let index = answers
        guard let line = child.stdout.waitFor(from: index, timeout: timeout, { _ in true }) else {
            throw RigError("no answer from WebKitGTK to \(object) within \(timeout) s\n" + child.outputTail())
        }
        answers += 1
        guard let answer = try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any],
              answer["ok"] as? Bool == true || object["cmd"] as? String == "wait" else {
            throw RigError("WebKitGTK: \(object) answered \(line.text)")
        }
        return answer
    }

    @discardableResult
    func wait(for expression: String, timeout: Double = 10, _ what: String) throws -> Any? {
        let answer = try command(["cmd": "wait", "expr": expression, "timeout": timeout], timeout: timeout + 10)
        guard answer["ok"] as? Bool == true else {
            throw RigError("\(what): `\(expression)` not true within \(timeout) s in WebKit (\(answer))")
        }
        return answer["value"]
    }

    func evaluate(_ expression: String) throws -> Any? { try command(["cmd": "eval", "expr": expression])["value"] }

    /// The input method's composing text becomes `text`.
    func compose(_ text: String) throws { try command(["cmd": "compose", "text": text]) }

    /// The composition ends and `text` is committed.
    func commit(_ text: String) throws { try command(["cmd": "commit", "text": text]) }

    /// A touch of finger `id` (0…9) at (`x`, `y`), in the page's CSS pixels: `begin`, `update` or `end`, given
    /// to WebKit as GTK gives a touchscreen's (webkit_driver.py's `Touchscreen`), so WebKit makes the page's
    /// touch events itself.
    func touch(_ kind: String, x: Double, y: Double, id: Int = 0) throws {
        try command(["cmd": "touch", "kind": kind, "x": x, "y": y, "id": id])
    }

    /// The input method deletes `count` characters from `offset` around the caret (a correction).
    func deleteSurrounding(offset: Int, count: Int) throws { try command(["cmd": "delete", "offset": offset, "count": count]) }

    func close() {
        _ = try? command(["cmd": "quit"], timeout: 5)
        child.closeStdin()
        if child.waitForExit(timeout: 10) == nil { _ = child.stop(timeout: 2) }
    }
}
