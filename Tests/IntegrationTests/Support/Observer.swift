// Runs xobserve against the test's Xvfb and gives the tests what the X server delivered.
import Foundation

/// One line of xobserve's output, parsed: `<kind> [<t_ns>] key=value…`.
struct ObservedEvent: Sendable, CustomStringConvertible {
    /// Line number in xobserve's stdout (a cursor for "events after this point").
    var index: Int
    /// `motion`, `press`, `release`, `keypress`, `keyrelease`, `pointer`, `synced`, `warped`, …
    var kind: String
    /// xobserve's CLOCK_MONOTONIC stamp (ns), taken when it read the event.
    var tNs: UInt64
    /// When the test's reader thread got the line (CLOCK_MONOTONIC ns).
    var arrivalNs: UInt64
    var fields: [String: Int]
    var text: String

    init(_ line: LineStore.Line) {
        index = line.index
        text = line.text
        arrivalNs = line.arrivalNs
        let parts = line.text.split(separator: " ")
        kind = parts.first.map(String.init) ?? ""
        tNs = parts.count > 1 ? UInt64(parts[1]) ?? 0 : 0
        var fields: [String: Int] = [:]
        for part in parts.dropFirst() {
            guard let eq = part.firstIndex(of: "=") else { continue }
            if let value = Int(part[part.index(after: eq)...]) { fields[String(part[..<eq])] = value }
        }
        self.fields = fields
    }

    var x: Int? { fields["x"] }
    var y: Int? { fields["y"] }
    var button: Int? { fields["button"] }
    /// For a motion: the raw event's own position when it has one (valuators 0/1, the target pixel of
    /// an absolute XTest motion), else the pointer position xobserve queried after it.
    var eventX: Int? { fields["rx"] ?? fields["x"] }
    var eventY: Int? { fields["ry"] ?? fields["y"] }

    /// A motion whose raw position or queried position is within `tolerance` px of (x, y).
    func isMotion(near x: Int, _ y: Int, tolerance: Int) -> Bool {
        guard kind == "motion" else { return false }
        func near(_ a: Int?, _ b: Int?) -> Bool {
            guard let a, let b else { return false }
            return abs(a - x) <= tolerance && abs(b - y) <= tolerance
        }
        return near(fields["rx"], fields["ry"]) || near(fields["x"], fields["y"])
    }

    func isButton(_ kind: String, _ button: Int) -> Bool { self.kind == kind && self.button == button }

    var description: String { text }
}

struct PointerState: Equatable, Sendable, CustomStringConvertible {
    var x: Int
    var y: Int
    /// Bit n-1 set while button n (1…5) is held.
    var buttons: Int
    var buttonOneHeld: Bool { buttons & 1 != 0 }
    var description: String { "(\(x),\(y)) buttons=\(buttons)" }
}

final class Observer {
    private let child: ChildProcess
    private var store: LineStore { child.stdout }

    private init(child: ChildProcess) { self.child = child }

    /// Starts xobserve on `display` and waits for its `ready`.
    static func start(display: String, timeout: Double = 20) throws -> Observer {
        let path = try Binaries.xobserve()
        let child = try ChildProcess(name: "xobserve", executable: path, arguments: ["-display", display], stdin: true)
        guard child.stdout.waitFor(timeout: timeout, { $0.text == "ready" }) != nil else {
            child.stop(timeout: 1)
            throw RigError("xobserve did not print `ready` within \(timeout) s\n" + child.outputTail())
        }
        return Observer(child: child)
    }

    /// A cursor: events observed from now on have an index ≥ this.
    var mark: Int { store.count }

    func events(from index: Int = 0) -> [ObservedEvent] {
        store.snapshot(from: index).map(ObservedEvent.init)
    }

    /// X input events (motion, buttons, keys) from `index`, as text, for failure messages.
    func describe(from index: Int = 0, limit: Int = 40) -> String {
        let all = events(from: index).filter { ["motion", "press", "release", "keypress", "keyrelease"].contains($0.kind) }
        if all.isEmpty { return "    (no X input events observed)" }
        let shown = all.suffix(limit)
        let head = all.count > shown.count ? "    … \(all.count - shown.count) earlier events\n" : ""
        return head + shown.map { "    \($0.text)" }.joined(separator: "\n")
    }

    /// The first line from `index` on for which `predicate` holds, waiting at most `timeout` s.
    func waitFor(from index: Int, timeout: Double, _ predicate: (ObservedEvent) -> Bool) -> ObservedEvent? {
        store.waitFor(from: index, timeout: timeout) { predicate(ObservedEvent($0)) }.map(ObservedEvent.init)
    }

    private func command(_ command: String, answer kind: String, timeout: Double = 20) throws -> ObservedEvent {
        let start = mark
        try child.writeLine(command)
        guard let line = waitFor(from: start, timeout: timeout, { $0.kind == kind || $0.kind == "xgone" }) else {
            throw RigError("xobserve did not answer `\(command)` within \(timeout) s\n" + child.outputTail())
        }
        if line.kind == "xgone" { throw RigError("xobserve lost the X connection\n" + child.outputTail()) }
        return line
    }

    /// Sends one command line to xobserve without waiting for its answer (see its usage for commands).
    func send(_ command: String) throws { try child.writeLine(command) }

    /// The pointer's root position and held buttons now (XQueryPointer).
    func query() throws -> PointerState {
        let line = try command("query", answer: "pointer")
        guard let x = line.fields["x"], let y = line.fields["y"], let b = line.fields["buttons"] else {
            throw RigError("xobserve: malformed answer `\(line.text)`")
        }
        return PointerState(x: x, y: y, buttons: b)
    }

    /// A barrier: when it returns, every event the server delivered before now has been collected.
    func sync() throws { _ = try command("sync", answer: "synced") }

    /// Moves the pointer without any input device (no raw events), e.g. away from a target.
    func warp(x: Int, y: Int) throws { _ = try command("warp \(x) \(y)", answer: "warped") }

    func stop() {
        if child.isRunning {
            try? child.writeLine("quit")
            child.closeStdin()
            if child.waitForExit(timeout: 2) == nil { child.stop(timeout: 2) }
        }
    }

    func outputTail() -> String { child.outputTail() }
}
