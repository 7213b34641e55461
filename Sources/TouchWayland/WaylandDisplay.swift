import CWayland
import CWaylandProtocols
import Glibc

// Every C call TouchWayland makes (libwayland-client, the xdg-output and virtual keyboard glue, mmap,
// memfd) is in this file, the screen copy's (wlr-screencopy, wl_shm, poll) in WaylandDisplay+Screencopy.swift
// and libxkbcommon's in WaylandDisplay+XKB.swift: one Swift function per C
// function, each naming its C function; the listeners' C callbacks are here too and only hand their arguments to `WaylandEvents`.

/// What the compositor's events are handed to (`WaylandDesktop`): plain Swift values, called from inside
/// `WaylandDisplay.dispatchPending()` on the thread that calls it.
protocol WaylandEvents: AnyObject {
    func global(name: UInt32, interface: String, version: UInt32)
    func globalRemoved(name: UInt32)
    // An output's events name its `wl_output` proxy; an xdg-output's, its `zxdg_output_v1` proxy.
    func outputGeometry(_ output: WaylandProxy, x: Int32, y: Int32, transform: Int32)
    func outputMode(_ output: WaylandProxy, current: Bool, width: Int32, height: Int32)
    func outputScale(_ output: WaylandProxy, factor: Int32)
    func outputName(_ output: WaylandProxy, name: String)
    func outputDescription(_ output: WaylandProxy, description: String)
    func outputDone(_ output: WaylandProxy)
    func xdgOutputPosition(_ xdgOutput: WaylandProxy, x: Int32, y: Int32)
    func xdgOutputSize(_ xdgOutput: WaylandProxy, width: Int32, height: Int32)
    func xdgOutputName(_ xdgOutput: WaylandProxy, name: String)
    func xdgOutputDescription(_ xdgOutput: WaylandProxy, description: String)
    func xdgOutputDone(_ xdgOutput: WaylandProxy)
    func seatCapabilities(keyboard: Bool)
    /// The keymap's descriptor: the receiver owns it (closes it).
    func keyboardKeymap(format: UInt32, fd: Int32, size: UInt32)
    // A screen copy frame's events (`zwlr_screencopy_frame_v1`), naming the frame's proxy.
    func frameBuffer(_ frame: WaylandProxy, format: UInt32, width: UInt32, height: UInt32, stride: UInt32)
    func frameFlags(_ frame: WaylandProxy, flags: UInt32)
    func frameBufferDone(_ frame: WaylandProxy)
    func frameReady(_ frame: WaylandProxy)
    func frameFailed(_ frame: WaylandProxy)
}

/// A proxy of the compositor's object (`wl_output`, `wl_seat`, ...): an opaque C pointer.
struct WaylandProxy: Hashable {
    let pointer: OpaquePointer
}

/// One connection to a Wayland compositor: the `wl_display` and the listener tables its proxies use
/// (which must outlive them). Not thread-safe: one owner calls it.
final class WaylandDisplay {
    private var display: OpaquePointer?
    private let events: Unmanaged<AnyObject>
    private let registryListener = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
    private let outputListener = UnsafeMutablePointer<wl_output_listener>.allocate(capacity: 1)
    private let xdgOutputListener = UnsafeMutablePointer<zxdg_output_v1_listener>.allocate(capacity: 1)
    private let seatListener = UnsafeMutablePointer<wl_seat_listener>.allocate(capacity: 1)
    private let keyboardListener = UnsafeMutablePointer<wl_keyboard_listener>.allocate(capacity: 1)
    let frameListener = UnsafeMutablePointer<zwlr_screencopy_frame_v1_listener>.allocate(capacity: 1)
    private var registry: OpaquePointer?

    /// Connects to the compositor named `name` (a socket under `XDG_RUNTIME_DIR`, or an absolute path),
    /// or, when nil, the one `WAYLAND_DISPLAY` names (`wayland-0` when unset). `events` is held weakly
    /// (unretained): it must outlive the connection.
    ///
    /// The corresponding C function is `wl_display_connect`.
    init(name: String?, events: WaylandEvents) throws(WaylandError) {
        self.events = Unmanaged.passUnretained(events as AnyObject)
        guard let d = wl_display_connect(name) else {
            let e = errno
            registryListener.deallocate(); outputListener.deallocate(); xdgOutputListener.deallocate()
            seatListener.deallocate(); keyboardListener.deallocate(); frameListener.deallocate()
            throw .cannotConnect(name ?? "WAYLAND_DISPLAY", String(cString: strerror(e)))
        }
        display = d
        Self.fillListeners(registry: registryListener, output: outputListener, xdgOutput: xdgOutputListener,
                           seat: seatListener, keyboard: keyboardListener)
        Self.fillFrameListener(frameListener)
    }

    deinit { disconnect() }

    func connected() throws(WaylandError) -> OpaquePointer {
        guard let display else { throw .closed }
        return display
    }

    var data: UnsafeMutableRawPointer { events.toOpaque() }

    /// The descriptor to watch for the compositor's events (readable: call `readEvents`).
    ///
    /// The corresponding C function is `wl_display_get_fd`.
    func fileDescriptor() throws(WaylandError) -> Int32 {
        wl_display_get_fd(try connected())
    }

    /// Asks for the registry (the compositor's globals arrive as `global` events).
    ///
    /// The corresponding C functions are `wl_display_get_registry` and `wl_registry_add_listener`.
    func listenToRegistry() throws(WaylandError) {
        guard let r = wl_display_get_registry(try connected()) else { throw .requestFailed("wl_display_get_registry") }
        registry = r
        guard wl_registry_add_listener(r, registryListener, data) == 0 else { throw .requestFailed("wl_registry_add_listener") }
    }

    /// Binds global `name` with `interface` at `version`: an untyped proxy.
    ///
    /// The corresponding C function is `wl_registry_bind`.
    func bind(_ name: UInt32, _ interface: UnsafePointer<wl_interface>, _ version: UInt32) throws(WaylandError) -> OpaquePointer {
        guard let registry, let p = wl_registry_bind(registry, name, interface, version) else {
            throw .requestFailed("wl_registry_bind(\(name))")
        }
        return OpaquePointer(p)
    }

    /// Binds output global `name` at `version` (at most 4: its name and description) and listens to it.
    ///
    /// The corresponding C functions are `wl_output_add_listener` and the shim's `tb_wl_output_interface`.
    func bindOutput(_ name: UInt32, version: UInt32) throws(WaylandError) -> WaylandProxy {
        let p = try bind(name, tb_wl_output_interface(), min(version, 4))
        guard wl_output_add_listener(p, outputListener, data) == 0 else {
            throw .requestFailed("wl_output_add_listener")
        }
        return WaylandProxy(pointer: p)
    }

    /// The version `proxy` was bound at.
    ///
    /// The corresponding C function is `wl_proxy_get_version`.
    func version(of proxy: WaylandProxy) -> UInt32 { wl_proxy_get_version(proxy.pointer) }

    /// Gives up an output (its global went, or the connection closes).
    ///
    /// The corresponding C functions are `wl_output_release` (version 3 and later) and `wl_output_destroy`.
    func releaseOutput(_ output: WaylandProxy) {
        if version(of: output) >= 3 { wl_output_release(output.pointer) } else { wl_output_destroy(output.pointer) }
    }

    /// Binds the xdg-output manager (version at most 3).
    ///
    /// The corresponding C function is the shim's `tb_zxdg_output_manager_v1_interface`.
    func bindXdgOutputManager(_ name: UInt32, version: UInt32) throws(WaylandError) -> WaylandProxy {
        WaylandProxy(pointer: try bind(name, tb_zxdg_output_manager_v1_interface(), min(version, 3)))
    }

    /// The xdg-output of `output`, listened to.
    ///
    /// The corresponding C functions are `zxdg_output_manager_v1_get_xdg_output` and
    /// `zxdg_output_v1_add_listener`.
    func xdgOutput(manager: WaylandProxy, output: WaylandProxy) throws(WaylandError) -> WaylandProxy {
        guard let x = zxdg_output_manager_v1_get_xdg_output(manager.pointer, output.pointer) else {
            throw .requestFailed("zxdg_output_manager_v1_get_xdg_output")
        }
        guard zxdg_output_v1_add_listener(x, xdgOutputListener, data) == 0 else {
            throw .requestFailed("zxdg_output_v1_add_listener")
        }
        return WaylandProxy(pointer: x)
    }

    /// Destroys an xdg-output.
    ///
    /// The corresponding C function is `zxdg_output_v1_destroy`.
    func destroyXdgOutput(_ x: WaylandProxy) { zxdg_output_v1_destroy(x.pointer) }

    /// Destroys the xdg-output manager.
    ///
    /// The corresponding C function is `zxdg_output_manager_v1_destroy`.
    func destroyXdgOutputManager(_ m: WaylandProxy) { zxdg_output_manager_v1_destroy(m.pointer) }

    /// Binds the seat (version at most 7, whose keymaps must be mapped `MAP_PRIVATE`) and listens to it.
    ///
    /// The corresponding C functions are `wl_seat_add_listener` and the shim's `tb_wl_seat_interface`.
    func bindSeat(_ name: UInt32, version: UInt32) throws(WaylandError) -> WaylandProxy {
        let p = try bind(name, tb_wl_seat_interface(), min(version, 7))
        guard wl_seat_add_listener(p, seatListener, data) == 0 else { throw .requestFailed("wl_seat_add_listener") }
        return WaylandProxy(pointer: p)
    }

    /// Gives up the seat.
    ///
    /// The corresponding C functions are `wl_seat_release` (version 5 and later) and `wl_seat_destroy`.
    func releaseSeat(_ seat: WaylandProxy) {
        if version(of: seat) >= 5 { wl_seat_release(seat.pointer) } else { wl_seat_destroy(seat.pointer) }
    }

    /// The seat's keyboard, listened to (its `keymap` event carries the compositor's keymap).
    ///
    /// The corresponding C functions are `wl_seat_get_keyboard` and `wl_keyboard_add_listener`.
    func keyboard(of seat: WaylandProxy) throws(WaylandError) -> WaylandProxy {
        guard let k = wl_seat_get_keyboard(seat.pointer) else { throw .requestFailed("wl_seat_get_keyboard") }
        guard wl_keyboard_add_listener(k, keyboardListener, data) == 0 else { throw .requestFailed("wl_keyboard_add_listener") }
        return WaylandProxy(pointer: k)
    }

    /// Gives up the keyboard.
    ///
    /// The corresponding C functions are `wl_keyboard_release` (version 3 and later) and
    /// `wl_keyboard_destroy`.
    func releaseKeyboard(_ keyboard: WaylandProxy) {
        if version(of: keyboard) >= 3 { wl_keyboard_release(keyboard.pointer) } else { wl_keyboard_destroy(keyboard.pointer) }
    }

    // MARK: The virtual keyboard (zwp_virtual_keyboard_v1): what types a character no key makes

    /// Binds the virtual keyboard manager (version 1).
    ///
    /// The corresponding C function is the shim's `tb_zwp_virtual_keyboard_manager_v1_interface`.
    func bindVirtualKeyboardManager(_ name: UInt32) throws(WaylandError) -> WaylandProxy {
        WaylandProxy(pointer: try bind(name, tb_zwp_virtual_keyboard_manager_v1_interface(), 1))
    }

    /// Forgets the manager (it has no destroy request: only this side's proxy goes).
    ///
    /// The corresponding C function is `zwp_virtual_keyboard_manager_v1_destroy`.
    func destroyVirtualKeyboardManager(_ m: WaylandProxy) { zwp_virtual_keyboard_manager_v1_destroy(m.pointer) }

    /// A new keyboard device in `seat` whose keymap and keys this client sends. A compositor that does
    /// not let this client have one answers with a protocol error (the connection is then lost).
    ///
    /// The corresponding C function is `zwp_virtual_keyboard_manager_v1_create_virtual_keyboard`.
    func createVirtualKeyboard(manager: WaylandProxy, seat: WaylandProxy) throws(WaylandError) -> WaylandProxy {
        guard let k = zwp_virtual_keyboard_manager_v1_create_virtual_keyboard(manager.pointer, seat.pointer) else {
            throw .requestFailed("zwp_virtual_keyboard_manager_v1_create_virtual_keyboard")
        }
        return WaylandProxy(pointer: k)
    }

    /// Gives the virtual keyboard the keymap in `fd` (xkb text, `size` bytes with its NUL); the
    /// descriptor is sent, the caller still closes its own.
    ///
    /// The corresponding C function is `zwp_virtual_keyboard_v1_keymap`.
    func setVirtualKeymap(_ keyboard: WaylandProxy, fd: Int32, size: UInt32) {
        zwp_virtual_keyboard_v1_keymap(keyboard.pointer, WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue, fd, size)
    }

    /// Presses or releases the virtual keyboard's key `evdevCode` at `time` (milliseconds).
    ///
    /// The corresponding C function is `zwp_virtual_keyboard_v1_key`.
    func virtualKey(_ keyboard: WaylandProxy, time: UInt32, evdevCode: UInt32, pressed: Bool) {
        zwp_virtual_keyboard_v1_key(keyboard.pointer, time, evdevCode,
                                    pressed ? WL_KEYBOARD_KEY_STATE_PRESSED.rawValue : WL_KEYBOARD_KEY_STATE_RELEASED.rawValue)
    }

    /// Removes the virtual keyboard from the seat.
    ///
    /// The corresponding C function is `zwp_virtual_keyboard_v1_destroy`.
    func destroyVirtualKeyboard(_ keyboard: WaylandProxy) { zwp_virtual_keyboard_v1_destroy(keyboard.pointer) }

    /// Sends the requests made now (not waiting for an answer).
    func sendRequests() throws(WaylandError) {
        let d = try connected()
        guard flush(d) else { throw lost(d) }
    }

    /// Sends the requests made and waits until the compositor answered all of them (and every event
    /// they caused was dispatched).
    ///
    /// The corresponding C function is `wl_display_roundtrip`.
    func roundtrip() throws(WaylandError) {
        let d = try connected()
        guard wl_display_roundtrip(d) >= 0 else { throw lost(d) }
    }

    /// Reads what the compositor sent, without blocking (call when the descriptor is readable), and
    /// dispatches it; sends the requests made, also those the listeners made while dispatching (a seat
    /// that gained a keyboard asks for it: unsent, its keymap would never come). Throws when the
    /// connection is lost.
    ///
    /// The corresponding C functions are `wl_display_prepare_read`, `wl_display_read_events` and
    /// `wl_display_cancel_read`.
    func readEvents() throws(WaylandError) {
        let d = try connected()
        while wl_display_prepare_read(d) != 0 { try dispatchPending(d) }
        guard flush(d) else {
            wl_display_cancel_read(d)
            throw lost(d)
        }
        guard wl_display_read_events(d) >= 0 else { throw lost(d) }
        try dispatchPending(d)
        guard flush(d) else { throw lost(d) }
    }

    /// Sends the requests made; false when the connection failed (a full socket is not a failure: the
    /// rest goes with the next flush).
    ///
    /// The corresponding C function is `wl_display_flush`.
    private func flush(_ d: OpaquePointer) -> Bool { wl_display_flush(d) >= 0 || errno == EAGAIN }

    /// Hands the events already read to the listeners.
    ///
    /// The corresponding C function is `wl_display_dispatch_pending`.
    private func dispatchPending(_ d: OpaquePointer) throws(WaylandError) {
        guard wl_display_dispatch_pending(d) >= 0 else { throw lost(d) }
    }

    /// Why the connection failed: the protocol error the compositor sent, or the system error.
    ///
    /// The corresponding C function is `wl_display_get_error`.
    func lost(_ d: OpaquePointer) -> WaylandError {
        let e = wl_display_get_error(d)
        return .connectionLost(e == 0 ? "end of stream" : String(cString: strerror(e)))
    }

    /// Closes the connection (every proxy must be released first). Idempotent.
    ///
    /// The corresponding C functions are `wl_registry_destroy` and `wl_display_disconnect`.
    func disconnect() {
        guard let d = display else { return }
        if let registry { wl_registry_destroy(registry) }
        registry = nil
        wl_display_disconnect(d)
        display = nil
        registryListener.deallocate(); outputListener.deallocate(); xdgOutputListener.deallocate()
        seatListener.deallocate(); keyboardListener.deallocate(); frameListener.deallocate()
    }

    // MARK: The listeners: C callbacks that hand their arguments on.

    /// The listeners of the registry, outputs, xdg-outputs, the seat and its keyboard.
    private static func fillListeners(registry: UnsafeMutablePointer<wl_registry_listener>,
                                      output: UnsafeMutablePointer<wl_output_listener>,
                                      xdgOutput: UnsafeMutablePointer<zxdg_output_v1_listener>,
                                      seat: UnsafeMutablePointer<wl_seat_listener>,
                                      keyboard: UnsafeMutablePointer<wl_keyboard_listener>) {
        registry.initialize(to: wl_registry_listener(
            global: { data, _, name, interface, version in
                listenerReceiver(data)?.global(name: name, interface: listenerText(interface), version: version)
            },
            global_remove: { data, _, name in listenerReceiver(data)?.globalRemoved(name: name) }))
        output.initialize(to: wl_output_listener(
            geometry: { data, o, x, y, _, _, _, _, _, transform in
                if let o = listenerProxy(o) { listenerReceiver(data)?.outputGeometry(o, x: x, y: y, transform: transform) }
            },
            mode: { data, o, flags, width, height, _ in
                if let o = listenerProxy(o) {
                    listenerReceiver(data)?.outputMode(o, current: flags & WL_OUTPUT_MODE_CURRENT.rawValue != 0, width: width, height: height)
                }
            },
            done: { data, o in if let o = listenerProxy(o) { listenerReceiver(data)?.outputDone(o) } },
            scale: { data, o, factor in if let o = listenerProxy(o) { listenerReceiver(data)?.outputScale(o, factor: factor) } },
            name: { data, o, name in if let o = listenerProxy(o) { listenerReceiver(data)?.outputName(o, name: listenerText(name)) } },
            description: { data, o, d in if let o = listenerProxy(o) { listenerReceiver(data)?.outputDescription(o, description: listenerText(d)) } }))
        xdgOutput.initialize(to: zxdg_output_v1_listener(
            logical_position: { data, x, px, py in if let x = listenerProxy(x) { listenerReceiver(data)?.xdgOutputPosition(x, x: px, y: py) } },
            logical_size: { data, x, w, h in if let x = listenerProxy(x) { listenerReceiver(data)?.xdgOutputSize(x, width: w, height: h) } },
            done: { data, x in if let x = listenerProxy(x) { listenerReceiver(data)?.xdgOutputDone(x) } },
            name: { data, x, name in if let x = listenerProxy(x) { listenerReceiver(data)?.xdgOutputName(x, name: listenerText(name)) } },
            description: { data, x, d in if let x = listenerProxy(x) { listenerReceiver(data)?.xdgOutputDescription(x, description: listenerText(d)) } }))
        seat.initialize(to: wl_seat_listener(
            capabilities: { data, _, caps in
                listenerReceiver(data)?.seatCapabilities(keyboard: caps & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0)
            },
            name: { _, _, _ in }))
        keyboard.initialize(to: wl_keyboard_listener(
            keymap: { data, _, format, fd, size in
                if let r = listenerReceiver(data) { r.keyboardKeymap(format: format, fd: fd, size: size) } else { closeDescriptor(fd) }
            },
            enter: { _, _, _, _, _ in },
            leave: { _, _, _, _ in },
            key: { _, _, _, _, _, _ in },
            modifiers: { _, _, _, _, _, _, _ in },
            repeat_info: { _, _, _, _ in }))
    }
}

// The listeners' helpers: free functions, so that the C callbacks capture nothing.

/// The receiver a listener's data points to (a `WaylandEvents`, unretained).
func listenerReceiver(_ data: UnsafeMutableRawPointer?) -> WaylandEvents? {
    guard let data else { return nil }
    return Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? WaylandEvents
}

func listenerProxy(_ p: OpaquePointer?) -> WaylandProxy? { p.map(WaylandProxy.init(pointer:)) }

private func listenerText(_ s: UnsafePointer<CChar>?) -> String { s.map { String(cString: $0) } ?? "" }

// MARK: The keymap's descriptor

/// Copies `size` bytes of the keymap the compositor sent through `fd` (mapped read-only and private, as
/// `wl_seat` version 7 requires) into a NUL-terminated string, and closes `fd`.
func readKeymapText(fd: Int32, size: UInt32) throws(WaylandError) -> [CChar] {
    defer { closeDescriptor(fd) }
    guard size > 0, let p = mapDescriptor(fd, size: Int(size), shared: false) else {
        throw .keymap("cannot map the keymap (\(size) bytes): \(String(cString: strerror(errno)))")
    }
    defer { unmap(p, size: Int(size)) }
    var text = [CChar](repeating: 0, count: Int(size) + 1)
    text.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: p, count: Int(size))) }
    text[Int(size)] = 0
    return text
}

/// An anonymous in-memory file holding `text` (NUL-terminated, the NUL included in `size`), for a
/// keymap request. The caller closes it once the request is sent.
///
/// The corresponding C function is `write`.
func keymapDescriptor(_ text: [CChar]) throws(WaylandError) -> (fd: Int32, size: UInt32) {
    let fd = anonymousFile("touchbridge-keymap")
    guard fd >= 0 else { throw .keymap("memfd_create failed: \(String(cString: strerror(errno)))") }
    var written = 0
    let failure: Int32? = text.withUnsafeBytes { bytes in
        while written < bytes.count {
            let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 { if errno == EINTR { continue }; return errno }
            written += n
        }
        return nil
    }
    if let failure {
        closeDescriptor(fd)
        throw .keymap("cannot write the typing keymap: \(String(cString: strerror(failure)))")
    }
    return (fd, UInt32(text.count))
}

/// Maps `size` bytes of `fd`: read-only and private (`shared` false), or readable, writable and shared
/// with the compositor (a `wl_shm` pool's memory). nil when it cannot (errno says why).
///
/// The corresponding C function is `mmap`.
func mapDescriptor(_ fd: Int32, size: Int, shared: Bool) -> UnsafeMutableRawPointer? {
    let p = mmap(nil, size, shared ? PROT_READ | PROT_WRITE : PROT_READ, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0)
    return p == MAP_FAILED ? nil : p
}

/// Unmaps what `mapDescriptor` mapped.
///
/// The corresponding C function is `munmap`.
func unmap(_ p: UnsafeMutableRawPointer, size: Int) { munmap(p, size) }

/// An anonymous in-memory file, closed on exec; -1 when it cannot be made (errno says why).
///
/// The corresponding C function is the shim's `tb_memfd_create`.
func anonymousFile(_ name: String) -> Int32 { tb_memfd_create(name) }

/// Milliseconds on the monotonic clock (the virtual keyboard's key times: one clock, any base).
///
/// The corresponding C function is `clock_gettime`.
func monotonicMilliseconds() -> UInt32 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt32(truncatingIfNeeded: Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000)
}

/// Sleeps `milliseconds` (sway's seats before their devices go: the one wait at shutdown).
///
/// The corresponding C function is `usleep`.
func pause(milliseconds: UInt32) {
    _ = usleep(milliseconds * 1000)
}

/// Closes a descriptor the compositor sent.
///
/// The corresponding C function is `close`.
func closeDescriptor(_ fd: Int32) { _ = close(fd) }
