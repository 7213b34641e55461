// One test's world: its own Xvfb, an xobserve watching it, the daemon driving it, and a sender
// playing the phone. `stop()` tears all of it down (call it in a `defer`).
import Foundation

final class Rig {
    let xvfb: XvfbServer
    let observer: Observer
    let daemon: Daemon
    let sender: PoseAISender

    var width: Int { xvfb.width }
    var height: Int { xvfb.height }

    private init(xvfb: XvfbServer, observer: Observer, daemon: Daemon, sender: PoseAISender) {
        self.xvfb = xvfb
        self.observer = observer
        self.daemon = daemon
        self.sender = sender
    }

    /// Starts everything; on any failure, what was started is stopped before the error propagates.
    /// The default `idleReleaseMs` is long so that the silence watchdog stays out of tests that do
    /// not test it.
    /// `prepare` runs on the new Xvfb before anything else connects (e.g. `xrandr --setmonitor`).
    static func start(
        width: Int = 1920, height: Int = 1080, idleReleaseMs: Int = 10_000, mode: String = "touchscreen",
        extraArguments: [String] = [], environment: [String: String] = [:], binary: String? = nil,
        prepare: (XvfbServer) throws -> Void = { _ in }
    ) throws -> Rig {
        let xvfb = try XvfbServer.start(width: width, height: height)
        let observer: Observer
        do {
            try prepare(xvfb)
            observer = try Observer.start(display: xvfb.display)
        } catch {
            xvfb.stop()
            throw error
        }
        do {
            let daemon = try Daemon.start(
                display: xvfb.display, idleReleaseMs: idleReleaseMs, mode: mode, extraArguments: extraArguments,
                environment: environment, binary: binary)
            do {
                let sender = try PoseAISender(port: daemon.port, host: daemon.host)
                return Rig(xvfb: xvfb, observer: observer, daemon: daemon, sender: sender)
            } catch {
                _ = daemon.terminate()
                throw error
            }
        } catch {
            observer.stop()
            xvfb.stop()
            throw error
        }
    }

    /// Daemon first (so it can release what it holds while X is still there), then xobserve, then Xvfb.
    func stop() {
        _ = daemon.terminate()
        observer.stop()
        xvfb.stop()
    }

    // MARK: Geometry

    /// The pixel a wire value (raw 0…4095, 2047 = centre) should land on along an axis of `size`
    /// pixels: -1 → 0, +1 → size-1, clamped. Tests allow ±1 px around it.
    static func expectedPixel(raw: Int, size: Int) -> Int {
        let v = Double(raw) / 2047 - 1
        let p = ((v + 1) / 2 * Double(size - 1)).rounded()
        return min(max(Int(p), 0), size - 1)
    }

    static func raw(_ value: Double) -> Int { min(max(Int(((value + 1) * 2047).rounded()), 0), 4095) }

    func expectedPixel(x: Double, y: Double) -> (x: Int, y: Int) {
        (Self.expectedPixel(raw: Self.raw(x), size: width), Self.expectedPixel(raw: Self.raw(y), size: height))
    }

    // MARK: Waiting for what X saw

    /// What the daemon and X did, for failure messages.
    func context(since mark: Int) -> String {
        "  X input events observed since the step began:\n\(observer.describe(from: mark))\n"
            + "  pointer now: \((try? observer.query()).map { "\($0)" } ?? "unknown")\n"
            + "  " + daemon.outputTail()
    }

    /// Waits for a motion to (x, y) ± `tolerance` observed from `mark` on.
    @discardableResult
    func waitForMotion(to x: Int, _ y: Int, since mark: Int, tolerance: Int = 1, timeout: Double = 20,
                       _ what: String) throws -> ObservedEvent {
        if let event = observer.waitFor(from: mark, timeout: timeout, { $0.isMotion(near: x, y, tolerance: tolerance) }) {
            return event
        }
        throw RigError("\(what): no pointer motion to (\(x),\(y)) ±\(tolerance) px within \(timeout) s\n"
            + context(since: mark))
    }

    /// Waits for a press or release (`kind`) of `button` observed from `mark` on.
    @discardableResult
    func waitForButton(_ kind: String, _ button: Int = 1, since mark: Int, timeout: Double = 20,
                       _ what: String) throws -> ObservedEvent {
        if let event = observer.waitFor(from: mark, timeout: timeout, { $0.isButton(kind, button) }) {
            return event
        }
        throw RigError("\(what): no \(kind) of button \(button) within \(timeout) s\n" + context(since: mark))
    }

    /// Puts a finger down in slot 0 at (x, y) and waits until X has the pointer there with button 1
    /// held. Returns the press event.
    @discardableResult
    func fingerDown(x: Double, y: Double, _ what: String = "finger down") throws -> ObservedEvent {
        let mark = observer.mark
        let target = expectedPixel(x: x, y: y)
        try sender.send(touches: [.at(slot: 0, x: x, y: y)], state: [0: .at(x: x, y: y)])
        try waitForMotion(to: target.x, target.y, since: mark, what)
        return try waitForButton("press", 1, since: mark, what)
    }
}
