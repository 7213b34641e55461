// wayland-probe: test support for the Wayland tests (TouchWaylandTests, Tests/VM/guest/waylandtest.py).
// Connects to the compositor WAYLAND_DISPLAY names through TouchWayland and prints what touchbridge sees
// of the session, one line per fact, then every change until the compositor goes away (or stdin
// closes). Not installed.
//
//   output NAME WxH+X+Y (mode WxH, scale S, TRANSFORM) "DESCRIPTION"    one per output, after `outputs N`
//   keymap N keysyms z=CODE a=CODE 2=CODE[+shift] @=CODE[+shift][+level3]   evdev codes, `-` when absent
//   keymap-problem TEXT
//   ready                                                       after the first description
//   lost TEXT                                                   the connection broke (exit status 3)
import Glibc
import TouchCore
import TouchWayland

/// One line on stdout, written at once (`write(2)`: no stdio buffering on a pipe).
func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

func describe(_ keymap: Keymap) -> String {
    func at(_ sym: UInt32) -> String {
        guard let p = keymap.position(of: KeySym(rawValue: sym)) else { return "-" }
        return "\(p.evdevCode)\(p.shift ? "+shift" : "")\(p.levelThree ? "+level3" : "")"
    }
    return "keymap \(keymap.count) keysyms z=\(at(0x7a)) a=\(at(0x61)) 2=\(at(0x32)) @=\(at(0x40)) canBorrow=\(keymap.canBorrow)"
}

func report(_ desktop: WaylandDesktop, _ changes: WaylandChanges) {
    if changes.contains(.outputs) {
        say("outputs \(desktop.outputs.count)\(desktop.hasXdgOutput ? " xdg-output" : "")")
        for o in desktop.outputs { say("output \(o.summary)") }
    }
    if changes.contains(.keymap) {
        if let p = desktop.keymapProblem { say("keymap-problem \(p)") }
        say(desktop.keymap.map(describe) ?? "keymap none")
    }
}

let desktop: WaylandDesktop
do {
    desktop = try WaylandDesktop()
} catch {
    say("error \(error)")
    exit(2)
}
report(desktop, [.outputs, .keymap])
say("ready")
var fds = [pollfd(fd: desktop.fileDescriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
while true {
    guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { say("error poll"); exit(2) }
    if fds[1].revents != 0 {
        var byte: UInt8 = 0
        if read(0, &byte, 1) <= 0 { desktop.closeConnection(); exit(0) }
    }
    if fds[0].revents != 0 {
        do {
            report(desktop, try desktop.readEvents())
        } catch {
            say("lost \(error)")
            desktop.closeConnection()
            exit(3)
        }
    }
}
