// uinput-drive: test support for the VM tests (Tests/VM/guest/vmtest.py). Drives TouchUInput's
// devices from commands on stdin, one per line, so a test can script kernel input devices exactly;
// answers each with one line on stdout: `ok <command>`, `created <device> <sysname>` or
// `error <text>`. Not installed.
//
//   ts create W H            a touchscreen over a W×H pixel screen      ts touch SLOT X Y | ts lift SLOT | ts sync
//   pad create WMM HMM       a touchpad of WMM×HMM mm (20 units per mm) pad touch SLOT X Y | pad lift SLOT | pad click 0|1 | pad sync
//   ptr create               a pointer with hi-res wheels               ptr move DX DY | ptr scroll V H | ptr button CODE 0|1 | ptr sync
//   kbd create               a keyboard                                 kbd key CODE 0|1 | kbd sync
//   be create                the uinput backend (UInputBackend: pointer and keyboard, US keymap)
//   be batch ACTION , ...    one `perform` of the actions: `key KEYSYM 0|1` (hex keysym), `move DX DY`,
//                            `button N 0|1`; answers `ok ...` or `error <the first failure>`
//   be break ptr|kbd         destroy that device's kernel side but keep its descriptor: its next frame's
//                            write fails (EINVAL), as a device the kernel lost
//   be release               the backend's releaseAll
//   close DEVICE             destroy one device
//   quit                     destroy every device and exit 0 (EOF too)
import Glibc
import TouchCore
import TouchOutput
import TouchUInput

/// One line on stdout, written at once (`write(2)`: no stdio buffering on a pipe).
func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

func number(_ words: [Substring], _ i: Int) -> Int32? { i < words.count ? Int32(words[i]) : nil }

final class Driver {
    var touchscreen: UInputTouchscreen?
    var touchpad: UInputTouchpad?
    var pointer: UInputPointer?
    var keyboard: UInputKeyboard?
    var backend: UInputBackend?

    /// One action of a `be batch`.
    func action(_ w: [Substring]) -> OutputAction? {
        switch w.first {
        case "key":
            guard w.count == 3, let k = UInt32(w[1].hasPrefix("0x") ? w[1].dropFirst(2) : w[1], radix: 16) else { return nil }
            return .key(KeySym(rawValue: k), pressed: w[2] != "0")
        case "move":
            guard w.count == 3, let dx = Int32(w[1]), let dy = Int32(w[2]) else { return nil }
            return .moveBy(dx: dx, dy: dy)
        case "button":
            guard w.count == 3, let b = UInt8(w[1]) else { return nil }
            return .button(PointerButton(rawValue: b), pressed: w[2] != "0")
        default:
            return nil
        }
    }

    func run(_ words: [Substring]) throws -> String {
        guard words.count >= 2 else { return "error expected DEVICE COMMAND ..." }
        let n = { (i: Int) -> Int32 in number(words, i) ?? 0 }
        switch (words[0], words[1]) {
        case ("ts", "create"):
            let t = try UInputTouchscreen(width: n(2), height: n(3))
            touchscreen = t
            return "created ts \(t.device.sysname)"
        case ("pad", "create"):
            let p = try UInputTouchpad(widthMM: n(2), heightMM: n(3))
            touchpad = p
            return "created pad \(p.device.sysname) \(p.maxX) \(p.maxY)"
        case ("ptr", "create"):
            let p = try UInputPointer()
            pointer = p
            return "created ptr \(p.device.sysname)"
        case ("kbd", "create"):
            let k = try UInputKeyboard()
            keyboard = k
            return "created kbd \(k.device.sysname)"
        case ("be", "create"):
            let b = try UInputBackend(touchscreen: false, touchpadMM: nil)
            backend = b
            return "created be \(b.pointer.device.sysname) \(b.keyboard.device.sysname)"
        case ("be", let c):
            guard let b = backend else { return "error no be" }
            switch c {
            case "batch":
                let parts = words.dropFirst(2).split(separator: ",").map { Array($0) }
                var actions: [OutputAction] = []
                for p in parts {
                    guard let a = action(p) else { return "error bad action \(p.joined(separator: " "))" }
                    actions.append(a)
                }
                if let first = b.perform(actions, typist: NoTypist()).first { return "error \(first)" }
            case "break":
                switch words.count > 2 ? words[2] : "" {
                case "ptr": try b.pointer.device.destroyKeepingDescriptor()
                case "kbd": try b.keyboard.device.destroyKeepingDescriptor()
                default: return "error be break ptr|kbd"
                }
            case "release":
                let (released, errors) = b.releaseAll()
                if let first = errors.first { return "error \(first)" }
                return "ok be release: " + released.joined(separator: ", ")
            default: return "error unknown be command \(c)"
            }
        case ("close", let which):
            switch which {
            case "ts": touchscreen?.device.close(); touchscreen = nil
            case "pad": touchpad?.device.close(); touchpad = nil
            case "ptr": pointer?.device.close(); pointer = nil
            case "kbd": keyboard?.device.close(); keyboard = nil
            default: return "error unknown device \(which)"
            }
        case ("ts", let c):
            guard let t = touchscreen else { return "error no ts" }
            switch c {
            case "touch": try t.touch(slot: Int(n(2)), x: n(3), y: n(4))
            case "lift": try t.lift(slot: Int(n(2)))
            case "sync": try t.sync()
            default: return "error unknown ts command \(c)"
            }
        case ("pad", let c):
            guard let p = touchpad else { return "error no pad" }
            switch c {
            case "touch": try p.touch(slot: Int(n(2)), x: n(3), y: n(4))
            case "lift": try p.lift(slot: Int(n(2)))
            case "click": try p.click(n(2) != 0)
            case "sync": try p.sync()
            default: return "error unknown pad command \(c)"
            }
        case ("ptr", let c):
            guard let p = pointer else { return "error no ptr" }
            switch c {
            case "move": try p.move(dx: n(2), dy: n(3))
            case "scroll": try p.scroll(vertical: n(2), horizontal: n(3))
            case "button": try p.button(UInt16(n(2)), pressed: n(3) != 0)
            case "sync": try p.sync()
            default: return "error unknown ptr command \(c)"
            }
        case ("kbd", let c):
            guard let k = keyboard else { return "error no kbd" }
            switch c {
            case "key": try k.key(UInt16(n(2)), pressed: n(3) != 0)
            case "sync": try k.sync()
            default: return "error unknown kbd command \(c)"
            }
        default:
            return "error unknown command"
        }
        return "ok " + words.joined(separator: " ")
    }
}

/// No desktop here: a character no key makes is not typed (the batches type nothing).
final class NoTypist: CharacterTypist {
    func typeLacking(_ keysym: KeySym) throws(OutputError) {
        throw OutputError(origin: "uinput-drive", message: "no desktop to type \(keysym)", kind: 7)
    }
    func restoreKeymap() throws(OutputError) {}
}

let driver = Driver()

while let line = readLine() {
    let words = line.split(separator: " ")
    if words.first == "quit" { break }
    if words.isEmpty { continue }
    do {
        say(try driver.run(words))
    } catch {
        say("error \(error)")
    }
}
