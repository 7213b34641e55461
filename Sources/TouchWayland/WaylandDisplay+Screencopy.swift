import CWayland
import CWaylandProtocols
import Glibc

// The live view's C calls on a Wayland connection: wlr-screencopy (`zwlr_screencopy_manager_v1`, what
// wlroots compositors such as sway offer), the shared memory its frames are copied into (`wl_shm`, a
// memfd), and a bounded wait for the compositor's answer. One Swift function per C function, each naming it.

extension WaylandDisplay {
    /// Binds the screen copy manager at version 3 (the compositor offers at least that: checked by the caller).
    ///
    /// The corresponding C function is the shim's `tb_zwlr_screencopy_manager_v1_interface`.
    func bindScreencopyManager(_ name: UInt32) throws(WaylandError) -> WaylandProxy {
        WaylandProxy(pointer: try bind(name, tb_zwlr_screencopy_manager_v1_interface(), 3))
    }

    /// Gives up the screen copy manager.
    ///
    /// The corresponding C function is `zwlr_screencopy_manager_v1_destroy`.
    func destroyScreencopyManager(_ m: WaylandProxy) { zwlr_screencopy_manager_v1_destroy(m.pointer) }

    /// Binds `wl_shm` (version 1: its format events are not listened to; a frame says its format).
    ///
    /// The corresponding C function is the shim's `tb_wl_shm_interface`.
    func bindShm(_ name: UInt32) throws(WaylandError) -> WaylandProxy {
        WaylandProxy(pointer: try bind(name, tb_wl_shm_interface(), 1))
    }

    /// Gives up `wl_shm` (version 1 has no release request: only this side's proxy goes).
    ///
    /// The corresponding C function is `wl_shm_destroy`.
    func destroyShm(_ shm: WaylandProxy) { wl_shm_destroy(shm.pointer) }

    /// A frame of `output`'s whole picture, the cursor drawn in, listened to: its `buffer` events say
    /// what it can be copied into, then `buffer_done`.
    ///
    /// The corresponding C functions are `zwlr_screencopy_manager_v1_capture_output` and
    /// `zwlr_screencopy_frame_v1_add_listener`.
    func captureOutput(manager: WaylandProxy, output: WaylandProxy) throws(WaylandError) -> WaylandProxy {
        guard let f = zwlr_screencopy_manager_v1_capture_output(manager.pointer, 1, output.pointer) else {
            throw .requestFailed("zwlr_screencopy_manager_v1_capture_output")
        }
        guard zwlr_screencopy_frame_v1_add_listener(f, frameListener, data) == 0 else {
            zwlr_screencopy_frame_v1_destroy(f)
            throw .requestFailed("zwlr_screencopy_frame_v1_add_listener")
        }
        return WaylandProxy(pointer: f)
    }

    /// Asks for `frame` to be copied into `buffer`: now, or once part of the output changed since this
    /// client's last copy of it (`afterDamage`; the compositor keeps the changes per client).
    ///
    /// The corresponding C functions are `zwlr_screencopy_frame_v1_copy` and
    /// `zwlr_screencopy_frame_v1_copy_with_damage`.
    func copy(_ frame: WaylandProxy, into buffer: WaylandProxy, afterDamage: Bool) {
        if afterDamage {
            zwlr_screencopy_frame_v1_copy_with_damage(frame.pointer, buffer.pointer)
        } else {
            zwlr_screencopy_frame_v1_copy(frame.pointer, buffer.pointer)
        }
    }

    /// Gives up a frame (ready, failed, or no longer wanted).
    ///
    /// The corresponding C function is `zwlr_screencopy_frame_v1_destroy`.
    func destroyFrame(_ frame: WaylandProxy) { zwlr_screencopy_frame_v1_destroy(frame.pointer) }

    /// A `wl_buffer` of `height` rows of `stride` bytes in `format` over all of `fd` (a memfd of
    /// `stride` × `height` bytes): a pool made for it and given up at once (the buffer keeps the memory).
    ///
    /// The corresponding C functions are `wl_shm_create_pool`, `wl_shm_pool_create_buffer` and
    /// `wl_shm_pool_destroy`.
    func makeBuffer(shm: WaylandProxy, fd: Int32, width: Int32, height: Int32, stride: Int32, format: UInt32) throws(WaylandError) -> WaylandProxy {
        guard let pool = wl_shm_create_pool(shm.pointer, fd, stride * height) else { throw .requestFailed("wl_shm_create_pool") }
        defer { wl_shm_pool_destroy(pool) }
        guard let b = wl_shm_pool_create_buffer(pool, 0, width, height, stride, format) else {
            throw .requestFailed("wl_shm_pool_create_buffer")
        }
        return WaylandProxy(pointer: b)
    }

    /// Gives up a buffer.
    ///
    /// The corresponding C function is `wl_buffer_destroy`.
    func destroyBuffer(_ buffer: WaylandProxy) { wl_buffer_destroy(buffer.pointer) }

    /// Sends the requests made and waits at most `milliseconds` for the compositor to send something,
    /// then reads and dispatches it; false when nothing came in time.
    ///
    /// The corresponding C function is `poll`.
    func awaitEvents(milliseconds: Int32) throws(WaylandError) -> Bool {
        try sendRequests()
        var p = pollfd(fd: try fileDescriptor(), events: Int16(POLLIN), revents: 0)
        let n = poll(&p, 1, milliseconds)
        guard n > 0 else { return false }
        try readEvents()
        return true
    }

    /// The frames' listener: C callbacks that hand their arguments on.
    static func fillFrameListener(_ listener: UnsafeMutablePointer<zwlr_screencopy_frame_v1_listener>) {
        listener.initialize(to: zwlr_screencopy_frame_v1_listener(
            buffer: { data, f, format, width, height, stride in
                if let f = listenerProxy(f) { listenerReceiver(data)?.frameBuffer(f, format: format, width: width, height: height, stride: stride) }
            },
            flags: { data, f, flags in if let f = listenerProxy(f) { listenerReceiver(data)?.frameFlags(f, flags: flags) } },
            ready: { data, f, _, _, _ in if let f = listenerProxy(f) { listenerReceiver(data)?.frameReady(f) } },
            failed: { data, f in if let f = listenerProxy(f) { listenerReceiver(data)?.frameFailed(f) } },
            damage: { _, _, _, _, _, _ in },
            linux_dmabuf: { _, _, _, _, _ in },
            buffer_done: { data, f in if let f = listenerProxy(f) { listenerReceiver(data)?.frameBufferDone(f) } }))
    }
}

/// Sets the length of `fd` (a memfd) to `size` bytes; false when it cannot (errno says why).
///
/// The corresponding C function is `ftruncate`.
func resizeFile(_ fd: Int32, to size: Int) -> Bool { ftruncate(fd, off_t(size)) == 0 }
