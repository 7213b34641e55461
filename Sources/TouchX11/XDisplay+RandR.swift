import CX11
import TouchCore

#if canImport(Glibc)
import Glibc
#endif

// RandR: the monitors of the screen, and the events that say they changed.
extension XDisplay {
    /// The RandR version the server speaks, or nil when it has no RandR extension.
    ///
    /// The corresponding C function is `XRRQueryVersion`, after `randrFirstEvent()` (`XRRQueryExtension`).
    public func randrVersion() throws(X11Error) -> (major: Int32, minor: Int32)? {
        let dpy = try display()
        guard try randrFirstEvent() != nil else { return nil }
        var major: Int32 = 0, minor: Int32 = 0
        guard XRRQueryVersion(dpy, &major, &minor) != 0 else { return nil }
        return (major, minor)
    }

    /// The monitors of the default screen, in the server's order (`xrandr --listmonitors`). Needs RandR
    /// 1.5; empty when the server has no RandR monitors.
    ///
    /// The corresponding C functions are `XRRGetMonitors` (active monitors only), `XGetAtomName` (freed
    /// with `xFree`) and `XRRFreeMonitors`.
    public func monitors() throws(X11Error) -> [Monitor] {
        let dpy = try display()
        var count: Int32 = 0
        guard let list = XRRGetMonitors(dpy, try rootWindow().rawValue, 1, &count) else { return [] }
        defer { XRRFreeMonitors(list) }
        var monitors: [Monitor] = []
        for i in 0..<Int(max(0, count)) {
            let info = list[i]
            var name = "atom \(info.name)"
            if let atomName = XGetAtomName(dpy, info.name) {
                name = String(cString: atomName)
                xFree(atomName)
            }
            monitors.append(Monitor(
                name: name, rect: PixelRect(x: info.x, y: info.y, width: info.width, height: info.height),
                isPrimary: info.primary != 0))
        }
        return monitors
    }

    /// Asks the server for the events that say the screen or its monitors changed: RandR screen, CRTC
    /// and output changes, and `ConfigureNotify` on the root window — the only event a monitor made or
    /// deleted with `xrandr --setmonitor`/`--delmonitor` produces (checked on Xvfb 21: it sends no RandR
    /// event for them). `drainIncoming()` reports them as `screenChanged`. Does nothing without RandR.
    ///
    /// The corresponding C function is `XRRSelectInput`, after `randrFirstEvent()` (`XRRQueryExtension`),
    /// then `selectInput` (`XSelectInput`, `StructureNotifyMask` on the root window).
    public func selectScreenChangeInput() throws(X11Error) {
        let dpy = try display()
        let root = try rootWindow()
        if let event = try randrFirstEvent() {
            randrEventBase = event
            XRRSelectInput(dpy, root.rawValue, Int32(RRScreenChangeNotifyMask | RRCrtcChangeNotifyMask | RROutputChangeNotifyMask))
        }
        try selectInput(on: root, .structureNotify)
    }

    /// The RandR extension's first event code, or nil when the server has no RandR.
    ///
    /// The corresponding C function is `XRRQueryExtension`.
    func randrFirstEvent() throws(X11Error) -> Int32? {
        var event: Int32 = 0, error: Int32 = 0
        return XRRQueryExtension(try display(), &event, &error) != 0 ? event : nil
    }
}
