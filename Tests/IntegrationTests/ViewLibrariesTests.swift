// The live view's libraries, XDamage and TurboJPEG, are loaded at run time (CCapture's shim): the binary
// does not link them, and on a machine without them touchbridge runs, says why there is no picture, and
// the page works as a plain touch surface. "Without them" is made real: the daemon runs in a mount
// namespace of its own where both library files are /dev/null (root, as CI and the VM tests run).
import Foundation
import Glibc
import Testing

@Suite struct ViewLibrariesTests {
    static let libraries = ["libXdamage.so.1", "libturbojpeg.so.0"]

    /// The libraries' files on this machine (where the dynamic loader finds them).
    static func libraryPaths() throws -> [String] {
        try libraries.map { name in
            for directory in ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"] {
                let path = directory + "/" + name
                if FileManager.default.fileExists(atPath: path) { return path }
            }
            throw RigError("\(name) is not on this machine (scripts/deps.sh installs libxdamage-dev and libturbojpeg0-dev)")
        }
    }

    /// The NEEDED entries of touchbridge's dynamic section (`readelf -d`).
    @Test func theBinaryLinksNeitherLibrary() throws {
        guard let readelf = findInPath("readelf") else { throw RigError("readelf is missing (Debian: binutils)") }
        let child = try ChildProcess(name: "readelf", executable: readelf, arguments: ["-d", try Binaries.touchbridge()])
        #expect(child.waitForExit(timeout: 30) == .exited(0), "readelf failed: \(child.outputTail())")
        let needed = child.stdout.snapshot().map(\.text).filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libX11.so.6") }, "readelf's NEEDED lines were not read: \(needed)")
        for library in Self.libraries {
            #expect(!needed.contains { $0.contains(library) }, "touchbridge links \(library): \(needed)")
        }
    }

    /// A script that runs touchbridge in a mount namespace of its own with both libraries' files covered
    /// by /dev/null (the loader then fails to load them, as on a machine without them).
    static func hidingWrapper(directory: String) throws -> String {
        guard findInPath("unshare") != nil, findInPath("mount") != nil else { throw RigError("unshare and mount are needed (util-linux, mount)") }
        guard getuid() == 0 else { throw RigError("hiding the libraries needs root (a mount namespace of the daemon's own); run the tests as root, as CI does") }
        let paths = try libraryPaths()
        let script = directory + "/touchbridge-without-view-libraries"
        let mounts = paths.map { "mount --bind /dev/null '\($0)'" }.joined(separator: " && ")
        try """
            #!/bin/sh
            exec unshare -m sh -c "\(mounts) && exec '\(try Binaries.touchbridge())' \\"\\$@\\"" touchbridge "$@"

            """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        return script
    }

    @Test func withoutTheLibrariesTouchbridgeRunsAndThePageSaysThereIsNoPicture() throws {
        let directory = NSTemporaryDirectory() + "touchbridge-nolibs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (rig, url, state) = try WebTouchpadTests.start(mode: "touchscreen", view: true, binary: try Self.hidingWrapper(directory: directory))
        defer { rig.stop(); try? FileManager.default.removeItem(atPath: state) }
        try rig.daemon.waitForLog(containing: "gives no picture (cannot load libXdamage.so.1", "the daemon says which library is missing")
        #expect(!rig.daemon.logLines(containing: "install libxdamage1").isEmpty, "the log says what to install: \(rig.daemon.outputTail())")
        let browser = try Browser(url: url)
        defer { browser.close() }
        try browser.wait(for: "document.body.dataset.state === 'connected'", "page connected")
        try browser.wait(for: "window.tbView.none.startsWith('no-picture')", "the page told there is no picture")
        #expect(try browser.evaluate("window.tbView.frames") as? Int == 0)
        #expect(try browser.evaluate("document.getElementById('viewNote').hidden") as? Bool == false, "the page says why")
        // The plain surface works: a touch in its middle lands in the screen's middle.
        let pad = try WebPenTests.pad(browser)
        let m = rig.observer.mark
        try browser.touch("touchStart", [(x: pad.x + pad.width / 2, y: pad.y + pad.height / 2, id: 0)])
        try rig.waitForMotion(to: rig.width / 2, rig.height / 2, since: m, tolerance: 2, "the pad's middle is the screen's")
        try browser.touch("touchEnd", [])
    }
}
