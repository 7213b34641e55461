import TouchCore
import TouchOutput

/// How an output's picture is turned (`wl_output.transform`): 0 normal, 1–3 rotated 90°, 180°, 270°
/// counter-clockwise, 4–7 the same flipped.
public struct OutputTransform: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let normal = OutputTransform(rawValue: 0)
    /// Whether width and height swap (90° and 270°, flipped or not).
    public var swapsAxes: Bool { rawValue & 1 == 1 }
    public var description: String {
        let turns = ["normal", "90", "180", "270", "flipped", "flipped-90", "flipped-180", "flipped-270"]
        return (0..<8).contains(rawValue) ? turns[Int(rawValue)] : "transform \(rawValue)"
    }
}

/// One output (monitor) of a Wayland session, as the compositor describes it to clients.
public struct WaylandOutput: Hashable, Sendable {
    /// The compositor's name for it (`DP-1`, `Virtual-1`): xdg-output's or `wl_output`'s (version 4);
    /// `wl_output-<global>` when the compositor gives none.
    public var name: String
    /// The compositor's description (make, model, connector), or "".
    public var description: String
    /// Where it is in the compositor's layout, in logical pixels (xdg-output's logical position and size;
    /// without xdg-output, `wl_output`'s position and its mode divided by its scale, turned by its transform).
    public var logical: PixelRect
    /// Its current mode in hardware pixels (`wl_output.mode`).
    public var modeWidth: Int32
    public var modeHeight: Int32
    /// `wl_output.scale` (an integer: fractional scales are rounded up here; the logical size is exact).
    public var scale: Int32
    public var transform: OutputTransform

    /// The output as a `Monitor` (Wayland has no primary output).
    public var monitor: Monitor { Monitor(name: name, rect: logical, isPrimary: false) }

    /// One log line: `NAME WxH+X+Y (mode MxN, scale S, TRANSFORM) "description"`.
    public var summary: String {
        "\(name) \(logical) (mode \(modeWidth)x\(modeHeight), scale \(scale), \(transform))"
            + (description.isEmpty ? "" : " \"\(description)\"")
    }
}

/// What changed after `WaylandDesktop.readEvents()`.
public struct WaylandChanges: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// An output came, went, or moved, resized, turned or changed scale.
    public static let outputs = WaylandChanges(rawValue: 1)
    /// The seat's keyboard has a new keymap (or lost its keyboard, or a keymap could not be read).
    public static let keymap = WaylandChanges(rawValue: 2)
    /// The output the live view watches changed (a screen copy after damage is ready), or its copy failed.
    public static let view = WaylandChanges(rawValue: 4)
}

/// The Wayland session as touchbridge needs it: the outputs (for touchscreen mode's geometry) and the
/// seat keyboard's keymap (for the uinput keyboard's keys), both followed as they change. One
/// connection to the compositor (`WAYLAND_DISPLAY`), owned by one thread: call `readEvents()` whenever
/// `fileDescriptor` is readable. Input goes through uinput, which every compositor reads through
/// libinput, except a character no key of the compositor's keymap makes: where the compositor offers
/// the virtual keyboard protocol (`zwp_virtual_keyboard_v1`: wlroots compositors such as sway), a
/// keyboard of touchbridge's own types it with a keymap that has it (`typeLacking`).
public final class WaylandDesktop {
    /// The state of one `wl_output` global as its events arrive.
    private struct OutputState {
        var proxy: WaylandProxy
        var xdg: WaylandProxy?
        var global: UInt32
        var name = "", description = "", xdgName = "", xdgDescription = ""
        var x: Int32 = 0, y: Int32 = 0, transform = OutputTransform.normal
        var modeWidth: Int32 = 0, modeHeight: Int32 = 0, scale: Int32 = 1
        var logicalX: Int32?, logicalY: Int32?, logicalWidth: Int32?, logicalHeight: Int32?
        /// Whether a `done` arrived (the output is described).
        var done = false

        var output: WaylandOutput {
            let swapped = transform.swapsAxes
            let s = max(scale, 1)
            let w = logicalWidth ?? ((swapped ? modeHeight : modeWidth) + s - 1) / s
            let h = logicalHeight ?? ((swapped ? modeWidth : modeHeight) + s - 1) / s
            let chosen = !xdgName.isEmpty ? xdgName : !name.isEmpty ? name : "wl_output-\(global)"
            return WaylandOutput(name: chosen, description: !xdgDescription.isEmpty ? xdgDescription : description,
                                 logical: PixelRect(x: logicalX ?? x, y: logicalY ?? y, width: w, height: h),
                                 modeWidth: modeWidth, modeHeight: modeHeight, scale: scale, transform: transform)
        }
    }

    var display: WaylandDisplay!
    private var outputStates: [WaylandProxy: OutputState] = [:]
    private var xdgToOutput: [WaylandProxy: WaylandProxy] = [:]
    private var xdgManager: (global: UInt32, proxy: WaylandProxy)?
    private var seat: (global: UInt32, proxy: WaylandProxy)?
    private var keyboard: WaylandProxy?
    var pending: WaylandChanges = []
    /// The live view's screen copies (`WaylandDesktop+View.swift`).
    var copies = ScreenCopies()
    /// The live view over them, once the daemon attached one (`attachView`).
    var pictureView: (any ClosableViewCapture)?
    /// The monitor a portal session shares, where the compositor copies none itself (GNOME, KDE):
    /// the view's pictures instead of the screen copies (`attachCast`). Closed with the connection.
    var cast: (any PixelStream)?
    private var virtualKeyboardManager: (global: UInt32, proxy: WaylandProxy)?
    /// The virtual keyboard, made at the first character typed through it.
    private var virtualKeyboard: WaylandProxy?
    /// The characters the virtual keyboard's keymap has now (empty: it has the compositor's keymap, or
    /// none yet).
    private var typing = TypingKeymap()
    /// The text of the last keymap the compositor sent that was not the virtual keyboard's: what the
    /// virtual keyboard is given back (`restoreTyping`).
    private(set) var compositorKeymapText: [CChar]?

    /// The outputs, in the order the compositor announced them; only those it has described.
    public private(set) var outputs: [WaylandOutput] = []
    /// The seat keyboard's keymap (`canBorrow` false), nil until the compositor sent one (or while the
    /// seat has no keyboard).
    public private(set) var keymap: Keymap?
    /// Why the last keymap the compositor sent could not be used (nil when it could).
    public private(set) var keymapProblem: WaylandError?
    /// Whether the compositor offers xdg-output (logical geometry as the compositor lays it out).
    public var hasXdgOutput: Bool { xdgManager != nil }
    /// Whether a character no key makes can be typed: the compositor offers the virtual keyboard
    /// protocol (`zwp_virtual_keyboard_manager_v1`) and a seat.
    public var canTypeLacking: Bool { virtualKeyboardManager != nil && seat != nil }
    /// The compositor's name as given (or `WAYLAND_DISPLAY`'s).
    public let displayName: String
    /// Whether `readEvents` found the connection lost (then only `close()` is left).
    var lost = false
    /// Further people's own seats (sway's, `SwaySeats`), when the compositor gives them; set by whoever
    /// opened it (the daemon, from `SWAYSOCK`).
    public var personSeats: (any PersonSeats)?

    /// Connects to the compositor (`name`, or `WAYLAND_DISPLAY` when nil) and waits until it has
    /// described its outputs and sent the keymap (a few round trips).
    public init(name: String? = nil) throws(WaylandError) {
        displayName = name ?? "WAYLAND_DISPLAY"
        display = try WaylandDisplay(name: name, events: self)
        try display.listenToRegistry()
        // Globals; then the outputs' and the seat's first events; then the keyboard's keymap.
        for _ in 0..<3 { try display.roundtrip() }
        pending = []
        rebuildOutputs()
    }

    deinit { closeConnection() }

    /// Whether changes were read (by `typeLacking`'s round trip) that `readEvents()` has not returned.
    var hasPendingChanges: Bool { !pending.isEmpty }

    /// The descriptor to watch: when readable, call `readEvents()`.
    public var fileDescriptor: Int32 { (try? display?.fileDescriptor()) ?? -1 }

    /// Reads and handles what the compositor sent (without blocking) and says what changed. Throws
    /// `connectionLost` when the compositor went away; then only `close()` is left to do.
    public func readEvents() throws(WaylandError) -> WaylandChanges {
        guard let display else { throw .closed }
        try display.readEvents()
        if pending.contains(.outputs) {
            let before = outputs
            rebuildOutputs()
            if outputs == before { pending.remove(.outputs) }
        }
        defer { pending = [] }
        return pending
    }

    /// Releases every proxy and closes the connection. Idempotent.
    public func closeConnection() {
        guard let d = display else { return }
        pictureView?.close()
        pictureView = nil
        cast?.close()
        cast = nil
        releaseCopies()
        if let m = copies.manager { d.destroyScreencopyManager(m.proxy) }
        if let s = copies.shm { d.destroyShm(s.proxy) }
        copies = ScreenCopies()
        for (_, s) in outputStates {
            if let x = s.xdg { d.destroyXdgOutput(x) }
            d.releaseOutput(s.proxy)
        }
        outputStates = [:]
        xdgToOutput = [:]
        if let m = xdgManager { d.destroyXdgOutputManager(m.proxy) }
        xdgManager = nil
        if let v = virtualKeyboard {
            try? restoreTyping()
            d.destroyVirtualKeyboard(v)
            try? d.sendRequests()
        }
        virtualKeyboard = nil
        if let m = virtualKeyboardManager { d.destroyVirtualKeyboardManager(m.proxy) }
        virtualKeyboardManager = nil
        if let k = keyboard { d.releaseKeyboard(k) }
        keyboard = nil
        if let s = seat { d.releaseSeat(s.proxy) }
        seat = nil
        d.disconnect()
        display = nil
    }

    /// Types `keysym` (a press and a release) on the virtual keyboard, with a keymap that has it on a
    /// key of its own (sent before the key: the compositor may have given the keyboard another keymap
    /// meanwhile), and waits until the compositor has handled it, so that keys pressed after it on
    /// another keyboard (uinput's) come after it. The keymap stays until `restoreTyping`: a client
    /// reading the map late still finds the character (the next key of another keyboard makes that
    /// keyboard's keymap the seat's again anyway). Throws `typingUnavailable` when the compositor offers
    /// no virtual keyboard.
    public func typeLacking(_ keysym: UInt32) throws(WaylandError) {
        guard let display else { throw .closed }
        guard let manager = virtualKeyboardManager, let seat else { throw .typingUnavailable }
        let keyboard: WaylandProxy
        if let v = virtualKeyboard {
            keyboard = v
        } else {
            keyboard = try display.createVirtualKeyboard(manager: manager.proxy, seat: seat.proxy)
            virtualKeyboard = keyboard
        }
        let (code, _) = typing.key(for: keysym)
        // Sent every time: a compositor may give every keyboard its configured keymap again (sway's
        // `input * xkb_layout`), this one included.
        try send(typing.text, to: keyboard)
        let time = monotonicMilliseconds()
        display.virtualKey(keyboard, time: time, evdevCode: code, pressed: true)
        display.virtualKey(keyboard, time: time, evdevCode: code, pressed: false)
        try display.roundtrip()
    }

    /// Gives the virtual keyboard the compositor's keymap back (when it typed with its own), so that a
    /// client whose keymap is still the virtual keyboard's has the desktop's again. Nothing when it has
    /// not typed since.
    public func restoreTyping() throws(WaylandError) {
        guard let display else { throw .closed }
        guard let keyboard = virtualKeyboard, !typing.keysyms.isEmpty else { return }
        typing.clear()
        guard let text = compositorKeymapText else { return }
        try send(text, to: keyboard)
        try display.sendRequests()
    }

    /// Sends `text` as the virtual keyboard's keymap.
    private func send(_ text: [CChar], to keyboard: WaylandProxy) throws(WaylandError) {
        let (fd, size) = try keymapDescriptor(text)
        defer { closeDescriptor(fd) }
        display.setVirtualKeymap(keyboard, fd: fd, size: size)
        // The descriptor goes with the request, when it is sent: before closing this side of it.
        try display.sendRequests()
    }

    private func rebuildOutputs() {
        outputs = outputStates.values.filter(\.done).sorted { $0.global < $1.global }.map(\.output)
    }

    /// The output whose logical rectangle holds `rect`'s centre, in `screen()`'s coordinates (the box
    /// around the outputs moved to 0,0): its proxy, its description and that rectangle.
    func outputShowing(_ rect: PixelRect) -> (proxy: WaylandProxy, output: WaylandOutput, logical: PixelRect)? {
        let described = outputStates.values.filter(\.done).sorted { $0.global < $1.global }
        let rects = described.map(\.output.logical).filter { !$0.isEmpty }
        let x0 = rects.map(\.x).min() ?? 0, y0 = rects.map(\.y).min() ?? 0
        let cx = rect.x + rect.width / 2, cy = rect.y + rect.height / 2
        for state in described {
            let o = state.output
            let l = PixelRect(x: o.logical.x - x0, y: o.logical.y - y0, width: o.logical.width, height: o.logical.height)
            if cx >= l.x, cx < l.x + l.width, cy >= l.y, cy < l.y + l.height { return (state.proxy, o, l) }
        }
        return nil
    }

    private func makeXdgOutput(for output: WaylandProxy) {
        guard let m = xdgManager, let x = try? display.xdgOutput(manager: m.proxy, output: output) else { return }
        outputStates[output]?.xdg = x
        xdgToOutput[x] = output
    }
}

extension WaylandDesktop: WaylandEvents {
    func global(name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "wl_output":
            guard let p = try? display.bindOutput(name, version: version) else { return }
            outputStates[p] = OutputState(proxy: p, global: name)
            makeXdgOutput(for: p)
        case "zxdg_output_manager_v1":
            guard xdgManager == nil, let m = try? display.bindXdgOutputManager(name, version: version) else { return }
            xdgManager = (name, m)
            for p in outputStates.keys where outputStates[p]?.xdg == nil { makeXdgOutput(for: p) }
        case "zwp_virtual_keyboard_manager_v1":
            guard virtualKeyboardManager == nil, let m = try? display.bindVirtualKeyboardManager(name) else { return }
            virtualKeyboardManager = (name, m)
        case "wl_seat":
            guard seat == nil, let s = try? display.bindSeat(name, version: version) else { return }
            seat = (name, s)
        case "zwlr_screencopy_manager_v1", "wl_shm":
            copyGlobal(name: name, interface: interface, version: version)
        default:
            break
        }
    }

    func globalRemoved(name: UInt32) {
        if let (p, s) = outputStates.first(where: { $0.value.global == name }) {
            outputGone(p)
            if let x = s.xdg { display.destroyXdgOutput(x); xdgToOutput[x] = nil }
            display.releaseOutput(p)
            outputStates[p] = nil
            pending.insert(.outputs)
        } else if seat?.global == name {
            seatCapabilities(keyboard: false)
            if let s = seat { display.releaseSeat(s.proxy) }
            seat = nil
        } else if xdgManager?.global == name, let m = xdgManager {
            display.destroyXdgOutputManager(m.proxy)
            xdgManager = nil
        } else if virtualKeyboardManager?.global == name, let m = virtualKeyboardManager {
            display.destroyVirtualKeyboardManager(m.proxy)
            virtualKeyboardManager = nil
        } else {
            copyGlobalRemoved(name: name)
        }
    }

    func outputGeometry(_ output: WaylandProxy, x: Int32, y: Int32, transform: Int32) {
        if let s = outputStates[output], s.done, s.transform.rawValue != transform { outputReshaped(output) }
        outputStates[output]?.x = x
        outputStates[output]?.y = y
        outputStates[output]?.transform = OutputTransform(rawValue: transform)
    }

    func outputMode(_ output: WaylandProxy, current: Bool, width: Int32, height: Int32) {
        guard current else { return }
        if let s = outputStates[output], s.done, s.modeWidth != width || s.modeHeight != height { outputReshaped(output) }
        outputStates[output]?.modeWidth = width
        outputStates[output]?.modeHeight = height
    }

    func outputScale(_ output: WaylandProxy, factor: Int32) { outputStates[output]?.scale = factor }
    func outputName(_ output: WaylandProxy, name: String) { outputStates[output]?.name = name }
    func outputDescription(_ output: WaylandProxy, description: String) { outputStates[output]?.description = description }

    func outputDone(_ output: WaylandProxy) {
        outputStates[output]?.done = true
        pending.insert(.outputs)
    }

    func xdgOutputPosition(_ xdgOutput: WaylandProxy, x: Int32, y: Int32) {
        guard let o = xdgToOutput[xdgOutput] else { return }
        outputStates[o]?.logicalX = x
        outputStates[o]?.logicalY = y
    }

    func xdgOutputSize(_ xdgOutput: WaylandProxy, width: Int32, height: Int32) {
        guard let o = xdgToOutput[xdgOutput] else { return }
        outputStates[o]?.logicalWidth = width
        outputStates[o]?.logicalHeight = height
    }

    func xdgOutputName(_ xdgOutput: WaylandProxy, name: String) {
        if let o = xdgToOutput[xdgOutput] { outputStates[o]?.xdgName = name }
    }

    func xdgOutputDescription(_ xdgOutput: WaylandProxy, description: String) {
        if let o = xdgToOutput[xdgOutput] { outputStates[o]?.xdgDescription = description }
    }

    /// Version 3 deprecates it (`wl_output.done` follows instead); earlier versions send it alone.
    func xdgOutputDone(_ xdgOutput: WaylandProxy) {
        guard let o = xdgToOutput[xdgOutput] else { return }
        outputStates[o]?.done = true
        pending.insert(.outputs)
    }

    func seatCapabilities(keyboard has: Bool) {
        if has, keyboard == nil, let s = seat {
            keyboard = try? display.keyboard(of: s.proxy)
        } else if !has, let k = keyboard {
            display.releaseKeyboard(k)
            keyboard = nil
            if keymap != nil { keymap = nil; pending.insert(.keymap) }
        }
    }

    /// The seat's keyboard has this keymap now. The virtual keyboard's own (while it is the seat's
    /// active keyboard, clients get its keymap) is not the desktop's: ignored. The desktop's keymap sent
    /// again unchanged (another keyboard typed after the virtual one) is no change.
    func keyboardKeymap(format: UInt32, fd: Int32, size: UInt32) {
        /// `WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1`; the other format (0) is "no keymap".
        guard format == 1 else {
            closeDescriptor(fd)
            pending.insert(.keymap)
            keymapProblem = .keymap("the compositor sent no xkb keymap (format \(format))")
            return
        }
        do {
            let text = try readKeymapText(fd: fd, size: size)
            if TypingKeymap.isTypingKeymap(text) { return }
            if keymap != nil, keymapProblem == nil, text == compositorKeymapText { return }
            pending.insert(.keymap)
            keymap = try XKBKeymap(text: text).touchKeymap
            compositorKeymapText = text
            keymapProblem = nil
        } catch {
            pending.insert(.keymap)
            keymapProblem = error
        }
    }
}
