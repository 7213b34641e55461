import TouchCore
import TouchOutput

/// The live view's last step, whatever gave the pixels (X11's MIT-SHM image, a Wayland compositor's
/// screen copy): the viewed rectangle of a picture scaled by cairo (pixman, bilinear) to the page's size,
/// the cursor drawn in when given, and encoded by libjpeg-turbo. Keeps the scaled picture and the encoder
/// from frame to frame; `release()` frees both.
///
/// Not thread-safe: owned by the one event loop that owns the Bridge.
final class ViewEncoder {
    private(set) var scaled: CairoSurface?
    private var scaledSize: (Int32, Int32) = (0, 0)
    private var encoder: JPEGEncoder?

    /// `region` of `source` (its pixels, `sourceWidth`×`sourceHeight`, rows bottom to top when `yInverted`,
    /// turned as a monitor with `transform` shows them: `CairoMatrix.orienting`) scaled to `size`, with
    /// `cursor` (a picture and its place in the region's pixels) over it, as a JPEG handed to `body`.
    func encode(_ source: CairoSurface, sourceWidth: Int32, sourceHeight: Int32, yInverted: Bool, transform: Int32 = 0,
                region: (x: Double, y: Double, width: Double, height: Double),
                cursor: (picture: CairoSurface, x: Double, y: Double)?, size: ViewSize,
                _ body: (UnsafeRawBufferPointer) -> Void) throws(X11Error) {
        let target = try scaledSurface(width: Int32(size.width), height: Int32(size.height))
        let sx = Double(size.width) / region.width, sy = Double(size.height) / region.height
        let cr = try CairoContext(target)
        cr.setOperator(.source)
        // A pixel of the source: its rows in order (row 0 in memory the bottom one when inverted), moved
        // to the region's corner, scaled to the target.
        let rows = yInverted ? CairoMatrix(xx: 1, yx: 0, xy: 0, yy: -1, x0: 0, y0: Double(sourceHeight)) : .identity
        let turn = CairoMatrix.orienting(transform: transform, width: Double(sourceWidth), height: Double(sourceHeight))
        cr.transform(rows.then(turn).then(CairoMatrix(xx: sx, yx: 0, xy: 0, yy: sy, x0: -region.x * sx, y0: -region.y * sy)))
        // Does not throw: the surface is alive.
        try? cr.setSource(source, x: 0, y: 0)
        cr.setSourceFilter(bilinear: true)
        cr.paint()
        if let cursor {
            cr.destroy()
            let over = try CairoContext(target)
            over.scale(x: sx, y: sy)
            over.setOperator(.over)
            try? over.setSource(cursor.picture, x: cursor.x, y: cursor.y)
            over.setSourceFilter(bilinear: true)
            over.paint()
            over.destroy()
        } else {
            cr.destroy()
        }
        try target.flush()
        let (data, stride) = try target.imagePixels()
        if encoder == nil { encoder = try JPEGEncoder() }
        try encoder!.encode(UnsafeRawPointer(data), width: Int32(size.width), height: Int32(size.height), stride: stride, body)
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

    /// Frees the scaled picture and the encoder (made again at the next frame).
    func release() {
        scaled?.destroy()
        scaled = nil
        scaledSize = (0, 0)
        encoder?.close()
        encoder = nil
    }
}

/// The live view over a desktop whose pixels come whole into memory (`ScreenPixels`: a wlroots
/// compositor's screen copy): the desktop copies, this scales and encodes (`ViewEncoder`). The mark that
/// says the screen is viewed is drawn through an X server that shows on that screen (Xwayland's,
/// `ScreenCapture.showMark`), when the session has one; without it the log line is the only mark.
public final class PictureView: ClosableViewCapture {
    private unowned let source: any ScreenPixels
    private let mark: ScreenCapture?
    private let encoder = ViewEncoder()
    private var closed = false

    /// Loads TurboJPEG (and XDamage, which the X11 view needs with it); throws why when it cannot (the view
    /// then says "no picture"). `source` must outlive the view (it holds it: `WaylandDesktop.attachView`).
    public static func make(source: any ScreenPixels, mark: ScreenCapture?) throws(X11Error) -> PictureView {
        if let problem = XDisplay.loadCaptureLibraries() { throw X11Error.missingLibrary(problem) }
        return PictureView(source: source, mark: mark)
    }

    private init(source: any ScreenPixels, mark: ScreenCapture?) {
        self.source = source
        self.mark = mark
    }

    public func watch(_ on: Bool) throws(OutputError) {
        guard !closed else { return }
        if !on {
            encoder.release()
            try? mark?.watch(false)
        }
        try source.watchPixels(on)
    }

    public func showMark(in rect: PixelRect) throws(OutputError) {
        guard !closed else { return }
        try mark?.showMark(in: rect)
    }

    public func frame(of rect: PixelRect, size: ViewSize, _ body: (UnsafeRawBufferPointer) -> Void) throws(OutputError) {
        guard !closed else { throw X11Error.closed.output }
        let encoder = self.encoder
        try source.withPicture(of: rect) { (picture) throws(OutputError) in
            do throws(X11Error) {
                let surface = try CairoSurface.wrapping(picture.pixels, width: picture.width, height: picture.height,
                                                        stride: picture.stride, alpha: false)
                defer { surface.destroy() }
                try encoder.encode(surface, sourceWidth: picture.width, sourceHeight: picture.height, yInverted: picture.yInverted,
                                   transform: picture.transform, region: picture.region, cursor: nil, size: size, body)
            } catch {
                throw error.output
            }
        }
    }

    public var holding: String { closed ? "nothing" : source.pixelsHolding }

    /// Frees the encoder and takes the mark away (the mark's connection is its X desktop's). Safe to call twice.
    public func close() {
        guard !closed else { return }
        try? watch(false)
        closed = true
    }
}
