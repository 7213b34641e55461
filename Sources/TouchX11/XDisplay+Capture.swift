import CCapture
import CX11
import TouchCore

#if canImport(Glibc)
import Glibc
#endif

// The live view's X requests: the screen read through shared memory (MIT-SHM), what changed (XDamage),
// the cursor (XFixes). Made on the capture's own connection (`ScreenCapture`), never the desktop's.

/// An image of part of the screen in a System V shared memory segment the X server writes into
/// (`XShmGetImage`): 32 bits a pixel on a 24- or 32-bit TrueColor screen. Made and destroyed by its
/// display (`makeSharedImage`, `destroySharedImage`); the segment is marked for removal as soon as both
/// sides are attached, so it goes when the last one detaches, whatever ends the process.
public final class XSharedImage {
    fileprivate let image: UnsafeMutablePointer<XImage>
    fileprivate let info: UnsafeMutablePointer<XShmSegmentInfo>
    public let width: Int32
    public let height: Int32
    fileprivate(set) var destroyed = false

    fileprivate init(image: UnsafeMutablePointer<XImage>, info: UnsafeMutablePointer<XShmSegmentInfo>) {
        self.image = image
        self.info = info
        width = image.pointee.width
        height = image.pointee.height
    }

    deinit {
        assert(destroyed, "shared image was not destroyed: call destroySharedImage on every exit path")
        info.deallocate()
    }

    /// The pixels (`bytesPerLine` a row).
    public var pixels: UnsafeMutableRawPointer { UnsafeMutableRawPointer(info.pointee.shmaddr) }
    public var bytesPerLine: Int32 { image.pointee.bytes_per_line }
    /// The segment's id (`ipcs -m` lists it while attached).
    public var segment: Int32 { info.pointee.shmid }
}

/// An XDamage object on a drawable (`Damage`).
public struct DamageID: Hashable, Sendable {
    public var rawValue: UInt
}

/// The cursor as XFixes has it: premultiplied ARGB, 32 bits a pixel, and where it is on the screen.
public struct CursorImage: Sendable {
    /// The top-left pixel's position on the screen (the pointer minus the hot spot).
    public var x: Int32
    public var y: Int32
    public var width: Int32
    public var height: Int32
    /// `width × height` pixels, row after row.
    public var pixels: [UInt32]
}

extension XDisplay {
    /// Loads the live view's libraries, libXdamage.so.1 and libturbojpeg.so.0, once: nil when they are
    /// there, else why not (the library and the package to install). Until they are loaded no damage or
    /// JPEG function below may be called (`ScreenCapture.open` loads them first).
    ///
    /// The corresponding C function is `tb_capture_load`.
    public static func loadCaptureLibraries() -> String? {
        tb_capture_load().map { String(cString: $0) }
    }

    /// Whether the server has MIT-SHM with shared images (and the X server is on this machine: a remote
    /// one answers, and `XShmAttach` then fails).
    ///
    /// The corresponding C function is `XShmQueryExtension`.
    public func hasSharedMemory() throws(X11Error) -> Bool {
        XShmQueryExtension(try display()) != 0
    }

    /// A shared image of `width`×`height` pixels in the default visual and depth, attached on both sides.
    ///
    /// The corresponding C functions are `XShmCreateImage`, `XShmAttach`, and libc's `shmget`, `shmat` and
    /// `shmctl` (`IPC_RMID` once the server attached: the segment goes when both detach); on failure
    /// through `destroySharedImage`.
    public func makeSharedImage(width: Int32, height: Int32) throws(X11Error) -> XSharedImage {
        let dpy = try display()
        let visual = try defaultVisual()
        let info = UnsafeMutablePointer<XShmSegmentInfo>.allocate(capacity: 1)
        info.initialize(to: XShmSegmentInfo(shmseg: 0, shmid: -1, shmaddr: nil, readOnly: 0))
        guard let image = XShmCreateImage(dpy, visual.pointer, UInt32(visual.depth), ZPixmap, nil, info, UInt32(width), UInt32(height)) else {
            info.deallocate()
            throw .requestFailed("XShmCreateImage")
        }
        let shared = XSharedImage(image: image, info: info)
        guard image.pointee.bits_per_pixel == 32 else {
            destroySharedImage(shared)
            throw .requestFailed("XShmCreateImage: \(image.pointee.bits_per_pixel) bits a pixel (the view needs 32)")
        }
        let bytes = Int(image.pointee.bytes_per_line) * Int(height)
        info.pointee.shmid = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0o600)
        guard info.pointee.shmid >= 0 else {
            destroySharedImage(shared)
            throw .requestFailed("shmget of \(bytes) bytes: \(String(cString: strerror(errno)))")
        }
        let address = shmat(info.pointee.shmid, nil, 0)
        guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else {
            destroySharedImage(shared)
            throw .requestFailed("shmat: \(String(cString: strerror(errno)))")
        }
        info.pointee.shmaddr = address.assumingMemoryBound(to: CChar.self)
        image.pointee.data = info.pointee.shmaddr
        guard XShmAttach(dpy, info) != 0 else {
            destroySharedImage(shared)
            throw .requestFailed("XShmAttach")
        }
        // The server attaches when it processes the request: after that the segment may be marked.
        try sync()
        _ = shmctl(info.pointee.shmid, IPC_RMID, nil)
        return shared
    }

    /// Reads the screen's pixels at (`x`, `y`) of the root window into `image`, its whole size.
    ///
    /// The corresponding C function is `XShmGetImage`.
    public func getImage(_ image: XSharedImage, x: Int32, y: Int32) throws(X11Error) {
        guard !image.destroyed else { throw .requestFailed("XShmGetImage: the image was destroyed") }
        let root = try rootWindow().rawValue
        guard XShmGetImage(try display(), root, image.image, x, y, UInt(bitPattern: -1)) != 0 else {
            throw .requestFailed("XShmGetImage")
        }
    }

    /// Detaches and destroys `image` and its segment (the segment was already marked for removal: it
    /// goes now). Safe to call twice; works on a lost connection too (this side is freed).
    ///
    /// The corresponding C functions are `XShmDetach`, `XDestroyImage` (`tb_destroy_image`) and libc's
    /// `shmdt` and `shmctl` (`IPC_RMID`, for a segment made but never attached by the server).
    public func destroySharedImage(_ image: XSharedImage) {
        guard !image.destroyed else { return }
        image.destroyed = true
        let info = image.info
        if let dpy = try? display(), info.pointee.shmaddr != nil, !isLost {
            XShmDetach(dpy, info)
            try? sync()
        }
        // The pixels are the segment's, not Xlib's to free.
        image.image.pointee.data = nil
        _ = tb_destroy_image(image.image)
        if let address = info.pointee.shmaddr { _ = shmdt(address) }
        if info.pointee.shmid >= 0 { _ = shmctl(info.pointee.shmid, IPC_RMID, nil) }
        info.pointee.shmaddr = nil
        info.pointee.shmid = -1
    }

    /// Asks for XDamage's events (`damageEventBase`): false when the server has no XDamage.
    ///
    /// The corresponding C function is `tb_XDamageQueryExtension` (XDamageQueryExtension, loaded at run time: `loadCaptureLibraries`).
    public func selectDamageInput() throws(X11Error) -> Bool {
        var event: Int32 = 0, error: Int32 = 0
        guard tb_XDamageQueryExtension(try display(), &event, &error) != 0 else { return false }
        damageEventBase = event
        return true
    }

    /// A damage object on the root window that reports when it goes from nothing changed to something
    /// changed (`XDamageReportNonEmpty`): one event, until `subtractDamage` empties it.
    ///
    /// The corresponding C function is `tb_XDamageCreate` (XDamageCreate, loaded at run time: `loadCaptureLibraries`).
    public func createDamage() throws(X11Error) -> DamageID {
        let root = try rootWindow().rawValue
        return DamageID(rawValue: tb_XDamageCreate(try display(), root, Int32(XDamageReportNonEmpty)))
    }

    /// Empties `damage`: the next change reports again.
    ///
    /// The corresponding C function is `tb_XDamageSubtract` (XDamageSubtract, loaded at run time: `loadCaptureLibraries`).
    public func subtractDamage(_ damage: DamageID) throws(X11Error) {
        tb_XDamageSubtract(try display(), damage.rawValue, 0, 0)
    }

    /// Destroys `damage` (nothing left behind on the server).
    ///
    /// The corresponding C function is `tb_XDamageDestroy` (XDamageDestroy, loaded at run time: `loadCaptureLibraries`).
    public func destroyDamage(_ damage: DamageID) throws(X11Error) {
        tb_XDamageDestroy(try display(), damage.rawValue)
    }

    /// Whether the server has XFixes (the cursor's image).
    ///
    /// The corresponding C function is `XFixesQueryExtension`.
    public func hasCursorImages() throws(X11Error) -> Bool {
        var event: Int32 = 0, error: Int32 = 0
        return XFixesQueryExtension(try display(), &event, &error) != 0
    }

    /// The cursor's image and place now; nil when the server gives none.
    ///
    /// The corresponding C function is `XFixesGetCursorImage` (freed with `xFree`).
    public func cursorImage() throws(X11Error) -> CursorImage? {
        guard let image = XFixesGetCursorImage(try display()) else { return nil }
        defer { xFree(UnsafeMutableRawPointer(image)) }
        let c = image.pointee
        let count = Int(c.width) * Int(c.height)
        guard count > 0, count <= 512 * 512, let source = c.pixels else { return nil }
        // XFixes gives each pixel as an unsigned long (64 bits here), its low 32 bits the ARGB.
        var pixels = [UInt32](repeating: 0, count: count)
        for i in 0..<count { pixels[i] = UInt32(truncatingIfNeeded: source[i]) }
        return CursorImage(x: Int32(c.x) - Int32(c.xhot), y: Int32(c.y) - Int32(c.yhot),
                           width: Int32(c.width), height: Int32(c.height), pixels: pixels)
    }
}

/// A JPEG encoder (libjpeg-turbo's TurboJPEG API, Debian 12's 2.1.5): 32-bit BGRX pixels in, a JPEG out,
/// into a buffer kept from frame to frame. Not thread-safe; `close()` frees it.
///
/// Its C calls are here, with the X requests of the view, as the one place that calls C for it.
public final class JPEGEncoder {
    private var handle: UnsafeMutableRawPointer?
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var capacity: UInt = 0
    /// 1...100.
    public let quality: Int32

    /// The corresponding C function is `tb_tjInitCompress` (tjInitCompress, loaded at run time: `loadCaptureLibraries`).
    public init(quality: Int32 = 70) throws(X11Error) {
        guard let handle = tb_tjInitCompress() else { throw .requestFailed("tjInitCompress") }
        self.handle = handle
        self.quality = quality
    }

    deinit {
        assert(handle == nil, "JPEGEncoder was not closed")
    }

    /// Encodes `width`×`height` BGRX pixels (`stride` bytes a row; 4:2:0, the fast DCT) and hands the
    /// JPEG's bytes to `body` (valid only during the call).
    ///
    /// The corresponding C functions are `tb_tjCompress2` and, when it fails, `tb_tjGetErrorStr2` (loaded at run time).
    public func encode<R>(_ pixels: UnsafeRawPointer, width: Int32, height: Int32, stride: Int32,
                          _ body: (UnsafeRawBufferPointer) -> R) throws(X11Error) -> R {
        guard let handle else { throw .requestFailed("tjCompress2: the encoder was closed") }
        var size = capacity
        let rc = tb_tjCompress2(handle, pixels.assumingMemoryBound(to: UInt8.self), width, stride, height, Int32(TJPF_BGRX.rawValue),
                             &buffer, &size, Int32(TJSAMP_420.rawValue), quality, TJFLAG_FASTDCT)
        guard rc == 0, let buffer else {
            throw .requestFailed("tjCompress2: \(String(cString: tb_tjGetErrorStr2(handle)))")
        }
        // TurboJPEG grew the buffer when it had to: what it holds now is the next frame's room.
        capacity = max(capacity, size)
        return body(UnsafeRawBufferPointer(start: buffer, count: Int(size)))
    }

    /// Frees the encoder and its buffer. Safe to call twice.
    ///
    /// The corresponding C functions are `tb_tjFree` and `tb_tjDestroy` (loaded at run time).
    public func close() {
        if let buffer { tb_tjFree(buffer) }
        buffer = nil
        if let handle { _ = tb_tjDestroy(handle) }
        handle = nil
    }
}
