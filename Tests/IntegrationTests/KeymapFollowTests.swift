// The daemon reads the X server's keyboard map (XKB's, evdev code = X keycode − 8)
// at start and again whenever the layout changes (`setxkbmap`), without a restart. Real daemon, private
// Xvfb; the layouts are xkeyboard-config's: z is KEY_Z (44) on us, KEY_W's place (17) on fr (AZERTY),
// KEY_Y's place (21) on de (QWERTZ).
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10)))
struct KeymapFollowTests {
    static func setxkbmap(_ rig: Rig, _ layout: String) throws {
        guard let tool = findInPath("setxkbmap") else {
            throw RigError("setxkbmap is not installed (Debian: x11-xkb-utils); this test needs it and does not skip")
        }
        let (status, out) = try X.run(tool, ["-display", rig.xvfb.display, layout])
        guard status == .exited(0) else { throw RigError("setxkbmap \(layout): \(String(describing: status))\n\(out)") }
    }

    @Test func theDaemonFollowsTheLayoutWithoutARestart() throws {
        let rig = try Rig.start(mode: "touchpad", prepare: { x in
            guard let tool = findInPath("setxkbmap") else { throw RigError("setxkbmap is not installed (Debian: x11-xkb-utils)") }
            let (status, out) = try X.run(tool, ["-display", x.display, "us"])
            guard status == .exited(0) else { throw RigError("setxkbmap us: \(String(describing: status))\n\(out)") }
        })
        defer { rig.stop() }
        let start = try rig.daemon.waitForLog(containing: "keysyms from the core keyboard", timeout: 10, "the keymap read at start")
        #expect(start.contains("z on evdev 44, shift on evdev 42"), "at start (us): \(start)")
        for (layout, z) in [("fr", 17), ("de", 21), ("us", 44)] {
            let mark = rig.daemon.logMark
            try Self.setxkbmap(rig, layout)
            let line = try rig.daemon.waitForLog(containing: "z on evdev \(z),", since: mark, timeout: 10,
                                                 "the \(layout) keymap read after setxkbmap")
            // AltGr: the right Alt key (evdev 100) on fr and de.
            if layout != "us" { #expect(line.contains("AltGr on evdev 100"), "\(layout): \(line)") }
        }
    }
}
