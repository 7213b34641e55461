// The parts the in-process lifecycle tests hand the real `Lifecycle` (`LifecycleParts`): a model input
// backend and its output, which keep what they are asked to do in a `Journal`; the desktop is TouchOutput's
// own `AbsentDesktop` (no I/O), or `LosableDesktop` where a test takes it away. Any step can be made to fail.
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization
import TouchCore
import TouchOutput
@testable import TouchDaemon

/// Every step of the lifecycle (its `trace`) and of the model parts, in order, from any thread.
final class Journal: Sendable {
    private let lines = Mutex<[String]>([])

    func add(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }

    /// Waits until `done` holds of the journal, up to `timeout` (generous: the machine may be loaded);
    /// whether it did. What must happen is waited for; nothing here proves that something did not.
    func wait(timeout: Duration = .seconds(30), until done: ([String]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if done(all) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return done(all)
    }

    /// The lines that say a service started or stopped, in order ("started the web server").
    var services: [String] {
        all.filter { $0.hasPrefix("started ") || $0.hasPrefix("stopped ") || $0.contains("did not stop") }
    }
}

/// What a model part is made to do wrong.
struct Faults: Sendable {
    /// The backend cannot be made (as uinput without /dev/uinput).
    var backend = false
    /// The desktop cannot be opened; `waitable`: as a display that may yet come (`--reconnect` waits).
    var desktop = false
    var waitable = false
    /// The backend's output cannot be made on the desktop.
    var output = false
}

/// The model input backend: `OutputChoice` says no desktop, XTest's input (the choice names what the
/// backend is; this one stands in for any), with XTest's capabilities (no real touches: a finger is the
/// pointer and button 1).
final class ModelBackend: InputBackend {
    let name = "the model output"
    let capabilities = OutputCapabilities()
    private let journal: Journal
    private let faults: Faults

    init(journal: Journal, faults: Faults) {
        self.journal = journal
        self.faults = faults
    }

    func output(on desktop: any Desktop) throws(OutputError) -> any InputOutput {
        if faults.output {
            journal.add("output failed on \(desktop)")
            throw OutputError(origin: "model output", message: "cannot open on \(desktop)", kind: 7)
        }
        journal.add("output opened on \(desktop)")
        return ModelOutput(journal: journal)
    }

    func desktopClosing() -> (removed: [String], errors: [OutputError]) {
        journal.add("output off the desktop")
        return ([], [])
    }

    func close() -> (removed: [String], errors: [OutputError]) {
        journal.add("backend closed")
        return ([], [])
    }

    /// `LifecycleParts.chooseBackend` for it.
    static func choose(journal: Journal, faults: Faults) -> @Sendable (DaemonSettings, Logger, @escaping @Sendable () -> Bool) -> Result<(OutputChoice, any InputBackend), OutputChoiceFailure> {
        { _, _, _ in
            if faults.backend {
                journal.add("backend failed")
                return .failure(OutputChoiceFailure("the model backend cannot be made"))
            }
            journal.add("backend made")
            return .success((OutputChoice(input: .xtest, desktop: .absent, reason: "the tests' model output"),
                             ModelBackend(journal: journal, faults: faults)))
        }
    }
}

/// The model output: every action journalled ("action …"), the buttons, keys and touches held kept,
/// released by `releaseAll` ("released …").
final class ModelOutput: InputOutput {
    let name = "model output"
    private let journal: Journal
    private var buttons: Set<String> = []

    init(journal: Journal) { self.journal = journal }

    func perform(_ actions: [OutputAction], typist: any CharacterTypist) -> [OutputError] {
        for action in actions {
            journal.add("action \(action)")
            switch action {
            case .button(let b, let down), .extraPointerButton(_, let b, let down):
                if down { buttons.insert("\(b)") } else { buttons.remove("\(b)") }
            case .key(let k, let down):
                if down { buttons.insert("\(k)") } else { buttons.remove("\(k)") }
            case .touch(let s, let phase, _):
                if phase == .began || phase == .moved { buttons.insert("touch \(s)") } else { buttons.remove("touch \(s)") }
            default: break
            }
        }
        return []
    }

    var held: [String] { buttons.sorted() }

    func releaseAll() -> (released: [String], errors: [OutputError]) {
        defer { buttons = [] }
        journal.add("released \(held)")
        return (held, [])
    }

    func setScreen(width: Int32, height: Int32) throws(OutputError) {}
    func setKeymap(_ keymap: Keymap) {}
    var keyboardName: String? { nil }

    func close() -> (removed: [String], errors: [OutputError]) {
        journal.add("output closed")
        return ([], [])
    }
}

/// `LifecycleParts.openDesktop` with the model: TouchOutput's `AbsentDesktop`, journalled ("desktop
/// opened"), with a `Loss` to take it away (`opened` gets it); or a failure to open, as an X display that
/// is not there.
func openModelDesktop(journal: Journal, faults: @escaping @Sendable () -> Faults, opened: @escaping @Sendable (Loss) -> Void)
    -> @Sendable (OutputChoice.DesktopKind, Logger) -> Result<any Desktop, DesktopService.OpenFailure> {
    { _, _ in
        let f = faults()
        if f.desktop {
            journal.add("desktop failed")
            return .failure(DesktopService.OpenFailure(message: "the model desktop cannot be opened", waitable: f.waitable ? ":99" : nil))
        }
        guard let loss = Loss() else {
            return .failure(DesktopService.OpenFailure(message: "pipe(2) failed", waitable: nil))
        }
        journal.add("desktop opened")
        opened(loss)
        return .success(JournalledDesktop(journal: journal, loss: loss))
    }
}

/// How a test takes the model desktop away, as an X server that dies: its descriptor (a pipe) becomes
/// readable and the desktop says it is lost.
final class Loss: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32
    private let lost = Mutex(false)

    init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
    }

    func lose() {
        lost.withLock { $0 = true }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    var isLost: Bool { lost.withLock { $0 } }

    func drain() {
        var byte: UInt8 = 0
        while read(readEnd, &byte, 1) == 1 {}
    }

    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}

/// `AbsentDesktop` with its close journalled ("desktop closed") and a descriptor that says when a test
/// took it away (`Loss`).
final class JournalledDesktop: Desktop {
    private let base = AbsentDesktop()
    private let journal: Journal
    private let loss: Loss

    init(journal: Journal, loss: Loss) {
        self.journal = journal
        self.loss = loss
    }

    var description: String { "the model desktop" }
    func screen() throws(OutputError) -> (screen: PixelRect, monitors: [Monitor]) { try base.screen() }
    func keymap(keyboardNamed: String?) throws(OutputError) -> DesktopKeymap? { nil }
    var descriptors: [Int32] { [loss.readEnd] }
    func readIncoming() -> DesktopChanges {
        loss.drain()
        return DesktopChanges()
    }
    var isLost: Bool { loss.isLost }
    func typeLacking(_ keysym: KeySym) throws(OutputError) { try base.typeLacking(keysym) }
    func close() -> [OutputError] {
        journal.add("desktop closed")
        loss.close()
        return []
    }
}
