import TouchCore
import TouchOutput

/// The live view on X11: its own connection to the X server (so that a capture's requests and replies
/// never sit between the input's requests on the desktop's connection, and its damage events are read
/// apart), watched on the Bridge's loop like the desktop's.
///
/// While watched (`watch(true)`): an XDamage object on the root window, emptied at each notify, so the
/// server sends one event per burst of changes and nothing while the screen is still. A frame: the
/// monitor's rectangle read into a MIT-SHM image (`XShmGetImage`, no copy through the socket), the
/// cursor from XFixes drawn in, scaled to the page's size and encoded (`ViewEncoder`: cairo,
/// libjpeg-turbo). Stopping (`watch(false)`, the page gone, `close`) destroys the damage object and the
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
    /// Scales and encodes (`ViewEncoder`).
    private let encoder = ViewEncoder()
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
            // The cursor's picture (its pixels copied: cairo reads them in place).
            var cursorPixels: UnsafeMutableRawPointer?
            var cursor: (picture: CairoSurface, x: Double, y: Double)?
            defer {
                cursor?.picture.destroy()
                cursorPixels?.deallocate()
            }
            if cursorImages, let c = try display.cursorImage(),
               c.x < rect.x + rect.width, c.y < rect.y + rect.height,
               c.x + c.width > rect.x, c.y + c.height > rect.y {
                let bytes = c.pixels.count * 4
                let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 4)
                cursorPixels = raw
                c.pixels.withUnsafeBytes { raw.copyMemory(from: $0.baseAddress!, byteCount: bytes) }
                let picture = try CairoSurface.wrapping(raw, width: c.width, height: c.height, stride: c.width * 4, alpha: true)
                cursor = (picture, Double(c.x - rect.x), Double(c.y - rect.y))
            }
            try encoder.encode(source, sourceWidth: rect.width, sourceHeight: rect.height, yInverted: false,
                               region: (0, 0, Double(rect.width), Double(rect.height)), cursor: cursor, size: size, body)
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
        encoder.release()
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
