import TouchCore
import TouchOutput

/// The live view's screen copies under a wlroots compositor (sway), on the desktop's own connection:
/// `zwlr_screencopy_manager_v1` copies an output's picture, the cursor drawn in, into shared memory of
/// this process (`wl_shm`, a memfd), at most one copy at a time.
///
/// - The first picture of an output is copied at once (`withPicture` waits for it a quarter of a second;
///   later, it is not there yet, and its coming captures again).
/// - While watched, the next copy is asked for once the last picture was used, "after damage": the
///   compositor answers only when part of the output changed since this client's last copy, so a still
///   screen costs no copy, no event and no wake-up. Its answer is `WaylandChanges.view`.
/// - Two buffers: the one shown (read by `withPicture`) and the one the compositor copies into.
/// - Stopping (`watchPixels(false)`, the page gone, `closeConnection`) gives up the frame asked for and
///   frees both buffers.
struct ScreenCopies {
    /// A frame asked for and not yet ready or failed.
    struct Frame {
        var proxy: WaylandProxy
        var output: WaylandProxy
        var afterDamage: Bool
        /// Asked at once while the output settles after turning (`ScreenCopies.settlingUntil`): its
        /// picture is news, as a copy after damage is.
        var settling = false
        /// The shared-memory buffer the compositor offered (`buffer` event) in a format taken here.
        var offer: (format: UInt32, width: Int32, height: Int32, stride: Int32)?
        var yInverted = false
        /// The index in `buffers` it is copied into, once asked.
        var buffer: Int?
    }

    var manager: (global: UInt32, proxy: WaylandProxy)?
    /// The version the compositor offers its manager at (3 and later are used).
    var managerVersion: UInt32 = 0
    var shm: (global: UInt32, proxy: WaylandProxy)?
    var watching = false
    var frame: Frame?
    var buffers: [CopyBuffer] = []
    /// The picture last copied: its buffer, its output, whether its rows go bottom to top.
    var shown: (buffer: Int, output: WaylandProxy, yInverted: Bool)?
    /// Until when (monotonic milliseconds) the output last turned or changed mode is settling: the next
    /// copies are asked for at once rather than after damage. Under sway 1.7 in the VM, the damage that
    /// follows a turn (an X window that Xwayland moves for the new screen size: the viewing mark) did not
    /// bring the copy waiting for it, in 3 turns of 4, and the picture stayed as it was until the next
    /// change; a copy asked for at once is of the output as it is.
    var settlingUntil: UInt32?
    /// How long an output settles after it turned or changed mode, in milliseconds.
    static let settling: UInt32 = 3000

    /// Whether an output is settling now (`settlingUntil` not passed: the clock wraps every 49 days).
    mutating func settlingNow() -> Bool {
        guard let until = settlingUntil else { return false }
        if Int32(bitPattern: until &- monotonicMilliseconds()) > 0 { return true }
        settlingUntil = nil
        return false
    }
    /// The output whose first picture was not there within `firstPictureWait` and is still asked for
    /// (how long it may stay late is the view's to say: `ViewMachine.pictureLimit`).
    var late: WaylandProxy?
    /// Copies that failed in a row (a third while watching stops asking: the view says so).
    var failures = 0
    var lastFailure: String?

    /// `WL_SHM_FORMAT_ARGB8888` and `WL_SHM_FORMAT_XRGB8888`: 32-bit pixels as cairo's RGB24 reads them.
    static let formats: Set<UInt32> = [0, 1]
    /// How long `withPicture` waits for an output's first picture, in milliseconds (the bridge's loop
    /// waits with it): later, the picture is not there yet (`OutputError.notYet`), still asked for; its
    /// coming, or the view's retry (`ViewMachine.notReadyRetry`), captures again; the view gives it up
    /// (`ViewMachine.pictureLimit`), or a third failed copy does.
    static let firstPictureWait: Int32 = 250
}

/// A `wl_buffer` over a memfd mapped here: what one screen copy goes into.
final class CopyBuffer {
    let fd: Int32
    let pixels: UnsafeMutableRawPointer
    let width: Int32, height: Int32, stride: Int32, format: UInt32
    let proxy: WaylandProxy
    var size: Int { Int(stride) * Int(height) }

    init(fd: Int32, pixels: UnsafeMutableRawPointer, width: Int32, height: Int32, stride: Int32, format: UInt32, proxy: WaylandProxy) {
        self.fd = fd
        self.pixels = pixels
        self.width = width
        self.height = height
        self.stride = stride
        self.format = format
        self.proxy = proxy
    }

    func fits(_ offer: (format: UInt32, width: Int32, height: Int32, stride: Int32)) -> Bool {
        offer.format == format && offer.width == width && offer.height == height && offer.stride == stride
    }
}

extension WaylandDesktop {
    /// Why the compositor gives the live view no picture; nil when it does (wlr-screencopy version 3
    /// and `wl_shm`: sway and other wlroots compositors; GNOME and KDE offer neither).
    public var viewProblem: String? {
        if cast != nil { return nil }
        if copies.manager == nil {
            return copies.managerVersion == 0
                ? "the compositor offers no screen copy (zwlr_screencopy_manager_v1)"
                : "the compositor's screen copy is version \(copies.managerVersion), touchbridge needs 3"
        }
        return copies.shm == nil ? "the compositor offers no shared memory (wl_shm)" : nil
    }

    /// Gives the desktop the live view over its screen copies (made by the caller, who has the encoder);
    /// the desktop closes it with itself.
    public func attachView(_ view: any ClosableViewCapture) {
        pictureView?.close()
        pictureView = view
    }

    /// Gives the desktop the stream of the monitor a portal session shares (GNOME, KDE: no screen
    /// copy of their own), which the view then reads; the desktop watches and closes it.
    public func attachCast(_ stream: any PixelStream) {
        cast?.close()
        cast = stream
    }

    func copyGlobal(name: UInt32, interface: String, version: UInt32) {
        if interface == "wl_shm" {
            guard copies.shm == nil, let p = try? display.bindShm(name) else { return }
            copies.shm = (name, p)
        } else {
            copies.managerVersion = version
            guard copies.manager == nil, version >= 3, let p = try? display.bindScreencopyManager(name) else { return }
            copies.manager = (name, p)
        }
    }

    func copyGlobalRemoved(name: UInt32) {
        if copies.manager?.global == name || copies.shm?.global == name {
            releaseCopies()
            if let m = copies.manager, m.global == name { display.destroyScreencopyManager(m.proxy); copies.manager = nil }
            if let s = copies.shm, s.global == name { display.destroyShm(s.proxy); copies.shm = nil }
            pending.insert(.view)
        }
    }

    /// An output went: its copies with it (the next picture is of the output that holds the view's
    /// rectangle then).
    func outputGone(_ output: WaylandProxy) {
        if let f = copies.frame, f.output == output {
            display.destroyFrame(f.proxy)
            copies.frame = nil
            pending.insert(.view)
        }
        if copies.shown?.output == output { copies.shown = nil }
        if copies.late == output { copies.late = nil }
    }

    /// An output turned or changed mode: a picture copied before is of its old shape, and so may be the
    /// copy under way. Both are dropped: the view's next picture is copied afresh, after the change.
    func outputReshaped(_ output: WaylandProxy) {
        if let f = copies.frame, f.output == output {
            display.destroyFrame(f.proxy)
            copies.frame = nil
        }
        if copies.shown?.output == output { copies.shown = nil }
        if copies.late == output { copies.late = nil }
        // A manager bound afresh: the compositor keeps a client's damage per manager object, and under
        // sway 1.7 the old one's brought no copy after damage once the output had turned.
        if let m = copies.manager, let fresh = try? display.bindScreencopyManager(m.global) {
            display.destroyScreencopyManager(m.proxy)
            copies.manager = (m.global, fresh)
        }
        copies.settlingUntil = monotonicMilliseconds() &+ ScreenCopies.settling
        pending.insert(.view)
    }

    /// Gives up the frame asked for and frees the buffers.
    func releaseCopies() {
        guard let display else { return }
        if let f = copies.frame { display.destroyFrame(f.proxy) }
        copies.frame = nil
        copies.shown = nil
        copies.late = nil
        for b in copies.buffers { free(b) }
        copies.buffers = []
        try? display.sendRequests()
    }

    private func free(_ b: CopyBuffer) {
        display.destroyBuffer(b.proxy)
        unmap(b.pixels, size: b.size)
        closeDescriptor(b.fd)
    }

    /// Asks for a copy of `output`: now, or once it changed (`afterDamage`).
    private func askCopy(of output: WaylandProxy, afterDamage: Bool, settling: Bool = false) throws(WaylandError) {
        guard let manager = copies.manager?.proxy, copies.shm != nil else { throw .requestFailed("screen copy: \(viewProblem ?? "gone")") }
        if let f = copies.frame { display.destroyFrame(f.proxy) }
        copies.frame = nil
        let proxy = try display.captureOutput(manager: manager, output: output)
        copies.frame = ScreenCopies.Frame(proxy: proxy, output: output, afterDamage: afterDamage, settling: settling)
        try display.sendRequests()
    }

    /// A buffer for `offer` that is not the one shown: the one there is, or a new one.
    private func buffer(for offer: (format: UInt32, width: Int32, height: Int32, stride: Int32)) throws(WaylandError) -> Int {
        let index = copies.shown?.buffer == 0 ? 1 : 0
        if index < copies.buffers.count, copies.buffers[index].fits(offer) { return index }
        guard let shm = copies.shm?.proxy else { throw .requestFailed("wl_shm gone") }
        let size = Int(offer.stride) * Int(offer.height)
        guard offer.width > 0, offer.height > 0, offer.stride >= offer.width * 4, size <= 256 << 20 else {
            throw .requestFailed("screen copy: a buffer of \(offer.width)x\(offer.height), stride \(offer.stride), is not taken")
        }
        let fd = anonymousFile("touchbridge-view")
        guard fd >= 0 else { throw .requestFailed("memfd_create for the view") }
        guard resizeFile(fd, to: size), let pixels = mapDescriptor(fd, size: size, shared: true) else {
            closeDescriptor(fd)
            throw .requestFailed("cannot map \(size) bytes for the view")
        }
        let proxy: WaylandProxy
        do throws(WaylandError) {
            proxy = try display.makeBuffer(shm: shm, fd: fd, width: offer.width, height: offer.height, stride: offer.stride, format: offer.format)
        } catch {
            unmap(pixels, size: size)
            closeDescriptor(fd)
            throw error
        }
        let made = CopyBuffer(fd: fd, pixels: pixels, width: offer.width, height: offer.height, stride: offer.stride, format: offer.format, proxy: proxy)
        if index < copies.buffers.count {
            free(copies.buffers[index])
            copies.buffers[index] = made
        } else {
            copies.buffers.append(made)
        }
        return index
    }

    // MARK: The frame's events (from `WaylandEvents`)

    func frameBuffer(_ frame: WaylandProxy, format: UInt32, width: UInt32, height: UInt32, stride: UInt32) {
        guard copies.frame?.proxy == frame, copies.frame?.offer == nil, ScreenCopies.formats.contains(format),
              width <= 16384, height <= 16384, stride <= 65536 else { return }
        copies.frame?.offer = (format, Int32(width), Int32(height), Int32(stride))
    }

    func frameFlags(_ frame: WaylandProxy, flags: UInt32) {
        guard copies.frame?.proxy == frame else { return }
        copies.frame?.yInverted = flags & 1 != 0
    }

    func frameBufferDone(_ frame: WaylandProxy) {
        guard let f = copies.frame, f.proxy == frame else { return }
        guard let offer = f.offer else {
            return copyFailed("the compositor offers no shared-memory buffer in XRGB8888 or ARGB8888")
        }
        do throws(WaylandError) {
            let index = try buffer(for: offer)
            copies.frame?.buffer = index
            display.copy(frame, into: copies.buffers[index].proxy, afterDamage: f.afterDamage)
            try display.sendRequests()
        } catch {
            copyFailed("\(error)")
        }
    }

    func frameReady(_ frame: WaylandProxy) {
        guard let f = copies.frame, f.proxy == frame, let index = f.buffer else { return }
        display.destroyFrame(frame)
        copies.frame = nil
        copies.shown = (index, f.output, f.yInverted)
        copies.failures = 0
        copies.late = nil
        if f.afterDamage || f.settling { pending.insert(.view) }
    }

    func frameFailed(_ frame: WaylandProxy) {
        guard copies.frame?.proxy == frame else { return }
        copyFailed("the compositor could not copy the output (it changed meanwhile, or refused)")
    }

    /// The frame asked for failed: given up. While watching, asked again after damage (an output that
    /// changed mode fails the copy under way), up to a third failure in a row, which the view is told of.
    private func copyFailed(_ why: String) {
        guard let f = copies.frame else { return }
        display.destroyFrame(f.proxy)
        copies.frame = nil
        copies.failures += 1
        copies.lastFailure = why
        if copies.watching, f.afterDamage, copies.failures < 3, (try? askCopy(of: f.output, afterDamage: true)) != nil { return }
        pending.insert(.view)
    }
}

extension WaylandDesktop: ScreenPixels {
    public func watchPixels(_ on: Bool) throws(OutputError) {
        if let cast { return try cast.watchPixels(on) }
        copies.watching = on
        if !on { releaseCopies() }
    }

    public var pixelsHolding: String {
        if let cast { return cast.pixelsHolding }
        let parts = copies.buffers.map { "buffer \($0.width)x\($0.height) (\($0.size) bytes)" } + (copies.frame == nil ? [] : ["a copy asked"])
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
    }

    public func withPicture(of rect: PixelRect, _ body: (ScreenPicture) throws(OutputError) -> Void) throws(OutputError) {
        func failure(_ message: String) -> OutputError { OutputError(origin: "Wayland", message: "the view: \(message)", kind: 6) }
        guard display != nil, !lost else { throw failure("the connection is closed") }
        if let cast {
            // The screen's rectangles start at 0,0; the portal places the shared monitor in the
            // compositor's own layout.
            let rects = outputs.map(\.logical).filter { !$0.isEmpty }
            let origin = (x: rects.map(\.x).min() ?? 0, y: rects.map(\.y).min() ?? 0)
            cast.follow(monitors: rects)
            return try cast.withPicture(of: PixelRect(x: rect.x + origin.x, y: rect.y + origin.y, width: rect.width, height: rect.height), body)
        }
        guard let (output, description, logical) = outputShowing(rect), !logical.isEmpty else {
            throw failure("no output shows \(rect)")
        }
        var lateError: OutputError?
        do throws(WaylandError) {
            if copies.shown?.output != output {
                if copies.late == output {
                    // Its first picture is late: given up once its copy failed thrice, asked again if it
                    // failed, else still coming (no second wait).
                    if copies.failures >= 3 {
                        copies.late = nil
                        if let f = copies.frame { display.destroyFrame(f.proxy) }
                        copies.frame = nil
                        throw WaylandError.requestFailed(copies.lastFailure ?? "the copies of \(description.name) failed \(copies.failures) times")
                    }
                    if copies.frame == nil { try askCopy(of: output, afterDamage: false, settling: true) }
                } else {
                    // The output's first picture: copied now, waited for a while.
                    copies.failures = 0
                    copies.lastFailure = nil
                    try askCopy(of: output, afterDamage: false)
                    var waited: Int32 = 0
                    while copies.frame != nil, waited < ScreenCopies.firstPictureWait {
                        let start = monotonicMilliseconds()
                        _ = try display.awaitEvents(milliseconds: ScreenCopies.firstPictureWait - waited)
                        waited += Int32(truncatingIfNeeded: monotonicMilliseconds() &- start)
                    }
                    if copies.frame != nil {
                        // Late (a compositor busy, an output that just turned): still asked for, and its
                        // coming is news that captures again.
                        copies.frame?.settling = true
                        copies.late = output
                        var notYet = failure("no picture of \(description.name) within \(ScreenCopies.firstPictureWait) ms yet")
                        notYet.notYet = true
                        lateError = notYet
                    }
                }
            }
        } catch {
            if case .connectionLost = error { lost = true }
            throw failure("\(error)")
        }
        if copies.late == output {
            if let lateError { throw lateError }
            var notYet = failure("no picture of \(description.name) yet")
            notYet.notYet = true
            throw notYet
        }
        guard let shown = copies.shown, shown.output == output, shown.buffer < copies.buffers.count else {
            throw failure(copies.lastFailure ?? "no picture of \(description.name)")
        }
        let b = copies.buffers[shown.buffer]
        // The copy is of the output's framebuffer, unturned: the picture the output shows is it turned
        // by the output's transform (a copy of another shape than the output's was dropped when it
        // turned: `outputReshaped`). The rectangle in the shown picture's pixels (a scaled output's
        // picture has more than its logical size).
        let turned = description.transform.swapsAxes
        let shownWidth = turned ? b.height : b.width, shownHeight = turned ? b.width : b.height
        let sx = Double(shownWidth) / Double(logical.width), sy = Double(shownHeight) / Double(logical.height)
        let region = (x: Double(rect.x - logical.x) * sx, y: Double(rect.y - logical.y) * sy,
                      width: Double(rect.width) * sx, height: Double(rect.height) * sy)
        try body(ScreenPicture(pixels: b.pixels, width: b.width, height: b.height, stride: b.stride, region: region,
                               yInverted: shown.yInverted, transform: description.transform.rawValue))
        // The next copy, once the output changes (at once while it settles after a turn).
        if copies.watching, copies.frame == nil {
            let settling = copies.settlingNow()
            do throws(WaylandError) { try askCopy(of: output, afterDamage: !settling, settling: settling) } catch { throw failure("\(error)") }
        }
    }
}
