import CCapture
import CX11
import TouchCore

// What the server sends unasked: the events read without blocking and what they say changed (the screen,
// the keymap, the devices, windows restacked, the overlay's lost parts, damage).

extension XDisplay {
    /// What `drainIncoming()` read.
    public struct Incoming: Equatable, Sendable {
        /// How many events were read (and discarded).
        public var events: Int
        /// Whether any of them says the screen or its monitors may have changed (a RandR event, or a
        /// `ConfigureNotify` of the root window): read the monitors again.
        public var screenChanged: Bool
        /// Whether another top-level window was mapped or restacked (the `Overlay` asks for these
        /// events: `SubstructureNotifyMask` on the root): the overlay raises itself above it.
        public var windowsRestacked = false
        /// Whether the keyboard map changed (XKB's new-keyboard or map notify, or a core `MappingNotify`
        /// of the keyboard): read the keymap again.
        public var keymapChanged = false
        /// Whether a device came, went, or was enabled or disabled (XInput's hierarchy event): a keyboard
        /// whose map counts may be there now.
        public var devicesChanged = false
        /// The parts of the overlay's window that lost their contents (its `Expose` events; the
        /// `Overlay` asks for these), in window coordinates: it draws them again. At most
        /// `maxExposedRects`; beyond that, the last one grows to cover all the rest.
        public var overlayExposed: [PixelRect] = []
        public static let maxExposedRects = 16
        /// Whether the screen's pixels changed (XDamage's notify; the live view's connection asks for it).
        public var damaged = false
    }


    /// Reads whatever the server has sent (errors, events) without blocking. Events that say the screen
    /// or its monitors changed update Xlib's idea of the screen size and are reported; so are changes of
    /// the keyboard map (see `selectKeymapChangeInput`), after Xlib's copy is refreshed; the others are
    /// discarded. Call when the connection's descriptor is readable. If the server has gone away, Xlib's
    /// I/O error handlers run and the display is then `isLost` (see `XErrorHandlers`).
    ///
    /// The corresponding C functions are `XNextEvent` and `XRRUpdateConfiguration`, after
    /// `eventsQueued` (`XEventsQueued` with `QueuedAfterReading`); XDamage's notify is told by
    /// `tb_damage_notify` (the live view's connection).
    @discardableResult
    public func drainIncoming() throws(X11Error) -> Incoming {
        let dpy = try display()
        let root = try rootWindow().rawValue
        var incoming = Incoming(events: 0, screenChanged: false)
        let mine = overlayWindow
        var event = XEvent()
        // Reading takes what xcb read while sending XTest requests too.
        xcbReadUnseen = false
        while eventsQueued(dpy, QueuedAfterReading) > 0 {
            XNextEvent(dpy, &event)
            incoming.events += 1
            let type = event.type
            let isRandR = randrEventBase >= 0
                && (type == randrEventBase + RRScreenChangeNotify || type == randrEventBase + RRNotify)
            if isRandR || (type == ConfigureNotify && event.xconfigure.window == root) {
                XRRUpdateConfiguration(&event)
                incoming.screenChanged = true
            } else if isKeymapChange(&event) {
                incoming.keymapChanged = true
            } else if isHierarchyChange(&event) {
                incoming.devicesChanged = true
            } else if damageEventBase >= 0 && type == damageEventBase + tb_damage_notify() {
                incoming.damaged = true
            } else if type == MappingNotify {
                if event.xmapping.request == MappingKeyboard || event.xmapping.request == MappingModifier {
                    refreshKeyboardMapping(&event)
                    incoming.keymapChanged = true
                }
            } else if type == MapNotify && event.xmap.window != mine {
                incoming.windowsRestacked = true
            } else if type == ConfigureNotify && event.xconfigure.window != mine {
                incoming.windowsRestacked = true
            } else if type == Expose && event.xexpose.window == mine && mine != 0 {
                let e = event.xexpose
                let rect = PixelRect(x: e.x, y: e.y, width: e.width, height: e.height)
                if incoming.overlayExposed.count < Incoming.maxExposedRects {
                    incoming.overlayExposed.append(rect)
                } else if let last = incoming.overlayExposed.last {
                    let x0 = min(last.x, rect.x), y0 = min(last.y, rect.y)
                    let x1 = max(last.x + last.width, rect.x + rect.width), y1 = max(last.y + last.height, rect.y + rect.height)
                    incoming.overlayExposed[incoming.overlayExposed.count - 1] = PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
                }
            }
        }
        return incoming
    }

    /// Whether Xlib already holds events it read from the connection (while waiting for a reply or
    /// flushing) that nobody has taken yet, or xcb read something while sending XTest requests
    /// (`flushXTest`): the connection's descriptor will not become readable for them, so the owner
    /// must drain them itself (`drainIncoming`). No I/O.
    ///
    /// Through `eventsQueued` (`XEventsQueued` with `QueuedAlready`).
    public func hasQueuedEvents() -> Bool {
        guard let handle else { return false }
        return xcbReadUnseen || eventsQueued(handle, QueuedAlready) > 0
    }

    /// How many events Xlib holds; `mode` says whether it may read or flush first (`QueuedAlready`,
    /// `QueuedAfterReading`, `QueuedAfterFlush`).
    ///
    /// The corresponding C function is `XEventsQueued`.
    private func eventsQueued(_ dpy: OpaquePointer, _ mode: Int32) -> Int32 {
        XEventsQueued(dpy, mode)
    }
}
