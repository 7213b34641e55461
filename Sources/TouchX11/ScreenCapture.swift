import TouchCore
import TouchOutput

/// The live view on X11: its own connection to the X server (so that a capture's requests and replies
/// never sit between the input's requests on the desktop's connection, and its damage events are read
/// apart), watched on the Bridge's loop like the desktop's.
///
/// While watched (`watch(true)`): an XDamage object on the root window, emptied at each notify, so the
/// server sends one event per burst of changes and nothing while the screen is still. A frame: the
/// monitor's rectangle read into a MIT-SHM image (`XShmGetImage`, no copy through the socket), the
/// cursor from XFixes drawn in, scaled by cairo (pixman, bilinear) to the page's size, encoded by
/// libjpeg-turbo. Stopping (`watch(false)`, the page gone, `close`) destroys the damage object and the
/// shared image; the segment was marked for removal once attached, so even a killed daemon leaves none.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge, through its desktop.
public final class ScreenCapture: ViewCapture {
    public let display: XDisplay
    private var damage: DamageID?
    /// The shared image, as large as the last rectangle captured.
    private var image: XSharedImage?
    /// Cairo's view of `image`'s pixels.
    private var source: CairoSurface?
    /// The scaled picture, as large as the last size asked for.
    private var scaled: CairoSurface?
    private var encoder: JPEGEncoder?
    private let cursorImages: Bool
    private var closed = false
    /// The mark in the viewed monitor's corner while the page views it (`showMark`).
    private var mark: XWindow?
    private var markSurface: CairoSurface?
    /// The mark's side, in pixels.
    public static let markSide: Int32 = 12

    /// Loads XDamage's and TurboJPEG's libraries, opens a connection of its own to `name` and checks for
    /// MIT-SHM and XDamage; throws when any is missing (the view then says "no picture"), with the reason.
    public static func open(name: String) throws(X11Error) -> ScreenCapture {
        if let problem = XDisplay.loadCaptureLibraries() { throw X11Error.missingLibrary(problem) }
        let display = try XDisplay(name: name)
        do throws(X11Error) {
            guard try display.hasSharedMemory() else { throw X11Error.missingExtension("MIT-SHM") }
            guard try display.selectDamageInput() else { throw X11Error.missingExtension("DAMAGE") }
            return ScreenCapture(display: display, cursorImages: try display.hasCursorImages())
        } catch {
            display.close()
            throw error
        }
    }

    private init(display: XDisplay, cursorImages: Bool) {
        self.display = display
        self.cursorImages = cursorImages
    }

    deinit {
        assert(closed, "ScreenCapture was not closed: call close() on every exit path")
    }

    /// The connection's descriptor (watched with the desktop's).
    public var descriptor: Int32? { closed ? nil : try? display.connectionFileDescriptor() }

    public var holding: String {
        var parts: [String] = []
        if let image { parts.append("shared memory segment \(image.segment) (\(image.width)x\(image.height))") }
        if let damage { parts.append("damage 0x\(String(damage.rawValue, radix: 16))") }
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
    }

    public func watch(_ on: Bool) throws(OutputError) {
        do throws(X11Error) {
            if on {
                guard damage == nil, !closed else { return }
                damage = try display.createDamage()
                try display.flush()
            } else {
                release()
            }
        } catch {
            throw error.output
        }
    }

    /// Shows the viewing mark, a small red square, in the top-right corner of `rect` (the viewed
    /// monitor), or moves it there; clicks go through it. On the view's connection, so the desktop's
    /// overlay (its own window, its own decisions) is left as it is. Its painting is damage like any
    /// other: one more frame, once.
    public func showMark(in rect: PixelRect) throws(OutputError) {
        do throws(X11Error) {
            let side = Self.markSide
            let place = PixelRect(x: rect.x + rect.width - side - 4, y: rect.y + 4, width: side, height: side)
            if let mark {
                try display.moveResize(mark, to: place)
                try display.raise(mark)
            } else {
                let visual = try display.defaultVisual()
                let window = try display.createWindow(place, visual: visual, colormap: nil, overrideRedirect: true)
                mark = window
                try display.setName(of: window, "touchbridge view mark")
                try display.setShape(.input, of: window, toRectangle: nil)
                try display.selectInput(on: window.id, .exposure)
                display.overlayWindow = window.rawID  // its Expose events are reported (`overlayExposed`)
                markSurface = try CairoSurface.xlib(display, drawable: window, visual: visual, width: side, height: side)
                try display.mapRaised(window)
            }
            try paintMark()
        } catch {
            throw error.output
        }
    }

    /// Takes the viewing mark away.
    public func hideMark() {
        markSurface?.destroy()
        markSurface = nil
        if let mark {
            display.destroyWindow(mark)
            display.overlayWindow = 0
            try? display.flush()
        }
        mark = nil
    }

    private func paintMark() throws(X11Error) {
        guard let markSurface else { return }
        let side = Double(Self.markSide)
        let cr = try CairoContext(markSurface)
        cr.setOperator(.source)
        cr.setSource(red: 0.9, green: 0.1, blue: 0.1, alpha: 1)
        cr.rectangle(x: 0, y: 0, width: side, height: side)
        cr.fill()
        cr.destroy()
        try markSurface.flush()
        try display.flush()
    }

    /// Reads the connection's events; true when the screen changed (the damage is emptied: the next
    /// change reports again).
    public func readIncoming() -> (damaged: Bool, errors: [OutputError]) {
        guard !closed else { return (false, []) }
        do throws(X11Error) {
            var damaged = false
            var exposed = false
            repeat {
                let incoming = try display.drainIncoming()
                if incoming.damaged { damaged = true }
                if !incoming.overlayExposed.isEmpty { exposed = true }
            } while display.hasQueuedEvents() && !display.isLost
            if exposed { try paintMark() }
            if damaged, let damage {
                try display.subtractDamage(damage)
                try display.flush()
            }
            return (damaged && damage != nil, [])
        } catch {
            return (false, [error.output])
        }
    }

    public func frame(of rect: PixelRect, size: ViewSize, _ body: (UnsafeRawBufferPointer) -> Void) throws(OutputError) {
        do throws(X11Error) {
            guard !closed else { throw X11Error.closed }
            let image = try sharedImage(width: rect.width, height: rect.height)
            try display.getImage(image, x: rect.x, y: rect.y)
            guard let source else { throw X11Error.closed }
            try source.markDirty()
            let target = try scaledSurface(width: Int32(size.width), height: Int32(size.height))
            // The cursor's picture (its pixels copied: cairo reads them in place), made before the
            // context, so that nothing throws while the context lives.
            var cursorAt: (x: Double, y: Double) = (0, 0)
            var cursorPixels: UnsafeMutableRawPointer?
            var cursorSurface: CairoSurface?
            defer {
                cursorSurface?.destroy()
                cursorPixels?.deallocate()
            }
            if cursorImages, let cursor = try display.cursorImage(),
               cursor.x < rect.x + rect.width, cursor.y < rect.y + rect.height,
               cursor.x + cursor.width > rect.x, cursor.y + cursor.height > rect.y {
                let bytes = cursor.pixels.count * 4
                let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 4)
                cursorPixels = raw
                cursor.pixels.withUnsafeBytes { raw.copyMemory(from: $0.baseAddress!, byteCount: bytes) }
                cursorSurface = try CairoSurface.wrapping(raw, width: cursor.width, height: cursor.height,
                                                          stride: cursor.width * 4, alpha: true)
                cursorAt = (Double(cursor.x - rect.x), Double(cursor.y - rect.y))
            }
            let sx = Double(size.width) / Double(rect.width), sy = Double(size.height) / Double(rect.height)
            let cr = try CairoContext(target)
            cr.scale(x: sx, y: sy)
            // Neither throws: both surfaces are alive.
            try? cr.setSource(source, x: 0, y: 0)
            cr.setSourceFilter(bilinear: true)
            cr.setOperator(.source)
            cr.paint()
            if let cursorSurface {
                cr.setOperator(.over)
                try? cr.setSource(cursorSurface, x: cursorAt.x, y: cursorAt.y)
                cr.setSourceFilter(bilinear: true)
                cr.paint()
            }
            cr.destroy()
            try target.flush()
            let (data, stride) = try target.imagePixels()
            if encoder == nil { encoder = try JPEGEncoder() }
            try encoder!.encode(UnsafeRawPointer(data), width: Int32(size.width), height: Int32(size.height), stride: stride, body)
        } catch {
            throw error.output
        }
    }

    /// The shared image for a `width`×`height` rectangle: the one there is, or a new one when the
    /// monitor changed size.
    private func sharedImage(width: Int32, height: Int32) throws(X11Error) -> XSharedImage {
        if let image, image.width == width, image.height == height { return image }
        freeImage()
        let made = try display.makeSharedImage(width: width, height: height)
        image = made
        do throws(X11Error) {
            source = try CairoSurface.wrapping(made.pixels, width: width, height: height, stride: made.bytesPerLine, alpha: false)
        } catch {
            freeImage()
            throw error
        }
        return made
    }

    private func scaledSurface(width: Int32, height: Int32) throws(X11Error) -> CairoSurface {
        if let scaled, scaledSize == (width, height) { return scaled }
        scaled?.destroy()
        scaled = nil
        let made = try CairoSurface.image(width: width, height: height)
        scaled = made
        scaledSize = (width, height)
        return made
    }
    private var scaledSize: (Int32, Int32) = (0, 0)

    private func freeImage() {
        source?.destroy()
        source = nil
        if let image { display.destroySharedImage(image) }
        image = nil
    }

    /// Frees what a view holds: the mark, the damage object, the shared image, the pictures, the encoder.
    private func release() {
        hideMark()
        if let damage {
            try? display.destroyDamage(damage)
            try? display.flush()
        }
        damage = nil
        freeImage()
        scaled?.destroy()
        scaled = nil
        scaledSize = (0, 0)
        encoder?.close()
        encoder = nil
    }

    /// Frees everything and closes the connection. Safe to call twice.
    public func close() {
        guard !closed else { return }
        release()
        try? display.sync()
        display.close()
        closed = true
    }
}
